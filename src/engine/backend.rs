//! Which solver runs: the GPU when the settings allow and one works, else the CPU.

use crate::params::BackendChoice;
use crate::sim::cpu::{CpuError, CpuSolver};
use crate::sim::gpu::{GpuContext, GpuOptions, GpuSolver};
use crate::sim::{SimConfig, Solver, SolverInfo, threads_label};

/// Create the solver for `cfg`: the GPU when `backend` allows and one works, else the CPU
/// (and say why). `Auto` takes a hardware GPU only: on a software adapter (Mesa's lavapipe,
/// WARP, SwiftShader) the CPU solver is several times faster. Blocks while a GPU device is
/// created; call it on the simulation (or render) thread.
///
/// # Errors
/// [`CpuError`] when not even the CPU solver can start (its threads were refused).
pub fn create_solver(
    cfg: &SimConfig,
    backend: BackendChoice,
    gpu: &GpuOptions,
    cpu_threads: usize,
) -> Result<(Box<dyn Solver>, SolverInfo), CpuError> {
    let mut fallback = None;
    if backend != BackendChoice::Cpu {
        let options = GpuOptions {
            hardware_only: gpu.hardware_only || backend == BackendChoice::Auto,
            ..gpu.clone()
        };
        match GpuContext::new(&options).and_then(|ctx| {
            let device = ctx.adapter_name();
            GpuSolver::new(ctx, cfg).map(|s| (s, device))
        }) {
            Ok((solver, device)) => {
                return Ok((
                    Box::new(solver),
                    SolverInfo {
                        backend: "gpu",
                        device,
                        fallback: None,
                    },
                ));
            }
            Err(e) => {
                nice_plug::nice_warn!("Using the CPU solver: {e}");
                fallback = Some(e.to_string());
            }
        }
    }
    let solver = CpuSolver::new(cfg, cpu_threads)?;
    let device = threads_label(solver.threads());
    Ok((
        Box::new(solver),
        SolverInfo {
            backend: "cpu",
            device,
            fallback,
        },
    ))
}
