//! The particles' collisions with the obstacles on the GPU (`shaders/sph_solids.wgsl`, entry
//! `collide`): [`crate::sim::sph::solids::Solids`] uploaded once per mask, run after each step's move,
//! point for point as the CPU's [`crate::sim::sph::solids::Solids::collide`].

use crate::gpu::kernel::{Binding, Kernel, module, storage_init, uniform};
use crate::sim::sph::solids::Solids;

/// The `@binding`s of sph_solids.wgsl.
pub(crate) mod binding {
    use super::Binding;
    pub const S: Binding = Binding::new(0, "S");
    pub const POS: Binding = Binding::new(1, "pos");
    pub const VEL: Binding = Binding::new(2, "vel");
    pub const C: Binding = Binding::new(3, "C");
    pub const SOLID: Binding = Binding::new(4, "solid");
    pub const EXIT: Binding = Binding::new(5, "exit");
    #[cfg(test)]
    pub const ALL: &[Binding] = &[S, POS, VEL, C, SOLID, EXIT];
}

/// The uniform `Collide` of sph_solids.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct CollideUniform {
    pub w: u32,
    pub h: u32,
    pub sx: f32,
    pub sy: f32,
}

/// The collide pass's pipeline.
pub(crate) struct CollideKernel(Kernel);

impl CollideKernel {
    pub fn new(device: &wgpu::Device) -> Self {
        Self(Kernel::new(
            device,
            &module(device, "sph_solids"),
            "collide",
        ))
    }
}

/// One mask's obstacles on the GPU, and the bind group that ties them to the particles'
/// buffers (built again only when those are).
pub(crate) struct GpuSolids {
    uniform: wgpu::Buffer,
    solid: wgpu::Buffer,
    exit: wgpu::Buffer,
    group: Option<wgpu::BindGroup>,
}

impl GpuSolids {
    /// Upload `solids`.
    pub fn new(device: &wgpu::Device, solids: &Solids) -> Self {
        let ((w, h), [sx, sy]) = (solids.cells(), solids.cell_size());
        let flags: Vec<u32> = solids.solid().iter().map(|&s| u32::from(s)).collect();
        Self {
            uniform: uniform(
                device,
                "SPH: obstacles",
                &CollideUniform {
                    w: w as u32,
                    h: h as u32,
                    sx,
                    sy,
                },
            ),
            solid: storage_init(device, "SPH: solid cells", &flags),
            exit: storage_init(device, "SPH: exits", solids.exits()),
            group: None,
        }
    }

    /// Forget the bind group (the particles' buffers were replaced).
    pub fn unbind(&mut self) {
        self.group = None;
    }

    /// Encode the pass into `pass` for `n` particles (groups of [`crate::sim::sph::gpu::SW`]), binding
    /// the particles' `sph` uniform, positions and velocities first if needed.
    pub fn encode(
        &mut self,
        device: &wgpu::Device,
        kernel: &CollideKernel,
        (sph, pos, vel): (&wgpu::Buffer, &wgpu::Buffer, &wgpu::Buffer),
        pass: &mut wgpu::ComputePass<'_>,
        workgroups: u32,
    ) {
        use binding as b;
        let group = self.group.get_or_insert_with(|| {
            kernel.0.bind(
                device,
                &[
                    (b::S, sph),
                    (b::POS, pos),
                    (b::VEL, vel),
                    (b::C, &self.uniform),
                    (b::SOLID, &self.solid),
                    (b::EXIT, &self.exit),
                ],
            )
        });
        pass.set_pipeline(&kernel.0.pipeline);
        pass.set_bind_group(0, &*group, &[]);
        pass.dispatch_workgroups(workgroups, 1, 1);
    }
}
