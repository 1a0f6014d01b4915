//! Tone (tone.wgsl): the filmic tone mode's last pass, colorize's light to the RGBA8
//! frame (effects, tone curve, sRGB encoding, dither). Mirrors cpu/tone.rs (`tone_row`,
//! `tone_fx_row`).

use crate::gpu::kernel::{Binding, Dispatcher, Kernel, groups2, module};

/// The `@binding`s of tone.wgsl.
pub(crate) mod binding {
    use super::Binding;
    pub const C: Binding = Binding::new(0, "C");
    pub const LIGHT: Binding = Binding::new(1, "light");
    pub const FRAME: Binding = Binding::new(2, "frame");
    pub const Q: Binding = Binding::new(3, "Q");
    pub const GLOW: Binding = Binding::new(4, "glow");
    #[cfg(test)]
    pub const ALL: &[Binding] = &[C, LIGHT, FRAME, Q, GLOW];
}

/// The tone pass; its bind group follows colorize's target (rebuilt with it).
pub(crate) struct Tone {
    tone: Kernel,
    /// The bind group and frame size of the current target.
    target: Option<(wgpu::BindGroup, (usize, usize))>,
}

impl Tone {
    pub fn new(device: &wgpu::Device) -> Self {
        let m = module(device, "tone");
        Self {
            tone: Kernel::new(device, &m, "tone"),
            target: None,
        }
    }

    /// Bind the `colour` and effects (`picture`) uniforms, `light`, `glow`, and `frame` (a
    /// `size` picture); call
    /// whenever colorize rebuilds its target.
    #[allow(clippy::too_many_arguments)]
    pub fn bind(
        &mut self,
        device: &wgpu::Device,
        colour: &wgpu::Buffer,
        picture: &wgpu::Buffer,
        light: &wgpu::Buffer,
        glow: &wgpu::Buffer,
        frame: &wgpu::Buffer,
        size: (usize, usize),
    ) {
        use binding::*;
        let group = self.tone.bind(
            device,
            &[
                (C, colour),
                (LIGHT, light),
                (FRAME, frame),
                (Q, picture),
                (GLOW, glow),
            ],
        );
        self.target = Some((group, size));
    }

    /// Tone, encode and dither the light into the frame.
    pub fn encode(&self, d: &mut Dispatcher) {
        let (group, (w, h)) = self.target.as_ref().expect("bind made the target");
        d.go(&self.tone, group, groups2(*w, *h));
    }
}
