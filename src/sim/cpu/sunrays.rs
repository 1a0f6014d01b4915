//! Sunrays: light scattered from bright dye along rays from the frame's centre, a radial blur
//! of the bloom's thresholded light towards the centre (Mitchell, "Volumetric light
//! scattering as a post-process", GPU Gems 3, 2007; as PavelDoGreat's WebGL fluid). Each
//! texel sums [`RAYS_SAMPLES`] bilinear samples on the way to the centre, each weaker by
//! [`RAYS_DECAY`], so bright dye throws streaks outwards. It runs on a small bloom level
//! ([`rays_level`]), whatever the frame size. Mirrors shaders/sunrays.wgsl; rows top first.

use super::bloom::Rgb;
pub use crate::sim::effects::{RAYS_DECAY, RAYS_DENSITY, RAYS_MAX_ROWS, RAYS_SAMPLES, rays_level};
use crate::sim::math::{from_fn3, map3};
use rayon::prelude::*;

/// Bilinear sample of `src` (`w x h`) at texel coordinates `(x, y)`, clamped to the edges.
#[inline(always)]
#[allow(clippy::manual_clamp)] // clamp would keep NaN; max-then-min maps it to 0
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

kernel! {
/// Row `j` of the rays of `src` (`w x h`).
fn sunrays_row(src: &[Rgb], w: usize, h: usize, j: usize, row: &mut [Rgb]) {
    let step = RAYS_DENSITY / RAYS_SAMPLES as f32;
    // Texel centres in 0..1 across the level, and the step towards the centre.
    let v0 = (j as f32 + 0.5) / h as f32;
    let dv = (v0 - 0.5) * step;
    for (i, o) in row.iter_mut().enumerate() {
        let u0 = (i as f32 + 0.5) / w as f32;
        let du = (u0 - 0.5) * step;
        let (mut u, mut v) = (u0, v0);
        let mut weight = 1.0f32;
        let mut acc = [0.0f32; 3];
        for _ in 0..RAYS_SAMPLES {
            u -= du;
            v -= dv;
            let c = sample(src, w, h, u.mul_add(w as f32, -0.5), v.mul_add(h as f32, -0.5));
            for k in 0..3 {
                acc[k] = weight.mul_add(c[k], acc[k]);
            }
            weight *= RAYS_DECAY;
        }
        *o = map3(acc, |x| x * (1.0 / RAYS_SAMPLES as f32));
    }
}
}

/// The rays of `src` (`w x h` thresholded light) into `out` (the same size).
pub fn sunrays(src: &[Rgb], w: usize, h: usize, out: &mut [Rgb]) {
    out.par_chunks_mut(w)
        .with_min_len(super::band::min_rows(w * RAYS_SAMPLES as usize * 4))
        .enumerate()
        .for_each(|(j, row)| sunrays_row(src, w, h, j, row));
}

#[cfg(test)]
mod tests {
    use super::*;

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
