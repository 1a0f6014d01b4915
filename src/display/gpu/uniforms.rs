//! The picture's uniforms: `ColourUniform` (the colour stage's sizes and look) and
//! `PictureUniform` (the filmic tone's effects), both written once per frame. Their WGSL twins
//! are `Colour` and `Picture` in common.wgsl; the shader tests (`sim::shader_tests`) check each against
//! its twin.

use super::GpuSource;
use crate::display::effects::Fx;
use crate::fluid::{Look, PALETTE_STOPS, ToneMode};
use bytemuck::{Pod, Zeroable};

/// `Colour` in common.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable, Default, Debug)]
pub(crate) struct ColourUniform {
    pub w: u32,
    pub h: u32,
    pub dw: u32,
    pub dh: u32,
    pub out_w: u32,
    pub out_h: u32,
    pub color_mode: u32,
    pub brightness: f32,
    pub saturation: f32,
    pub hue_shift: f32,
    /// `ToneMode as u32`: 0 legacy, 1 filmic.
    pub tone: u32,
    /// Whether colorize adds the particles' light (1) or not.
    pub particle_lit: u32,
}

impl ColourUniform {
    /// Colorizing `src` into a `width x height` frame with `look` (non-finite values fall back
    /// to the neutral look); `particles`: whether the particles' light is drawn into it.
    pub fn new(
        src: &GpuSource,
        look: &Look,
        (width, height): (usize, usize),
        particles: bool,
    ) -> Self {
        let finite_or = |x: f32, neutral: f32| if x.is_finite() { x } else { neutral };
        Self {
            w: src.grid.0 as u32,
            h: src.grid.1 as u32,
            dw: src.dye_size.0 as u32,
            dh: src.dye_size.1 as u32,
            out_w: width as u32,
            out_h: height as u32,
            color_mode: look.color_mode as u32,
            brightness: finite_or(look.brightness, 1.0),
            saturation: finite_or(look.saturation, 1.0),
            hue_shift: finite_or(look.hue_shift, 0.0),
            tone: look.tone as u32,
            particle_lit: u32::from(particles),
        }
    }
}

/// `Picture` in common.wgsl: the filmic tone's effects.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable, Default, Debug)]
pub(crate) struct PictureUniform {
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
    /// The effects of `look` for a frame `height` pixels tall of a source whose dye is
    /// `dye_height` cells tall (the numbers the CPU's tone pass derives, [`Fx::new`]);
    /// `glow`: the size of bloom level 0.
    pub fn new(look: &Look, height: usize, dye_height: usize, glow: (usize, usize)) -> Self {
        let fx = look.effects.sanitized();
        let d = Fx::new(&fx, height, dye_height);
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
