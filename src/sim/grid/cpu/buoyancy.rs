//! Buoyancy and weight (the smoke model of GPU Gems ch. 38 and PixelFlow): each cell's
//! acceleration `sigma (T - T_ambient) - kappa d` along the up direction, where `T` is the
//! cell's temperature and `d` the dye density over the cell (the mean of the three channels,
//! averaged over the cell's dye cells), added to the faces between cells as the mean of the
//! two cells' accelerations times the step. The wall faces stay closed; the projection that
//! follows removes the part of the force a pressure gradient balances.

use crate::sim::{MAX_SPEED, StepInput};
use rayon::prelude::*;

kernel! {
/// Row `j` of the cells' accelerations along `up` (canvas heights/s^2).
#[allow(clippy::too_many_arguments)]
fn lift_row(heat: &[f32], dye: [&[f32]; 3], dw: usize, scale: usize, j: usize, sigma: f32, kappa: f32, ambient: f32, out: &mut [f32]) {
    let inv = 1.0 / (3 * scale * scale) as f32;
    if scale == 1 {
        // Dye at the simulation's resolution (the default): the same sums as below, as
        // slices the compiler vectorises (the general loop's inner bounds keep it scalar).
        let n = out.len();
        let row = j * dw..j * dw + n;
        let (r, g, b) = (&dye[0][row.clone()], &dye[1][row.clone()], &dye[2][row]);
        let t = &heat[..n];
        for i in 0..n {
            let d = 0.0f32 + (r[i] + g[i] + b[i]);
            out[i] = sigma.mul_add(t[i] - ambient, -kappa * (d * inv));
        }
        return;
    }
    for (i, o) in out.iter_mut().enumerate() {
        let mut d = 0.0f32;
        for dj in 0..scale {
            let row = (j * scale + dj) * dw + i * scale;
            for di in 0..scale {
                d += dye[0][row + di] + dye[1][row + di] + dye[2][row + di];
            }
        }
        *o = sigma.mul_add(heat[i] - ambient, -kappa * (d * inv));
    }
}
}

/// Each cell's acceleration along the up direction into `lift` (`w x h`): `sigma (T -
/// T_ambient) - kappa d`. `dye` is `scale` times finer than the simulation.
pub fn lift(
    heat: &[f32],
    dye: [&[f32]; 3],
    scale: usize,
    (w, h): (usize, usize),
    p: &StepInput,
    lift: &mut [f32],
) {
    let dw = w * scale;
    lift[..w * h]
        .par_chunks_mut(w)
        .with_min_len(crate::kernels::band::min_rows(w))
        .enumerate()
        .for_each(|(j, row)| {
            let t = &heat[j * w..(j + 1) * w];
            let (sigma, kappa) = (p.buoyancy, p.weight);
            lift_row(t, dye, dw, scale, j, sigma, kappa, p.ambient, row);
        });
}

kernel! {
/// Row `j` of faces of one axis: `face += k * (a + b) / 2` for the cells either side.
fn push_row(a: &[f32], b: &[f32], k: f32, faces: &mut [f32]) {
    for ((f, &a), &b) in faces.iter_mut().zip(a).zip(b) {
        *f = (0.5 * k).mul_add(a + b, *f).clamp(-MAX_SPEED, MAX_SPEED);
    }
}
}

/// Add the cells' accelerations `lift` (`w x h`) along `up` for `dt` seconds to the interior
/// faces of `u` (`(w + 1) x h`) and `v` (`w x (h + 1)`).
pub fn apply(
    lift: &[f32],
    u: &mut [f32],
    v: &mut [f32],
    (w, h): (usize, usize),
    up: [f32; 2],
    dt: f32,
) {
    if up[0] != 0.0 && w > 1 {
        let k = up[0] * dt;
        u.par_chunks_mut(w + 1)
            .with_min_len(crate::kernels::band::min_rows(w))
            .enumerate()
            .for_each(|(j, row)| {
                let cells = &lift[j * w..(j + 1) * w];
                // Face i (1..w) lies between cells i - 1 and i.
                push_row(&cells[..w - 1], &cells[1..], k, &mut row[1..w]);
            });
    }
    if up[1] != 0.0 && h > 1 {
        let k = up[1] * dt;
        v[w..w * h]
            .par_chunks_mut(w)
            .with_min_len(crate::kernels::band::min_rows(w))
            .enumerate()
            .for_each(|(j, row)| {
                // Face row j + 1 lies between cell rows j and j + 1.
                let (below, above) = (&lift[j * w..(j + 1) * w], &lift[(j + 1) * w..(j + 2) * w]);
                push_row(below, above, k, row);
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With dye at the simulation's resolution, each cell's lift is the formula's, bit for
    /// bit (the vectorised path), at row ends too.
    #[test]
    fn the_lift_of_each_cell_is_the_formula() {
        let (w, h) = (37, 5);
        let wave = |k: usize, s: usize| ((k * 7919 + s * 104_729) % 1013) as f32 / 101.3;
        let heat: Vec<f32> = (0..w * h).map(|k| wave(k, 0) - 4.0).collect();
        let dye: [Vec<f32>; 3] =
            std::array::from_fn(|c| (0..w * h).map(|k| wave(k, c + 1)).collect());
        let p = StepInput {
            buoyancy: 1.7,
            weight: 0.3,
            ambient: 0.25,
            ..StepInput::default()
        };
        let mut out = vec![f32::NAN; w * h];
        lift(&heat, [&dye[0], &dye[1], &dye[2]], 1, (w, h), &p, &mut out);
        for k in 0..w * h {
            let d = 0.0f32 + (dye[0][k] + dye[1][k] + dye[2][k]);
            let want = p
                .buoyancy
                .mul_add(heat[k] - p.ambient, -p.weight * (d * (1.0 / 3.0)));
            assert_eq!(out[k].to_bits(), want.to_bits(), "cell {k}");
        }
    }
}
