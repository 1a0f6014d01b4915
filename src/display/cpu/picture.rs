//! The picture stage with effects: colorize's light for the whole frame, then bloom and
//! sunrays (`bloom.rs`, `sunrays.rs`), then the tone pass with shading, glow, palette and
//! background (`tone.rs`). Without effects, or in the legacy tone, [`colorize`] renders
//! row by row as before (the bits are the same as before the effects existed).
//!
//! The buffers (the height field, the bloom levels) are kept between frames of the same size,
//! so a frame allocates nothing but each thread's scratch rows. A frame asked for ahead
//! waits in a [`HeldFrame`] until it is taken (the GPU's frames wait in staging buffers,
//! `display::gpu::GpuPicture`).

use super::bloom::{Chain, PrefilterScratch, Rgb, prefilter_rows, tap};
use super::colorize::{Knobs, Resample, Source, colorize, light_row};
use super::tone::{Fx, FxRows, FxScratch, GlowTaps, heights, tone_fx_row};
use crate::fluid::{Effects, Look, ToneMode};
use rayon::iter::Either;
use rayon::prelude::*;

kernel! { avx512:
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
    /// The frame's light, three planes, rows top first: only for [`Picture::colour_stage`]
    /// (a render keeps no frame of light, see [`Picture::render`]).
    light: [Vec<f32>; 3],
    /// The shading's height field of the light, rows top first (with shading).
    heights: Vec<f32>,
    chain: Chain,
}

/// The frame the picture hands out on the CPU: rendered at once by a model's `request_frame`
/// (a CPU frame does not need to wait), held until `take_frame` hands it over.
#[derive(Default)]
pub struct HeldFrame {
    pixels: Vec<u8>,
    size: Option<(usize, usize)>,
}

impl HeldFrame {
    /// Render a `width x height` frame with `render` (RGBA8 rows into the buffer it is given)
    /// and hold it.
    pub fn fill(&mut self, width: usize, height: usize, render: impl FnOnce(&mut [u8])) {
        self.pixels.resize(width * height * 4, 0);
        render(&mut self.pixels);
        self.size = Some((width, height));
    }

    /// The held frame into `out` (swapped, no copy) and its size, once.
    pub fn take(&mut self, out: &mut Vec<u8>) -> Option<(usize, usize)> {
        let size = self.size.take()?;
        std::mem::swap(out, &mut self.pixels);
        Some(size)
    }
}

/// Per-thread scratch of the tone pass.
struct Scratch {
    /// Dye rows of one frame row, interpolated vertically (colorize's scratch).
    dye: [Vec<f32>; 3],
    /// The row's light, three planes.
    light: [Vec<f32>; 3],
    /// The row's glow, three planes at the glow's width.
    glow: [Vec<f32>; 3],
    fx: FxScratch,
    pixels: Vec<u32>,
}

/// What colorizes a frame's rows.
struct Colour<'a> {
    src: &'a Source<'a>,
    look: &'a Look,
    k: Knobs,
    resample: Resample,
    size: (usize, usize),
}

impl<'a> Colour<'a> {
    fn new(src: &'a Source<'a>, look: &'a Look, width: usize, height: usize) -> Self {
        Self {
            src,
            look,
            k: Knobs::new(look),
            resample: Resample::new(src, width, height),
            size: (width, height),
        }
    }

    /// Scratch of [`Colour::rows`]: three dye rows.
    fn dye_scratch(&self) -> [Vec<f32>; 3] {
        std::array::from_fn(|_| vec![0.0; self.src.dw])
    }

    /// Three planes of light for `rows` frame rows.
    fn light_scratch(&self, rows: usize) -> [Vec<f32>; 3] {
        std::array::from_fn(|_| vec![0.0; rows * self.size.0])
    }

    /// Rows `y..` of the frame's light into `planes` (as many rows as they hold).
    fn rows(&self, y: usize, dye: &mut [Vec<f32>; 3], planes: [&mut [f32]; 3]) {
        let w = self.size.0;
        let count = planes[0].len() / w.max(1);
        let [p0, p1, p2] = planes;
        for t in 0..count {
            let out = [
                &mut p0[t * w..(t + 1) * w],
                &mut p1[t * w..(t + 1) * w],
                &mut p2[t * w..(t + 1) * w],
            ];
            let (src, look, k) = (self.src, self.look, self.k);
            light_row(src, look, k, &self.resample, self.size, y + t, dye, out);
        }
    }
}

impl Picture {
    /// Render `src` with `look` into `out` (`width * height * 4` bytes, RGBA, top row first).
    ///
    /// Two passes over the frame, rows in parallel, with the bloom chain between them:
    /// 1. each pair of rows: their light (colorize), its height field (with shading) and,
    ///    while both rows are in cache, their 2x2 prefilter into the chain's level 0;
    /// 2. each row: its light again, then shading, glow, palette, background, tone, encode
    ///    and dither.
    ///
    /// The light is colorized twice rather than kept as a frame between the passes: three
    /// planes of a 1280x720 frame are 11 MB written and read back through memory, which cost
    /// more than colorizing a row again while it stays in cache (2026-11-26, Zen 4 VM).
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
        let shading = fx.shading > 0.0;
        let glowing = Chain::glows(&fx);
        self.heights
            .resize(if shading { width * height } else { 0 }, 0.0);
        if glowing {
            self.chain.ensure(width, height);
        }
        let colour = Colour::new(src, look, width, height);
        if shading || glowing {
            self.light_pass(&colour, &fx);
        }
        if glowing {
            self.chain.finish(&fx);
        }
        self.tone_pass(&colour, &fx, out);
    }

    /// The colour stage alone: the frame's light (colorize) into three planes of light, without
    /// the display pipeline (no heights, no bloom, no pixels).
    pub fn colour_stage(&mut self, src: &Source, look: &Look, width: usize, height: usize) {
        if width == 0 || height == 0 {
            return;
        }
        for plane in &mut self.light {
            plane.resize(width * height, 0.0);
        }
        let colour = Colour::new(src, look, width, height);
        let [l0, l1, l2] = &mut self.light;
        l0.par_chunks_mut(width)
            .zip(l1.par_chunks_mut(width))
            .zip(l2.par_chunks_mut(width))
            .with_min_len(crate::kernels::band::min_rows(width * 4))
            .enumerate()
            .for_each_init(
                || colour.dye_scratch(),
                |dye, (y, ((r, g), b))| colour.rows(y, dye, [r, g, b]),
            );
    }

    /// Pass 1: light, heights and the bloom's prefilter, a pair of rows at a time.
    fn light_pass(&mut self, colour: &Colour, fx: &Effects) {
        let (w, h) = colour.size;
        let pairs = h.div_ceil(2);
        let hts = chunks_or_none(&mut self.heights, 2 * w, pairs);
        let level0 = match self.chain.levels.first_mut() {
            Some(l) if Chain::glows(fx) => chunks_or_none(&mut l.down, l.w, pairs),
            _ => chunks_or_none(&mut [], 1, pairs),
        };
        hts.zip(level0)
            .with_min_len(crate::kernels::band::min_rows(w * 8))
            .enumerate()
            .for_each_init(
                || {
                    let light = colour.light_scratch(2);
                    (colour.dye_scratch(), light, PrefilterScratch::default())
                },
                |(dye, light, prefilter), (j, (hts, pre))| {
                    let count = (h - 2 * j).min(2);
                    let [l0, l1, l2] = light;
                    let n = count * w;
                    colour.rows(2 * j, dye, [&mut l0[..n], &mut l1[..n], &mut l2[..n]]);
                    let planes = [&l0[..n], &l1[..n], &l2[..n]];
                    let row = |t: usize| planes.map(|p| &p[t.min(count - 1) * w..][..w]);
                    if let Some(hts) = hts {
                        for (t, out) in hts.chunks_mut(w).enumerate() {
                            heights(row(t), out);
                        }
                    }
                    if let Some(pre) = pre {
                        prefilter_rows(row(0), row(1), fx, prefilter, pre);
                    }
                },
            );
    }

    /// Pass 2: each row's pixels, from its light, heights and glow.
    fn tone_pass(&self, colour: &Colour, fx: &Effects, out: &mut [u8]) {
        let (width, height) = colour.size;
        let consts = Fx::new(fx, height, colour.src.dh);
        let glow = self.chain.levels.first().filter(|_| Chain::glows(fx));
        let (gw, gh, glow) = match glow {
            Some(l0) => (l0.w, l0.h, &l0.up[..]),
            None => (0, 0, &[][..]),
        };
        let taps = GlowTaps::new(if gw > 0 { width } else { 0 }, gw);
        let step = consts.step;
        let hts = &self.heights;
        out.par_chunks_mut(width * 4)
            .with_min_len(crate::kernels::band::min_rows(width * 4))
            .enumerate()
            .for_each_init(
                || Scratch {
                    dye: colour.dye_scratch(),
                    light: colour.light_scratch(1),
                    glow: std::array::from_fn(|_| vec![0.0; gw]),
                    fx: FxScratch::default(),
                    pixels: vec![0; width],
                },
                |scratch, (py, row)| {
                    let [l0, l1, l2] = &mut scratch.light;
                    colour.rows(
                        py,
                        &mut scratch.dye,
                        [&mut l0[..], &mut l1[..], &mut l2[..]],
                    );
                    let h_at = |y: usize| &hts[y * width..(y + 1) * width];
                    let glow_row = (gw > 0).then(|| {
                        let (j0, j1, f) = tap(py, height, gh);
                        let (top, bottom) = (&glow[j0 * gw..][..gw], &glow[j1 * gw..][..gw]);
                        let [g0, g1, g2] = &mut scratch.glow;
                        glow_rows(top, bottom, f, [&mut g0[..], &mut g1[..], &mut g2[..]]);
                        [&g0[..], &g1[..], &g2[..]]
                    });
                    let rows = FxRows {
                        light: [&l0[..], &l1[..], &l2[..]],
                        heights: (!hts.is_empty()).then(|| {
                            [
                                h_at(py),
                                h_at(py.saturating_sub(step)),
                                h_at((py + step).min(height - 1)),
                            ]
                        }),
                        glow: glow_row.map(|g| (g, &taps)),
                    };
                    let fx_scratch = &mut scratch.fx;
                    crate::kernels::band::with_pixels(row, &mut scratch.pixels, |pixels| {
                        tone_fx_row(&rows, &consts, py, fx_scratch, pixels);
                    });
                },
            );
    }
}

/// `count` chunks of `len` items of `v` as `Some`, or `count` times `None` when `v` is empty.
fn chunks_or_none<T: Send>(
    v: &mut [T],
    len: usize,
    count: usize,
) -> impl IndexedParallelIterator<Item = Option<&mut [T]>> {
    if v.is_empty() {
        Either::Right((0..count).into_par_iter().map(|_| None))
    } else {
        Either::Left(v.par_chunks_mut(len).map(Some))
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
            heat: &[],
            particles: None,
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
