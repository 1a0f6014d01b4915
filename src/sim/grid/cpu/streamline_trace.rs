//! The streamlines' trace on the CPU: each line traced through the grid's velocity (seeds in
//! parallel), then drawn by the picture ([`crate::display::cpu::streamlines`]). See
//! [`crate::display::streamlines`] for the model; `shaders/streamline_trace.wgsl` mirrors the
//! trace.

use super::advect::{Flow, Grid};
use crate::display::cpu::streamlines::Strokes;
use crate::display::streamlines::{Lines, MAX_LINE};
use crate::sim::grid::particles::solid_at;
use crate::sim::obstacles::Mask;
use rayon::prelude::*;

/// Seeds per rayon task.
const CHUNK: usize = 64;

/// The streamlines' buffers, kept between frames.
#[derive(Default)]
pub struct Streamlines {
    /// Every line's vertices (canvas units), `lines.steps + 1` per seed.
    vertices: Vec<[f32; 2]>,
    /// The lines as drawn.
    strokes: Strokes,
}

impl Streamlines {
    /// Trace `lines` through the face velocities `u`, `v` of a `w x h` grid with the solids
    /// of `mask`, and draw them over `frame` (RGBA8, `lines.frame`, rows top first).
    pub fn draw(
        &mut self,
        lines: &Lines,
        grid: (usize, usize),
        u: &[f32],
        v: &[f32],
        mask: Option<&Mask>,
        frame: &mut [u8],
    ) {
        trace(lines, grid, u, v, mask, &mut self.vertices);
        self.strokes.draw(lines, &self.vertices, frame);
    }

    /// The vertices of the last lines drawn.
    pub fn vertices(&self) -> &[[f32; 2]] {
        &self.vertices
    }

    /// The codes of the last lines drawn.
    pub fn cover(&self) -> &[u32] {
        self.strokes.cover()
    }
}

/// Trace every line of `lines` (see the model) into `vertices` (resized), `steps + 1` per
/// seed, seeds in order.
pub fn trace(
    lines: &Lines,
    (w, h): (usize, usize),
    u: &[f32],
    v: &[f32],
    mask: Option<&Mask>,
    vertices: &mut Vec<[f32; 2]>,
) {
    let flow = Flow::new(Grid { w, h }, u, v);
    let per = lines.steps + 1;
    vertices.resize(lines.vertices(), [0.0; 2]);
    let n = h as f32;
    vertices
        .par_chunks_mut(per * CHUNK)
        .enumerate()
        .for_each(|(c, chunk)| {
            for (t, line) in chunk.chunks_mut(per).enumerate() {
                trace_line(lines, &flow, mask, n, c * CHUNK + t, line);
            }
        });
}

kernel! {
/// Trace seed `s` into `line` (its `steps + 1` vertices); `n`: cells per canvas height.
fn trace_line(lines: &Lines, flow: &Flow, mask: Option<&Mask>, n: f32, s: usize, line: &mut [[f32; 2]]) {
    let vel = |p: [f32; 2]| flow.at(p[0] * n - 0.5, p[1] * n - 0.5);
    let solid = |p: [f32; 2]| mask.is_some_and(|m| solid_at(m, p));
    let (h, half) = (lines.h, 0.5 * lines.h);
    let mut p = lines.seed(s);
    let mut moving = !solid(p);
    let mut length = 0.0f32;
    line[0] = p;
    for vertex in &mut line[1..] {
        if moving {
            let (vx, vy) = vel(p);
            let mid = [half.mul_add(vx, p[0]), half.mul_add(vy, p[1])];
            let (mx, my) = vel(mid);
            let q = [h.mul_add(mx, p[0]), h.mul_add(my, p[1])];
            let (dx, dy) = (q[0] - p[0], q[1] - p[1]);
            let longer = length + dx.mul_add(dx, dy * dy).sqrt();
            // False for NaN too.
            let inside = q[0] >= 0.0 && q[0] <= lines.aspect && q[1] >= 0.0 && q[1] <= 1.0;
            moving = inside && longer <= MAX_LINE && !solid(q);
            if moving {
                p = q;
                length = longer;
            }
        }
        *vertex = p;
    }
}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::display::cpu::streamlines::raster;
    use crate::display::streamlines::overlay_lines;

    /// Face velocities of a `w x h` grid: `f(x, y)` at each face's centre (canvas units).
    fn field(w: usize, h: usize, f: impl Fn(f32, f32) -> [f32; 2]) -> (Vec<f32>, Vec<f32>) {
        let n = h as f32;
        let u = (0..(w + 1) * h)
            .map(|k| f((k % (w + 1)) as f32 / n, ((k / (w + 1)) as f32 + 0.5) / n)[0])
            .collect();
        let v = (0..w * (h + 1))
            .map(|k| f(((k % w) as f32 + 0.5) / n, (k / w) as f32 / n)[1])
            .collect();
        (u, v)
    }

    /// In a uniform flow each line is straight, as long as the flow moves in the trace time,
    /// and every segment is drawn in the same colour.
    #[test]
    fn uniform_flow_draws_straight_lines_of_its_length() {
        let (w, h) = (32, 16);
        let (u, v) = field(w, h, |_, _| [0.25, 0.0]);
        let l = overlay_lines(4, 8, 0.4, (w, h), (320, 160));
        let mut verts = Vec::new();
        trace(&l, (w, h), &u, &v, None, &mut verts);
        for (s, line) in verts.chunks(9).enumerate() {
            let seed = l.seed(s);
            for (k, p) in line.iter().enumerate() {
                let x = seed[0] + 0.25 * 0.05 * k as f32;
                assert!((p[0] - x).abs() < 1e-5 && p[1] == seed[1], "{s} {k}: {p:?}");
            }
        }
        // A line that would cross the right wall stops at its last vertex inside.
        let (u, v) = field(w, h, |_, _| [4.0, 0.0]);
        trace(&l, (w, h), &u, &v, None, &mut verts);
        let last = verts.chunks(9).last().unwrap();
        assert!(last.iter().all(|p| p[0] <= 2.0));
        assert_eq!(last[8], last[1], "{last:?}");
        // Steps of 0.2: a line stops before it grows longer than MAX_LINE (0.5).
        let first = &verts[..9];
        assert!((first[2][0] - first[0][0] - 0.4).abs() < 1e-5, "{first:?}");
        assert!(first[3..].iter().all(|&p| p == first[2]), "{first:?}");
    }

    /// A solid-body rotation: the midpoint rule keeps every vertex on its seed's circle to
    /// within its local error (h^3 w^3 r / 6 per step grows the radius by r (h w)^4 / 8 per
    /// step at most, here below 1e-4 of r) plus the bilinear samples' exactness (the field
    /// is linear, so they are exact).
    #[test]
    fn rotation_stays_on_circles() {
        let (w, h) = (64, 64);
        let c = 0.5;
        let (u, v) = field(w, h, |x, y| [-(y - c), x - c]);
        let l = overlay_lines(8, 32, 0.8, (w, h), (256, 256));
        let mut verts = Vec::new();
        trace(&l, (w, h), &u, &v, None, &mut verts);
        let r = |p: &[f32; 2]| ((p[0] - c).powi(2) + (p[1] - c).powi(2)).sqrt();
        let mut moved = 0;
        for line in verts.chunks(33) {
            let r0 = r(&line[0]);
            for p in line {
                assert!(
                    (r(p) - r0).abs() < 1e-4 * r0.max(0.1) + 2e-6,
                    "{r0} {}",
                    r(p)
                );
            }
            if line[32] != line[0] {
                moved += 1;
            }
        }
        assert_eq!(moved, l.seeds());
    }

    /// No vertex is ever inside a solid, and a seed in a solid draws nothing.
    #[test]
    fn lines_stop_at_solids() {
        use crate::sim::obstacles::Layout;
        let (w, h) = (48, 24);
        let mask = Mask::layout(Layout::Pillars, w, h);
        let (u, v) = field(w, h, |x, y| [1.0 + (7.0 * y).sin(), (5.0 * x).cos()]);
        let l = overlay_lines(24, 16, 0.5, (w, h), (480, 240));
        let mut verts = Vec::new();
        trace(&l, (w, h), &u, &v, Some(&mask), &mut verts);
        let mut stopped = 0;
        for (s, line) in verts.chunks(17).enumerate() {
            if solid_at(&mask, l.seed(s)) {
                assert!(line.iter().all(|&p| p == l.seed(s)));
                continue;
            }
            assert!(line.iter().all(|&p| !solid_at(&mask, p)), "{s}");
            stopped += usize::from(line[16] == line[15]);
        }
        assert!(stopped > 5, "some lines ran into the pillars: {stopped}");
    }

    /// A flowing field's lines cover many pixels; a still fluid's draw nothing.
    #[test]
    fn a_flow_draws_lines_and_a_still_fluid_none() {
        let (w, h) = (40, 30);
        let (u, v) = field(w, h, |x, y| [(3.0 * y).sin(), (4.0 * x).cos() * 0.5]);
        let l = overlay_lines(20, 12, 0.6, (w, h), (123, 91));
        let mut verts = Vec::new();
        trace(&l, (w, h), &u, &v, None, &mut verts);
        let mut cover = Vec::new();
        raster(&l, &verts, &mut cover);
        assert!(cover.iter().filter(|&&c| c != 0).count() > 1000);
        let zeros = (vec![0.0; (w + 1) * h], vec![0.0; w * (h + 1)]);
        trace(&l, (w, h), &zeros.0, &zeros.1, None, &mut verts);
        raster(&l, &verts, &mut cover);
        assert!(cover.iter().all(|&c| c == 0));
    }
}
