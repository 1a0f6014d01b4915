//! Sunrays (sunrays.wgsl): a radial blur of the bloom's thresholded light towards the frame's
//! centre, on a small bloom level. Mirrors cpu/sunrays.rs (`sunrays`).

use super::bloom::{Bloom, MipUniform};
use crate::gpu::kernel::{Binding, Dispatcher, Kernel, groups2, module, uniform};

/// The `@binding`s of sunrays.wgsl.
pub(crate) mod binding {
    use super::Binding;
    pub const M: Binding = Binding::new(0, "M");
    pub const SRC: Binding = Binding::new(1, "src");
    pub const DST: Binding = Binding::new(2, "dst");
    #[cfg(test)]
    pub const ALL: &[Binding] = &[M, SRC, DST];
}

/// The sunrays pass; its bind group follows the bloom's levels (rebuilt with them).
pub(crate) struct Sunrays {
    sunrays: Kernel,
    /// The bind group, the level's size, and its uniform (kept alive).
    target: Option<(wgpu::BindGroup, (usize, usize), wgpu::Buffer)>,
}

impl Sunrays {
    pub fn new(device: &wgpu::Device) -> Self {
        let m = module(device, "sunrays");
        Self {
            sunrays: Kernel::new(device, &m, "sunrays"),
            target: None,
        }
    }

    /// Bind to `bloom`'s rays level; call whenever the bloom rebuilds its levels.
    pub fn bind(&mut self, device: &wgpu::Device, bloom: &Bloom) {
        use binding::*;
        let (src, size, dst) = bloom.rays_source();
        let mip = uniform(device, "Uniform: sunrays", &MipUniform::new(size, size));
        let group = self
            .sunrays
            .bind(device, &[(M, &mip), (SRC, src), (DST, dst)]);
        self.target = Some((group, size, mip));
    }

    /// Trace the rays.
    pub fn encode(&self, d: &mut Dispatcher) {
        let (group, (w, h), _) = self.target.as_ref().expect("bind made the target");
        d.go(&self.sunrays, group, groups2(*w, *h));
    }
}
