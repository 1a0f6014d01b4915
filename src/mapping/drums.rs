//! General MIDI percussion: the notes of the drum channel are instruments, not pitches.
//!
//! A drum note is a one-shot: its note-on makes one burst (dye, push and size scaled by the
//! velocity), its note-off does nothing, and it never holds or releases. Where the burst lands,
//! how big it is, which way it pushes and its colour follow the instrument's family (General
//! MIDI Level 1 key map; GM2's extra keys 27 to 34 and 82 to 87 count as other percussion):
//!
//! | Family            | Keys                                   | Where                          | Footprint and push                     | Colour             |
//! |-------------------|----------------------------------------|--------------------------------|----------------------------------------|--------------------|
//! | Kick              | 35, 36                                 | bottom centre                  | a wide, low band of 3 big splats, up   | orange-red flash   |
//! | Snare, clap, rim  | 37, 38, 39, 40                         | centre, half way up            | a pair pushing hard left and right     | electric blue      |
//! | Hi-hats, cymbals  | 42, 44, 46, 49, 51, 52, 53, 55, 57, 59 | near the top, one spot each    | one small bright sparkle, jittered     | pale gold          |
//! | Toms              | 41, 43, 45, 47, 48, 50                 | a row low down, low tom left   | a radial burst (pushes outwards)       | magenta            |
//! | Other percussion  | every other key                        | a row high up, by key          | a small burst, a gentle push up        | green              |
//!
//! Sizes are multiples of the splat radius knob, pushes of the force knob, dye of the dye
//! amount knob, so the kit follows the panel like the notes do. Hi-hats and cymbals sit at one
//! place per instrument (hi-hats left, crashes in the middle, rides right, as a drummer sees
//! the kit) and each hit jitters a little along a low-discrepancy sequence, so a run of
//! sixteenth-note hats glitters instead of piling up on one dot.
//!
//! The colours are five hues far apart on the wheel (20°, 55°, 130°, 195°, 300°), saturated
//! except the cymbals' pale gold, which reads as glints of light next to the others.

use super::{KEYBOARD_MARGIN, MappingConfig, r2};
use crate::fluid::{Drum, Splat, SplatShape, hsv_to_rgb};
use crate::kernels::portable::Portable;

/// The General MIDI drum channel, channel 10, as a 0-based channel index.
pub const GM_DRUM_CHANNEL: u8 = 9;

/// Kick: height of the band's centre, canvas heights above the bottom.
pub const KICK_Y: f32 = 0.06;
/// Kick: radius of each of its three splats, in splat radii.
pub const KICK_RADII: f32 = 3.0;
/// Kick: distance of the outer splats from the centre one, in kick splat radii.
pub const KICK_SPREAD: f32 = 1.5;
/// Kick: upward push at full velocity, canvas heights per second (times the force knob).
pub const KICK_PUSH: f32 = 2.5;
/// Kick: dye of each splat at full velocity (times the dye amount knob).
pub const KICK_DYE: f32 = 1.6;

/// Snare: height, canvas heights above the bottom.
pub const SNARE_Y: f32 = 0.5;
/// Snare: radius of each of its two splats, in splat radii.
pub const SNARE_RADII: f32 = 1.5;
/// Snare: sideways push of each splat at full velocity, canvas heights per second.
pub const SNARE_PUSH: f32 = 3.0;
/// Snare: dye of each splat at full velocity.
pub const SNARE_DYE: f32 = 1.2;

/// Hi-hats and cymbals: height, canvas heights above the bottom.
pub const CYMBAL_Y: f32 = 0.86;
/// Hi-hats and cymbals: radius, in splat radii.
pub const CYMBAL_RADII: f32 = 0.5;
/// Hi-hats and cymbals: how far a hit may land from its instrument's spot, canvas heights.
pub const CYMBAL_JITTER: f32 = 0.04;
/// Hi-hats and cymbals: push at full velocity, in a direction that turns with every hit.
pub const CYMBAL_PUSH: f32 = 0.4;
/// Hi-hats and cymbals: dye at full velocity (small and concentrated: bright).
pub const CYMBAL_DYE: f32 = 1.5;

/// Toms: height of their row, canvas heights above the bottom.
pub const TOM_Y: f32 = 0.3;
/// Toms: radius, in splat radii.
pub const TOM_RADII: f32 = 1.6;
/// Toms: outward (radial) push at full velocity, canvas heights per second.
pub const TOM_PUSH: f32 = 2.0;
/// Toms: dye at full velocity.
pub const TOM_DYE: f32 = 1.2;
/// The General MIDI toms, lowest first: they take the row left to right in this order.
pub const TOM_KEYS: [u8; 6] = [41, 43, 45, 47, 48, 50];

/// Other percussion: height of their row, canvas heights above the bottom.
pub const OTHER_Y: f32 = 0.66;
/// Other percussion: radius, in splat radii.
pub const OTHER_RADII: f32 = 0.8;
/// Other percussion: upward push at full velocity, canvas heights per second.
pub const OTHER_PUSH: f32 = 0.8;
/// Other percussion: dye at full velocity.
pub const OTHER_DYE: f32 = 1.0;
/// Other percussion: the keys that span their row (GM2's percussion, 27 to 87); keys beyond
/// sit at its ends.
pub const OTHER_KEYS: (u8, u8) = (27, 87);

/// A drum instrument's family: what decides how its hit looks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DrumFamily {
    /// Bass drums: 35, 36.
    Kick,
    /// Snares, hand clap, side stick: 37 to 40.
    Snare,
    /// Hi-hats and cymbals.
    Cymbal,
    /// Toms, with their place in [`TOM_KEYS`] (0: the low floor tom).
    Tom(u8),
    /// Everything else: shakers, bells, hand drums, whistles...
    Other,
}

/// The family of General MIDI drum key `key`.
pub fn gm_drum_family(key: u8) -> DrumFamily {
    match key {
        35 | 36 => DrumFamily::Kick,
        37..=40 => DrumFamily::Snare,
        42 | 44 | 46 | 49 | 51 | 52 | 53 | 55 | 57 | 59 => DrumFamily::Cymbal,
        _ => match TOM_KEYS.iter().position(|&k| k == key) {
            Some(i) => DrumFamily::Tom(i as u8),
            None => DrumFamily::Other,
        },
    }
}

impl DrumFamily {
    /// The family as the models know it.
    pub fn drum(self) -> Drum {
        match self {
            DrumFamily::Kick => Drum::Kick,
            DrumFamily::Snare => Drum::Snare,
            DrumFamily::Cymbal => Drum::Cymbal,
            DrumFamily::Tom(_) => Drum::Tom,
            DrumFamily::Other => Drum::Other,
        }
    }

    /// The family's colour (linear RGB): see the module header.
    pub fn color(self) -> [f32; 3] {
        let (hue_deg, saturation) = match self {
            DrumFamily::Kick => (20.0, 0.9),
            DrumFamily::Snare => (195.0, 0.9),
            DrumFamily::Cymbal => (55.0, 0.45),
            DrumFamily::Tom(_) => (300.0, 0.85),
            DrumFamily::Other => (130.0, 0.85),
        };
        hsv_to_rgb(hue_deg / 360.0, saturation, 1.0)
    }
}

/// Where a cymbal's spot is across the top, as a fraction of the usable width: hi-hats left,
/// crashes and splashes in the middle, rides right.
fn cymbal_place(key: u8) -> f32 {
    match key {
        44 => 0.08, // pedal hi-hat
        42 => 0.14, // closed hi-hat
        46 => 0.2,  // open hi-hat
        49 => 0.36, // crash 1
        55 => 0.5,  // splash
        57 => 0.64, // crash 2
        52 => 0.74, // Chinese cymbal
        59 => 0.8,  // ride 2
        51 => 0.86, // ride 1
        53 => 0.93, // ride bell
        _ => 0.5,
    }
}

/// Canvas x of a fraction `frac` of the usable width (between the keyboard margins).
fn across(frac: f32, aspect: f32) -> f32 {
    let width = (aspect - 2.0 * KEYBOARD_MARGIN).max(0.0);
    KEYBOARD_MARGIN.min(aspect / 2.0) + frac.clamp(0.0, 1.0) * width
}

/// Particles each splat of a drum hit emits at full velocity, as a share of a note's.
const DRUM_PARTICLES: f32 = 0.4;

/// Push the splats of one hit of drum `key` at `velocity` (0 to 1) into `out`. `hit` counts
/// the drum hits so far (it turns the cymbals' jitter and push).
pub(super) fn strike(key: u8, velocity: f32, hit: u32, cfg: &MappingConfig, out: &mut Vec<Splat>) {
    let family = gm_drum_family(key);
    let color = family.color();
    let v = velocity.clamp(0.0, 1.0);
    // The same size law as the notes'; dye and push grow faster with velocity, so a ghost
    // note is a whisper and an accent a slam.
    let radius = cfg.splat_radius * (0.7 + 0.6 * v);
    let dye = cfg.dye_amount * (0.3 + 0.7 * v);
    let push = cfg.splat_force * (0.3 + 0.7 * v);
    let aspect = cfg.aspect;
    let splat = |pos: [f32; 2], radius: f32, amount: f32, force: [f32; 2], shape| Splat {
        pos: [pos[0].clamp(0.0, aspect), pos[1].clamp(0.0, 1.0)],
        radius,
        color,
        amount,
        force,
        shape,
        heat: 0.0,
        particles: DRUM_PARTICLES * cfg.particles.max(0.0) * (0.2 + 0.8 * v),
        depth: 0.0,
        drum: family.drum(),
    };
    match family {
        DrumFamily::Kick => {
            let r = radius * KICK_RADII;
            for side in [-1.0, 0.0, 1.0] {
                out.push(splat(
                    [aspect / 2.0 + side * KICK_SPREAD * r, KICK_Y],
                    r,
                    KICK_DYE * dye,
                    [0.0, KICK_PUSH * push],
                    SplatShape::Gaussian,
                ));
            }
        }
        DrumFamily::Snare => {
            let r = radius * SNARE_RADII;
            for side in [-1.0, 1.0] {
                out.push(splat(
                    [aspect / 2.0 + side * 0.6 * r, SNARE_Y],
                    r,
                    SNARE_DYE * dye,
                    [side * SNARE_PUSH * push, 0.0],
                    SplatShape::Gaussian,
                ));
            }
        }
        DrumFamily::Cymbal => {
            let (a, b) = r2(hit);
            let jitter = [
                (2.0 * a - 1.0) * CYMBAL_JITTER,
                (2.0 * b - 1.0) * CYMBAL_JITTER,
            ];
            let angle = (hit as f32 * 0.618_034).fract() * std::f32::consts::TAU;
            let p = CYMBAL_PUSH * push;
            out.push(splat(
                [
                    across(cymbal_place(key), aspect) + jitter[0],
                    CYMBAL_Y + jitter[1],
                ],
                radius * CYMBAL_RADII,
                CYMBAL_DYE * dye,
                [angle.pcos() * p, angle.psin() * p],
                SplatShape::Gaussian,
            ));
        }
        DrumFamily::Tom(i) => {
            let frac = f32::from(i) / (TOM_KEYS.len() - 1) as f32;
            // The toms sit closer together than the whole width, like a kit.
            out.push(splat(
                [across(0.2 + 0.6 * frac, aspect), TOM_Y],
                radius * TOM_RADII,
                TOM_DYE * dye,
                // Radial: a negative strength pushes away from the centre.
                [-TOM_PUSH * push, 0.0],
                SplatShape::Radial,
            ));
        }
        DrumFamily::Other => {
            let (lo, hi) = OTHER_KEYS;
            let frac = f32::from(key.clamp(lo, hi) - lo) / f32::from(hi - lo);
            out.push(splat(
                [across(frac, aspect), OTHER_Y],
                radius * OTHER_RADII,
                OTHER_DYE * dye,
                [0.0, OTHER_PUSH * push],
                SplatShape::Gaussian,
            ));
        }
    }
}
