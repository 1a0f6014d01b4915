//! Colorize (colorize.wgsl): the picture of the fluid at any output size: the RGBA8 frame
//! (legacy tone) or the light the display pass tones (filmic). Mirrors cpu/colorize.rs
//! (`colorize`).

use crate::gpu::kernel::{Binding, Dispatcher, Kernel, groups2, module, storage};
use crate::sim::grid::gpu::buffers::{Buffers, bytes_f32};

/// The `@binding`s of colorize.wgsl.
pub(in crate::sim::grid::gpu) mod binding {
    use super::Binding;
    pub const P: Binding = Binding::new(0, "P");
    pub const U: Binding = Binding::new(1, "u");
    pub const V: Binding = Binding::new(2, "v");
    pub const DYE: Binding = Binding::new(3, "dye");
    pub const FRAME: Binding = Binding::new(4, "frame");
    pub const LIGHT: Binding = Binding::new(5, "light");
    pub const HEAT: Binding = Binding::new(6, "heat");
    pub const PLIGHT: Binding = Binding::new(7, "plight");
    #[cfg(test)]
    pub const ALL: &[Binding] = &[P, U, V, DYE, FRAME, LIGHT, HEAT, PLIGHT];
}

/// The frame target of one output size and its bind groups.
struct Target {
    size: (usize, usize),
    frame: wgpu::Buffer,
    /// Linear light, one `vec4<f32>` per pixel (filmic tone; the display pass reads it).
    light: wgpu::Buffer,
    /// The particles' light, three planes of fixed-point units (one word when the frames have
    /// no particles).
    plight: wgpu::Buffer,
    particles: bool,
    /// `[velocity parity][dye parity][heat parity]`.
    groups: [[[wgpu::BindGroup; 2]; 2]; 2],
}

/// The colorize pass; its target is rebuilt only when the output size changes.
pub(in crate::sim::grid::gpu) struct Colorize {
    colorize: Kernel,
    target: Option<Target>,
}

impl Colorize {
    pub fn new(device: &wgpu::Device) -> Self {
        let m = module(device, "colorize");
        Self {
            colorize: Kernel::new(device, &m, "colorize"),
            target: None,
        }
    }

    /// Make sure the frame target exists for `width x height`, with a buffer for the
    /// particles' light when `particles` (a target with one serves frames without too);
    /// whether it was (re)built.
    pub fn ensure(
        &mut self,
        device: &wgpu::Device,
        b: &Buffers,
        (width, height): (usize, usize),
        particles: bool,
    ) -> bool {
        use binding::*;
        if self
            .target
            .as_ref()
            .is_some_and(|t| t.size == (width, height) && (t.particles || !particles))
        {
            return false;
        }
        let frame = storage(device, "Buffer: frame", bytes_f32(width * height));
        let light = storage(device, "Buffer: light", bytes_f32(4 * width * height));
        let plight_words = if particles { 3 * width * height } else { 1 };
        let plight = storage(device, "Buffer: particle light", bytes_f32(plight_words));
        let p = &b.uniforms;
        let groups = [0, 1].map(|i| {
            [0, 1].map(|pd| {
                [0, 1].map(|ph| {
                    self.colorize.bind(
                        device,
                        &[
                            (P, p),
                            (U, &b.u[i]),
                            (V, &b.v[i]),
                            (DYE, &b.dye[pd]),
                            (FRAME, &frame),
                            (LIGHT, &light),
                            (HEAT, &b.heat[ph]),
                            (PLIGHT, &plight),
                        ],
                    )
                })
            })
        });
        self.target = Some(Target {
            size: (width, height),
            frame,
            light,
            plight,
            particles,
            groups,
        });
        true
    }

    /// The frame buffer (after [`Colorize::ensure`]).
    pub fn frame(&self) -> &wgpu::Buffer {
        &self.target.as_ref().expect("ensure made the target").frame
    }

    /// The light buffer (after [`Colorize::ensure`]).
    pub fn light(&self) -> &wgpu::Buffer {
        &self.target.as_ref().expect("ensure made the target").light
    }

    /// The particles' light buffer (after [`Colorize::ensure`]; one word unless it was asked
    /// for).
    pub fn particle_light(&self) -> &wgpu::Buffer {
        &self.target.as_ref().expect("ensure made the target").plight
    }

    /// The frame size (after [`Colorize::ensure`]).
    pub fn size(&self) -> (usize, usize) {
        self.target.as_ref().expect("ensure made the target").size
    }

    /// Colorize velocity `vel`, dye `dye` and temperature `heat` into the frame buffer.
    pub fn encode(&self, d: &mut Dispatcher, vel: usize, dye: usize, heat: usize) {
        let t = self.target.as_ref().expect("ensure made the target");
        d.go(
            &self.colorize,
            &t.groups[vel][dye][heat],
            groups2(t.size.0, t.size.1),
        );
    }
}
