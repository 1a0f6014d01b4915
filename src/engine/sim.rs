//! The solver the simulation thread runs, and what it is running on.

use super::*;

fn cpu_threads(requested: usize) -> usize {
    if requested > 0 {
        return requested;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (cores / 2).max(1)
}

/// The solver configuration for `settings` and the discrete knobs.
fn sim_config(settings: &Settings, discrete: &Discrete) -> SimConfig {
    let (w, h) = settings.sim_grid();
    let mut cfg = SimConfig::new(w, h);
    cfg.dye_scale = settings.sanitized().dye_scale as usize;
    cfg.pressure_iterations = iterations_for(cfg.pressure, discrete.pressure_iterations);
    cfg.sanitized()
}

/// The solver and what it is running on.
pub(super) struct Sim {
    pub(super) solver: Box<dyn Solver>,
    pub(super) info: SolverInfo,
    pub(super) settings: Settings,
}

impl Sim {
    pub(super) fn new(
        settings: Settings,
        discrete: &Discrete,
        options: &EngineOptions,
    ) -> Result<Self, crate::sim::cpu::CpuError> {
        let cfg = sim_config(&settings, discrete);
        let (mut solver, info) = create_solver(
            &cfg,
            settings.backend,
            &options.gpu,
            cpu_threads(options.cpu_threads),
        )?;
        solver.set_measure(false);
        Ok(Self {
            solver,
            info,
            settings,
        })
    }

    /// Rebuild for new settings, carrying the fluid over (resampled to the new grids). If the
    /// new solver cannot start, the old one runs on with the old settings.
    pub(super) fn rebuild(
        &mut self,
        settings: Settings,
        discrete: &Discrete,
        options: &EngineOptions,
    ) {
        match Self::new(settings.clone(), discrete, options) {
            Ok(mut sim) => {
                let fields = self.solver.read_fields();
                sim.solver.write_fields(&fields);
                *self = sim;
            }
            Err(e) => {
                nice_plug::nice_error!("Keeping the current solver: {e}");
                // Do not retry every settings poll.
                self.settings = settings;
            }
        }
    }

    /// Switch to the CPU after a GPU failure, carrying the fields over where the GPU can still
    /// read them back.
    pub(super) fn fall_back(
        &mut self,
        reason: String,
        discrete: &Discrete,
        options: &EngineOptions,
    ) {
        nice_plug::nice_error!("The GPU failed, switching to the CPU solver: {reason}");
        let fields = self.solver.read_fields();
        let cfg = sim_config(&self.settings, discrete);
        match crate::sim::cpu::CpuSolver::new(&cfg, cpu_threads(options.cpu_threads)) {
            Ok(cpu) => {
                self.info = SolverInfo {
                    backend: "cpu",
                    device: crate::sim::threads_label(cpu.threads()),
                    fallback: Some(reason),
                };
                self.solver = Box::new(cpu);
                self.solver.set_measure(false);
                self.solver.write_fields(&fields);
            }
            Err(e) => {
                nice_plug::nice_error!("No CPU solver either: {e}");
                self.info.fallback = Some(format!("{reason}; and {e}"));
            }
        }
    }
}
