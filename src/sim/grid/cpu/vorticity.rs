//! Vorticity confinement (Fedkiw, Stam and Jensen 2001): push along `N x w`, where `N` points
//! up the gradient of |w|, to restore the small curls that the grid's numerical diffusion
//! smooths away. Cell force `f = eps * VORTICITY_SCALE_PER_S * cell * (N x w)`, applied to the
//! faces as the mean of the two adjacent cells' forces, times dt. Walls are untouched.

use crate::kernels::math::limit;
use crate::sim::MAX_SPEED;
use crate::sim::grid::physics::VORTICITY_SCALE_PER_S;
use rayon::prelude::*;

kernel! {
/// Confinement force of row `j` (per unit epsilon and scale), into `fx`, `fy`.
#[allow(clippy::too_many_arguments)]
fn force_row(
    c: &[f32],
    c_dn: &[f32],
    c_up: &[f32],
    dy_cells: f32,
    fx: &mut [f32],
    fy: &mut [f32],
    cell: f32,
) {
    let w = c.len();
    let (c_dn, c_up, fx, fy) = (&c_dn[..w], &c_up[..w], &mut fx[..w], &mut fy[..w]);
    let gy_scale = if dy_cells > 0.0 { 1.0 / dy_cells } else { 0.0 };
    // Gradient of |w| in cells (the normalisation makes the units irrelevant); one-sided at
    // the side walls.
    let gx_at = |i: usize| -> f32 {
        let (il, ir) = (i.saturating_sub(1), (i + 1).min(w - 1));
        if ir > il { (c[ir].abs() - c[il].abs()) / (ir - il) as f32 } else { 0.0 }
    };
    let force = |gx: f32, gy: f32, om: f32| -> (f32, f32) {
        let len2 = gx.mul_add(gx, gy * gy);
        let inv = if len2 > 1.0e-30 { 1.0 / len2.sqrt() } else { 0.0 };
        let om = om * cell;
        (gy * inv * om, -(gx * inv) * om)
    };
    for i in [0, w - 1] {
        let gy = (c_up[i].abs() - c_dn[i].abs()) * gy_scale;
        (fx[i], fy[i]) = force(gx_at(i), gy, c[i]);
    }
    for i in 1..w.saturating_sub(1) {
        let gx = 0.5 * (c[i + 1].abs() - c[i - 1].abs());
        let gy = (c_up[i].abs() - c_dn[i].abs()) * gy_scale;
        (fx[i], fy[i]) = force(gx, gy, c[i]);
    }
}
}

kernel! {
fn apply_u_row(row: &mut [f32], fx: &[f32], k: f32) {
    for i in 1..fx.len() {
        let f = 0.5 * (fx[i - 1] + fx[i]);
        row[i] = limit(k.mul_add(f, row[i]), -MAX_SPEED, MAX_SPEED);
    }
}
}

kernel! {
fn apply_v_row(row: &mut [f32], fy_dn: &[f32], fy_up: &[f32], k: f32) {
    for i in 0..row.len() {
        let f = 0.5 * (fy_dn[i] + fy_up[i]);
        row[i] = limit(k.mul_add(f, row[i]), -MAX_SPEED, MAX_SPEED);
    }
}
}

/// Add `dt * eps * scale * f` to the interior faces. `fx_buf`, `fy_buf` are scratch of at
/// least `w * h` values.
#[allow(clippy::too_many_arguments)]
pub fn confine(
    curl: &[f32],
    u: &mut [f32],
    v: &mut [f32],
    fx_buf: &mut [f32],
    fy_buf: &mut [f32],
    w: usize,
    h: usize,
    eps: f32,
    dt: f32,
) {
    let cell = 1.0 / h as f32;
    let fx = &mut fx_buf[..w * h];
    let fy = &mut fy_buf[..w * h];
    fx.par_chunks_mut(w)
        .zip(fy.par_chunks_mut(w))
        .with_min_len(crate::kernels::band::min_rows(w))
        .enumerate()
        .for_each(|(j, (fx, fy))| {
            let (jd, ju) = (j.saturating_sub(1), (j + 1).min(h - 1));
            let row = |r: usize| &curl[r * w..(r + 1) * w];
            force_row(row(j), row(jd), row(ju), (ju - jd) as f32, fx, fy, cell);
        });
    let (fx, fy) = (&*fx, &*fy);
    let k = dt * eps * VORTICITY_SCALE_PER_S;
    u.par_chunks_mut(w + 1)
        .with_min_len(crate::kernels::band::min_rows(w + 1))
        .enumerate()
        .for_each(|(j, row)| apply_u_row(row, &fx[j * w..(j + 1) * w], k));
    v.par_chunks_mut(w)
        .with_min_len(crate::kernels::band::min_rows(w))
        .enumerate()
        .for_each(|(j, row)| {
            if j > 0 && j < h {
                apply_v_row(row, &fy[(j - 1) * w..j * w], &fy[j * w..(j + 1) * w], k);
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn force_points_along_n_cross_omega() {
        // |w| grows to the right (N = +x) with w = 2 at the centre of a 3x3 grid:
        // N x w = (0, -w), so fy = -1 * 2 * (1/3).
        let curl: Vec<f32> = (0..9).map(|c| 1.0 + (c % 3) as f32).collect();
        let (mut fx, mut fy) = (vec![0.0; 3], vec![0.0; 3]);
        force_row(
            &curl[3..6],
            &curl[0..3],
            &curl[6..9],
            2.0,
            &mut fx,
            &mut fy,
            1.0 / 3.0,
        );
        assert_eq!(fx[1], 0.0);
        assert!((fy[1] + 2.0 / 3.0).abs() < 1e-6);
    }
}
