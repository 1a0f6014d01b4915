//! The dye cells near obstacles, found once per mask: both solvers advect them again without
//! sampling solids (the CPU from [`NearSolids::within`], the GPU from a prefix of
//! [`NearSolids::cells`] chosen on the GPU).

/// A cell's eight neighbours, as (column, row) offsets.
pub const NEIGHBOURS: [(isize, isize); 8] = [
    (-1, -1),
    (0, -1),
    (1, -1),
    (-1, 0),
    (1, 0),
    (-1, 1),
    (0, 1),
    (1, 1),
];

/// The fluid dye cells near solids, by distance: the cells that dye advection takes again so
/// that no sample is taken from inside a solid (cpu `advect_dye_near_solids`,
/// advect.wgsl `advect_dye_near_solids`).
#[derive(Clone, Debug)]
pub struct NearSolids {
    /// Fluid cells within [`NearSolids::MAX_CELLS`] of a solid, nearest first.
    cells: Vec<u32>,
    /// `ends[d]`: how many of them are within `d` cells (chessboard distance).
    ends: Vec<usize>,
}

impl NearSolids {
    /// The farthest a listed cell lies from a solid, in dye cells. A trace longer than this
    /// (over 64 dye cells in one step) may still touch a solid corner unrenormalised.
    pub const MAX_CELLS: usize = 64;

    /// For a dye grid `dw` wide whose solid cells are flagged in `solid`.
    pub fn new(solid: &[bool], dw: usize) -> Self {
        let dh = solid.len() / dw.max(1);
        // Breadth-first chessboard distance from the solids, up to MAX_CELLS.
        let mut dist = vec![u16::MAX; solid.len()];
        let mut front: Vec<usize> = (0..solid.len()).filter(|&c| solid[c]).collect();
        for &c in &front {
            dist[c] = 0;
        }
        let mut cells = Vec::new();
        let mut ends = vec![0];
        for d in 1..=Self::MAX_CELLS as u16 {
            let mut next = Vec::new();
            for &c in &front {
                let (i, j) = ((c % dw) as isize, (c / dw) as isize);
                for (di, dj) in NEIGHBOURS {
                    let (ni, nj) = (i + di, j + dj);
                    if ni < 0 || nj < 0 || ni >= dw as isize || nj >= dh as isize {
                        continue;
                    }
                    let n = nj as usize * dw + ni as usize;
                    if dist[n] == u16::MAX {
                        dist[n] = d;
                        next.push(n);
                        cells.push(n as u32);
                    }
                }
            }
            ends.push(cells.len());
            front = next;
        }
        Self { cells, ends }
    }

    /// Every listed cell, nearest first (the GPU takes a prefix of it per step).
    pub fn cells(&self) -> &[u32] {
        &self.cells
    }

    /// `ends()[d]`: how many listed cells are within `d` dye cells of a solid, `d` in
    /// `0..=MAX_CELLS`.
    pub fn ends(&self) -> &[usize] {
        &self.ends
    }

    /// The cells a trace of up to `reach` dye cells can carry to a solid corner (plus one cell
    /// for the bilinear footprint).
    pub fn within(&self, reach: f32) -> &[u32] {
        let d = if reach.is_finite() {
            (reach.max(0.0).ceil() as usize + 1).min(Self::MAX_CELLS)
        } else {
            Self::MAX_CELLS
        };
        &self.cells[..self.ends[d]]
    }
}
