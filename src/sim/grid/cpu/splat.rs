//! Splats: add dye and momentum with a Gaussian (or block) footprint.
//!
//! A splat adds `force * weight` to the velocity faces and `color * amount * weight` to the
//! dye cells, where weight is `exp(-d^2 / r^2)` (Gaussian, cut at 3.5 r where it is below 5e-6)
//! or 1 inside the square of half-side r (block). Several splats apply in order, row by row in
//! parallel; each row sees them in the same order, so the result is thread-count independent.

use crate::sim::grid::physics::CellSplat;
use crate::sim::{MAX_DYE, MAX_HEAT, MAX_SPEED};
use rayon::prelude::*;

/// One splat's samples along x: the first sample within reach, and per sample its offset from
/// the centre and its weight along x. The weight is separable, so these are computed once per
/// step; a row then costs a multiply, a compare and a fused add per sample (no exponential).
struct Span {
    lo: usize,
    dx: Vec<f32>,
    wx: Vec<f32>,
}

impl Span {
    /// The samples `i` in `[first, n)` at `x = (i + offset) / scale` cells that `s` reaches.
    fn new(s: &CellSplat, first: usize, n: usize, offset: f32, scale: usize) -> Self {
        let (scale, inv) = (scale as f32, 1.0 / scale as f32);
        let lo = ((s.x - s.reach) * scale - offset).ceil().max(0.0);
        let hi = ((s.x + s.reach) * scale - offset).floor() + 1.0;
        let hi = hi.clamp(0.0, n as f32) as usize;
        let lo = (lo.min(n as f32) as usize).max(first).min(hi);
        let dx: Vec<f32> = (lo..hi).map(|i| (i as f32 + offset) * inv - s.x).collect();
        let wx = dx.iter().map(|&d| s.axis_weight(d)).collect();
        Self { lo, dx, wx }
    }

    /// Spans of `splats` (empty for those `wanted` leaves out).
    fn all(
        splats: &[CellSplat],
        wanted: impl Fn(&CellSplat) -> bool,
        first: usize,
        n: usize,
        offset: f32,
        scale: usize,
    ) -> Vec<Self> {
        splats
            .iter()
            .map(|s| {
                if wanted(s) {
                    Self::new(s, first, n, offset, scale)
                } else {
                    Self {
                        lo: 0,
                        dx: Vec::new(),
                        wx: Vec::new(),
                    }
                }
            })
            .collect()
    }
}

// The row loops are kernels: compiled without FMA, every `mul_add` was a libm call.
kernel! {
/// Add the pushes of `splats` along `axis` to one row of faces at height `y` (cells).
fn splat_face_row(splats: &[CellSplat], spans: &[Span], axis: usize, y: f32, row: &mut [f32]) {
    for (s, span) in splats.iter().zip(spans) {
        if s.force[axis] == 0.0 || !s.touches_row(y) || span.dx.is_empty() {
            continue;
        }
        let dy = y - s.y;
        let (wy, dy2, cut2) = (s.axis_weight(dy), dy * dy, s.cutoff2());
        // The v push depends on the row only.
        let along_y = s.push(1, dy);
        let end = (span.lo + span.dx.len()).min(row.len());
        let faces = &mut row[span.lo.min(end)..end];
        for ((x, &dx), &wx) in faces.iter_mut().zip(&span.dx).zip(&span.wx) {
            // Branch-free, so it vectorises: outside the cut-off the weight is 0.
            let w = if dx.mul_add(dx, dy2) > cut2 { 0.0 } else { wx * wy };
            let push = if axis == 0 { s.push(0, dx) } else { along_y };
            *x = (*x + push * w).clamp(-MAX_SPEED, MAX_SPEED);
        }
    }
}
}

/// Apply `splats` (already converted) to the velocity faces of a `w x h` grid.
pub fn splat_velocity(splats: &[CellSplat], u: &mut [f32], v: &mut [f32], w: usize, h: usize) {
    if splats.iter().all(|s| s.force == [0.0, 0.0]) {
        return;
    }
    // u faces sit at x = i (interior faces only: the walls at 0 and w stay 0), v faces at
    // x = i + 0.5 on the interior rows 1..h.
    let spans = Span::all(splats, |s| s.force[0] != 0.0, 1, w, 0.0, 1);
    u.par_chunks_mut(w + 1)
        .with_min_len(crate::kernels::band::min_rows(w + 1))
        .enumerate()
        .for_each(|(j, row)| splat_face_row(splats, &spans, 0, j as f32 + 0.5, row));
    let spans = Span::all(splats, |s| s.force[1] != 0.0, 0, w, 0.5, 1);
    v.par_chunks_mut(w)
        .with_min_len(crate::kernels::band::min_rows(w))
        .enumerate()
        .for_each(|(j, row)| {
            if j != 0 && j != h {
                splat_face_row(splats, &spans, 1, j as f32, row);
            }
        });
}

kernel! {
/// Row `j` of the dye planes (`scale` cells per simulation cell).
fn splat_dye_row(splats: &[CellSplat], spans: &[Span], j: usize, scale: usize, rows: [&mut [f32]; 3]) {
    let [r, g, b] = rows;
    let n = r.len().min(g.len()).min(b.len());
    let y = (j as f32 + 0.5) * (1.0 / scale as f32);
    for (s, span) in splats.iter().zip(spans) {
        if s.dye == [0.0; 3] || !s.touches_row(y) || span.dx.is_empty() {
            continue;
        }
        let dy = y - s.y;
        let (wy, dy2, cut2) = (s.axis_weight(dy), dy * dy, s.cutoff2());
        let [dr, dg, db] = s.dye;
        let end = (span.lo + span.dx.len()).min(n);
        let lo = span.lo.min(end);
        let cells = r[lo..end].iter_mut().zip(&mut g[lo..end]).zip(&mut b[lo..end]);
        for (((r, g), b), (&dx, &wx)) in cells.zip(span.dx.iter().zip(&span.wx)) {
            // Branch-free, so it vectorises: outside the cut-off the weight is 0.
            let w = if dx.mul_add(dx, dy2) > cut2 { 0.0 } else { wx * wy };
            *r = dr.mul_add(w, *r).min(MAX_DYE);
            *g = dg.mul_add(w, *g).min(MAX_DYE);
            *b = db.mul_add(w, *b).min(MAX_DYE);
        }
    }
}
}

/// Apply `splats` to the dye planes of a grid `scale` times finer than the simulation.
pub fn splat_dye(splats: &[CellSplat], dye: [&mut [f32]; 3], dw: usize, scale: usize) {
    if splats.iter().all(|s| s.dye == [0.0; 3]) {
        return;
    }
    // Dye cell i sits at x = (i + 0.5) / scale simulation cells.
    let spans = Span::all(splats, |s| s.dye != [0.0; 3], 0, dw, 0.5, scale);
    let [r, g, b] = dye;
    r.par_chunks_mut(dw)
        .zip(g.par_chunks_mut(dw))
        .zip(b.par_chunks_mut(dw))
        .with_min_len(crate::kernels::band::min_rows(dw))
        .enumerate()
        .for_each(|(j, ((r, g), b))| splat_dye_row(splats, &spans, j, scale, [r, g, b]));
}

kernel! {
/// Row `j` of the temperature (the simulation's cells).
fn splat_heat_row(splats: &[CellSplat], spans: &[Span], j: usize, row: &mut [f32]) {
    let y = j as f32 + 0.5;
    for (s, span) in splats.iter().zip(spans) {
        if s.heat == 0.0 || !s.touches_row(y) || span.dx.is_empty() {
            continue;
        }
        let dy = y - s.y;
        let (wy, dy2, cut2) = (s.axis_weight(dy), dy * dy, s.cutoff2());
        let end = (span.lo + span.dx.len()).min(row.len());
        let cells = &mut row[span.lo.min(end)..end];
        for ((t, &dx), &wx) in cells.iter_mut().zip(&span.dx).zip(&span.wx) {
            // Branch-free, so it vectorises: outside the cut-off the weight is 0.
            let w = if dx.mul_add(dx, dy2) > cut2 { 0.0 } else { wx * wy };
            *t = s.heat.mul_add(w, *t).clamp(-MAX_HEAT, MAX_HEAT);
        }
    }
}
}

/// Apply the heat of `splats` to the temperature, one value per simulation cell (`w` wide),
/// with the dye's footprint.
pub fn splat_heat(splats: &[CellSplat], heat: &mut [f32], w: usize) {
    if splats.iter().all(|s| s.heat == 0.0) {
        return;
    }
    let spans = Span::all(splats, |s| s.heat != 0.0, 0, w, 0.5, 1);
    heat.par_chunks_mut(w)
        .with_min_len(crate::kernels::band::min_rows(w))
        .enumerate()
        .for_each(|(j, row)| splat_heat_row(splats, &spans, j, row));
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
            heat: 0.0,
            particles: 0.0,
            depth: 0.0,
            drum: Default::default(),
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

    /// The rows (spans computed once per step) against the weight evaluated cell by cell,
    /// for every shape, on faces and on a dye grid finer than the simulation, with splats
    /// that hang over the edges.
    #[test]
    fn rows_match_the_weight_cell_by_cell() {
        let (w, h, scale) = (23, 17, 3);
        let shapes = [SplatShape::Gaussian, SplatShape::Block, SplatShape::Radial];
        let splats: Vec<CellSplat> = (0..9)
            .map(|k| {
                let s = Splat {
                    pos: [0.11 * k as f32 + 0.02, 0.9 - 0.1 * k as f32],
                    radius: 0.03 + 0.02 * k as f32,
                    color: [0.3, 0.2, 0.1 * k as f32],
                    amount: 1.5,
                    force: [1.0 - 0.3 * k as f32, 0.7],
                    shape: shapes[k % 3],
                    heat: 0.0,
                    particles: 0.0,
                    depth: 0.0,
                    drum: Default::default(),
                };
                CellSplat::new(&s, h).unwrap()
            })
            .collect();
        let mut u = vec![0.0; (w + 1) * h];
        let mut v = vec![0.0; w * (h + 1)];
        splat_velocity(&splats, &mut u, &mut v, w, h);
        let (dw, dh) = (w * scale, h * scale);
        let mut planes = [vec![0.0; dw * dh], vec![0.0; dw * dh], vec![0.0; dw * dh]];
        let [r, g, b] = &mut planes;
        splat_dye(&splats, [r, g, b], dw, scale);

        let close = |got: f32, want: f32| (got - want).abs() <= 1e-6 * (1.0 + want.abs());
        for j in 0..h {
            for i in 0..=w {
                let y = j as f32 + 0.5;
                let mut want = 0.0f32;
                if i != 0 && i != w {
                    for s in &splats {
                        let (dx, dy) = (i as f32 - s.x, y - s.y);
                        if s.touches_row(y) && dx.abs() <= s.reach {
                            let add = s.push(0, dx) * s.weight(dx, dy);
                            want = (want + add).clamp(-MAX_SPEED, MAX_SPEED);
                        }
                    }
                }
                assert!(close(u[j * (w + 1) + i], want), "u ({i}, {j})");
            }
        }
        for j in 0..=h {
            for i in 0..w {
                let y = j as f32;
                let mut want = 0.0f32;
                if j != 0 && j != h {
                    for s in &splats {
                        let (dx, dy) = (i as f32 + 0.5 - s.x, y - s.y);
                        if s.touches_row(y) && dx.abs() <= s.reach {
                            let add = s.push(1, dy) * s.weight(dx, dy);
                            want = (want + add).clamp(-MAX_SPEED, MAX_SPEED);
                        }
                    }
                }
                assert!(close(v[j * w + i], want), "v ({i}, {j})");
            }
        }
        let inv = 1.0 / scale as f32;
        for j in 0..dh {
            for i in 0..dw {
                let (x, y) = ((i as f32 + 0.5) * inv, (j as f32 + 0.5) * inv);
                for (c, plane) in planes.iter().enumerate() {
                    let mut want = 0.0f32;
                    for s in &splats {
                        if s.touches_row(y) && (x - s.x).abs() <= s.reach {
                            want = s.dye[c]
                                .mul_add(s.weight(x - s.x, y - s.y), want)
                                .min(MAX_DYE);
                        }
                    }
                    assert!(close(plane[j * dw + i], want), "dye {c} ({i}, {j})");
                }
            }
        }
        // Something landed in each.
        assert!(u.iter().any(|&x| x != 0.0) && v.iter().any(|&x| x != 0.0));
        assert!(planes.iter().all(|p| p.iter().any(|&x| x > 0.1)));
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
            heat: 0.0,
            particles: 0.0,
            depth: 0.0,
            drum: Default::default(),
        };
        let c = CellSplat::new(&huge, 64).unwrap();
        assert_eq!(c.r, 256.0);
        assert!((c.force[0].hypot(c.force[1]) - MAX_SPEED).abs() < 1e-3);
    }
}
