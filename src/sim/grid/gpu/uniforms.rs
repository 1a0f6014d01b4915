//! `GridUniforms` (common.wgsl): the uniform every pass of the grid fluid but the solves reads,
//! written once per step (and once per frame for the particles' drawing). The shader tests (`sim::shader_tests`)
//! check it against its WGSL twin. The picture's uniforms are the display's
//! (`display::gpu::uniforms`).

use crate::sim::grid::physics::{VORTICITY_SCALE_PER_S, decay_factor};
use crate::sim::{Look, MAX_DYE, SimConfig, StepInput};
use bytemuck::{Pod, Zeroable};

/// `GridUniforms` in common.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable, Default, Debug)]
pub(in crate::sim) struct GridUniforms {
    pub w: u32,
    pub h: u32,
    pub dw: u32,
    pub dh: u32,
    pub dye_scale: u32,
    pub splat_count: u32,
    pub out_w: u32,
    pub out_h: u32,
    pub dt: f32,
    pub k: f32,
    pub vel_decay: f32,
    pub dye_decay: f32,
    pub vort_k: f32,
    pub cell: f32,
    pub a_visc: f32,
    pub a_dye: f32,
    pub max_dye: f32,
    pub sigma: f32,
    pub kappa: f32,
    pub ambient: f32,
    pub up_x: f32,
    pub up_y: f32,
    pub heat_decay: f32,
    /// The particles' glow (sanitised).
    pub glow: f32,
}

impl GridUniforms {
    /// The grid's sizes and constants; no step, no look.
    pub fn base(c: &SimConfig) -> Self {
        Self {
            w: c.width as u32,
            h: c.height as u32,
            dw: c.dye_width() as u32,
            dh: c.dye_height() as u32,
            dye_scale: c.dye_scale as u32,
            cell: 1.0 / c.height as f32,
            max_dye: MAX_DYE,
            ..Default::default()
        }
    }

    /// The parameters of one step `p` (already sanitised) with `splat_count` splats.
    pub fn step(c: &SimConfig, p: &StepInput, splat_count: u32) -> Self {
        let mut gp = Self::base(c);
        let cell = gp.cell;
        gp.splat_count = splat_count;
        gp.dt = p.dt;
        gp.k = p.dt * c.height as f32;
        gp.vel_decay = decay_factor(p.velocity_dissipation, p.dt);
        gp.dye_decay = decay_factor(p.dye_dissipation, p.dt);
        gp.vort_k = p.dt * p.vorticity * VORTICITY_SCALE_PER_S;
        gp.a_visc = p.viscosity * p.dt / (cell * cell);
        let dcell = cell / c.dye_scale as f32;
        gp.a_dye = p.dye_diffusion * p.dt / (dcell * dcell);
        gp.sigma = p.buoyancy;
        gp.kappa = p.weight;
        gp.ambient = p.ambient;
        [gp.up_x, gp.up_y] = p.up;
        gp.heat_decay = decay_factor(p.cooling, p.dt);
        gp
    }

    /// The parameters of drawing the particles into a `width x height` frame with `look`.
    pub fn frame(c: &SimConfig, look: &Look, width: usize, height: usize) -> Self {
        Self {
            out_w: width as u32,
            out_h: height as u32,
            glow: crate::sim::grid::particles::sanitize_glow(look.particle_glow),
            ..Self::base(c)
        }
    }
}
