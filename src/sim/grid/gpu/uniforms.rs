//! `GridUniforms` (common.wgsl): the uniform every pass but the solves reads, written once per step
//! (and once per frame for the look). The layout tests check it against its WGSL twin.

use crate::display::effects::Fx;
use crate::fluid::{PALETTE_STOPS, ToneMode};
use crate::sim::grid::physics::{VORTICITY_SCALE_PER_S, decay_factor};
use crate::sim::{Look, MAX_DYE, SimConfig, StepInput};
use bytemuck::{Pod, Zeroable};

/// `GridUniforms` in common.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable, Default, Debug)]
pub(super) struct GridUniforms {
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
    pub color_mode: u32,
    pub brightness: f32,
    pub saturation: f32,
    pub hue_shift: f32,
    /// `ToneMode as u32`: 0 legacy, 1 filmic.
    pub tone: u32,
    pub sigma: f32,
    pub kappa: f32,
    pub ambient: f32,
    pub up_x: f32,
    pub up_y: f32,
    pub heat_decay: f32,
    /// The particles' glow (sanitised), and whether colorize adds their light (1) or not.
    pub glow: f32,
    pub particle_lit: u32,
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

    /// The parameters of colorizing a `width x height` frame with `look` (non-finite values
    /// fall back to the neutral look).
    /// `particles`: whether the particles' light is drawn into this frame.
    pub fn frame(c: &SimConfig, look: &Look, width: usize, height: usize, particles: bool) -> Self {
        let finite_or = |x: f32, neutral: f32| if x.is_finite() { x } else { neutral };
        Self {
            out_w: width as u32,
            out_h: height as u32,
            color_mode: look.color_mode as u32,
            brightness: finite_or(look.brightness, 1.0),
            saturation: finite_or(look.saturation, 1.0),
            hue_shift: finite_or(look.hue_shift, 0.0),
            tone: look.tone as u32,
            glow: crate::sim::grid::particles::sanitize_glow(look.particle_glow),
            particle_lit: u32::from(particles),
            ..Self::base(c)
        }
    }
}

/// `Picture` in common.wgsl: the filmic tone's effects, written once per frame.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable, Default, Debug)]
pub(super) struct PictureUniform {
    pub threshold: f32,
    pub knee: f32,
    pub bloom: f32,
    pub spread: f32,
    pub rays: f32,
    pub shade: f32,
    pub relief: f32,
    pub step: u32,
    pub light: [f32; 4],
    pub background: [f32; 4],
    pub stops: [[f32; 4]; PALETTE_STOPS],
    pub palette: u32,
    pub glow: u32,
    pub glow_w: u32,
    pub glow_h: u32,
    pub effects: u32,
    pub vibrance: f32,
    pub _pad: [u32; 2],
}

impl PictureUniform {
    /// The effects of `look` for a `width x height` frame of the grid `c` (the numbers the
    /// CPU's display pass derives, [`Fx::new`]); `glow`: the size of bloom level 0.
    pub fn new(c: &SimConfig, look: &Look, height: usize, glow: (usize, usize)) -> Self {
        let fx = look.effects.sanitized();
        let d = Fx::new(&fx, height, c.dye_height());
        let on = look.tone != ToneMode::Legacy && fx.any();
        let rgb = |v: [f32; 3]| [v[0], v[1], v[2], 0.0];
        Self {
            threshold: fx.bloom_threshold,
            knee: fx.bloom_knee,
            bloom: fx.bloom,
            spread: fx.bloom_radius,
            rays: fx.rays,
            shade: d.shade,
            relief: d.relief,
            step: d.step as u32,
            light: rgb(d.light),
            background: rgb(d.background),
            stops: d.stops.map_or([[0.0; 4]; PALETTE_STOPS], |s| s.map(rgb)),
            palette: u32::from(d.stops.is_some()),
            glow: u32::from(on && (fx.bloom > 0.0 || fx.rays > 0.0)),
            glow_w: glow.0 as u32,
            glow_h: glow.1 as u32,
            effects: u32::from(on),
            vibrance: d.vibrance,
            _pad: [0; 2],
        }
    }
}
