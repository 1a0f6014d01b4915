//! Flux divergence of the MAC velocity at cell centres: `D = u_right - u_left + v_top -
//! v_bottom` (velocity units; `h * div u`). Written in checkerboard layout for the pressure
//! solve, with its RMS, max and sum for the step statistics and the solvability fix.

use super::pressure::Split;
use rayon::prelude::*;

/// Per-row partial norms.
#[derive(Clone, Copy, Default)]
struct Partial {
    sum: f64,
    sum_sq: f64,
    max: f32,
}

/// Norms of a divergence field.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Norms {
    /// Root mean square.
    pub rms: f32,
    /// Largest magnitude.
    pub max: f32,
    /// Mean (nonzero only through rounding when nothing crosses the walls).
    pub mean: f32,
}

/// Reduce per-row partials in row order, so the result does not depend on the thread count.
fn reduce(rows: &[Partial], cells: usize) -> Norms {
    let mut t = Partial::default();
    for r in rows {
        t.sum += r.sum;
        t.sum_sq += r.sum_sq;
        t.max = t.max.max(r.max);
    }
    let n = cells.max(1) as f64;
    Norms {
        rms: (t.sum_sq / n).sqrt() as f32,
        max: t.max,
        mean: (t.sum / n) as f32,
    }
}

kernel! {
/// Divergence of row `j` into `d` (natural order), returning its partial norms.
fn divergence_row(urow: &[f32], vb: &[f32], vt: &[f32], d: &mut [f32]) -> (f64, f64, f32) {
    let w = d.len();
    let (urow, vb, vt) = (&urow[..w + 1], &vb[..w], &vt[..w]);
    for i in 0..w {
        d[i] = (urow[i + 1] - urow[i]) + (vt[i] - vb[i]);
    }
    let n = super::reduce::row_norms(d);
    (n.sum, n.sum_sq, n.max_abs)
}
}

kernel! {
/// Split a natural row into the red and black plane rows, negated (`b = -D`).
fn deinterleave_neg_row(d: &[f32], red: &mut [f32], black: &mut [f32], odd: bool) {
    let (first, second) = if odd { (black, red) } else { (red, black) };
    let w = d.len();
    for k in 0..w / 2 {
        first[k] = -d[2 * k];
        second[k] = -d[2 * k + 1];
    }
    if w % 2 == 1 {
        first[w / 2] = -d[w - 1];
    }
}
}

/// Write `b = -D` (the pressure right-hand side) and return the norms of `D`. `d` is scratch
/// of `w * h` values that receives `D` in natural layout.
pub fn divergence_rhs(
    u: &[f32],
    v: &[f32],
    w: usize,
    h: usize,
    d: &mut [f32],
    b: &mut Split,
) -> Norms {
    let hw = b.hw;
    let [red, black] = &mut b.planes;
    let rows: Vec<Partial> = red
        .par_chunks_mut(hw)
        .zip(black.par_chunks_mut(hw))
        .zip(d[..w * h].par_chunks_mut(w))
        .with_min_len(crate::kernels::band::min_rows(w))
        .enumerate()
        .map(|(j, ((red_row, black_row), drow))| {
            let urow = &u[j * (w + 1)..(j + 1) * (w + 1)];
            let vb = &v[j * w..(j + 1) * w];
            let vt = &v[(j + 1) * w..(j + 2) * w];
            let (sum, sum_sq, max) = divergence_row(urow, vb, vt, drow);
            deinterleave_neg_row(drow, red_row, black_row, j & 1 == 1);
            Partial { sum, sum_sq, max }
        })
        .collect();
    reduce(&rows, w * h)
}

/// The norms of the divergence, without keeping it (`d` is scratch of `w * h` values).
pub fn divergence_norms(u: &[f32], v: &[f32], w: usize, h: usize, d: &mut [f32]) -> Norms {
    let rows: Vec<Partial> = d[..w * h]
        .par_chunks_mut(w)
        .with_min_len(crate::kernels::band::min_rows(w))
        .enumerate()
        .map(|(j, drow)| {
            let urow = &u[j * (w + 1)..(j + 1) * (w + 1)];
            let (sum, sum_sq, max) = divergence_row(
                urow,
                &v[j * w..(j + 1) * w],
                &v[(j + 1) * w..(j + 2) * w],
                drow,
            );
            Partial { sum, sum_sq, max }
        })
        .collect();
    reduce(&rows, w * h)
}

/// How compressible the velocity is: the RMS divergence over the RMS face velocity (0 for a
/// divergence-free field; `d` is scratch of `w * h` values).
pub fn compressibility(u: &[f32], v: &[f32], w: usize, h: usize, d: &mut [f32]) -> f32 {
    let rows: Vec<(f64, f64)> = d[..w * h]
        .par_chunks_mut(w)
        .with_min_len(crate::kernels::band::min_rows(w))
        .enumerate()
        .map(|(j, drow)| {
            let urow = &u[j * (w + 1)..(j + 1) * (w + 1)];
            let (_, div_sq, _) = divergence_row(
                urow,
                &v[j * w..(j + 1) * w],
                &v[(j + 1) * w..(j + 2) * w],
                drow,
            );
            let flow_sq = super::reduce::row_norms(urow).sum_sq
                + super::reduce::row_norms(&v[j * w..(j + 1) * w]).sum_sq;
            (div_sq, flow_sq)
        })
        .collect();
    let (div_sq, flow_sq) = rows
        .iter()
        .fold((0.0, 0.0), |(a, b), &(x, y)| (a + x, b + y));
    let div_rms = (div_sq / (w * h).max(1) as f64).sqrt();
    let flow_rms = (flow_sq / ((w + 1) * h + w * h).max(1) as f64).sqrt();
    if flow_rms > 0.0 {
        (div_rms / flow_rms) as f32
    } else {
        0.0
    }
}

/// The divergence in natural layout (tests and parity checks).
pub fn divergence_field(u: &[f32], v: &[f32], w: usize, h: usize) -> Vec<f32> {
    (0..w * h)
        .map(|c| {
            let (i, j) = (c % w, c / w);
            (u[j * (w + 1) + i + 1] - u[j * (w + 1) + i]) + (v[(j + 1) * w + i] - v[j * w + i])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_answer() {
        // 1x1 grid: u faces [0, 2], v faces [0, 3] -> D = 2 - 0 + 3 - 0 = 5.
        let u = [0.0, 2.0];
        let v = [0.0, 3.0];
        assert_eq!(divergence_field(&u, &v, 1, 1), vec![5.0]);
        let mut b = Split::zeros(1, 1);
        let n = divergence_rhs(&u, &v, 1, 1, &mut [0.0], &mut b);
        assert_eq!((n.rms, n.max, n.mean), (5.0, 5.0, 5.0));
        assert_eq!(b.get(0, 0), -5.0);
        assert_eq!(divergence_norms(&u, &v, 1, 1, &mut [0.0]), n);
    }

    #[test]
    fn split_and_natural_agree() {
        let (w, h) = (5, 4);
        let u: Vec<f32> = (0..(w + 1) * h).map(|x| (x * 37 % 13) as f32).collect();
        let v: Vec<f32> = (0..w * (h + 1)).map(|x| (x * 17 % 7) as f32).collect();
        let mut b = Split::zeros(w, h);
        let mut d = vec![0.0; w * h];
        divergence_rhs(&u, &v, w, h, &mut d, &mut b);
        assert_eq!(d, divergence_field(&u, &v, w, h));
        let nat = divergence_field(&u, &v, w, h);
        let neg: Vec<f32> = b.to_natural().iter().map(|x| -x).collect();
        assert_eq!(neg, nat);
    }
}
