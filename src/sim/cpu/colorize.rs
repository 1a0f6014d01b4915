//! Colorize: turn the dye (or the velocity) into an RGBA8 picture of any size, HSV-coloured.
//!
//! - Dye colour: the dye's own RGB, exposed (`1 - e^-x`), then hue-shifted and saturated.
//! - Density hue: the hue cycles with the dye's total density, as in Stam's demo.
//! - Velocity hue: hue from the flow's direction, value from its speed.
//!
//! Output rows run top to bottom; the simulation's row 0 is the bottom.

use crate::params::ColorMode;
use crate::sim::Look;
use crate::sim::math::{atan2_turns, bilerp, hsv_to_rgb, lerp, rgb_to_hsv, tonemap};
use rayon::prelude::*;

/// Hue turns per unit of total density in the density-hue mode.
pub const DENSITY_HUE_TURNS: f32 = 0.35;
/// Exposure of speed in the velocity-hue mode: a speed of 1 canvas/s reads at 1 - e^-2.
pub const VELOCITY_VALUE_SCALE: f32 = 2.0;

/// What the colorize pass reads.
pub struct Source<'a> {
    /// Simulation width and height.
    pub w: usize,
    pub h: usize,
    pub u: &'a [f32],
    pub v: &'a [f32],
    /// Dye grid size and planes.
    pub dw: usize,
    pub dh: usize,
    pub dye: [&'a [f32]; 3],
}

/// Bilinear taps along one axis: for each output pixel, the two source indices and weight.
fn taps(out_n: usize, src_n: usize, flip: bool) -> Vec<(usize, usize, f32)> {
    (0..out_n)
        .map(|p| {
            let p = if flip { out_n - 1 - p } else { p };
            let x = ((p as f32 + 0.5) * src_n as f32 / out_n as f32 - 0.5)
                .max(0.0)
                .min((src_n - 1) as f32);
            let i0 = x as usize;
            (i0, (i0 + 1).min(src_n - 1), x - i0 as f32)
        })
        .collect()
}

/// Write an 8-bit channel.
#[inline(always)]
fn to_u8(x: f32) -> u8 {
    (x * 255.0 + 0.5).clamp(0.0, 255.0) as u8
}

/// Render `src` with `look` into `out` (`width * height * 4` bytes, RGBA, top row first).
pub fn colorize(src: &Source, look: &Look, width: usize, height: usize, out: &mut [u8]) {
    assert_eq!(out.len(), width * height * 4, "frame buffer size");
    if width == 0 || height == 0 {
        return;
    }
    let brightness = if look.brightness.is_finite() {
        look.brightness.max(0.0)
    } else {
        1.0
    };
    let saturation = if look.saturation.is_finite() {
        look.saturation.clamp(0.0, 1.0)
    } else {
        1.0
    };
    let shift = if look.hue_shift.is_finite() {
        look.hue_shift / 360.0
    } else {
        0.0
    };
    let xs = taps(width, src.dw, false);
    let ys = taps(height, src.dh, true);
    out.par_chunks_mut(width * 4)
        .with_min_len(super::band::min_rows(width * 4))
        .enumerate()
        .for_each(|(py, row)| {
            let (j0, j1, fy) = ys[py];
            let dye_at = |plane: &[f32], (i0, i1, fx): (usize, usize, f32)| {
                let bottom = lerp(plane[j0 * src.dw + i0], plane[j0 * src.dw + i1], fx);
                let top = lerp(plane[j1 * src.dw + i0], plane[j1 * src.dw + i1], fx);
                lerp(bottom, top, fy)
            };
            for (px, pixel) in row.chunks_exact_mut(4).enumerate() {
                let rgb = match look.color_mode {
                    ColorMode::Dye => {
                        let c = src
                            .dye
                            .map(|plane| tonemap(dye_at(plane, xs[px]) * brightness));
                        if saturation == 1.0 && shift == 0.0 {
                            c
                        } else {
                            let [h, s, v] = rgb_to_hsv(c);
                            hsv_to_rgb(h + shift, s * saturation, v)
                        }
                    }
                    ColorMode::DensityHue => {
                        let d: f32 = src.dye.iter().map(|plane| dye_at(plane, xs[px])).sum();
                        let hue = d.mul_add(DENSITY_HUE_TURNS, shift);
                        hsv_to_rgb(hue, saturation, tonemap(d * brightness))
                    }
                    ColorMode::VelocityHue => {
                        // Pixel centre in simulation cells.
                        let x = (px as f32 + 0.5) * src.w as f32 / width as f32;
                        let y = (height as f32 - py as f32 - 0.5) * src.h as f32 / height as f32;
                        let u = bilerp(src.u, src.w + 1, src.h, x, y - 0.5);
                        let v = bilerp(src.v, src.w, src.h + 1, x - 0.5, y);
                        // sqrt is correctly rounded everywhere; libm's hypot is not.
                        let speed = u.mul_add(u, v * v).sqrt();
                        let value = tonemap(speed * VELOCITY_VALUE_SCALE * brightness);
                        hsv_to_rgb(atan2_turns(v, u) + shift, saturation, value)
                    }
                };
                pixel[0] = to_u8(rgb[0]);
                pixel[1] = to_u8(rgb[1]);
                pixel[2] = to_u8(rgb[2]);
                pixel[3] = 255;
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn look(mode: ColorMode) -> Look {
        Look {
            color_mode: mode,
            ..Look::default()
        }
    }

    #[test]
    fn dye_mode_known_answer_and_flip() {
        // 1x2 dye grid: bottom cell red 1, top cell empty. A 1x2 picture shows the top row
        // first: black, then red 1 - e^-1 = 0.632 -> 161.
        let zeros = [0.0; 2];
        let red = [1.0, 0.0];
        let src = Source {
            w: 1,
            h: 2,
            u: &[0.0; 4],
            v: &[0.0; 3],
            dw: 1,
            dh: 2,
            dye: [&red, &zeros, &zeros],
        };
        let mut out = vec![0; 8];
        colorize(&src, &look(ColorMode::Dye), 1, 2, &mut out);
        assert_eq!(out, vec![0, 0, 0, 255, 161, 0, 0, 255]);
    }

    #[test]
    fn velocity_mode_hue_follows_direction() {
        // Uniform flow to the right (hue 0, red) on a 2x1 grid: interior face only.
        let src = Source {
            w: 2,
            h: 1,
            u: &[0.0, 1.0, 0.0],
            v: &[0.0; 4],
            dw: 2,
            dh: 1,
            dye: [&[0.0; 2], &[0.0; 2], &[0.0; 2]],
        };
        let mut out = vec![0; 2 * 4];
        colorize(&src, &look(ColorMode::VelocityHue), 2, 1, &mut out);
        assert!(out[0] > 0 && out[1] == 0 && out[2] == 0, "{out:?}");
    }
}
