//! Implicit diffusion (Stam): solve `(1 - a * laplacian) x = b`, `a = nu * dt / cell^2`, by
//! Jacobi iterations warm-started from `b`. Stable for any `a`: thick fluids stay calm.
//!
//! Boundaries: a grid's walls either hold the value at 0 (the wall faces of the velocity
//! component normal to them: no flow through walls) or are Neumann (no flux: tangential
//! velocity slips freely, dye does not leak out).

use crate::sim::grid::AlignedVec;
use multiversion::multiversion;
use rayon::prelude::*;

/// Which outer lines of a grid are fixed at 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fixed {
    /// No fixed cells (dye).
    None,
    /// First and last columns (the `u` wall faces).
    Columns,
    /// First and last rows (the `v` wall faces).
    Rows,
}

/// `iterations` Jacobi iterations of implicit diffusion on an `nx x ny` grid. `field` holds
/// `b` on entry and the solution on return; `b` and `tmp` are scratch of the same length.
#[allow(clippy::too_many_arguments)]
pub fn diffuse(
    field: &mut AlignedVec,
    b: &mut AlignedVec,
    tmp: &mut AlignedVec,
    nx: usize,
    ny: usize,
    a: f32,
    iterations: u32,
    fixed: Fixed,
) {
    if a <= 0.0 || !a.is_finite() {
        return;
    }
    b.copy_from_slice(field);
    for _ in 0..iterations {
        {
            let x: &[f32] = field;
            let bb: &[f32] = b;
            tmp.par_chunks_mut(nx)
                .with_min_len(crate::kernels::band::min_rows(nx))
                .enumerate()
                .for_each(|(j, out)| {
                    diffuse_row(x, bb, out, nx, ny, j, a, fixed);
                });
        }
        std::mem::swap(field, tmp);
    }
}

#[multiversion(targets("x86_64+avx2+fma", "aarch64+neon"))]
#[allow(clippy::too_many_arguments)]
fn diffuse_row(
    x: &[f32],
    b: &[f32],
    out: &mut [f32],
    nx: usize,
    ny: usize,
    j: usize,
    a: f32,
    fixed: Fixed,
) {
    if fixed == Fixed::Rows && (j == 0 || j + 1 == ny) {
        out.fill(0.0);
        return;
    }
    let row = &x[j * nx..(j + 1) * nx];
    let brow = &b[j * nx..(j + 1) * nx];
    let generic = |i: usize| -> f32 {
        let mut sum = 0.0;
        let mut n = 0.0;
        if i > 0 {
            sum += row[i - 1];
            n += 1.0;
        }
        if i + 1 < nx {
            sum += row[i + 1];
            n += 1.0;
        }
        if j > 0 {
            sum += x[(j - 1) * nx + i];
            n += 1.0;
        }
        if j + 1 < ny {
            sum += x[(j + 1) * nx + i];
            n += 1.0;
        }
        a.mul_add(sum, brow[i]) / a.mul_add(n, 1.0)
    };
    if j == 0 || j + 1 == ny || nx < 3 {
        for (i, o) in out.iter_mut().enumerate() {
            *o = generic(i);
        }
    } else {
        out[0] = generic(0);
        out[nx - 1] = generic(nx - 1);
        let dn = &x[(j - 1) * nx + 1..j * nx - 1];
        let up = &x[(j + 1) * nx + 1..(j + 2) * nx - 1];
        let left = &row[..nx - 2];
        let right = &row[2..];
        let bi = &brow[1..nx - 1];
        let inv = 1.0 / a.mul_add(4.0, 1.0);
        for (k, o) in out[1..nx - 1].iter_mut().enumerate() {
            *o = a.mul_add((left[k] + right[k]) + (dn[k] + up[k]), bi[k]) * inv;
        }
    }
    if fixed == Fixed::Columns {
        out[0] = 0.0;
        out[nx - 1] = 0.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_answer_two_cells() {
        // Two cells, Neumann: (1 + a) x0 - a x1 = b0 and symmetric. With a = 1, b = [2, 0]:
        // x0 + x1 = 2 (conserved) and x0 - x1 = 2 / 3, so x = [4/3, 2/3].
        let mut f = AlignedVec::from_slice(&[2.0, 0.0]);
        let mut b = AlignedVec::zeros(2);
        let mut t = AlignedVec::zeros(2);
        diffuse(&mut f, &mut b, &mut t, 2, 1, 1.0, 60, Fixed::None);
        assert!(
            (f[0] - 4.0 / 3.0).abs() < 1e-5 && (f[1] - 2.0 / 3.0).abs() < 1e-5,
            "{:?}",
            &f[..]
        );
    }

    #[test]
    fn fixed_columns_stay_zero_and_total_is_kept_with_neumann() {
        let mut data = vec![0.0; 5 * 4];
        data[7] = 10.0;
        data[0] = 3.0;
        let mut f = AlignedVec::from_slice(&data);
        let mut b = AlignedVec::zeros(20);
        let mut t = AlignedVec::zeros(20);
        diffuse(&mut f, &mut b, &mut t, 5, 4, 0.7, 200, Fixed::None);
        let total: f32 = f.iter().sum();
        assert!((total - 13.0).abs() < 1e-4, "{total}");
        let mut f = AlignedVec::from_slice(&data);
        diffuse(&mut f, &mut b, &mut t, 5, 4, 0.7, 20, Fixed::Columns);
        for j in 0..4 {
            assert_eq!(f[j * 5], 0.0);
            assert_eq!(f[j * 5 + 4], 0.0);
        }
    }
}
