//! The particle fluids' neighbour search, in two and three dimensions: a uniform grid of
//! cells as wide as the smoothing radius over the container (the 2D box, the 3D tank, in its own
//! frame), particles sorted by cell key with a stable counting sort and a start index per cell,
//! so a particle's neighbours are among the particles of the 3x3 (3x3x3) cells around its own.
//! Half-radius cells (5x5x5 around) would cover 15.6 radii³ instead of 27, 42 % fewer
//! candidates, but in 25 short runs of cells instead of 9: the 3D step took 18.1 ms against
//! 16.4 (32 768 particles, 2 threads, 2026-11-28), so the cells are radius-wide
//! ([`CELLS_PER_RADIUS`]).
//!
//! Sebastian Lague's sources hash each cell into a table as long as the particle count,
//! because their space is unbounded. Here the container is bounded, so the cell's own index is
//! the key: a perfect hash, with no collisions for the neighbour loop to filter, and no cell
//! visited twice. Positions outside the container (a broken value, a particle in flight) fall
//! into the nearest edge cell, which keeps every pair closer than the radius within one cell of
//! each other.
//!
//! After [`Grid::sort`] a caller reorders its particle data by [`Grid::order`] ([`reorder`]),
//! so that the particles of a cell lie together in memory: along x the cells of a row are
//! consecutive, so the cells around a particle are 3 (9 in 3D) contiguous runs.
//!
//! The 2D grid is the 3D one with one layer of cells (`dims[2] == 1`): the same keys, runs
//! and order, to the bit.

/// Cells per smoothing radius (1 or more; see the header for why 1).
pub const CELLS_PER_RADIUS: usize = 1;
/// Cells on each side of a particle's own that can hold its neighbours.
const REACH: usize = CELLS_PER_RADIUS;
/// Most runs of cells (consecutive along x) around a particle's own: 9 in 3D, 3 in 2D.
pub const RUNS: usize = (2 * REACH + 1) * (2 * REACH + 1);

/// The grid over a container of `size` (`D` = 2 or 3 axes), and the last sort.
#[derive(Clone, Debug)]
pub struct Grid<const D: usize> {
    /// Cell edge: the smoothing radius over [`CELLS_PER_RADIUS`], unless that would need more
    /// than [`Grid::MAX_CELLS`].
    pub cell: f32,
    /// The reach of the neighbour search: [`CELLS_PER_RADIUS`] cells (the radius, or more
    /// where the cells were widened). The kernels' radius.
    pub reach: f32,
    /// The radius the grid was asked for.
    pub radius: f32,
    /// `1 / cell`: a point's cell is `floor(p * inv_cell)`. A product is correctly rounded on
    /// every GPU (a quotient is not: NVIDIA's division is within 2 units in the last place),
    /// so the GPU's keys are the CPU's to the bit.
    pub inv_cell: f32,
    /// Cells along x, y and z (1 along z in 2D).
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

impl<const D: usize> Grid<D> {
    /// Most cells in the grid: a smaller radius is widened to keep the start table bounded.
    pub const MAX_CELLS: usize = if D == 2 { 1 << 20 } else { 1 << 21 };

    /// A grid over a container of `size` (sanitised to positive and finite) with cells `radius`
    /// wide (widened where that would need more than about [`Grid::MAX_CELLS`]).
    pub fn new(size: [f32; D], radius: f32) -> Self {
        const {
            assert!(
                D == 2 || D == 3,
                "particles live in two or three dimensions"
            )
        };
        let span = |x: f32| {
            if x.is_finite() && x > 0.0 {
                x.clamp(1e-3, 1e6)
            } else {
                1.0
            }
        };
        let size = size.map(span);
        let volume = size[1..].iter().fold(size[0], |v, &s| v * s);
        let per_cell = volume / Self::MAX_CELLS as f32;
        let least = if D == 2 {
            per_cell.sqrt()
        } else {
            libm::cbrtf(per_cell)
        };
        debug_assert!(least > 0.0);
        let wanted = radius / CELLS_PER_RADIUS as f32;
        let cell = if wanted.is_finite() && wanted > least {
            wanted
        } else {
            least
        };
        let along = |x: f32| (x / cell).ceil() as usize;
        let mut dims = [1; 3];
        if D == 2 {
            // The columns and rows share the cell budget (a box is at most 1e6 a side).
            dims[0] = along(size[0]).clamp(1, Self::MAX_CELLS);
            dims[1] = along(size[1]).clamp(1, Self::MAX_CELLS / dims[0]);
        } else {
            for (n, &s) in dims.iter_mut().zip(&size) {
                *n = along(s).clamp(1, 1 << 12);
            }
        }
        Self {
            cell,
            reach: cell * CELLS_PER_RADIUS as f32,
            radius,
            inv_cell: 1.0 / cell,
            dims,
            // Filled by `sort` (the GPU builds a grid each step only for its shape).
            start: Vec::new(),
            order: Vec::new(),
            keys: Vec::new(),
            fill: Vec::new(),
        }
    }

    /// Cells in the grid.
    pub fn cells(&self) -> usize {
        self.dims.iter().product()
    }

    /// The cell of point `p` (z is 0 in 2D), clamped to the grid (NaN falls into cell 0 along
    /// its axis).
    #[inline]
    pub fn cell_of(&self, p: [f32; D]) -> [usize; 3] {
        let mut cell = [0; 3];
        for (c, (&x, &n)) in cell.iter_mut().zip(p.iter().zip(&self.dims)) {
            // `as` saturates: negative and NaN give 0 (through u32: x86-64's baseline converts
            // a float to u64 with a compare and a branch).
            *c = ((x * self.inv_cell) as u32 as usize).min(n - 1);
        }
        cell
    }

    /// The key (cell index, x fastest) of point `p`.
    #[inline]
    pub fn key(&self, p: [f32; D]) -> usize {
        let [i, j, k] = self.cell_of(p);
        (k * self.dims[1] + j) * self.dims[0] + i
    }

    /// Sort `points` by cell (a stable counting sort: within a cell, by index).
    pub fn sort(&mut self, points: &[[f32; D]]) {
        let cells = self.cells();
        let mut keys = std::mem::take(&mut self.keys);
        keys.clear();
        keys.extend(points.iter().map(|&p| self.key(p) as u32));
        self.keys = keys;
        sort_by_cell(
            &self.keys,
            cells,
            &mut self.start,
            &mut self.order,
            &mut self.fill,
        );
    }

    /// The sorted index ranges of the runs of cells around the cell of `p` (up to 9 in 3D, 3
    /// in 2D; each run: cells consecutive along x), as a fixed array and its length: plain
    /// loops over them compile to tighter code than an iterator chain.
    #[inline]
    pub fn rows_around(&self, p: [f32; D]) -> ([(u32, u32); RUNS], usize) {
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

    /// Every sorted index `k != me` whose point in `sorted` (the points in sorted order) lies
    /// closer than the reach to `sorted[me]`, with the squared distance.
    #[inline]
    pub fn neighbours<'a>(
        &'a self,
        sorted: &'a [[f32; D]],
        me: usize,
    ) -> impl Iterator<Item = (usize, f32)> + 'a {
        let p = sorted[me];
        let r2 = self.reach * self.reach;
        let (rows, count) = self.rows_around(p);
        (0..count)
            .flat_map(move |r| rows[r].0 as usize..rows[r].1 as usize)
            .filter_map(move |k| {
                let d2 = dist2(sorted[k], p);
                (k != me && d2 < r2).then_some((k, d2))
            })
    }
}

/// The squared distance between `a` and `b`, summed from the x axis on (as every stage sums
/// it: `dx² + dy² (+ dz²)`, never from a 0.0 seed).
#[inline]
pub fn dist2<const D: usize>(a: [f32; D], b: [f32; D]) -> f32 {
    let d = |c: usize| a[c] - b[c];
    let mut s = d(0) * d(0);
    for c in 1..D {
        s += d(c) * d(c);
    }
    s
}

/// Sort particles by their cell `keys` (each below `cells`) with a stable counting sort: after
/// it, the particles of cell `c` are sorted indices `start[c]..start[c + 1]`, and `order[k]` is
/// the particle at sorted index `k` (within a cell, by index). `fill` is working memory kept
/// by the caller, so that a warm sort allocates nothing.
pub fn sort_by_cell(
    keys: &[u32],
    cells: usize,
    start: &mut Vec<u32>,
    order: &mut Vec<u32>,
    fill: &mut Vec<u32>,
) {
    start.clear();
    start.resize(cells + 1, 0);
    for &k in keys {
        start[k as usize + 1] += 1;
    }
    for c in 0..cells {
        start[c + 1] += start[c];
    }
    order.clear();
    order.resize(keys.len(), 0);
    fill.clear();
    fill.extend_from_slice(&start[..cells]);
    for (n, &k) in keys.iter().enumerate() {
        let slot = &mut fill[k as usize];
        order[*slot as usize] = n as u32;
        *slot += 1;
    }
}

/// `out[k] = data[order[k]]`.
pub fn reorder<T: Copy>(data: &[T], order: &[u32], out: &mut Vec<T>) {
    out.clear();
    out.extend(order.iter().map(|&n| data[n as usize]));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn particles_are_sorted_by_cell_stably() {
        let keys = [2, 0, 2, 1, 0, 3, 2];
        let (mut start, mut order, mut fill) = (Vec::new(), Vec::new(), Vec::new());
        sort_by_cell(&keys, 5, &mut start, &mut order, &mut fill);
        assert_eq!(start, [0, 2, 3, 6, 7, 7]);
        assert_eq!(order, [1, 4, 3, 0, 2, 6, 5]);
        let mut sorted = Vec::new();
        reorder(&keys, &order, &mut sorted);
        assert_eq!(sorted, [0, 0, 1, 2, 2, 2, 3]);
    }

    /// Sorted indices `k` and their neighbours, brute force: every pair closer than `r`.
    fn brute<const D: usize>(sorted: &[[f32; D]], r: f32) -> Vec<Vec<usize>> {
        (0..sorted.len())
            .map(|a| {
                (0..sorted.len())
                    .filter(|&b| b != a && dist2(sorted[b], sorted[a]) < r * r)
                    .collect()
            })
            .collect()
    }

    /// The grid sorts `points` by key, stably, and finds exactly each one's neighbours.
    fn check<const D: usize>(points: &[[f32; D]], size: [f32; D], r: f32) {
        let mut grid = Grid::new(size, r);
        // 2D shares its budget between the axes; 3D rounds each axis up.
        assert!(
            grid.cells() <= Grid::<D>::MAX_CELLS * (D - 1),
            "{:?}",
            grid.dims
        );
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
        let want = brute(&sorted, grid.reach);
        for (a, want) in want.iter().enumerate() {
            let mut got: Vec<usize> = grid.neighbours(&sorted, a).map(|(k, _)| k).collect();
            got.sort_unstable();
            assert_eq!(&got, want, "particle {a} at {:?}", sorted[a]);
        }
    }

    /// `n` points spread over `[lo, hi)` per axis.
    fn random<const D: usize>(n: usize, lo: [f32; D], hi: [f32; D], seed: u32) -> Vec<[f32; D]> {
        let mut spread = crate::sim::particles::sources::Spread::new(seed);
        (0..n)
            .map(|_| std::array::from_fn(|c| lo[c] + spread.draw() * (hi[c] - lo[c])))
            .collect()
    }

    #[test]
    fn random_points_find_exactly_their_neighbours() {
        for (n, r, seed) in [(1, 0.1, 1), (2, 0.5, 2), (500, 0.07, 3), (1777, 0.031, 4)] {
            check(&random(n, [0.0; 2], [1.78, 1.0], seed), [1.78, 1.0], r);
        }
        // In 3D, with points outside the tank too (they fall into the edge cells).
        let size = [2.0, 1.0, 1.5];
        let mut points = random(1500, [-0.1; 3], [2.1, 1.1, 1.6], 7);
        points.push([f32::NAN, 0.5, 0.5]);
        assert_eq!(Grid::new(size, 0.2).dims, [10, 5, 8]);
        check(&points, size, 0.2);
    }

    #[test]
    fn adversarial_points_find_exactly_their_neighbours() {
        let (w, h, r) = (1.6f32, 0.9f32, 0.1f32);
        // All in one cell.
        let one = random(300, [0.5, 0.3], [0.59, 0.39], 7);
        check(&one, [w, h], r);
        // On cell boundaries, and pairs exactly one radius apart (not neighbours: closer
        // than the radius only).
        let edges: Vec<[f32; 2]> = (0..=16)
            .flat_map(|i| (0..=9).map(move |j| [i as f32 * r, j as f32 * r]))
            .collect();
        check(&edges, [w, h], r);
        let edges3: Vec<[f32; 3]> = edges.iter().map(|p| [p[0], p[1], 0.2]).collect();
        check(&edges3, [w, h, 0.5], r);
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
        check(&rim, [w, h], r);
        let rim3: Vec<[f32; 3]> = rim.iter().map(|p| [p[1], 0.3, p[0]]).collect();
        check(&rim3, [h, 0.6, w], r);
        // Coincident points: everyone is everyone's neighbour.
        check(&vec![[0.3, 0.3]; 40], [w, h], r);
        check(&vec![[0.3, 0.3, 0.3]; 40], [w, h, 1.0], r);
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
            let g = Grid::new([w, h], r);
            assert!(g.cell > 0.0 && g.cell.is_finite(), "{w} {h} {r}");
            assert!(g.cells() <= Grid::<2>::MAX_CELLS, "{:?}", g.dims);
            check(&random(50, [0.0; 2], [1.0; 2], 9), [w, h], r);
            let g = Grid::new([w, h, w], r);
            assert!(g.cell > 0.0 && g.cell.is_finite(), "{w} {h} {r}");
            check(&random(50, [0.0; 3], [1.0; 3], 9), [w, h, w], r);
        }
        // A tiny radius is widened.
        let g = Grid::new([100.0; 3], 1e-6);
        assert!(g.cells() <= Grid::<3>::MAX_CELLS * 2, "{:?}", g.dims);
        assert_eq!(
            Grid::new([f32::NAN, -1.0, f32::INFINITY], 0.5).dims,
            [2, 2, 2]
        );
        let mut g = Grid::new([1.0, 1.0], 0.1);
        g.sort(&[]);
        assert!(g.order.is_empty() && g.start.iter().all(|&s| s == 0));
    }
}

/// The same sort on the GPU (`shaders/cell_sort.wgsl`), for the particle models' GPU steps: a
/// model's own pass writes each particle's key and counts its cell; these passes turn the
/// counts into the start table and the order, exactly the CPU's ([`sort_by_cell`]).
pub mod gpu {
    use crate::gpu::kernel::{Binding, Kernel, module};
    use crate::sim::particles::gpu::groups;

    /// Threads per workgroup (`SW` in cell_sort.wgsl).
    pub const SW: u32 = 256;
    /// Cells of more particles than this keep their atomic order of arrival (`SETTLE_MAX` in
    /// cell_sort.wgsl): the same neighbours, summed in another order.
    pub const SETTLE_MAX: u32 = 512;

    /// The `@binding`s of cell_sort.wgsl.
    pub mod binding {
        use super::Binding;
        pub const C: Binding = Binding::new(0, "C");
        pub const KEYS: Binding = Binding::new(1, "keys");
        pub const COUNTS: Binding = Binding::new(2, "counts");
        pub const START: Binding = Binding::new(3, "start");
        pub const SUMS: Binding = Binding::new(4, "sums");
        pub const FILL: Binding = Binding::new(5, "fill");
        pub const ARRIVAL: Binding = Binding::new(6, "arrival");
        pub const ORDER: Binding = Binding::new(7, "order");
        #[cfg(test)]
        pub const ALL: &[Binding] = &[C, KEYS, COUNTS, START, SUMS, FILL, ARRIVAL, ORDER];
    }

    /// The sort's passes, in order, each with the bindings it uses.
    const PASSES: [(&str, &[Binding]); 5] = {
        use binding::*;
        [
            ("scan_blocks", &[C, COUNTS, START, SUMS]),
            ("scan_sums", &[C, SUMS]),
            ("scan_add", &[C, START, SUMS, FILL]),
            ("scatter", &[C, KEYS, FILL, ARRIVAL]),
            ("settle", &[C, ARRIVAL, KEYS, START, ORDER]),
        ]
    };

    /// The sort's kernels ([`PASSES`]), built once per device.
    pub struct CellSort([Kernel; 5]);

    /// The sort's bind groups over one set of buffers.
    pub struct CellSortGroups([wgpu::BindGroup; 5]);

    impl CellSort {
        pub fn new(device: &wgpu::Device) -> Self {
            let m = module(device, "cell_sort");
            Self(PASSES.map(|(entry, _)| Kernel::new(device, &m, entry)))
        }

        /// The bind groups over `buffers`, in [`binding`]'s order: the uniform
        /// ([`CellSortUniform`]), each particle's key and each cell's count (the model's pass
        /// wrote them), the start table, the scan's block sums, the cells' fill, the order of
        /// arrival and the order.
        pub fn bind(&self, device: &wgpu::Device, buffers: [&wgpu::Buffer; 8]) -> CellSortGroups {
            CellSortGroups(std::array::from_fn(|i| {
                let used = PASSES[i].1.iter().map(|&b| (b, buffers[b.index as usize]));
                self.0[i].bind(device, &used.collect::<Vec<_>>())
            }))
        }

        /// The sort of `n` particles over `cells` cells, in `pass` (after the counts).
        pub fn encode(
            &self,
            pass: &mut wgpu::ComputePass<'_>,
            g: &CellSortGroups,
            n: usize,
            cells: usize,
        ) {
            let x = [groups(cells), 1, groups(cells), groups(n), groups(n)];
            for ((kernel, group), x) in self.0.iter().zip(&g.0).zip(x) {
                kernel.dispatch(pass, group, x);
            }
        }
    }

    /// The uniform `CellSort` of cell_sort.wgsl.
    #[repr(C)]
    #[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
    pub struct CellSortUniform {
        pub n: u32,
        pub cells: u32,
        pub _p0: u32,
        pub _p1: u32,
    }
}
