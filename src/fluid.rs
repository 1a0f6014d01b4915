//! The words every stage shares: what the music asks of the fluid (splats of dye and force),
//! and how the picture reads it (look, colour mode, colour maths). A leaf: it imports nothing
//! of ours, so the audio side, mapping, the models, the display, the editor and the command
//! line can all use it without depending on one another.
//!
//! Units: positions and radii in canvas units (the canvas is 1 tall and `aspect` wide, x right,
//! y up); velocities in canvas heights per second; colours linear RGB.

use nice_plug::prelude::Enum;
use serde::{Deserialize, Serialize};

/// Shape of a splat's footprint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u32)]
pub enum SplatShape {
    /// exp(-d^2 / r^2): a soft round blob.
    #[default]
    Gaussian = 0,
    /// 1 inside the square of half-side `r`, 0 outside (the bench's "centre block").
    Block = 1,
    /// A pull towards the centre (a push away when `force[0]` is negative): the velocity added
    /// at offset d is `-force[0] * d / r * exp(-|d|^2 / r^2)`, strongest (0.43 `force[0]`) at
    /// `r / sqrt(2)`. `force[1]` is ignored; dye has the Gaussian footprint.
    Radial = 2,
}

/// A Gaussian (or block) injection of dye and momentum.
///
/// Positions and radii are in canvas units (height 1, width = aspect). Every field is
/// sanitised before use: NaN or infinite fields make the splat a no-op, the radius is clamped to
/// [half a cell, 4 canvas heights], and the force to the simulation's speed limit.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Splat {
    /// Centre, in canvas units (x right, y up).
    pub pos: [f32; 2],
    /// Radius (Gaussian: 1/e distance; block: half side), in canvas units.
    pub radius: f32,
    /// Linear RGB colour of the dye added at the centre.
    pub color: [f32; 3],
    /// Scale of the dye added (0 = momentum only).
    pub amount: f32,
    /// Velocity added at the centre, in canvas heights per second.
    pub force: [f32; 2],
    /// Footprint.
    pub shape: SplatShape,
}

/// How the dye is coloured when a frame is rendered.
#[derive(Enum, Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ColorMode {
    /// The dye's own RGB colour, as injected by the notes.
    #[id = "dye"]
    #[name = "Dye colour"]
    Dye,
    /// Hue cycles with density, as in the original stable-fluids demo.
    #[id = "density"]
    #[name = "Density hue"]
    DensityHue,
    /// Hue from the velocity's direction, value from its speed.
    #[id = "velocity"]
    #[name = "Velocity hue"]
    VelocityHue,
}

/// How frames are coloured and exposed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Look {
    /// Colour mode.
    pub color_mode: ColorMode,
    /// Exposure multiplier.
    pub brightness: f32,
    /// Saturation, 0..1.
    pub saturation: f32,
    /// Hue rotation in degrees.
    pub hue_shift: f32,
}

impl Default for Look {
    fn default() -> Self {
        Self {
            color_mode: ColorMode::Dye,
            brightness: 1.0,
            saturation: 1.0,
            hue_shift: 0.0,
        }
    }
}

/// Hue turns per unit of total density in the density-hue mode.
pub const DENSITY_HUE_TURNS: f32 = 0.35;
/// Exposure of speed in the velocity-hue mode: a speed of 1 canvas/s reads at 1 - e^-2.
pub const VELOCITY_VALUE_SCALE: f32 = 2.0;

/// HSV (hue in turns, any real; saturation and value in 0..1) to RGB in 0..1.
#[inline(always)]
pub fn hsv_to_rgb(h: f32, s: f32, v: f32) -> [f32; 3] {
    let h = h - h.floor();
    let k = |n: f32| {
        // n + 6h lies in [1, 11): one conditional subtraction is the exact `% 6` (no libm).
        let k = n + h * 6.0;
        let k = if k >= 6.0 { k - 6.0 } else { k };
        let m = k.min(4.0 - k).clamp(0.0, 1.0);
        v - v * s * m
    };
    [k(5.0), k(3.0), k(1.0)]
}

/// RGB in 0..1 to HSV (hue in turns 0..1).
#[inline(always)]
pub fn rgb_to_hsv(rgb: [f32; 3]) -> [f32; 3] {
    let [r, g, b] = rgb;
    let max = r.max(g).max(b);
    let min = r.min(g).min(b);
    let c = max - min;
    let h = if c <= 0.0 {
        0.0
    } else if max == r {
        ((g - b) / c).rem_euclid(6.0)
    } else if max == g {
        (b - r) / c + 2.0
    } else {
        (r - g) / c + 4.0
    };
    let s = if max > 0.0 { c / max } else { 0.0 };
    [h / 6.0, s, max]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hsv_round_trip() {
        for rgb in [
            [1.0, 0.0, 0.0],
            [0.2, 0.5, 0.9],
            [0.0, 0.0, 0.0],
            [0.5, 0.5, 0.5],
        ] {
            let [h, s, v] = rgb_to_hsv(rgb);
            let back = hsv_to_rgb(h, s, v);
            for c in 0..3 {
                assert!((back[c] - rgb[c]).abs() < 1e-6, "{rgb:?} -> {back:?}");
            }
        }
        // Pure hues: 0 = red, 1/3 = green, 2/3 = blue.
        assert_eq!(hsv_to_rgb(0.0, 1.0, 1.0), [1.0, 0.0, 0.0]);
        assert_eq!(hsv_to_rgb(1.0 / 3.0, 1.0, 1.0), [0.0, 1.0, 0.0]);
    }
}
