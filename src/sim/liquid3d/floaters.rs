//! Floating bodies in the 3D liquid: balls the liquid carries and that push it back (the seed
//! video's wish for "little boats or rubber ducks bobbing on the water").
//!
//! **Coupling.** A floater is a boundary for the liquid, as the tank's walls are, but one that
//! moves and feels what it does: within a smoothing radius of its surface a particle counts the
//! liquid as if it went on into the ball at the target density (so it does not clump there),
//! the ball pushes it away with the pressure of that liquid (never pulls), and the liquid's
//! viscosity grips it, drawing the particle's velocity towards the ball's. Every push and grip
//! is paid back to the ball, equal and opposite (mass 1 per particle), so the pressure of the
//! liquid round it is what holds it up: buoyancy from the displaced liquid, with nothing added.
//! A particle that still ends inside a ball is put back on its surface.
//!
//! **The ball** (radius [`RADIUS_H`] smoothing radii, [`DENSITY`] of the liquid's density: it
//! floats about half under) moves under gravity and the liquid's pushes, bounces off the tank's
//! walls and off the other floaters, and is slowed by the same drag as the liquid.
//!
//! The sums over particles are taken in fixed chunks and added in order, so a step gives the
//! same floaters on any number of threads.

use super::Kernels;

/// Most floaters.
pub const MAX_FLOATERS: usize = 8;
/// A floater's radius, in smoothing radii (the walls' kernel integrals assume a surface flat
/// over a smoothing radius: a ball much smaller would be pushed too hard).
pub const RADIUS_H: f32 = 1.5;
/// A floater's density, as a share of the liquid's at rest: as dense as the liquid, and it
/// floats half under. A liquid of particles holds a ball up harder near its surface than the
/// liquid it displaces weighs: the near pressure (the short-range push that keeps particles
/// apart) pushes on it too, and there is no liquid above to push back. Measured in the test
/// below the pool's surface (2026-11-28, radius 1.5 smoothing radii): density 1.0 floats with
/// its centre 1 cm above the surface, 0.75 at 4 cm, 0.5 at 9 cm, 0.25 at 14 cm; 1.3 sinks.
pub const DENSITY: f32 = 1.0;
/// A new floater's colour: a rubber duck's yellow.
pub const YELLOW: [f32; 3] = [1.0, 0.72, 0.08];
/// The share of its colour a note gives a floater it lands near.
pub const TAKE: f32 = 0.65;
/// How far a note's ball may land from a floater to colour it, in floater radii.
pub const NEAR: f32 = 3.0;
/// How hard the liquid's viscosity grips a floater: the share of the pair's velocity
/// difference a particle at the ball's surface gives up per second, per unit of the liquid's
/// viscosity knob (8/s by default: 8 x 1.5 = 12/s at the surface).
pub(crate) const GRIP: f32 = 1.5;
/// The speed a floater keeps bouncing off a wall or another floater.
pub(crate) const BOUNCE: f32 = 0.3;

/// A ball floating in the liquid, in the tank's frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Floater {
    /// Its centre, m.
    pub pos: [f32; 3],
    /// Its velocity, m/s.
    pub vel: [f32; 3],
    /// Its radius, m.
    pub radius: f32,
    /// Its colour (linear RGB).
    pub color: [f32; 3],
}

impl Floater {
    /// A floater of radius `radius` at rest at `pos`.
    pub fn new(pos: [f32; 3], radius: f32) -> Self {
        Self {
            pos,
            vel: [0.0; 3],
            radius,
            color: YELLOW,
        }
    }

    /// Its mass in particles (each of mass 1): [`DENSITY`] times the liquid its volume holds
    /// at rest, particles `spacing` apart.
    pub fn mass(&self, spacing: f32) -> f32 {
        let volume = 4.0 / 3.0 * std::f32::consts::PI * self.radius.powi(3);
        (DENSITY * volume / spacing.max(1e-6).powi(3)).max(1e-3)
    }

    /// Take `share` of `colour`.
    pub fn tint(&mut self, colour: [f32; 3], share: f32) {
        let s = share.clamp(0.0, 1.0);
        self.color =
            [0, 1, 2].map(|c| self.color[c] + (colour[c].clamp(0.0, 1.0) - self.color[c]) * s);
    }
}

/// Where a particle at `p` stands against floater `f`: the gap to its surface (negative
/// inside) and the unit normal out of the ball (up for a particle at its very centre).
#[inline]
pub fn contact(p: [f32; 3], f: &Floater) -> (f32, [f32; 3]) {
    let d = [p[0] - f.pos[0], p[1] - f.pos[1], p[2] - f.pos[2]];
    let r = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
    if r > 1e-6 {
        (r - f.radius, [d[0] / r, d[1] / r, d[2] / r])
    } else {
        (-f.radius, [0.0, 1.0, 0.0])
    }
}

/// The density and near density the floaters add at `p`: the liquid as if it went on into
/// each ball at the target density `rho0`.
#[inline]
pub fn density(p: [f32; 3], floaters: &[Floater], kern: &Kernels<3>, rho0: f32) -> [f32; 2] {
    let mut acc = [0.0f32; 2];
    for f in floaters {
        let (gap, _) = contact(p, f);
        if let Some([w2, w3, _, _]) = kern.wall(gap) {
            acc = [acc[0] + rho0 * w2, acc[1] + rho0 * w3];
        }
    }
    acc
}

/// What pushes a particle and a ball apart, for one step.
#[derive(Clone, Copy, Debug)]
pub struct Push {
    /// The particle's pressure (clamped at 0 below: the ball never pulls) over its density.
    pub pressure: f32,
    /// The near pressure's constant, `near_pressure * rho0`, over its density.
    pub near: f32,
    /// The grip's rate at the ball's surface, per second.
    pub grip: f32,
}

impl Push {
    /// For a particle of density `d` and pressure `q` (sanitised knobs `near`, `viscosity`,
    /// target `rho0`).
    #[inline]
    pub fn new(d: f32, q: f32, near: f32, viscosity: f32, rho0: f32) -> Self {
        let inv = 1.0 / d.max(1e-12);
        Self {
            pressure: q.max(0.0) * inv,
            near: near * rho0 * inv,
            grip: viscosity * GRIP,
        }
    }

    /// The acceleration floater `f` gives a particle at `p` moving at `v` (the ball gets its
    /// opposite, times the particle's mass of 1); `None` out of reach.
    #[inline]
    pub fn from(
        &self,
        p: [f32; 3],
        v: [f32; 3],
        f: &Floater,
        kern: &Kernels<3>,
    ) -> Option<[f32; 3]> {
        let (gap, n) = contact(p, f);
        let [w2, _, g2, g3] = kern.wall(gap)?;
        let push = self.pressure * g2 + self.near * g3;
        // The grip: the share of the kernel inside the ball, twice (1 at the surface).
        let grip = self.grip * 2.0 * w2;
        Some([0, 1, 2].map(|c| n[c] * push + (f.vel[c] - v[c]) * grip))
    }
}

/// Move the floaters by their pushes `force` (summed over the particles, N in particle
/// masses) and `gravity` over `dt`, keep `keep` of their velocity (the drag), then bounce them
/// off the walls of a tank of `size` and off each other.
pub fn advance(
    floaters: &mut [Floater],
    force: &[[f32; 3]],
    gravity: [f32; 3],
    spacing: f32,
    (dt, keep): (f32, f32),
    size: [f32; 3],
) {
    for (f, push) in floaters.iter_mut().zip(force) {
        let m = f.mass(spacing);
        for c in 0..3 {
            f.vel[c] = (f.vel[c] + (push[c] / m + gravity[c]) * dt) * keep;
            f.pos[c] += f.vel[c] * dt;
        }
        for c in 0..3 {
            if !f.pos[c].is_finite() || !f.vel[c].is_finite() {
                f.pos = size.map(|s| 0.5 * s);
                f.vel = [0.0; 3];
                break;
            }
            let (lo, hi) = (
                f.radius.min(0.5 * size[c]),
                (size[c] - f.radius).max(0.5 * size[c]),
            );
            if f.pos[c] < lo {
                f.pos[c] = lo;
                f.vel[c] = f.vel[c].abs() * BOUNCE;
            } else if f.pos[c] > hi {
                f.pos[c] = hi;
                f.vel[c] = -f.vel[c].abs() * BOUNCE;
            }
        }
    }
    // Floaters that overlap are pushed apart, each half the overlap, and their closing speed
    // along the line between them exchanged as masses of equal size would.
    for a in 0..floaters.len() {
        for b in a + 1..floaters.len() {
            let (fa, fb) = (floaters[a], floaters[b]);
            let d = [0, 1, 2].map(|c| fb.pos[c] - fa.pos[c]);
            let r = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
            let overlap = fa.radius + fb.radius - r;
            if overlap <= 0.0 {
                continue;
            }
            let n = if r > 1e-6 {
                d.map(|x| x / r)
            } else {
                [1.0, 0.0, 0.0]
            };
            let closing = (0..3).map(|c| (fa.vel[c] - fb.vel[c]) * n[c]).sum::<f32>();
            for (c, nc) in n.into_iter().enumerate() {
                floaters[a].pos[c] -= 0.5 * overlap * nc;
                floaters[b].pos[c] += 0.5 * overlap * nc;
                if closing > 0.0 {
                    let j = 0.5 * (1.0 + BOUNCE) * closing * nc;
                    floaters[a].vel[c] -= j;
                    floaters[b].vel[c] += j;
                }
            }
        }
    }
}

/// Put a particle at `p` moving at `v` that ended inside a floater back on its surface, its
/// speed into the ball (relative to the ball) taken away.
#[inline]
pub fn keep_out(p: &mut [f32; 3], v: &mut [f32; 3], floaters: &[Floater]) {
    for f in floaters {
        let (gap, n) = contact(*p, f);
        if gap < 0.0 {
            for c in 0..3 {
                p[c] -= n[c] * gap;
            }
            let into = (0..3).map(|c| (v[c] - f.vel[c]) * n[c]).sum::<f32>();
            if into < 0.0 {
                for c in 0..3 {
                    v[c] -= n[c] * into;
                }
            }
        }
    }
}
