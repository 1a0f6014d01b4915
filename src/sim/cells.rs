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
