//! The particles on the CPU: their move through the flow (midpoint rule on the staggered
//! grid, bouncing off walls and obstacles) and their drawing as additive points into a
//! fixed-point light buffer at the picture's size (a point's footprint and units are the
//! picture's, [`crate::display::points`]). See [`crate::sim::grid::particles`] for the model.

use super::advect::{Flow, Grid, WideMoves};
use crate::display::points::{footprint, light_units};
use crate::sim::grid::particles::{POINT_LIGHT, Particle, sanitize_glow};
use rayon::prelude::*;

/// Particles per rayon task.
const CHUNK: usize = 4096;

/// The solid cells a particle must stay out of: `w x h`, row-major from the bottom row.
#[derive(Clone, Copy)]
pub struct Solids<'a> {
    pub cells: &'a [bool],
}

/// Where particles live: the grid (`w x h` cells, one canvas height `h` cells tall) and its
/// obstacles.
#[derive(Clone, Copy)]
struct Bounds<'a> {
    w: usize,
    h: usize,
    aspect: f32,
    solids: Option<Solids<'a>>,
}

impl Bounds<'_> {
    /// Whether canvas point `(x, y)` (on the canvas) is inside a solid cell.
    #[inline(always)]
    fn solid(&self, x: f32, y: f32) -> bool {
        match self.solids {
            None => false,
            Some(s) => {
                let n = self.h as f32;
                let i = ((x * n) as usize).min(self.w - 1);
                let j = ((y * n) as usize).min(self.h - 1);
                s.cells[j * self.w + i]
            }
        }
    }

    /// Mirror `x` back into `[0, max]` off the wall it crossed (clamped for a move of more
    /// than a canvas).
    #[inline(always)]
    fn mirror(x: f32, max: f32) -> f32 {
        let x = if x < 0.0 {
            -x
        } else if x > max {
            2.0 * max - x
        } else {
            x
        };
        x.clamp(0.0, max)
    }

    /// The end of a move from `old` (on the canvas, not in a solid) to `new`: mirrored off
    /// the walls, then, axis by axis, a move into a solid cell mirrored off the face of that
    /// cell it entered through, or undone if that lands in a solid too.
    #[inline(always)]
    fn bounce(&self, old: [f32; 2], new: [f32; 2]) -> [f32; 2] {
        if !(new[0].is_finite() && new[1].is_finite()) {
            return old;
        }
        let x = Self::mirror(new[0], self.aspect);
        let y = Self::mirror(new[1], 1.0);
        if self.solids.is_none() {
            return [x, y];
        }
        let n = self.h as f32;
        // The face of the cell containing `to` that a move from `from` entered through.
        let face = |from: f32, to: f32| {
            let cell = (to * n).floor();
            if to > from {
                cell / n
            } else {
                (cell + 1.0) / n
            }
        };
        let x = if self.solid(x, old[1]) {
            let m = (2.0 * face(old[0], x) - x).clamp(0.0, self.aspect);
            if self.solid(m, old[1]) { old[0] } else { m }
        } else {
            x
        };
        if self.solid(x, y) {
            let m = (2.0 * face(old[1], y) - y).clamp(0.0, 1.0);
            if self.solid(x, m) {
                [x, old[1]]
            } else {
                [x, m]
            }
        } else {
            [x, y]
        }
    }
}

/// Move every living particle by `dt` seconds through the face velocities `u`, `v` of a
/// `w x h` grid (midpoint rule), bounce it off the walls and `solids`, and age it.
pub fn advect(
    particles: &mut [Particle],
    (w, h): (usize, usize),
    u: &[f32],
    v: &[f32],
    solids: Option<Solids>,
    dt: f32,
) {
    let flow = Flow::new(Grid { w, h }, u, v);
    let bounds = Bounds {
        w,
        h,
        aspect: w as f32 / h as f32,
        solids,
    };
    particles
        .par_chunks_mut(CHUNK)
        .for_each(|chunk| move_chunk(chunk, &flow, &bounds, h as f32, dt));
}

/// Move the living particles of `chunk` (see [`advect`]); `n`: cells per canvas height.
/// Eight at a time with AVX2 (the same operations, bit for bit), the rest one by one.
fn move_chunk(chunk: &mut [Particle], flow: &Flow, bounds: &Bounds, n: f32, dt: f32) {
    let Some(wide) = WideMoves::new(flow) else {
        move_scalar(chunk, flow, bounds, n, dt);
        return;
    };
    let mut blocks = chunk.chunks_exact_mut(8);
    for block in &mut blocks {
        if !block.iter().any(Particle::alive) {
            continue;
        }
        let mut x: [f32; 8] = std::array::from_fn(|k| block[k].pos[0]);
        let mut y: [f32; 8] = std::array::from_fn(|k| block[k].pos[1]);
        wide.moves(n, dt, &mut x, &mut y);
        for (k, p) in block.iter_mut().enumerate() {
            if p.alive() {
                p.pos = bounds.bounce(p.pos, [x[k], y[k]]);
                p.age += dt;
            }
        }
    }
    move_scalar(blocks.into_remainder(), flow, bounds, n, dt);
}

kernel! {
/// [`move_chunk`] one particle at a time. (Compiled for FMA too: the bilinear samples'
/// `mul_add`s are a call into libm without it.)
fn move_scalar(chunk: &mut [Particle], flow: &Flow, bounds: &Bounds, n: f32, dt: f32) {
    // Canvas position to centre space.
    let vel = |p: [f32; 2]| flow.at(p[0] * n - 0.5, p[1] * n - 0.5);
    let half = 0.5 * dt;
    for p in chunk.iter_mut().filter(|p| p.alive()) {
        let (vx, vy) = vel(p.pos);
        let mid = [p.pos[0] + half * vx, p.pos[1] + half * vy];
        let (mx, my) = vel(mid);
        let new = [dt.mul_add(mx, p.pos[0]), dt.mul_add(my, p.pos[1])];
        p.pos = bounds.bounce(p.pos, new);
        p.age += dt;
    }
}
}

/// Draw the living particles into `light` (`width x height` pixels of three fixed-point
/// units each, interleaved, rows top first; cleared first) as bilinear points on a canvas
/// `aspect` wide: each lights the 2x2 pixels around it with its colour times `glow` and its
/// fade. Integer sums, so the result does not depend on the order (the GPU adds with
/// atomics). The frame is cut into one band of rows per thread; each thread draws every
/// particle's taps that fall in its band (no atomics, no two threads on one pixel).
pub fn draw(
    particles: &[Particle],
    aspect: f32,
    glow: f32,
    (width, height): (usize, usize),
    light: &mut Vec<u32>,
) {
    let n = width * height;
    light.resize(3 * n, 0);
    let glow = sanitize_glow(glow);
    if glow == 0.0 || n == 0 {
        light.fill(0);
        return;
    }
    let bands = rayon::current_num_threads().clamp(1, height);
    let rows = height.div_ceil(bands);
    light
        .par_chunks_mut(3 * width * rows)
        .enumerate()
        .for_each(|(b, band)| {
            band.fill(0);
            let first = b * rows;
            let last = first + band.len() / (3 * width);
            draw_band(
                particles,
                aspect,
                glow,
                (width, height),
                (first, last),
                band,
            );
        });
}

kernel! {
/// Draw the taps of `particles` that fall in rows `first..last` (top first) into `band`,
/// those rows of the particles' light (see [`draw`]).
fn draw_band(
    particles: &[Particle],
    aspect: f32,
    glow: f32,
    (width, height): (usize, usize),
    (first, last): (usize, usize),
    band: &mut [u32],
) {
    let sy = height as f32;
    let (lo, hi) = (first as f32 - 1.0, last as f32);
    for p in particles.iter().filter(|p| p.alive()) {
        // Rows floor(y) and floor(y) + 1: skip the particle unless one is in the band.
        let y = ((1.0 - p.pos[1]) * sy - 0.5).floor();
        if !(y >= lo && y < hi) {
            continue;
        }
        let k = glow * POINT_LIGHT * p.fade();
        for (i, wt) in footprint(p.pos, aspect, width, height) {
            let row = i / width;
            if wt > 0.0 && row >= first && row < last {
                let at = 3 * (i - first * width);
                let px = &mut band[at..at + 3];
                for (c, v) in px.iter_mut().enumerate() {
                    *v = v.wrapping_add(light_units(k * p.color[c], wt));
                }
            }
        }
    }
}
}
