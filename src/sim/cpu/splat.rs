//! Splats: add dye and momentum with a Gaussian (or block) footprint.
//!
//! A splat adds `force * weight` to the velocity faces and `color * amount * weight` to the
//! dye cells, where weight is `exp(-d^2 / r^2)` (Gaussian, cut at 3.5 r where it is below 5e-6)
//! or 1 inside the square of half-side r (block). Several splats apply in order, row by row in
//! parallel; each row sees them in the same order, so the result is thread-count independent.

use crate::sim::physics::CellSplat;
use crate::sim::{MAX_DYE, MAX_SPEED};
use rayon::prelude::*;

// The row loops are kernels: compiled without FMA, every `mul_add` of the weights (and of
// the exponential inside them) was a libm call, and the splats took over half of a render's
// time once rows, bands and chroma sent dozens of wide splats a step.
kernel! {
/// Row `j` of the `u` faces (`w + 1` of them; the walls stay 0).
fn splat_u_row(splats: &[CellSplat], j: usize, w: usize, row: &mut [f32]) {
    let y = j as f32 + 0.5;
    for s in splats
        .iter()
        .filter(|s| s.force[0] != 0.0 && s.touches_row(y))
    {
        // Interior faces only: walls stay 0.
        let (lo, hi) = s.columns(0.0, w);
        for (i, x) in row.iter_mut().enumerate().take(hi).skip(lo.max(1)) {
            let add = s.push_u(i as f32 - s.x, y - s.y);
            *x = (*x + add).clamp(-MAX_SPEED, MAX_SPEED);
        }
    }
}
}

kernel! {
/// Row `j` of the `v` faces (interior rows only: the walls stay 0).
fn splat_v_row(splats: &[CellSplat], j: usize, w: usize, row: &mut [f32]) {
    let y = j as f32;
    for s in splats
        .iter()
        .filter(|s| s.force[1] != 0.0 && s.touches_row(y))
    {
        let (lo, hi) = s.columns(0.5, w);
        for (i, x) in row.iter_mut().enumerate().take(hi).skip(lo) {
            let add = s.push_v(i as f32 + 0.5 - s.x, y - s.y);
            *x = (*x + add).clamp(-MAX_SPEED, MAX_SPEED);
        }
    }
}
}

/// Apply `splats` (already converted) to the velocity faces of a `w x h` grid.
pub fn splat_velocity(splats: &[CellSplat], u: &mut [f32], v: &mut [f32], w: usize, h: usize) {
    if splats.iter().all(|s| s.force == [0.0, 0.0]) {
        return;
    }
    u.par_chunks_mut(w + 1)
        .with_min_len(super::band::min_rows(w + 1))
        .enumerate()
        .for_each(|(j, row)| splat_u_row(splats, j, w, row));
    v.par_chunks_mut(w)
        .with_min_len(super::band::min_rows(w))
        .enumerate()
        .for_each(|(j, row)| {
            if j != 0 && j != h {
                splat_v_row(splats, j, w, row);
            }
        });
}

kernel! {
/// Row `j` of the dye planes (`dw` cells, `scale` per simulation cell).
fn splat_dye_row(splats: &[CellSplat], j: usize, dw: usize, scale: usize, rows: [&mut [f32]; 3]) {
    let inv = 1.0 / scale as f32;
    let [r, g, b] = rows;
    let y = (j as f32 + 0.5) * inv;
    for s in splats
        .iter()
        .filter(|s| s.dye != [0.0; 3] && s.touches_row(y))
    {
        // Dye cell i sits at x = (i + 0.5) / scale sim cells.
        let lo = ((s.x - s.reach) * scale as f32 - 0.5).ceil().max(0.0) as usize;
        let hi = (((s.x + s.reach) * scale as f32 - 0.5).floor() + 1.0)
            .clamp(0.0, dw as f32) as usize;
        let hi = hi.min(r.len()).min(g.len()).min(b.len());
        // Branch-free, so it vectorises: a weight of 0 adds nothing.
        for i in lo.min(hi)..hi {
            let wgt = s.weight((i as f32 + 0.5) * inv - s.x, y - s.y);
            r[i] = s.dye[0].mul_add(wgt, r[i]).min(MAX_DYE);
            g[i] = s.dye[1].mul_add(wgt, g[i]).min(MAX_DYE);
            b[i] = s.dye[2].mul_add(wgt, b[i]).min(MAX_DYE);
        }
    }
}
}

/// Apply `splats` to the dye planes of a grid `scale` times finer than the simulation.
pub fn splat_dye(splats: &[CellSplat], dye: [&mut [f32]; 3], dw: usize, scale: usize) {
    if splats.iter().all(|s| s.dye == [0.0; 3]) {
        return;
    }
    let [r, g, b] = dye;
    r.par_chunks_mut(dw)
        .zip(g.par_chunks_mut(dw))
        .zip(b.par_chunks_mut(dw))
        .with_min_len(super::band::min_rows(dw))
        .enumerate()
        .for_each(|(j, ((r, g), b))| splat_dye_row(splats, j, dw, scale, [r, g, b]));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fluid::{Splat, SplatShape};

    #[test]
    fn radial_splats_pull_towards_the_centre_and_push_away_when_negative() {
        let (w, h) = (16, 16);
        for (k, sign) in [(2.0f32, 1.0f32), (-2.0, -1.0)] {
            let s = Splat {
                pos: [0.5, 0.5],
                radius: 0.2,
                force: [k, 123.0],
                shape: SplatShape::Radial,
                ..Splat::default()
            };
            let c = CellSplat::new(&s, h).unwrap();
            let mut u = vec![0.0; (w + 1) * h];
            let mut v = vec![0.0; w * (h + 1)];
            splat_velocity(&[c], &mut u, &mut v, w, h);
            // Right of the centre the flow points left (a pull), left of it right; above it
            // down, below it up; reversed for a push.
            let row = 8 * (w + 1);
            assert!(sign * u[row + 11] < 0.0 && sign * u[row + 5] > 0.0);
            assert!(sign * v[11 * w + 8] < 0.0 && sign * v[5 * w + 8] > 0.0);
            // Known answer: the u face 2 cells right of the centre (x = 10, y = 8.5 vs
            // centre 8, 8): d = (2, 0.5), r = 3.2: -k * 2 / 3.2 * e^(-4.25 / 10.24).
            let want = -k * (2.0 / 3.2) * (-4.25f32 / 10.24).exp();
            assert!(
                (u[row + 10] - want).abs() < 1e-5,
                "{} vs {want}",
                u[row + 10]
            );
            // Symmetric: equal and opposite either side.
            assert!((u[row + 10] + u[row + 6]).abs() < 1e-6);
        }
    }

    #[test]
    fn gaussian_known_answers() {
        // Splat at the centre of cell (1, 1) of a 4x4 grid, radius 1 cell.
        let s = Splat {
            pos: [1.5 / 4.0, 1.5 / 4.0],
            radius: 0.25,
            color: [1.0, 0.5, 0.0],
            amount: 2.0,
            force: [0.0, 0.0],
            shape: SplatShape::Gaussian,
        };
        let c = CellSplat::new(&s, 4).unwrap();
        let mut planes = [vec![0.0; 16], vec![0.0; 16], vec![0.0; 16]];
        let [r, g, b] = &mut planes;
        splat_dye(&[c], [r, g, b], 4, 1);
        // Centre: weight 1 -> red 1 * 2 = 2, green 1.
        assert_eq!(planes[0][5], 2.0);
        assert_eq!(planes[1][5], 1.0);
        // One cell right: weight e^-1 -> red 2 / e = 0.7358.
        assert!((planes[0][6] - 2.0 * (-1.0f32).exp()).abs() < 1e-6);
        assert!(planes[2].iter().all(|&x| x == 0.0));
    }

    #[test]
    fn hostile_splats_are_dropped_or_clamped() {
        let bad = Splat {
            pos: [f32::NAN, 0.5],
            radius: 0.1,
            color: [1.0; 3],
            amount: 1.0,
            ..Splat::default()
        };
        assert!(CellSplat::new(&bad, 64).is_none());
        let huge = Splat {
            pos: [0.5, 0.5],
            radius: 1.0e9,
            color: [1.0; 3],
            amount: 1.0,
            force: [1.0e6, -1.0e6],
            shape: SplatShape::Gaussian,
        };
        let c = CellSplat::new(&huge, 64).unwrap();
        assert_eq!(c.r, 256.0);
        assert!((c.force[0].hypot(c.force[1]) - MAX_SPEED).abs() < 1e-3);
    }
}
