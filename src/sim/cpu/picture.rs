//! The picture stage with effects: colorize's light for the whole frame, then bloom and
//! sunrays (`bloom.rs`, `sunrays.rs`), then the display pass with shading, glow, palette and
//! background (`display.rs`). Without effects, or in the legacy tone, [`colorize`] renders
//! row by row as before (the bits are the same as before the effects existed).
//!
//! The buffers (three planes of light, the bloom levels) are kept between frames of the
//! same size, so a frame allocates nothing.

use super::bloom::{Chain, Rgb, tap};
use super::colorize::{Knobs, Resample, Source, colorize, light_row};
use super::display::{Fx, FxRows, FxScratch, display_fx_row};
use crate::fluid::{Look, ToneMode};
use rayon::prelude::*;

kernel! {
/// The glow row between rows `top` and `bottom` (weight `f` on the second), as three planes.
fn glow_rows(top: &[Rgb], bottom: &[Rgb], f: f32, out: [&mut [f32]; 3]) {
    let [g0, g1, g2] = out;
    for (x, (a, b)) in top.iter().zip(bottom).enumerate() {
        g0[x] = f.mul_add(b[0] - a[0], a[0]);
        g1[x] = f.mul_add(b[1] - a[1], a[1]);
        g2[x] = f.mul_add(b[2] - a[2], a[2]);
    }
}
}

/// The picture stage's buffers.
#[derive(Default)]
pub struct Picture {
    /// The frame's light, three planes, rows top first.
    light: [Vec<f32>; 3],
    chain: Chain,
}

/// Per-thread scratch of the passes over rows.
struct Scratch {
    glow: [Vec<f32>; 3],
    fx: FxScratch,
    pixels: Vec<u32>,
}

impl Picture {
    /// Render `src` with `look` into `out` (`width * height * 4` bytes, RGBA, top row first).
    pub fn render(
        &mut self,
        src: &Source,
        look: &Look,
        width: usize,
        height: usize,
        out: &mut [u8],
    ) {
        let fx = look.effects.sanitized();
        if look.tone == ToneMode::Legacy || !fx.any() || width == 0 || height == 0 {
            colorize(src, look, width, height, out);
            return;
        }
        assert_eq!(out.len(), width * height * 4, "frame buffer size");
        let n = width * height;
        for plane in &mut self.light {
            plane.resize(n, 0.0);
        }
        let k = Knobs::new(look);
        let resample = Resample::new(src, width, height);
        let dw = src.dw;
        let [l0, l1, l2] = &mut self.light;
        let min_rows = super::band::min_rows(width * 4);
        l0.par_chunks_mut(width)
            .zip(l1.par_chunks_mut(width))
            .zip(l2.par_chunks_mut(width))
            .with_min_len(min_rows)
            .enumerate()
            .for_each_init(
                || std::array::from_fn::<_, 3, _>(|_| vec![0.0; dw]),
                |rows, (py, ((r, g), b))| {
                    let size = (width, height);
                    light_row(src, look, k, &resample, size, py, rows, [r, g, b]);
                },
            );
        let light = [&self.light[0][..], &self.light[1][..], &self.light[2][..]];
        let glowing = self.chain.run(light, width, height, &fx);
        let consts = Fx::new(&fx, height, src.dh);
        let (gw, gh, glow) = match self.chain.levels.first() {
            Some(l0) if glowing => (l0.w, l0.h, &l0.up[..]),
            _ => (0, 0, &[][..]),
        };
        let glow_taps: Vec<(u32, u32, f32)> = (0..if glowing { width } else { 0 })
            .map(|px| {
                let (a, b, f) = tap(px, width, gw);
                (a as u32, b as u32, f)
            })
            .collect();
        let glow_i0: Vec<u32> = glow_taps.iter().map(|t| t.0).collect();
        let glow_i1: Vec<u32> = glow_taps.iter().map(|t| t.1).collect();
        let glow_f: Vec<f32> = glow_taps.iter().map(|t| t.2).collect();
        let step = consts.step;
        out.par_chunks_mut(width * 4)
            .with_min_len(min_rows)
            .enumerate()
            .for_each_init(
                || Scratch {
                    glow: std::array::from_fn(|_| vec![0.0; gw]),
                    fx: FxScratch::default(),
                    pixels: vec![0; width],
                },
                |scratch, (py, row)| {
                    let at = |y: usize| light.map(|p| &p[y * width..(y + 1) * width]);
                    let glow_row = glowing.then(|| {
                        let (j0, j1, f) = tap(py, height, gh);
                        let (top, bottom) = (&glow[j0 * gw..][..gw], &glow[j1 * gw..][..gw]);
                        let [g0, g1, g2] = &mut scratch.glow;
                        glow_rows(top, bottom, f, [&mut g0[..], &mut g1[..], &mut g2[..]]);
                        [&g0[..], &g1[..], &g2[..]]
                    });
                    let rows = FxRows {
                        light: at(py),
                        above: at(py.saturating_sub(step)),
                        below: at((py + step).min(height - 1)),
                        glow: glow_row,
                        glow_i0: &glow_i0,
                        glow_i1: &glow_i1,
                        glow_f: &glow_f,
                    };
                    display_fx_row(&rows, &consts, py, &mut scratch.fx, &mut scratch.pixels);
                    for (dst, p) in row.chunks_exact_mut(4).zip(scratch.pixels.iter()) {
                        dst.copy_from_slice(&p.to_le_bytes());
                    }
                },
            );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fluid::{ColorMode, Effects, Palette};

    /// Every effect on.
    fn show() -> Effects {
        Effects {
            bloom: 0.8,
            bloom_threshold: 0.5,
            rays: 0.5,
            shading: 0.6,
            palette: Palette::Fire,
            background: [0.01, 0.005, 0.02],
            ..Effects::OFF
        }
    }

    /// A `dw x dh` dye grid with one bright red blob, rendered at `w x h`.
    fn render(
        dye: [&[f32]; 3],
        (dw, dh): (usize, usize),
        fx: Effects,
        (w, h): (usize, usize),
    ) -> Vec<u8> {
        let zeros = vec![0.0; (dw + 1) * (dh + 1)];
        let src = Source {
            w: dw,
            h: dh,
            u: &zeros,
            v: &zeros,
            dw,
            dh,
            dye,
        };
        let look = Look {
            color_mode: ColorMode::Dye,
            effects: fx,
            ..Look::default()
        };
        let mut out = vec![0; w * h * 4];
        Picture::default().render(&src, &look, w, h, &mut out);
        out
    }

    fn blob(dw: usize, dh: usize, peak: f32) -> Vec<f32> {
        (0..dw * dh)
            .map(|i| {
                let (x, y) = (
                    (i % dw) as f32 - dw as f32 / 2.0,
                    (i / dw) as f32 - dh as f32 / 2.0,
                );
                peak * (-(x * x + y * y) / 8.0).exp()
            })
            .collect()
    }

    #[test]
    fn light_below_the_threshold_renders_as_without_bloom() {
        let (dw, dh) = (24, 16);
        let red = blob(dw, dh, 0.4);
        let none = vec![0.0; dw * dh];
        let dye = [&red[..], &none[..], &none[..]];
        let plain = render(dye, (dw, dh), Effects::OFF, (61, 37));
        let bloom = Effects {
            bloom: 2.0,
            bloom_threshold: 1.0,
            bloom_knee: 0.5,
            rays: 1.0,
            ..Effects::OFF
        };
        assert_eq!(render(dye, (dw, dh), bloom, (61, 37)), plain);
        // Brighter than the threshold, it glows: more light, and further out.
        let hot = blob(dw, dh, 4.0);
        let dye = [&hot[..], &none[..], &none[..]];
        let (a, b) = (
            render(dye, (dw, dh), Effects::OFF, (61, 37)),
            render(dye, (dw, dh), bloom, (61, 37)),
        );
        let sum = |v: &[u8]| v.chunks(4).map(|p| u32::from(p[0])).sum::<u32>();
        assert!(sum(&b) > sum(&a) + 1000, "{} {}", sum(&b), sum(&a));
        assert!(a.chunks(4).zip(b.chunks(4)).all(|(p, q)| q[0] >= p[0]));
    }

    #[test]
    fn any_size_and_broken_dye_render() {
        for (w, h) in [(1, 1), (3, 2), (2, 3), (1, 7), (64, 36)] {
            for bad in [f32::NAN, f32::INFINITY, 1.0e30] {
                let mut red = blob(8, 6, 3.0);
                red[3] = bad;
                let none = vec![0.0; 48];
                let out = render([&red, &none, &none], (8, 6), show(), (w, h));
                assert!(out.chunks(4).all(|p| p[3] == 255));
                // The broken cell shows as itself at most; the rest of the frame is lit.
                let lit = out.chunks(4).filter(|p| p[0] > 0).count();
                assert!(lit * 2 >= w * h, "{w}x{h} {bad}: {lit} lit");
            }
        }
    }

    /// A palette maps brightness to its colours: dim red light under Ice turns blue, and the
    /// background shows where there is no dye, at the value asked for.
    #[test]
    fn palette_and_background() {
        let (dw, dh) = (4, 4);
        let dim = vec![0.3; dw * dh];
        let none = vec![0.0; dw * dh];
        let fx = Effects {
            palette: Palette::Ice,
            ..Effects::OFF
        };
        let out = render([&dim, &none, &none], (dw, dh), fx, (4, 4));
        assert!(out[2] > out[0], "blue over red: {:?}", &out[..4]);
        let v = 0.1;
        let bg = crate::fluid::light_for_display(v);
        let fx = Effects {
            background: [bg, bg * 0.5, 0.0],
            ..Effects::OFF
        };
        let out = render([&none, &none, &none], (dw, dh), fx, (4, 4));
        // 255 * 0.1 = 25.5 (plus dither, rounded down).
        assert!((25..=26).contains(&out[0]), "{:?}", &out[..4]);
        assert!(out[1] < out[0] && out[2] == 0);
    }
}
