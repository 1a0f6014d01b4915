//! What reaches the 3D liquid from outside, as plain actions that either backend carries out:
//! the model turns each splat into an [`Action`] (its randomness drawn once, on the CPU, so
//! both backends get the same particles), the CPU applies them here ([`Liquid::act`]) and the
//! GPU with `shaders/liquid3d_sources.wgsl`, operation for operation.
//!
//! Shocks, pulls and sloshes act across the tank (x) and up (y), through its whole depth. The budget:
//! the CPU recycles the oldest particles once all a frame's bursts are in (a tank at twice its
//! budget makes room at once), the GPU gives each burst the oldest particles' slots; both end
//! with the newest `budget` particles.

use super::Liquid;
use crate::kernels::portable::Portable;
use rayon::prelude::*;

/// A new particle: place and velocity in the tank's frame (m, m/s), colour (linear RGB).
pub type Fresh = ([f32; 3], [f32; 3], [f32; 3]);

/// One source's effect on the liquid.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// New particles.
    Burst(Vec<Fresh>),
    /// Velocity `force` (m/s, x and y) added near `centre` (x, y), fading to 0 at `reach`.
    Shock {
        centre: [f32; 2],
        reach: f32,
        force: [f32; 2],
    },
    /// A pull towards `centre` (away when `pull` is negative), `pull` in m/s per m of reach,
    /// fading to 0 at `reach`.
    Pull {
        centre: [f32; 2],
        reach: f32,
        pull: f32,
    },
    /// The tank jerked: velocity `push` (m/s, x and y) added to the whole liquid.
    Slosh { push: [f32; 2] },
}

impl Liquid {
    /// Carry out `actions` in order; past `budget` particles the oldest go, once at the end
    /// (or at once when the tank would pass twice its budget).
    pub fn act(&mut self, actions: &[Action], budget: usize) {
        let limit = budget.saturating_mul(2).min(super::MAX_PARTICLES);
        for action in actions {
            match action {
                Action::Burst(fresh) => {
                    if self.len() + fresh.len() > limit {
                        let excess = (self.len() + fresh.len()).saturating_sub(budget);
                        self.remove_oldest(excess);
                    }
                    for &(p, v, c) in fresh {
                        self.add(p, v, c);
                    }
                }
                &Action::Shock {
                    centre,
                    reach,
                    force,
                } => self.push_near(centre, reach, |_, r| {
                    let k = 1.0 - r / reach;
                    [force[0] * k, force[1] * k]
                }),
                &Action::Slosh { push } => self.vel.par_iter_mut().for_each(|v| {
                    v[0] += push[0];
                    v[1] += push[1];
                }),
                &Action::Pull {
                    centre,
                    reach,
                    pull,
                } => self.push_near(centre, reach, |d, r| {
                    if r > 1e-6 {
                        let k = pull * (1.0 - r / reach) / r * 0.1;
                        [d[0] * k, d[1] * k]
                    } else {
                        [0.0; 2]
                    }
                }),
            }
        }
        let excess = self.len().saturating_sub(budget);
        self.remove_oldest(excess);
    }

    /// Add `kick(d, r)` to the velocity (x, y) of every particle closer than `reach` to
    /// `centre` across and up (`d`: from the particle to the centre, `r` its length).
    fn push_near(
        &mut self,
        centre: [f32; 2],
        reach: f32,
        kick: impl Fn([f32; 2], f32) -> [f32; 2] + Sync,
    ) {
        let ps = &mut self.particles;
        ps.pos.par_iter().zip(&mut ps.vel).for_each(|(p, v)| {
            let d = [centre[0] - p[0], centre[1] - p[1]];
            let r = d[0].phypot(d[1]);
            if r < reach {
                let [kx, ky] = kick(d, r);
                v[0] += kx;
                v[1] += ky;
            }
        });
    }
}
