//! Particles (PixelFlow's Lagrangian tracers): points carried by the flow, emitted by splats
//! (notes, onsets, the mouse) in their colour, living a set time and fading, bouncing off the
//! canvas walls and the obstacles, drawn as soft additive points into the picture's light
//! before the display stage, so they glow with the bloom.
//!
//! Shared by both solvers so that they run the same particles from one definition: the slot
//! layout (also the GPU's), the emission (made on the host for both, from a counter-based
//! hash, so the CPU and the GPU emit bit-identical particles), the fade and the fixed-point
//! light they draw.
//!
//! # Model
//! - A particle's position is in canvas units (x right in `[0, aspect]`, y up in `[0, 1]`), so
//!   it does not depend on the grid. Each step it moves by the midpoint rule (RK2) through the
//!   staggered velocity: `p' = p + dt v(p + dt/2 v(p))`, each velocity sampled bilinearly from
//!   the faces (`u` at cell-centre height on the vertical faces, `v` on the horizontal ones).
//! - It lives `life` seconds (the step's particle life, jittered +-25 % per particle), and its
//!   light fades in over the first [`FADE_IN`] of it and out as `(1 - t)` to its end.
//! - Walls and obstacles: a move that would leave the canvas is mirrored back in, and a move
//!   that would end in a solid cell is undone along the axis that entered it (the particle
//!   bounces off the face it hit); a particle is never inside a solid or outside the canvas.
//! - The slots are a ring of a fixed capacity (per backend): emission fills the next slots, so
//!   once it is full the oldest particles make room for new ones (new notes always show). A
//!   particle never disappears otherwise, except at the end of its life.

use crate::fluid::Splat;
use crate::kernels::portable::Portable;
use bytemuck::{Pod, Zeroable};

/// Particle slots of the CPU solver: at least the 100 000 PixelFlow's CPU target asks for.
pub const CPU_CAPACITY: usize = 1 << 17;
/// Particle slots of the GPU solver (32 MB): at least PixelFlow's 1 000 000.
pub const GPU_CAPACITY: usize = 1 << 20;
/// Most particles one step may emit (a runaway producer's bound): a quarter of the CPU's
/// capacity, so a burst never recycles the whole ring at once.
pub const MAX_EMIT_PER_STEP: usize = CPU_CAPACITY / 4;
/// Most particles one splat emits.
pub const MAX_PER_SPLAT: f32 = 4096.0;
/// Longest particle life, seconds.
pub const MAX_LIFE_S: f32 = 60.0;
/// The fraction of its life over which a particle's light fades in.
pub const FADE_IN: f32 = 0.1;
/// Fixed-point units per unit of light in the particles' light buffer: the display's, which
/// reads it ([`crate::display::LIGHT_UNITS`]).
pub use crate::display::LIGHT_UNITS;
pub use crate::fluid::MAX_GLOW;
/// Light of one particle at glow 1 and full fade, before its colour: a particle spreads it
/// over the 2x2 pixels around it. Set by eye on Neon at 960x540 (2026-11): at 1 the sparks
/// drowned in the dye they are born in; at 4 they read as bright specks over it.
pub const POINT_LIGHT: f32 = 4.0;
/// How far a particle's colour is whitened from its splat's (0: the splat's hue, 1: white):
/// a spark glows hotter than the dye it flies through, so it shows over dye of its own hue.
pub const WHITENING: f32 = 0.35;

/// One particle slot. The GPU's layout (`shaders/particles.wgsl`): 32 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct Particle {
    /// Position, canvas units (x right, y up).
    pub pos: [f32; 2],
    /// Seconds lived.
    pub age: f32,
    /// Seconds it lives (0: an empty slot).
    pub life: f32,
    /// Linear RGB, the brightest channel 1 (whitened from the splat's colour).
    pub color: [f32; 3],
    pub _pad: f32,
}

impl Particle {
    /// Whether the slot holds a living particle.
    #[inline(always)]
    pub fn alive(&self) -> bool {
        self.age < self.life
    }

    /// The particle's light now (0..1): fading in over [`FADE_IN`] of its life, out towards
    /// its end.
    #[inline(always)]
    pub fn fade(&self) -> f32 {
        fade(self.age, self.life)
    }
}

/// The light of a particle `age` seconds into a life of `life` seconds (0..1).
#[inline(always)]
pub fn fade(age: f32, life: f32) -> f32 {
    // Dead (or a NaN age or life): dark.
    if age >= life || age.is_nan() || life.is_nan() {
        return 0.0;
    }
    let t = age / life;
    (t * (1.0 / FADE_IN)).min(1.0) * (1.0 - t)
}

/// The low-bias 32-bit integer hash (Chris Wellons' `lowbias32`); the same in
/// `particles.wgsl` is not needed, since emission runs on the host for both backends.
#[inline]
fn hash(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^= x >> 16;
    x
}

/// A uniform number in `[0, 1)` from `hash(seed)`.
#[inline]
fn unit(seed: u32) -> f32 {
    (hash(seed) >> 8) as f32 * (1.0 / 16_777_216.0)
}

/// The particles a queue of splats emits, made the same way for every backend.
#[derive(Clone, Debug, Default)]
pub struct Emitter {
    /// Particles emitted so far (the hash's counter).
    count: u32,
    /// Splats seen (the fractional counts' rounding draws).
    splats: u32,
}

impl Emitter {
    /// Particles `splats` emit on a canvas `aspect` wide, living `life` seconds (jittered):
    /// appended to `out`, at most [`MAX_EMIT_PER_STEP`] in all. A splat emits `particles`
    /// of them (the fraction rounded at random, so a trickle of 0.3 per step emits one every
    /// third step or so), uniformly over the disc of its radius, in its colour (the brightest
    /// channel made 1, then whitened by [`WHITENING`]; white when it has none). `solid(pos)`: whether a point is inside an
    /// obstacle; nothing is emitted there. Splats with a broken field emit nothing.
    pub fn emit(
        &mut self,
        splats: &[Splat],
        aspect: f32,
        life: f32,
        solid: impl Fn([f32; 2]) -> bool,
        out: &mut Vec<Particle>,
    ) {
        let life = if life.is_finite() {
            life.clamp(0.0, MAX_LIFE_S)
        } else {
            0.0
        };
        if life <= 0.0 {
            return;
        }
        let aspect = if aspect.is_finite() {
            aspect.max(0.0)
        } else {
            1.0
        };
        for s in splats {
            self.splats = self.splats.wrapping_add(1);
            let finite = s.pos.iter().chain(&s.color).all(|x| x.is_finite())
                && s.radius.is_finite()
                && s.particles.is_finite();
            if !finite || s.particles <= 0.0 {
                continue;
            }
            let n = s.particles.min(MAX_PER_SPLAT);
            let round = unit(self.splats.wrapping_mul(0x9e37_79b9) ^ 0x5bd1_e995);
            let n = (n + round) as usize;
            let room = MAX_EMIT_PER_STEP.saturating_sub(out.len());
            let top = s.color.iter().fold(0.0f32, |m, &c| m.max(c));
            let color = if top > 0.0 {
                s.color
                    .map(|c| (c.max(0.0) / top).mul_add(1.0 - WHITENING, WHITENING))
            } else {
                [1.0; 3]
            };
            let radius = s.radius.clamp(0.0, 4.0);
            for _ in 0..n.min(room) {
                let k = self.count.wrapping_mul(4);
                self.count = self.count.wrapping_add(1);
                let r = radius * unit(k).sqrt();
                let a = std::f32::consts::TAU * unit(k + 1);
                let pos = [
                    (s.pos[0] + r * a.pcos()).clamp(0.0, aspect),
                    (s.pos[1] + r * a.psin()).clamp(0.0, 1.0),
                ];
                if solid(pos) {
                    continue;
                }
                out.push(Particle {
                    pos,
                    age: 0.0,
                    life: life * (0.75 + 0.5 * unit(k + 2)),
                    color,
                    _pad: 0.0,
                });
            }
        }
    }
}

/// Whether canvas point `pos` lies in a solid cell of `mask` (cells one canvas height /
/// `mask.height()` wide; points on the far edges count in the last cells).
pub fn solid_at(mask: &crate::sim::obstacles::Mask, pos: [f32; 2]) -> bool {
    let (w, h) = (mask.width(), mask.height());
    let i = ((pos[0] * h as f32) as usize).min(w - 1);
    let j = ((pos[1] * h as f32) as usize).min(h - 1);
    mask.is_solid(i, j)
}

impl Emitter {
    /// [`Emitter::emit`] on a grid of `cells` with the solids of `mask`, into `out` (cleared
    /// first); returns the longest life emitted (0: none).
    pub fn emit_on_grid(
        &mut self,
        splats: &[Splat],
        (w, h): (usize, usize),
        mask: Option<&crate::sim::obstacles::Mask>,
        life: f32,
        out: &mut Vec<Particle>,
    ) -> f32 {
        out.clear();
        let solid = |pos: [f32; 2]| mask.is_some_and(|m| solid_at(m, pos));
        self.emit(splats, w as f32 / h as f32, life, solid, out);
        out.iter().map(|p| p.life).fold(0.0, f32::max)
    }
}

/// A ring of particle slots (the CPU's, and the GPU's mirror of where the next go).
#[derive(Clone, Debug)]
pub struct Ring {
    /// The next slot to fill.
    cursor: usize,
    capacity: usize,
}

impl Ring {
    /// A ring of `capacity` slots (at least 1).
    pub fn new(capacity: usize) -> Self {
        Self {
            cursor: 0,
            capacity: capacity.max(1),
        }
    }

    /// Where `n` new particles go: at most two runs of slots `(first, count)` (the second
    /// when they wrap around), taking at most the ring's capacity.
    pub fn place(&mut self, n: usize) -> [(usize, usize); 2] {
        let n = n.min(self.capacity);
        let first = (self.capacity - self.cursor).min(n);
        let runs = [(self.cursor, first), (0, n - first)];
        self.cursor = (self.cursor + n) % self.capacity;
        runs
    }

    /// Start again from the first slot.
    pub fn reset(&mut self) {
        self.cursor = 0;
    }
}

/// The host side of a solver's particles, the same for both backends: the emission, the
/// ring of slots it fills, and how long any particle may still live (a solver moves and draws
/// its particles only while [`Spawner::alive`]).
#[derive(Clone, Debug)]
pub struct Spawner {
    emitter: Emitter,
    ring: Ring,
    /// This step's new particles (scratch).
    born: Vec<Particle>,
    /// Simulated seconds until the longest-lived particle emitted so far dies.
    left_s: f32,
}

impl Spawner {
    /// A spawner for `capacity` slots.
    pub fn new(capacity: usize) -> Self {
        Self {
            emitter: Emitter::default(),
            ring: Ring::new(capacity),
            born: Vec::new(),
            left_s: 0.0,
        }
    }

    /// Whether any particle may still be alive.
    pub fn alive(&self) -> bool {
        self.left_s > 0.0
    }

    /// Emit the particles of `splats` ([`Emitter::emit_on_grid`]) into the ring: where they
    /// go, as two runs of `(first slot, particles)` (the second empty unless they wrap).
    pub fn emit(
        &mut self,
        splats: &[Splat],
        cells: (usize, usize),
        mask: Option<&crate::sim::obstacles::Mask>,
        life: f32,
    ) -> [(usize, &[Particle]); 2] {
        let longest = self
            .emitter
            .emit_on_grid(splats, cells, mask, life, &mut self.born);
        self.left_s = self.left_s.max(longest);
        let [(a, n), (b, _)] = self.ring.place(self.born.len());
        let (first, second) = self.born.split_at(n);
        [(a, first), (b, second)]
    }

    /// Start the ring again with `particles` in its first slots (tests and the bench's
    /// seeding); returns how many it holds (at most the capacity).
    pub fn seed(&mut self, particles: &[Particle]) -> usize {
        self.ring.reset();
        let n = self.ring.place(particles.len())[0].1;
        let longest = particles[..n]
            .iter()
            .map(|p| p.life - p.age)
            .fold(0.0, f32::max);
        self.left_s = longest.max(0.0);
        n
    }

    /// Count down `dt` seconds of the particles' lives.
    pub fn advance(&mut self, dt: f32) {
        self.left_s = (self.left_s - dt).max(0.0);
    }

    /// No particle alive; the ring starts from its first slot (the emission's counter runs
    /// on).
    pub fn reset(&mut self) {
        self.ring.reset();
        self.left_s = 0.0;
    }
}

/// The look's particle glow, finite and in `[0, MAX_GLOW]`.
pub fn sanitize_glow(glow: f32) -> f32 {
    if glow.is_finite() {
        glow.clamp(0.0, MAX_GLOW)
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn splat(particles: f32) -> Splat {
        Splat {
            pos: [0.5, 0.5],
            radius: 0.1,
            color: [2.0, 1.0, 0.0],
            particles,
            ..Splat::default()
        }
    }

    /// A splat emits its count (the fraction on average), inside its disc, in its colour
    /// with the brightest channel 1, with lives jittered around the step's.
    #[test]
    fn splats_emit_their_particles_in_their_disc_and_colour() {
        let mut e = Emitter::default();
        let mut out = Vec::new();
        e.emit(&[splat(500.0)], 1.5, 2.0, |_| false, &mut out);
        assert!(out.len() == 500 || out.len() == 501, "{}", out.len());
        for p in &out {
            let d = (p.pos[0] - 0.5).hypot(p.pos[1] - 0.5);
            assert!(d <= 0.1 + 1e-6, "{d}");
            assert_eq!(
                p.color,
                [1.0f32, 0.5, 0.0].map(|c| c.mul_add(1.0 - WHITENING, WHITENING))
            );
            assert!((1.5..=2.5).contains(&p.life), "{}", p.life);
            assert_eq!(p.age, 0.0);
        }
        // Uniform over the disc: about a quarter within half the radius.
        let inner = out
            .iter()
            .filter(|p| (p.pos[0] - 0.5).hypot(p.pos[1] - 0.5) < 0.05)
            .count();
        assert!((90..160).contains(&inner), "{inner}");
        // Fractions round at random: 0.25 per splat is a quarter of the splats.
        let mut out = Vec::new();
        for _ in 0..400 {
            e.emit(&[splat(0.25)], 1.5, 2.0, |_| false, &mut out);
        }
        assert!((70..130).contains(&out.len()), "{}", out.len());
    }

    /// Nothing is emitted inside a solid, from a broken splat, past the step's bound, or
    /// with no life.
    #[test]
    fn emission_refuses_solids_broken_splats_and_floods() {
        let mut e = Emitter::default();
        let mut out = Vec::new();
        e.emit(&[splat(100.0)], 1.0, 1.0, |p| p[0] < 0.5, &mut out);
        assert!(!out.is_empty());
        assert!(out.iter().all(|p| p.pos[0] >= 0.5));
        let mut bad = splat(100.0);
        bad.pos[0] = f32::NAN;
        let mut out = Vec::new();
        e.emit(&[bad, splat(f32::INFINITY)], 1.0, 1.0, |_| false, &mut out);
        assert!(out.is_empty());
        e.emit(&[splat(100.0)], 1.0, 0.0, |_| false, &mut out);
        e.emit(&[splat(100.0)], 1.0, f32::NAN, |_| false, &mut out);
        assert!(out.is_empty());
        let flood = vec![splat(1e9); 100];
        e.emit(&flood, 1.0, 1.0, |_| false, &mut out);
        assert_eq!(out.len(), MAX_EMIT_PER_STEP);
        // Near an edge, particles stay on the canvas.
        let mut edge = splat(200.0);
        edge.pos = [0.0, 1.0];
        let mut out = Vec::new();
        e.emit(&[edge], 1.0, 1.0, |_| false, &mut out);
        assert!(out.iter().all(|p| (0.0..=1.0).contains(&p.pos[0])));
        assert!(out.iter().all(|p| (0.0..=1.0).contains(&p.pos[1])));
    }

    #[test]
    fn the_ring_wraps_and_never_takes_more_than_it_holds() {
        let mut r = Ring::new(10);
        assert_eq!(r.place(4), [(0, 4), (0, 0)]);
        assert_eq!(r.place(8), [(4, 6), (0, 2)]);
        assert_eq!(r.place(25), [(2, 8), (0, 2)]);
        r.reset();
        assert_eq!(r.place(1), [(0, 1), (0, 0)]);
    }

    /// The fade rises over the first tenth, then falls to 0 at the end; dead is dark.
    #[test]
    fn particles_fade_in_and_out() {
        assert_eq!(fade(0.0, 2.0), 0.0);
        assert!((fade(0.2, 2.0) - 0.9).abs() < 1e-6);
        assert!(fade(1.0, 2.0) > fade(1.5, 2.0));
        assert_eq!(fade(2.0, 2.0), 0.0);
        assert_eq!(fade(1.0, 0.0), 0.0);
    }
}
