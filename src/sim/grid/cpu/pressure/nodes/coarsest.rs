//! The node multigrid's coarsest level: solved exactly (a dense inverse) where it is small,
//! else made mean-free per fluid region and relaxed.

use super::*;

kernel! {
/// `out[k] = sum_m s[(first + k) n + m] b[m]`.
fn dense_rows(out: &mut [f32], first: usize, s: &[f32], b: &[f32]) {
    let n = b.len();
    for (k, o) in out.iter_mut().enumerate() {
        let row = &s[(first + k) * n..(first + k + 1) * n];
        let mut sum = 0.0f32;
        for (x, y) in row.iter().zip(b) {
            sum = x.mul_add(*y, sum);
        }
        *o = sum;
    }
}
}

/// The coarsest level: exactly (dense), or mean-free per region and relaxed.
pub(super) fn solve_coarsest(lv: &mut Work, coarsest: &Coarsest) {
    match coarsest {
        Coarsest::Direct(s) => {
            for (x, &slot) in lv.node_b.iter_mut().zip(&lv.slot) {
                *x = lv.b[slot as usize];
            }
            let b = &lv.node_b;
            lv.node_e
                .par_chunks_mut(64)
                .enumerate()
                .for_each(|(c, out)| dense_rows(out, c * 64, s, b));
            for (&x, &slot) in lv.node_e.iter().zip(&lv.slot) {
                lv.e[slot as usize] = x;
            }
        }
        Coarsest::Sweeps(regions) => {
            let mut sums = vec![0.0f64; lv.slot.len()];
            for (&[l, _], &slot) in regions.iter().zip(&lv.slot) {
                sums[l as usize] += f64::from(lv.b[slot as usize]);
            }
            for (&[l, size], &slot) in regions.iter().zip(&lv.slot) {
                lv.b[slot as usize] -= (sums[l as usize] / f64::from(size)) as f32;
            }
            let (w, h) = (lv.w, lv.h);
            relax_omega(lv, coarsest_sweeps(w, h), COARSEST_OMEGA, Rows::All);
        }
    }
}
