//! Obstacles for the particles: the grid fluid's solid [`Mask`], laid over the box, and a
//! collision that puts a particle that ended a step inside a solid back on the surface it
//! crossed, its speed into the surface reflected and damped like a bounce off a wall.
//!
//! Each solid cell knows the nearest fluid cell (found once per mask by a breadth-first
//! sweep out from the fluid, each cell keeping the closest of its neighbours' candidates).
//! A particle in a solid cell moves along the direction from that cell to its nearest fluid
//! cell until it reaches that cell's edge: one cell deep, that is the surface it came
//! through; deeper (a wall drawn over the liquid), the shortest way out. A step longer than
//! half a cell is checked at half-cell intervals, so a fast particle cannot jump through a
//! thin wall.

use super::Fluid;
use crate::sim::obstacles::Mask;
use crate::sim::obstacles::near::NEIGHBOURS;
use rayon::prelude::*;

/// The obstacles on a box of the particles (on the GPU: [`super::gpu::solids`]).
#[derive(Clone, Debug)]
pub struct Solids {
    /// Cells across and up.
    w: usize,
    h: usize,
    /// A cell's width and height, box units.
    cell: [f32; 2],
    solid: Vec<bool>,
    /// Per cell: the nearest fluid cell's centre, in cells (a fluid cell: its own centre).
    exit: Vec<[f32; 2]>,
}

impl Solids {
    /// The solids of `mask` over a box `size` box units wide and tall; `None` when the mask
    /// has no solid cell or no fluid cell (nothing to collide with, or nowhere to go).
    pub fn new(mask: &Mask, size: [f32; 2]) -> Option<Self> {
        let (w, h) = (mask.width(), mask.height());
        let solid = mask.cells().to_vec();
        let fluid_cells = solid.iter().filter(|s| !**s).count();
        if w == 0 || h == 0 || fluid_cells == 0 || fluid_cells == solid.len() {
            return None;
        }
        let centre = |c: usize| [(c % w) as f32 + 0.5, (c / w) as f32 + 0.5];
        let mut exit = vec![[f32::NAN; 2]; w * h];
        let mut front = Vec::with_capacity(fluid_cells);
        for (c, s) in solid.iter().enumerate() {
            if !s {
                exit[c] = centre(c);
                front.push(c);
            }
        }
        // Sweep out from the fluid, one ring of cells at a time; a cell takes the nearest of
        // the exits its labelled neighbours offer.
        let mut next = Vec::new();
        while !front.is_empty() {
            next.clear();
            for &c in &front {
                let (i, j) = ((c % w) as isize, (c / w) as isize);
                for (di, dj) in NEIGHBOURS {
                    let (ni, nj) = (i + di, j + dj);
                    if ni < 0 || nj < 0 || ni >= w as isize || nj >= h as isize {
                        continue;
                    }
                    let n = nj as usize * w + ni as usize;
                    if exit[n][0].is_nan() {
                        next.push(n);
                        // Marked at once so it is queued once; its exit is chosen below.
                        exit[n] = [f32::INFINITY; 2];
                    }
                }
            }
            for &n in &next {
                let here = centre(n);
                let (i, j) = ((n % w) as isize, (n / w) as isize);
                let mut best = (f32::INFINITY, [0.0; 2]);
                for (di, dj) in NEIGHBOURS {
                    let (ni, nj) = (i + di, j + dj);
                    if ni < 0 || nj < 0 || ni >= w as isize || nj >= h as isize {
                        continue;
                    }
                    let e = exit[nj as usize * w + ni as usize];
                    if e[0].is_finite() {
                        let d = (e[0] - here[0]).powi(2) + (e[1] - here[1]).powi(2);
                        if d < best.0 {
                            best = (d, e);
                        }
                    }
                }
                exit[n] = best.1;
            }
            std::mem::swap(&mut front, &mut next);
        }
        Some(Self {
            w,
            h,
            cell: [size[0] / w as f32, size[1] / h as f32],
            solid,
            exit,
        })
    }

    /// Cells across and up.
    pub fn cells(&self) -> (usize, usize) {
        (self.w, self.h)
    }

    /// A cell's width and height, box units.
    pub fn cell_size(&self) -> [f32; 2] {
        self.cell
    }

    /// Whether each cell is solid, rows bottom first.
    pub fn solid(&self) -> &[bool] {
        &self.solid
    }

    /// Each cell's exit: the nearest fluid cell's centre, in cells (a fluid cell's own).
    pub fn exits(&self) -> &[[f32; 2]] {
        &self.exit
    }

    /// The cell holding box point `p` (clamped into the box).
    fn cell_of(&self, p: [f32; 2]) -> usize {
        let i = ((p[0] / self.cell[0]).max(0.0) as usize).min(self.w - 1);
        let j = ((p[1] / self.cell[1]).max(0.0) as usize).min(self.h - 1);
        j * self.w + i
    }

    /// Whether box point `p` lies in a solid cell.
    pub fn contains(&self, p: [f32; 2]) -> bool {
        self.solid[self.cell_of(p)]
    }

    /// Put every particle that ended the last step (of `dt` seconds) inside a solid back on
    /// the surface it crossed, keeping `damping` of its speed into it, reflected.
    pub fn collide(&self, fluid: &mut Fluid, dt: f32, damping: f32) {
        let damping = if damping.is_finite() {
            damping.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let dt = if dt.is_finite() { dt.max(0.0) } else { 0.0 };
        let half = 0.5 * self.cell[0].min(self.cell[1]);
        fluid
            .pos
            .par_iter_mut()
            .zip(fluid.vel.par_iter_mut())
            .for_each(|(p, v)| {
                // Where it went in: the first point inside a solid along its last move.
                // As sph_solids.wgsl computes them, so both check the same points.
                let step = [v[0] * dt, v[1] * dt];
                let from = [p[0] - step[0], p[1] - step[1]];
                let travel = (step[0] * step[0] + step[1] * step[1]).sqrt();
                let checks = if travel > half {
                    ((travel / half).ceil() as usize).min(64)
                } else {
                    1
                };
                let mut outside = (!self.contains(from)).then_some(from);
                for k in 1..=checks {
                    let t = k as f32 / checks as f32;
                    let q = [
                        from[0] + (p[0] - from[0]) * t,
                        from[1] + (p[1] - from[1]) * t,
                    ];
                    if !self.contains(q) {
                        outside = Some(q);
                        continue;
                    }
                    // In: back out through the face it came in by, or (from inside, or
                    // into another solid) the shortest way.
                    let face = outside.and_then(|a| self.entry(a, q));
                    let (at, n) = face.unwrap_or_else(|| self.way_out(q));
                    *p = at;
                    let into = v[0] * n[0] + v[1] * n[1];
                    if into < 0.0 {
                        let k = (1.0 + damping) * into;
                        *v = [v[0] - k * n[0], v[1] - k * n[1]];
                    }
                    break;
                }
            });
    }

    /// Where the move from fluid point `a` to solid point `b` entered `b`'s cell: a hair
    /// outside that face, and the face's outward normal; `None` when that point is solid too
    /// (a corner between two solid cells).
    fn entry(&self, a: [f32; 2], b: [f32; 2]) -> Option<([f32; 2], [f32; 2])> {
        let c = self.cell_of(b);
        let lo = [
            (c % self.w) as f32 * self.cell[0],
            (c / self.w) as f32 * self.cell[1],
        ];
        // The face crossed last on the way in.
        let mut best: Option<(f32, usize, f32)> = None;
        for axis in 0..2 {
            let (edge, side) = if a[axis] < lo[axis] {
                (lo[axis], -1.0)
            } else if a[axis] > lo[axis] + self.cell[axis] {
                (lo[axis] + self.cell[axis], 1.0)
            } else {
                continue;
            };
            let t = (edge - a[axis]) / (b[axis] - a[axis]);
            if t.is_finite() && best.is_none_or(|(bt, _, _)| t > bt) {
                best = Some((t, axis, side));
            }
        }
        let (t, axis, side) = best?;
        let t = t.clamp(0.0, 1.0);
        let mut at = [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t];
        let edge = if side < 0.0 {
            lo[axis]
        } else {
            lo[axis] + self.cell[axis]
        };
        at[axis] = edge + side * 1e-3 * self.cell[axis];
        let mut n = [0.0; 2];
        n[axis] = side;
        (!self.contains(at)).then_some((at, n))
    }

    /// The shortest way out of the solid at `at`: the point a hair past the edge of its
    /// cell's nearest fluid cell, and the direction out.
    fn way_out(&self, at: [f32; 2]) -> ([f32; 2], [f32; 2]) {
        let c = self.cell_of(at);
        let [sx, sy] = self.cell;
        let (ci, cj) = ((c % self.w) as f32 + 0.5, (c / self.w) as f32 + 0.5);
        let e = self.exit[c];
        // The way out, in box units.
        let (dx, dy) = ((e[0] - ci) * sx, (e[1] - cj) * sy);
        let len = (dx * dx + dy * dy).sqrt();
        if len.is_nan() || len <= 0.0 {
            return (at, [0.0; 2]);
        }
        let n = [dx / len, dy / len];
        // The exit cell's edge facing this way: its centre less its half-extent along n.
        let q = [e[0] * sx, e[1] * sy];
        let extent = 0.5 * (n[0].abs() * sx + n[1].abs() * sy);
        let go = (q[0] - at[0]) * n[0] + (q[1] - at[1]) * n[1] - extent;
        // A hair past the edge, so the particle is in the fluid cell (past a corner, where
        // that could land in another solid: the exit cell's centre).
        let go = go.max(0.0) + 1e-3 * sx.min(sy);
        let out = [at[0] + n[0] * go, at[1] + n[1] * go];
        (if self.contains(out) { q } else { out }, n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::sph::Knobs;

    /// A 10 x 10 box (one box unit a cell) with a solid block in columns 4..6, rows 0..5.
    fn block() -> Solids {
        let mut m = Mask::empty(10, 10);
        for j in 0..5 {
            for i in 4..6 {
                m.set(i, j, true);
            }
        }
        Solids::new(&m, [10.0, 10.0]).expect("solids")
    }

    /// Each solid cell's exit is the nearest fluid cell's centre: the block's left column
    /// leaves to the left, its right column to the right, its top row upwards.
    #[test]
    fn exits_are_the_nearest_fluid_cells() {
        let s = block();
        assert_eq!(s.exit[2 * 10 + 4], [3.5, 2.5]);
        assert_eq!(s.exit[2 * 10 + 5], [6.5, 2.5]);
        // The top corners are as near the side as the top: either is right.
        let e = s.exit[4 * 10 + 4];
        assert!(e == [3.5, 4.5] || e == [4.5, 5.5], "{e:?}");
        // A fluid cell is its own exit.
        assert_eq!(s.exit[9 * 10 + 9], [9.5, 9.5]);
        assert!(
            Solids::new(&Mask::empty(4, 4), [4.0, 4.0]).is_none(),
            "no solid"
        );
    }

    /// A particle that moved into the block from the left ends on its left face, moving left
    /// at `damping` of its speed; one that fell onto its top ends on top, moving up.
    #[test]
    fn a_particle_bounces_off_the_face_it_hit() {
        let s = block();
        let mut f = Fluid::with_size(10.0, 10.0);
        f.add([4.2, 2.0], [6.0, 1.0], [1.0; 3]);
        f.add([4.6, 4.8], [0.0, -6.0], [1.0; 3]);
        s.collide(&mut f, 0.1, 0.5);
        let (p, v) = (f.pos[0], f.vel[0]);
        assert!((p[0] - 4.0).abs() < 0.01 && p[0] < 4.0, "{p:?}");
        assert!(
            (v[0] + 3.0).abs() < 1e-5 && (v[1] - 1.0).abs() < 1e-5,
            "{v:?}"
        );
        let (p, v) = (f.pos[1], f.vel[1]);
        assert!((p[1] - 5.0).abs() < 0.01 && p[1] > 5.0, "{p:?}");
        assert!(v[1] > 0.0 && (v[1] - 3.0).abs() < 1e-5, "{v:?}");
        assert!(!s.contains(f.pos[0]) && !s.contains(f.pos[1]));
    }

    /// A fast particle that would have crossed a wall one cell thick within a step is
    /// caught at the wall's near face instead of passing through.
    #[test]
    fn a_fast_particle_cannot_tunnel_through_a_thin_wall() {
        let mut m = Mask::empty(10, 10);
        for j in 0..10 {
            m.set(5, j, true);
        }
        let s = Solids::new(&m, [10.0, 10.0]).expect("solids");
        let mut f = Fluid::with_size(10.0, 10.0);
        // From x = 3.5, 3 units in one step: it ended at 6.5, past the wall.
        f.add([6.5, 5.0], [30.0, 0.0], [1.0; 3]);
        s.collide(&mut f, 0.1, 1.0);
        assert!(f.pos[0][0] < 5.0, "stopped at the wall: {:?}", f.pos[0]);
        assert!(f.vel[0][0] < 0.0, "bounced: {:?}", f.vel[0]);
    }

    /// A liquid poured over a block comes to rest around it, never inside, and nothing is
    /// lost or NaN.
    #[test]
    fn liquid_flows_around_a_block() {
        let s = block();
        let mut f = Fluid::with_size(10.0, 10.0);
        for k in 0..400 {
            let (i, j) = (k % 20, k / 20);
            f.add(
                [3.0 + 0.2 * i as f32, 6.0 + 0.2 * j as f32],
                [0.0; 2],
                [1.0; 3],
            );
        }
        let knobs = Knobs::default();
        let dt = 1.0 / 180.0;
        for _ in 0..360 {
            f.step(&knobs, dt);
            s.collide(&mut f, dt, knobs.wall_bounce);
        }
        assert_eq!(f.len(), 400);
        let inside = f.pos.iter().filter(|p| s.contains(**p)).count();
        assert_eq!(inside, 0, "particles inside the block");
        assert!(f.pos.iter().flatten().all(|x| x.is_finite()));
        // The liquid split both ways around the block and reached the floor.
        let left = f.pos.iter().filter(|p| p[0] < 4.0 && p[1] < 5.0).count();
        let right = f.pos.iter().filter(|p| p[0] > 6.0 && p[1] < 5.0).count();
        assert!(left > 50 && right > 50, "{left} left, {right} right");
    }
}
