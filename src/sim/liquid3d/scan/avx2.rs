//! AVX2 version of the neighbour scan's gathering of hits (`super::hits`): eight candidates at
//! a time, their squared distances computed as the portable loop computes them (the same
//! operations in the same order, no fused multiply-add, so the same bits), the ones in reach
//! packed to the front of the group by a lane permute picked from a table by the group's mask,
//! and stored at once.

use super::{HITS, Hits, LANES};
use std::arch::x86_64::*;

/// Whether the CPU has AVX2 (cached by std after the first call).
#[inline]
pub(super) fn available() -> bool {
    is_x86_feature_detected!("avx2")
}

/// For each 8-bit mask, the lanes whose bit is set, first to last, then zeros.
const PACK: [[u32; 8]; 256] = {
    let mut table = [[0u32; 8]; 256];
    let mut mask = 0;
    while mask < 256 {
        let mut n = 0;
        let mut lane = 0;
        while lane < 8 {
            if mask & (1 << lane) != 0 {
                table[mask][n] = lane as u32;
                n += 1;
            }
            lane += 1;
        }
        mask += 1;
    }
    table
};

/// `super::hits` eight candidates at a time: the same hits in the same order; returns how
/// many, [`HITS`] or more once the cap's worth is in.
///
/// # Safety
/// AVX2 must be available; every run's end plus [`LANES`] must lie within each of `axes`;
/// `stage` holds at least `HITS + LANES` values per array (it holds `STAGE`).
#[target_feature(enable = "avx2")]
pub(super) unsafe fn hits(
    p: [f32; 3],
    runs: &[(u32, u32)],
    axes: &[Vec<f32>; 3],
    h2: f32,
    stage: &mut Hits,
) -> usize {
    let [px, py, pz] = p.map(|c| _mm256_set1_ps(c));
    let reach = _mm256_set1_ps(h2);
    let lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    let (xs, ys, zs) = (axes[0].as_ptr(), axes[1].as_ptr(), axes[2].as_ptr());
    let (idx, dist) = (stage.idx.as_mut_ptr(), stage.dist.as_mut_ptr());
    let mut count = 0usize;
    for &(lo, hi) in runs {
        let (lo, hi) = (lo as usize, hi as usize);
        let mut base = lo;
        while base < hi {
            // SAFETY: `base < hi` and the axes hold LANES past every run's end; `count` is
            // below HITS here, and the stage holds HITS + LANES.
            unsafe {
                let dx = _mm256_sub_ps(_mm256_loadu_ps(xs.add(base)), px);
                let dy = _mm256_sub_ps(_mm256_loadu_ps(ys.add(base)), py);
                let dz = _mm256_sub_ps(_mm256_loadu_ps(zs.add(base)), pz);
                let r2 = _mm256_add_ps(
                    _mm256_add_ps(_mm256_mul_ps(dx, dx), _mm256_mul_ps(dy, dy)),
                    _mm256_mul_ps(dz, dz),
                );
                let mut mask = _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_LT_OQ>(r2, reach)) as u32;
                // The group's candidates past the run belong to other cells.
                if hi - base < LANES {
                    mask &= (1u32 << (hi - base)) - 1;
                }
                let order = _mm256_loadu_si256(PACK[mask as usize].as_ptr().cast());
                let packed = _mm256_permutevar8x32_ps(r2, order);
                let which = _mm256_add_epi32(
                    _mm256_permutevar8x32_epi32(lanes, order),
                    _mm256_set1_epi32(base as i32),
                );
                _mm256_storeu_ps(dist.add(count), packed);
                _mm256_storeu_si256(idx.add(count).cast(), which);
                count += mask.count_ones() as usize;
                if count >= HITS {
                    return count;
                }
            }
            base += LANES;
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::super::{Hits, LANES, hits as portable};
    use crate::sim::particles::hash::{Grid, reorder};

    /// The same hits, in the same order, as the portable scan: a random cloud (with a pile
    /// past the neighbour cap, and points outside the tank) around every one of its points.
    #[test]
    fn the_avx2_scan_finds_what_the_portable_one_finds() {
        if !super::available() {
            eprintln!("no AVX2 on this CPU: nothing to compare");
            return;
        }
        let mut seed = 11u32;
        let mut next = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1u32 << 24) as f32
        };
        let mut points: Vec<[f32; 3]> = (0..3000)
            .map(|_| [next() * 1.1 - 0.05, next() * 0.6, next() * 0.8])
            .collect();
        points.extend((0..300).map(|_| [0.5 + 0.01 * next(), 0.3, 0.4 + 0.01 * next()]));
        let mut grid = Grid::new([1.0, 0.6, 0.8], 0.12);
        grid.sort(&points);
        let mut sorted = Vec::new();
        reorder(&points, &grid.order, &mut sorted);
        let axes: [Vec<f32>; 3] = [0, 1, 2].map(|c| {
            let mut axis: Vec<f32> = sorted.iter().map(|p| p[c]).collect();
            axis.extend([f32::INFINITY; LANES]);
            axis
        });
        let (mut a, mut b) = (Hits::default(), Hits::default());
        let mut capped = 0;
        for &p in &sorted {
            let (rows, count) = grid.rows_around(p);
            let h2 = 0.12f32 * 0.12;
            let n = portable(p, &rows[..count], &axes, h2, &mut a).min(super::HITS);
            // SAFETY: AVX2 is there, the axes are padded, the stage is whole.
            let m = unsafe { super::hits(p, &rows[..count], &axes, h2, &mut b) }.min(super::HITS);
            assert_eq!(n, m, "at {p:?}");
            assert_eq!(a.idx[..n], b.idx[..n]);
            assert!(
                a.dist[..n]
                    .iter()
                    .zip(&b.dist[..n])
                    .all(|(x, y)| x.to_bits() == y.to_bits())
            );
            capped += usize::from(n == super::HITS);
        }
        assert!(capped > 100, "the pile should reach the cap: {capped}");
    }
}
