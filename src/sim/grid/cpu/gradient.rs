//! Gradient subtraction: make the velocity divergence-free with the solved pressure,
//! `u_face -= q_right - q_left` on every interior face. Wall faces are never touched, so they
//! stay exactly 0: nothing flows through the walls. The result is held to the speed limit,
//! which only ever binds on hostile input.

use crate::kernels::math::limit;
use crate::sim::MAX_SPEED;
use rayon::prelude::*;

kernel! {
fn subtract_u_row(row: &mut [f32], q: &[f32]) {
    for i in 1..q.len() {
        row[i] = limit(row[i] - (q[i] - q[i - 1]), -MAX_SPEED, MAX_SPEED);
    }
}
}

kernel! {
fn subtract_v_row(row: &mut [f32], q_dn: &[f32], q_up: &[f32]) {
    for i in 0..row.len() {
        row[i] = limit(row[i] - (q_up[i] - q_dn[i]), -MAX_SPEED, MAX_SPEED);
    }
}
}

/// Subtract the gradient of `q` (natural layout, `w x h`) from the interior faces.
pub fn subtract_gradient(u: &mut [f32], v: &mut [f32], q: &[f32], w: usize, h: usize) {
    u.par_chunks_mut(w + 1)
        .with_min_len(crate::kernels::band::min_rows(w + 1))
        .enumerate()
        .for_each(|(j, row)| subtract_u_row(row, &q[j * w..(j + 1) * w]));
    v.par_chunks_mut(w)
        .with_min_len(crate::kernels::band::min_rows(w))
        .enumerate()
        .for_each(|(j, row)| {
            if j > 0 && j < h {
                subtract_v_row(row, &q[(j - 1) * w..j * w], &q[j * w..(j + 1) * w]);
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_answer_and_walls_untouched() {
        // 2x1 grid, q = [0, 1]: the middle u face drops by 1 - 0 = 1; wall faces stay.
        let mut u = vec![0.0, 5.0, 0.0];
        let mut v = vec![0.0; 4];
        subtract_gradient(&mut u, &mut v, &[0.0, 1.0], 2, 1);
        assert_eq!(u, vec![0.0, 4.0, 0.0]);
        assert_eq!(v, vec![0.0; 4]);
    }
}
