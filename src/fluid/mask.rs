//! Obstacles as every part of Dyeflow knows them: the built-in layouts and a solid mask on a
//! grid, with its saved form (the text in a project or preset), the brush and images. The
//! models read a mask through face queries (`sim::obstacles`); the editor paints one and the
//! parameters save one, without knowing any model.
//!
//! A [`Mask`] marks each cell of a `width x height` grid solid or fluid (row 0 is the bottom,
//! as everywhere in Dyeflow's grids).
//!
//! Layouts and the brush are drawn in canvas coordinates (1 tall, `width / height` wide, y up):
//! a cell is solid when its centre lies inside the shape, so a layout looks the same at every
//! grid size. A mask keeps its own resolution when saved and is resampled (nearest cell centre)
//! for a grid of another size, keeping its shape: on a grid of another aspect it is fitted
//! (letterboxed), never stretched, so a circle stays a circle. An image is fitted the same way.

use serde::{Deserialize, Serialize};

/// Largest grid side a mask accepts (the solvers' limit).
pub const MAX_MASK_EDGE: usize = 8192;
/// Most cells a saved mask may have: the largest grid a model runs (2048 rows of 8192 cells,
/// the command line's widest picture at `--sim 2048`; the plugin's largest is 4779x2048), so
/// a mask in a preset or project never decodes into more than 16 MiB however it is written
/// (its run-length text of a few bytes could otherwise claim 8192x8192).
pub const MAX_MASK_CELLS: usize = 1 << 24;

/// The built-in obstacle layouts. Saved (and named on the command line) by their lowercase
/// names: "none", "disc", "pillars", "maze", "ring".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// No obstacles.
    #[default]
    None,
    /// A disc in the centre, 0.12 canvas heights in radius.
    Disc,
    /// Five pillars across the middle, 0.05 in radius.
    Pillars,
    /// Three walls with alternating gaps: the flow snakes from left to right.
    Maze,
    /// A ring around the centre (radii 0.22 to 0.26) with openings on the left and the right.
    Ring,
}

impl Layout {
    /// Every layout, in menu order.
    pub const ALL: [Layout; 5] = [
        Layout::None,
        Layout::Disc,
        Layout::Pillars,
        Layout::Maze,
        Layout::Ring,
    ];

    /// Its name as saved and typed: "none", "disc", "pillars", "maze", "ring".
    pub fn id(self) -> &'static str {
        match self {
            Layout::None => "none",
            Layout::Disc => "disc",
            Layout::Pillars => "pillars",
            Layout::Maze => "maze",
            Layout::Ring => "ring",
        }
    }

    /// Its name for menus: "None", "Disc", ...
    pub fn name(self) -> &'static str {
        match self {
            Layout::None => "None",
            Layout::Disc => "Disc",
            Layout::Pillars => "Pillars",
            Layout::Maze => "Maze",
            Layout::Ring => "Ring",
        }
    }

    /// The layout named `text` (its id, any case, spaces around ignored).
    pub fn from_id(text: &str) -> Option<Self> {
        let t = text.trim();
        Self::ALL
            .into_iter()
            .find(|l| l.id().eq_ignore_ascii_case(t))
    }

    /// Whether the point `p` (canvas coordinates) of a canvas `aspect` wide is inside it.
    pub fn contains(self, p: [f32; 2], aspect: f32) -> bool {
        let centre = [aspect * 0.5, 0.5];
        match self {
            Layout::None => false,
            Layout::Disc => dist(p, centre) <= 0.12,
            Layout::Pillars => (1..=5).any(|k| dist(p, [aspect * k as f32 / 6.0, 0.5]) <= 0.05),
            Layout::Maze => {
                // Walls 0.04 thick at a quarter, a half and three quarters of the width,
                // reaching up from the floor, down from the ceiling and up again.
                let half = 0.02;
                let wall =
                    |x: f32, y0: f32, y1: f32| (p[0] - x).abs() <= half && p[1] >= y0 && p[1] <= y1;
                wall(aspect * 0.25, 0.0, 0.7)
                    || wall(aspect * 0.5, 0.3, 1.0)
                    || wall(aspect * 0.75, 0.0, 0.7)
            }
            Layout::Ring => {
                let r = dist(p, centre);
                // Openings 30 degrees wide on the horizontal axis.
                let dx = (p[0] - centre[0]).abs();
                let opening =
                    dx > 0.0 && (p[1] - centre[1]).abs() <= dx * libm::tanf(15f32.to_radians());
                (0.22..=0.26).contains(&r) && !opening
            }
        }
    }
}

fn dist(a: [f32; 2], b: [f32; 2]) -> f32 {
    libm::hypotf(a[0] - b[0], a[1] - b[1])
}

/// Why a saved mask cannot be read.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum MaskError {
    /// Not `W H run run ...` with numbers.
    #[error("the obstacle mask is not readable ({0})")]
    Malformed(String),
    /// A side of 0 or over [`MAX_MASK_EDGE`], or more than [`MAX_MASK_CELLS`] cells.
    #[error(
        "the obstacle mask is {width}x{height}; each side must be 1 to {MAX_MASK_EDGE} and the \
         cells at most {MAX_MASK_CELLS} (e.g. 8192x2048)"
    )]
    BadSize { width: usize, height: usize },
    /// The runs do not add up to the cell count.
    #[error("the obstacle mask's runs cover {got} cells, not {want}")]
    WrongLength { got: usize, want: usize },
}

/// Solid cells of a grid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mask {
    width: usize,
    height: usize,
    /// `width * height`, row-major, row 0 at the bottom.
    solid: Vec<bool>,
    /// How many cells are solid.
    count: usize,
}

impl Mask {
    /// All fluid. Sides are clamped to 1..=[`MAX_MASK_EDGE`].
    pub fn empty(width: usize, height: usize) -> Self {
        let (width, height) = (clamp_edge(width), clamp_edge(height));
        Self {
            width,
            height,
            solid: vec![false; width * height],
            count: 0,
        }
    }

    /// A built-in layout rasterised on a `width x height` grid.
    pub fn layout(layout: Layout, width: usize, height: usize) -> Self {
        let mut mask = Self::empty(width, height);
        let aspect = mask.aspect();
        mask.fill_where(|p| layout.contains(p, aspect), true);
        mask
    }

    /// A mask from an RGBA8 image (`pixels` row-major, top row first, `4 * iw * ih` bytes),
    /// on a grid of `width x height` as [`Mask::from_pixels`] puts it. An image with any transparent pixel is read by its alpha (opaque is
    /// solid); a fully opaque one by its brightness (white is solid, black is fluid).
    /// `None` if the buffer does not hold `iw x ih` pixels or either is 0.
    pub fn from_rgba(
        pixels: &[u8],
        iw: usize,
        ih: usize,
        width: usize,
        height: usize,
    ) -> Option<Self> {
        if iw == 0 || ih == 0 || pixels.len() != iw.checked_mul(ih)?.checked_mul(4)? {
            return None;
        }
        let by_alpha = pixels.chunks_exact(4).any(|p| p[3] < 255);
        let solid_px: Vec<bool> = pixels
            .chunks_exact(4)
            .map(|p| {
                if by_alpha {
                    p[3] >= 128
                } else {
                    is_bright([p[0], p[1], p[2]])
                }
            })
            .collect();
        Self::from_pixels(&solid_px, iw, ih, width, height)
    }

    /// A mask from an image's pixels, solid or not (`solid` row-major, top row first,
    /// `iw * ih` of them), on a grid of `width x height`, keeping the image's shape: scaled to
    /// the largest rectangle of its aspect that fits, centred, the bands beside or above and
    /// below it fluid (see [`fit`]). A cell is solid when at least half of the image area it
    /// covers is solid. `None` if `solid` does not hold `iw x ih` pixels or
    /// either is 0.
    pub fn from_pixels(
        solid_px: &[bool],
        iw: usize,
        ih: usize,
        width: usize,
        height: usize,
    ) -> Option<Self> {
        if iw == 0 || ih == 0 || solid_px.len() != iw.checked_mul(ih)? {
            return None;
        }
        let mut mask = Self::empty(width, height);
        let (left, bottom, w, h) = fit(iw, ih, mask.width, mask.height);
        for j in 0..h {
            // Row j of the fitted rectangle (from the bottom) covers image rows [y0, y1)
            // from the top.
            let (y0, y1) = span(h - 1 - j, h, ih);
            for i in 0..w {
                let (x0, x1) = span(i, w, iw);
                let mut solid = 0usize;
                for y in y0..y1 {
                    solid += solid_px[y * iw + x0..y * iw + x1]
                        .iter()
                        .filter(|&&s| s)
                        .count();
                }
                if 2 * solid >= (y1 - y0) * (x1 - x0) {
                    mask.set(left + i, bottom + j, true);
                }
            }
        }
        Some(mask)
    }

    /// This mask on a grid of `width x height`, keeping its shape: scaled to the largest
    /// rectangle of its aspect that fits, centred, each cell taking the cell under its centre;
    /// the bands beside or above and below it are fluid (see [`fit`]: a shape within a cell
    /// of the grid's fills it).
    pub fn resampled(&self, width: usize, height: usize) -> Self {
        let mut out = Self::empty(width, height);
        if (out.width, out.height) == (self.width, self.height) {
            return self.clone();
        }
        let (left, bottom, w, h) = fit(self.width, self.height, out.width, out.height);
        for j in 0..h {
            let sj = ((j as f64 + 0.5) * self.height as f64 / h as f64) as usize;
            for i in 0..w {
                let si = ((i as f64 + 0.5) * self.width as f64 / w as f64) as usize;
                if self.is_solid(si.min(self.width - 1), sj.min(self.height - 1)) {
                    out.set(left + i, bottom + j, true);
                }
            }
        }
        out
    }

    /// Whether this mask has the shape of a `width x height` grid (to within a cell), so that
    /// [`Mask::resampled`] fills that grid as [`Mask::stretched`] does.
    pub fn fills(&self, width: usize, height: usize) -> bool {
        let (w, h) = (clamp_edge(width), clamp_edge(height));
        let (_, _, fw, fh) = fit(self.width, self.height, w, h);
        (fw, fh) == (w, h)
    }

    /// This mask stretched over a grid of `width x height` (each axis scaled on its own, as
    /// masks were resampled before state version 10): each new cell takes the cell under its
    /// centre.
    pub fn stretched(&self, width: usize, height: usize) -> Self {
        let mut out = Self::empty(width, height);
        if (out.width, out.height) == (self.width, self.height) {
            return self.clone();
        }
        for j in 0..out.height {
            let sj = ((j as f64 + 0.5) * self.height as f64 / out.height as f64) as usize;
            for i in 0..out.width {
                let si = ((i as f64 + 0.5) * self.width as f64 / out.width as f64) as usize;
                if self.is_solid(si.min(self.width - 1), sj.min(self.height - 1)) {
                    out.set(i, j, true);
                }
            }
        }
        out
    }

    /// Make solid (or fluid) every cell whose centre is within `radius` canvas heights of
    /// `centre`: the editor's brush. Non-finite input changes nothing.
    pub fn paint_disc(&mut self, centre: [f32; 2], radius: f32, solid: bool) {
        if !(centre[0].is_finite() && centre[1].is_finite() && radius.is_finite()) || radius < 0.0 {
            return;
        }
        let h = self.height as f32;
        // Only the columns and rows the disc can reach (one more each side for rounding).
        let reach = |c: f32, n: usize| {
            let lo = ((c - radius) * h - 1.5).ceil().clamp(0.0, n as f32) as usize;
            let hi = ((c + radius) * h + 1.5).floor().clamp(0.0, n as f32) as usize;
            lo..hi.max(lo)
        };
        let (cols, rows) = (reach(centre[0], self.width), reach(centre[1], self.height));
        for j in rows {
            for i in cols.clone() {
                if dist(self.centre(i, j), centre) <= radius {
                    self.set(i, j, solid);
                }
            }
        }
    }

    /// The cells a [`Mask::paint_capsule`] of this segment would visit: its bounding box on the
    /// grid (at most every cell, whatever the segment's length).
    pub fn capsule_cells(&self, from: [f32; 2], to: [f32; 2], radius: f32) -> usize {
        let (cols, rows) = self.capsule_box(from, to, radius);
        cols.len() * rows.len()
    }

    /// The columns and rows of the grid within `radius` (and a cell and a half more, for
    /// rounding) of the segment's bounding box; empty for non-finite input.
    fn capsule_box(
        &self,
        from: [f32; 2],
        to: [f32; 2],
        radius: f32,
    ) -> (std::ops::Range<usize>, std::ops::Range<usize>) {
        let finite = from.iter().chain(&to).all(|x| x.is_finite()) && radius.is_finite();
        if !finite || radius < 0.0 {
            return (0..0, 0..0);
        }
        let h = self.height as f32;
        let reach = |a: f32, b: f32, n: usize| {
            let lo = ((a.min(b) - radius) * h - 1.5).ceil().clamp(0.0, n as f32) as usize;
            let hi = ((a.max(b) + radius) * h + 1.5).floor().clamp(0.0, n as f32) as usize;
            lo..hi.max(lo)
        };
        (
            reach(from[0], to[0], self.width),
            reach(from[1], to[1], self.height),
        )
    }

    /// Make solid (or fluid) every cell whose centre is within `radius` canvas heights of the
    /// segment `from`-`to` (a disc when they are the same point): a brush stroke. Visits only
    /// the segment's bounding box on the grid ([`Mask::capsule_cells`]), so its cost is bounded
    /// by the grid's size whatever the segment's length; non-finite input changes nothing.
    pub fn paint_capsule(&mut self, from: [f32; 2], to: [f32; 2], radius: f32, solid: bool) {
        let (cols, rows) = self.capsule_box(from, to, radius);
        // In f64: a segment to a point far off the canvas squares to more than f32 holds.
        let (from, to) = (from.map(f64::from), to.map(f64::from));
        let d = [to[0] - from[0], to[1] - from[1]];
        let length2 = d[0] * d[0] + d[1] * d[1];
        let radius2 = f64::from(radius) * f64::from(radius);
        for j in rows {
            for i in cols.clone() {
                let c = self.centre(i, j).map(f64::from);
                let rel = [c[0] - from[0], c[1] - from[1]];
                // The closest point of the segment: its parameter clamped to the ends.
                let t = if length2 > 0.0 {
                    ((rel[0] * d[0] + rel[1] * d[1]) / length2).clamp(0.0, 1.0)
                } else {
                    0.0
                };
                let off = [rel[0] - t * d[0], rel[1] - t * d[1]];
                if off[0] * off[0] + off[1] * off[1] <= radius2 {
                    self.set(i, j, solid);
                }
            }
        }
    }

    /// Set every cell whose centre satisfies `inside` to `solid`.
    pub fn fill_where(&mut self, inside: impl Fn([f32; 2]) -> bool, solid: bool) {
        for j in 0..self.height {
            for i in 0..self.width {
                if inside(self.centre(i, j)) {
                    self.set(i, j, solid);
                }
            }
        }
    }

    /// Grid width in cells.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Grid height in cells.
    pub fn height(&self) -> usize {
        self.height
    }

    /// Canvas width over height.
    pub fn aspect(&self) -> f32 {
        self.width as f32 / self.height as f32
    }

    /// Whether no cell is solid (the solvers then take their plain paths).
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// How many cells are solid.
    pub fn solid_count(&self) -> usize {
        self.count
    }

    /// Whether cell `(i, j)` is solid; outside the grid counts as solid (the walls).
    pub fn is_solid(&self, i: usize, j: usize) -> bool {
        i >= self.width || j >= self.height || self.solid[j * self.width + i]
    }

    /// The cells, row-major from the bottom row.
    pub fn cells(&self) -> &[bool] {
        &self.solid
    }

    /// Set cell `(i, j)`; outside the grid does nothing.
    pub fn set(&mut self, i: usize, j: usize, solid: bool) {
        if i < self.width && j < self.height {
            let cell = &mut self.solid[j * self.width + i];
            if *cell != solid {
                *cell = solid;
                if solid {
                    self.count += 1;
                } else {
                    self.count -= 1;
                }
            }
        }
    }

    /// The centre of cell `(i, j)` in canvas coordinates.
    pub fn centre(&self, i: usize, j: usize) -> [f32; 2] {
        let h = self.height as f32;
        [(i as f32 + 0.5) / h, (j as f32 + 0.5) / h]
    }

    /// The mask as text for a saved state: `W H` and then the lengths of alternating runs of
    /// fluid and solid cells (row-major from the bottom, starting with fluid), e.g.
    /// `"4 2 3 2 3"` for a 4x2 grid whose cells 3 and 4 are solid.
    pub fn encode(&self) -> String {
        let mut out = format!("{} {}", self.width, self.height);
        let mut state = false;
        let mut run = 0usize;
        for &cell in &self.solid {
            if cell == state {
                run += 1;
            } else {
                out.push_str(&format!(" {run}"));
                state = cell;
                run = 1;
            }
        }
        out.push_str(&format!(" {run}"));
        out
    }

    /// Read [`Mask::encode`]'s text.
    pub fn decode(text: &str) -> Result<Self, MaskError> {
        let mut numbers = text.split_ascii_whitespace().map(|t| {
            t.parse::<usize>()
                .map_err(|_| MaskError::Malformed(format!("'{}' is not a count", truncate(t))))
        });
        let mut next = |what: &str| {
            numbers
                .next()
                .unwrap_or_else(|| Err(MaskError::Malformed(format!("no {what}"))))
        };
        let (width, height) = (next("width")?, next("height")?);
        if width == 0
            || height == 0
            || width > MAX_MASK_EDGE
            || height > MAX_MASK_EDGE
            || width * height > MAX_MASK_CELLS
        {
            return Err(MaskError::BadSize { width, height });
        }
        let want = width * height;
        let mut solid = Vec::with_capacity(want);
        let mut state = false;
        let mut got = 0usize;
        for run in numbers {
            let run = run?;
            got = got.saturating_add(run);
            if got > want {
                return Err(MaskError::WrongLength { got, want });
            }
            solid.extend(std::iter::repeat_n(state, run));
            state = !state;
        }
        if got != want {
            return Err(MaskError::WrongLength { got, want });
        }
        let count = solid.iter().filter(|&&s| s).count();
        Ok(Self {
            width,
            height,
            solid,
            count,
        })
    }
}

/// Where a picture of `sw x sh` lands on a grid of `w x h` keeping its shape: the largest
/// rectangle of its aspect that fits, in whole cells, centred (the bands left over split
/// evenly, the odd cell at the top or right): `(left, bottom, width, height)`. A shape within
/// a cell of the grid's fills the grid (it was drawn on a grid of this shape at another
/// resolution, whose rounding differs).
fn fit(sw: usize, sh: usize, w: usize, h: usize) -> (usize, usize, usize, usize) {
    let (sw, sh) = (sw.max(1), sh.max(1));
    let (fw, fh) = if sw as u128 * h as u128 >= w as u128 * sh as u128 {
        // As wide as the grid or wider: the full width.
        let fh = (w as f64 * sh as f64 / sw as f64).round() as usize;
        (w, if fh + 1 >= h { h } else { fh.max(1) })
    } else {
        let fw = (h as f64 * sw as f64 / sh as f64).round() as usize;
        (if fw + 1 >= w { w } else { fw.max(1) }, h)
    };
    ((w - fw) / 2, (h - fh) / 2, fw, fh)
}

/// Whether an opaque pixel of an obstacle image is solid: Rec. 709 luma of the 8-bit values
/// from mid-grey up.
pub fn is_bright([r, g, b]: [u8; 3]) -> bool {
    0.2126 * f32::from(r) + 0.7152 * f32::from(g) + 0.0722 * f32::from(b) >= 127.5
}

fn clamp_edge(n: usize) -> usize {
    n.clamp(1, MAX_MASK_EDGE)
}

/// The image pixels `[a, b)` that cell `k` of `cells` covers on an axis of `pixels` pixels
/// (at least one).
fn span(k: usize, cells: usize, pixels: usize) -> (usize, usize) {
    let a = k * pixels / cells;
    let b = ((k + 1) * pixels / cells).max(a + 1).min(pixels);
    (a.min(pixels - 1), b)
}

fn truncate(s: &str) -> &str {
    match s.char_indices().nth(16) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}
