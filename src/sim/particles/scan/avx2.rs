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
pub(super) unsafe fn hits<const D: usize>(
    p: [f32; D],
    runs: &[(u32, u32)],
    axes: &[Vec<f32>; D],
    h2: f32,
    stage: &mut Hits,
) -> usize {
    let ps = p.map(|c| _mm256_set1_ps(c));
    let reach = _mm256_set1_ps(h2);
    let lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    let columns: [*const f32; D] = std::array::from_fn(|c| axes[c].as_ptr());
    let (idx, dist) = (stage.idx.as_mut_ptr(), stage.dist.as_mut_ptr());
    let mut count = 0usize;
    for &(lo, hi) in runs {
        let (lo, hi) = (lo as usize, hi as usize);
        let mut base = lo;
        while base < hi {
            // SAFETY: `base < hi` and the axes hold LANES past every run's end; `count` is
            // below HITS here, and the stage holds HITS + LANES.
            unsafe {
                // `dx² + dy² (+ dz²)`, folded from the first term as the portable loop.
                let d = _mm256_sub_ps(_mm256_loadu_ps(columns[0].add(base)), ps[0]);
                let mut r2 = _mm256_mul_ps(d, d);
                for c in 1..D {
                    let d = _mm256_sub_ps(_mm256_loadu_ps(columns[c].add(base)), ps[c]);
                    r2 = _mm256_add_ps(r2, _mm256_mul_ps(d, d));
                }
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
    /// past the neighbour cap, and points outside the container) around every one of its
    /// points, in two and in three dimensions.
    fn same_hits<const D: usize>(size: [f32; D], h: f32) {
        let mut seed = 11u32;
        let mut next = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1u32 << 24) as f32
        };
        let mut points: Vec<[f32; D]> = (0..3000)
            .map(|_| std::array::from_fn(|c| (next() * 1.1 - 0.05) * size[c]))
            .collect();
        let mid: [f32; D] = size.map(|s| 0.5 * s);
        points.extend((0..300).map(|_| std::array::from_fn(|c| mid[c] + 0.01 * h * next())));
        let mut grid = Grid::new(size, h);
        grid.sort(&points);
        let mut sorted = Vec::new();
        reorder(&points, &grid.order, &mut sorted);
        let axes: [Vec<f32>; D] = std::array::from_fn(|c| {
            let mut axis: Vec<f32> = sorted.iter().map(|p| p[c]).collect();
            axis.extend([f32::INFINITY; LANES]);
            axis
        });
        let (mut a, mut b) = (Hits::default(), Hits::default());
        let mut capped = 0;
        let mut found = 0;
        for &p in &sorted {
            let (rows, count) = grid.rows_around(p);
            let h2 = h * h;
            let n = portable(p, &rows[..count], &axes, h2, &mut a).min(super::HITS);
            // SAFETY: AVX2 is there, the axes are padded, the stage is whole.
            let m = unsafe { super::hits(p, &rows[..count], &axes, h2, &mut b) }.min(super::HITS);
            assert_eq!(n, m, "{D}D at {p:?}");
            assert_eq!(a.idx[..n], b.idx[..n]);
            assert!(
                a.dist[..n]
                    .iter()
                    .zip(&b.dist[..n])
                    .all(|(x, y)| x.to_bits() == y.to_bits())
            );
            capped += usize::from(n == super::HITS);
            found += n;
        }
        assert!(
            capped > 100,
            "{D}D: the pile should reach the cap: {capped}"
        );
        assert!(
            found > 4 * sorted.len(),
            "{D}D: too few hits to compare: {found}"
        );
    }

    #[test]
    fn the_avx2_scan_finds_what_the_portable_one_finds() {
        if !super::available() {
            eprintln!("no AVX2 on this CPU: nothing to compare");
            return;
        }
        same_hits([1.0, 0.6, 0.8], 0.12);
        same_hits([17.8, 10.0], 0.35);
    }
}
