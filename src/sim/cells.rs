//! What the particle models' neighbour grids share (the 2D liquid's `sph::neighbours` and the
//! 3D liquid's `liquid3d::hash`): a stable counting sort of particles by cell key, and the
//! reordering of their data by it. The grids themselves (their cells, keys and neighbourhoods)
//! are each model's own.

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
}

/// The same sort on the GPU (`shaders/cell_sort.wgsl`), for the particle models' GPU steps: a
/// model's own pass writes each particle's key and counts its cell; these passes turn the
/// counts into the start table and the order, exactly the CPU's ([`sort_by_cell`]).
pub mod gpu {
    use crate::gpu::kernel::Binding;

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
