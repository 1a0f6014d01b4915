//! Adaptive dye: a compressor for light. In dense music the dye comes in faster than it fades
//! and the frame fills with a pale wash in which a new note cannot be told apart. The
//! compressor reads how full the frames shown are (the share of lit pixels, as
//! `dyeflow render --stats` counts them) and, past a threshold, fades the old dye faster and
//! lets the sources inject less of it; when the frames empty again it lets go over its
//! release time. Sparse music stays under the threshold and keeps its look.
//!
//! It is a feedback compressor: the frames it reads already carry its own action, so it
//! settles where the extra fade balances what the music pours in, a little above the
//! threshold (the harder the amount, the closer). The detector is the frame itself, measured
//! above its backdrop (the colour of a pixel without dye: the look's background, which a
//! user may set bright), so it works alike for every model that draws its dye over one;
//! without frames (nobody watching, or before the first frame) it releases towards no
//! action. The 3D liquid draws a lit scene (sky, floor, glass) rather than dye over a
//! backdrop: its frames are not read, and the compressor stays at rest there.

use crate::kernels::portable::Portable;

/// A frame's measure: how much of it is lit, and how brightly.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Fill {
    /// The share of pixels lit (luma [`LIT`] above the backdrop's, and at least [`LIT`]),
    /// 0..=1.
    pub coverage: f32,
    /// The mean luma above the backdrop's, as a share of the range above it, 0..=1.
    pub luma: f32,
}

impl Fill {
    /// How far past the thresholds it is: the larger of the coverage's excess over
    /// [`THRESHOLD`] and the mean luma's over [`LUMA_THRESHOLD`] (as shares of what lies
    /// above each threshold), 0..=1.
    fn excess(&self) -> f32 {
        let over = |v: f32, t: f32| ((v - t) / (1.0 - t)).clamp(0.0, 1.0);
        over(self.coverage, THRESHOLD).max(over(self.luma, LUMA_THRESHOLD))
    }
}

/// The luma (Rec. 709 on the 8-bit values, 0-255) above which a pixel counts as lit (as
/// `dyeflow render --stats` counts it); over a lit backdrop, the luma above the backdrop's.
pub const LIT: f32 = 25.0;
/// How far above the backdrop's luma a pixel must be to count as lit: the default
/// background (luma about 10) keeps the threshold at [`LIT`].
const LIT_ABOVE: f32 = 15.0;

/// Rec. 709 luma of an 8-bit RGB(A) pixel, 0-255.
#[inline(always)]
pub fn luma8(px: &[u8]) -> f32 {
    0.2126 * f32::from(px[0]) + 0.7152 * f32::from(px[1]) + 0.0722 * f32::from(px[2])
}
/// Pixels skipped between two measured ones, along a row and between rows.
const STRIDE: usize = 3;

impl Fill {
    /// The measure of an RGBA8 frame `width x height` (every [`STRIDE`]th pixel of every
    /// [`STRIDE`]th row) drawn over a backdrop of luma `backdrop` (0-255); `None` for an
    /// empty or short frame.
    pub fn of(rgba: &[u8], width: usize, height: usize, backdrop: f32) -> Option<Self> {
        if width == 0 || height == 0 || rgba.len() < width * height * 4 {
            return None;
        }
        let backdrop = if backdrop.is_finite() {
            backdrop.clamp(0.0, 230.0)
        } else {
            0.0
        };
        let lit_at = LIT.max(backdrop + LIT_ABOVE);
        let (mut lit, mut seen, mut sum) = (0u32, 0u32, 0.0f32);
        for y in (0..height).step_by(STRIDE) {
            let row = &rgba[y * width * 4..(y + 1) * width * 4];
            for px in row.chunks_exact(4).step_by(STRIDE) {
                let luma = luma8(px);
                lit += u32::from(luma > lit_at);
                sum += (luma - backdrop).max(0.0);
                seen += 1;
            }
        }
        let seen = seen.max(1) as f32;
        Some(Self {
            coverage: lit as f32 / seen,
            luma: sum / seen / (255.0 - backdrop),
        })
    }
}

/// The coverage the compressor starts acting at (the built-in demo's frames, sparse music,
/// are lit about 80 %).
pub const THRESHOLD: f32 = 0.82;
/// The mean luma it starts acting at, of 1 (the demo's frames average 75 of 255, 0.29; a
/// dense song's wash 129, 0.51).
pub const LUMA_THRESHOLD: f32 = 0.4;
/// The extra fade at full amount per unit of excess ([`Fill`]'s), 1/s.
const FADE_PER_EXCESS: f32 = 20.0;
/// The most extra fade, 1/s (the dye's own default is 0.5).
const MAX_FADE: f32 = 6.0;
/// How far the injection is turned down at full amount per unit of excess, and the least it
/// keeps: fresh dye must still stand out.
const GAIN_PER_EXCESS: f32 = 1.5;
const MIN_GAIN: f32 = 0.6;
/// Attack and release time constants, seconds.
const ATTACK_S: f32 = 0.3;
const RELEASE_S: f32 = 2.0;

/// The compressor's state: what it does now.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Compressor {
    /// The dye fade added to the dye's dissipation, 1/s.
    fade: f32,
    /// The share of their dye the sources inject, 0..=1.
    gain: f32,
}

impl Default for Compressor {
    fn default() -> Self {
        Self {
            fade: 0.0,
            gain: 1.0,
        }
    }
}

impl Compressor {
    /// Take a frame's measure `fill` (or none: nobody watching) seen `dt` seconds after the
    /// last, at `amount` (0: off, 1: full).
    pub fn observe(&mut self, fill: Option<Fill>, dt: f32, amount: f32) {
        let amount = if amount.is_finite() {
            amount.clamp(0.0, 1.0)
        } else {
            0.0
        };
        // Not a number: no time; an endless gap: all the way.
        let dt = if dt.is_nan() { 0.0 } else { dt.max(0.0) };
        let excess = fill.map_or(0.0, |f| f.excess()) * amount;
        let fade = (FADE_PER_EXCESS * excess).min(MAX_FADE);
        let gain = (1.0 / (1.0 + GAIN_PER_EXCESS * excess)).max(MIN_GAIN);
        // Towards more action at the attack, towards less at the release.
        let towards = |now: f32, target: f32, harder: bool| {
            let tau = if harder { ATTACK_S } else { RELEASE_S };
            now + (target - now) * (1.0 - (-dt / tau).pexp())
        };
        self.fade = towards(self.fade, fade, fade > self.fade);
        self.gain = towards(self.gain, gain, gain < self.gain);
        if amount == 0.0 {
            *self = Self::default();
        }
    }

    /// The dye fade to add to the dye's dissipation, 1/s.
    pub fn fade(&self) -> f32 {
        self.fade
    }

    /// The share of their dye the sources inject now, 0..=1.
    pub fn gain(&self) -> f32 {
        self.gain
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame whose left `lit` columns of `width` are grey 128 (luma 128) and the rest dark
    /// grey 20 (luma 20, unlit).
    fn frame(width: usize, height: usize, lit: usize) -> Vec<u8> {
        (0..width * height)
            .flat_map(|i| {
                let v = if i % width < lit { 128 } else { 20 };
                [v, v, v, 255]
            })
            .collect()
    }

    #[test]
    fn a_frame_s_fill_is_its_share_of_lit_pixels() {
        let f = Fill::of(&frame(90, 30, 45), 90, 30, 0.0).expect("a frame");
        assert!((f.coverage - 0.5).abs() < 0.02, "{f:?}");
        // Luma 128 on half of it, 20 on the other: (128 + 20) / 2 / 255.
        assert!((f.luma - 74.0 / 255.0).abs() < 0.01, "{f:?}");
        assert_eq!(
            Fill::of(&frame(90, 30, 90), 90, 30, 0.0).map(|f| f.coverage),
            Some(1.0)
        );
        assert_eq!(
            Fill::of(&frame(90, 30, 0), 90, 30, 0.0).map(|f| f.coverage),
            Some(0.0)
        );
        assert_eq!(Fill::of(&[], 0, 0, 0.0), None);
        assert_eq!(Fill::of(&[0; 8], 90, 30, 0.0), None, "a short frame");
        // Over a backdrop of luma 20 (the unlit half), the lit half stands 108 above it.
        let f = Fill::of(&frame(90, 30, 45), 90, 30, 20.0).expect("a frame");
        assert!((f.coverage - 0.5).abs() < 0.02, "{f:?}");
        assert!((f.luma - 54.0 / 235.0).abs() < 0.01, "{f:?}");
        // A bright backdrop alone is empty, whatever its luma; a bad backdrop reads as black.
        let f = Fill::of(&frame(90, 30, 90), 90, 30, 128.0).expect("a frame");
        assert_eq!((f.coverage, f.luma), (0.0, 0.0));
        let f = Fill::of(&frame(90, 30, 90), 90, 30, f32::NAN).expect("a frame");
        assert_eq!(f.coverage, 1.0);
    }

    /// Frames under the threshold leave the dye alone; a full frame fades the old dye harder
    /// and turns the sources down within the attack, never below the least gain; empty frames
    /// then let go within a few release times; amount 0 and bad numbers do nothing.
    #[test]
    fn it_acts_past_the_threshold_and_lets_go() {
        let dt = 1.0 / 30.0;
        let mut c = Compressor::default();
        let sparse = Some(Fill {
            coverage: 0.7,
            luma: 0.3,
        });
        for _ in 0..90 {
            c.observe(sparse, dt, 1.0);
        }
        assert_eq!(c, Compressor::default(), "sparse frames: no action");
        let full = Some(Fill {
            coverage: 1.0,
            luma: 0.6,
        });
        for _ in 0..9 {
            c.observe(full, dt, 1.0);
        }
        // 0.3 s: one attack time, 63 % of the way to the most fade.
        let want = (1.0 - (-1.0f32).pexp()) * MAX_FADE;
        assert!(
            (c.fade() - want).abs() < 0.05 * want,
            "{} against {want}",
            c.fade()
        );
        for _ in 0..60 {
            c.observe(full, dt, 1.0);
        }
        assert!((c.fade() - MAX_FADE).abs() < 0.01 * MAX_FADE);
        assert!((c.gain() - MIN_GAIN).abs() < 0.01, "{}", c.gain());
        // Half the amount, half the excess: less action.
        let mut half = Compressor::default();
        for _ in 0..60 {
            half.observe(
                Some(Fill {
                    coverage: 0.86,
                    luma: 0.3,
                }),
                dt,
                0.5,
            );
        }
        assert!(half.fade() > 0.0 && half.fade() < c.fade() && half.gain() > c.gain());
        // Nothing watched (or empty frames): after four release times 2 % of it is left.
        for _ in 0..(4.0 * RELEASE_S / dt) as usize {
            c.observe(None, dt, 1.0);
        }
        assert!(c.fade() < 0.02 * MAX_FADE && c.gain() > 0.99, "{c:?}");
        c.observe(full, 10.0, 0.0);
        assert_eq!(c, Compressor::default(), "off");
        c.observe(full, f32::NAN, f32::NAN);
        assert_eq!(c, Compressor::default());
        // An endless gap goes all the way at once; nothing breaks.
        c.observe(full, f32::INFINITY, 1.0);
        assert!((c.fade() - MAX_FADE).abs() < 1e-4 && (c.gain() - MIN_GAIN).abs() < 1e-4);
        c.observe(None, f32::INFINITY, 1.0);
        assert_eq!(c, Compressor::default());
    }
}
