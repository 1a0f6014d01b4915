//! The grid model's physics constants and the splat conversion, shared by the CPU and GPU
//! solvers so that both run the same physics from one definition.

use crate::fluid::{Splat, SplatShape};
use crate::kernels::math::exp;
use crate::kernels::portable::Portable;
use crate::sim::{MAX_DYE, MAX_HEAT, MAX_SPEED};

/// Splats queued between steps before further ones are dropped. A dense passage produces a
/// few hundred per step; this bound only stops a runaway producer.
pub const MAX_PENDING_SPLATS: usize = 4096;

/// Self-advection that moves the flow more than a cell per step and leaves it more compressible
/// than this (RMS divergence over RMS face speed) gives the next step's projection extra
/// iterations ([`extra_iterations`]). Measured on the bench scene at 256 rows, 2026-11: free
/// flow leaves about 0.02, flow under strong forcing 0.05-0.09, so only the latter pays.
pub const REPROJECT_ABOVE_COMPRESSIBILITY: f32 = 0.05;

/// The iterations a projection adds to its `iterations` after an advection that left the flow
/// compressible (see [`REPROJECT_ABOVE_COMPRESSIBILITY`]): half as many again for multigrid
/// (one V-cycle at the default two), as many again for Jacobi and red-black sweeps.
///
/// They replace a second projection right after the advection (until 2026-11-26), which ran
/// the full iterations from a warm start of its own. Projection is linear and idempotent, so
/// the next step's projection of the advected flow plus the forces removes the same
/// divergence, and the velocity that moves the dye and the particles is the projected one
/// either way; the flow between the advection and the next projection (which the next
/// vorticity confinement reads, where a gradient adds no curl away from walls, and which the
/// streamlines trace) keeps the divergence the advection left. Measured on the bench's hot
/// block at 512x512 (divergence left by the projection over the flow's RMS, mean of 130
/// steps): multigrid with one V-cycle more, 2.0e-5 -> 1.1e-5 among the pillars, 4.0e-5 ->
/// 3.4e-5 without; red-black with as many sweeps again, 3.36e-2 -> 3.43e-2 and 3.06e-2 ->
/// 2.97e-2 (half as many again left 11 % more than before among the pillars).
pub fn extra_iterations(method: crate::sim::PressureMethod, iterations: u32) -> u32 {
    match method {
        crate::sim::PressureMethod::Multigrid => iterations.div_ceil(2).max(1),
        _ => iterations.max(1),
    }
}

/// Scale that makes the vorticity knob's 0..1 span "none" to "strong" (1/s). Set by eye at
/// 256 and 512 rows, 2026-11: at 0.3, splats curl visibly without the flow turning to noise.
pub const VORTICITY_SCALE_PER_S: f32 = 20.0;

/// Gaussian footprint cut-off, in radii.
const GAUSSIAN_CUTOFF_RADII: f32 = 3.5;

/// The decay factor for `rate` (1/s) over `dt` seconds, in (0, 1].
#[inline]
pub fn decay_factor(rate: f32, dt: f32) -> f32 {
    exp(-(rate * dt).max(0.0))
}

/// A splat checked and converted to simulation-cell units.
#[derive(Clone, Copy, Debug)]
pub struct CellSplat {
    /// Centre in cells.
    pub x: f32,
    /// Centre in cells.
    pub y: f32,
    /// Radius in cells.
    pub r: f32,
    /// Extent of the footprint in cells (3.5 r or r).
    pub reach: f32,
    /// Dye added at the centre per channel.
    pub dye: [f32; 3],
    /// Velocity added at the centre.
    pub force: [f32; 2],
    /// Footprint.
    pub shape: SplatShape,
    /// Temperature added at the centre.
    pub heat: f32,
}

impl CellSplat {
    /// Check `s` and convert it for a grid `height` cells tall. `None` when the splat has a
    /// non-finite field or adds nothing.
    pub fn new(s: &Splat, height: usize) -> Option<Self> {
        let finite = s
            .pos
            .iter()
            .chain(&s.color)
            .chain(&s.force)
            .all(|x| x.is_finite())
            && s.radius.is_finite()
            && s.amount.is_finite()
            && s.heat.is_finite();
        if !finite {
            return None;
        }
        let cells = height as f32;
        // At least half a cell, at most 4 canvas heights.
        let r = (s.radius * cells).clamp(0.5, 4.0 * cells);
        let amount = s.amount.clamp(0.0, MAX_DYE);
        let dye = s.color.map(|c| c.clamp(0.0, MAX_DYE) * amount);
        let mut force = s.force;
        if s.shape == SplatShape::Radial {
            // One strength for both components.
            let k = force[0].clamp(-MAX_SPEED, MAX_SPEED);
            force = [k, k];
        }
        let speed = force[0].phypot(force[1]);
        if speed > MAX_SPEED && s.shape != SplatShape::Radial {
            force = force.map(|f| f * (MAX_SPEED / speed));
        }
        let heat = s.heat.clamp(-MAX_HEAT, MAX_HEAT);
        if dye.iter().all(|&d| d == 0.0) && force.iter().all(|&f| f == 0.0) && heat == 0.0 {
            return None;
        }
        let reach = match s.shape {
            SplatShape::Gaussian | SplatShape::Radial => GAUSSIAN_CUTOFF_RADII * r,
            SplatShape::Block => r,
        };
        Some(Self {
            x: s.pos[0] * cells,
            y: s.pos[1] * cells,
            r,
            reach,
            dye,
            force,
            shape: s.shape,
            heat,
        })
    }

    /// Weight at a point `(dx, dy)` cells from the centre: the product of the two axis
    /// weights within the cut-off. Separable, so the CPU rows compute the x factors once per
    /// step, not once per cell (`cpu::splat`); the GPU computes the same product per cell.
    #[inline(always)]
    pub fn weight(&self, dx: f32, dy: f32) -> f32 {
        if dx.mul_add(dx, dy * dy) > self.cutoff2() {
            0.0
        } else {
            self.axis_weight(dx) * self.axis_weight(dy)
        }
    }

    /// The weight's factor along one axis at `d` cells from the centre: `e^(-d^2 / r^2)` for a
    /// Gaussian footprint, 1 within `r` and 0 beyond for a block.
    #[inline(always)]
    pub fn axis_weight(&self, d: f32) -> f32 {
        match self.shape {
            SplatShape::Gaussian | SplatShape::Radial => exp(-(d * d) / (self.r * self.r)),
            SplatShape::Block => {
                if d.abs() <= self.r {
                    1.0
                } else {
                    0.0
                }
            }
        }
    }

    /// Squared distance beyond which the weight is 0: the Gaussian's round cut-off at
    /// `reach`; none for a block, whose axis weights already cut it square.
    #[inline(always)]
    pub fn cutoff2(&self) -> f32 {
        match self.shape {
            SplatShape::Gaussian | SplatShape::Radial => self.reach * self.reach,
            SplatShape::Block => f32::INFINITY,
        }
    }

    /// Velocity added along `axis` (0 for `u`, 1 for `v`) per unit of weight, at `d` cells
    /// from the centre along that axis: the force, or for a radial splat a pull towards the
    /// centre (a push when the strength is negative) growing with the distance.
    #[inline(always)]
    pub fn push(&self, axis: usize, d: f32) -> f32 {
        match self.shape {
            SplatShape::Radial => -self.force[axis] * (d / self.r),
            _ => self.force[axis],
        }
    }

    /// Whether the footprint touches row `y` (in cells, at sample height `y`).
    #[inline(always)]
    pub fn touches_row(&self, y: f32) -> bool {
        (y - self.y).abs() <= self.reach
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decay_is_frame_rate_independent() {
        // Two half steps give the same factor as one full step: e^-0.5 either way.
        let full = decay_factor(3.0, 1.0 / 6.0);
        let half = decay_factor(3.0, 1.0 / 12.0);
        assert!((full - half * half).abs() < 1e-6);
        assert!((full - (-0.5f32).exp()).abs() < 1e-6);
        assert_eq!(decay_factor(0.0, 1.0), 1.0);
    }
}
