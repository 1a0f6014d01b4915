//! The 3D liquid's picture on the CPU: each pixel's ray is marched through the liquid's
//! [`Volume`] in the tank's frame, and the light it brings back is handed to the display's
//! picture (exposure, tone, bloom, dither) as a field of light.
//!
//! - **Surface.** The ray crosses the tank's box; empty bricks are skipped whole, then it steps
//!   [`SURFACE_STEP`] voxels at a time until the density reaches [`SURFACE`]; three bisections
//!   and a straight line between the last two points place the crossing. The normal is the
//!   density's gradient (central differences, one voxel). Where the liquid touches the glass,
//!   the surface is the glass' face.
//! - **Reflection** (Fresnel, Schlick's form from water's index 1.33): the backdrop, floor and
//!   sun seen in the mirror direction.
//! - **Refraction** (Snell): the ray goes on bent into the liquid and steps [`INSIDE_STEP`] voxels
//!   at a time, adding up the density and the dye it crosses, until it leaves through the
//!   surface (bent again, or reflected whole past the critical angle) or the glass. Light
//!   from behind is absorbed along the way (Beer-Lambert): water takes a little red, the dye
//!   takes the colours it is not (a red dye lets red through). The liquid also scatters light
//!   in its dye's colour, growing with the depth crossed, so coloured liquid glows over a dark
//!   floor.
//! - **Floor** (the plane y = 0, a checker fading to the horizon) lit by the sun and shadowed
//!   by the liquid: a shadow map over the floor holds the liquid's optical depth towards the
//!   sun, one texel per two voxels.
//! - **Glass**: the tank's box darkens what is seen through it a little, and its edges are
//!   drawn one pixel wide.
//!
//! The light goes out at `scale` of the frame's size, rows bottom first (the display's
//! resampling brings it to the frame). Rows are shaded in parallel; the result does not depend
//! on the thread count.

use crate::display::volume::{
    BRICK, Ball, Camera, SURFACE, Scene, V3, Volume, add, dot, normalize_or, scale, sub,
};
use crate::kernels::portable::{Portable, floor32};
use rayon::prelude::*;

/// The step towards the surface, voxels.
pub const SURFACE_STEP: f32 = 1.0;
/// The step inside the liquid, voxels.
pub const INSIDE_STEP: f32 = 3.0;
/// Halvings placing a crossing of the surface (to an eighth of a step), before the straight
/// line between the last two points.
pub(crate) const BISECTIONS: usize = 3;
/// Water's refractive index.
pub const IOR: f32 = 1.33;
/// Water's absorption per metre of bulk liquid (red first).
pub(crate) const WATER: V3 = [0.45, 0.12, 0.06];
/// A dye's absorption per metre of bulk liquid of the colours it is not.
pub(crate) const DYE: f32 = 2.2;
/// The light the liquid scatters per metre of bulk liquid.
pub(crate) const SCATTER: f32 = 1.5;
/// The light scattered, as a share of the sun's.
pub(crate) const GLOW: f32 = 0.7;
/// The sun's light.
pub(crate) const SUN: V3 = [1.3, 1.22, 1.1];
/// The sky's light on the floor.
pub(crate) const AMBIENT: f32 = 0.15;
/// The sky at the horizon and straight up.
pub(crate) const HORIZON: V3 = [0.05, 0.055, 0.075];
pub(crate) const ZENITH: V3 = [0.006, 0.008, 0.02];
/// The floor's checker squares, m, and their two albedos.
pub(crate) const TILE: f32 = 0.3;
pub(crate) const ALBEDO: [f32; 2] = [0.2, 0.07];
/// The floor fades into the horizon over this distance, m.
pub(crate) const FOG: f32 = 14.0;
/// How much light the glass lets through, and its edges' light.
pub(crate) const GLASS: f32 = 0.9;
pub(crate) const EDGE: f32 = 0.35;
/// The edges' half width, pixels of the light.
pub(crate) const EDGE_PIXELS: f32 = 1.5;
/// The liquid's shadow: optical depth per metre of bulk liquid.
pub(crate) const SHADOW: f32 = 1.6;
/// The shadow map's texel and its rays' step, in voxels (the shadow is soft), and the density
/// below which a brick casts none.
pub(crate) const SHADOW_TEXEL: f32 = 2.0;
pub(crate) const SHADOW_STEP: f32 = 1.5;
pub(crate) const SHADOW_EMPTY: f32 = 0.05;
/// A ball's shadow: as dark as liquid this many times denser than the bulk.
pub(crate) const BALL_SHADOW: f32 = 3.0;

/// How the ray march trades quality for time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quality {
    /// The light's size as a share of the frame's, 0.125..=1.
    pub scale: f32,
    /// Most rays a frame (0: no limit): the scale shrinks to keep within it.
    pub max_rays: usize,
    /// The volume's voxel, in the liquid's particle spacings (the model splats its particles
    /// into voxels this size).
    pub voxel: f32,
}

impl Quality {
    /// Offline renders: half the frame's size across and up (a quarter of its pixels); the
    /// display's resampling and bloom bring it to the frame.
    pub const RENDER: Self = Self {
        scale: 0.5,
        max_rays: 0,
        voxel: 0.75,
    };
    /// Playing: as for a render, but at most 320 x 180 rays, so the editor and the output
    /// window keep their frame rate at any size.
    pub const LIVE: Self = Self {
        scale: 0.5,
        max_rays: 320 * 180,
        voxel: 0.75,
    };

    /// The light's size for a `width x height` frame.
    pub fn light_size(&self, width: usize, height: usize) -> (usize, usize) {
        let mut s = self.scale.clamp(0.125, 1.0);
        let rays = (width * height) as f32 * s * s;
        if self.max_rays > 0 && rays > self.max_rays as f32 {
            s *= (self.max_rays as f32 / rays).sqrt();
        }
        (
            ((width as f32 * s).round() as usize).max(1),
            ((height as f32 * s).round() as usize).max(1),
        )
    }
}

impl Default for Quality {
    fn default() -> Self {
        Self::RENDER
    }
}

/// The ray march's output and buffers, kept between frames.
#[derive(Default)]
pub struct RayMarch {
    /// The light, three planes, rows bottom first, [`RayMarch::size`].
    pub planes: [Vec<f32>; 3],
    /// The light's size.
    pub size: (usize, usize),
    shadow: Shadow,
}

/// A ray in the tank's frame, in voxel units: `q(t) = origin + dir * t`, t in voxels.
#[derive(Clone, Copy)]
struct Ray {
    origin: V3,
    dir: V3,
}

impl Ray {
    #[inline]
    fn at(&self, t: f32) -> V3 {
        add(self.origin, scale(self.dir, t))
    }
}

/// Where a ray enters and leaves a box `[0, dims]` (t in the ray's units), and the axis of the
/// face it enters by.
#[inline]
fn slab(ray: &Ray, dims: V3) -> Option<(f32, f32, usize)> {
    if !ray.origin.iter().chain(&ray.dir).all(|v| v.is_finite()) {
        return None;
    }
    let (mut t0, mut t1, mut axis) = (0.0f32, f32::INFINITY, usize::MAX);
    for (c, side) in dims.into_iter().enumerate() {
        let (o, d) = (ray.origin[c], ray.dir[c]);
        if d.abs() < 1e-12 {
            if o < 0.0 || o > side {
                return None;
            }
            continue;
        }
        let (a, b) = ((0.0 - o) / d, (side - o) / d);
        let (near, far) = if a < b { (a, b) } else { (b, a) };
        if near > t0 {
            t0 = near;
            axis = c;
        }
        t1 = t1.min(far);
    }
    (t0 < t1 && t1.is_finite()).then_some((t0, t1, axis))
}

/// Mirror `d` about the plane of normal `n`.
#[inline]
fn reflect(d: V3, n: V3) -> V3 {
    sub(d, scale(n, 2.0 * dot(d, n)))
}

/// Bend `d` through a surface of normal `n` (facing against `d`) from index ratio `eta`
/// (from over to): `None` past the critical angle.
#[inline]
fn refract(d: V3, n: V3, eta: f32) -> Option<V3> {
    let cos_i = -dot(d, n);
    let k = 1.0 - eta * eta * (1.0 - cos_i * cos_i);
    (k >= 0.0).then(|| add(scale(d, eta), scale(n, eta * cos_i - k.sqrt())))
}

/// Schlick's reflectance of water at incidence cosine `c`.
#[inline]
fn fresnel(c: f32) -> f32 {
    let r0 = ((1.0 - IOR) / (1.0 + IOR)).powi(2);
    let m = (1.0 - c.clamp(0.0, 1.0)).powi(5);
    r0 + (1.0 - r0) * m
}

/// What the renderer sees along a ray: the scene's fixed parts and the volume.
struct View<'a> {
    vol: &'a Volume,
    scene: &'a Scene,
    /// The balls, in voxels.
    balls: &'a [Ball],
    shadow: &'a Shadow,
    /// The box in voxels.
    dims: V3,
    /// A pixel's angle (radians), for edges a pixel wide.
    pixel: f32,
}

impl View<'_> {
    /// The sky in direction `d` (unit, world), with the sun's disc.
    fn sky(&self, d: V3) -> V3 {
        let up = d[1].clamp(0.0, 1.0).sqrt();
        let mut c = add(scale(HORIZON, 1.0 - up), scale(ZENITH, up));
        let s = dot(d, self.scene.sun).max(0.0);
        // A broad glow round the sun (what the liquid's surface mirrors most), and its disc.
        let s8 = (s * s) * (s * s);
        let disc = s8 * s8 * 0.25 + pow256(s) * 0.6 + pow256(pow256(s)) * 4.0;
        c = add(c, scale(SUN, disc));
        c
    }

    /// The floor and the sky seen from world point `o` along `d`.
    fn backdrop(&self, o: V3, d: V3) -> V3 {
        if d[1] < -1e-5 && o[1] >= -1e-3 {
            let t = (-o[1] / d[1]).max(0.0);
            let p = add(o, scale(d, t));
            // The checker averaged over the pixel's footprint on the floor: sharp edges up
            // close, its mean where a pixel covers several squares.
            let footprint = self.pixel * t / (-d[1]).max(0.05);
            let light = filtered_checker(p[0] / TILE, p[2] / TILE, footprint / TILE);
            let albedo = ALBEDO[1] + (ALBEDO[0] - ALBEDO[1]) * light;
            let sun = self.scene.sun[1].max(0.0) * self.shadow.at(p[0], p[2]);
            let lit = [0, 1, 2].map(|c| albedo * (SUN[c] * sun + AMBIENT));
            let fade = (-t / FOG).pexp();
            add(
                scale(self.sky([d[0], 0.0, d[2]]), 1.0 - fade),
                scale(lit, fade),
            )
        } else {
            self.sky(d)
        }
    }

    /// The light along the camera's ray from `o` (world) in direction `d` (unit).
    fn shade(&self, o: V3, d: V3) -> V3 {
        let tank = &self.scene.tank;
        let voxel = self.vol.voxel;
        let ray = Ray {
            origin: scale(tank.to_local(o), 1.0 / voxel),
            dir: tank.dir_to_local(d),
        };
        let Some((t0, t1, axis)) = slab(&ray, self.dims) else {
            return self.backdrop(o, d);
        };
        let glass = |c: V3| {
            let edge = self.edge(&ray, t0, t1);
            add(scale(c, GLASS), [edge * EDGE; 3])
        };
        // A ball in front of the liquid's surface hides it.
        let ball = self.ball_hit(&ray, t0, t1);
        match self.surface(&ray, t0, ball.map_or(t1, |b| b.0), axis) {
            Some((t, n)) => glass(self.liquid(&ray, t, n)),
            None => match ball {
                Some((t, i)) => glass(self.ball(ray.at(t), i, d)),
                None => {
                    let exit = tank.to_world(scale(ray.at(t1), voxel));
                    glass(self.backdrop(exit, d))
                }
            },
        }
    }

    /// The first ball `ray` meets between `t0` and `t1` (voxels): where, and which.
    fn ball_hit(&self, ray: &Ray, t0: f32, t1: f32) -> Option<(f32, usize)> {
        let mut best: Option<(f32, usize)> = None;
        for (i, b) in self.balls.iter().enumerate() {
            let oc = sub(ray.origin, b.centre);
            let half = dot(oc, ray.dir);
            let c = dot(oc, oc) - b.radius * b.radius;
            let disc = half * half - c;
            if c <= 0.0 || disc < 0.0 {
                // Starting inside it, or missing it.
                continue;
            }
            let t = -half - disc.sqrt();
            if t >= t0 && t <= t1 && best.is_none_or(|(bt, _)| t < bt) {
                best = Some((t, i));
            }
        }
        best
    }

    /// The light of ball `i` at voxel point `q`, seen along world direction `d`: its colour
    /// lit by the sun and the sky, and a glossy reflection (a plastic toy's).
    fn ball(&self, q: V3, i: usize, d: V3) -> V3 {
        let tank = &self.scene.tank;
        let b = &self.balls[i];
        let n = tank.dir_to_world(normalize_or(sub(q, b.centre), [0.0, 1.0, 0.0]));
        let hit = tank.to_world(scale(q, self.vol.voxel));
        let sun = dot(n, self.scene.sun).max(0.0);
        let sky = 0.5 + 0.5 * n[1];
        let diffuse = [0, 1, 2].map(|c| b.color[c] * (SUN[c] * sun * 0.8 + AMBIENT * 2.0 * sky));
        let mirror = reflect(d, n);
        let f = 0.04 + 0.96 * (1.0 - (-dot(d, n)).clamp(0.0, 1.0)).powi(5);
        let spec = pow256(dot(mirror, self.scene.sun).max(0.0));
        let reflected = add(self.backdrop(hit, mirror), scale(SUN, spec * 2.0));
        add(scale(diffuse, 1.0 - f), scale(reflected, f))
    }

    /// The light of the liquid's surface hit at ray parameter `t` with normal `n` (tank frame).
    fn liquid(&self, ray: &Ray, t: f32, n: V3) -> V3 {
        let tank = &self.scene.tank;
        let voxel = self.vol.voxel;
        let q = ray.at(t);
        let hit = tank.to_world(scale(q, voxel));
        let cos = (-dot(ray.dir, n)).clamp(0.0, 1.0);
        let f = fresnel(cos);
        let mirror = tank.dir_to_world(reflect(ray.dir, n));
        let spec = pow256(dot(mirror, self.scene.sun).max(0.0));
        let reflected = add(self.backdrop(hit, mirror), scale(SUN, spec * 3.0));
        let Some(bent) = refract(ray.dir, n, 1.0 / IOR) else {
            return reflected;
        };
        let through = self.through(Ray {
            origin: q,
            dir: bent,
        });
        add(scale(reflected, f), scale(through, 1.0 - f))
    }

    /// The light coming back along `ray` from inside the liquid: what lies behind it, absorbed
    /// by what it crosses, plus the light it scatters.
    fn through(&self, ray: Ray) -> V3 {
        let tank = &self.scene.tank;
        let Crossing {
            mass,
            dye,
            exit,
            dir,
            ball,
        } = self.cross(ray);
        let world = tank.to_world(scale(exit, self.vol.voxel));
        let along = normalize_or(tank.dir_to_world(dir), [0.0, -1.0, 0.0]);
        let behind = match ball {
            Some(i) => self.ball(exit, i, along),
            None => self.backdrop(world, along),
        };
        let mean = if mass > 1e-6 {
            scale(dye, 1.0 / mass)
        } else {
            [1.0; 3]
        };
        // A dye glows by its saturation: clear water barely, a note's colour fully.
        let top = mean[0].max(mean[1]).max(mean[2]);
        let low = mean[0].min(mean[1]).min(mean[2]);
        let saturation = if top > 1e-6 { (top - low) / top } else { 0.0 };
        let glow = (1.0 - (-SCATTER * mass).pexp()) * GLOW * (0.1 + 0.9 * saturation);
        let light = self.scene.sun[1].max(0.0) + AMBIENT;
        let passed = transmittance(mass, dye);
        [0, 1, 2].map(|c| behind[c] * passed[c] + mean[c].clamp(0.0, 1.0) * SUN[c] * glow * light)
    }

    /// Follow `ray` (starting inside the liquid) until it leaves: through the glass, or
    /// through the surface (bent, or mirrored past the critical angle).
    fn cross(&self, ray: Ray) -> Crossing {
        let vol = self.vol;
        let voxel = vol.voxel;
        let step = INSIDE_STEP;
        let far = slab(&ray, self.dims).map_or(0.0, |s| s.1);
        // A ball under the surface ends the path.
        let ball = self.ball_hit(&ray, 0.0, far);
        let far = ball.map_or(far, |b| b.0);
        let (mut mass, mut dye) = (0.0f32, [0.0f32; 3]);
        // Segments of `step` from the start, each weighed by the density at its middle; the
        // last one ends at the glass or at the surface.
        let mut start = 0.0;
        // The last point sampled (the start, on the surface, at first) and its density.
        let (mut last, mut inside) = (0.0, SURFACE);
        let (exit, dir, hit) = loop {
            if start >= far {
                // On a ball, or out through the glass, unbent.
                break (ray.at(far), ray.dir, ball.map(|b| b.1));
            }
            let len = step.min(far - start);
            let mid = start + 0.5 * len;
            let (d, c) = vol.sample(ray.at(mid));
            if d < SURFACE {
                // Out through the surface, between the last middle and this one: place it,
                // count the liquid up to it, then bend (or mirror) the ray.
                let hi = self.crossing(&ray, (last, inside), (mid, d));
                let part = (hi - start).max(0.0);
                mass += inside * part;
                dye = add(dye, scale(c, part * inside / d.max(1e-6)));
                let p = ray.at(hi);
                let n = self.normal(p);
                let out = refract(ray.dir, scale(n, -1.0), IOR).unwrap_or(reflect(ray.dir, n));
                break (p, out, None);
            }
            mass += d * len;
            dye = add(dye, scale(c, len));
            (last, inside) = (mid, d);
            start += len;
        };
        Crossing {
            mass: mass * voxel,
            dye: scale(dye, voxel),
            exit,
            dir,
            ball: hit,
        }
    }

    /// The first crossing of the liquid's surface along `ray` between `t0` and `t1` (voxels),
    /// and the surface's normal there (out of the liquid, tank frame).
    fn surface(&self, ray: &Ray, t0: f32, t1: f32, axis: usize) -> Option<(f32, V3)> {
        let vol = self.vol;
        let start = ray.at(t0);
        if t0 > 0.0 && axis < 3 && vol.density_at(start) >= SURFACE {
            // Against the glass: the face it enters by.
            let mut n = [0.0; 3];
            n[axis] = -ray.dir[axis].signum();
            return Some((t0, n));
        }
        let inv = inverse(ray.dir);
        let mut t = t0;
        // The last point sampled outside the liquid, and its density.
        let mut below = t0;
        let mut last = 0.0;
        while t < t1 {
            let q = ray.at(t);
            if vol.brick_at(q) < SURFACE {
                // Empty brick: on to where the ray leaves it.
                t = brick_exit(inv, q, t);
                below = t;
                last = 0.0;
                continue;
            }
            let d = vol.density_at(q);
            if d >= SURFACE {
                let hit = self.crossing(ray, (below, last), (t, d));
                return Some((hit, self.normal(ray.at(hit))));
            }
            last = d;
            below = t;
            t += SURFACE_STEP;
        }
        None
    }

    /// Where the density along `ray` crosses [`SURFACE`] between `lo` and `hi` (ray
    /// parameters, each with its density, on either side of it): [`BISECTIONS`] halvings, then
    /// the straight line between the last two. In the test of a ball of water the floor point
    /// seen through it then lands where twenty halvings put it, to 0.1 mm; six halvings alone
    /// took twice the samples and were 0.6 mm off (2026-11-28).
    fn crossing(
        &self,
        ray: &Ray,
        (mut lo, mut d_lo): (f32, f32),
        (mut hi, mut d_hi): (f32, f32),
    ) -> f32 {
        let liquid_hi = d_hi >= SURFACE;
        for _ in 0..BISECTIONS {
            let mid = 0.5 * (lo + hi);
            let d = self.vol.density_at(ray.at(mid));
            if (d >= SURFACE) == liquid_hi {
                (hi, d_hi) = (mid, d);
            } else {
                (lo, d_lo) = (mid, d);
            }
        }
        let span = d_hi - d_lo;
        let f = if span.abs() > 1e-9 {
            ((SURFACE - d_lo) / span).clamp(0.0, 1.0)
        } else {
            1.0
        };
        lo + (hi - lo) * f
    }

    /// The surface's normal at voxel point `q`: against the density's gradient.
    fn normal(&self, q: V3) -> V3 {
        let v = self.vol;
        let g = [0, 1, 2].map(|c| {
            let (mut a, mut b) = (q, q);
            a[c] += 1.0;
            b[c] -= 1.0;
            v.density_at(b) - v.density_at(a)
        });
        normalize_or(g, [0.0, 1.0, 0.0])
    }

    /// How much of a tank edge the ray passes within a pixel of, 0..1 (where it enters or
    /// leaves the box).
    fn edge(&self, ray: &Ray, t0: f32, t1: f32) -> f32 {
        let mut best = 0.0f32;
        for t in [t0, t1] {
            let q = ray.at(t);
            // Distance to the box's edges: the two smallest distances to a face of the three
            // axes (the face it lies on is at distance 0).
            let mut gaps = [0, 1, 2].map(|c| q[c].min(self.dims[c] - q[c]).abs());
            gaps.sort_unstable_by(f32::total_cmp);
            let eye = dot(
                sub(
                    self.scene.camera.eye,
                    self.scene.tank.to_world(scale(q, self.vol.voxel)),
                ),
                sub(
                    self.scene.camera.eye,
                    self.scene.tank.to_world(scale(q, self.vol.voxel)),
                ),
            )
            .sqrt();
            let width = (eye * self.pixel / self.vol.voxel).max(1e-6);
            best = best.max((1.0 - gaps[1] / (EDGE_PIXELS * width)).clamp(0.0, 1.0));
        }
        best
    }
}

/// What a ray crossed inside the liquid.
struct Crossing {
    /// The density along the path, m of bulk liquid.
    mass: f32,
    /// The dye along the path, weighted by the density.
    dye: V3,
    /// Where and which way it left (tank frame; the point in voxels).
    exit: V3,
    dir: V3,
    /// The ball it ended on, if it did.
    ball: Option<usize>,
}

/// The share of each colour let through `mass` m of bulk liquid holding `dye` (the dye
/// weighted by the density along the path): water's own absorption and the dye's of the colours
/// it is not (Beer-Lambert).
pub fn transmittance(mass: f32, dye: V3) -> V3 {
    [0, 1, 2].map(|c| (-(mass * WATER[c] + DYE * (mass - dye[c]).max(0.0))).pexp())
}

/// `1 / d` along each axis, infinite along an axis `d` does not move on: for
/// [`brick_exit`], which a ray calls once per brick it skips (166 000 skips for the 57 600 rays
/// of a 640x360 frame of the bench's settled pool, 2026-11-28), so its divisions are made once
/// per ray.
#[inline]
fn inverse(d: V3) -> V3 {
    d.map(|x| {
        if x.abs() > 1e-12 {
            1.0 / x
        } else {
            f32::INFINITY
        }
    })
}

/// Where a ray along a direction of inverse `inv` ([`inverse`]), at `t` (point `q`), leaves
/// the brick holding `q` (a little past it).
#[inline]
fn brick_exit(inv: V3, q: V3, t: f32) -> f32 {
    let mut exit = f32::INFINITY;
    for (k, at) in inv.into_iter().zip(q) {
        if k.is_finite() {
            let b = floor32(at.max(0.0) / BRICK as f32);
            let face = (b + if k > 0.0 { 1.0 } else { 0.0 }) * BRICK as f32;
            exit = exit.min((face - at) * k);
        }
    }
    t + exit.max(0.0) + 1e-3
}

/// The box the rays march through, in voxels: the tank (a volume of `dims` voxels of `voxel` m
/// may reach a little past it).
pub(crate) fn march_box(dims: [usize; 3], voxel: f32, scene: &Scene) -> V3 {
    [0, 1, 2].map(|c| (scene.tank.size[c] / voxel).min(dims[c] as f32))
}

/// The share of the light squares of a unit checker over a box `w` wide round `(x, z)`
/// (Inigo Quilez's filtered checker: the box filter's integral in closed form).
#[inline]
fn filtered_checker(x: f32, z: f32, w: f32) -> f32 {
    let w = w.max(1e-4);
    let tri = |p: f32| {
        let f = |v: f32| ((v * 0.5) - floor32(v * 0.5) - 0.5).abs();
        2.0 * (f(p - 0.5 * w) - f(p + 0.5 * w)) / w
    };
    0.5 - 0.5 * tri(x) * tri(z)
}

/// `x^256`.
#[inline]
fn pow256(x: f32) -> f32 {
    let mut y = x;
    for _ in 0..8 {
        y *= y;
    }
    y
}

impl RayMarch {
    /// March the liquid in `vol` through `scene` for a frame of `width x height` at
    /// `quality`: the light into [`RayMarch::planes`].
    pub fn draw(
        &mut self,
        vol: &Volume,
        (scene, balls): (&Scene, &[Ball]),
        (width, height): (usize, usize),
        quality: Quality,
        pool: &rayon::ThreadPool,
    ) {
        let (w, h) = quality.light_size(width, height);
        self.size = (w, h);
        for p in &mut self.planes {
            p.clear();
            p.resize(w * h, 0.0);
        }
        if vol.dims.contains(&0) {
            return;
        }
        // The balls in voxels.
        let balls: Vec<Ball> = balls
            .iter()
            .filter(|b| b.centre.iter().all(|x| x.is_finite()) && b.radius > 0.0)
            .map(|b| Ball {
                centre: scale(b.centre, 1.0 / vol.voxel),
                radius: b.radius / vol.voxel,
                color: b.color.map(|c| c.clamp(0.0, 1.0)),
            })
            .collect();
        pool.install(|| self.shadow.draw(vol, scene, &balls));
        let lens = Lens::new(&scene.camera, (w, h));
        let view = View {
            vol,
            scene,
            balls: &balls,
            shadow: &self.shadow,
            dims: march_box(vol.dims, vol.voxel, scene),
            pixel: 2.0 * lens.half / h as f32,
        };
        let eye = scene.camera.eye;
        let [r, g, b] = &mut self.planes;
        pool.install(|| {
            r.par_chunks_mut(w)
                .zip(g.par_chunks_mut(w))
                .zip(b.par_chunks_mut(w))
                .enumerate()
                .for_each(|(y, ((r, g), b))| {
                    for x in 0..w {
                        let c = view.shade(eye, lens.ray(x, y));
                        let c = c.map(|v| if v.is_finite() { v.max(0.0) } else { 0.0 });
                        (r[x], g[x], b[x]) = (c[0], c[1], c[2]);
                    }
                });
        });
    }
}

/// The camera's rays for a light of a given size.
pub struct Lens {
    pub(crate) right: V3,
    pub(crate) up: V3,
    pub(crate) forward: V3,
    /// The tangent of half the vertical field of view.
    pub(crate) half: f32,
    size: (usize, usize),
}

impl Lens {
    pub fn new(camera: &Camera, (w, h): (usize, usize)) -> Self {
        let (right, up, forward) = camera.basis();
        let half = (0.5 * camera.fov_y.to_radians()).ptan();
        Self {
            right,
            up,
            forward,
            half,
            size: (w.max(1), h.max(1)),
        }
    }

    /// The ray (unit, world) through the middle of pixel `(x, y)`, rows bottom first.
    #[inline]
    pub fn ray(&self, x: usize, y: usize) -> V3 {
        let (w, h) = (self.size.0 as f32, self.size.1 as f32);
        let v = ((y as f32 + 0.5) / h * 2.0 - 1.0) * self.half;
        let u = ((x as f32 + 0.5) / w * 2.0 - 1.0) * self.half * w / h;
        normalize_or(
            add(self.forward, add(scale(self.right, u), scale(self.up, v))),
            self.forward,
        )
    }
}

mod shadow;
#[cfg(test)]
mod tests;

use shadow::Shadow;
pub(crate) use shadow::ShadowRect;
