//! Buoyancy and weight (the smoke model of GPU Gems ch. 38 and PixelFlow): each cell's
//! acceleration `sigma (T - T_ambient) - kappa d` along the up direction, where `T` is the
//! cell's temperature and `d` the dye density over the cell (the mean of the three channels,
//! averaged over the cell's dye cells), added to the faces between cells as the mean of the
//! two cells' accelerations times the step. The wall faces stay closed; the projection that
//! follows removes the part of the force a pressure gradient balances.

use crate::sim::{MAX_SPEED, StepParams};
use rayon::prelude::*;

kernel! {
/// Row `j` of the cells' accelerations along `up` (canvas heights/s^2).
#[allow(clippy::too_many_arguments)]
fn lift_row(heat: &[f32], dye: [&[f32]; 3], dw: usize, scale: usize, j: usize, sigma: f32, kappa: f32, ambient: f32, out: &mut [f32]) {
    let inv = 1.0 / (3 * scale * scale) as f32;
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
    p: &StepParams,
    lift: &mut [f32],
) {
    let dw = w * scale;
    lift[..w * h]
        .par_chunks_mut(w)
        .with_min_len(super::band::min_rows(w))
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
            .with_min_len(super::band::min_rows(w))
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
            .with_min_len(super::band::min_rows(w))
            .enumerate()
            .for_each(|(j, row)| {
                // Face row j + 1 lies between cell rows j and j + 1.
                let (below, above) = (&lift[j * w..(j + 1) * w], &lift[(j + 1) * w..(j + 2) * w]);
                push_row(below, above, k, row);
            });
    }
}
