//! Rows mode: the whole canvas, one row of emitters per MIDI channel.
//!
//! The rule, in two sentences: **each pitched channel in use gets its own row, the rows spread
//! evenly over the height in track order (channel 1 at the top), and each row sways slowly up
//! and down; along its row a note's x is its pitch within the range that channel plays, low
//! left, high right.** Successive notes push alternately up and down, fanned outwards towards
//! the row's ends, so the dye fills the space between the rows and out to the sides.
//! (The sway: a sine of 0.3 row spacings either way, 17 s for channel 1 and 9 % longer for
//! each channel after it, starting at the rest place.)
//!
//! Why this shape (see `NOTES-layout.md` for the renders): Keyboard mode puts every note on one
//! line at 15 % height and spreads them over the notes of *all* channels, so the top of the
//! frame stays black and a bass line or a pad sits in one corner. A row per channel uses the
//! height, a range per channel uses the width (a bass that walks an octave spans the frame
//! like a melody that climbs two), and the slow sway keeps the emitters from burning one line
//! into the picture. Drums keep their own kit (see [`super::drums`]).
//!
//! A row is placed when its channel plays its first pitched note; when a channel joins, the
//! rows already there glide (one-pole, [`ROW_GLIDE_S`]) to their new places instead of jumping.
//! Everything is a function of the events and the emitted time, as the rest of the mapping.

use super::{KEYBOARD_MARGIN, MIN_RANGE_SEMITONES, RANGE_RELAX_PER_S};
use crate::kernels::portable::Portable;

/// Lowest and highest row centres' band, canvas heights above the bottom: the rows divide it
/// into equal shares and sit in the middle of theirs.
pub const ROWS_BAND: (f32, f32) = (0.06, 0.94);
/// How far a row sways either way, as a fraction of the row spacing (so neighbouring rows stay
/// at least 1 - 2 x 0.3 = 40 % of a spacing apart).
pub const ROW_SWAY: f32 = 0.3;
/// Period of channel 1's sway, seconds.
pub const ROW_SWAY_S: f32 = 17.0;
/// Each channel's sway period is this much longer than the one before (channel 16: 2.35 times
/// channel 1's), so the rows start evenly spaced and soon drift out of step.
pub const ROW_SWAY_SPREAD: f32 = 0.09;
/// Time constant of a row's glide to a new place when the number of rows changes, seconds.
pub const ROW_GLIDE_S: f32 = 1.0;
/// How far the push of a note at either end of its row turns outwards from vertical, degrees
/// (mid-row notes push straight up or down).
pub const ROW_FAN_DEGREES: f32 = 30.0;

/// Per-channel ranges and row places.
#[derive(Clone, Debug, Default)]
pub struct Rows {
    /// Lowest and highest key each channel has played (edges relax towards the notes in use).
    spans: [Option<(f32, f32)>; 16],
    /// Each placed row's centre now (before the sway), canvas heights.
    y: [Option<f32>; 16],
}

/// Where a note emits in rows mode and which way it pushes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RowPlace {
    /// Canvas position.
    pub pos: [f32; 2],
    /// Unit push direction (before the pitch bend turns it).
    pub dir: [f32; 2],
}

/// Centre of row `index` (0: the top) of `count`, canvas heights above the bottom.
pub fn row_y(index: usize, count: usize) -> f32 {
    let (lo, hi) = ROWS_BAND;
    let count = count.max(1) as f32;
    hi - (index as f32 + 0.5) / count * (hi - lo)
}

/// The range `span` widened about its middle to at least [`MIN_RANGE_SEMITONES`].
pub fn padded((lo, hi): (f32, f32)) -> (f32, f32) {
    let pad = ((MIN_RANGE_SEMITONES - (hi - lo)) / 2.0).max(0.0);
    (lo - pad, hi + pad)
}

impl Rows {
    /// Channel `c`'s range in use (padded to an octave), once it has played a pitched note.
    pub fn range(&self, c: u8) -> Option<(f32, f32)> {
        self.spans[usize::from(c.min(15))].map(padded)
    }

    /// Number of rows (pitched channels played so far).
    pub fn count(&self) -> usize {
        self.spans.iter().filter(|s| s.is_some()).count()
    }

    /// Channel `c` played pitched `key`: widen its range (its row appears at the next
    /// [`Rows::advance`]).
    pub fn widen(&mut self, c: u8, key: f32) {
        let span = &mut self.spans[usize::from(c.min(15))];
        let (lo, hi) = span.unwrap_or((key, key));
        *span = Some((lo.min(key), hi.max(key)));
    }

    /// Advance `dt` seconds: new rows appear at their places, the others glide towards
    /// theirs; each channel's unused range edges relax towards `in_use[c]` (the lowest and
    /// highest key it sounds, if any).
    pub fn advance(&mut self, dt: f32, in_use: &[Option<(f32, f32)>; 16]) {
        let count = self.count();
        let glide = 1.0 - (-dt / ROW_GLIDE_S).pexp();
        let mut index = 0;
        let channels = self.spans.iter_mut().zip(&mut self.y).zip(in_use);
        for ((span, y), in_use) in channels {
            let Some((lo, hi)) = *span else {
                continue;
            };
            let target = row_y(index, count);
            index += 1;
            let y = y.get_or_insert(target);
            *y += (target - *y) * glide;
            if let Some((min, max)) = *in_use {
                let step = RANGE_RELAX_PER_S * dt;
                let lo = if min > lo { (lo + step).min(min) } else { lo };
                let hi = if max < hi { (hi - step).max(max) } else { hi };
                *span = Some((lo, hi));
            }
        }
    }

    /// Where a note of channel `c` at (fractional) `key` emits at emission time `time_s` on a
    /// canvas `aspect` wide, and which way its `serial`-th key-down pushes.
    pub fn place(&self, c: u8, key: f32, serial: u64, time_s: f32, aspect: f32) -> RowPlace {
        let ch = usize::from(c.min(15));
        let count = self.count().max(1);
        let range = self.range(c).unwrap_or((key - 6.0, key + 6.0));
        let frac = ((key - range.0) / (range.1 - range.0)).clamp(0.0, 1.0);
        let width = (aspect - 2.0 * KEYBOARD_MARGIN).max(0.0);
        let x = KEYBOARD_MARGIN.min(aspect / 2.0) + frac * width;
        let spacing = (ROWS_BAND.1 - ROWS_BAND.0) / count as f32;
        let phase = time_s / (ROW_SWAY_S * (1.0 + ch as f32 * ROW_SWAY_SPREAD));
        let sway = ROW_SWAY * spacing * (phase * std::f32::consts::TAU).psin();
        let y = self.y[ch].unwrap_or(0.5) + sway;
        // Alternately up and down; fanned outwards by the place along the row.
        let up = if serial % 2 == 1 { 1.0 } else { -1.0 };
        let tilt = ((frac - 0.5) * 2.0 * ROW_FAN_DEGREES).to_radians();
        RowPlace {
            pos: [x.clamp(0.0, aspect), y.clamp(0.0, 1.0)],
            dir: [tilt.psin(), up * tilt.pcos()],
        }
    }
}

#[cfg(test)]
mod tests;
