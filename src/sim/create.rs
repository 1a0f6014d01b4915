//! Making a model: [`create_model`] builds the fluid a [`ModelSpec`] names on the backend it
//! allows, falling back to the CPU (and saying why) when no GPU works.

use super::grid::cpu::CpuSolver;
use super::grid::gpu::GpuSolver;
use super::grid::model::{GridModel, grid_config};
use super::model::{Backend, CpuError, Kind, Model, ModelInfo, ModelSpec};
use super::threads_label;
use crate::gpu::{GpuContext, GpuOptions};

/// Create the model for `spec`: on the GPU when `spec.backend` allows and one works, else on
/// the CPU (and say why). `Auto` takes a hardware GPU only: on a software adapter (Mesa's
/// lavapipe, WARP, SwiftShader) the CPU solver is several times faster. Blocks while a GPU
/// device is created; call it on the simulation (or render) thread.
///
/// # Errors
/// [`CpuError`] when not even the CPU solver can start (its threads were refused).
pub fn create_model(spec: &ModelSpec) -> Result<(Box<dyn Model>, ModelInfo), CpuError> {
    match spec.kind {
        Kind::Particles => return create_particles(spec),
        Kind::Liquid3d => return create_liquid3d(spec),
        Kind::Grid => {}
    }
    let cfg = grid_config(spec);
    let mut fallback = None;
    if spec.backend != Backend::Cpu {
        match GpuContext::new(&gpu_options(spec)).and_then(|ctx| {
            let device = ctx.adapter_name();
            GpuSolver::new(ctx, &cfg).map(|s| (s, device))
        }) {
            Ok((solver, device)) => {
                let info = ModelInfo {
                    backend: "gpu",
                    device,
                    fallback: None,
                };
                return Ok((Box::new(GridModel::new(Box::new(solver))), info));
            }
            Err(e) => {
                nice_plug::nice_warn!("Using the CPU solver: {e}");
                fallback = Some(e.to_string());
            }
        }
    }
    let solver = CpuSolver::new(&cfg, spec.cpu_threads)?;
    let info = ModelInfo {
        backend: "cpu",
        device: threads_label(solver.threads()),
        fallback,
    };
    Ok((Box::new(GridModel::new(Box::new(solver))), info))
}

/// The particle fluid for `spec`: on the GPU when `spec.backend` allows and one works, else
/// on the CPU.
fn create_particles(spec: &ModelSpec) -> Result<(Box<dyn Model>, ModelInfo), CpuError> {
    use super::sph::model::{DEFAULT_BUDGET, SphModel};
    let mut fallback = None;
    if spec.backend != Backend::Cpu {
        match GpuContext::new(&gpu_options(spec))
            .and_then(|ctx| SphModel::on_gpu(ctx, spec.cells, DEFAULT_BUDGET))
        {
            Ok(model) => {
                let info = ModelInfo {
                    backend: "gpu",
                    device: model.adapter_name(),
                    fallback: None,
                };
                return Ok((Box::new(model), info));
            }
            Err(e) => {
                nice_plug::nice_warn!("Using the CPU for the particle fluid: {e}");
                fallback = Some(e.to_string());
            }
        }
    }
    let model = SphModel::new(spec.cells, spec.cpu_threads, DEFAULT_BUDGET)?;
    let info = ModelInfo {
        backend: "cpu",
        device: threads_label(model.threads()),
        fallback,
    };
    Ok((Box::new(model), info))
}

/// The 3D liquid for `spec`: its particles on the GPU when `spec.backend` allows and one
/// works (the picture drawn there too), else on the CPU.
fn create_liquid3d(spec: &ModelSpec) -> Result<(Box<dyn Model>, ModelInfo), CpuError> {
    use super::liquid3d::gpu::GpuLiquid;
    use super::liquid3d::model::{DEFAULT_PARTICLES, Liquid3dModel};
    let mut fallback = None;
    if spec.backend != Backend::Cpu {
        match GpuContext::new(&gpu_options(spec)).and_then(GpuLiquid::new) {
            Ok(gpu) => {
                let device = gpu.adapter_name();
                let model = Liquid3dModel::with_backend(
                    Box::new(gpu),
                    spec.cells,
                    spec.cpu_threads,
                    DEFAULT_PARTICLES,
                )?;
                let info = ModelInfo {
                    backend: "gpu",
                    device,
                    fallback: None,
                };
                return Ok((Box::new(model), info));
            }
            Err(e) => {
                nice_plug::nice_warn!("Using the CPU for the 3D liquid: {e}");
                fallback = Some(e.to_string());
            }
        }
    }
    let model = Liquid3dModel::new(spec.cells, spec.cpu_threads, DEFAULT_PARTICLES)?;
    let info = ModelInfo {
        backend: "cpu",
        device: threads_label(model.threads()),
        fallback,
    };
    Ok((Box::new(model), info))
}

/// The GPU options for `spec`: `Auto` takes a hardware GPU only.
fn gpu_options(spec: &ModelSpec) -> GpuOptions {
    GpuOptions {
        hardware_only: spec.gpu.hardware_only || spec.backend == Backend::Auto,
        ..spec.gpu.clone()
    }
}
