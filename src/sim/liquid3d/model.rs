//! The 3D liquid as a [`Model`] on the CPU: the engine, the editor and the renderer drive it as
//! they drive the 2D fluids.
//!
//! - **Tank.** A box 16 : 9 : 9 (across, up, deep) holding the particle budget at
//!   [`FILL`] of its height; its size follows the budget (the liquid is scaled with it). A new
//!   or reset model holds a calm pool of [`POOL`] of the budget in pale water.
//! - **Sources** (model-neutral splats in canvas units, the canvas' height the tank's), turned
//!   into [`Action`]s either backend carries out: a splat with dye (a note) drops a ball of
//!   particles in its colour from above its place (x across the tank by the canvas' x, depth
//!   by the splat's depth: the note's channel), its size by the splat's radius and amount; past
//!   the budget the oldest particles go. A splat without dye is a shock that pushes the liquid
//!   near its place (through the whole depth) along its force; a radial one (the mouse) pulls
//!   the liquid towards its place, or pushes it away. Drums play the tank: the kick lifts the
//!   liquid on the floor under it, the snare jerks the whole tank sideways (one way, then the
//!   other), hi-hats and cymbals throw drops of their colour up from the surface; toms and
//!   other percussion drop balls as notes do.
//! - **Knobs.** The 2D liquid's knobs scaled to the 3D liquid's (their defaults meet): the
//!   gravity's strength and direction (the tilt and the beat's swing: the tank turns, gravity
//!   stays down), stiffness, near pressure, viscosity, bounce, drag, budget.
//! - **Picture.** Every frame the particles are splatted into a volume ([`splat`]) and the
//!   volume is ray-marched ([`crate::display::cpu::raymarch`]) from a camera orbiting the tank;
//!   the light goes through the display's picture (exposure, tone, bloom, dither) as every
//!   model's does.

use super::backend::{FrameView, LiquidBackend};
use super::floaters::{Floater, MAX_FLOATERS, NEAR, RADIUS_H, TAKE};
use super::sources::{Action, Impulse};
use super::splat::splat;
use super::{Knobs, Liquid, spacing};
use crate::display::cpu::colorize::Source;
use crate::display::cpu::picture::{HeldFrame, Picture};
use crate::display::cpu::raymarch::{Quality, RayMarch};
use crate::display::volume::{Ball, Camera, Scene, Tank, Volume, normalize_or};
use crate::fluid::{ColorMode, Drum, Look, Orbit, Splat, SplatShape};
use crate::gpu::GpuError;
use crate::kernels::portable::Portable;
use crate::sim::CpuError;
use crate::sim::model::{Model, Resolution, Snapshot};
use crate::sim::obstacles::Mask;
use crate::sim::particles::sources::Spread;
use crate::sim::particles::substeps;
use crate::sim::{Activity, StepInput};

/// Particles for the 2D liquid's default budget (6 000): the 3D liquid's default.
pub const DEFAULT_PARTICLES: usize = 16_384;
/// The 2D liquid's default budget, which the 3D liquid's default stands for.
const BUDGET_2D: f32 = 6_000.0;
/// The tank's proportions.
const SHAPE: [f32; 3] = [16.0, 9.0, 9.0];
/// The share of the tank's height the budget fills.
pub const FILL: f32 = 0.45;
/// The share of the budget a new tank's pool holds.
pub const POOL: f32 = 0.7;
/// The pool's colour: clear water, a little blue.
pub const WATER: [f32; 3] = [0.85, 0.93, 1.0];
/// Fewest particles the budget allows.
pub const MIN_PARTICLES: usize = 256;
/// Most particles a splat adds.
pub const BURST_MAX: usize = 1_500;
/// The kick's lift: the share of its push (the 2D fluids') it gives the floor's liquid.
const KICK_LIFT: f32 = 0.35;
/// The snare's slosh: the share of its sideways push the whole liquid takes.
const SNARE_SLOSH: f32 = 0.25;
/// Drops a cymbal's spray throws per unit of its dye, and particles per drop (in a cube of two
/// spacings: the liquid's density, and as many as the picture needs to show a drop).
const SPRAY_DROPS: f32 = 2.5;
const SPRAY_DROP: usize = 8;
/// How high a full-strength spray throws, as a share of the tank's height.
const SPRAY_HEIGHT: f32 = 0.3;
/// Most sub-steps per advance (longer frames are slowed down).
const MAX_SUBSTEPS: usize = 6;
/// Below this speed of its flow (tank heights a second) the liquid counts as still.
pub const STILL: f32 = 0.01;
/// The flow's cells are this many smoothing radii wide.
const FLOW_CELL: f32 = 3.0;
/// The flow is measured in cells holding at least this many particles.
const FLOW_MIN: u32 = 40;

/// How far the liquid's flow moved between two probes (`now` and `before`: serial number and
/// place, both by serial number), in tank heights: the 95th percentile over cells of
/// [`FLOW_CELL`] radii of their particles' mean displacement. A liquid of particles never
/// quite rests (at rest they jitter by a few cm/s, each its own way), but the jitter averages
/// out over a cell and the picture, drawn from the particles smoothed, stands still; a slosh
/// or a splash moves whole cells. 1 when the particles are not the same.
fn flow_speed(
    now: &[(u64, [f32; 3])],
    before: &[(u64, [f32; 3])],
    size: [f32; 3],
    radius: f32,
) -> f32 {
    if now.len() != before.len() || now.iter().zip(before).any(|(a, b)| a.0 != b.0) {
        return 1.0;
    }
    let cell = (FLOW_CELL * radius).max(1e-3);
    let dims = size.map(|s| ((s / cell).ceil() as usize).clamp(1, 64));
    let mut sums = vec![([0.0f32; 3], 0u32); dims[0] * dims[1] * dims[2]];
    for (a, b) in now.iter().zip(before) {
        let k = [0, 1, 2].map(|c| ((a.1[c] / cell).max(0.0) as usize).min(dims[c] - 1));
        let s = &mut sums[(k[2] * dims[1] + k[1]) * dims[0] + k[0]];
        for c in 0..3 {
            s.0[c] += a.1[c] - b.1[c];
        }
        s.1 += 1;
    }
    let mut moved: Vec<f32> = sums
        .iter()
        .filter(|s| s.1 >= FLOW_MIN)
        .map(|(d, n)| {
            let m = d.map(|v| v / *n as f32);
            (m[0] * m[0] + m[1] * m[1] + m[2] * m[2]).sqrt()
        })
        .collect();
    if moved.is_empty() {
        return 0.0;
    }
    let k = (moved.len() * 95 / 100).min(moved.len() - 1);
    let (_, p95, _) = moved.select_nth_unstable_by(k, f32::total_cmp);
    *p95 / size[1].max(1e-6)
}

/// The camera's vertical field of view, degrees.
const FOV: f32 = 38.0;
/// Towards the sun: behind the tank and to the left, 38 degrees up, so the liquid mirrors it
/// towards the camera and its shadow falls in front of the tank.
const SUN: [f32; 3] = [-0.25, 0.65, 0.75];

/// The tank for `budget` particles at `target_density`.
pub fn tank_size(budget: usize, target_density: f32) -> [f32; 3] {
    let liquid = budget.max(1) as f32 * spacing(target_density).powi(3);
    let k = libm::cbrtf(liquid / FILL / (SHAPE[0] * SHAPE[1] * SHAPE[2]));
    SHAPE.map(|s| s * k)
}

/// The 3D liquid on the CPU, as a [`Model`].
pub struct Liquid3dModel {
    /// Where the particles live and step.
    backend: Box<dyn LiquidBackend>,
    knobs: Knobs,
    budget: usize,
    drag: f32,
    /// The canvas (its aspect maps splats across the tank).
    cells: (usize, usize),
    /// The tank's tilt, degrees (from the gravity's direction).
    tilt: f32,
    pool: rayon::ThreadPool,
    pending: Vec<Splat>,
    obstacles: Option<Mask>,
    volume: Volume,
    march: RayMarch,
    quality: Quality,
    picture: Picture,
    still: Vec<f32>,
    frame: HeldFrame,
    spread: Spread,
    /// Which way the next snare jerks the tank (+1 right, -1 left): they alternate.
    slosh: f32,
    /// The particles (serial number and place) at the last activity probe, and the simulated
    /// seconds since.
    probe: Vec<(u64, [f32; 3])>,
    since_probe: f32,
}

/// A snapshot of the 3D liquid.
#[derive(Clone)]
struct Liquid3dSnapshot {
    liquid: Liquid,
}

impl Liquid3dModel {
    /// A model on the CPU for a canvas of `cells` (its shape), on `threads` workers (0: one
    /// per core), holding at most `budget` particles
    /// ([`MIN_PARTICLES`]..=[`super::MAX_PARTICLES`]), starting with a calm pool.
    pub fn new(cells: (usize, usize), threads: usize, budget: usize) -> Result<Self, CpuError> {
        Self::with_backend(Box::new(Liquid::new([1.0; 3])), cells, threads, budget)
    }

    /// The same on `backend` (its particles replaced by the pool); the picture is drawn on the
    /// CPU by `threads` workers.
    pub fn with_backend(
        backend: Box<dyn LiquidBackend>,
        cells: (usize, usize),
        threads: usize,
        budget: usize,
    ) -> Result<Self, CpuError> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("dyeflow-liquid3d-{i}"))
            .build()
            .map_err(|source| CpuError::Threads { threads, source })?;
        let budget = budget.clamp(MIN_PARTICLES, super::MAX_PARTICLES);
        let knobs = Knobs::default();
        let mut m = Self {
            backend,
            knobs,
            budget,
            drag: 0.2,
            cells: (cells.0.max(1), cells.1.max(1)),
            tilt: 0.0,
            pool,
            pending: Vec::new(),
            obstacles: None,
            volume: Volume::default(),
            march: RayMarch::default(),
            quality: Quality::default(),
            picture: Picture::default(),
            still: Vec::new(),
            frame: HeldFrame::default(),
            spread: Spread::default(),
            slosh: 1.0,
            probe: Vec::new(),
            since_probe: 0.0,
        };
        *m.backend.liquid_mut() = Liquid::new(tank_size(budget, knobs.target_density));
        m.fill_pool();
        Ok(m)
    }

    /// The particles (on the GPU: read back, waiting for it).
    pub fn liquid(&mut self) -> &Liquid {
        self.backend.liquid()
    }

    /// Take `liquid`'s particles, in its tank (for benches and tests); past the budget the
    /// oldest go.
    pub fn set_liquid(&mut self, liquid: Liquid) {
        let l = self.backend.liquid_mut();
        *l = liquid;
        let excess = l.len().saturating_sub(self.budget);
        l.remove_oldest(excess);
        l.floaters.truncate(MAX_FLOATERS);
    }

    /// The worker threads.
    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// The picture's voxel, m: about `spacings` particle spacings (0.25..=4), fitted so that
    /// the tank (16 : 9 : 9) is a whole number of voxels along every side.
    pub fn voxel(&self, spacings: f32) -> f32 {
        let size = self.backend.size();
        let voxel = spacings.clamp(0.25, 4.0) * spacing(self.knobs.target_density);
        let per = SHAPE[0] * (size[0] / (SHAPE[0] * voxel)).round().max(1.0);
        size[0] / per
    }

    /// The picture of a `width x height` frame at `quality` into `out` (RGBA8, rows top first).
    fn draw(
        &mut self,
        look: &Look,
        (width, height): (usize, usize),
        quality: Quality,
        out: &mut [u8],
    ) {
        assert_eq!(out.len(), width * height * 4, "frame buffer size");
        if width == 0 || height == 0 {
            return;
        }
        let voxel = self.voxel(quality.voxel);
        let scene = self.scene(&look.orbit);
        let rho0 = self.knobs.target_density;
        let (backend, volume, march) = (&mut self.backend, &mut self.volume, &mut self.march);
        let balls: Vec<Ball> = self.pool.install(|| {
            let liquid = backend.liquid();
            splat(liquid, rho0, voxel, volume);
            liquid
                .floaters
                .iter()
                .map(|f| Ball {
                    centre: f.pos,
                    radius: f.radius,
                    color: f.color,
                })
                .collect()
        });
        march.draw(
            volume,
            (&scene, &balls),
            (width, height),
            quality,
            &self.pool,
        );
        let (w, h) = march.size;
        let planes = &march.planes;
        let src = Source::dye(w, h, &mut self.still, [&planes[0], &planes[1], &planes[2]]);
        let look = Look {
            color_mode: ColorMode::Dye,
            ..*look
        };
        let picture = &mut self.picture;
        self.pool
            .install(|| picture.render(&src, &look, width, height, out));
    }

    /// Encode a `width x height` frame at `quality` on a backend that draws its own picture
    /// (the GPU's); its serial, or `None` (an empty size, a frame skipped).
    fn encode_frame(
        &mut self,
        look: &Look,
        (width, height): (usize, usize),
        quality: Quality,
    ) -> Option<u64> {
        if width == 0 || height == 0 {
            return None;
        }
        let scene = self.scene(&look.orbit);
        let view = FrameView {
            look,
            scene: &scene,
            voxel: self.voxel(quality.voxel),
            target_density: self.knobs.target_density,
            size: (width, height),
            quality,
            colours: &[],
        };
        let backend = &mut self.backend;
        self.pool.install(|| backend.encode_frame(&view))
    }

    /// Set how the picture trades quality for time (offline renders; playing uses
    /// [`Quality::LIVE`]).
    pub fn set_quality(&mut self, quality: Quality) {
        self.quality = quality;
    }

    /// The scene the picture shows: the camera round the tank where `orbit` puts it, the tank
    /// tilted by the gravity.
    pub fn scene(&self, orbit: &Orbit) -> Scene {
        let size = self.backend.size();
        let tank = Tank::standing(size, self.tilt);
        let centre = tank.centre();
        let target = [centre[0], 0.8 * centre[1], centre[2]];
        let o = orbit.sanitized();
        Scene {
            camera: Camera::orbit(target, o.yaw, o.pitch, o.distance * size[0], FOV),
            tank,
            sun: normalize_or(SUN, [0.0, 1.0, 0.0]),
        }
    }

    /// A calm pool of [`POOL`] of the budget: particles on a lattice at the target density's
    /// spacing, from the floor up.
    fn fill_pool(&mut self) {
        let liquid = self.backend.liquid_mut();
        liquid.clear();
        let size = liquid.size();
        let spacing = spacing(self.knobs.target_density);
        let want = (self.budget as f32 * POOL) as usize;
        let (nx, nz) = (
            ((size[0] / spacing) as usize).max(1),
            ((size[2] / spacing) as usize).max(1),
        );
        let (ox, oz) = (
            0.5 * (size[0] - nx as f32 * spacing),
            0.5 * (size[2] - nz as f32 * spacing),
        );
        'fill: for j in 0.. {
            let y = (j as f32 + 0.5) * spacing;
            if y > size[1] {
                break;
            }
            for k in 0..nz {
                for i in 0..nx {
                    if liquid.len() >= want {
                        break 'fill;
                    }
                    let p = [
                        ox + (i as f32 + 0.5) * spacing,
                        y,
                        oz + (k as f32 + 0.5) * spacing,
                    ];
                    liquid.add(p, [0.0; 3], WATER);
                }
            }
        }
        let count = liquid.floaters.len();
        liquid.floaters.clear();
        self.set_floaters(count);
    }

    /// Make the floaters `count` (at most [`MAX_FLOATERS`]): new ones drop in from above the
    /// surface, spread across the tank and staggered in depth; the last ones go first.
    fn set_floaters(&mut self, count: usize) {
        let count = count.min(MAX_FLOATERS);
        if self.backend.floaters().len() == count {
            return;
        }
        let radius = RADIUS_H * self.knobs.radius;
        let spacing = spacing(self.knobs.target_density);
        let liquid = self.backend.liquid_mut();
        let size = liquid.size();
        let level = liquid.len() as f32 * spacing.powi(3) / (size[0] * size[2]).max(1e-6);
        liquid.floaters.truncate(count);
        while liquid.floaters.len() < count {
            let i = liquid.floaters.len();
            let across = (i as f32 + 0.5) / count as f32;
            let deep = if i.is_multiple_of(2) { 0.35 } else { 0.65 };
            let p = [
                size[0] * across,
                (level + 2.0 * radius).min(size[1] - radius),
                size[2] * deep,
            ];
            liquid.floaters.push(Floater::new(p, radius));
        }
    }

    /// Take the step's liquid knobs (the 2D liquid's, scaled; see the module's header).
    fn set_knobs(&mut self, l: &crate::fluid::Liquid) {
        let d2 = crate::fluid::Liquid::default();
        let d3 = Knobs::default();
        let clean = |x: f32, or: f32| if x.is_finite() { x } else { or };
        let [gx, gy] = [clean(l.gravity[0], 0.0), clean(l.gravity[1], d2.gravity[1])];
        let strength = gx.phypot(gy) / d2.gravity[1].abs() * d3.gravity[1].abs();
        // The tank turns with the gravity's direction (the tilt knob, the beat's swing); in its
        // own frame gravity is turned the other way.
        self.tilt = if strength > 0.0 {
            libm::atan2f(-gx, -gy).to_degrees()
        } else {
            0.0
        };
        let ratio = |x: f32, d: f32| clean(x, d).max(0.0) / d;
        self.knobs = Knobs {
            gravity: [gx, gy, 0.0].map(|g| g / d2.gravity[1].abs() * d3.gravity[1].abs()),
            pressure: d3.pressure * ratio(l.stiffness, d2.stiffness),
            near_pressure: d3.near_pressure * ratio(l.near, d2.near),
            viscosity: d3.viscosity * ratio(l.viscosity, d2.viscosity),
            wall_bounce: d3.wall_bounce * ratio(l.bounce, d2.bounce),
            ..d3
        }
        .sanitized();
        self.drag = clean(l.drag, d2.drag).clamp(0.0, 100.0);
        let budget = (l.budget as f32 / BUDGET_2D * DEFAULT_PARTICLES as f32) as usize;
        let budget = budget.clamp(MIN_PARTICLES, super::MAX_PARTICLES);
        if budget != self.budget {
            self.budget = budget;
            let liquid = self.backend.liquid_mut();
            liquid.resize_tank(tank_size(budget, self.knobs.target_density));
            let excess = liquid.len().saturating_sub(budget);
            liquid.remove_oldest(excess);
        }
        self.set_floaters(l.floaters.min(MAX_FLOATERS as u32) as usize);
    }

    /// Apply the queued sources (past the budget the oldest particles go).
    fn apply_sources(&mut self) {
        // The notes tint the floaters they land near: where they are now (and the next copy
        // of their places is made only once this one is read: every frame).
        self.backend.refresh_floaters();
        let pending = std::mem::take(&mut self.pending);
        let actions: Vec<Action> = pending.iter().filter_map(|s| self.plan(s)).collect();
        self.pending = pending;
        self.pending.clear();
        if !actions.is_empty() {
            let (backend, budget) = (&mut self.backend, self.budget);
            self.pool.install(|| backend.act(&actions, budget));
        }
    }

    /// A cymbal's spray at `x` across the tank: drops of its colour (small balls of particles:
    /// one particle alone is too thin a wisp to show) thrown up from the liquid's surface, more
    /// and higher for a louder hit.
    fn spray(&mut self, x: f32, s: &Splat) -> Action {
        let size = self.backend.size();
        let spacing = spacing(self.knobs.target_density);
        // The surface of the liquid at rest.
        let level = self.backend.len() as f32 * spacing.powi(3) / (size[0] * size[2]).max(1e-6);
        let y = (level + 1.5 * spacing).clamp(0.0, size[1]);
        let loud = s.amount.clamp(0.0, 4.0);
        let drops = ((SPRAY_DROPS * loud).round() as usize).clamp(1, 12);
        // Thrown up to about a third of the tank's height above the surface at full strength.
        let g = self.knobs.gravity[1].abs().max(0.1);
        let speed = (2.0 * g * SPRAY_HEIGHT * size[1] * (0.4 + 0.6 * loud.min(1.5))).sqrt();
        let colour = s.color.map(|c| c.clamp(0.0, 1.0));
        let mut fresh = Vec::with_capacity(drops * SPRAY_DROP);
        for _ in 0..drops {
            let (a, b, c, d) = (
                self.spread.draw(),
                self.spread.draw(),
                self.spread.draw(),
                self.spread.draw(),
            );
            let centre = [
                (x + (a - 0.5) * 4.0 * spacing).clamp(0.0, size[0]),
                y,
                size[2] * (0.3 + 0.4 * b),
            ];
            let up = speed * (0.6 + 0.4 * c);
            let v = [(d - 0.5) * 0.6 * up, up, (b - 0.5) * 0.4 * up];
            for _ in 0..SPRAY_DROP {
                let (u, w, r) = (self.spread.draw(), self.spread.draw(), self.spread.draw());
                let p = [u, w, r].map(|k| (k - 0.5) * 2.0 * spacing);
                let p = [0, 1, 2].map(|k| (centre[k] + p[k]).clamp(0.0, size[k]));
                fresh.push((p, v, colour));
            }
        }
        Action::Burst(fresh)
    }

    /// What one source does (see the module's header), for either backend to carry out.
    fn plan(&mut self, s: &Splat) -> Option<Action> {
        if !s.is_finite() {
            return None;
        }
        let size = self.backend.size();
        let h = size[1];
        let aspect = self.cells.0 as f32 / self.cells.1 as f32;
        let spacing = spacing(self.knobs.target_density);
        let x = (s.pos[0] / aspect).clamp(0.0, 1.0) * size[0];
        let y = s.pos[1].clamp(0.0, 1.0) * h;
        let force = [s.force[0], s.force[1]].map(|f| f.clamp(-50.0, 50.0) * h);
        match s.drum {
            // The kick lifts the floor: a shock up from the bottom under its place.
            Drum::Kick => {
                return Some(Action::Impulse(Impulse::Shock {
                    centre: [x, 0.0],
                    reach: (2.0 * s.radius * h).max(2.0 * spacing).min(0.6 * h),
                    force: force.map(|f| f * KICK_LIFT),
                }));
            }
            // The snare jerks the tank sideways, one way then the other (its splats come in
            // pairs pushing apart: the one pushing right stands for the hit).
            Drum::Snare => {
                if s.force[0] <= 0.0 {
                    return None;
                }
                let push = force[0].abs() * SNARE_SLOSH * self.slosh;
                self.slosh = -self.slosh;
                return Some(Action::Impulse(Impulse::Slosh { push: [push, 0.0] }));
            }
            // Hi-hats and cymbals throw spray: droplets up from the surface under their place.
            Drum::Cymbal => return Some(self.spray(x, s)),
            _ => {}
        }
        if s.amount > 0.0 {
            // A ball of its colour dropped from above its place.
            let radius = (s.radius * h * 2.5).max(1.5 * spacing).min(0.2 * h);
            let ball = 4.0 / 3.0 * std::f32::consts::PI * radius.powi(3);
            // The ball at 0.6 of the liquid's density at rest, times the amount.
            let want = 0.6 * ball / spacing.powi(3) * s.amount.min(4.0);
            let count = (want.round() as usize).clamp(1, BURST_MAX).min(self.budget);
            // Its channel's layer of the tank (a little spread, so a held chord is not a wall).
            let layer = if s.depth.is_finite() {
                s.depth.clamp(-1.0, 1.0)
            } else {
                0.0
            };
            let depth = size[2] * (0.5 + 0.4 * layer + 0.1 * (self.spread.draw() - 0.5));
            // Inside the tank (its middle, for a tank smaller than the ball).
            let within = |v: f32, side: f32| {
                if side > 2.0 * radius {
                    v.clamp(radius, side - radius)
                } else {
                    0.5 * side
                }
            };
            let centre = [
                within(x, size[0]),
                within(h * (0.6 + 0.3 * s.pos[1].clamp(0.0, 1.0)), h),
                within(depth, size[2]),
            ];
            let drop = [force[0], -0.5 * force[0].phypot(force[1]) - 1.0, 0.0];
            let colour = s.color.map(|c| c.clamp(0.0, 1.0));
            // Floaters under it take its colour.
            for i in 0..self.backend.floaters().len() {
                let f = self.backend.floaters()[i];
                if (f.pos[0] - centre[0]).phypot(f.pos[2] - centre[2]) < NEAR * f.radius {
                    self.backend.tint_floater(i, colour, TAKE);
                }
            }
            let fresh = (0..count)
                .map(|_| {
                    // A point in the ball, uniformly.
                    let (u, v, w) = (self.spread.draw(), self.spread.draw(), self.spread.draw());
                    let z = 2.0 * u - 1.0;
                    let a = v * std::f32::consts::TAU;
                    let r = radius * libm::cbrtf(w);
                    let ring = (1.0 - z * z).max(0.0).sqrt();
                    let dir = [ring * a.pcos(), ring * a.psin(), z];
                    let p = [0, 1, 2].map(|c| centre[c] + dir[c] * r);
                    (p, drop, colour)
                })
                .collect();
            Some(Action::Burst(fresh))
        } else if s.shape == SplatShape::Radial {
            // The mouse: towards its place (away when negative), through the whole depth.
            // A tenth of its force per metre of reach, without calming.
            Some(Action::Impulse(Impulse::Pull {
                centre: [x, y],
                reach: (s.radius * h).max(spacing).min(h),
                pull: s.force[0].clamp(-50.0, 50.0) * h * 0.1,
                calm: 0.0,
            }))
        } else if force != [0.0; 2] {
            // A shock: along the force, fading to 0 at its reach, through the whole depth.
            Some(Action::Impulse(Impulse::Shock {
                centre: [x, y],
                reach: (2.0 * s.radius * h).max(2.0 * spacing).min(0.6 * h),
                force,
            }))
        } else {
            None
        }
    }
}

impl Model for Liquid3dModel {
    fn backend(&self) -> &'static str {
        self.backend.name()
    }

    fn dye_over_backdrop(&self) -> bool {
        false
    }

    fn resolution(&self) -> Resolution {
        Resolution {
            cells: self.cells,
            detail: self.cells,
        }
    }

    fn inject(&mut self, sources: &[Splat]) {
        crate::sim::queue_sources(&mut self.pending, sources);
    }

    fn advance(&mut self, params: &StepInput) {
        self.set_knobs(&params.liquid);
        self.apply_sources();
        let Some((steps, sub)) =
            substeps(params.dt, MAX_SUBSTEPS).filter(|_| !self.backend.is_empty())
        else {
            return;
        };
        self.since_probe += sub * steps as f32;
        let (knobs, keep) = (self.knobs, (-self.drag * sub).pexp());
        let backend = &mut self.backend;
        self.pool
            .install(|| backend.step(&knobs, sub, keep.min(1.0), steps));
    }

    fn set_effort(&mut self, _sweeps: u32) {}

    fn reset(&mut self) {
        self.pending.clear();
        self.fill_pool();
    }

    fn render(&mut self, look: &Look, width: usize, height: usize, out: &mut [u8]) {
        let quality = self.quality;
        if self.backend.draws() {
            assert_eq!(out.len(), width * height * 4, "frame buffer size");
            self.backend.settle_frames();
            match self.encode_frame(look, (width, height), quality) {
                Some(serial) => self
                    .backend
                    .finish_frame(serial, look, (width, height), out),
                None => out.fill(0),
            }
            return;
        }
        self.draw(look, (width, height), quality, out);
    }

    fn request_frame(&mut self, look: &Look, width: usize, height: usize) -> bool {
        if self.backend.draws() {
            return self
                .encode_frame(look, (width, height), Quality::LIVE)
                .is_some();
        }
        let mut frame = std::mem::take(&mut self.frame);
        frame.fill(width, height, |out| {
            self.draw(look, (width, height), Quality::LIVE, out)
        });
        self.frame = frame;
        true
    }

    fn take_frame(&mut self, out: &mut Vec<u8>) -> Option<(usize, usize)> {
        if self.backend.draws() {
            return self.backend.collect_frame(out);
        }
        self.frame.take(out)
    }

    /// How fast the liquid's flow moved since the last probe ([`flow_speed`]), in tank heights
    /// a second, 0 below [`STILL`]; new or recycled particles and pending sources count as
    /// motion.
    fn probe_activity(&mut self, tag: u64) -> Option<(u64, Activity)> {
        let moving = |speed: f32| Activity {
            max_speed: speed,
            max_dye: 1.0,
            particles: false,
            keeps_colour: true,
        };
        if !self.pending.is_empty() {
            return Some((tag, moving(1.0)));
        }
        let radius = self.knobs.radius;
        let l = self.backend.liquid();
        let mut now: Vec<(u64, [f32; 3])> =
            l.birth.iter().copied().zip(l.pos.iter().copied()).collect();
        now.sort_unstable_by_key(|x| x.0);
        let same =
            now.len() == self.probe.len() && now.iter().zip(&self.probe).all(|(a, b)| a.0 == b.0);
        let speed = if now.is_empty() {
            0.0
        } else if !same {
            1.0
        } else if self.since_probe > 0.0 {
            flow_speed(&now, &self.probe, l.size(), radius) / self.since_probe
        } else {
            0.0
        };
        self.probe = now;
        self.since_probe = 0.0;
        let speed = if !speed.is_finite() {
            1.0
        } else if speed < STILL {
            0.0
        } else {
            speed
        };
        Some((tag, moving(speed)))
    }

    fn failure(&self) -> Option<GpuError> {
        self.backend.failure()
    }

    /// Obstacles are kept (and handed on to the next model) but the 3D liquid does not collide
    /// with them yet.
    fn set_obstacles(&mut self, mask: Option<&Mask>) {
        self.obstacles = mask.cloned();
    }

    fn obstacles(&self) -> Option<&Mask> {
        self.obstacles.as_ref()
    }

    fn snapshot(&mut self) -> Snapshot {
        Snapshot::new(Liquid3dSnapshot {
            liquid: self.backend.liquid().clone(),
        })
    }

    fn restore(&mut self, snapshot: &Snapshot) -> bool {
        let Some(s) = snapshot.get::<Liquid3dSnapshot>() else {
            return false;
        };
        let mut liquid = s.liquid.clone();
        liquid.resize_tank(self.backend.size());
        self.set_liquid(liquid);
        true
    }
}

#[cfg(test)]
mod tests;
