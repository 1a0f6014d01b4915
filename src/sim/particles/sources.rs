//! What reaches the particles from outside, as plain actions either backend carries out
//! (each configuration's planner draws their randomness once, on the CPU, so both backends get
//! the same particles): impulses near a point and bursts of new particles. The GPU does the
//! same with `shaders/particle_sources.wgsl`, operation for operation.
//!
//! Impulses act across (x) and up (y); in 3D through the whole depth. A shock pushes the
//! particles within its reach along its force, fading to 0 at the reach; a pull draws them
//! towards its centre (a negative pull pushes them away), strongest at the centre and gone at
//! the reach, and may calm the particles it holds; a slosh (the 3D tank jerked) pushes them
//! all. A burst adds particles within a budget: past it, the oldest make room.

use super::Particles;
use rayon::prelude::*;

/// The planners' pseudo-random spread (xorshift32 from a fixed seed): the same events give
/// the same particles, whichever backend carries them out.
#[derive(Clone, Copy, Debug)]
pub struct Spread(u32);

impl Default for Spread {
    fn default() -> Self {
        Self(0x9e37_79b9)
    }
}

impl Spread {
    /// A spread from `seed` (0, which xorshift never leaves, counts as 1).
    pub fn new(seed: u32) -> Self {
        Self(seed.max(1))
    }

    /// The next number in 0..1.
    pub fn draw(&mut self) -> f32 {
        let s = self.0 ^ (self.0 << 13);
        let s = s ^ (s >> 17);
        self.0 = s ^ (s << 5);
        (self.0 >> 8) as f32 / (1u32 << 24) as f32
    }
}

/// A new particle: position, velocity, colour (linear RGB).
pub type Fresh<const D: usize> = ([f32; D], [f32; D], [f32; 3]);

/// What a source does to the particles.
#[derive(Clone, Debug, PartialEq)]
pub enum Action<const D: usize> {
    /// Push or pull the particles near a point, or all of them.
    Impulse(Impulse),
    /// Add these particles (at most the budget), recycling the oldest past the budget.
    Burst(Vec<Fresh<D>>),
}

/// A push on the particles' velocities across and up (in the container's units).
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
    /// `v += push` everywhere.
    Slosh { push: [f32; 2] },
}

impl Impulse {
    /// The velocity (across and up) `v` of a particle at `p` (across and up) after this
    /// impulse.
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
            Impulse::Slosh { push } => [v[0] + push[0], v[1] + push[1]],
        }
    }
}

impl<const D: usize> Particles<D> {
    /// Apply `impulse` to every particle (in parallel on the current rayon pool).
    pub fn apply(&mut self, impulse: &Impulse) {
        self.pos
            .par_iter()
            .zip(self.vel.par_iter_mut())
            .for_each(|(p, v)| {
                [v[0], v[1]] = impulse.kick([p[0], p[1]], [v[0], v[1]]);
            });
    }

    /// Add `burst`, at most `budget` particles in all: past it the oldest make room (more
    /// new ones than the budget: the last of them).
    pub fn add_burst(&mut self, burst: &[Fresh<D>], budget: usize) {
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

    /// Carry out `actions` in order, at most `budget` particles in all; particles already
    /// past it (a budget lowered) go too, the oldest first.
    pub fn act(&mut self, actions: &[Action<D>], budget: usize) {
        for action in actions {
            match action {
                Action::Impulse(impulse) => self.apply(impulse),
                Action::Burst(burst) => self.add_burst(burst, budget),
            }
        }
        let excess = self.len().saturating_sub(budget.max(1));
        self.remove_oldest(excess);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Known answers: a shock at half its reach adds half its force; a pull at half its reach
    /// adds half the pull towards the centre and takes half the calm of the velocity; a slosh
    /// adds its push anywhere; beyond the reach, and at a pull's centre, nothing changes.
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
        let slosh = Impulse::Slosh { push: [1.5, -1.0] };
        assert_eq!(slosh.kick([9.0, 9.0], [1.0, 1.0]), [2.5, 0.0]);
    }

    /// Impulses move the velocity across and up only; the depth keeps its own.
    #[test]
    fn impulses_leave_the_depth_alone() {
        let mut ps = Particles::<3>::empty([4.0; 3]);
        ps.add([1.0, 1.0, 2.0], [0.0, 0.0, 0.5], [1.0; 3]);
        ps.apply(&Impulse::Slosh { push: [1.0, 2.0] });
        assert_eq!(ps.vel[0], [1.0, 2.0, 0.5]);
    }

    /// A budget keeps the newest particles, in order, whether bursts come one by one or
    /// together, and a lowered budget drops the oldest at once.
    #[test]
    fn bursts_keep_the_newest_within_the_budget() {
        let burst = |x: f32, n: usize| -> Vec<Fresh<2>> {
            (0..n)
                .map(|i| ([x, i as f32], [0.0; 2], [1.0; 3]))
                .collect()
        };
        let mut one = Particles::<2>::empty([10.0; 2]);
        one.act(&[Action::Burst(burst(1.0, 5))], 8);
        one.act(&[Action::Burst(burst(2.0, 5))], 8);
        let mut both = Particles::<2>::empty([10.0; 2]);
        both.act(
            &[Action::Burst(burst(1.0, 5)), Action::Burst(burst(2.0, 5))],
            8,
        );
        assert_eq!(one.pos, both.pos);
        assert_eq!(one.birth, [2, 3, 4, 5, 6, 7, 8, 9]);
        one.act(&[], 3);
        assert_eq!(one.birth, [7, 8, 9]);
        // More than the budget in one burst: its last ones.
        let mut big = Particles::<2>::empty([10.0; 2]);
        big.act(&[Action::Burst(burst(3.0, 6))], 4);
        assert_eq!(
            big.pos.iter().map(|p| p[1]).collect::<Vec<_>>(),
            [2.0, 3.0, 4.0, 5.0]
        );
    }
}
