//! The neighbour scan: the density and near density at a particle from the candidates of the
//! cells around it, and its neighbours in reach, for the step's density stage. AVX2 gathers
//! the hits where the CPU has it ([`avx2`]), with the same result.

use super::kernels::Kernels;
use super::step::MAX_NEIGHBOURS;

#[cfg(target_arch = "x86_64")]
mod avx2;

/// Candidates whose distances are computed together in the portable neighbour scan.
const SCAN: usize = 64;
/// Padding past the last particle of the positions by axis: the AVX2 scan reads whole groups
/// of this many.
pub(super) const LANES: usize = 8;
/// The most hits the neighbour scan keeps: the cap's worth and the particle itself...
const HITS: usize = MAX_NEIGHBOURS + 1;
/// ...and room for one more group past them.
const STAGE: usize = HITS + SCAN;

/// The hits of one particle's neighbour scan, in the candidates' order (the cap's worth, self
/// included, is all the sum reads, with room for a group written past it): sorted index,
/// distance and kernel weights. Kept by each task (set to zeros for each particle, they took
/// as long as the scan).
pub(super) struct Hits {
    idx: [u32; STAGE],
    dist: [f32; STAGE],
    w2: [f32; STAGE],
    w3: [f32; STAGE],
}

impl Default for Hits {
    fn default() -> Self {
        Self {
            idx: [0; STAGE],
            dist: [0.0; STAGE],
            w2: [0.0; STAGE],
            w3: [0.0; STAGE],
        }
    }
}

/// The density and near density at `p` (sorted particle `a`) from the particles of `runs`
/// (sorted index ranges), and its neighbours in reach pushed onto `list`.
///
/// The candidates in reach are gathered first, in their order ([`hits`], or eight at a time
/// with AVX2 where the CPU has it: [`avx2`]), then their distances and kernel weights
/// computed together, then summed one after another in the candidates' order: the same bits
/// on every CPU.
pub(super) fn scan<const D: usize>(
    p: [f32; D],
    a: usize,
    runs: &[(u32, u32)],
    axes: &[Vec<f32>; D],
    kern: &Kernels<D>,
    list: &mut Vec<(u32, f32)>,
    stage: &mut Hits,
) -> [f32; 2] {
    let h2 = kern.h * kern.h;
    #[cfg(target_arch = "x86_64")]
    let found = if avx2::available() && padded(runs, axes) {
        // SAFETY: AVX2 is there; every run's end plus LANES lies within the positions (just
        // checked); the stage holds HITS + LANES.
        unsafe { avx2::hits(p, runs, axes, h2, stage) }
    } else {
        hits(p, runs, axes, h2, stage)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let found = hits(p, runs, axes, h2, stage);
    let found = found.min(HITS);
    let Hits { idx, dist, w2, w3 } = stage;
    for ((r, w2), w3) in dist[..found]
        .iter_mut()
        .zip(&mut w2[..found])
        .zip(&mut w3[..found])
    {
        *r = r.sqrt();
        [*w2, *w3] = kern.densities_at(*r);
    }
    let mut acc = [0.0f32; 2];
    let first = list.len();
    for j in 0..found {
        acc = [acc[0] + w2[j], acc[1] + w3[j]];
        let b = idx[j];
        if b as usize != a {
            list.push((b, dist[j]));
            if list.len() - first == MAX_NEIGHBOURS {
                break;
            }
        }
    }
    acc
}

/// Whether the positions by axis hold [`LANES`] values past every run's end (the step pads
/// them), as the AVX2 scan reads whole groups.
#[cfg(target_arch = "x86_64")]
fn padded<const D: usize>(runs: &[(u32, u32)], axes: &[Vec<f32>; D]) -> bool {
    let len = axes.iter().map(Vec::len).min().unwrap_or(0);
    runs.iter().all(|&(_, hi)| hi as usize + LANES <= len)
}

/// The candidates of `runs` closer to `p` than `sqrt(h2)`, in order, into `stage` (index and
/// squared distance); returns how many, [`HITS`] or more once the cap's worth is in. The
/// squared distances of up to [`SCAN`] candidates at a time in a loop over positions by axis
/// that vectorises, then the ones in reach gathered without a branch (a branch taken for one
/// candidate in six was mispredicted a lot).
fn hits<const D: usize>(
    p: [f32; D],
    runs: &[(u32, u32)],
    axes: &[Vec<f32>; D],
    h2: f32,
    stage: &mut Hits,
) -> usize {
    let mut r2s = [0.0f32; SCAN];
    let mut count = 0;
    for &(lo, hi) in runs {
        for lo in (lo as usize..hi as usize).step_by(SCAN) {
            let hi = (lo + SCAN).min(hi as usize);
            let r2s = &mut r2s[..hi - lo];
            // Axis by axis, the sum folded from the first term: `dx² + dy² (+ dz²)`.
            for (r2, x) in r2s.iter_mut().zip(&axes[0][lo..hi]) {
                let d = x - p[0];
                *r2 = d * d;
            }
            for (axis, &pc) in axes.iter().zip(&p).skip(1) {
                for (r2, x) in r2s.iter_mut().zip(&axis[lo..hi]) {
                    let d = x - pc;
                    *r2 += d * d;
                }
            }
            // At most HITS - 1 before this group, so at most HITS - 1 + SCAN after it.
            for (j, &r2) in r2s.iter().enumerate() {
                stage.idx[count] = (lo + j) as u32;
                stage.dist[count] = r2;
                count += usize::from(r2 < h2);
            }
            if count >= HITS {
                return count;
            }
        }
    }
    count
}
