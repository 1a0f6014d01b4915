//! Streamlines (PixelFlow's flow lines): curves traced through the current velocity from a
//! regular grid of seeds, drawn anti-aliased over the finished frame (or alone, on black) and
//! coloured by speed. A picture layer: they read the velocity a frame shows and change
//! nothing in the fluid.
//!
//! The definition every side shares, so that they draw the same lines: the seeds, the line's
//! shape and colours, and the per-pixel code both rasterisers keep. A model with a velocity
//! field traces the lines (the grid fluid: `sim/grid/cpu/streamline_trace.rs` and
//! `shaders/streamline_trace.wgsl`, by the rule below); the picture draws them
//! (`display/cpu/streamlines.rs` and `shaders/streamlines.wgsl`), operation for operation
//! alike on the CPU and the GPU.
//!
//! # Model
//! - Seeds: `rows` rows (the look's density) of `cols = round(rows * aspect)` seeds, at the
//!   centres of a regular grid over the canvas (x right in `[0, aspect]`, y up in `[0, 1]`).
//! - Trace: `steps` midpoint (RK2) steps of `h = length / steps` seconds each through the
//!   staggered velocity, as the particles move: `p' = p + h v(p + h/2 v(p))`. A line stops at
//!   the vertex before a step that would leave the canvas, end in a solid cell, go non-finite
//!   or make the line longer than [`MAX_LINE`] (its remaining vertices repeat that one); a
//!   seed inside a solid draws nothing. So a line
//!   is as long as the fluid moves in `length` seconds: still water shows none, fast flow long
//!   strokes, and the length reads as speed as well as the colour does.
//! - Shape: each segment is a capsule of half width [`LINE_HALF_PX`] (scaled with the frame's
//!   height) with a one-pixel anti-aliased edge: a pixel's coverage is
//!   `clamp(half + 0.5 - d, 0, 1)` for its centre's distance `d` to the segment.
//! - Colour and opacity: segment `k` of `steps` has opacity `fade(k) * min(speed /
//!   FADE_SPEED, 1)` (rising linearly from [`TAIL_ALPHA`] at the seed to 1 at the last step's
//!   segment, so a line shows which way the fluid goes, and fading out below [`FADE_SPEED`]) and the colour of the speed ramp
//!   [`RAMP`] at `t = speed / (speed + HALF_SPEED)`, with `speed` the segment's length over
//!   `h` (canvas heights per second).
//! - Rasteriser: every pixel keeps the largest [`code`] of the segments over it (the opacity
//!   in the high bits, the speed in the low ones). A maximum does not depend on the order, so
//!   the CPU (bands of rows per thread) and the GPU (`atomicMax`, a thread per segment) agree
//!   for the same vertices, and overlapping lines never add up to a blown-out blob: the most
//!   visible one wins, as opaque strokes painted over each other would.
//! - Composite: each pixel with a code blends the ramp's colour over the frame's 8-bit value
//!   by its opacity (round to nearest); alone, over black.
//!
//! # Why compute, in three passes
//! PixelFlow keeps one vertex per line in VRAM and alternates drawing a segment and moving the
//! vertex, `steps` times (2 x steps render passes). Here the frame is a storage buffer in a
//! chain of compute passes, with no render target and no line rasteriser (wgpu draws neither
//! wide nor anti-aliased lines), so the lines take three dispatches whatever `steps` is: trace
//! (a thread per seed, the whole curve in registers, its vertices written once), draw (a
//! thread per segment, `atomicMax` of the code into a frame-sized buffer) and composite (a
//! thread per pixel). A few thousand seeds make a few hundred kilobytes of vertices; the
//! alternating scheme would cost `2 x steps` barriers for the same work.

use crate::fluid::StreamlineMode;

pub use crate::fluid::StreamlineLook;
pub use crate::fluid::streamline_range::*;
/// Most seeds of a frame (a very wide canvas gets fewer rows).
pub const MAX_SEEDS: usize = 1 << 16;
/// Half a line's width in pixels on a frame [`LINE_REFERENCE_HEIGHT_PX`] tall; it scales
/// with the frame's height (at least [`LINE_MIN_HALF_PX`]), so lines look the same in the
/// editor and in a 4K render.
pub const LINE_HALF_PX: f32 = 0.6;
/// The frame height at which a line's half width is [`LINE_HALF_PX`].
pub const LINE_REFERENCE_HEIGHT_PX: f32 = 720.0;
/// The thinnest line, half width in pixels.
pub const LINE_MIN_HALF_PX: f32 = 0.5;
/// Opacity of a line at its seed (1 at its head).
pub const TAIL_ALPHA: f32 = 0.25;
/// Speed (canvas heights per second) under which a segment fades out, linearly to 0 at rest.
pub const FADE_SPEED: f32 = 0.02;
/// Speed under which every line is under half an 8-bit level over black (its opacity,
/// `speed / FADE_SPEED` at most, times the brightest ramp channel, 250): the picture of a
/// slower flow no longer changes.
pub const INVISIBLE_SPEED: f32 = FADE_SPEED * 0.5 / 255.0;
/// Longest line, canvas heights: a line stops before a step that would take it further (a
/// longer one is no longer readable as a stroke, and this bounds what a frame of very fast
/// flow and a long trace costs to draw).
pub const MAX_LINE: f32 = 0.5;
/// Speed (canvas heights per second) at the middle of the ramp.
pub const HALF_SPEED: f32 = 0.3;
/// The speed ramp, 8-bit sRGB, evenly spaced from slow (first) to fast (last): deep blue,
/// azure, spring green, amber, red. A turbo-like ramp: every step is a change of hue, so
/// speeds read apart over dye of any colour.
pub const RAMP: [[u8; 3]; 5] = [
    [48, 64, 200],
    [24, 170, 240],
    [70, 235, 140],
    [250, 200, 40],
    [240, 60, 40],
];
/// The largest quantised opacity (high 16 bits of a code) and speed (low 16 bits): 0 to 4095.
pub const ALPHA_LEVELS: f32 = 4095.0;
pub const SPEED_LEVELS: f32 = 4095.0;
/// Longest piece of a segment the rasteriser covers with one box of pixels: a long segment
/// is cut into pieces, so its cost grows with its length, not with its bounding box.
pub const PIECE_PX: f32 = 4.0;

/// A frame's streamlines: the seed grid, the trace and the line's size, for a canvas of a
/// grid's aspect drawn into a frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lines {
    /// Seeds across and up.
    pub cols: usize,
    pub rows: usize,
    /// Trace steps per line (vertices per line: `steps + 1`).
    pub steps: usize,
    /// Seconds per step.
    pub h: f32,
    /// Canvas width over height.
    pub aspect: f32,
    /// The frame, pixels.
    pub frame: (usize, usize),
    /// Half a line's width, pixels.
    pub half: f32,
    /// Whether the lines are drawn alone (on black) rather than over the picture.
    pub alone: bool,
}

impl Lines {
    /// The lines of `look` over a `grid` (cells) drawn into a `frame` (pixels); `None` when
    /// they are off or the frame is empty.
    pub fn new(look: &StreamlineLook, grid: (usize, usize), frame: (usize, usize)) -> Option<Self> {
        let look = look.sanitized();
        let alone = match look.mode {
            StreamlineMode::Off => return None,
            StreamlineMode::Overlay => false,
            StreamlineMode::Alone => true,
        };
        if frame.0 == 0 || frame.1 == 0 || grid.0 == 0 || grid.1 == 0 {
            return None;
        }
        let aspect = grid.0 as f32 / grid.1 as f32;
        let cols_for = |rows: usize| ((rows as f32 * aspect).round() as usize).max(1);
        let mut rows = look.density as usize;
        // (One row of a canvas wider than MAX_SEEDS cells may hold more: grids are at most
        // 8192 wide.)
        while rows > 1 && rows * cols_for(rows) > MAX_SEEDS {
            rows -= 1;
        }
        let half = (LINE_HALF_PX * frame.1 as f32 / LINE_REFERENCE_HEIGHT_PX).max(LINE_MIN_HALF_PX);
        Some(Self {
            cols: cols_for(rows),
            rows,
            steps: look.steps as usize,
            h: look.length / look.steps as f32,
            aspect,
            frame,
            half,
            alone,
        })
    }

    /// Number of seeds (lines).
    pub fn seeds(&self) -> usize {
        self.cols * self.rows
    }

    /// Number of vertices of all lines.
    pub fn vertices(&self) -> usize {
        self.seeds() * (self.steps + 1)
    }

    /// Seed `s` (row-major from the bottom row), canvas units.
    #[inline(always)]
    pub fn seed(&self, s: usize) -> [f32; 2] {
        let (i, j) = (s % self.cols, s / self.cols);
        [
            (i as f32 + 0.5) * self.aspect / self.cols as f32,
            (j as f32 + 0.5) / self.rows as f32,
        ]
    }

    /// Pixels per canvas unit, across and up.
    #[inline(always)]
    pub fn scale(&self) -> (f32, f32) {
        (self.frame.0 as f32 / self.aspect, self.frame.1 as f32)
    }

    /// Canvas point `p` in pixel space (x right, y down, pixel `(i, j)`'s centre at
    /// `(i + 0.5, j + 0.5)`).
    #[inline(always)]
    pub fn to_pixels(&self, p: [f32; 2]) -> [f32; 2] {
        let (sx, sy) = self.scale();
        [p[0] * sx, (1.0 - p[1]) * sy]
    }

    /// The opacity and speed position of segment `k` from `a` to `b` (canvas units); `None`
    /// when it is not drawn (no move).
    #[inline(always)]
    pub fn segment(&self, k: usize, a: [f32; 2], b: [f32; 2]) -> Option<(f32, f32)> {
        let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
        let speed = dx.mul_add(dx, dy * dy).sqrt() / self.h;
        let alpha = fade(k, self.steps) * (speed / FADE_SPEED).min(1.0);
        (alpha > 0.0).then(|| (alpha, speed_t(speed)))
    }
}

/// Opacity of segment `k` of `steps`, `TAIL_ALPHA + (1 - TAIL_ALPHA) (k + 1) / steps`:
/// rising linearly from the seed (where it would be [`TAIL_ALPHA`]) to 1 at the last step's
/// segment.
#[inline(always)]
pub fn fade(k: usize, steps: usize) -> f32 {
    let f = (k + 1) as f32 / steps as f32;
    f.mul_add(1.0 - TAIL_ALPHA, TAIL_ALPHA)
}

/// Position of `speed` on the ramp, in `[0, 1)`.
#[inline(always)]
pub fn speed_t(speed: f32) -> f32 {
    speed / (speed + HALF_SPEED)
}

/// A pixel's coverage by a line of half width `half` whose centre line is `d` pixels away.
#[inline(always)]
pub fn coverage(d: f32, half: f32) -> f32 {
    (half + 0.5 - d).clamp(0.0, 1.0)
}

/// Distance from `p` to the segment `a`..`b` (pixels).
#[inline(always)]
pub fn distance(p: [f32; 2], a: [f32; 2], b: [f32; 2]) -> f32 {
    distance2(p, a, b).sqrt()
}

/// The square of [`distance`]: a pixel whose square is at least `reach²` is not covered.
#[inline(always)]
pub fn distance2(p: [f32; 2], a: [f32; 2], b: [f32; 2]) -> f32 {
    let (ex, ey) = (b[0] - a[0], b[1] - a[1]);
    let (px, py) = (p[0] - a[0], p[1] - a[1]);
    let len2 = ex.mul_add(ex, ey * ey);
    let t = if len2 > 0.0 {
        (px.mul_add(ex, py * ey) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (qx, qy) = (t.mul_add(-ex, px), t.mul_add(-ey, py));
    qx.mul_add(qx, qy * qy)
}

/// A pixel's code: opacity `alpha` (0..1) in the high 16 bits, speed position `t` (0..1) in
/// the low 16, each quantised to 0..=4095 (round to nearest). 0: nothing drawn.
#[inline(always)]
pub fn code(alpha: f32, t: f32) -> u32 {
    let a = (alpha.clamp(0.0, 1.0) * ALPHA_LEVELS + 0.5) as u32;
    if a == 0 {
        return 0;
    }
    let s = (t.clamp(0.0, 1.0) * SPEED_LEVELS + 0.5) as u32;
    a << 16 | s
}

/// The opacity and speed position of a code.
#[inline(always)]
pub fn decode(code: u32) -> (f32, f32) {
    (
        (code >> 16) as f32 / ALPHA_LEVELS,
        (code & 0xffff) as f32 / SPEED_LEVELS,
    )
}

/// The ramp's colour at `t` (0..1), 8-bit units, linear between its stops.
#[inline(always)]
pub fn ramp(t: f32) -> [f32; 3] {
    let x = t.clamp(0.0, 1.0) * (RAMP.len() - 1) as f32;
    let i = (x as usize).min(RAMP.len() - 2);
    let f = x - i as f32;
    std::array::from_fn(|c| {
        let (a, b) = (f32::from(RAMP[i][c]), f32::from(RAMP[i + 1][c]));
        f.mul_add(b - a, a)
    })
}

/// Overlay streamlines of `density` rows, the other settings the default's: for tests.
#[cfg(test)]
pub(crate) fn overlay(density: u32) -> StreamlineLook {
    StreamlineLook {
        mode: StreamlineMode::Overlay,
        density,
        ..StreamlineLook::default()
    }
}

/// The lines of an overlay look of `density` rows, `steps` steps and `length` seconds, over a
/// `grid` drawn into a `frame`: for tests.
#[cfg(test)]
pub(crate) fn overlay_lines(
    density: u32,
    steps: u32,
    length: f32,
    grid: (usize, usize),
    frame: (usize, usize),
) -> Lines {
    let look = StreamlineLook {
        steps,
        length,
        ..overlay(density)
    };
    Lines::new(&look, grid, frame).expect("overlay lines on a non-empty frame")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_cover_the_canvas_evenly() {
        let l = Lines::new(&overlay(4), (32, 16), (320, 160)).unwrap();
        assert_eq!((l.cols, l.rows), (8, 4));
        assert_eq!(l.seed(0), [0.125, 0.125]);
        assert_eq!(l.seed(l.seeds() - 1), [1.875, 0.875]);
        assert!(Lines::new(&StreamlineLook::default(), (32, 16), (320, 160)).is_none());
        assert!(Lines::new(&overlay(4), (32, 16), (0, 160)).is_none());
        // A very wide canvas keeps within the seed budget.
        let l = Lines::new(&overlay(MAX_DENSITY), (4096, 4), (4096, 4)).unwrap();
        assert!(l.seeds() <= MAX_SEEDS && l.rows >= 1, "{l:?}");
    }

    #[test]
    fn broken_looks_are_clamped() {
        let s = StreamlineLook {
            mode: StreamlineMode::Alone,
            density: 0,
            steps: 10_000,
            length: f32::NAN,
        }
        .sanitized();
        assert_eq!((s.density, s.steps), (MIN_DENSITY, MAX_STEPS));
        assert_eq!(s.length, StreamlineLook::default().length);
        let s = StreamlineLook { length: 1e9, ..s };
        assert_eq!(s.sanitized().length, MAX_LENGTH_S);
    }

    #[test]
    fn codes_order_by_opacity_and_round_trip() {
        assert_eq!(code(0.0, 0.7), 0);
        assert!(code(0.5, 0.0) > code(0.49, 1.0));
        let (a, t) = decode(code(0.25, 0.75));
        assert!((a - 0.25).abs() < 0.5 / ALPHA_LEVELS && (t - 0.75).abs() < 0.5 / SPEED_LEVELS);
        assert_eq!(code(f32::NAN, 0.5), 0);
    }

    #[test]
    fn shape_and_colour() {
        assert_eq!(distance([1.0, 1.0], [0.0, 0.0], [2.0, 0.0]), 1.0);
        assert_eq!(distance([3.0, 0.0], [0.0, 0.0], [2.0, 0.0]), 1.0);
        assert_eq!(distance([1.0, 1.0], [1.0, 0.0], [1.0, 0.0]), 1.0);
        assert_eq!(coverage(0.0, 0.6), 1.0);
        assert!((coverage(1.0, 0.6) - 0.1).abs() < 1e-6);
        assert_eq!(coverage(2.0, 0.6), 0.0);
        assert_eq!(ramp(0.0), RAMP[0].map(f32::from));
        assert_eq!(ramp(1.0), RAMP[4].map(f32::from));
        assert_eq!(ramp(0.125), [36.0, 117.0, 220.0]);
        assert!(speed_t(0.1) < speed_t(1.0) && speed_t(HALF_SPEED) == 0.5);
        assert_eq!(fade(0, 4), TAIL_ALPHA + 0.25 * (1.0 - TAIL_ALPHA));
        assert_eq!(fade(3, 4), 1.0);
    }
}
