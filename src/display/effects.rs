//! The picture effects' geometry and constants, shared by the CPU passes (`cpu::bloom`,
//! `cpu::sunrays`, `cpu::tone`, which re-export them) and the GPU passes (`gpu::bloom`,
//! `gpu::sunrays`, `gpu::uniforms`), so both build the same mip chain, trace the rays on the same level
//! and derive the same display constants.

use crate::fluid::{Effects, PALETTE_STOPS};
use crate::kernels::portable::Portable;

/// Linear RGB.
pub type Rgb = [f32; 3];

/// Most levels in the chain (level 0 is half the frame).
pub const BLOOM_MAX_LEVELS: usize = 8;
/// A level is added only while both its edges keep at least this many texels (level 0
/// always exists, even for a 1x1 frame).
pub const BLOOM_MIN_EDGE_PX: usize = 4;
/// Light (per channel) above which the bloom sees no more: past what any dye can show
/// (`MAX_DYE` 64 at the brightness knob's 300 %), and finite.
pub const BLOOM_MAX_LIGHT: f32 = 256.0;

/// Level sizes of the chain for a `w x h` frame, level 0 first.
pub fn level_sizes(w: usize, h: usize) -> Vec<(usize, usize)> {
    let mut sizes = vec![(w.div_ceil(2).max(1), h.div_ceil(2).max(1))];
    while sizes.len() < BLOOM_MAX_LEVELS {
        let (lw, lh) = sizes[sizes.len() - 1];
        let next = (lw.div_ceil(2), lh.div_ceil(2));
        if next.0.min(next.1) < BLOOM_MIN_EDGE_PX {
            break;
        }
        sizes.push(next);
    }
    sizes
}

/// Samples along each ray.
pub const RAYS_SAMPLES: u32 = 16;
/// The share of the way to the centre the samples cover.
pub const RAYS_DENSITY: f32 = 0.65;
/// Each sample's weight relative to the one before.
pub const RAYS_DECAY: f32 = 0.94;
/// The rays are traced on the first bloom level at most this many texels tall (the
/// coarsest when none is): 45 rows at 720p and 360p, 34 at 1080p.
pub const RAYS_MAX_ROWS: usize = 64;

/// Which of the bloom levels (sizes, level 0 first) the rays are traced on.
pub fn rays_level(sizes: &[(usize, usize)]) -> usize {
    sizes
        .iter()
        .position(|&(_, h)| h <= RAYS_MAX_ROWS)
        .unwrap_or(sizes.len().saturating_sub(1))
}

/// Height of the shading's relief, in canvas heights per unit of compressed luminance
/// `Y / (1 + Y)`: a dye edge rising to half over 3 % of the canvas tilts by about 34 degrees.
pub const SHADE_RELIEF: f32 = 0.04;
/// Elevation of the shading's light above the canvas, degrees.
pub const SHADE_ELEVATION_DEG: f32 = 40.0;
/// How fast dye covers the background: the background is divided by `1 + BG_COVER * Y`.
pub const BG_COVER: f32 = 4.0;

/// The tone pass's effect constants for one frame, derived once from the look's
/// [`Effects`] (the GPU's uniform carries the same numbers).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fx {
    /// Shading amount (0: none).
    pub shade: f32,
    /// `SHADE_RELIEF` over the shading stencil's width in canvas heights.
    pub relief: f32,
    /// The unit vector towards the light, divided by its height (flat dye is lit by 1).
    pub light: [f32; 3],
    /// Half-width of the shading stencil in pixels: about one dye cell.
    pub step: usize,
    /// The palette's stops (luminance 1 each), if one is on.
    pub stops: Option<[Rgb; PALETTE_STOPS]>,
    /// Background light.
    pub background: Rgb,
    /// Vibrance, 0..1 (0: none).
    pub vibrance: f32,
}

impl Fx {
    /// The constants for a frame `height` pixels tall of a dye grid `dye_h` cells tall.
    pub fn new(fx: &Effects, height: usize, dye_h: usize) -> Self {
        let step = (height as f32 / dye_h.max(1) as f32).round().max(1.0) as usize;
        let (a, e) = (
            fx.light_angle.to_radians(),
            SHADE_ELEVATION_DEG.to_radians(),
        );
        let (cos_e, sin_e) = (e.pcos(), e.psin());
        Self {
            shade: fx.shading,
            relief: SHADE_RELIEF * height as f32 / (2 * step) as f32,
            light: [a.pcos() * cos_e / sin_e, a.psin() * cos_e / sin_e, 1.0],
            step,
            stops: fx.palette.stops(),
            background: fx.background,
            vibrance: fx.vibrance,
        }
    }
}
