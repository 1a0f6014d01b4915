//! What the particle fluid's model ([`super::model::SphModel`]) and its two backends (the
//! CPU's and the GPU's) share: their sizes and budgets, the knobs a step's
//! liquid gives, the queue of sources, sub-steps, the obstacles on the model's grid, a
//! particle's footprint in the light, the snapshot one hands the other, and how still the
//! liquid is.

use crate::fluid::{ColorMode, Liquid, LiquidStyle, Look};
use crate::kernels::portable::Portable;
use crate::sim::Activity;
use crate::sim::obstacles::Mask;
use crate::sim::sph::solids::Solids;
use crate::sim::sph::{BOX_HEIGHT, Fluid, Knobs};

/// Particles the box holds by default (about 60 % of the default 16:9 box at the target
/// density).
pub const DEFAULT_BUDGET: usize = 6_000;
/// Most sub-steps an advance runs (longer frames are slowed down rather than exploded).
pub(super) const MAX_SUBSTEPS: usize = 8;
/// Most rows of the light field.
pub(super) const LIGHT_ROWS: usize = 288;
/// The liquid counts as still below this speed of its 95th-percentile particle, canvas
/// heights per second (2 pixels a second in a frame 1 000 pixels tall): a resting pool's
/// median particle moves 1e-4, its slowest creeping few 0.005 to 0.02 for good.
pub const LIQUID_STILL: f32 = 2.0e-3;
/// Most rows of the grid the particles collide with obstacles on (at the default target
/// density, about 7 rows a particle spacing).
pub(super) const SOLID_ROWS: usize = 512;
/// Most rows of the discs' light field.
pub(super) const DISC_ROWS: usize = 1080;
/// The discs' light field is a whole number of these rows tall (rounded up from the frame's):
/// a window resized by dragging changes it every 32 rows, not at every row, so the GPU's
/// picture for it is rebuilt seldom.
pub(super) const DISC_ROW_STEP: usize = 32;

/// What a particle model's [`Snapshot`] holds (on the CPU or the GPU).
pub(super) struct SphSnapshot {
    pub fluid: Fluid,
    pub obstacles: Option<Mask>,
}

/// The knobs (box units: a canvas height is [`BOX_HEIGHT`]) and the particle budget (clamped
/// to 1..=[`crate::sim::sph::MAX_PARTICLES`]) of a step's liquid knobs.
pub(super) fn liquid_knobs(liquid: &Liquid) -> (Knobs, usize) {
    let d = Knobs::default();
    let [gx, gy] = liquid.gravity;
    let g = gx.phypot(gy);
    let (gravity, gravity_dir) = if g.is_finite() && g > 1e-6 {
        (g * BOX_HEIGHT, [gx / g, gy / g])
    } else {
        (0.0, d.gravity_dir)
    };
    let knobs = Knobs {
        gravity,
        gravity_dir,
        pressure: d.pressure * liquid.stiffness,
        near_pressure: d.near_pressure * liquid.near,
        viscosity: liquid.viscosity,
        wall_bounce: liquid.bounce,
        drag: liquid.drag,
        ..d
    }
    .sanitized();
    (
        knobs,
        (liquid.budget as usize).clamp(1, crate::sim::sph::MAX_PARTICLES),
    )
}

/// The light field's grid for a frame `rows` tall drawn in `style`, for a box of `size` on a
/// model `model_rows` tall: the surface at most [`LIGHT_ROWS`] rows (the picture scales it up
/// smoothly; finer costs the splat more than it shows), the discs at the frame's rows (at most
/// [`DISC_ROWS`], rounded up to [`DISC_ROW_STEP`]) so their edges stay crisp; the box's shape
/// either way.
pub(super) fn light_size(
    [bw, bh]: [f32; 2],
    model_rows: usize,
    style: LiquidStyle,
    rows: usize,
) -> (usize, usize) {
    let h = match style {
        LiquidStyle::Surface => LIGHT_ROWS.min(model_rows),
        LiquidStyle::Discs => rows
            .clamp(8, DISC_ROWS)
            .next_multiple_of(DISC_ROW_STEP)
            .min(DISC_ROWS),
    }
    .max(8);
    let w = ((h as f32 * bw / bh).round() as usize).clamp(8, 4 * DISC_ROWS);
    (w, h)
}

pub(super) use crate::sim::queue_sources;

/// The sub-steps of an advance by `dt` seconds: at most [`MAX_SUBSTEPS`].
pub(super) fn substeps(dt: f32) -> Option<(usize, f32)> {
    crate::sim::particles::substeps(dt, MAX_SUBSTEPS)
}

/// `mask` at the model's resolution `cells` (`None` when it is empty).
pub(super) fn model_mask(mask: Option<&Mask>, cells: (usize, usize)) -> Option<Mask> {
    mask.filter(|m| !m.is_empty())
        .map(|m| m.resampled(cells.0, cells.1))
}

/// The obstacles the particles of a box of `size` collide with, from the model's `mask`: on a
/// grid of at most [`SOLID_ROWS`] rows, finer than a particle spacing many times over, so a
/// brush stroke's rebuild stays cheap at the largest resolutions.
pub(super) fn solids(mask: &Mask, size: [f32; 2]) -> Option<Solids> {
    let shrink = (SOLID_ROWS as f64 / mask.height() as f64).min(1.0);
    let side = |n: usize| ((n as f64 * shrink).round() as usize).max(1);
    let coarse = mask.resampled(side(mask.width()), side(mask.height()));
    Solids::new(&coarse, size)
}

/// A model's resolution for a canvas of `cells`: both sides scaled alike to at most 4 096,
/// so the box keeps the canvas' shape.
pub(super) fn model_cells(cells: (usize, usize)) -> (usize, usize) {
    let fit = (4096.0 / cells.0.max(cells.1).max(1) as f64).min(1.0);
    let side = |n: usize| ((n as f64 * fit).round() as usize).clamp(8, 4096);
    (side(cells.0), side(cells.1))
}

/// The particles of `fluid` carried into a box `width` wide (x scaled, serial numbers kept),
/// all of them: the next step trims them to its budget (a model is rebuilt with the default
/// budget, not the user's).
pub(super) fn carried(fluid: &Fluid, width: f32) -> Fluid {
    let sx = width / fluid.size()[0];
    let mut fresh = Fluid::new(width / BOX_HEIGHT);
    fresh.births = fluid.births;
    for (((p, v), c), b) in fluid
        .pos
        .iter()
        .zip(&fluid.vel)
        .zip(&fluid.color)
        .zip(&fluid.birth)
    {
        if fresh.add([p[0] * sx, p[1]], *v, *c)
            && let Some(last) = fresh.birth.last_mut()
        {
            *last = *b;
        }
    }
    // The next serial number stays the one the particles had (adding counted them again).
    fresh.births = fluid
        .births
        .max(fluid.birth.iter().max().map_or(0, |b| b + 1));
    fresh
}

/// The liquid's speed in canvas heights per second from two probes' particles (serial number
/// and place, sorted by serial number) `seconds` apart: the 95th percentile's (a liquid under
/// gravity never quite rests: a few particles keep creeping and jittering in a pool that looks
/// still), 0 below [`LIQUID_STILL`]; 1 when the particles are not the same ones.
pub(super) fn rest_speed(now: &[(u64, [f32; 2])], before: &[(u64, [f32; 2])], seconds: f32) -> f32 {
    let same = now.len() == before.len() && now.iter().zip(before).all(|(a, b)| a.0 == b.0);
    let speed = if !same {
        1.0
    } else if seconds > 0.0 && !now.is_empty() {
        let mut moved: Vec<f32> = now
            .iter()
            .zip(before)
            .map(|(a, b)| (a.1[0] - b.1[0]).phypot(a.1[1] - b.1[1]))
            .collect();
        let k = (moved.len() * 95 / 100).min(moved.len() - 1);
        let (_, p95, _) = moved.select_nth_unstable_by(k, f32::total_cmp);
        *p95 / BOX_HEIGHT / seconds
    } else {
        0.0
    };
    let speed = if speed.is_finite() { speed } else { 1.0 };
    if speed < LIQUID_STILL { 0.0 } else { speed }
}

/// The [`Activity`] of a liquid of particles moving at `speed` (its colours never fade).
pub(super) fn liquid_activity(speed: f32) -> Activity {
    Activity {
        max_speed: speed,
        max_dye: 1.0,
        particles: false,
        keeps_colour: true,
    }
}

/// The [`Activity`] of an empty box.
pub(super) fn empty_activity() -> Activity {
    Activity {
        keeps_colour: true,
        ..Activity::default()
    }
}

/// A disc's radius, in particle spacings at the target density.
const DISC_SPACINGS: f32 = 0.45;
/// Speed (box units per second) that takes the speed gradient from blue to red
/// (`GRADIENT_SPEED` in sph_light.wgsl).
pub(crate) const GRADIENT_SPEED: f32 = 8.0;

/// A particle's footprint in a light field `w` cells across a box `box_width` wide.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Footprint {
    /// Light cells per box unit.
    pub scale: f32,
    /// A disc's radius, cells.
    pub radius: f32,
    /// How far a particle's light reaches, cells.
    pub reach: f32,
    /// The surface bump's weight at its centre.
    pub norm: f32,
}

impl Footprint {
    /// Surface: a kernel two particle spacings wide, at least 1.5 cells (smaller shows each
    /// particle as a blob, larger blurs the splashes); a smooth bump (1 - r²/R²)², whose
    /// integral is pi R² / 3, normalised so that particles at the target density sum to
    /// their colour. Discs: 0.9 spacings across with an edge a cell soft, so a packed liquid
    /// shows as beads.
    pub fn new(box_width: f32, target_density: f32, w: usize, style: LiquidStyle) -> Self {
        let scale = w as f32 / box_width;
        let spacing = 1.0 / target_density.max(1.0).sqrt();
        let radius = (DISC_SPACINGS * spacing * scale).max(1.0);
        let reach = match style {
            LiquidStyle::Surface => (2.0 * spacing * scale).max(1.5),
            LiquidStyle::Discs => radius + 0.5,
        };
        let per_cell = 1.0 / (scale * scale); // box area of a grid cell
        let norm = 3.0 / (std::f32::consts::PI * reach * reach) / (target_density * per_cell);
        Self {
            scale,
            radius,
            reach,
            norm,
        }
    }
}

/// `look` for the picture of the light: the particles' colours are already in it (their own
/// or the speed gradient's).
pub(super) fn light_look(look: &Look) -> Look {
    Look {
        color_mode: ColorMode::Dye,
        ..*look
    }
}
