//! A liquid as a volume, and the scene it is drawn in: what a 3D model hands the ray march
//! ([`super::cpu::raymarch`]).
//!
//! **The volume** covers a box (the tank) with cubic voxels: per voxel the liquid's density,
//! normalised so the bulk of the liquid at rest reads 1, and its dye weighted by that density.
//! The surface is where the density crosses [`SURFACE`]. Over the voxels, bricks of [`BRICK`]³
//! keep their largest density (their neighbours' included, as a trilinear sample reads them),
//! so a ray crosses empty space a brick at a time.
//!
//! **The scene**: the tank (a box in its own frame, `[0, size]`, turned and placed in the
//! world by a rotation and the place of its corner), a floor (the plane `y = 0`, a checker), a
//! backdrop (the sky's gradient all round), one light (the sun, a direction), and a camera
//! looking at the tank. Lengths in metres, y up.

use rayon::prelude::*;

/// A point or a direction.
pub type V3 = [f32; 3];

#[inline]
pub fn add(a: V3, b: V3) -> V3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}
#[inline]
pub fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
#[inline]
pub fn scale(a: V3, s: f32) -> V3 {
    [a[0] * s, a[1] * s, a[2] * s]
}
#[inline]
pub fn dot(a: V3, b: V3) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
#[inline]
pub fn cross(a: V3, b: V3) -> V3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}
/// `a` scaled to length 1 (`fallback` for a zero or non-finite vector).
#[inline]
pub fn normalize_or(a: V3, fallback: V3) -> V3 {
    let l = dot(a, a).sqrt();
    if l > 1e-20 && l.is_finite() {
        scale(a, 1.0 / l)
    } else {
        fallback
    }
}

/// Voxels per side of a brick of the empty-space map.
pub const BRICK: usize = 4;
/// The density of the liquid's surface (the bulk is 1).
pub const SURFACE: f32 = 0.5;

/// The largest of `v`, or 0 (densities are never negative: 0 is the maximum of nothing, as for
/// a brick of empty voxels).
#[inline]
fn most(v: impl Iterator<Item = f32>) -> f32 {
    v.fold(0.0, f32::max)
}

/// A density and dye volume over a box; see the module's header.
#[derive(Clone, Debug, Default)]
pub struct Volume {
    /// Voxels across (x), up (y) and deep (z).
    pub dims: [usize; 3],
    /// A voxel's edge, m.
    pub voxel: f32,
    /// Density per voxel, x fastest, then y, then z (1: the bulk).
    pub density: Vec<f32>,
    /// The dye per voxel, weighted by the density.
    pub dye: Vec<[f32; 3]>,
    /// The largest density per brick (and the voxels around it).
    pub bricks: Vec<f32>,
    /// Bricks per axis.
    pub brick_dims: [usize; 3],
    /// Working memory of whoever fills it (the 3D liquid's smoothing), kept between frames.
    pub scratch: Vec<f32>,
    /// [`Volume::finish`]'s working memory: the maxima over each row's bricks, then over
    /// each plane's.
    brick_rows: Vec<f32>,
    brick_planes: Vec<f32>,
}

impl Volume {
    /// Make it `dims` voxels of `voxel` m, all empty.
    pub fn clear(&mut self, dims: [usize; 3], voxel: f32) {
        let n = dims[0] * dims[1] * dims[2];
        self.dims = dims;
        self.voxel = voxel;
        self.density.clear();
        self.density.resize(n, 0.0);
        self.dye.clear();
        self.dye.resize(n, [0.0; 3]);
        self.brick_dims = dims.map(|d| d.div_ceil(BRICK));
        self.bricks.clear();
    }

    /// The box's size, m.
    pub fn size(&self) -> V3 {
        self.dims.map(|d| d as f32 * self.voxel)
    }

    /// Index of voxel `(x, y, z)`.
    #[inline]
    pub fn index(&self, x: usize, y: usize, z: usize) -> usize {
        (z * self.dims[1] + y) * self.dims[0] + x
    }

    /// Build the bricks' largest densities once the density is in: each brick's over its
    /// voxels and one voxel around, as three maxima along one axis after another (x over each
    /// row, then y, then z), each in parallel on the caller's rayon pool.
    pub fn finish(&mut self) {
        let [bx, by, bz] = self.brick_dims;
        let [nx, ny, nz] = self.dims;
        self.bricks.clear();
        self.bricks.resize(bx * by * bz, 0.0);
        if nx * ny * nz == 0 {
            return;
        }
        // Voxels a brick's maximum covers along an axis of `n`.
        let span = |b: usize, n: usize| (b * BRICK).saturating_sub(1)..((b + 1) * BRICK + 1).min(n);
        let mut rows = std::mem::take(&mut self.brick_rows);
        rows.clear();
        rows.resize(nz * ny * bx, 0.0);
        let density = &self.density;
        rows.par_chunks_mut(ny * bx)
            .enumerate()
            .for_each(|(z, out)| {
                for y in 0..ny {
                    let row = &density[(z * ny + y) * nx..(z * ny + y + 1) * nx];
                    for (b, o) in out[y * bx..(y + 1) * bx].iter_mut().enumerate() {
                        *o = most(row[span(b, nx)].iter().copied());
                    }
                }
            });
        let mut planes = std::mem::take(&mut self.brick_planes);
        planes.clear();
        planes.resize(nz * by * bx, 0.0);
        planes
            .par_chunks_mut(by * bx)
            .enumerate()
            .for_each(|(z, out)| {
                let rows = &rows[z * ny * bx..(z + 1) * ny * bx];
                for (j, line) in out.chunks_mut(bx).enumerate() {
                    for (b, o) in line.iter_mut().enumerate() {
                        *o = most(span(j, ny).map(|y| rows[y * bx + b]));
                    }
                }
            });
        self.bricks
            .par_chunks_mut(by * bx)
            .enumerate()
            .for_each(|(k, out)| {
                for (i, o) in out.iter_mut().enumerate() {
                    *o = most(span(k, nz).map(|z| planes[z * by * bx + i]));
                }
            });
        self.brick_rows = rows;
        self.brick_planes = planes;
    }

    /// The largest density in the brick holding voxel point `q` (voxel units), 0 outside.
    #[inline]
    pub fn brick_at(&self, q: V3) -> f32 {
        let [bx, by, bz] = self.brick_dims;
        // Through u32: x86-64's baseline converts a float to u64 with a compare and a branch.
        let b = q.map(|v| (v.max(0.0) as u32 as usize) / BRICK);
        if b[0] >= bx || b[1] >= by || b[2] >= bz {
            return 0.0;
        }
        self.bricks[(b[2] * by + b[1]) * bx + b[0]]
    }

    /// The corners and weights of a trilinear sample at voxel point `q` (voxel centres at
    /// `i + 0.5`; clamped to the box).
    #[inline]
    fn taps(&self, q: V3) -> ([usize; 3], [usize; 3], V3) {
        let mut i0 = [0; 3];
        let mut i1 = [0; 3];
        let mut f = [0.0; 3];
        for c in 0..3 {
            let n = self.dims[c];
            let u = (q[c] - 0.5).clamp(0.0, (n - 1) as f32);
            let i = (u as u32 as usize).min(n - 1);
            i0[c] = i;
            i1[c] = (i + 1).min(n - 1);
            f[c] = u - i as f32;
        }
        (i0, i1, f)
    }

    /// The density at voxel point `q`, trilinear (0 in an empty volume).
    #[inline]
    pub fn density_at(&self, q: V3) -> f32 {
        if self.density.is_empty() {
            return 0.0;
        }
        let (a, b, f) = self.taps(q);
        let d = &self.density;
        let row = |y: usize, z: usize| {
            let base = (z * self.dims[1] + y) * self.dims[0];
            let (p, r) = (d[base + a[0]], d[base + b[0]]);
            p + (r - p) * f[0]
        };
        let lerp = |p: f32, r: f32, t: f32| p + (r - p) * t;
        let near = lerp(row(a[1], a[2]), row(b[1], a[2]), f[1]);
        let far = lerp(row(a[1], b[2]), row(b[1], b[2]), f[1]);
        lerp(near, far, f[2])
    }

    /// The density and the dye (weighted by the density) at voxel point `q`, trilinear (0 in
    /// an empty volume).
    #[inline]
    pub fn sample(&self, q: V3) -> (f32, V3) {
        if self.density.is_empty() {
            return (0.0, [0.0; 3]);
        }
        let (a, b, f) = self.taps(q);
        let mut density = 0.0;
        let mut dye = [0.0; 3];
        for (z, wz) in [(a[2], 1.0 - f[2]), (b[2], f[2])] {
            for (y, wy) in [(a[1], 1.0 - f[1]), (b[1], f[1])] {
                for (x, wx) in [(a[0], 1.0 - f[0]), (b[0], f[0])] {
                    let w = wx * wy * wz;
                    let i = (z * self.dims[1] + y) * self.dims[0] + x;
                    density += self.density[i] * w;
                    let c = self.dye[i];
                    dye = [dye[0] + c[0] * w, dye[1] + c[1] * w, dye[2] + c[2] * w];
                }
            }
        }
        (density, dye)
    }
}

/// Where the camera looks from and how wide.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    /// The eye, world m.
    pub eye: V3,
    /// The point it looks at.
    pub target: V3,
    /// The vertical field of view, degrees.
    pub fov_y: f32,
}

impl Camera {
    /// A camera orbiting `target`: `yaw` degrees round the vertical (0: looking along +z, from
    /// in front of the tank), `pitch` degrees above the horizon, `distance` m away.
    pub fn orbit(target: V3, yaw: f32, pitch: f32, distance: f32, fov_y: f32) -> Self {
        use crate::kernels::portable::Portable;
        let (y, p) = (yaw.to_radians(), pitch.clamp(-89.0, 89.0).to_radians());
        let back = [-y.psin() * p.pcos(), p.psin(), -y.pcos() * p.pcos()];
        Self {
            eye: add(target, scale(back, distance.max(1e-3))),
            target,
            fov_y: fov_y.clamp(5.0, 120.0),
        }
    }

    /// The camera's basis: right, up and forward (unit vectors).
    pub fn basis(&self) -> (V3, V3, V3) {
        let forward = normalize_or(sub(self.target, self.eye), [0.0, 0.0, 1.0]);
        let right = normalize_or(cross(forward, [0.0, 1.0, 0.0]), [1.0, 0.0, 0.0]);
        let up = cross(right, forward);
        (right, up, forward)
    }
}

/// The tank in the world: its size and how it is turned and placed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tank {
    /// The tank's size, m (its own frame is `[0, size]`).
    pub size: V3,
    /// The tank's axes in the world (columns: its x, y and z), orthonormal.
    pub axes: [V3; 3],
    /// Where its corner `(0, 0, 0)` is in the world.
    pub corner: V3,
}

impl Tank {
    /// A tank of `size` standing on the floor, centred on the world's vertical axis, turned
    /// `tilt` degrees about the depth axis round its bottom's centre and then raised so that
    /// its lowest corner rests on the floor.
    pub fn standing(size: V3, tilt: f32) -> Self {
        use crate::kernels::portable::Portable;
        let tilt = if tilt.is_finite() { tilt } else { 0.0 };
        let (s, c) = tilt.to_radians().psin_cos();
        let axes = [[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]];
        // The bottom's centre at the origin.
        let half = [0.5 * size[0], 0.0, 0.5 * size[2]];
        let corner = scale(
            add(
                add(scale(axes[0], half[0]), scale(axes[1], half[1])),
                scale(axes[2], half[2]),
            ),
            -1.0,
        );
        let mut tank = Self { size, axes, corner };
        let lowest = (0..8)
            .map(|k| {
                let p = [k & 1, (k >> 1) & 1, (k >> 2) & 1].map(|b| b as f32);
                tank.to_world([p[0] * size[0], p[1] * size[1], p[2] * size[2]])[1]
            })
            .fold(f32::INFINITY, f32::min);
        tank.corner[1] -= lowest;
        tank
    }

    /// A world point in the tank's frame.
    #[inline]
    pub fn to_local(&self, p: V3) -> V3 {
        let d = sub(p, self.corner);
        [
            dot(d, self.axes[0]),
            dot(d, self.axes[1]),
            dot(d, self.axes[2]),
        ]
    }

    /// A world direction in the tank's frame.
    #[inline]
    pub fn dir_to_local(&self, d: V3) -> V3 {
        [
            dot(d, self.axes[0]),
            dot(d, self.axes[1]),
            dot(d, self.axes[2]),
        ]
    }

    /// A direction in the tank's frame, in the world.
    #[inline]
    pub fn dir_to_world(&self, d: V3) -> V3 {
        add(
            add(scale(self.axes[0], d[0]), scale(self.axes[1], d[1])),
            scale(self.axes[2], d[2]),
        )
    }

    /// A point in the tank's frame, in the world.
    #[inline]
    pub fn to_world(&self, p: V3) -> V3 {
        add(self.corner, self.dir_to_world(p))
    }

    /// The tank's centre in the world.
    pub fn centre(&self) -> V3 {
        self.to_world(scale(self.size, 0.5))
    }
}

/// A ball in the tank (the 3D liquid's floaters): opaque, coloured, in the tank's frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ball {
    /// Its centre in the tank's frame, m.
    pub centre: V3,
    /// Its radius, m.
    pub radius: f32,
    /// Its colour (linear RGB, 0..1).
    pub color: V3,
}

/// What the picture of a 3D liquid is made of besides its volume.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scene {
    pub camera: Camera,
    pub tank: Tank,
    /// Towards the sun (unit).
    pub sun: V3,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each brick holds the largest density over its voxels and one voxel around (clipped to
    /// the volume), for sides that are and are not whole bricks.
    #[test]
    fn the_bricks_hold_the_largest_density_around_them() {
        let mut seed = 5u32;
        for dims in [[9, 7, 5], [8, 8, 8], [1, 3, 13]] {
            let mut vol = Volume::default();
            vol.clear(dims, 0.1);
            for d in &mut vol.density {
                seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                // Most voxels empty, as in a tank.
                *d = ((seed >> 8) as f32 / (1u32 << 24) as f32 - 0.7).max(0.0);
            }
            vol.finish();
            let [bx, by, bz] = vol.brick_dims;
            for k in 0..bz {
                for j in 0..by {
                    for i in 0..bx {
                        let mut want = 0.0f32;
                        for z in 0..dims[2] {
                            for y in 0..dims[1] {
                                for x in 0..dims[0] {
                                    let near = |v: usize, b: usize| {
                                        v + 1 >= b * BRICK && v <= (b + 1) * BRICK
                                    };
                                    if near(x, i) && near(y, j) && near(z, k) {
                                        want = want.max(vol.density[vol.index(x, y, z)]);
                                    }
                                }
                            }
                        }
                        assert_eq!(
                            vol.bricks[(k * by + j) * bx + i],
                            want,
                            "{dims:?} {i} {j} {k}"
                        );
                    }
                }
            }
        }
    }
}
