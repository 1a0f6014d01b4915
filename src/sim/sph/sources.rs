//! What reaches the particles from outside besides new ones: impulses near a point. A shock
//! (an onset, the level's push, the beat) pushes the particles within its reach along its
//! force, fading to 0 at the reach; a pull (the mouse, as in the source) draws them towards its
//! centre (a negative pull pushes them away), strongest at the centre and gone at the reach,
//! and calms the particles it holds. The GPU applies the same (`shaders/sph_sources.wgsl`).
//!
//! [`Planner`] turns the model-neutral sources into what they do here, for the CPU and the GPU
//! model alike: a splat with dye (a note) becomes a burst of new particles in its colour, spread
//! over its disc, moving with its force plus an outward kick; a radial splat without dye (the
//! mouse) a pull; any other splat without dye (an onset, the level's push, the beat) a shock.

use super::{BOX_HEIGHT, Fluid, Knobs};
use crate::fluid::{Splat, SplatShape};
use crate::kernels::portable::Portable;
use rayon::prelude::*;

/// Most particles a splat adds.
pub const BURST_MAX: usize = 400;
/// The share of their velocity a pull takes from the particles at its centre, per event
/// (the editor sends one a frame: about 1.2 per second at 60 frames, the source's calming).
const PULL_CALM: f32 = 0.02;

/// A new particle: position, velocity, colour (box units).
pub type Newcomer = ([f32; 2], [f32; 2], [f32; 3]);

/// What a source does to the particles.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Push or pull the particles near a point.
    Impulse(Impulse),
    /// Add these particles (at most the budget), recycling the oldest past the budget.
    Burst(Vec<Newcomer>),
}

/// Turns sources into [`Action`]s, with a deterministic pseudo-random spread (the same events
/// give the same fluid).
#[derive(Clone, Debug)]
pub struct Planner {
    seed: u32,
}

impl Default for Planner {
    fn default() -> Self {
        Self { seed: 0x9e37_79b9 }
    }
}

impl Planner {
    /// A pseudo-random number in 0..1.
    fn random(&mut self) -> f32 {
        let mut s = self.seed;
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        self.seed = s;
        (s >> 8) as f32 / (1u32 << 24) as f32
    }

    /// What `s` does, in a box of [`BOX_HEIGHT`] with `knobs` and at most `budget` particles
    /// (`None`: nothing, e.g. a splat with a non-finite value or no force).
    pub fn plan(&mut self, s: &Splat, knobs: &Knobs, budget: usize) -> Option<Action> {
        if !s.is_finite() {
            return None;
        }
        let spacing = 1.0 / knobs.target_density.max(1.0).sqrt();
        let centre = [s.pos[0] * BOX_HEIGHT, s.pos[1] * BOX_HEIGHT];
        let radius = (s.radius * BOX_HEIGHT).clamp(spacing, 0.25 * BOX_HEIGHT);
        let force = [
            s.force[0].clamp(-50.0, 50.0) * BOX_HEIGHT,
            s.force[1].clamp(-50.0, 50.0) * BOX_HEIGHT,
        ];
        if s.shape == SplatShape::Radial && s.amount <= 0.0 {
            // The mouse's pull (or push, when negative), as in the source: towards the
            // centre, strongest there and gone at the radius; a pull also calms the particles
            // it holds, so they gather into a ball instead of orbiting.
            let reach = (s.radius * BOX_HEIGHT).clamp(spacing, BOX_HEIGHT);
            let pull = s.force[0].clamp(-50.0, 50.0) * BOX_HEIGHT;
            let calm = if pull > 0.0 { PULL_CALM } else { 0.0 };
            Some(Action::Impulse(Impulse::Pull {
                centre,
                reach,
                pull,
                calm,
            }))
        } else if s.amount > 0.0 {
            // The disc filled at half the target density, times the amount.
            let area = std::f32::consts::PI * radius * radius;
            let want = 0.5 * area * knobs.target_density * s.amount.min(4.0);
            let count = (want.round() as usize)
                .clamp(1, BURST_MAX)
                .min(budget.max(1));
            let kick = 0.5 * force[0].phypot(force[1]);
            let burst = (0..count)
                .map(|_| {
                    let (a, r) = (
                        self.random() * std::f32::consts::TAU,
                        radius * self.random().sqrt(),
                    );
                    let (c, sn) = (a.pcos(), a.psin());
                    let p = [centre[0] + r * c, centre[1] + r * sn];
                    let out = kick * r / radius;
                    (p, [force[0] + out * c, force[1] + out * sn], s.color)
                })
                .collect();
            Some(Action::Burst(burst))
        } else if force != [0.0; 2] {
            // A shock: a push along the force, fading to 0 at twice the radius.
            Some(Action::Impulse(Impulse::Shock {
                centre,
                reach: 2.0 * radius,
                force,
            }))
        } else {
            None
        }
    }
}

/// A push on the particles near a point, in box units and box units per second.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Impulse {
    /// `v += force (1 - d / reach)` within `reach` of `centre`.
    Shock {
        centre: [f32; 2],
        reach: f32,
        force: [f32; 2],
    },
    /// `v += (centre - p) / d pull w - v w calm` with `w = 1 - d / reach`, within `reach`
    /// (not at the centre itself).
    Pull {
        centre: [f32; 2],
        reach: f32,
        pull: f32,
        calm: f32,
    },
}

impl Impulse {
    /// The velocity `v` of a particle at `p` after this impulse.
    #[inline]
    pub fn kick(&self, p: [f32; 2], v: [f32; 2]) -> [f32; 2] {
        match *self {
            Impulse::Shock {
                centre,
                reach,
                force,
            } => {
                let (dx, dy) = (p[0] - centre[0], p[1] - centre[1]);
                let d = (dx * dx + dy * dy).sqrt();
                if d < reach {
                    let w = 1.0 - d / reach;
                    [v[0] + force[0] * w, v[1] + force[1] * w]
                } else {
                    v
                }
            }
            Impulse::Pull {
                centre,
                reach,
                pull,
                calm,
            } => {
                let (dx, dy) = (centre[0] - p[0], centre[1] - p[1]);
                let d = (dx * dx + dy * dy).sqrt();
                if d < reach && d > 0.0 {
                    let w = 1.0 - d / reach;
                    let k = w * pull / d;
                    [
                        v[0] + (dx * k - v[0] * w * calm),
                        v[1] + (dy * k - v[1] * w * calm),
                    ]
                } else {
                    v
                }
            }
        }
    }
}

impl Fluid {
    /// Apply `impulse` to every particle (in parallel on the current rayon pool).
    pub fn apply(&mut self, impulse: &Impulse) {
        self.pos
            .par_iter()
            .zip(self.vel.par_iter_mut())
            .for_each(|(p, v)| *v = impulse.kick(*p, *v));
    }

    /// Add `burst`, at most `budget` particles in all: past it the oldest make room.
    pub fn add_burst(&mut self, burst: &[Newcomer], budget: usize) {
        let budget = budget.max(1);
        let burst = &burst[burst.len().saturating_sub(budget)..];
        let free = budget.saturating_sub(self.len());
        if burst.len() > free {
            self.remove_oldest(burst.len() - free);
        }
        for &(p, v, c) in burst {
            self.add(p, v, c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Known answers: a shock at half its reach adds half its force; a pull at half its reach
    /// adds half the pull towards the centre and takes half the calm of the velocity; beyond
    /// the reach, and at a pull's centre, nothing changes.
    #[test]
    fn impulses_fade_with_distance() {
        let shock = Impulse::Shock {
            centre: [0.0, 0.0],
            reach: 2.0,
            force: [4.0, -2.0],
        };
        assert_eq!(shock.kick([1.0, 0.0], [1.0, 1.0]), [3.0, 0.0]);
        assert_eq!(shock.kick([3.0, 0.0], [1.0, 1.0]), [1.0, 1.0]);
        let pull = Impulse::Pull {
            centre: [0.0, 0.0],
            reach: 2.0,
            pull: 6.0,
            calm: 0.5,
        };
        // w = 0.5, towards the centre (-x) by 3, less 0.5 * 0.5 of the velocity.
        assert_eq!(pull.kick([1.0, 0.0], [4.0, 0.0]), [4.0 - 3.0 - 1.0, 0.0]);
        assert_eq!(pull.kick([0.0, 0.0], [4.0, 0.0]), [4.0, 0.0]);
        assert_eq!(pull.kick([0.0, 2.5], [4.0, 0.0]), [4.0, 0.0]);
    }
}
