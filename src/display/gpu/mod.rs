//! The picture on the GPU: the same passes as `display/cpu/`, as wgpu compute shaders (WGSL in
//! `shaders/`, one file per pass, named as the CPU pass: colorize, bloom, sunrays, tone,
//! streamlines, obstacle_overlay), driven by [`GpuPicture`].
//!
//! **Input.** A model hands a [`GpuSource`]: its buffers, named, with their sizes (the dye or
//! light as RGBA per cell, and the velocity faces and temperature when it has them). The grid
//! fluid hands its current dye, velocity and temperature; the particle fluid the field of light
//! it splats from its particles. A model draws its own layers (the grid's particles and
//! streamlines) through the hooks of [`GpuPicture`]'s steps.

pub(crate) mod bloom;
pub(crate) mod colorize;
pub(crate) mod obstacle_overlay;
pub mod picture;
pub mod raymarch;
pub mod streamlines;
pub(crate) mod sunrays;
pub(crate) mod tone;
pub(crate) mod uniforms;

pub use picture::{FrameJob, GpuPicture};

/// What a model hands the picture on the GPU: its buffers and their sizes. Rows run bottom
/// first, as the CPU's [`crate::display::cpu::colorize::Source`].
#[derive(Clone, Copy, Debug)]
pub struct GpuSource<'a> {
    /// The grid of the velocity faces and the temperature, `(w, h)` cells.
    pub grid: (usize, usize),
    /// The velocity faces: `u` `(w + 1) x h`, `v` `w x (h + 1)` (`None`: the model has no
    /// velocity field; the velocity hue then shows it still).
    pub velocity: Option<(&'a wgpu::Buffer, &'a wgpu::Buffer)>,
    /// The dye, or the light, RGBA `vec4<f32>` per cell (alpha unused).
    pub dye: &'a wgpu::Buffer,
    /// The dye's grid, `(dw, dh)` cells.
    pub dye_size: (usize, usize),
    /// The temperature, `w x h` (`None`: cold everywhere).
    pub heat: Option<&'a wgpu::Buffer>,
}
