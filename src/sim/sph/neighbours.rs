//! The particle fluid's neighbour search: a uniform grid with cells as wide as the smoothing
//! radius over the box, particles sorted by cell with a counting sort, and a start index per
//! cell, so a particle's neighbours are the particles of the 3x3 cells around its own.
//!
//! Sebastian Lague's source hashes each cell into a table as long as the particle count,
//! because its space is unbounded. Here the box is bounded, so the cell's own index is the
//! key: a perfect hash, with no collisions for the neighbour loop to filter (and no cell
//! visited twice when two of the nine keys would collide). Positions outside the box (a
//! broken value, a particle in flight) fall into the nearest edge cell, which keeps every pair
//! closer than the radius within one cell of each other.
//!
//! After [`Grid::sort`] a caller reorders its particle data by [`Grid::order`], so that the
//! particles of a cell lie together in memory and the neighbour loops read in order.

/// The grid over a `width x height` box, and the last sort.
#[derive(Clone, Debug)]
pub struct Grid {
    /// Cell edge: the smoothing radius, unless that would need more than [`MAX_CELLS`].
    pub cell: f32,
    /// The radius the grid was asked for.
    pub radius: f32,
    /// `1 / cell`: a point's cell is `floor(p * inv_cell)`. A product is correctly rounded on
    /// every GPU (a quotient is not: NVIDIA's division is within 2 units in the last place),
    /// so the GPU's keys are the CPU's to the bit.
    pub inv_cell: f32,
    pub cols: usize,
    pub rows: usize,
    /// After [`Grid::sort`]: the particles of cell `c` are sorted indices
    /// `start[c]..start[c + 1]`.
    pub start: Vec<u32>,
    /// After [`Grid::sort`]: `order[k]` is the particle (index before the sort) at sorted
    /// index `k`.
    pub order: Vec<u32>,
    /// Each particle's cell, before the sort.
    keys: Vec<u32>,
    /// The sort's working memory.
    fill: Vec<u32>,
}

/// Most cells in the grid: a smaller radius is widened to keep the start table bounded.
pub const MAX_CELLS: usize = 1 << 20;

impl Grid {
    /// A grid over a `width x height` box with cells `radius` wide (sanitised: positive and
    /// finite, and wide enough for at most about [`MAX_CELLS`] cells).
    pub fn new(width: f32, height: f32, radius: f32) -> Self {
        let span = |x: f32| {
            if x.is_finite() && x > 0.0 {
                x.clamp(1e-3, 1e6)
            } else {
                1.0
            }
        };
        let (width, height) = (span(width), span(height));
        let least = (width * height / MAX_CELLS as f32).sqrt();
        debug_assert!(least > 0.0);
        let cell = if radius.is_finite() && radius > least {
            radius
        } else {
            least
        };
        let cols = ((width / cell).ceil() as usize).clamp(1, MAX_CELLS);
        let rows = ((height / cell).ceil() as usize).clamp(1, MAX_CELLS / cols);
        Self {
            cell,
            radius,
            inv_cell: 1.0 / cell,
            cols,
            rows,
            // Filled by `sort` (the GPU builds a grid each step only for its shape).
            start: Vec::new(),
            order: Vec::new(),
            keys: Vec::new(),
            fill: Vec::new(),
        }
    }

    /// The cell (column, row) of point `p`, clamped to the grid (NaN falls into column or row
    /// 0).
    #[inline]
    pub fn cell_of(&self, p: [f32; 2]) -> (usize, usize) {
        // `as usize` saturates: negative and NaN give 0.
        let i = ((p[0] * self.inv_cell) as usize).min(self.cols - 1);
        let j = ((p[1] * self.inv_cell) as usize).min(self.rows - 1);
        (i, j)
    }

    /// The key (cell index) of point `p`.
    #[inline]
    pub fn key(&self, p: [f32; 2]) -> usize {
        let (i, j) = self.cell_of(p);
        j * self.cols + i
    }

    /// Sort `points` by cell (a stable counting sort: within a cell, by index).
    pub fn sort(&mut self, points: &[[f32; 2]]) {
        let cells = self.cols * self.rows;
        let mut keys = std::mem::take(&mut self.keys);
        keys.clear();
        keys.extend(points.iter().map(|&p| self.key(p) as u32));
        self.keys = keys;
        crate::sim::cells::sort_by_cell(
            &self.keys,
            cells,
            &mut self.start,
            &mut self.order,
            &mut self.fill,
        );
    }

    /// The sorted index ranges of the (up to nine) cells around the cell of `p`.
    #[inline]
    pub fn around(&self, p: [f32; 2]) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        let (i, j) = self.cell_of(p);
        let (i0, i1) = (i.saturating_sub(1), (i + 1).min(self.cols - 1));
        let (j0, j1) = (j.saturating_sub(1), (j + 1).min(self.rows - 1));
        // Along a row the cells are consecutive, so their particles are one range.
        (j0..=j1).map(move |r| {
            let (a, b) = (r * self.cols + i0, r * self.cols + i1);
            self.start[a] as usize..self.start[b + 1] as usize
        })
    }

    /// The sorted index ranges of the rows of cells around the cell of `p` (as
    /// [`Grid::around`]), as a fixed array and its length: plain loops over them compile to
    /// tighter code than the iterator chain.
    #[inline]
    pub fn rows_around(&self, p: [f32; 2]) -> ([(u32, u32); 3], usize) {
        let (i, j) = self.cell_of(p);
        let (i0, i1) = (i.saturating_sub(1), (i + 1).min(self.cols - 1));
        let (j0, j1) = (j.saturating_sub(1), (j + 1).min(self.rows - 1));
        let mut rows = [(0, 0); 3];
        for (slot, r) in rows.iter_mut().zip(j0..=j1) {
            let (a, b) = (r * self.cols + i0, r * self.cols + i1);
            *slot = (self.start[a], self.start[b + 1]);
        }
        (rows, j1 - j0 + 1)
    }

    /// Every sorted index `k != me` whose point in `sorted` (the points in sorted order) lies
    /// closer than the cell edge to `sorted[me]`, with the squared distance.
    #[inline]
    pub fn neighbours<'a>(
        &'a self,
        sorted: &'a [[f32; 2]],
        me: usize,
    ) -> impl Iterator<Item = (usize, f32)> + 'a {
        let p = sorted[me];
        let r2 = self.cell * self.cell;
        self.around(p).flatten().filter_map(move |k| {
            let q = sorted[k];
            let (dx, dy) = (q[0] - p[0], q[1] - p[1]);
            let d2 = dx * dx + dy * dy;
            (k != me && d2 < r2).then_some((k, d2))
        })
    }
}

pub use crate::sim::cells::reorder;

#[cfg(test)]
mod tests {
    use super::*;

    /// Sorted indices `k` and their neighbours, brute force: every pair closer than `r`.
    fn brute(sorted: &[[f32; 2]], r: f32) -> Vec<Vec<usize>> {
        (0..sorted.len())
            .map(|a| {
                (0..sorted.len())
                    .filter(|&b| {
                        let (dx, dy) = (sorted[b][0] - sorted[a][0], sorted[b][1] - sorted[a][1]);
                        b != a && dx * dx + dy * dy < r * r
                    })
                    .collect()
            })
            .collect()
    }

    fn check(points: &[[f32; 2]], (w, h): (f32, f32), r: f32) {
        let mut grid = Grid::new(w, h, r);
        grid.sort(points);
        // The order is a permutation sorted by key, stable within a key.
        let mut seen = vec![false; points.len()];
        for &n in &grid.order {
            assert!(
                !std::mem::replace(&mut seen[n as usize], true),
                "twice: {n}"
            );
        }
        let keys: Vec<usize> = grid
            .order
            .iter()
            .map(|&n| grid.key(points[n as usize]))
            .collect();
        assert!(keys.windows(2).all(|k| k[0] <= k[1]), "not sorted by key");
        for (k, w) in keys.windows(2).zip(grid.order.windows(2)) {
            assert!(k[0] < k[1] || w[0] < w[1], "not stable");
        }
        let mut sorted = Vec::new();
        reorder(points, &grid.order, &mut sorted);
        let want = brute(&sorted, grid.cell);
        for (a, want) in want.iter().enumerate() {
            let mut got: Vec<usize> = grid.neighbours(&sorted, a).map(|(k, _)| k).collect();
            got.sort_unstable();
            assert_eq!(&got, want, "particle {a} at {:?}", sorted[a]);
        }
    }

    fn random(n: usize, (w, h): (f32, f32), seed: u32) -> Vec<[f32; 2]> {
        let mut s = seed.max(1);
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            s as f32 / u32::MAX as f32
        };
        (0..n).map(|_| [next() * w, next() * h]).collect()
    }

    #[test]
    fn random_points_find_exactly_their_neighbours() {
        for (n, r, seed) in [(1, 0.1, 1), (2, 0.5, 2), (500, 0.07, 3), (1777, 0.031, 4)] {
            check(&random(n, (1.78, 1.0), seed), (1.78, 1.0), r);
        }
    }

    #[test]
    fn adversarial_points_find_exactly_their_neighbours() {
        let (w, h, r) = (1.6f32, 0.9f32, 0.1f32);
        // All in one cell.
        let one: Vec<[f32; 2]> = random(300, (0.09, 0.09), 7)
            .into_iter()
            .map(|p| [p[0] + 0.5, p[1] + 0.3])
            .collect();
        check(&one, (w, h), r);
        // On cell boundaries, and pairs exactly one radius apart (not neighbours: closer
        // than the radius only).
        let edges: Vec<[f32; 2]> = (0..=16)
            .flat_map(|i| (0..=9).map(move |j| [i as f32 * r, j as f32 * r]))
            .collect();
        check(&edges, (w, h), r);
        // At the box's edges and corners, and just outside them.
        let rim: Vec<[f32; 2]> = [
            [0.0, 0.0],
            [w, h],
            [w, 0.0],
            [0.0, h],
            [w - 1e-6, h - 1e-6],
            [w + 0.05, h + 0.05],
            [-0.05, -0.05],
            [-3.0, 0.4],
            [0.02, 0.4],
            [f32::NAN, 0.5],
            [f32::INFINITY, f32::NEG_INFINITY],
        ]
        .to_vec();
        check(&rim, (w, h), r);
        // Coincident points: everyone is everyone's neighbour.
        check(&vec![[0.3, 0.3]; 40], (w, h), r);
    }

    #[test]
    fn broken_sizes_give_a_usable_grid() {
        for (w, h, r) in [
            (f32::NAN, 1.0, 0.1),
            (1.0, 1.0, 0.0),
            (1.0, 1.0, f32::INFINITY),
            (1.0, 1.0, 1e-30),
            (0.0, -1.0, 0.1),
            (1e-30, 1e-30, 0.0),
            (1e-30, 1e-30, f32::NAN),
        ] {
            let g = Grid::new(w, h, r);
            assert!(g.cell > 0.0 && g.cell.is_finite(), "{w} {h} {r}");
            assert!(g.cols * g.rows <= MAX_CELLS, "{} x {}", g.cols, g.rows);
            check(&random(50, (1.0, 1.0), 9), (w, h), r);
        }
        let mut g = Grid::new(1.0, 1.0, 0.1);
        g.sort(&[]);
        assert!(g.order.is_empty() && g.start.iter().all(|&s| s == 0));
    }
}
