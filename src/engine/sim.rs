//! The model the simulation thread runs, and what it is running on.

use super::*;
use crate::params::BackendChoice;
use crate::sim::{CpuError, GpuError};

fn cpu_threads(requested: usize) -> usize {
    if requested > 0 {
        return requested;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (cores / 2).max(1)
}

impl From<crate::params::FluidChoice> for crate::sim::model::Kind {
    fn from(choice: crate::params::FluidChoice) -> Self {
        match choice {
            crate::params::FluidChoice::Grid => Self::Grid,
            crate::params::FluidChoice::Particles => Self::Particles,
            crate::params::FluidChoice::Liquid3d => Self::Liquid3d,
        }
    }
}

impl From<BackendChoice> for Backend {
    fn from(choice: BackendChoice) -> Self {
        match choice {
            BackendChoice::Auto => Backend::Auto,
            BackendChoice::Gpu => Backend::Gpu,
            BackendChoice::Cpu => Backend::Cpu,
        }
    }
}

/// The model to build for `settings` and the discrete knobs.
fn model_spec(settings: &Settings, discrete: &Discrete, options: &EngineOptions) -> ModelSpec {
    ModelSpec {
        kind: settings.fluid.into(),
        cells: settings.sim_grid(),
        detail: settings.sanitized().dye_scale as usize,
        effort_sweeps: discrete.pressure_iterations,
        backend: settings.backend.into(),
        gpu: options.gpu.clone(),
        cpu_threads: cpu_threads(options.cpu_threads),
    }
}

/// The model and what it is running on.
pub(super) struct Sim {
    pub(super) model: Box<dyn Model>,
    pub(super) info: ModelInfo,
    /// The settings as the user chose them (the backend included, even when `cpu_only`).
    pub(super) settings: Settings,
    /// Why the model runs on the CPU whatever the settings ask (a crash, a GPU failure): kept
    /// through rebuilds, so a later settings change does not go back to what failed.
    cpu_only: Option<String>,
}

impl Sim {
    /// A model for `settings`; on the CPU, whatever they ask, when `cpu_only` says why.
    pub(super) fn new(
        settings: Settings,
        discrete: &Discrete,
        options: &EngineOptions,
        cpu_only: Option<String>,
    ) -> Result<Self, CpuError> {
        let mut spec = model_spec(&settings, discrete, options);
        if cpu_only.is_some() {
            spec.backend = Backend::Cpu;
        }
        let (model, mut info) = create_model(&spec)?;
        if cpu_only.is_some() {
            info.fallback.clone_from(&cpu_only);
        }
        Ok(Self {
            model,
            info,
            settings,
            cpu_only,
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
        match Self::new(settings.clone(), discrete, options, self.cpu_only.clone()) {
            Ok(mut sim) => {
                sim.model.restore(&self.model.snapshot());
                *self = sim;
            }
            Err(e) => {
                nice_plug::nice_error!("Keeping the current model: {e}");
                // Do not retry every settings poll.
                self.settings = settings;
            }
        }
    }

    /// Switch to the CPU after a GPU failure, carrying the fields over where the GPU can still
    /// read them back.
    pub(super) fn fall_back(
        &mut self,
        reason: GpuError,
        discrete: &Discrete,
        options: &EngineOptions,
    ) {
        nice_plug::nice_error!("The GPU failed, switching to the CPU solver: {reason}");
        let snapshot = self.model.snapshot();
        let spec = ModelSpec {
            backend: Backend::Cpu,
            ..model_spec(&self.settings, discrete, options)
        };
        match create_model(&spec) {
            Ok((model, info)) => {
                self.info = ModelInfo {
                    fallback: Some(reason.to_string()),
                    ..info
                };
                self.model = model;
                self.model.restore(&snapshot);
                self.cpu_only = Some(reason.to_string());
            }
            Err(e) => {
                nice_plug::nice_error!("No CPU solver either: {e}");
                self.info.fallback = Some(format!("{reason}; and {e}"));
            }
        }
    }
}
