//! The grid fluid as a [`Model`]: [`GridModel`] over the CPU or the GPU [`Solver`], and the
//! solvers' configuration for a [`ModelSpec`].

use super::Fields;
use crate::fluid::{Look, Splat};
use crate::sim::GpuError;
use crate::sim::model::{Model, ModelSpec, Resolution, Snapshot};
use crate::sim::obstacles::Mask;
use crate::sim::{Activity, Extras, SimConfig, Solver, StepInput, iterations_for};

/// The grid solvers' configuration for `spec` (sanitised).
pub fn grid_config(spec: &ModelSpec) -> SimConfig {
    let mut cfg = SimConfig::new(spec.cells.0, spec.cells.1);
    cfg.dye_scale = spec.detail;
    cfg.pressure_iterations = iterations_for(cfg.pressure, spec.effort_sweeps);
    cfg.sanitized()
}

/// What a [`GridModel`]'s [`Snapshot`] holds: the grid's fields, its obstacles, its
/// temperature and its living particles.
struct GridSnapshot {
    fields: Fields,
    obstacles: Option<Mask>,
    extras: Extras,
}

/// The grid fluid (stable fluids on a MAC grid with RGB dye) as a [`Model`], over the CPU or
/// the GPU [`Solver`]. Its [`Snapshot`] holds the grid's [`Fields`] and obstacle mask.
pub struct GridModel {
    solver: Box<dyn Solver>,
}

impl GridModel {
    /// The model over `solver`. Divergence measuring is switched off: the model's callers never
    /// read it, and on the GPU it costs a readback per step.
    pub fn new(mut solver: Box<dyn Solver>) -> Self {
        solver.set_measure(false);
        Self { solver }
    }

    /// The grid solver, for what only grids have (fields, stages, divergence).
    pub fn solver(&mut self) -> &mut dyn Solver {
        self.solver.as_mut()
    }
}

impl Model for GridModel {
    fn backend(&self) -> &'static str {
        self.solver.backend()
    }

    fn resolution(&self) -> Resolution {
        let cfg = self.solver.config();
        Resolution {
            cells: (cfg.width, cfg.height),
            detail: (cfg.dye_width(), cfg.dye_height()),
        }
    }

    fn inject(&mut self, sources: &[Splat]) {
        self.solver.inject(sources);
    }

    fn advance(&mut self, params: &StepInput) {
        self.solver.step(params);
    }

    fn set_effort(&mut self, sweeps: u32) {
        let method = self.solver.config().pressure;
        self.solver
            .set_pressure_iterations(iterations_for(method, sweeps));
    }

    fn reset(&mut self) {
        self.solver.reset();
    }

    fn render(&mut self, look: &Look, width: usize, height: usize, out: &mut [u8]) {
        self.solver.render(look, width, height, out);
    }

    fn request_frame(&mut self, look: &Look, width: usize, height: usize) -> bool {
        self.solver.request_frame(look, width, height)
    }

    fn take_frame(&mut self, out: &mut Vec<u8>) -> Option<(usize, usize)> {
        self.solver.take_frame(out)
    }

    fn frames_in_flight(&self) -> usize {
        self.solver.frames_in_flight()
    }

    fn submit_frame(&mut self, look: &Look, width: usize, height: usize) -> bool {
        self.solver.submit_frame(look, width, height)
    }

    fn wait_frame(&mut self, out: &mut [u8]) -> bool {
        self.solver.wait_frame(out)
    }

    fn probe_activity(&mut self, tag: u64) -> Option<(u64, Activity)> {
        self.solver.probe_activity(tag)
    }

    fn failure(&self) -> Option<GpuError> {
        self.solver.failure()
    }

    fn set_obstacles(&mut self, mask: Option<&Mask>) {
        self.solver.set_obstacles(mask);
    }

    fn obstacles(&self) -> Option<&Mask> {
        self.solver.obstacles()
    }

    fn snapshot(&mut self) -> Snapshot {
        Snapshot::new(GridSnapshot {
            fields: self.solver.read_fields(),
            obstacles: self.solver.obstacles().cloned(),
            extras: self.solver.read_extras(),
        })
    }

    fn restore(&mut self, snapshot: &Snapshot) -> bool {
        match snapshot.get::<GridSnapshot>() {
            Some(s) => {
                // The obstacles first, so the fields written are cleared inside them.
                self.solver.set_obstacles(s.obstacles.as_ref());
                self.solver.write_fields(&s.fields);
                self.solver.write_extras(&s.extras);
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::GpuOptions;
    use crate::sim::create::create_model;
    use crate::sim::grid::cpu::CpuSolver;
    use crate::sim::model::{Backend, Kind};

    /// A `w x h` CPU model's spec: dye twice as fine, one thread.
    fn cpu_spec(w: usize, h: usize) -> ModelSpec {
        ModelSpec {
            kind: Kind::Grid,
            cells: (w, h),
            detail: 2,
            effort_sweeps: 20,
            backend: Backend::Cpu,
            gpu: GpuOptions::default(),
            cpu_threads: 1,
        }
    }

    fn cpu_model(w: usize, h: usize) -> Box<dyn Model> {
        create_model(&cpu_spec(w, h)).expect("CPU model").0
    }

    fn splat() -> Splat {
        Splat {
            pos: [0.8, 0.5],
            radius: 0.08,
            force: [0.0, 2.0],
            color: [1.0, 0.5, 0.25],
            amount: 1.0,
            ..Splat::default()
        }
    }

    #[test]
    fn resolution_follows_the_spec() {
        let m = cpu_model(32, 18);
        let r = m.resolution();
        assert_eq!(r.cells, (32, 18));
        assert_eq!(r.detail, (64, 36));
        assert!((r.aspect() - 32.0 / 18.0).abs() < 1e-6);
        assert_eq!(m.backend(), "cpu");
    }

    /// A snapshot carries the dye into a model of another resolution, and a model refuses a
    /// snapshot of another kind.
    #[test]
    fn snapshots_carry_the_fluid_over() {
        let mut a = cpu_model(32, 18);
        a.inject(&[splat()]);
        a.advance(&StepInput::default());
        let mut b = cpu_model(64, 36);
        assert!(b.restore(&a.snapshot()));
        let (mut before, mut after) = (vec![0u8; 64 * 36 * 4], vec![0u8; 64 * 36 * 4]);
        let look = Look::default();
        a.render(&look, 64, 36, &mut before);
        b.render(&look, 64, 36, &mut after);
        let lit = |f: &[u8]| f.chunks(4).filter(|p| p[0] > 20).count();
        assert!(lit(&before) > 10, "the splat shows: {}", lit(&before));
        let diff = lit(&before).abs_diff(lit(&after));
        assert!(
            diff * 5 < lit(&before),
            "{} vs {}",
            lit(&before),
            lit(&after)
        );

        let other = Snapshot::new(42u32);
        assert!(!b.restore(&other));
    }

    /// A snapshot carries the obstacles over (resampled to the new grid), and a reset keeps
    /// them.
    #[test]
    fn snapshots_and_resets_keep_the_obstacles() {
        use crate::sim::obstacles::Layout;
        let mut a = cpu_model(32, 18);
        assert!(a.obstacles().is_none());
        let mask = Mask::layout(Layout::Disc, 32, 18);
        a.set_obstacles(Some(&mask));
        assert_eq!(a.obstacles(), Some(&mask));
        let mut b = cpu_model(64, 36);
        assert!(b.restore(&a.snapshot()));
        let carried = b.obstacles().expect("the mask came along");
        assert_eq!((carried.width(), carried.height()), (64, 36));
        assert_eq!(carried, &mask.resampled(64, 36));
        b.reset();
        assert!(
            b.obstacles().is_some(),
            "a reset clears the fluid, not the walls"
        );
        // A snapshot without obstacles clears them.
        assert!(b.restore(&cpu_model(16, 9).snapshot()));
        assert!(b.obstacles().is_none());
        // An empty mask is no mask.
        a.set_obstacles(Some(&Mask::empty(32, 18)));
        assert!(a.obstacles().is_none());
    }

    /// A snapshot carries the heat and the living sparks into a model of another resolution
    /// (the heat resampled, about the same in total over the canvas; every spark, in its
    /// place), and a model without either takes none.
    #[test]
    fn snapshots_carry_the_heat_and_the_particles() {
        let mut a = grid_model(32, 18);
        a.inject(&[Splat {
            heat: 2.0,
            particles: 300.0,
            ..splat()
        }]);
        let p = StepInput {
            buoyancy: 1.0,
            ..StepInput::default()
        };
        a.advance(&p);
        let mut b = grid_model(64, 36);
        assert!(b.restore(&a.snapshot()));
        let (ea, eb) = (a.solver().read_extras(), b.solver().read_extras());
        assert_eq!(ea.heat_size, (32, 18));
        assert_eq!(eb.heat_size, (64, 36));
        let total = |e: &Extras| {
            e.heat.iter().map(|&t| f64::from(t)).sum::<f64>()
                / (e.heat_size.0 * e.heat_size.1) as f64
        };
        assert!(total(&ea) > 1e-3, "heated: {}", total(&ea));
        let ratio = total(&eb) / total(&ea);
        assert!((0.8..1.25).contains(&ratio), "mean heat {ratio} of before");
        assert!(ea.particles.len() > 200, "{}", ea.particles.len());
        assert_eq!(eb.particles.len(), ea.particles.len());
        let (pa, pb) = (&ea.particles[0], &eb.particles[0]);
        assert_eq!((pa.pos, pa.age), (pb.pos, pb.age));
        // A fresh model has neither, and restoring its snapshot leaves neither: no heat, no
        // sparks.
        let fresh = cpu_model(16, 9).snapshot();
        assert!(b.restore(&fresh));
        let e = b.solver().read_extras();
        assert!(e.particles.is_empty() && e.heat.is_empty(), "{e:?}");
        let cold = b.probe_activity(1).expect("CPU measures").1;
        assert!(!cold.particles);
    }

    fn grid_model(w: usize, h: usize) -> GridModel {
        let cfg = grid_config(&cpu_spec(w, h));
        GridModel::new(Box::new(CpuSolver::new(&cfg, 1).expect("CPU solver")))
    }

    #[test]
    fn reset_clears_the_fluid() {
        let mut m = cpu_model(32, 18);
        m.inject(&[splat()]);
        m.advance(&StepInput::default());
        let activity = |m: &mut Box<dyn Model>| m.probe_activity(1).expect("CPU measures").1;
        assert!(activity(&mut m).max_dye > 0.1);
        m.reset();
        assert_eq!(activity(&mut m).max_dye, 0.0);
    }
}
