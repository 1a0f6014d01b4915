//! The streamlines drawn on the CPU: a model's traced lines rasterised into a code per pixel
//! (bands of rows per thread, no atomics) and composited over the finished frame. See
//! [`crate::display::streamlines`] for the model; `shaders/streamlines.wgsl` mirrors it.

use crate::display::streamlines::{Lines, PIECE_PX, code, coverage, decode, distance2, ramp};
use crate::kernels::math::blend8;
use rayon::prelude::*;

/// The codes of the lines drawn, kept between frames.
#[derive(Default)]
pub struct Strokes {
    /// A code per pixel of the frame (rows top first).
    cover: Vec<u32>,
}

impl Strokes {
    /// Draw the lines of `vertices` (canvas units, `lines.steps + 1` per seed, seeds in
    /// order) over `frame` (RGBA8, `lines.frame`, rows top first).
    pub fn draw(&mut self, lines: &Lines, vertices: &[[f32; 2]], frame: &mut [u8]) {
        raster(lines, vertices, &mut self.cover);
        composite(lines, &self.cover, frame);
    }

    /// The codes of the last lines drawn.
    pub fn cover(&self) -> &[u32] {
        &self.cover
    }
}

/// Rasterise the lines of `vertices` into `cover` (a code per pixel of `lines.frame`, rows
/// top first; resized and cleared): each pixel keeps the largest code of the segments over it.
/// The frame is cut into one band of rows per thread; each thread draws every segment's
/// pixels in its band.
pub fn raster(lines: &Lines, vertices: &[[f32; 2]], cover: &mut Vec<u32>) {
    let (width, height) = lines.frame;
    cover.resize(width * height, 0);
    let bands = rayon::current_num_threads().clamp(1, height.max(1));
    let rows = height.div_ceil(bands).max(1);
    cover
        .par_chunks_mut(width * rows)
        .enumerate()
        .for_each(|(b, band)| {
            band.fill(0);
            let first = b * rows;
            let last = first + band.len() / width;
            raster_band(lines, vertices, (first, last), band);
        });
}

kernel! {
/// Draw the segments' pixels in rows `first..last` into `band` (see [`raster`]).
fn raster_band(lines: &Lines, vertices: &[[f32; 2]], (first, last): (usize, usize), band: &mut [u32]) {
    let (width, height) = lines.frame;
    let half = lines.half;
    let reach = half + 0.5;
    let (top, bottom) = (first as f32 - reach, last as f32 + reach);
    for line in vertices.chunks_exact(lines.steps + 1) {
        for (k, ends) in line.windows(2).enumerate() {
            let (a, b) = (lines.to_pixels(ends[0]), lines.to_pixels(ends[1]));
            if a[1].max(b[1]) < top || a[1].min(b[1]) > bottom {
                continue;
            }
            let Some((alpha, t)) = lines.segment(k, ends[0], ends[1]) else {
                continue;
            };
            for_each_run(a, b, reach, (width, height), (first, last), |j, i0, i1| {
                // Branch-free over the run, so it compiles to vector code (a pixel beyond
                // the line's reach gets coverage 0, code 0, and keeps its value).
                let py = j as f32 + 0.5;
                let row = &mut band[(j - first) * width..][i0..i1];
                for (n, px) in row.iter_mut().enumerate() {
                    let centre = [(i0 + n) as f32 + 0.5, py];
                    let d = distance2(centre, a, b).sqrt();
                    *px = (*px).max(code(alpha * coverage(d, half), t));
                }
            });
        }
    }
}
}

/// Call `f(j, i0, i1)` for the pixels `i0..i1` of each row `j` of rows `rows` of a `width x
/// height` frame whose centres may lie within `reach` of the segment `a`..`b` (pixel space):
/// the boxes around its pieces of at most [`PIECE_PX`] (a pixel may come up twice, where
/// boxes meet).
#[inline(always)]
pub fn for_each_run(
    a: [f32; 2],
    b: [f32; 2],
    reach: f32,
    (width, height): (usize, usize),
    (first, last): (usize, usize),
    mut f: impl FnMut(usize, usize, usize),
) {
    let (ex, ey) = (b[0] - a[0], b[1] - a[1]);
    let len = ex.mul_add(ex, ey * ey).sqrt();
    let pieces = (len / PIECE_PX).ceil().max(1.0) as usize;
    let last = last.min(height);
    for p in 0..pieces {
        let (s0, s1) = (p as f32 / pieces as f32, (p + 1) as f32 / pieces as f32);
        let (x0, x1) = (s0.mul_add(ex, a[0]), s1.mul_add(ex, a[0]));
        let (y0, y1) = (s0.mul_add(ey, a[1]), s1.mul_add(ey, a[1]));
        // Pixels whose centres (i + 0.5) lie within `reach` of the piece's box.
        let span = |lo: f32, hi: f32, n: usize| {
            let i0 = (lo - reach - 0.5).ceil().max(0.0) as usize;
            let i1 = ((hi + reach - 0.5).floor().min(n as f32 - 1.0)).max(-1.0);
            (i0, (i1 + 1.0) as usize)
        };
        let (i0, i1) = span(x0.min(x1), x0.max(x1), width);
        let (j0, j1) = span(y0.min(y1), y0.max(y1), height);
        if i0 < i1 {
            for j in j0.max(first)..j1.min(last) {
                f(j, i0, i1);
            }
        }
    }
}

/// Blend the lines' colours of `cover` over `frame` (RGBA8, rows top first) by their
/// opacity; alone, over black (every pixel written, opaque).
pub fn composite(lines: &Lines, cover: &[u32], frame: &mut [u8]) {
    let width = lines.frame.0;
    assert_eq!(frame.len(), cover.len() * 4, "frame buffer size");
    frame
        .par_chunks_mut(width * 4)
        .zip(cover.par_chunks(width))
        .for_each(|(row, codes)| {
            for (px, &c) in row.chunks_exact_mut(4).zip(codes) {
                if lines.alone {
                    px.copy_from_slice(&[0, 0, 0, 255]);
                }
                if c != 0 {
                    let (alpha, t) = decode(c);
                    let rgb = ramp(t);
                    for (p, c) in px[..3].iter_mut().zip(rgb) {
                        *p = blend8(*p, c, alpha);
                    }
                }
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::display::streamlines::{
        ALPHA_LEVELS, LINE_HALF_PX, TAIL_ALPHA, fade, overlay_lines, speed_t,
    };

    /// A horizontal line through pixel centres draws a band of full coverage one pixel tall
    /// and the anti-aliased rows beside it at the coverage the model gives; its colour is the
    /// ramp's at its speed and its opacity rises from the seed to the head.
    #[test]
    fn a_line_is_drawn_anti_aliased_in_its_speed_colour() {
        let frame = (64, 64);
        let l = overlay_lines(4, 4, 1.0, (8, 8), frame);
        // One line from (8.5, 20.5) px to (56.5, 20.5) px, in four segments of 12 px.
        let y = 1.0 - 20.5 / 64.0;
        let verts: Vec<[f32; 2]> = (0..5)
            .map(|k| [(8.5 + 12.0 * k as f32) / 64.0, y])
            .chain(std::iter::repeat_n([0.5, 0.5], 5 * (l.seeds() - 1)))
            .collect();
        let mut cover = Vec::new();
        raster(&l, &verts, &mut cover);
        let speed = 12.0 / 64.0 / l.h;
        let t = speed_t(speed);
        let at = |i: usize, j: usize| decode(cover[j * 64 + i]);
        let half = l.half;
        assert_eq!(half, (LINE_HALF_PX * 64.0 / 720.0).max(0.5));
        // The head's segment (k = 3) is opaque on its centre row.
        let (a, tt) = at(50, 20);
        assert_eq!(a, 1.0);
        assert!((tt - t).abs() <= 0.5 / 4095.0);
        // The rows beside: 1 px away, coverage half - 0.5 (0 for the thinnest line).
        let side = coverage(1.0, half);
        assert!((at(50, 19).0 - side).abs() <= 0.5 / ALPHA_LEVELS);
        assert!((at(50, 21).0 - side).abs() <= 0.5 / ALPHA_LEVELS);
        assert_eq!(at(50, 23).0, 0.0);
        // The seed's segment is dimmer; before the seed and past the head, nothing.
        assert!((at(12, 20).0 - fade(0, 4)).abs() <= 0.5 / ALPHA_LEVELS);
        assert!(fade(0, 4) > TAIL_ALPHA);
        assert_eq!(at(7, 20).0, 0.0);
        assert_eq!(at(58, 20).0, 0.0);
        // The line ends at its head's pixel centre; a pixel further, the capsule's coverage.
        assert_eq!(at(56, 20).0, 1.0);
        assert!((at(57, 20).0 - coverage(1.0, half)).abs() <= 0.5 / ALPHA_LEVELS);

        // Over a grey frame, the head's pixel takes the ramp's colour.
        let mut out = [60u8, 60, 60, 255].repeat(64 * 64);
        composite(&l, &cover, &mut out);
        let rgb = ramp(tt);
        let p = &out[4 * (20 * 64 + 50)..][..4];
        assert_eq!(
            p,
            [0, 1, 2]
                .map(|c| (rgb[c] + 0.5) as u8)
                .iter()
                .chain(&[255])
                .copied()
                .collect::<Vec<_>>()
        );
        assert_eq!(
            &out[..4],
            &[60, 60, 60, 255],
            "untouched away from the line"
        );
        // Alone, the rest is black.
        let alone = Lines { alone: true, ..l };
        let mut out = [60u8, 60, 60, 255].repeat(64 * 64);
        composite(&alone, &cover, &mut out);
        assert_eq!(&out[..4], &[0, 0, 0, 255]);
        assert_eq!(out[4 * (20 * 64 + 50)..][..3], p[..3]);
    }

    /// The bands of a threaded raster draw what one band draws (and lines that do not move
    /// draw nothing).
    #[test]
    fn bands_agree_and_still_lines_draw_nothing() {
        let l = overlay_lines(20, 12, 0.6, (40, 30), (123, 91));
        // Curving lines from every seed, crossing one another and the frame's edges.
        let verts: Vec<[f32; 2]> = (0..l.seeds())
            .flat_map(|s| {
                let p = l.seed(s);
                (0..=l.steps).map(move |k| {
                    let t = k as f32 * 0.02;
                    [p[0] + t * (3.0 * p[1]).sin(), p[1] + t * (4.0 * p[0]).cos()]
                })
            })
            .collect();
        let mut threaded = Vec::new();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        pool.install(|| raster(&l, &verts, &mut threaded));
        let mut one = vec![0; 123 * 91];
        raster_band(&l, &verts, (0, 91), &mut one);
        assert_eq!(threaded, one);
        assert!(one.iter().filter(|&&c| c != 0).count() > 1000);
        let still: Vec<[f32; 2]> = (0..l.seeds())
            .flat_map(|s| std::iter::repeat_n(l.seed(s), l.steps + 1))
            .collect();
        raster(&l, &still, &mut threaded);
        assert!(threaded.iter().all(|&c| c == 0));
    }
}
