//! The liquid's particles into a volume for the picture ([`Volume`]): each particle's mass
//! shared among the 8 voxels around it (cloud in cell), then smoothed by a binomial filter
//! `[1, 2, 1] / 4` along each axis, twice (the edge voxels repeated, so the liquid against
//! the glass keeps its density). Together a smooth bump about two voxels wide, so the surface
//! is smooth where the voxels are coarser than the particles. The density is normalised by the
//! particles per m³ of the liquid at rest, so the bulk at rest reads 1; the dye is weighted by the density.

use super::Liquid;
use crate::display::volume::Volume;
use rayon::prelude::*;

/// Most voxels along a side.
pub const MAX_SIDE: usize = 512;
/// Most voxels in all.
pub const MAX_VOXELS: usize = 1 << 22;
/// The binomial filter's passes per axis.
const PASSES: usize = 2;

/// Fill `vol` with `liquid`'s particles at voxels of `voxel` m (at least what keeps every side
/// within [`MAX_SIDE`] and the whole within [`MAX_VOXELS`]), normalised by `target_density`
/// (particles per m³).
pub fn splat(liquid: &Liquid, target_density: f32, voxel: f32, vol: &mut Volume) {
    let size = liquid.size();
    let (dims, voxel) = grid(size, voxel);
    vol.clear(dims, voxel);
    let [nx, ny, nz] = dims;
    let norm = norm(target_density, voxel);
    // Bands of planes in parallel, each taking from every particle what falls in its planes:
    // every voxel sums its particles in their order, on any number of threads.
    let plane = nx * ny;
    let band = nz.div_ceil(2 * rayon::current_num_threads()).max(1);
    let (pos, color) = (&liquid.pos, &liquid.color);
    // A coordinate's first voxel along an axis of `n` and its share of the next (the voxel
    // centres at `i + 0.5`; clamped to the volume).
    let tap = |x: f32, n: usize| {
        let u = (x / voxel - 0.5).clamp(0.0, (n - 1) as f32);
        let i = (u as u32 as usize).min(n - 1);
        (i, u - i as f32)
    };
    vol.density
        .par_chunks_mut(band * plane)
        .zip(vol.dye.par_chunks_mut(band * plane))
        .enumerate()
        .for_each(|(k, (density, dye))| {
            let z0 = k * band;
            let z1 = z0 + density.len() / plane;
            for (p, c) in pos.iter().zip(color) {
                let (iz, fz) = tap(p[2], nz);
                let lz = (iz + 1).min(nz - 1);
                if lz < z0 || iz >= z1 {
                    continue;
                }
                let ((ix, fx), (iy, fy)) = (tap(p[0], nx), tap(p[1], ny));
                for (z, wz) in [(iz, 1.0 - fz), (lz, fz)] {
                    if z < z0 || z >= z1 {
                        continue;
                    }
                    for (dy, wy) in [(0, 1.0 - fy), (1, fy)] {
                        let y = (iy + dy).min(ny - 1);
                        for (dx, wx) in [(0, 1.0 - fx), (1, fx)] {
                            let x = (ix + dx).min(nx - 1);
                            let w = wx * wy * wz * norm;
                            let i = ((z - z0) * ny + y) * nx + x;
                            density[i] += w;
                            let d = &mut dye[i];
                            *d = [d[0] + c[0] * w, d[1] + c[1] * w, d[2] + c[2] * w];
                        }
                    }
                }
            }
        });
    let mut other = std::mem::take(&mut vol.scratch);
    smooth(&mut vol.density, &mut other, dims, 1);
    smooth(bytemuck::cast_slice_mut(&mut vol.dye), &mut other, dims, 3);
    vol.scratch = other;
    fill_walls(vol, inside(size, voxel, dims));
    vol.finish();
}

/// The volume over a tank of `size` m at voxels of about `voxel` m: its voxels per axis and
/// their size (at least what keeps every side within [`MAX_SIDE`] and the whole within
/// [`MAX_VOXELS`]).
pub fn grid(size: [f32; 3], voxel: f32) -> ([usize; 3], f32) {
    let largest = size.iter().fold(0.0f32, |a, &s| a.max(s));
    let voxel = voxel.max(largest / MAX_SIDE as f32).max(1e-4);
    // At most MAX_VOXELS in all (64 MiB of volume): coarser voxels for a huge tank.
    let mut voxel = voxel;
    let mut dims = size.map(|s| ((s / voxel).ceil() as usize).clamp(2, MAX_SIDE));
    while dims.iter().product::<usize>() > MAX_VOXELS {
        let over = dims.iter().product::<usize>() as f32 / MAX_VOXELS as f32;
        voxel *= libm::cbrtf(over).max(1.01);
        dims = size.map(|s| ((s / voxel).ceil() as usize).clamp(2, MAX_SIDE));
    }
    (dims, voxel)
}

/// A particle's share of a voxel of `voxel` m, in densities of the bulk at rest: the
/// particles per m³ there (`target_density`: one per lattice cell) fill it to 1.
pub fn norm(target_density: f32, voxel: f32) -> f32 {
    (super::spacing(target_density) / voxel).powi(3)
}

/// Whole voxels inside a tank of `size` m per axis, for a volume of `dims` voxels of `voxel`
/// m (the model fits its voxels to the tank; a partial last one lies partly past the glass and
/// is not a wall layer).
pub fn inside(size: [f32; 3], voxel: f32, dims: [usize; 3]) -> [usize; 3] {
    [0, 1, 2].map(|a| ((size[a] / voxel + 1e-3).floor() as usize).clamp(1, dims[a]))
}

/// Layers of voxels against the side walls that [`fill_walls`] evens out, and the layer it
/// measures the bulk by.
pub(crate) const WALL_LAYERS: usize = 2;
pub(crate) const BULK_LAYER: usize = 3;

/// The side walls: the particles keep about a spacing from the glass (the walls push as
/// liquid beyond them would), so the layers of voxels against the glass read thinner than the
/// bulk (0.76 and 0.92 of it in a pool at rest, 2026-11-28) and the surface would curl away
/// from the glass. Each of the [`WALL_LAYERS`] layers against the four side walls (`inside`:
/// the voxels the tank spans per axis) is scaled by the bulk's density over its own, both
/// summed over the lines across the wall where the [`BULK_LAYER`] holds bulk liquid; the
/// scale is kept within 1..1.6, so a splash leaving the glass is not pulled back to it.
fn fill_walls(vol: &mut Volume, inside: [usize; 3]) {
    let [nx, ny, _] = vol.dims;
    for axis in [0, 2] {
        let n = inside[axis];
        if n < 2 * BULK_LAYER + 2 {
            continue;
        }
        let (other, depth) = if axis == 0 {
            (inside[2], inside[1])
        } else {
            (inside[0], inside[1])
        };
        let at = |k: usize, line: usize, y: usize| {
            let (x, z) = if axis == 0 { (k, line) } else { (line, k) };
            (z * ny + y) * nx + x
        };
        for side in [0, 1] {
            let layer = |k: usize| if side == 0 { k } else { n - 1 - k };
            let mut sums = [0.0f64; WALL_LAYERS + 1];
            for line in 0..other {
                for y in 0..depth {
                    let bulk = vol.density[at(layer(BULK_LAYER), line, y)];
                    if bulk >= 0.8 {
                        sums[WALL_LAYERS] += f64::from(bulk);
                        for (k, sum) in sums.iter_mut().take(WALL_LAYERS).enumerate() {
                            *sum += f64::from(vol.density[at(layer(k), line, y)]);
                        }
                    }
                }
            }
            for k in 0..WALL_LAYERS {
                if sums[k] <= 0.0 {
                    continue;
                }
                let scale = (sums[WALL_LAYERS] / sums[k]).clamp(1.0, 1.6) as f32;
                for line in 0..other {
                    for y in 0..ny {
                        let i = at(layer(k), line, y);
                        vol.density[i] *= scale;
                        vol.dye[i] = vol.dye[i].map(|c| c * scale);
                    }
                }
            }
        }
    }
}

/// `(a + 2 b + c) / 4`.
#[inline]
fn mix(a: f32, b: f32, c: f32) -> f32 {
    0.25 * (a + c) + 0.5 * b
}

/// One pass of `[1, 2, 1] / 4` over lines of `n` values of `s` floats each (`src` and `dst`
/// hold whole lines; the end values repeated): each float with the same float of the values
/// before and after it, in loops that vectorise.
fn along_lines(src: &[f32], dst: &mut [f32], n: usize, s: usize) {
    for (a, b) in src.chunks(n * s).zip(dst.chunks_mut(n * s)) {
        if n == 1 {
            b.copy_from_slice(a);
            continue;
        }
        let last = (n - 1) * s;
        for k in 0..s {
            b[k] = mix(a[k], a[k], a[k + s]);
            b[last + k] = mix(a[last + k - s], a[last + k], a[last + k]);
        }
        let inner = &mut b[s..last];
        for (((o, &l), &m), &r) in inner
            .iter_mut()
            .zip(&a[..last - s])
            .zip(&a[s..last])
            .zip(&a[2 * s..])
        {
            *o = mix(l, m, r);
        }
    }
}

/// One pass of `[1, 2, 1] / 4` across `rows` rows of `w` floats (rows before the first and
/// after the last repeat them), into the rows of `dst` from `first` on (`dst` holds whole
/// rows).
fn across_rows(src: &[f32], dst: &mut [f32], w: usize, rows: usize, first: usize) {
    for (i, out) in dst.chunks_mut(w).enumerate() {
        let y = first + i;
        let row = |y: usize| &src[y * w..(y + 1) * w];
        let (prev, here, next) = (row(y.saturating_sub(1)), row(y), row((y + 1).min(rows - 1)));
        for (((o, &l), &m), &r) in out.iter_mut().zip(prev).zip(here).zip(next) {
            *o = mix(l, m, r);
        }
    }
}

/// `passes` passes of `pass` from `a` into `b` and back, ending in `a`.
fn ping_pong(a: &mut [f32], b: &mut [f32], passes: usize, pass: impl Fn(&[f32], &mut [f32])) {
    for p in 0..passes {
        if p % 2 == 0 {
            pass(a, b);
        } else {
            pass(b, a);
        }
    }
    if passes % 2 == 1 {
        a.copy_from_slice(b);
    }
}

/// [`PASSES`] passes of `[1, 2, 1] / 4` along each axis of a volume of `dims` voxels of `s`
/// floats each (the edge values repeated; the filters along different axes commute): x and
/// y within each z slice, the slices in parallel; then z, each output slice in parallel,
/// through `other` (every value of it is written: its old ones need no copy). Each pass reads
/// one buffer and writes the other, in loops that vectorise (the passes along a line in place
/// took 1.14 ms of the 640x360 picture's 2.0 ms volume at 32 768 particles, 2026-11-28).
fn smooth(data: &mut [f32], other: &mut Vec<f32>, [nx, ny, nz]: [usize; 3], s: usize) {
    let slice = nx * ny * s;
    if slice == 0 {
        return;
    }
    data.par_chunks_mut(slice)
        .for_each_init(Vec::new, |buf: &mut Vec<f32>, d| {
            buf.resize(slice, 0.0);
            ping_pong(d, buf, PASSES, |a, b| along_lines(a, b, nx, s));
            ping_pong(d, buf, PASSES, |a, b| across_rows(a, b, nx * s, ny, 0));
        });
    // One buffer for the density and then the dye (three times as long): grown, never shrunk.
    if other.len() < data.len() {
        other.resize(data.len(), 0.0);
    }
    let other = &mut other[..data.len()];
    ping_pong(data, other, PASSES, |from, to| {
        to.par_chunks_mut(slice)
            .enumerate()
            .for_each(|(z, out)| across_rows(from, out, slice, nz, z));
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::display::volume::SURFACE;
    use crate::sim::liquid3d::{LATTICE_DENSITY, spacing};

    /// A block of liquid at the target density reads 1 inside and falls through the surface's
    /// threshold at its face; the mass (density summed) is the particles'; the dye is the
    /// particles' colour.
    #[test]
    fn a_block_of_liquid_reads_one_inside_and_keeps_its_mass() {
        let mut liquid = Liquid::new([1.2, 1.2, 1.2]);
        let spacing = spacing(LATTICE_DENSITY);
        let n = (0.6 / spacing) as usize;
        for i in 0..n {
            for j in 0..n {
                for k in 0..n {
                    let p = [i, j, k].map(|a| 0.3 + (a as f32 + 0.5) * spacing);
                    liquid.add(p, [0.0; 3], [1.0, 0.5, 0.25]);
                }
            }
        }
        let mut vol = Volume::default();
        let voxel = 0.75 * spacing;
        splat(&liquid, LATTICE_DENSITY, voxel, &mut vol);
        let mass: f32 = vol.density.iter().sum::<f32>() * (voxel / spacing).powi(3);
        assert!(
            (mass - liquid.len() as f32).abs() < 1e-3 * liquid.len() as f32,
            "{mass} vs {}",
            liquid.len()
        );
        let centre = [0.6 / voxel; 3];
        let (_, dye) = vol.sample(centre);
        let d = vol.density_at(centre);
        // The bulk: the mean over the block's middle (a lattice and voxels of other sizes beat
        // a little voxel by voxel).
        let mid = (0.6 / voxel) as usize;
        let mut bulk = 0.0;
        for z in mid - 2..mid + 2 {
            for y in mid - 2..mid + 2 {
                for x in mid - 2..mid + 2 {
                    bulk += vol.density[vol.index(x, y, z)] / 64.0;
                }
            }
        }
        assert!((bulk - 1.0).abs() < 0.03, "bulk {bulk}");
        assert!((dye[1] / d - 0.5).abs() < 1e-3 && (dye[2] / d - 0.25).abs() < 1e-3);
        // Outside the block: empty; the face (x = 0.3 + n spacing) at about the threshold.
        assert!(vol.density_at([0.1 / voxel, centre[1], centre[2]]) < 0.01);
        let face = (0.3 + n as f32 * spacing) / voxel;
        let at = vol.density_at([face, centre[1], centre[2]]);
        assert!((at - SURFACE).abs() < 0.15, "at the face {at}");
        // The bricks hold at least every density they cover.
        for z in 0..vol.dims[2] {
            for y in 0..vol.dims[1] {
                for x in 0..vol.dims[0] {
                    let q = [x, y, z].map(|a| a as f32 + 0.5);
                    assert!(vol.brick_at(q) >= vol.density[vol.index(x, y, z)]);
                }
            }
        }
    }

    /// The smoothing is two passes of `(a + 2 b + c) / 4` along each axis with the edge
    /// values repeated, to the bit: against the filter written out voxel by voxel, for one
    /// float a voxel and for three, on sides of one voxel too.
    #[test]
    fn the_smoothing_is_the_binomial_filter() {
        let mut seed = 3u32;
        for (dims, s) in [
            ([7, 5, 4], 1),
            ([6, 1, 9], 3),
            ([1, 4, 3], 3),
            ([5, 5, 1], 1),
        ] {
            let n = dims[0] * dims[1] * dims[2] * s;
            let data: Vec<f32> = (0..n)
                .map(|_| {
                    seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                    (seed >> 8) as f32 / (1u32 << 24) as f32
                })
                .collect();
            let mut want = data.clone();
            let [nx, ny, nz] = dims;
            let at = |x: usize, y: usize, z: usize, k: usize| ((z * ny + y) * nx + x) * s + k;
            for axis in 0..3 {
                for _ in 0..PASSES {
                    let from = want.clone();
                    for z in 0..nz {
                        for y in 0..ny {
                            for x in 0..nx {
                                for k in 0..s {
                                    let mut lo = [x, y, z];
                                    let mut hi = [x, y, z];
                                    lo[axis] = lo[axis].saturating_sub(1);
                                    hi[axis] = (hi[axis] + 1).min(dims[axis] - 1);
                                    want[at(x, y, z, k)] = 0.25
                                        * (from[at(lo[0], lo[1], lo[2], k)]
                                            + from[at(hi[0], hi[1], hi[2], k)])
                                        + 0.5 * from[at(x, y, z, k)];
                                }
                            }
                        }
                    }
                }
            }
            let mut got = data.clone();
            smooth(&mut got, &mut Vec::new(), dims, s);
            assert!(
                got.iter()
                    .zip(&want)
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                "{dims:?} x {s}"
            );
        }
    }

    /// A huge tank with tiny voxels stays within the voxel budget (coarser voxels), and a
    /// particle anywhere in it, or at a broken place, lands inside the volume.
    #[test]
    fn a_huge_tank_keeps_the_volume_bounded() {
        let mut liquid = Liquid::new([1000.0, 1000.0, 1000.0]);
        liquid.add([999.9, 0.0, 500.0], [0.0; 3], [1.0; 3]);
        liquid.add([f32::NAN, 1.0, 1.0], [0.0; 3], [1.0; 3]);
        let mut vol = Volume::default();
        splat(&liquid, LATTICE_DENSITY, 0.01, &mut vol);
        let n: usize = vol.dims.iter().product();
        assert!(
            n <= MAX_VOXELS && vol.dims.iter().all(|&d| d <= MAX_SIDE),
            "{:?}",
            vol.dims
        );
        assert!(vol.density.iter().sum::<f32>() > 0.0);
    }
}
