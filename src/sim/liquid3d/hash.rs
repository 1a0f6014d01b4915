//! The 3D liquid's neighbour search: a uniform grid of cubic cells as wide as the smoothing
//! radius over the tank (in the tank's own frame), particles sorted by cell key with a counting
//! sort and a start index per cell, so a particle's neighbours are among the particles of the
//! 3x3x3 cells around its own. Half-radius cells (5x5x5 around) would cover 15.6 radii³
//! instead of 27, 42 % fewer candidates, but in 25 short runs of cells instead of 9: the step
//! took 18.1 ms against 16.4 (32 768 particles, 2 threads, 2026-11-28), so the cells are
//! radius-wide ([`CELLS_PER_RADIUS`]).
//!
//! Sebastian Lague's 3D source hashes each cell into a table as long as the particle count
//! (its space is unbounded). The tank is bounded in its own frame, so the cell's index is the
//! key: a perfect hash, no collisions for the neighbour loop to filter, no cell visited twice.
//! Positions outside the tank (a particle in flight, a broken value) fall into the nearest
//! edge cell, which keeps every pair closer than the radius within one cell of each other.
//!
//! After [`Grid::sort`] a caller reorders its particle data by [`Grid::order`], so that the
//! particles of a cell lie together in memory: along x the cells of a row are consecutive, so
//! the 27 cells around a particle are 9 contiguous ranges.

/// Most cells in the grid: a smaller radius is widened to keep the start table bounded.
pub const MAX_CELLS: usize = 1 << 21;

/// Cells per smoothing radius (1 or more; see the header for why 1).
pub const CELLS_PER_RADIUS: usize = 1;
/// Cells on each side of a particle's own that can hold its neighbours.
const REACH: usize = CELLS_PER_RADIUS;
/// Runs of cells (consecutive along x) around a particle's own.
const RUNS: usize = (2 * REACH + 1) * (2 * REACH + 1);

/// The grid over a tank of `size`, and the last sort.
#[derive(Clone, Debug)]
pub struct Grid {
    /// Cell edge: the smoothing radius over [`CELLS_PER_RADIUS`], unless that would need more
    /// than [`MAX_CELLS`].
    pub cell: f32,
    /// The reach of the neighbour search: [`CELLS_PER_RADIUS`] cells (the radius, or more
    /// where the cells were widened). The kernels' radius.
    pub reach: f32,
    /// The radius the grid was asked for.
    pub radius: f32,
    /// `1 / cell` (a product is correctly rounded on every GPU, a quotient is not).
    pub inv_cell: f32,
    /// Cells along x, y and z.
    pub dims: [usize; 3],
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

impl Grid {
    /// A grid over a tank of `size` (x, y, z; sanitised to positive and finite) with cells
    /// `radius` wide (widened where that would need more than about [`MAX_CELLS`]).
    pub fn new(size: [f32; 3], radius: f32) -> Self {
        let span = |x: f32| {
            if x.is_finite() && x > 0.0 {
                x.clamp(1e-3, 1e6)
            } else {
                1.0
            }
        };
        let size = size.map(span);
        let least = libm::cbrtf(size[0] * size[1] * size[2] / MAX_CELLS as f32);
        let wanted = radius / CELLS_PER_RADIUS as f32;
        let cell = if wanted.is_finite() && wanted > least {
            wanted
        } else {
            least
        };
        let along = |x: f32| ((x / cell).ceil() as usize).clamp(1, 1 << 12);
        Self {
            cell,
            reach: cell * CELLS_PER_RADIUS as f32,
            radius,
            inv_cell: 1.0 / cell,
            dims: [along(size[0]), along(size[1]), along(size[2])],
            start: Vec::new(),
            order: Vec::new(),
            keys: Vec::new(),
            fill: Vec::new(),
        }
    }

    /// The cell of point `p`, clamped to the grid (NaN falls into cell 0 along its axis).
    #[inline]
    pub fn cell_of(&self, p: [f32; 3]) -> [usize; 3] {
        // `as` saturates: negative and NaN give 0 (through u32: x86-64's baseline converts a
        // float to u64 with a compare and a branch).
        [0, 1, 2].map(|c| ((p[c] * self.inv_cell) as u32 as usize).min(self.dims[c] - 1))
    }

    /// The key (cell index, x fastest) of point `p`.
    #[inline]
    pub fn key(&self, p: [f32; 3]) -> usize {
        let [i, j, k] = self.cell_of(p);
        (k * self.dims[1] + j) * self.dims[0] + i
    }

    /// Sort `points` by cell (a stable counting sort: within a cell, by index).
    pub fn sort(&mut self, points: &[[f32; 3]]) {
        let cells = self.dims.iter().product::<usize>();
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

    /// The sorted index ranges of the runs of cells around the cell of `p` (up to 9 with
    /// radius-wide cells), as a fixed array and its length (each run: cells consecutive along
    /// x).
    #[inline]
    pub fn rows_around(&self, p: [f32; 3]) -> ([(u32, u32); RUNS], usize) {
        let [i, j, k] = self.cell_of(p);
        let [nx, ny, nz] = self.dims;
        let (i0, i1) = (i.saturating_sub(REACH), (i + REACH).min(nx - 1));
        let mut rows = [(0, 0); RUNS];
        let mut count = 0;
        for kk in k.saturating_sub(REACH)..=(k + REACH).min(nz - 1) {
            for jj in j.saturating_sub(REACH)..=(j + REACH).min(ny - 1) {
                let row = (kk * ny + jj) * nx;
                rows[count] = (self.start[row + i0], self.start[row + i1 + 1]);
                count += 1;
            }
        }
        (rows, count)
    }
}

pub use crate::sim::cells::reorder;

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pair closer than the radius is found through the 27 cells, in a tank with points
    /// outside it too (they fall into the edge cells).
    #[test]
    fn the_cells_around_hold_every_neighbour() {
        let size = [2.0, 1.0, 1.5];
        let radius = 0.2;
        let mut seed = 7u32;
        let mut next = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1u32 << 24) as f32
        };
        let mut points: Vec<[f32; 3]> = (0..1500)
            .map(|_| [next() * 2.2 - 0.1, next() * 1.2 - 0.1, next() * 1.7 - 0.1])
            .collect();
        points.push([f32::NAN, 0.5, 0.5]);
        let mut grid = Grid::new(size, radius);
        assert_eq!(grid.dims, [10, 5, 8]);
        assert!((grid.reach - radius).abs() < 1e-6);
        grid.sort(&points);
        let mut sorted = Vec::new();
        reorder(&points, &grid.order, &mut sorted);
        // Sorted by key.
        assert!(sorted.windows(2).all(|w| grid.key(w[0]) <= grid.key(w[1])));
        for (a, &p) in sorted.iter().enumerate() {
            let (rows, count) = grid.rows_around(p);
            let mut found: Vec<usize> = rows[..count]
                .iter()
                .flat_map(|&(lo, hi)| lo as usize..hi as usize)
                .filter(|&b| {
                    let q = sorted[b];
                    let d2: f32 = (0..3).map(|c| (q[c] - p[c]) * (q[c] - p[c])).sum();
                    b != a && d2 < radius * radius
                })
                .collect();
            found.sort_unstable();
            let brute: Vec<usize> = (0..sorted.len())
                .filter(|&b| {
                    let q = sorted[b];
                    let d2: f32 = (0..3).map(|c| (q[c] - p[c]) * (q[c] - p[c])).sum();
                    b != a && d2 < radius * radius
                })
                .collect();
            assert_eq!(found, brute, "point {a} at {p:?}");
        }
    }

    #[test]
    fn a_tiny_radius_is_widened_and_broken_sizes_are_sane() {
        let grid = Grid::new([100.0, 100.0, 100.0], 1e-6);
        assert!(grid.dims.iter().product::<usize>() <= MAX_CELLS * 2);
        let grid = Grid::new([f32::NAN, -1.0, f32::INFINITY], 0.5);
        assert_eq!(grid.dims, [2, 2, 2]);
    }
}
