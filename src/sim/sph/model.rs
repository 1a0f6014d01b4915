//! The particle fluid as a [`Model`]: the engine, the editor and the renderer drive it exactly
//! as they drive the grid fluid. The model owns what the frame asks for (its knobs, budget,
//! sources, obstacles and picture size) and drives its particles' home, the CPU's or the GPU's
//! ([`FluidBackend`]).
//!
//! - **Sources.** A splat with dye (a note) becomes a burst of new particles in its colour,
//!   spread over its disc, moving with its force plus an outward kick; the box holds at most
//!   a budget of particles, and a burst into a full box recycles the oldest. A splat without
//!   dye (an onset, the level's push, the beat) is a shock: it pushes the particles within
//!   twice its radius along its force, fading with distance.
//! - **Steps.** Each advance runs fixed sub-steps of at most [`crate::sim::sph::SUBSTEP_S`] (three a frame at 60
//!   frames a second, as in the source), with the step's liquid knobs ([`crate::fluid::Liquid`]: gravity,
//!   already turned by the tilt and the music's swing, stiffness, viscosity, bounce, budget)
//!   and drag.
//! - **Picture.** The surface look: each particle's colour is splatted with a smooth kernel
//!   into a light field on the model's grid, normalised so the bulk of the liquid at its
//!   target density shows its colour at about 1; the discs look: each particle a soft disc at
//!   the frame's resolution. Either is drawn through the display's picture
//!   ([`crate::display`]: exposure, tone, bloom, shading, palettes). In the "velocity hue" colour mode
//!   particles take the source's speed gradient (blue, white, red) instead of their colour.
//! - **Obstacles** are drawn and kept with the model (drawn over the frame by the CPU's pass
//!   on either backend, so the two draw them bit for bit the same), and the particles collide
//!   with them ([`crate::sim::sph::solids`]).
//! - **Rest.** The model counts as still once 95 % of its particles barely move (see
//!   [`SphModel::probe_activity`]), so the engine stops stepping a settled pool.

use crate::display::cpu::obstacle_overlay;
use crate::display::cpu::picture::HeldFrame;
use crate::fluid::{Look, ObstacleStyle, Splat};
use crate::gpu::{GpuContext, GpuError};
use crate::sim::CpuError;
use crate::sim::model::{Model, Resolution, Snapshot};
use crate::sim::obstacles::Mask;
use crate::sim::sph::backend::{FluidBackend, FrameJob};
use crate::sim::sph::cpu::CpuFluid;
use crate::sim::sph::gpu::backend::GpuBackend;
use crate::sim::sph::shared::*;
pub use crate::sim::sph::shared::{DEFAULT_BUDGET, LIQUID_STILL};
use crate::sim::sph::sources::{Action, Planner};
use crate::sim::sph::{BOX_HEIGHT, Fluid, Knobs};
use crate::sim::{Activity, StepInput};

/// The particle fluid (SPH), as a [`Model`], on the CPU or the GPU.
pub struct SphModel {
    backend: Box<dyn FluidBackend>,
    /// "cpu" or "gpu", and its device: the CPU's worker threads, the GPU's adapter.
    name: &'static str,
    threads: usize,
    adapter: String,
    knobs: Knobs,
    budget: usize,
    /// The model's resolution.
    cells: (usize, usize),
    pending: Vec<Splat>,
    planner: Planner,
    obstacles: Option<Mask>,
    /// A frame drawn at once (a backend that does not draw in the background).
    frame: HeldFrame,
    /// How the frame last requested draws the obstacles.
    overlay_style: ObstacleStyle,
    /// Simulated seconds since the last rest probe's measurement began.
    since_probe: f32,
}

impl SphModel {
    /// A model on the CPU whose picture grid is `cells` (the canvas' shape), on `threads`
    /// workers (0: one per core), holding at most `budget` particles (clamped to
    /// 1..=[`crate::sim::sph::MAX_PARTICLES`]).
    pub fn new(cells: (usize, usize), threads: usize, budget: usize) -> Result<Self, CpuError> {
        let cells = model_cells(cells);
        let cpu = CpuFluid::new(empty(cells), threads)?;
        let threads = cpu.threads();
        let mut m = Self::with_backend(Box::new(cpu), cells, budget);
        (m.name, m.threads) = ("cpu", threads);
        Ok(m)
    }

    /// The same on `ctx`'s device.
    pub fn on_gpu(ctx: GpuContext, cells: (usize, usize), budget: usize) -> Result<Self, GpuError> {
        let cells = model_cells(cells);
        let gpu = GpuBackend::new(ctx, &empty(cells))?;
        let adapter = gpu.adapter_name();
        let mut m = Self::with_backend(Box::new(gpu), cells, budget);
        (m.name, m.adapter) = ("gpu", adapter);
        Ok(m)
    }

    fn with_backend(backend: Box<dyn FluidBackend>, cells: (usize, usize), budget: usize) -> Self {
        Self {
            backend,
            name: "cpu",
            threads: 0,
            adapter: String::new(),
            knobs: Knobs::default(),
            budget: budget.clamp(1, crate::sim::sph::MAX_PARTICLES),
            cells,
            pending: Vec::new(),
            planner: Planner::default(),
            obstacles: None,
            frame: HeldFrame::default(),
            overlay_style: ObstacleStyle::default(),
            since_probe: 0.0,
        }
    }

    /// The particles (the GPU's read back, waiting for it).
    pub fn fluid(&mut self) -> &Fluid {
        self.backend.fluid()
    }

    /// Take `fluid`'s particles, its box scaled to this model's (at most the budget: the
    /// newest). For benches and tests.
    pub fn set_fluid(&mut self, mut fluid: Fluid) {
        let [w, h] = fluid.size();
        let sy = BOX_HEIGHT / h;
        for p in &mut fluid.pos {
            p[1] *= sy;
        }
        fluid.size = [w, BOX_HEIGHT];
        let snapshot = Snapshot::new(SphSnapshot {
            fluid,
            obstacles: self.obstacles.clone(),
        });
        self.restore(&snapshot);
        self.backend.act(&[], self.budget);
    }

    /// The CPU's worker threads (0 on the GPU).
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The GPU's adapter (empty on the CPU).
    pub fn adapter_name(&self) -> String {
        self.adapter.clone()
    }

    /// The box's size.
    fn size(&self) -> [f32; 2] {
        empty(self.cells).size()
    }

    /// What a `width x height` frame in `look` draws.
    fn job<'a>(&self, look: &'a Look, width: usize, height: usize) -> FrameJob<'a> {
        FrameJob {
            look,
            width,
            height,
            target_density: self.knobs.target_density,
            model_rows: self.cells.1,
        }
    }

    /// Draw the obstacles over a finished frame in `style`, from the model's mask.
    fn overlay(&self, style: ObstacleStyle, width: usize, height: usize, out: &mut [u8]) {
        if let Some(mask) = &self.obstacles
            && out.len() == width * height * 4
        {
            obstacle_overlay::draw(mask, style, out, width, height);
        }
    }
}

/// An empty box for a model of `cells`.
fn empty(cells: (usize, usize)) -> Fluid {
    Fluid::new(cells.0 as f32 / cells.1 as f32)
}

impl Model for SphModel {
    fn backend(&self) -> &'static str {
        self.name
    }

    fn resolution(&self) -> Resolution {
        Resolution {
            cells: self.cells,
            detail: self.cells,
        }
    }

    fn inject(&mut self, sources: &[Splat]) {
        queue_sources(&mut self.pending, sources);
    }

    fn advance(&mut self, params: &StepInput) {
        // The step's liquid knobs; a smaller budget recycles the oldest particles at once.
        (self.knobs, self.budget) = liquid_knobs(&params.liquid);
        self.backend.act(&[], self.budget);
        let actions: Vec<Action> = self
            .pending
            .drain(..)
            .filter_map(|s| self.planner.plan(&s, &self.knobs, self.budget))
            .collect();
        self.backend.act(&actions, self.budget);
        let Some((steps, sub)) = substeps(params.dt).filter(|_| !self.backend.is_empty()) else {
            return;
        };
        self.since_probe += sub * steps as f32;
        self.backend.step(&self.knobs, sub, steps);
    }

    fn set_effort(&mut self, _sweeps: u32) {}

    fn reset(&mut self) {
        self.pending.clear();
        self.backend.set_fluid(empty(self.cells));
    }

    fn render(&mut self, look: &Look, width: usize, height: usize, out: &mut [u8]) {
        assert_eq!(out.len(), width * height * 4, "frame buffer size");
        if width == 0 || height == 0 {
            return;
        }
        let job = self.job(look, width, height);
        self.backend.render(&job, out);
        self.overlay(look.obstacles, width, height, out);
    }

    fn request_frame(&mut self, look: &Look, width: usize, height: usize) -> bool {
        if width == 0 || height == 0 {
            return false;
        }
        self.overlay_style = look.obstacles;
        let job = self.job(look, width, height);
        if let Some(started) = self.backend.request_frame(&job) {
            return started;
        }
        let mut frame = std::mem::take(&mut self.frame);
        frame.fill(width, height, |out| self.backend.render(&job, out));
        self.frame = frame;
        true
    }

    fn take_frame(&mut self, out: &mut Vec<u8>) -> Option<(usize, usize)> {
        let (w, h) = match self.frame.take(out) {
            Some(size) => size,
            None => self.backend.take_frame(out)?,
        };
        self.overlay(self.overlay_style, w, h, out);
        Some((w, h))
    }

    /// The liquid's activity: how far its particles moved since the last probe. A liquid
    /// under gravity never quite rests (a few particles keep creeping and jittering in a pool
    /// that looks still), so it counts as still once 95 % of its particles move slower than
    /// [`LIQUID_STILL`] on average over the probe's window; then its speed reads 0, else the
    /// 95th percentile's speed. New particles or pending sources count as motion. On the GPU
    /// the places are read back without waiting: a call returns what an earlier one started.
    fn probe_activity(&mut self, tag: u64) -> Option<(u64, Activity)> {
        if !self.pending.is_empty() {
            return Some((tag, liquid_activity(1.0)));
        }
        self.backend.probe(tag, &mut self.since_probe)
    }

    fn failure(&self) -> Option<GpuError> {
        self.backend.failure()
    }

    fn set_obstacles(&mut self, mask: Option<&Mask>) {
        self.obstacles = model_mask(mask, self.cells);
        let size = self.size();
        let solids = self.obstacles.as_ref().and_then(|m| solids(m, size));
        self.backend.set_solids(solids);
    }

    fn obstacles(&self) -> Option<&Mask> {
        self.obstacles.as_ref()
    }

    fn snapshot(&mut self) -> Snapshot {
        Snapshot::new(SphSnapshot {
            fluid: self.backend.fluid().clone(),
            obstacles: self.obstacles.clone(),
        })
    }

    fn restore(&mut self, snapshot: &Snapshot) -> bool {
        let Some(s) = snapshot.get::<SphSnapshot>() else {
            return false;
        };
        self.backend.set_fluid(carried(&s.fluid, self.size()[0]));
        self.set_obstacles(s.obstacles.as_ref());
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fluid::Liquid;
    use crate::fluid::SplatShape;
    use crate::sim::model_tests::{broken_splats, broken_steps, note, shock};

    fn model(budget: usize) -> SphModel {
        SphModel::new((64, 36), 1, budget).expect("a model")
    }

    /// Sources only: no time passes.
    fn sources_only() -> StepInput {
        StepInput {
            dt: 0.0,
            ..StepInput::default()
        }
    }

    /// The same with a particle budget.
    fn with_budget(p: StepInput, budget: u32) -> StepInput {
        StepInput {
            liquid: Liquid { budget, ..p.liquid },
            ..p
        }
    }

    fn step() -> StepInput {
        StepInput {
            dt: 1.0 / 60.0,
            ..StepInput::default()
        }
    }

    /// A note becomes a burst of particles in its colour around its place, moving with its
    /// force; a note past the budget recycles the oldest particles, not the new ones.
    #[test]
    fn notes_become_bursts_and_the_budget_recycles_the_oldest() {
        let mut m = model(500);
        m.inject(&[note(0.4, [1.0, 0.0, 0.0])]);
        m.advance(&with_budget(sources_only(), 500));
        let n = m.fluid().len();
        // The disc's area at half the target density: pi 0.5² 55 / 2 = 21.6.
        assert!((15..=30).contains(&n), "{n}");
        let f = m.fluid();
        for (p, c) in f.pos.iter().zip(&f.color) {
            assert_eq!(*c, [1.0, 0.0, 0.0]);
            let d = (p[0] - 4.0).hypot(p[1] - 6.0);
            assert!(d <= 0.5 + 1e-4, "{p:?} is {d} from the note");
        }
        let vy: f32 = m.fluid().vel.iter().map(|v| v[1]).sum::<f32>() / n as f32;
        assert!(
            (vy - 5.0).abs() < 1.0,
            "mean upward speed {vy}, force 0.5 x 10"
        );
        // Fill past the budget with green notes over time: the red ones (oldest) go first.
        for k in 0..40 {
            m.inject(&[note(0.2 + 0.03 * (k % 40) as f32, [0.0, 1.0, 0.0])]);
            m.advance(&with_budget(step(), 500));
        }
        assert_eq!(m.fluid().len(), 500);
        assert!(
            m.fluid().color.iter().all(|c| *c == [0.0, 1.0, 0.0]),
            "the oldest (red) particles were recycled first"
        );
        // Every red particle (serial numbers 0..n) is gone.
        let oldest = m.fluid().birth.iter().copied().min().unwrap_or(0);
        assert!(oldest >= n as u64, "{oldest} < {n}");
    }

    /// A radial splat with dye (a tom drum) pours particles like any note; without dye (the
    /// mouse) it only pulls.
    #[test]
    fn a_radial_splat_with_dye_still_pours() {
        let mut m = model(6000);
        m.inject(&[Splat {
            shape: SplatShape::Radial,
            force: [-0.5, 0.0],
            ..note(0.5, [0.8, 0.4, 0.1])
        }]);
        m.advance(&sources_only());
        assert!(m.fluid().len() > 10, "{}", m.fluid().len());
        let n = m.fluid().len();
        m.inject(&[Splat {
            shape: SplatShape::Radial,
            force: [0.5, 0.0],
            amount: 0.0,
            ..note(0.5, [0.0; 3])
        }]);
        m.advance(&sources_only());
        assert_eq!(m.fluid().len(), n, "a pull adds nothing");
    }

    /// A splat without dye is a shock: it pushes the particles near it along its force and
    /// leaves those far away alone.
    #[test]
    fn a_shock_pushes_the_particles_near_it() {
        let mut m = model(2000);
        m.inject(&[note(0.3, [1.0; 3]), note(1.5, [1.0; 3])]);
        m.advance(&sources_only());
        let before = m.fluid().vel.clone();
        m.inject(&[shock([0.3, 0.6], [3.0, 0.0])]);
        m.advance(&sources_only());
        let f = m.fluid();
        let (mut near, mut far) = (0, 0);
        for ((p, v), b) in f.pos.iter().zip(&f.vel).zip(&before) {
            if p[0] < 8.0 {
                assert!(v[0] > b[0] + 5.0, "near: {v:?} from {b:?}");
                near += 1;
            } else {
                assert_eq!(v, b, "far");
                far += 1;
            }
        }
        assert!(near > 10 && far > 10, "{near} {far}");
    }

    /// The liquid falls under gravity against "up", and the picture shows it where it is: lit
    /// in its colour at its place, black elsewhere; an empty model is black.
    #[test]
    fn the_liquid_falls_and_shows_where_it_is() {
        let look = Look::default();
        let (w, h) = (128, 72);
        let mut frame = vec![0u8; w * h * 4];
        let mut m = model(2000);
        m.render(&look, w, h, &mut frame);
        assert!(
            frame.chunks(4).all(|p| p[..3].iter().all(|&c| c < 16)),
            "empty is dark"
        );
        m.inject(&[Splat {
            radius: 0.1,
            force: [0.0, 0.0],
            ..note(0.9, [0.1, 0.3, 1.0])
        }]);
        m.advance(&sources_only());
        let y0 = m.fluid().pos.iter().map(|p| p[1]).sum::<f32>();
        for _ in 0..30 {
            m.advance(&step());
        }
        let y1 = m.fluid().pos.iter().map(|p| p[1]).sum::<f32>();
        assert!(y1 < y0 - 1.0, "fell: {y0} -> {y1}");
        m.render(&look, w, h, &mut frame);
        let px = |x: usize, y: usize| {
            let i = (y * w + x) * 4;
            [frame[i], frame[i + 1], frame[i + 2]]
        };
        // Where the liquid is (its mean place, rows top first), blue; far to the side, dark.
        let n = m.fluid().len() as f32;
        let (mx, my) = m
            .fluid()
            .pos
            .iter()
            .fold((0.0, 0.0), |a, p| (a.0 + p[0] / n, a.1 + p[1] / n));
        let (cx, cy) = (
            (mx / 10.0 * h as f32) as usize,
            ((1.0 - my / 10.0) * h as f32) as usize,
        );
        let lit = px(cx, cy.min(h - 1));
        assert!(lit[2] > 100 && lit[2] > lit[0], "{lit:?} at {cx},{cy}");
        let side = px(w - 4, 4);
        assert!(side.iter().all(|&c| c < 40), "{side:?}");
        // Gravity follows the liquid's knob: tilted 90 degrees, it pulls to the left.
        let x0 = m.fluid().pos.iter().map(|p| p[0]).sum::<f32>() / n;
        let tilted = StepInput {
            liquid: Liquid {
                gravity: crate::fluid::gravity_vector(1.2, 90.0),
                ..Liquid::default()
            },
            ..step()
        };
        for _ in 0..30 {
            m.advance(&tilted);
        }
        let x1 = m.fluid().pos.iter().map(|p| p[0]).sum::<f32>() / n;
        assert!(x1 < x0 - 0.5, "slid left: {x0} -> {x1}");
    }

    /// A snapshot carries the particles into a model of another shape (x scaled to its box);
    /// models of the other kind refuse each other's snapshots; a reset empties the box.
    #[test]
    fn snapshots_carry_the_liquid_and_refuse_the_grid() {
        let mut a = model(2000);
        a.inject(&[note(0.5, [1.0, 0.5, 0.0])]);
        a.advance(&step());
        let mut b = SphModel::new((36, 36), 1, 2000).expect("a square model");
        assert!(b.restore(&a.snapshot()));
        assert_eq!(b.fluid().len(), a.fluid().len());
        let (ax, bx) = (a.fluid().pos[0][0], b.fluid().pos[0][0]);
        assert!((bx - ax * 36.0 / 64.0).abs() < 1e-4, "{ax} -> {bx}");
        assert!(!b.restore(&Snapshot::new(42u32)));
        b.reset();
        assert!(b.fluid().is_empty());
        let spec = crate::sim::model::ModelSpec {
            kind: crate::sim::model::Kind::Grid,
            cells: (32, 18),
            detail: 1,
            effort_sweeps: 20,
            backend: crate::sim::model::Backend::Cpu,
            gpu: Default::default(),
            cpu_threads: 1,
        };
        let (mut grid, _) = crate::sim::create::create_model(&spec).expect("grid");
        assert!(!grid.restore(&a.snapshot()), "the grid refuses particles");
        assert!(
            !a.restore(&grid.snapshot()),
            "the particles refuse the grid"
        );
    }

    /// The largest canvases keep their shape (both sides scaled alike), and so does the box.
    #[test]
    fn huge_canvases_keep_their_shape() {
        let mut m = SphModel::new((4779, 2048), 1, 100).expect("a model");
        let (w, h) = m.resolution().cells;
        assert!(w <= 4096 && h <= 4096, "{w} x {h}");
        let want = 4779.0 / 2048.0;
        assert!((w as f32 / h as f32 - want).abs() < 0.01, "{w} x {h}");
        let [bw, bh] = m.fluid().size();
        assert!((bw / bh - want).abs() < 0.01, "box {bw} x {bh}");
    }

    /// A pool comes to rest: its activity reads motion while it falls and sloshes, then 0
    /// once it has settled (well within a minute with the default drag), still by the
    /// engine's measure whatever the dye's dissipation (the liquid keeps its colours); a note
    /// wakes it. An empty box is still.
    #[test]
    fn a_settled_pool_reads_as_still_and_a_note_wakes_it() {
        use crate::fluid::ColorMode;
        let mut m = model(6000);
        let look = Look::default();
        // The default dye dissipation fades the grid's dye, not the liquid's colours.
        let fading = true;
        let (_, a) = m.probe_activity(0).expect("a probe");
        assert!(a.still(&look, fading && !a.keeps_colour), "empty: {a:?}");
        for k in 0..12 {
            m.inject(&[Splat {
                radius: 0.1,
                ..note(0.15 + 0.13 * k as f32, [1.0, 0.5, 0.2])
            }]);
        }
        // The default drag, 0.2/s.
        let frame = step();
        let mut first_still = None;
        let mut moving_at_first = false;
        for probe in 0..240 {
            for _ in 0..15 {
                m.advance(&frame);
            }
            let (_, a) = m.probe_activity(probe).expect("a probe");
            assert!(a.keeps_colour && a.max_speed.is_finite());
            if probe == 2 {
                moving_at_first = a.max_speed > LIQUID_STILL;
            }
            if a.max_speed == 0.0 {
                assert!(a.still(&look, fading && !a.keeps_colour), "{a:?}");
                let hue = Look {
                    color_mode: ColorMode::VelocityHue,
                    ..look
                };
                assert!(a.still(&hue, false), "{a:?}");
                first_still = Some(probe);
                break;
            }
        }
        assert!(moving_at_first, "the falling liquid moved");
        let at = first_still.expect("the pool came to rest within a minute");
        eprintln!("still after {} s", (at + 1) as f32 * 0.25);
        m.inject(&[note(0.5, [0.0, 1.0, 0.0])]);
        let (_, a) = m.probe_activity(999).expect("a probe");
        assert!(!a.still(&look, false), "a note wakes it: {a:?}");
    }

    /// Broken sources and steps change nothing or stay finite.
    #[test]
    fn broken_sources_are_ignored() {
        let mut m = model(100);
        m.inject(&broken_splats());
        for step in broken_steps(100) {
            m.advance(&step);
        }
        let f = m.fluid();
        assert!(f.len() <= 100);
        assert!(f.pos.iter().chain(&f.vel).flatten().all(|x| x.is_finite()));
    }
}
