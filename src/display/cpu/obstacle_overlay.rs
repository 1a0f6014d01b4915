//! Obstacle overlay: the solid cells drawn over the finished RGBA8 frame (after colorize and
//! the tone pass, in both tone modes), filled or outlined ([`ObstacleStyle`]).
//!
//! Its own pass on the frame, so the picture stage before it knows nothing of obstacles.
//! Mirrored by `shaders/obstacle_overlay.wgsl` (`display::gpu::obstacle_overlay`), operation for
//! operation.
//!
//! The mask (1 solid, 0 fluid, at cell centres) is sampled bilinearly at each pixel centre,
//! with the frame stretched over the grid as colorize does (edges clamp). Its 0.5 level is the
//! boundary: exactly on the faces between a solid and a fluid cell, and rounded at corners
//! (marching squares), so a coarse grid does not draw staircases. `d = (s - 0.5) * k`, with `k`
//! the pixels per cell, is about the signed distance to the boundary in pixels (inside
//! positive), which gives a one-pixel anti-aliased edge:
//! - fill: coverage `clamp(d + 0.5, 0, 1)` of [`OBSTACLE_FILL_RGB8`];
//! - outline: a band `2 t` pixels wide centred on the boundary, coverage
//!   `clamp(t + 0.5 - |d|, 0, 1)` of [`OBSTACLE_OUTLINE_RGB8`].
//!
//! `k` is at least `2 t + 1`, so a pixel whose four samples are all fluid (or all solid) gets
//! no outline, and a pixel whose samples are all fluid is never touched (the pass skips the
//! rows that see no solid).

use crate::fluid::mask::Mask;
use crate::fluid::{OBSTACLE_FILL_RGB8, OBSTACLE_OUTLINE_RGB8, ObstacleStyle};
use crate::kernels::math::blend8;
use rayon::prelude::*;

/// Half the outline's width in pixels on a frame [`OUTLINE_REFERENCE_HEIGHT_PX`] tall; it
/// scales with the frame's height (at least [`OUTLINE_MIN_HALF_PX`]), so the outline looks
/// the same in the editor and in a 4K render.
pub const OUTLINE_HALF_PX: f32 = 1.0;
/// The frame height at which the outline is `2 * OUTLINE_HALF_PX` pixels wide.
pub const OUTLINE_REFERENCE_HEIGHT_PX: f32 = 720.0;
/// The thinnest outline, half width in pixels.
pub const OUTLINE_MIN_HALF_PX: f32 = 0.75;

/// What the pass computes once per frame: the style as a number, the outline's half width
/// and the pixels per cell (`style`: 0 fill, 1 outline; mirrored by the WGSL uniform).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OverlayShape {
    /// 0: fill, 1: outline.
    pub outline: bool,
    /// Half the outline's width, pixels.
    pub half: f32,
    /// Pixels per cell (at least `2 half + 1`).
    pub k: f32,
}

impl OverlayShape {
    /// For a `grid` (cells) drawn into a `frame` (pixels); `None` for [`ObstacleStyle::Hidden`].
    pub fn new(style: ObstacleStyle, grid: (usize, usize), frame: (usize, usize)) -> Option<Self> {
        let outline = match style {
            ObstacleStyle::Fill => false,
            ObstacleStyle::Outline => true,
            ObstacleStyle::Hidden => return None,
        };
        let half = (OUTLINE_HALF_PX * frame.1 as f32 / OUTLINE_REFERENCE_HEIGHT_PX)
            .max(OUTLINE_MIN_HALF_PX);
        let kx = frame.0 as f32 / grid.0.max(1) as f32;
        let ky = frame.1 as f32 / grid.1.max(1) as f32;
        let k = kx.min(ky).max(2.0 * half + 1.0);
        Some(Self { outline, half, k })
    }

    /// The overlay's coverage of a pixel whose bilinear mask sample is `s`.
    #[inline(always)]
    pub fn coverage(&self, s: f32) -> f32 {
        let d = (s - 0.5) * self.k;
        if self.outline {
            (self.half + 0.5 - d.abs()).clamp(0.0, 1.0)
        } else {
            (d + 0.5).clamp(0.0, 1.0)
        }
    }

    /// The colour drawn.
    pub fn rgb(&self) -> [u8; 3] {
        if self.outline {
            OBSTACLE_OUTLINE_RGB8
        } else {
            OBSTACLE_FILL_RGB8
        }
    }
}

/// Sample position of output pixel `p` of `out_n` on an axis of `src_n` cells (colorize's
/// taps: pixel centres, cell centres, clamped): the two cells and the weight of the second.
#[inline(always)]
fn tap(p: usize, out_n: usize, src_n: usize) -> (usize, usize, f32) {
    let x = ((p as f32 + 0.5) * src_n as f32 / out_n as f32 - 0.5)
        .max(0.0)
        .min((src_n - 1) as f32);
    let i0 = x as usize;
    (i0, (i0 + 1).min(src_n - 1), x - i0 as f32)
}

/// Draw `mask`'s solids over `frame` (`width x height` RGBA8, rows top first) in `style`.
/// Nothing changes for [`ObstacleStyle::Hidden`] or an empty mask.
pub fn draw(mask: &Mask, style: ObstacleStyle, frame: &mut [u8], width: usize, height: usize) {
    assert_eq!(frame.len(), width * height * 4, "frame buffer size");
    let (w, h) = (mask.width(), mask.height());
    let Some(shape) = OverlayShape::new(style, (w, h), (width, height)) else {
        return;
    };
    if mask.is_empty() || width == 0 || height == 0 {
        return;
    }
    let cells = mask.cells();
    // Grid rows with any solid: an output row that samples none of them is left alone.
    let solid_rows: Vec<bool> = cells.chunks_exact(w).map(|r| r.contains(&true)).collect();
    let columns: Vec<(usize, usize, f32)> = (0..width).map(|px| tap(px, width, w)).collect();
    frame
        .par_chunks_mut(width * 4)
        .enumerate()
        .for_each(|(py, row)| {
            // Rows top first; the grid's row 0 is the bottom.
            let (j0, j1, fy) = tap(height - 1 - py, height, h);
            if !(solid_rows[j0] || solid_rows[j1]) {
                return;
            }
            let grid_rows = [&cells[j0 * w..][..w], &cells[j1 * w..][..w]];
            draw_row(row, grid_rows, fy, &columns, &shape);
        });
}

kernel! {
/// One frame row between the mask's rows `grid_rows` (lower, upper; weight `fy` on the
/// upper), sampled at `columns`. A kernel so that its multiply-adds are instructions, not
/// calls to libm's `fmaf` (the same values).
fn draw_row(row: &mut [u8], grid_rows: [&[bool]; 2], fy: f32, columns: &[(usize, usize, f32)], shape: &OverlayShape) {
    let rgb = shape.rgb();
    let [lower, upper] = grid_rows;
    let value = |r: &[bool], i: usize| f32::from(u8::from(r[i]));
    for (px, &(i0, i1, fx)) in columns.iter().enumerate() {
        let bottom = fx.mul_add(value(lower, i1) - value(lower, i0), value(lower, i0));
        let top = fx.mul_add(value(upper, i1) - value(upper, i0), value(upper, i0));
        let s = fy.mul_add(top - bottom, bottom);
        let a = shape.coverage(s);
        if a > 0.0 {
            let p = &mut row[4 * px..4 * px + 3];
            for c in 0..3 {
                p[c] = blend8(p[c], f32::from(rgb[c]), a);
            }
        }
    }
}
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `w x h` grid whose left `solid_cols` columns are solid.
    fn left_wall(w: usize, h: usize, solid_cols: usize) -> Mask {
        let mut m = Mask::empty(w, h);
        for j in 0..h {
            for i in 0..solid_cols {
                m.set(i, j, true);
            }
        }
        m
    }

    fn frame(w: usize, h: usize, grey: u8) -> Vec<u8> {
        [grey, grey, grey, 255].repeat(w * h)
    }

    fn pixel(f: &[u8], w: usize, x: usize, y: usize) -> [u8; 4] {
        let i = 4 * (y * w + x);
        [f[i], f[i + 1], f[i + 2], f[i + 3]]
    }

    /// 8 x 4 cells, the left 4 solid, drawn at 4 pixels per cell (32 x 16): the boundary is
    /// the face at x = 16 pixels. Pixel 15's centre is 0.5 px inside: s = 0.5 + 0.5 / 4 =
    /// 0.625, d = 0.125 * 4 = 0.5, coverage 1; pixel 16 is 0.5 px outside, coverage 0. So the
    /// fill is exact on the face, and the pixels away from it are fill or untouched.
    #[test]
    fn fill_covers_the_solid_cells_up_to_their_faces() {
        let mask = left_wall(8, 4, 4);
        let (w, h) = (32, 16);
        let mut f = frame(w, h, 10);
        draw(&mask, ObstacleStyle::Fill, &mut f, w, h);
        let [r, g, b] = OBSTACLE_FILL_RGB8;
        for y in 0..h {
            for x in 0..w {
                let want = if x < 16 {
                    [r, g, b, 255]
                } else {
                    [10, 10, 10, 255]
                };
                assert_eq!(pixel(&f, w, x, y), want, "({x}, {y})");
            }
        }
    }

    /// At 8 pixels per cell a pixel straddling the boundary is blended: pixel 31 of a 64-wide
    /// frame over 8 cells sits 0.5 px inside the face at 32 (coverage 1), and the outline
    /// (half width 0.75 at 16 px tall... here k = 8 >= 2.5) is centred on the face.
    #[test]
    fn outline_is_a_band_on_the_boundary() {
        let mask = left_wall(8, 2, 4);
        let (w, h) = (64, 16);
        let mut f = frame(w, h, 0);
        draw(&mask, ObstacleStyle::Outline, &mut f, w, h);
        let shape = OverlayShape::new(ObstacleStyle::Outline, (8, 2), (w, h)).unwrap();
        assert_eq!(shape.half, OUTLINE_MIN_HALF_PX);
        let lit: Vec<usize> = (0..w).filter(|&x| pixel(&f, w, x, 8)[0] > 0).collect();
        // |d| = 0.5 at pixels 31 and 32: coverage 0.75 + 0.5 - 0.5 = 0.75; 1.5 at 30 and 33:
        // coverage 0.
        assert_eq!(lit, vec![31, 32]);
        let level = blend8(0, f32::from(OBSTACLE_OUTLINE_RGB8[0]), 0.75);
        assert_eq!(pixel(&f, w, 31, 8)[0], level);
        assert_eq!(
            pixel(&f, w, 0, 8),
            [0, 0, 0, 255],
            "inside stays the fluid's"
        );
    }

    #[test]
    fn hidden_and_empty_masks_draw_nothing() {
        let (w, h) = (40, 20);
        let before = frame(w, h, 77);
        let mut f = before.clone();
        draw(&left_wall(8, 4, 4), ObstacleStyle::Hidden, &mut f, w, h);
        assert_eq!(f, before);
        draw(&Mask::empty(8, 4), ObstacleStyle::Fill, &mut f, w, h);
        assert_eq!(f, before);
    }

    /// A lone solid cell on a coarse grid draws as a rounded blob, not a square: the corner
    /// pixels of its square stay untouched while its centre is filled.
    #[test]
    fn lone_cells_are_rounded() {
        let mut mask = Mask::empty(5, 5);
        mask.set(2, 2, true);
        let (w, h) = (50, 50);
        let mut f = frame(w, h, 0);
        draw(&mask, ObstacleStyle::Fill, &mut f, w, h);
        assert_eq!(pixel(&f, w, 25, 25)[0], OBSTACLE_FILL_RGB8[0]);
        // The cell spans pixels 20..30; its corner (20, 20) is outside the rounded shape.
        assert_eq!(pixel(&f, w, 20, 20)[0], 0);
    }
}
