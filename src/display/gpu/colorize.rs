//! Colorize (colorize.wgsl): the picture of a model's fields at any output size: the RGBA8
//! frame (legacy tone) or the light the tone pass tones (filmic). Mirrors
//! `display/cpu/colorize.rs` (`colorize`).

use super::GpuSource;
use crate::gpu::bytes_f32;
use crate::gpu::kernel::{Binding, Dispatcher, Kernel, groups2, module, storage};

/// The `@binding`s of colorize.wgsl.
pub(crate) mod binding {
    use super::Binding;
    pub const C: Binding = Binding::new(0, "C");
    pub const U: Binding = Binding::new(1, "u");
    pub const V: Binding = Binding::new(2, "v");
    pub const DYE: Binding = Binding::new(3, "dye");
    pub const FRAME: Binding = Binding::new(4, "frame");
    pub const LIGHT: Binding = Binding::new(5, "light");
    pub const HEAT: Binding = Binding::new(6, "heat");
    pub const PLIGHT: Binding = Binding::new(7, "plight");
    #[cfg(test)]
    pub const ALL: &[Binding] = &[C, U, V, DYE, FRAME, LIGHT, HEAT, PLIGHT];
}

/// The most sources a target keeps bind groups for: a grid fluid alternates two buffers each
/// of velocity, dye and temperature (8 combinations).
const MAX_BOUND_SOURCES: usize = 8;

/// The fields of one source a bind group was made for.
#[derive(PartialEq)]
struct Bound {
    u: wgpu::Buffer,
    v: wgpu::Buffer,
    dye: wgpu::Buffer,
    heat: wgpu::Buffer,
}

/// The frame target of one output size and the bind groups of the sources drawn into it.
struct Target {
    size: (usize, usize),
    frame: wgpu::Buffer,
    /// Linear light, one `vec4<f32>` per pixel (filmic tone; the tone pass reads it).
    light: wgpu::Buffer,
    /// The particles' light, three planes of fixed-point units (one word when the frames have
    /// no particles).
    plight: wgpu::Buffer,
    particles: bool,
    /// The bind group of each source seen since the target was made (or the sources were
    /// forgotten), most recently used last. Each holds its source's buffers alive.
    groups: Vec<(Bound, wgpu::BindGroup)>,
}

/// The colorize pass; its target is rebuilt only when the output size changes.
pub(crate) struct Colorize {
    colorize: Kernel,
    /// The colour uniform (`ColourUniform`), bound in every group.
    uniform: wgpu::Buffer,
    /// Bound where a source has no velocity or temperature: a few zeros, so a source without
    /// them colours as still and cold. Reads past its end stay inside it (or read zero): the
    /// shader modules are made with wgpu's bounds checks (`gpu::kernel::module`), which this
    /// relies on.
    zeros: wgpu::Buffer,
    target: Option<Target>,
}

impl Colorize {
    pub fn new(device: &wgpu::Device, uniform: &wgpu::Buffer) -> Self {
        let m = module(device, "colorize");
        Self {
            colorize: Kernel::new(device, &m, "colorize"),
            uniform: uniform.clone(),
            zeros: storage(device, "Buffer: zeros", 16),
            target: None,
        }
    }

    /// Make sure the frame target exists for `width x height`, with a buffer for the
    /// particles' light when `particles` (a target with one serves frames without too);
    /// whether it was (re)built.
    pub fn ensure(
        &mut self,
        device: &wgpu::Device,
        (width, height): (usize, usize),
        particles: bool,
    ) -> bool {
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
        self.target = Some(Target {
            size: (width, height),
            frame,
            light,
            plight,
            particles,
            groups: Vec::with_capacity(MAX_BOUND_SOURCES),
        });
        true
    }

    fn target(&self) -> &Target {
        self.target.as_ref().expect("ensure made the target")
    }

    /// The frame buffer (after [`Colorize::ensure`]).
    pub fn frame(&self) -> &wgpu::Buffer {
        &self.target().frame
    }

    /// The light buffer (after [`Colorize::ensure`]).
    pub fn light(&self) -> &wgpu::Buffer {
        &self.target().light
    }

    /// The particles' light buffer (after [`Colorize::ensure`]; one word unless it was asked
    /// for).
    pub fn particle_light(&self) -> &wgpu::Buffer {
        &self.target().plight
    }

    /// The frame size (after [`Colorize::ensure`]).
    pub fn size(&self) -> (usize, usize) {
        self.target().size
    }

    /// Drop the bind groups of the sources seen so far (and with them the buffers they hold):
    /// for a model whose source buffers were replaced.
    pub fn forget_sources(&mut self) {
        if let Some(t) = &mut self.target {
            t.groups.clear();
        }
    }

    /// Bind `src` to the target (a group made once per source and target), and return the
    /// group's index.
    fn bind(&mut self, device: &wgpu::Device, src: &GpuSource) -> usize {
        use binding::*;
        let heat = src.heat.unwrap_or(&self.zeros);
        let (u, v) = src.velocity.unwrap_or((&self.zeros, &self.zeros));
        let key = Bound {
            u: u.clone(),
            v: v.clone(),
            dye: src.dye.clone(),
            heat: heat.clone(),
        };
        let t = self.target.as_mut().expect("ensure made the target");
        if let Some(i) = t.groups.iter().position(|(b, _)| *b == key) {
            // Most recently used last.
            let hit = t.groups.remove(i);
            t.groups.push(hit);
            return t.groups.len() - 1;
        }
        if t.groups.len() == MAX_BOUND_SOURCES {
            t.groups.remove(0);
        }
        let group = self.colorize.bind(
            device,
            &[
                (C, &self.uniform),
                (U, u),
                (V, v),
                (DYE, src.dye),
                (FRAME, &t.frame),
                (LIGHT, &t.light),
                (HEAT, heat),
                (PLIGHT, &t.plight),
            ],
        );
        t.groups.push((key, group));
        t.groups.len() - 1
    }

    /// Colorize `src` into the frame (or the light) buffer.
    pub fn encode(&mut self, device: &wgpu::Device, d: &mut Dispatcher, src: &GpuSource) {
        let i = self.bind(device, src);
        let t = self.target();
        d.go(&self.colorize, &t.groups[i].1, groups2(t.size.0, t.size.1));
    }
}
