//! What reaches the particles in the box from outside: [`Planner`] turns the model-neutral
//! sources into what they do here ([`crate::sim::particles::sources`]), for the CPU and the GPU
//! model alike: a splat with dye (a note) becomes a burst of new particles in its colour, spread
//! over its disc, moving with its force plus an outward kick; a radial splat without dye (the
//! mouse) a pull; any other splat without dye (an onset, the level's push, the beat) a shock.

use super::{BOX_HEIGHT, Knobs};
use crate::fluid::{Splat, SplatShape};
use crate::kernels::portable::Portable;
pub use crate::sim::particles::sources::Impulse;
use crate::sim::particles::sources::Spread;

/// What a source does to the particles in the box (see [`crate::sim::particles::sources`]).
pub type Action = crate::sim::particles::sources::Action<2>;

/// Most particles a splat adds.
pub const BURST_MAX: usize = 400;
/// The share of their velocity a pull takes from the particles at its centre, per event
/// (the editor sends one a frame: about 1.2 per second at 60 frames, the source's calming).
const PULL_CALM: f32 = 0.02;

/// Turns sources into [`Action`]s, with a deterministic pseudo-random spread (the same events
/// give the same fluid).
#[derive(Clone, Debug, Default)]
pub struct Planner {
    spread: Spread,
}

impl Planner {
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
                        self.spread.draw() * std::f32::consts::TAU,
                        radius * self.spread.draw().sqrt(),
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
