//! What reaches the particles from outside besides new ones: impulses near a point. A shock
//! (an onset, the level's push, the beat) pushes the particles within its reach along its
//! force, fading to 0 at the reach; a pull (the mouse, as in the source) draws them towards its
//! centre (a negative pull pushes them away), strongest at the centre and gone at the reach,
//! and calms the particles it holds. The GPU applies the same (`shaders/sph_sources.wgsl`).

use super::Fluid;
use rayon::prelude::*;

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
