//! Sunrays: light scattered from bright dye along rays from the frame's centre, a radial blur
//! of the bloom's thresholded light towards the centre (Mitchell, "Volumetric light
//! scattering as a post-process", GPU Gems 3, 2007; as PavelDoGreat's WebGL fluid). Each
//! texel sums [`RAYS_SAMPLES`] bilinear samples on the way to the centre, each weaker by
//! [`RAYS_DECAY`], so bright dye throws streaks outwards. It runs on a small bloom level
//! ([`rays_level`]), whatever the frame size. Mirrors shaders/sunrays.wgsl; rows top first.

use super::bloom::Rgb;
pub use crate::display::effects::{
    RAYS_DECAY, RAYS_DENSITY, RAYS_MAX_ROWS, RAYS_SAMPLES, rays_level,
};
use crate::kernels::math::from_fn3;
use rayon::prelude::*;

/// One axis's bilinear taps of every sample of a ray: for texel `t` of `n` and sample `s`
/// (entry `s * n + t`), the two texels and the second's weight, the coordinate stepped
/// towards the centre and clamped exactly as a per-texel trace steps it.
fn axis_taps(n: usize, out: &mut Vec<(u32, u32, f32)>) {
    let samples = RAYS_SAMPLES as usize;
    let step = RAYS_DENSITY / RAYS_SAMPLES as f32;
    out.clear();
    out.resize(samples * n, (0, 0, 0.0));
    for t in 0..n {
        let c0 = (t as f32 + 0.5) / n as f32;
        let dc = (c0 - 0.5) * step;
        let mut c = c0;
        for s in 0..samples {
            c -= dc;
            let x = c.mul_add(n as f32, -0.5).max(0.0).min((n - 1) as f32);
            let i0 = x as usize;
            out[s * n + t] = (i0 as u32, (i0 + 1).min(n - 1) as u32, x - i0 as f32);
        }
    }
}

kernel! {
/// One row of texels sampled across at the columns `taps` (two texels and the second's
/// weight, per output texel): flat channels, `3 * taps.len()` floats.
pub(super) fn across_row(src: &[Rgb], taps: &[(u32, u32, f32)], out: &mut [f32]) {
    for (o, &(i0, i1, fx)) in out.chunks_exact_mut(3).zip(taps) {
        let (a, b) = (src[i0 as usize], src[i1 as usize]);
        for k in 0..3 {
            o[k] = fx.mul_add(b[k] - a[k], a[k]);
        }
    }
}
}

kernel! { avx512:
/// `acc += weight * lerp(top, bottom, fy)` over flat channels: one sample of a row of rays.
fn accumulate(acc: &mut [f32], top: &[f32], bottom: &[f32], fy: f32, weight: f32) {
    let n = acc.len().min(top.len()).min(bottom.len());
    for i in 0..n {
        let (t, b) = (top[i], bottom[i]);
        acc[i] = weight.mul_add(fy.mul_add(b - t, t), acc[i]);
    }
}
}

/// The sunrays' scratch: each axis's taps (for one level size) and the source rows sampled
/// across at every sample's columns. Kept between frames.
#[derive(Default)]
pub struct Rays {
    size: (usize, usize),
    xs: Vec<(u32, u32, f32)>,
    ys: Vec<(u32, u32, f32)>,
    /// Per sample, `h` rows of `3 w` floats (only the rows the sample reads are written).
    across: Vec<f32>,
}

impl Rays {
    /// The rays of `src` (`w x h` thresholded light) into `out` (the same size).
    ///
    /// A texel's samples lie on the line to the centre, and each coordinate steps along its
    /// own axis only: a sample's column depends on the texel's column, its row on the texel's
    /// row. So each sample first samples the source rows it reads across at its columns, once
    /// for all texels of a column, and every texel then blends two of those rows. The
    /// operations are the per-texel bilinear samples' (across the two rows, then between
    /// them), in the same order: the same bits as tracing each texel on its own, at about a
    /// third of the texel fetches, and the blends vectorise.
    pub fn trace(&mut self, src: &[Rgb], w: usize, h: usize, out: &mut [Rgb]) {
        if w == 0 || h == 0 {
            return;
        }
        assert!(src.len() >= w * h && out.len() >= w * h, "sunrays size");
        if self.size != (w, h) {
            self.size = (w, h);
            axis_taps(w, &mut self.xs);
            axis_taps(h, &mut self.ys);
            self.across = vec![0.0; RAYS_SAMPLES as usize * h * 3 * w];
        }
        let (xs, ys) = (&self.xs, &self.ys);
        // The rows sample `s` reads: its taps' rows are monotonic in the texel's row.
        let rows = |s: usize| ys[s * h].0 as usize..=ys[s * h + h - 1].1 as usize;
        self.across
            .par_chunks_mut(h * 3 * w)
            .enumerate()
            .for_each(|(s, plane)| {
                let taps = &xs[s * w..(s + 1) * w];
                for y in rows(s) {
                    across_row(
                        &src[y * w..(y + 1) * w],
                        taps,
                        &mut plane[y * 3 * w..][..3 * w],
                    );
                }
            });
        let across = &self.across;
        out[..w * h]
            .par_chunks_mut(w)
            .with_min_len(crate::kernels::band::min_rows(w * RAYS_SAMPLES as usize))
            .enumerate()
            .for_each_init(Vec::new, |acc, (j, row)| {
                acc.clear();
                acc.resize(3 * w, 0.0f32);
                let mut weight = 1.0f32;
                for s in 0..RAYS_SAMPLES as usize {
                    let (j0, j1, fy) = ys[s * h + j];
                    let plane = &across[s * h * 3 * w..];
                    let line = |y: u32| &plane[y as usize * 3 * w..][..3 * w];
                    accumulate(acc, line(j0), line(j1), fy, weight);
                    weight *= RAYS_DECAY;
                }
                for (o, a) in row.iter_mut().zip(acc.chunks_exact(3)) {
                    *o = from_fn3(|k| a[k] * (1.0 / RAYS_SAMPLES as f32));
                }
            });
    }
}

/// The rays of `src` (`w x h` thresholded light) into `out` (the same size), with scratch of
/// its own (see [`Rays::trace`]).
pub fn sunrays(src: &[Rgb], w: usize, h: usize, out: &mut [Rgb]) {
    Rays::default().trace(src, w, h, out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::math::map3;

    /// Bilinear sample of `src` (`w x h`) at texel coordinates `(x, y)`, clamped to the edges
    /// (as shaders/sunrays.wgsl samples).
    #[allow(clippy::manual_clamp)]
    fn sample(src: &[Rgb], w: usize, h: usize, x: f32, y: f32) -> Rgb {
        let x = x.max(0.0).min((w - 1) as f32);
        let y = y.max(0.0).min((h - 1) as f32);
        let (i0, j0) = (x as usize, y as usize);
        let (i1, j1) = ((i0 + 1).min(w - 1), (j0 + 1).min(h - 1));
        let (fx, fy) = (x - i0 as f32, y - j0 as f32);
        let (a, b) = (src[j0 * w + i0], src[j0 * w + i1]);
        let (c, d) = (src[j1 * w + i0], src[j1 * w + i1]);
        from_fn3(|k| {
            let top = fx.mul_add(b[k] - a[k], a[k]);
            let bottom = fx.mul_add(d[k] - c[k], c[k]);
            fy.mul_add(bottom - top, top)
        })
    }

    /// The rays traced texel by texel, as the shader traces them.
    fn reference(src: &[Rgb], w: usize, h: usize) -> Vec<Rgb> {
        let step = RAYS_DENSITY / RAYS_SAMPLES as f32;
        let mut out = vec![[0.0f32; 3]; w * h];
        for j in 0..h {
            let v0 = (j as f32 + 0.5) / h as f32;
            let dv = (v0 - 0.5) * step;
            for i in 0..w {
                let u0 = (i as f32 + 0.5) / w as f32;
                let du = (u0 - 0.5) * step;
                let (mut u, mut v) = (u0, v0);
                let mut weight = 1.0f32;
                let mut acc = [0.0f32; 3];
                for _ in 0..RAYS_SAMPLES {
                    u -= du;
                    v -= dv;
                    let c = sample(
                        src,
                        w,
                        h,
                        u.mul_add(w as f32, -0.5),
                        v.mul_add(h as f32, -0.5),
                    );
                    for k in 0..3 {
                        acc[k] = weight.mul_add(c[k], acc[k]);
                    }
                    weight *= RAYS_DECAY;
                }
                out[j * w + i] = map3(acc, |x| x * (1.0 / RAYS_SAMPLES as f32));
            }
        }
        out
    }

    #[test]
    fn the_separable_trace_is_the_per_texel_trace_bit_for_bit() {
        let mut rays = Rays::default();
        for (w, h) in [(80, 45), (60, 34), (7, 5), (1, 1), (1, 9), (33, 33)] {
            let src: Vec<Rgb> = (0..w * h)
                .map(|k| {
                    let x = (k as f32 * 0.618_034).fract();
                    [x * 3.0, (x * 7.0).fract(), (k % 5) as f32 * 0.25]
                })
                .collect();
            let mut out = vec![[0.0f32; 3]; w * h];
            rays.trace(&src, w, h, &mut out);
            let want = reference(&src, w, h);
            for (k, (a, b)) in out.iter().zip(&want).enumerate() {
                assert_eq!(
                    a.map(f32::to_bits),
                    b.map(f32::to_bits),
                    "{w}x{h} texel {k}"
                );
            }
        }
    }

    #[test]
    fn the_rays_level_is_small_at_any_size() {
        let levels = |w, h| super::super::bloom::level_sizes(w, h);
        assert_eq!(levels(1280, 720)[rays_level(&levels(1280, 720))], (80, 45));
        assert_eq!(levels(640, 360)[rays_level(&levels(640, 360))], (80, 45));
        assert_eq!(
            levels(1920, 1080)[rays_level(&levels(1920, 1080))],
            (60, 34)
        );
        assert_eq!(rays_level(&levels(1, 1)), 0);
    }

    #[test]
    fn a_bright_spot_throws_a_streak_away_from_the_centre() {
        // 33 x 33, a bright texel right of the centre: the rays light the texels further
        // right (whose path to the centre crosses it), not those on the left.
        let (w, h) = (33, 33);
        let mut src = vec![[0.0f32; 3]; w * h];
        src[16 * w + 22] = [1.0, 0.5, 0.0];
        let mut out = vec![[0.0f32; 3]; w * h];
        sunrays(&src, w, h, &mut out);
        let at = |x: usize| out[16 * w + x][0];
        assert!(at(26) > 0.0 && at(30) > 0.0, "{} {}", at(26), at(30));
        assert_eq!(at(10), 0.0);
        assert_eq!(out[4 * w + 22][0], 0.0, "only along the ray");
        // Colour kept: green is half of red everywhere.
        for c in &out {
            approx::assert_relative_eq!(c[1], 0.5 * c[0], max_relative = 1e-5);
        }
        // And symmetric: the mirrored spot gives the mirrored rays.
        let mut mirrored = vec![[0.0f32; 3]; w * h];
        mirrored[16 * w + 10] = [1.0, 0.5, 0.0];
        let mut out2 = vec![[0.0f32; 3]; w * h];
        sunrays(&mirrored, w, h, &mut out2);
        for y in 0..h {
            for x in 0..w {
                approx::assert_relative_eq!(
                    out[y * w + x][0],
                    out2[y * w + w - 1 - x][0],
                    max_relative = 1e-4,
                    epsilon = 1e-7
                );
            }
        }
    }
}
