//! The GPU as every model and the picture use it: the device and its queue ([`context`]),
//! compute kernels built from the WGSL compiled into the binary ([`kernel`], [`shaders`]), and
//! frames read back through a pool of staging buffers ([`frames`]). The passes live with what
//! they compute: the fluids' in `sim::grid::gpu` and `sim::sph::gpu`, the picture's in
//! `display::gpu`. This room imports nothing of ours but the shared words (`fluid`).

pub mod context;
pub(crate) mod frames;
pub mod kernel;
pub mod serial;
pub mod shaders;
pub mod timestamps;

pub use context::{GpuContext, GpuError, GpuOptions};
pub use kernel::WORKGROUP;

/// Bytes of `n` f32 values.
pub(crate) fn bytes_f32(n: usize) -> u64 {
    (n * 4) as u64
}
