//! The CPU solver: the reference for every other backend and the fallback when there is no
//! GPU. One file per pass; each pass is parallel over rows with rayon, and every reduction
//! sums rows in a fixed order, so results are bit-identical for any thread count. The picture
//! is the display's ([`crate::display::cpu`]): the solver hands it its fields as a
//! [`colorize::Source`].
//!
//! Why this file is long: the solver's state, its step (one method per stage, see `step_all`)
//! and the `Solver` trait's methods share that state; the passes themselves are one file each.

pub mod advect;
pub mod buoyancy;
pub mod curl;
pub mod diffuse;
pub mod divergence;
pub mod gradient;
pub mod particles;
pub mod pressure;
pub mod reduce;
pub mod splat;
pub mod streamline_trace;
pub mod vorticity;

mod obstacles;

use super::{AlignedVec, Fields};
use crate::display::cpu::{colorize, obstacle_overlay, picture};
use crate::display::streamlines::Lines;
use crate::sim::grid::particles::{CPU_CAPACITY, Particle, Spawner};
use crate::sim::grid::physics::{
    CellSplat, MAX_PENDING_SPLATS, REPROJECT_ABOVE_COMPRESSIBILITY, decay_factor, extra_iterations,
};
use crate::sim::{
    Activity, Look, MAX_DYE, MAX_HEAT, PressureMethod, SimConfig, Solver, Splat, Stage, StepInput,
    StepStats,
};
use pressure::{Multigrid, Split};

/// The pressure state: its warm start (kept across steps) and right-hand side.
struct Projection {
    q: Split,
    b: Split,
    /// `q` in natural layout, for the gradient and for readers.
    q_natural: Vec<f32>,
}

/// All CPU-side fields.
struct State {
    u: AlignedVec,
    v: AlignedVec,
    u_tmp: AlignedVec,
    v_tmp: AlignedVec,
    /// Right-hand sides of the implicit viscosity solves (the ping-pong partner is the
    /// advection scratch, free at that point).
    u_b: AlignedVec,
    v_b: AlignedVec,
    /// Right-hand side of the dye diffusion solve.
    dye_b: AlignedVec,
    dye: [AlignedVec; 3],
    dye_tmp: [AlignedVec; 3],
    /// Temperature, one value per simulation cell, and its advection scratch.
    heat: AlignedVec,
    heat_tmp: AlignedVec,
    /// Whether the temperature may be non-zero anywhere (a heat splat since the last reset).
    heated: bool,
    /// The particle slots (allocated at the first emission).
    particles: Vec<Particle>,
    curl: AlignedVec,
    /// Divergence, natural layout (scratch of the projection).
    div: AlignedVec,
    /// Scratch of the warm-start scaling.
    aq: AlignedVec,
    /// The projection's pressure (warm-started step to step).
    project_main: Projection,
    /// Whether the last velocity advection left the flow compressible: the next projection
    /// runs extra iterations ([`extra_iterations`]).
    compressible: bool,
    /// Jacobi scratch.
    jacobi_tmp: Split,
    multigrid: Multigrid,
}

impl State {
    fn new(cfg: &SimConfig) -> Self {
        let (w, h) = (cfg.width, cfg.height);
        let dye_cells = cfg.dye_width() * cfg.dye_height();
        let projection = || Projection {
            q: Split::zeros(w, h),
            b: Split::zeros(w, h),
            q_natural: vec![0.0; w * h],
        };
        Self {
            u: AlignedVec::zeros((w + 1) * h),
            v: AlignedVec::zeros(w * (h + 1)),
            u_tmp: AlignedVec::zeros((w + 1) * h),
            v_tmp: AlignedVec::zeros(w * (h + 1)),
            u_b: AlignedVec::zeros((w + 1) * h),
            v_b: AlignedVec::zeros(w * (h + 1)),
            dye_b: AlignedVec::zeros(dye_cells),
            dye: std::array::from_fn(|_| AlignedVec::zeros(dye_cells)),
            dye_tmp: std::array::from_fn(|_| AlignedVec::zeros(dye_cells)),
            heat: AlignedVec::zeros(w * h),
            heat_tmp: AlignedVec::zeros(w * h),
            heated: false,
            particles: Vec::new(),
            curl: AlignedVec::zeros(w * h),
            div: AlignedVec::zeros(w * h),
            aq: AlignedVec::zeros(w * h),
            project_main: projection(),
            compressible: false,
            jacobi_tmp: Split::zeros(w, h),
            multigrid: Multigrid::new(w, h),
        }
    }
}

/// How long a dropped solver waits for each of its worker threads to end.
const JOIN_WORKERS_MS: u64 = 250;

/// A pool's worker threads, joined when this is dropped (after the pool: it is declared after
/// it in [`CpuSolver`]). rayon's own pool only tells its workers to stop; one still winding
/// down when a host unloads the plugin's library (right after the last instance goes) would
/// run code that is gone. Each is waited for (within [`JOIN_WORKERS_MS`]); one still busy
/// then is left to end with the library pinned (`crate::pin::join_within`).
#[derive(Default)]
struct Workers(std::sync::Arc<std::sync::Mutex<Vec<std::thread::JoinHandle<()>>>>);

impl Workers {
    /// A spawn handler for a rayon pool that keeps each worker's handle here.
    fn spawner(
        &self,
    ) -> impl FnMut(rayon::ThreadBuilder) -> std::io::Result<()> + Send + Sync + 'static {
        let handles = std::sync::Arc::clone(&self.0);
        move |thread: rayon::ThreadBuilder| {
            let mut b = std::thread::Builder::new();
            if let Some(name) = thread.name() {
                b = b.name(name.to_owned());
            }
            if let Some(size) = thread.stack_size() {
                b = b.stack_size(size);
            }
            let handle = b.spawn(|| thread.run())?;
            handles
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(handle);
            Ok(())
        }
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        let handles = std::mem::take(
            &mut *self
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        for h in handles {
            crate::pin::join_within(h, JOIN_WORKERS_MS, "a CPU solver thread");
        }
    }
}

/// The rayon CPU solver.
pub struct CpuSolver {
    cfg: SimConfig,
    pool: std::sync::Arc<rayon::ThreadPool>,
    /// The pool's threads, joined when the solver goes (declared after `pool`, so dropped
    /// after it: the pool has told them to stop by then). Kept for its `Drop` only.
    _workers: Workers,
    threads: usize,
    state: State,
    pending: Vec<Splat>,
    /// Splats dropped because the queue was full (a runaway producer).
    dropped_splats: u64,
    /// Whether `step` measures the divergence after the projection.
    measure: bool,
    /// How far the last velocity advection traced, in cells (decides the extra iterations).
    reach: f32,
    /// The frame rendered by the last `request_frame`.
    frame: crate::display::cpu::picture::HeldFrame,
    /// Solid cells, if any.
    obstacles: Option<obstacles::Obstacles>,
    /// The picture stage's buffers (light planes, bloom levels), kept between frames.
    picture: picture::Picture,
    /// The particles' emission, ring and lifetime (see [`Spawner`]).
    spawner: Spawner,
    /// The particles' light at the last frame's size (three fixed-point units a pixel).
    particle_light: Vec<u32>,
    /// The streamlines' vertices and codes (kept between frames).
    streamlines: streamline_trace::Streamlines,
}

pub use crate::sim::model::CpuError;

impl CpuSolver {
    /// A solver for `cfg` (sanitised) running on `threads` worker threads (0: one per core).
    ///
    /// # Errors
    /// [`CpuError::Threads`] when the worker threads cannot be started.
    pub fn new(cfg: &SimConfig, threads: usize) -> Result<Self, CpuError> {
        let cfg = cfg.sanitized();
        let workers = Workers::default();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("dyeflow-cpu-{i}"))
            .spawn_handler(workers.spawner())
            .build()
            .map_err(|source| CpuError::Threads { threads, source })?;
        let threads = pool.current_num_threads();
        Ok(Self {
            state: State::new(&cfg),
            cfg,
            pool: std::sync::Arc::new(pool),
            _workers: workers,
            threads,
            pending: Vec::with_capacity(MAX_PENDING_SPLATS),
            dropped_splats: 0,
            measure: true,
            reach: 0.0,
            frame: Default::default(),
            obstacles: None,
            picture: picture::Picture::default(),
            spawner: Spawner::new(CPU_CAPACITY),
            particle_light: Vec::new(),
            streamlines: streamline_trace::Streamlines::default(),
        })
    }

    /// The temperature, one value per simulation cell, row-major from the bottom row.
    pub fn heat(&self) -> &[f32] {
        &self.state.heat
    }

    /// The particle slots (empty until the first emission); living ones have `age < life`.
    pub fn particles(&self) -> &[Particle] {
        &self.state.particles
    }

    /// Put particles into the slots from the first on (tests and the bench's seeding), the
    /// rest emptied; at most the capacity.
    pub fn set_particles(&mut self, particles: &[Particle]) {
        let n = self.spawner.seed(particles);
        let s = &mut self.state;
        s.particles.clear();
        s.particles.resize(CPU_CAPACITY, Particle::default());
        s.particles[..n].copy_from_slice(&particles[..n]);
    }

    /// Take this step's new particles from the pending splats into the ring.
    fn emit_particles(&mut self, p: &StepInput) {
        let cells = (self.cfg.width, self.cfg.height);
        let mask = self.obstacles.as_ref().map(|o| &o.mask);
        let runs = self
            .spawner
            .emit(&self.pending, cells, mask, p.particle_life);
        let s = &mut self.state;
        for (start, born) in runs.into_iter().filter(|(_, b)| !b.is_empty()) {
            if s.particles.is_empty() {
                s.particles.resize(CPU_CAPACITY, Particle::default());
            }
            s.particles[start..start + born.len()].copy_from_slice(born);
        }
    }

    /// Worker threads in use.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Splats dropped since creation because the queue was full.
    pub fn dropped_splats(&self) -> u64 {
        self.dropped_splats
    }

    /// The picture's source for a `width x height` frame with `look` (drawing the particles'
    /// light first when they show), with the picture stage.
    fn source(
        &mut self,
        look: &Look,
        width: usize,
        height: usize,
    ) -> (&mut picture::Picture, colorize::Source<'_>) {
        let cfg = self.cfg;
        let glow = crate::sim::grid::particles::sanitize_glow(look.particle_glow);
        let drawn = self.spawner.alive() && glow > 0.0;
        let st = &self.state;
        if drawn {
            let aspect = cfg.width as f32 / cfg.height as f32;
            let light = &mut self.particle_light;
            particles::draw(&st.particles, aspect, glow, (width, height), light);
        }
        let src = colorize::Source {
            w: cfg.width,
            h: cfg.height,
            u: &st.u,
            v: &st.v,
            dw: cfg.dye_width(),
            dh: cfg.dye_height(),
            dye: [&st.dye[0], &st.dye[1], &st.dye[2]],
            heat: &st.heat,
            particles: drawn.then_some(&self.particle_light[..]),
        };
        (&mut self.picture, src)
    }

    /// The colour stage alone for a `width x height` frame with `look`: the frame's light
    /// (colorize, in the filmic tone), without the display pipeline after it. `dyeflow bench`
    /// times it to give the display pipeline's own cost.
    pub fn colour_stage(&mut self, look: &Look, width: usize, height: usize) {
        self.install(|s| {
            let (picture, src) = s.source(look, width, height);
            picture.colour_stage(&src, look, width, height);
        });
    }

    /// Run `f` on this solver's thread pool (PERF-NOTES: calling rayon from outside the pool
    /// pays a cross-thread wake-up per parallel loop, 0.7-0.9 ms per step at 512²).
    pub fn install<R: Send>(&mut self, f: impl FnOnce(&mut Self) -> R + Send) -> R {
        let pool = self.pool.clone();
        pool.install(|| f(self))
    }

    /// The projection: make `u`, `v` divergence-free with `iterations` of the pressure solve
    /// from the warm-started pressure. Returns the norms of the divergence before.
    fn project_with(&mut self, iterations: u32) -> divergence::Norms {
        let (w, h) = (self.cfg.width, self.cfg.height);
        let s = &mut self.state;
        let proj = &mut s.project_main;
        let mut ob = self.obstacles.as_mut();
        if let Some(o) = &ob {
            // No flow through solid faces, whatever the forces did.
            o.close_faces(&mut s.u, &mut s.v);
        }
        let norms = divergence::divergence_rhs(&s.u, &s.v, w, h, &mut s.div, &mut proj.b);
        match &mut ob {
            // Compatible with the Neumann faces region by region (an enclosed pocket of fluid
            // is its own region), and 0 in solids.
            Some(o) => o.set_rhs(&s.div, &mut proj.b),
            // Make the right-hand side exactly compatible with the Neumann walls (mean-free):
            // the wall faces are 0, so the mean is only rounding.
            None => proj.b.subtract(-norms.mean),
        }
        if self.cfg.pressure != PressureMethod::Multigrid {
            // Relaxation removes smooth error slowly: make sure the warm start helps.
            pressure::scale_warm_start(
                &mut proj.q,
                &s.div,
                norms.mean,
                &mut proj.q_natural,
                &mut s.aq,
                ob.as_ref().map(|o| (&o.faces, &o.b[..])),
            );
        }
        let split = ob.as_ref().map(|o| &o.split);
        match (self.cfg.pressure, split) {
            (PressureMethod::Jacobi, None) => {
                pressure::jacobi(&mut proj.q, &proj.b, &mut s.jacobi_tmp, iterations)
            }
            (PressureMethod::Jacobi, Some(f)) => {
                pressure::jacobi_faces(&mut proj.q, &proj.b, &mut s.jacobi_tmp, iterations, f)
            }
            (PressureMethod::RbGs, None) => pressure::rb_sor(&mut proj.q, &proj.b, iterations, 1.0),
            (PressureMethod::RbGs, Some(f)) => {
                pressure::rb_sor_faces(&mut proj.q, &proj.b, iterations, 1.0, f)
            }
            (PressureMethod::Multigrid, _) => s.multigrid.solve(&mut proj.q, &proj.b, iterations),
        }
        // The pressure's mean is arbitrary (constants are the null space): publish it centred.
        let mean = proj.q.mean();
        proj.q.write_natural(&mut proj.q_natural, mean);
        gradient::subtract_gradient(&mut s.u, &mut s.v, &proj.q_natural, w, h);
        if let Some(o) = &ob {
            // The gradient across a solid face is meaningless: the face stays closed.
            o.close_faces(&mut s.u, &mut s.v);
        }
        norms
    }

    /// The whole step, one line per stage (see [`Stage`]): the splats, then, when time
    /// passes, the forces, the projection and the transport. `stats` gathers what the
    /// stages measured.
    fn step_all(&mut self, p: &StepInput, stats: &mut StepStats) {
        self.apply_splats(p);
        if p.dt == 0.0 {
            return;
        }
        self.add_buoyancy(p);
        self.confine_vorticity(p);
        self.diffuse_velocity(p);
        self.project(stats);
        self.advect_dye(p);
        self.move_particles(p);
        self.diffuse_dye(p);
        self.advect_velocity(p);
        self.check_compressibility();
    }

    /// Run one stage of a step (see [`Stage`]), adding what it measured to `stats`.
    fn stage(&mut self, stage: Stage, p: &StepInput, stats: &mut StepStats) {
        match stage {
            Stage::ApplySplats => self.apply_splats(p),
            Stage::AddBuoyancy => self.add_buoyancy(p),
            Stage::ConfineVorticity => self.confine_vorticity(p),
            Stage::DiffuseVelocity => self.diffuse_velocity(p),
            Stage::Project => self.project(stats),
            Stage::AdvectDye => self.advect_dye(p),
            Stage::MoveParticles => self.move_particles(p),
            Stage::DiffuseDye => self.diffuse_dye(p),
            Stage::AdvectVelocity => self.advect_velocity(p),
            Stage::CheckCompressibility => self.check_compressibility(),
        }
    }

    /// [`Stage::ApplySplats`]: emit the step's particles and apply the queued splats (velocity,
    /// dye, heat); a splat inside a solid does nothing.
    fn apply_splats(&mut self, p: &StepInput) {
        let (w, h) = (self.cfg.width, self.cfg.height);
        self.emit_particles(p);
        let splats: Vec<CellSplat> = self
            .pending
            .drain(..)
            .filter_map(|s| CellSplat::new(&s, h))
            .collect();
        if splats.is_empty() {
            return;
        }
        let s = &mut self.state;
        splat::splat_velocity(&splats, &mut s.u, &mut s.v, w, h);
        let [r, g, b] = &mut s.dye;
        splat::splat_dye(&splats, [r, g, b], self.cfg.dye_width(), self.cfg.dye_scale);
        if splats.iter().any(|c| c.heat != 0.0) {
            splat::splat_heat(&splats, &mut s.heat, w);
            s.heated = true;
        }
        if let Some(o) = &self.obstacles {
            o.close_faces(&mut s.u, &mut s.v);
            o.clear_solid_dye(&mut s.dye);
            o.clear_solid_cells(&mut s.heat);
        }
    }

    /// [`Stage::AddBuoyancy`]: the lift of heat and the weight of dye (when either is on).
    fn add_buoyancy(&mut self, p: &StepInput) {
        if !p.lifts() {
            return;
        }
        let (w, h) = (self.cfg.width, self.cfg.height);
        let s = &mut self.state;
        let dye = [&s.dye[0][..], &s.dye[1][..], &s.dye[2][..]];
        // The curl's scratch is free until the vorticity stage.
        buoyancy::lift(&s.heat, dye, self.cfg.dye_scale, (w, h), p, &mut s.curl);
        buoyancy::apply(&s.curl, &mut s.u, &mut s.v, (w, h), p.up, p.dt);
        if let Some(o) = &self.obstacles {
            o.close_faces(&mut s.u, &mut s.v);
        }
    }

    /// [`Stage::ConfineVorticity`]: vorticity confinement (when on).
    fn confine_vorticity(&mut self, p: &StepInput) {
        if p.vorticity <= 0.0 {
            return;
        }
        let (w, h) = (self.cfg.width, self.cfg.height);
        let s = &mut self.state;
        curl::curl(&s.u, &s.v, w, h, &mut s.curl);
        let (fx, fy) = (&mut s.u_tmp, &mut s.v_tmp);
        vorticity::confine(&s.curl, &mut s.u, &mut s.v, fx, fy, w, h, p.vorticity, p.dt);
    }

    /// [`Stage::DiffuseVelocity`]: implicit viscous diffusion of both velocity components.
    fn diffuse_velocity(&mut self, p: &StepInput) {
        if p.viscosity <= 0.0 {
            return;
        }
        use diffuse::{Fixed, diffuse};
        let (w, h) = (self.cfg.width, self.cfg.height);
        let cell = 1.0 / h as f32;
        let a = p.viscosity * p.dt / (cell * cell);
        let iters = self.cfg.diffusion_iterations;
        let s = &mut self.state;
        diffuse(
            &mut s.u,
            &mut s.u_b,
            &mut s.u_tmp,
            w + 1,
            h,
            a,
            iters,
            Fixed::Columns,
        );
        diffuse(
            &mut s.v,
            &mut s.v_b,
            &mut s.v_tmp,
            w,
            h + 1,
            a,
            iters,
            Fixed::Rows,
        );
    }

    /// [`Stage::Project`]: the projection, with the extra iterations the last
    /// compressibility check asked for; the divergence after it when measuring.
    fn project(&mut self, stats: &mut StepStats) {
        let (w, h) = (self.cfg.width, self.cfg.height);
        let mut iterations = self.cfg.pressure_iterations;
        if std::mem::take(&mut self.state.compressible) {
            iterations += extra_iterations(self.cfg.pressure, iterations);
        }
        let before = self.project_with(iterations);
        stats.div_rms_before = before.rms;
        stats.div_max_before = before.max;
        stats.pressure_iterations += iterations;
        if self.measure {
            let s = &mut self.state;
            let after = divergence::divergence_norms(&s.u, &s.v, w, h, &mut s.div);
            stats.div_rms_after = after.rms;
            stats.div_max_after = after.max;
        }
    }

    /// [`Stage::AdvectDye`]: the dye (and the temperature with it) through the
    /// divergence-free velocity, dissipation fused, so compression neither creates nor
    /// destroys dye; next to solids, [`Self::mend_near_solids`].
    fn advect_dye(&mut self, p: &StepInput) {
        let h = self.cfg.height;
        let grid = advect::Grid {
            w: self.cfg.width,
            h,
        };
        let s = &mut self.state;
        let decay = decay_factor(p.dye_dissipation, p.dt);
        let [r, g, b] = &mut s.dye_tmp;
        let dye_in = [&s.dye[0][..], &s.dye[1][..], &s.dye[2][..]];
        // With obstacles: how far, in cells, any trace of this step can reach (the largest
        // face speed times the step).
        let reach = self.obstacles.as_ref().map(|_| {
            let speed = reduce::max_abs(&s.u).max(reduce::max_abs(&s.v));
            speed * p.dt * h as f32
        });
        // The temperature moves with the dye (on the dye's traces at scale 1) and cools
        // towards 0.
        let heat_decay = decay_factor(p.cooling, p.dt);
        let carried = s.heated.then(|| advect::Carried {
            src: &s.heat,
            out: &mut s.heat_tmp,
            decay: heat_decay,
            max: MAX_HEAT,
        });
        let scale = self.cfg.dye_scale;
        let (u, v) = (&s.u, &s.v);
        advect::advect_dye(
            grid,
            scale,
            u,
            v,
            dye_in,
            [r, g, b],
            p.dt,
            decay,
            MAX_DYE,
            carried,
        );
        if let Some(reach) = reach {
            self.mend_near_solids(p, reach, decay, heat_decay);
        }
        let s = &mut self.state;
        std::mem::swap(&mut s.dye, &mut s.dye_tmp);
        if let Some(o) = &self.obstacles {
            o.clear_solid_dye(&mut s.dye);
        }
        if s.heated {
            std::mem::swap(&mut s.heat, &mut s.heat_tmp);
        }
    }

    /// The dye's advection next to solids: the cells whose traces can reach a solid within
    /// `reach` cells are advected again without sampling the solids (at dye scale 1 the
    /// temperature on the same traces), and the temperature is traced again among fluid cells
    /// (or cleared in solids at scale 1). Writes into the `_tmp` planes, before the swap.
    fn mend_near_solids(&mut self, p: &StepInput, reach: f32, decay: f32, heat_decay: f32) {
        let Some(o) = &self.obstacles else {
            return;
        };
        let grid = advect::Grid {
            w: self.cfg.width,
            h: self.cfg.height,
        };
        let scale = self.cfg.dye_scale;
        let s = &mut self.state;
        let [r, g, b] = &mut s.dye_tmp;
        let dye_in = [&s.dye[0][..], &s.dye[1][..], &s.dye[2][..]];
        // In dye cells. At dye scale 1 the temperature is mended on the same traces.
        let dye_reach = reach * scale as f32;
        let heat = (s.heated && scale == 1).then(|| advect::NearHeat {
            src: &s.heat,
            out: &mut s.heat_tmp,
            decay: heat_decay,
            max: MAX_HEAT,
        });
        advect::advect_dye_near_solids(
            grid,
            scale,
            &s.u,
            &s.v,
            dye_in,
            [r, g, b],
            o.near.within(dye_reach),
            &o.solid_dye_flags,
            p.dt,
            decay,
            MAX_DYE,
            heat,
        );
        if !s.heated {
            return;
        }
        if scale == 1 {
            o.clear_solid_cells(&mut s.heat_tmp);
        } else {
            let solids = (o.mask.cells(), o.near_cells.within(reach));
            let (t, out) = (&s.heat, &mut s.heat_tmp);
            advect::scalar_near_solids(
                grid, &s.u, &s.v, t, out, solids, p.dt, heat_decay, MAX_HEAT,
            );
        }
    }

    /// [`Stage::MoveParticles`]: the particles through the velocity (when any may be alive).
    fn move_particles(&mut self, p: &StepInput) {
        if !self.spawner.alive() {
            return;
        }
        let (w, h) = (self.cfg.width, self.cfg.height);
        let s = &mut self.state;
        let solids = self.obstacles.as_ref().map(|o| particles::Solids {
            cells: o.mask.cells(),
        });
        particles::advect(&mut s.particles, (w, h), &s.u, &s.v, solids, p.dt);
        self.spawner.advance(p.dt);
    }

    /// [`Stage::DiffuseDye`]: implicit diffusion of the dye (when on).
    fn diffuse_dye(&mut self, p: &StepInput) {
        if p.dye_diffusion <= 0.0 {
            return;
        }
        let cell = 1.0 / self.cfg.height as f32;
        let dcell = cell / self.cfg.dye_scale as f32;
        let a = p.dye_diffusion * p.dt / (dcell * dcell);
        let (dw, dh) = (self.cfg.dye_width(), self.cfg.dye_height());
        let iters = self.cfg.diffusion_iterations;
        let s = &mut self.state;
        for (plane, tmp) in s.dye.iter_mut().zip(&mut s.dye_tmp) {
            let b = &mut s.dye_b;
            diffuse::diffuse(plane, b, tmp, dw, dh, a, iters, diffuse::Fixed::None);
        }
        if let Some(o) = &self.obstacles {
            o.clear_solid_dye(&mut s.dye);
        }
    }

    /// [`Stage::AdvectVelocity`]: semi-Lagrangian self-advection, dissipation fused.
    fn advect_velocity(&mut self, p: &StepInput) {
        let grid = advect::Grid {
            w: self.cfg.width,
            h: self.cfg.height,
        };
        let s = &mut self.state;
        let decay = decay_factor(p.velocity_dissipation, p.dt);
        let (u, v) = (&s.u, &s.v);
        self.reach = advect::advect_velocity(grid, u, v, &mut s.u_tmp, &mut s.v_tmp, p.dt, decay);
        std::mem::swap(&mut s.u, &mut s.u_tmp);
        std::mem::swap(&mut s.v, &mut s.v_tmp);
        if let Some(o) = &self.obstacles {
            o.close_faces(&mut s.u, &mut s.v);
        }
    }

    /// [`Stage::CheckCompressibility`]: when advection moved the flow more than a cell and left it
    /// noticeably compressible, the next projection runs extra iterations. (Below one cell
    /// per step advection barely bends the flow, and the check is skipped too.)
    fn check_compressibility(&mut self) {
        let (w, h) = (self.cfg.width, self.cfg.height);
        let s = &mut self.state;
        s.compressible = self.reach > 1.0
            && divergence::compressibility(&s.u, &s.v, w, h, &mut s.div)
                > REPROJECT_ABOVE_COMPRESSIBILITY;
    }
}

impl Solver for CpuSolver {
    fn config(&self) -> SimConfig {
        self.cfg
    }

    fn backend(&self) -> &'static str {
        "cpu"
    }

    fn inject(&mut self, splats: &[Splat]) {
        let room = MAX_PENDING_SPLATS - self.pending.len();
        let take = splats.len().min(room);
        self.pending.extend_from_slice(&splats[..take]);
        self.dropped_splats += (splats.len() - take) as u64;
    }

    fn step(&mut self, params: &StepInput) -> StepStats {
        let p = params.sanitized();
        self.install(|s| {
            let mut stats = StepStats::default();
            s.step_all(&p, &mut stats);
            stats
        })
    }

    fn run_stage(&mut self, stage: Stage, params: &StepInput) -> StepStats {
        let p = params.sanitized();
        self.install(|s| {
            let mut stats = StepStats::default();
            s.stage(stage, &p, &mut stats);
            stats
        })
    }

    fn render(&mut self, look: &Look, width: usize, height: usize, out: &mut [u8]) {
        let cfg = self.cfg;
        self.install(|s| {
            let lines = Lines::new(&look.streamlines, (cfg.width, cfg.height), (width, height));
            if !lines.is_some_and(|l| l.alone) {
                let (picture, src) = s.source(look, width, height);
                picture.render(&src, look, width, height, out);
            }
            let st = &s.state;
            if let Some(l) = &lines {
                let mask = s.obstacles.as_ref().map(|o| &o.mask);
                let grid = (cfg.width, cfg.height);
                s.streamlines.draw(l, grid, &st.u, &st.v, mask, out);
            }
            if let Some(o) = &s.obstacles {
                obstacle_overlay::draw(&o.mask, look.obstacles, out, width, height);
            }
        });
    }

    fn read_extras(&mut self) -> crate::sim::Extras {
        let s = &self.state;
        let living = |ps: &[Particle]| ps.iter().filter(|p| p.alive()).copied().collect();
        crate::sim::Extras {
            heat: if s.heated {
                s.heat.to_vec()
            } else {
                Vec::new()
            },
            heat_size: (self.cfg.width, self.cfg.height),
            particles: if self.spawner.alive() {
                living(&s.particles)
            } else {
                Vec::new()
            },
        }
    }

    fn write_extras(&mut self, extras: &crate::sim::Extras) {
        let grid = (self.cfg.width, self.cfg.height);
        let mask = self.obstacles.as_ref().map(|o| &o.mask);
        match extras.heat_on(grid, mask) {
            Some(heat) => self.state.heat.copy_from_slice(&heat),
            None => self.state.heat.fill(0.0),
        }
        self.state.heated = !extras.heat.is_empty();
        let aspect = grid.0 as f32 / grid.1 as f32;
        let particles = extras.particles_for(aspect, mask, CPU_CAPACITY);
        if !(particles.is_empty() && self.state.particles.is_empty()) {
            self.set_particles(&particles);
        }
    }

    fn read_fields(&mut self) -> Fields {
        let s = &self.state;
        Fields {
            width: self.cfg.width,
            height: self.cfg.height,
            u: s.u.to_vec(),
            v: s.v.to_vec(),
            pressure: s.project_main.q_natural.clone(),
            dye_width: self.cfg.dye_width(),
            dye_height: self.cfg.dye_height(),
            dye: std::array::from_fn(|c| s.dye[c].to_vec()),
        }
    }

    fn write_fields(&mut self, fields: &Fields) {
        let f = fields.resampled(&self.cfg);
        let s = &mut self.state;
        s.u.copy_from_slice(&f.u);
        s.v.copy_from_slice(&f.v);
        s.project_main.q.assign_natural(&f.pressure);
        s.project_main.q_natural.copy_from_slice(&f.pressure);
        s.compressible = false;
        for c in 0..3 {
            s.dye[c].copy_from_slice(&f.dye[c]);
        }
        if let Some(o) = &self.obstacles {
            o.close_faces(&mut s.u, &mut s.v);
            o.clear_solid_dye(&mut s.dye);
        }
    }

    fn reset(&mut self) {
        let old = std::mem::replace(&mut self.state, State::new(&self.cfg));
        self.spawner.reset();
        self.pending.clear();
        // The same grid and walls: the multigrid keeps its levels (a solve overwrites all of
        // its scratch before reading it), so a reset does not build the walls' levels again.
        self.state.multigrid = old.multigrid;
    }

    fn set_measure(&mut self, on: bool) {
        self.measure = on;
    }

    fn set_pressure_iterations(&mut self, iterations: u32) {
        self.cfg.pressure_iterations = iterations.clamp(1, 10_000);
    }

    fn set_obstacles(&mut self, mask: Option<&crate::sim::obstacles::Mask>) {
        let (w, h) = (self.cfg.width, self.cfg.height);
        let dye_scale = self.cfg.dye_scale;
        let mask = mask
            .filter(|m| !m.is_empty())
            .map(|m| m.resampled(w, h))
            .filter(|m| !m.is_empty());
        // The obstacle tables and the pressure solve's node graphs, side by side on the
        // solver's threads (a new mask stalls the simulation thread while they are built).
        let built = self.install(move |_| {
            mask.map(|m| {
                let faces = crate::sim::obstacles::faces::Faces::from_mask(&m);
                rayon::join(
                    || obstacles::Obstacles::with_faces(&m, faces.clone(), dye_scale),
                    || Multigrid::coarse_levels(&faces),
                )
            })
        });
        let (obstacles, coarse) = built.unzip();
        self.obstacles = obstacles;
        let faces = self.obstacles.as_ref().map(|o| &o.faces);
        self.state.multigrid.set_faces_with(faces, coarse.flatten());
        if let Some(o) = &self.obstacles {
            let s = &mut self.state;
            o.close_faces(&mut s.u, &mut s.v);
            o.clear_solid_dye(&mut s.dye);
            o.clear_solid_cells(&mut s.heat);
            // A particle a new solid covers is gone (it has no way out).
            for p in s.particles.iter_mut() {
                if p.alive() && crate::sim::grid::particles::solid_at(&o.mask, p.pos) {
                    p.life = 0.0;
                }
            }
            s.project_main.q.clear();
            s.project_main.q_natural.fill(0.0);
            s.compressible = false;
        }
    }

    fn obstacles(&self) -> Option<&crate::sim::obstacles::Mask> {
        self.obstacles.as_ref().map(|o| &o.mask)
    }

    fn request_frame(&mut self, look: &Look, width: usize, height: usize) -> bool {
        let mut frame = std::mem::take(&mut self.frame);
        frame.fill(width, height, |out| self.render(look, width, height, out));
        self.frame = frame;
        true
    }

    fn take_frame(&mut self, out: &mut Vec<u8>) -> Option<(usize, usize)> {
        self.frame.take(out)
    }

    fn probe_activity(&mut self, tag: u64) -> Option<(u64, Activity)> {
        let max_abs = reduce::max_abs;
        let activity = self.install(|s| {
            let st = &s.state;
            Activity {
                max_speed: max_abs(&st.u).max(max_abs(&st.v)),
                max_dye: st.dye.iter().map(|d| max_abs(d)).fold(0.0, f32::max),
                particles: s.spawner.alive(),
                keeps_colour: false,
            }
        });
        Some((tag, activity))
    }
}
