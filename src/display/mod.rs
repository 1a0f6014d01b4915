//! The display: the picture every model hands its light to. Colour (dye colour, density or
//! velocity hue, heat's fire, particle light), exposure, tone, bloom, sunrays, relief shading,
//! palettes and background, sRGB and dither, then the overlays (streamlines, obstacles): from
//! a model's fields to the RGBA8 frame.
//!
//! **Input.** On the CPU a model fills a [`cpu::colorize::Source`]: plain slices that any model
//! can provide (the velocity faces, the three dye or light planes and their grid size, the
//! temperature, and the particles' light at the picture's size in [`LIGHT_UNITS`]), and hands
//! it to a [`cpu::picture::Picture`] with the [`Look`](crate::fluid::Look). On the GPU it hands
//! a [`gpu::GpuSource`] (its buffers, named, with their sizes) to a [`gpu::GpuPicture`] the
//! same way. The grid fluid hands its dye; the particle fluid the light it splats from its
//! particles. Over the finished frame, the streamlines a model traced ([`streamlines`]: the
//! lines' model; [`cpu::streamlines`], [`gpu::GpuPicture::encode_streamlines`]) and the
//! obstacles of a [`Mask`](crate::fluid::mask::Mask). A model drawing points of light (the
//! grid fluid's particles) lands them on the pixels with [`points`].
//!
//! **Direction.** The display imports no model: nothing here names the models' module
//! (`sim`). It speaks the shared words ([`crate::fluid`]), computes with the shared kernels
//! ([`crate::kernels`]) and runs on the shared GPU device ([`crate::gpu`]); the models import
//! it, never the other way round.
//!
//! **Rooms.** `cpu/` holds the CPU passes, one file per pass; `gpu/` the same passes on the
//! GPU; [`effects`], [`streamlines`] and [`points`] what both share. A pass keeps one name on
//! the CPU (`display/cpu/<name>.rs`), on the GPU (`display/gpu/<name>.rs`) and in WGSL
//! (`shaders/<name>.wgsl`).

pub mod cpu;
pub mod effects;
pub mod gpu;
pub mod points;
pub mod streamlines;
pub mod volume;

/// Fixed-point units per unit of light in the particles' light buffer
/// ([`cpu::colorize::Source::particles`]): they add up in integers, so the sum does not
/// depend on the order (the GPU adds them with atomics) and the CPU's and the GPU's pictures
/// agree exactly for the same particles. A million particles of the brightest glow on one
/// pixel stay below `u32::MAX`.
pub const LIGHT_UNITS: f32 = 256.0;
