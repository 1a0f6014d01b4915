//! Pillar notes: a performer plays the walls. The notes of the pillar channel
//! ([`MappingConfig::pillar_channel`](super::MappingConfig), none by default) paint nothing;
//! each raises a pillar while its key is down and lowers it at the key-up.
//!
//! A pillar is a column seen from above, as in the Pillars layout: a solid disc on the
//! canvas's middle line (y = 0.5). Pitch picks its place along x as the keyboard mapping
//! does, but over a fixed range, so a key always raises the same pillar: C2 (MIDI 36) at the
//! left margin to C6 (84) at the right, keys outside clamped to the ends. Velocity picks its
//! radius, from [`PILLAR_MIN_RADIUS`] to [`PILLAR_MAX_RADIUS`] (the Pillars layout's are
//! 0.05). Neighbouring keys overlap (a semitone is 0.033 canvas heights on a 16:9 canvas), so
//! a cluster raises a wall and a chord a row of posts. The sustain pedal does not hold them:
//! a pillar stands exactly while its key is down.
//!
//! Pure and allocation-free: [`PillarNotes`] keeps which keys are down on every channel (the
//! channel is known only when the mapping emits) and which pillars stand, and
//! [`PillarNotes::edits`] turns the difference into [`ObstacleEdit`]s for the engine.

use super::KEYBOARD_MARGIN;

/// The key at the left end of the pillar range (C2).
pub const PILLAR_LOW_KEY: u8 = 36;
/// The key at the right end of the pillar range (C6).
pub const PILLAR_HIGH_KEY: u8 = 84;
/// Height of the pillars' centres, canvas heights (the Pillars layout's middle line).
pub const PILLAR_Y: f32 = 0.5;
/// Radius of a pillar struck at velocity 0, canvas heights.
pub const PILLAR_MIN_RADIUS: f32 = 0.02;
/// Radius of a pillar struck at full velocity, canvas heights.
pub const PILLAR_MAX_RADIUS: f32 = 0.06;

/// A standing pillar: a solid disc, in canvas units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pillar {
    /// Centre (x right, y up).
    pub centre: [f32; 2],
    /// Radius.
    pub radius: f32,
}

impl Pillar {
    /// The pillar `key` raises at `velocity` (0 to 1) on a canvas `aspect` wide.
    pub fn for_key(key: u8, velocity: f32, aspect: f32) -> Self {
        let span = f32::from(PILLAR_HIGH_KEY - PILLAR_LOW_KEY);
        let frac = ((f32::from(key) - f32::from(PILLAR_LOW_KEY)) / span).clamp(0.0, 1.0);
        let aspect = if aspect.is_finite() && aspect > 0.0 {
            aspect
        } else {
            1.0
        };
        let width = (aspect - 2.0 * KEYBOARD_MARGIN).max(0.0);
        let velocity = if velocity.is_finite() {
            velocity.clamp(0.0, 1.0)
        } else {
            0.0
        };
        Self {
            centre: [KEYBOARD_MARGIN.min(aspect / 2.0) + frac * width, PILLAR_Y],
            radius: PILLAR_MIN_RADIUS + (PILLAR_MAX_RADIUS - PILLAR_MIN_RADIUS) * velocity,
        }
    }
}

/// A change the mapping asks of the obstacles.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ObstacleEdit {
    /// Stand (or reshape) the pillar of `key`.
    Raise { key: u8, pillar: Pillar },
    /// Take the pillar of `key` down.
    Lower { key: u8 },
}

/// Most edits one call of [`PillarNotes::edits`] makes: one per key.
pub const MAX_PILLAR_EDITS: usize = 128;

/// Which keys are down on each channel, and which pillars stand.
#[derive(Clone, Debug)]
pub struct PillarNotes {
    /// Velocity of each key held on each channel (0: up).
    held: [[f32; 128]; 16],
    /// Velocity of each standing pillar (0: down).
    raised: [f32; 128],
    /// The canvas the standing pillars were placed on.
    aspect: f32,
}

impl Default for PillarNotes {
    fn default() -> Self {
        Self {
            held: [[0.0; 128]; 16],
            raised: [0.0; 128],
            aspect: 0.0,
        }
    }
}

impl PillarNotes {
    /// A key went down (velocity 0 to 1; a velocity of 0 still raises the smallest pillar).
    pub fn note_on(&mut self, channel: u8, key: u8, velocity: f32) {
        if channel < 16 && key < 128 {
            let v = if velocity.is_finite() {
                velocity.clamp(0.0, 1.0)
            } else {
                0.0
            };
            // Held is > 0: the smallest velocity still stands a pillar.
            self.held[usize::from(channel)][usize::from(key)] = v.max(f32::MIN_POSITIVE);
        }
    }

    /// A key came up (or was choked); `u8::MAX` as the channel or key matches any.
    pub fn note_off(&mut self, channel: u8, key: u8) {
        let channels = if channel == u8::MAX {
            0..16
        } else {
            let c = usize::from(channel.min(15));
            c..c + 1
        };
        for c in channels {
            if key == u8::MAX {
                self.held[c] = [0.0; 128];
            } else if key < 128 {
                self.held[c][usize::from(key)] = 0.0;
            }
        }
    }

    /// Every key up (silence, reset).
    pub fn silence(&mut self) {
        self.held = [[0.0; 128]; 16];
    }

    /// Whether [`PillarNotes::edits`] has something to do for `channel` on an unchanged
    /// canvas (a pillar to raise, reshape or lower).
    pub fn pending(&self, channel: Option<u8>) -> bool {
        let want = channel
            .filter(|&c| c < 16)
            .map(|c| &self.held[usize::from(c)]);
        (0..128).any(|k| want.map_or(0.0, |h| h[k]) != self.raised[k])
    }

    /// Whether any pillar stands.
    pub fn any_raised(&self) -> bool {
        self.raised.iter().any(|&v| v > 0.0)
    }

    /// Bring the standing pillars in line with the keys down on `channel` (none: every
    /// pillar comes down) on a canvas `aspect` wide: the edits that takes, into `out`
    /// (cleared first; at most [`MAX_PILLAR_EDITS`], so a vector of that capacity never
    /// grows). A new aspect reshapes every standing pillar.
    pub fn edits(&mut self, channel: Option<u8>, aspect: f32, out: &mut Vec<ObstacleEdit>) {
        out.clear();
        let moved = aspect != self.aspect;
        self.aspect = aspect;
        let want = channel
            .filter(|&c| c < 16)
            .map(|c| &self.held[usize::from(c)]);
        for k in 0..128 {
            let w = want.map_or(0.0, |h| h[k]);
            let r = self.raised[k];
            if w == r && !(moved && w > 0.0) {
                continue;
            }
            self.raised[k] = w;
            let key = k as u8;
            out.push(if w > 0.0 {
                ObstacleEdit::Raise {
                    key,
                    pillar: Pillar::for_key(key, w, aspect),
                }
            } else {
                ObstacleEdit::Lower { key }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ASPECT: f32 = 16.0 / 9.0;

    /// C2 at the left margin, C6 at the right, C4 in the middle; velocity picks the radius.
    #[test]
    fn pitch_picks_the_place_and_velocity_the_size() {
        let low = Pillar::for_key(36, 0.0, ASPECT);
        assert_eq!(low.centre, [KEYBOARD_MARGIN, PILLAR_Y]);
        assert_eq!(low.radius, PILLAR_MIN_RADIUS);
        let high = Pillar::for_key(84, 1.0, ASPECT);
        assert!((high.centre[0] - (ASPECT - KEYBOARD_MARGIN)).abs() < 1e-6);
        assert_eq!(high.radius, PILLAR_MAX_RADIUS);
        // Middle C is half way: 0.1 + 0.5 * (16 / 9 - 0.2) = 0.8889; velocity 0.5 gives 0.04.
        let middle = Pillar::for_key(60, 0.5, ASPECT);
        assert!((middle.centre[0] - 0.888_9).abs() < 1e-4, "{middle:?}");
        assert!((middle.radius - 0.04).abs() < 1e-6);
        // Outside the range: clamped to the ends; nonsense input stays finite.
        assert_eq!(Pillar::for_key(0, 0.0, ASPECT).centre, low.centre);
        assert_eq!(Pillar::for_key(127, 1.0, ASPECT).centre, high.centre);
        let odd = Pillar::for_key(60, f32::NAN, f32::NAN);
        assert!(odd.centre[0].is_finite() && odd.radius == PILLAR_MIN_RADIUS);
    }

    #[test]
    fn keys_down_raise_pillars_and_keys_up_lower_them() {
        let mut p = PillarNotes::default();
        let mut out = Vec::with_capacity(MAX_PILLAR_EDITS);
        p.note_on(2, 60, 1.0);
        p.note_on(2, 64, 0.5);
        p.note_on(5, 67, 1.0); // another channel: no pillar
        p.edits(Some(2), ASPECT, &mut out);
        assert_eq!(
            out,
            vec![
                ObstacleEdit::Raise {
                    key: 60,
                    pillar: Pillar::for_key(60, 1.0, ASPECT)
                },
                ObstacleEdit::Raise {
                    key: 64,
                    pillar: Pillar::for_key(64, 0.5, ASPECT)
                },
            ]
        );
        // Nothing changed: nothing to do.
        assert!(!p.pending(Some(2)));
        p.edits(Some(2), ASPECT, &mut out);
        assert!(out.is_empty());
        p.note_off(2, 60);
        assert!(p.pending(Some(2)) && p.pending(None) && p.pending(Some(5)));
        p.edits(Some(2), ASPECT, &mut out);
        assert_eq!(out, vec![ObstacleEdit::Lower { key: 60 }]);
        // A new canvas reshapes what stands.
        p.edits(Some(2), 1.0, &mut out);
        assert_eq!(
            out,
            vec![ObstacleEdit::Raise {
                key: 64,
                pillar: Pillar::for_key(64, 0.5, 1.0)
            }]
        );
        // Switching the channel lowers the old channel's and raises the new one's.
        p.edits(Some(5), 1.0, &mut out);
        assert_eq!(out.len(), 2);
        assert!(out.contains(&ObstacleEdit::Lower { key: 64 }));
        // No pillar channel: every pillar comes down.
        p.edits(None, 1.0, &mut out);
        assert_eq!(out, vec![ObstacleEdit::Lower { key: 67 }]);
        assert!(!p.any_raised());
    }

    #[test]
    fn wildcards_silence_and_hostile_input() {
        let mut p = PillarNotes::default();
        let mut out = Vec::with_capacity(MAX_PILLAR_EDITS);
        for k in 0..128 {
            p.note_on(0, k, 0.0);
        }
        p.note_on(200, 60, 1.0); // out of range: ignored
        p.note_on(0, 200, 1.0);
        p.edits(Some(0), ASPECT, &mut out);
        assert_eq!(out.len(), MAX_PILLAR_EDITS);
        assert!(out.capacity() == MAX_PILLAR_EDITS, "never grows");
        p.note_off(u8::MAX, 5);
        p.edits(Some(0), ASPECT, &mut out);
        assert_eq!(out, vec![ObstacleEdit::Lower { key: 5 }]);
        p.note_off(0, u8::MAX);
        p.edits(Some(0), ASPECT, &mut out);
        assert_eq!(out.len(), 127);
        p.note_on(3, 40, f32::INFINITY);
        p.silence();
        p.edits(Some(3), ASPECT, &mut out);
        assert!(out.is_empty());
    }
}
