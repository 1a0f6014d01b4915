//! The floor's shadow under the liquid: a map of the liquid's optical depth towards the sun
//! over the floor under and around the tank, one texel per [`SHADOW_TEXEL`] voxels, marched
//! through the volume like the camera's rays (empty bricks skipped).

use super::*;

/// The liquid's optical depth towards the sun over a rectangle of the floor.
#[derive(Default)]
pub(super) struct Shadow {
    depth: Vec<f32>,
    dims: (usize, usize),
    /// The rectangle's corner (x, z) and a texel's side.
    corner: [f32; 2],
    texel: f32,
}

impl Shadow {
    /// The floor's light left by the liquid at world point (x, 0, z).
    #[inline]
    pub(super) fn at(&self, x: f32, z: f32) -> f32 {
        let (nx, nz) = self.dims;
        if nx == 0 {
            return 1.0;
        }
        let u = (x - self.corner[0]) / self.texel - 0.5;
        let v = (z - self.corner[1]) / self.texel - 0.5;
        if !(u > -1.0 && v > -1.0 && u < nx as f32 && v < nz as f32) {
            return 1.0;
        }
        let (u, v) = (u.clamp(0.0, (nx - 1) as f32), v.clamp(0.0, (nz - 1) as f32));
        let (i, j) = (u as u32 as usize, v as u32 as usize);
        let (i1, j1) = ((i + 1).min(nx - 1), (j + 1).min(nz - 1));
        let (fu, fv) = (u - i as f32, v - j as f32);
        let d = &self.depth;
        let a = d[j * nx + i] + (d[j * nx + i1] - d[j * nx + i]) * fu;
        let b = d[j1 * nx + i] + (d[j1 * nx + i1] - d[j1 * nx + i]) * fu;
        (-(a + (b - a) * fv) * SHADOW).pexp()
    }
}

/// The rectangle of the floor the shadow map covers: what the tank's box shades.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct ShadowRect {
    /// Its corner (x, z), m.
    pub corner: [f32; 2],
    /// A texel's side, m.
    pub texel: f32,
    /// Texels across (x) and deep (z).
    pub dims: (usize, usize),
}

impl ShadowRect {
    /// The rectangle for a volume of `voxel` m in `scene`; `None` when the sun is too low to
    /// cast a shadow worth a map.
    pub(crate) fn new(voxel: f32, scene: &Scene) -> Option<Self> {
        let tank = &scene.tank;
        let sun = scene.sun;
        if sun[1] <= 0.05 {
            return None;
        }
        // The floor the tank's box shades: its corners moved down along the sun to y = 0.
        let (mut lo, mut hi) = ([f32::INFINITY; 2], [f32::NEG_INFINITY; 2]);
        for k in 0..8 {
            let c = [k & 1, (k >> 1) & 1, (k >> 2) & 1].map(|b| b as f32);
            let p = tank.to_world([
                c[0] * tank.size[0],
                c[1] * tank.size[1],
                c[2] * tank.size[2],
            ]);
            let t = p[1] / sun[1];
            for (i, axis) in [0, 2].into_iter().enumerate() {
                let v = p[axis] - sun[axis] * t;
                lo[i] = lo[i].min(v);
                hi[i] = hi[i].max(v);
            }
        }
        let texel = SHADOW_TEXEL * voxel;
        let nx = (((hi[0] - lo[0]) / texel).ceil() as usize).clamp(1, 1024);
        let nz = (((hi[1] - lo[1]) / texel).ceil() as usize).clamp(1, 1024);
        Some(Self {
            corner: lo,
            texel,
            dims: (nx, nz),
        })
    }
}

impl Shadow {
    /// The liquid's optical depth towards the sun over the floor under and around the tank.
    pub(super) fn draw(&mut self, vol: &Volume, scene: &Scene, balls: &[Ball]) {
        let Some(rect) = ShadowRect::new(vol.voxel, scene) else {
            self.dims = (0, 0);
            return;
        };
        let tank = &scene.tank;
        let (lo, texel, (nx, _)) = (rect.corner, rect.texel, rect.dims);
        self.dims = rect.dims;
        self.corner = lo;
        self.texel = texel;
        let nz = rect.dims.1;
        self.depth.clear();
        self.depth.resize(nx * nz, 0.0);
        let dims = march_box(vol.dims, vol.voxel, scene);
        let dir = tank.dir_to_local(scene.sun);
        let inv = inverse(dir);
        self.depth
            .par_chunks_mut(nx)
            .enumerate()
            .for_each(|(j, row)| {
                for (i, out) in row.iter_mut().enumerate() {
                    let p = [
                        lo[0] + (i as f32 + 0.5) * texel,
                        0.0,
                        lo[1] + (j as f32 + 0.5) * texel,
                    ];
                    let ray = Ray {
                        origin: scale(tank.to_local(p), 1.0 / vol.voxel),
                        dir,
                    };
                    let Some((t0, t1, _)) = slab(&ray, dims) else {
                        continue;
                    };
                    // The balls: opaque, their chords as if dense liquid.
                    let mut sum = 0.0;
                    for b in balls {
                        let oc = sub(ray.origin, b.centre);
                        let half = dot(oc, ray.dir);
                        let disc = half * half - (dot(oc, oc) - b.radius * b.radius);
                        if disc > 0.0 && -half > 0.0 {
                            sum += 2.0 * disc.sqrt() * BALL_SHADOW;
                        }
                    }
                    let mut t = t0 + 0.5 * SHADOW_STEP;
                    while t < t1 {
                        let q = ray.at(t);
                        if vol.brick_at(q) < SHADOW_EMPTY {
                            t = brick_exit(inv, q, t);
                            continue;
                        }
                        sum += vol.density_at(q) * SHADOW_STEP;
                        t += SHADOW_STEP;
                    }
                    *out = sum * vol.voxel;
                }
            });
    }
}
