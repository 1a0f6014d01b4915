//! The grid model's physics constants and the splat conversion, shared by the CPU and GPU
//! solvers so that both run the same physics from one definition.

use crate::fluid::{Splat, SplatShape};
use crate::sim::math::exp;
use crate::sim::{MAX_DYE, MAX_SPEED};

/// Splats queued between steps before further ones are dropped. A dense passage produces a
/// few hundred per step; this bound only stops a runaway producer.
pub const MAX_PENDING_SPLATS: usize = 4096;

/// Self-advection that moves the flow more than a cell per step and leaves it more compressible
/// than this (RMS divergence over RMS face speed) is followed by a second projection. Measured
/// on the bench scene at 256 rows, 2026-11: free flow leaves about 0.02, flow under strong
/// forcing 0.05-0.09; the second projection costs as much as the first, so it runs only in the
/// latter case.
pub const REPROJECT_ABOVE_COMPRESSIBILITY: f32 = 0.05;

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
            && s.amount.is_finite();
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
        let speed = force[0].hypot(force[1]);
        if speed > MAX_SPEED && s.shape != SplatShape::Radial {
            force = force.map(|f| f * (MAX_SPEED / speed));
        }
        if dye.iter().all(|&d| d == 0.0) && force.iter().all(|&f| f == 0.0) {
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
        })
    }

    /// Weight at a point `(dx, dy)` cells from the centre.
    #[inline(always)]
    pub fn weight(&self, dx: f32, dy: f32) -> f32 {
        match self.shape {
            SplatShape::Gaussian | SplatShape::Radial => {
                let d2 = dx.mul_add(dx, dy * dy);
                if d2 > self.reach * self.reach {
                    0.0
                } else {
                    exp(-d2 / (self.r * self.r))
                }
            }
            SplatShape::Block => {
                if dx.abs() <= self.r && dy.abs() <= self.r {
                    1.0
                } else {
                    0.0
                }
            }
        }
    }

    /// Velocity added to a `u` face at `(dx, dy)` cells from the centre.
    #[inline(always)]
    pub fn push_u(&self, dx: f32, dy: f32) -> f32 {
        let w = self.weight(dx, dy);
        match self.shape {
            SplatShape::Radial => -self.force[0] * (dx / self.r) * w,
            _ => self.force[0] * w,
        }
    }

    /// Velocity added to a `v` face at `(dx, dy)` cells from the centre.
    #[inline(always)]
    pub fn push_v(&self, dx: f32, dy: f32) -> f32 {
        let w = self.weight(dx, dy);
        match self.shape {
            SplatShape::Radial => -self.force[1] * (dy / self.r) * w,
            _ => self.force[1] * w,
        }
    }

    /// Whether the footprint touches row `y` (in cells, at sample height `y`).
    #[inline(always)]
    pub fn touches_row(&self, y: f32) -> bool {
        (y - self.y).abs() <= self.reach
    }

    /// Column range `[lo, hi)` of samples at x = `i + offset` within reach, for `n` samples.
    #[inline(always)]
    pub fn columns(&self, offset: f32, n: usize) -> (usize, usize) {
        let lo = (self.x - self.reach - offset).ceil().max(0.0);
        let hi = (self.x + self.reach - offset).floor() + 1.0;
        let hi = hi.min(n as f32).max(0.0);
        (lo.min(n as f32) as usize, hi as usize)
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
