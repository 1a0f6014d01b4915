//! Obstacles on the GPU (obstacles.wgsl): the solid mask in the forms the passes use, built once
//! per [`Obstacles::set`] (never per step), and the boundary rules that are passes of their own:
//! closing solid faces, clearing dye in solids, and the per-region mean-free pressure
//! right-hand side. Mirrors cpu/obstacles.rs. The finest level's couplings (which Jacobi,
//! red-black and the multigrid's finest level read) and the multigrid's coarse node graphs are
//! made here with the code the CPU uses (`sim::obstacles::faces`: `Faces::from_mask`,
//! `Regions`; `sim::obstacles::nodes::Hierarchy`), so both backends solve the same equations;
//! [`super::Pressure`], [`super::Multigrid`] and [`super::Advect`] bind them.
//!
//! Without a mask nothing here is dispatched and every other pass runs its plain kernels: the
//! GPU runs exactly the code it ran before obstacles existed.

use super::reduce::{Reduce, Reduction, slot};
use crate::gpu::kernel::{
    Binding, Dispatcher, Kernel, folded, module, storage, storage_init, uniform,
};
use crate::sim::grid::gpu::buffers::{Buffers, Sizes};
use crate::sim::multigrid::LevelPlan;
use crate::sim::obstacles::Mask;
use crate::sim::obstacles::faces::{Faces, Regions};
use crate::sim::obstacles::near::NearSolids;
use crate::sim::obstacles::nodes::Hierarchy;
use bytemuck::{Pod, Zeroable};

/// Threads per workgroup of the 1D list passes (`LW` in obstacles.wgsl and advect.wgsl).
pub(in crate::sim) const LIST_THREADS: usize = 256;
/// Region cells summed by one workgroup of `region_partial` (16 per thread).
const CHUNK_CELLS: usize = 16 * LIST_THREADS;

/// The `@binding`s of obstacles.wgsl.
pub(in crate::sim) mod binding {
    use super::Binding;
    pub const S: Binding = Binding::new(0, "S");
    pub const LIST_U: Binding = Binding::new(1, "list_u");
    pub const LIST_V: Binding = Binding::new(2, "list_v");
    pub const U: Binding = Binding::new(3, "u");
    pub const V: Binding = Binding::new(4, "v");
    pub const LIST_DYE: Binding = Binding::new(5, "list_dye");
    pub const DYE: Binding = Binding::new(6, "dye");
    pub const D: Binding = Binding::new(7, "d");
    pub const B: Binding = Binding::new(8, "b");
    pub const MEMBERS: Binding = Binding::new(9, "members");
    pub const CHUNKS: Binding = Binding::new(10, "chunks");
    pub const PARTIALS: Binding = Binding::new(11, "partials");
    pub const REGIONS: Binding = Binding::new(12, "regions");
    pub const MEANS: Binding = Binding::new(13, "means");
    pub const LABEL: Binding = Binding::new(14, "label");
    #[cfg(test)]
    pub const ALL: &[Binding] = &[
        S, LIST_U, LIST_V, U, V, LIST_DYE, DYE, D, B, MEMBERS, CHUNKS, PARTIALS, REGIONS, MEANS,
        LABEL,
    ];
}

/// `Solids` in obstacles.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable, Default, Debug)]
pub(in crate::sim) struct SolidsUniform {
    pub closed_u: u32,
    pub closed_v: u32,
    pub solid_dye: u32,
    pub regions: u32,
    pub chunks: u32,
    pub cells: u32,
    pub _p: [u32; 2],
}

/// Workgroups `(x, y)` of a 1D pass over `items` ([`LIST_THREADS`] each), folded into 2D.
pub(in crate::sim::grid::gpu) fn list_groups(items: usize) -> (u32, u32) {
    folded(items.div_ceil(LIST_THREADS))
}

/// The finest level's couplings (natural layout): what the pressure kernels with `_faces`
/// bind (pressure.wgsl bindings 9 to 12).
pub(in crate::sim::grid::gpu) struct LevelFaces {
    /// Vertical and horizontal face couplings.
    pub x: wgpu::Buffer,
    pub y: wgpu::Buffer,
    /// The inverse of each cell's total coupling (0 for a cell with no open face).
    pub inv: wgpu::Buffer,
    /// On the coarsest level: `(region, its cell count)` per cell (`u32::MAX`: none).
    pub region: Option<wgpu::Buffer>,
}

impl LevelFaces {
    fn new(device: &wgpu::Device, faces: &Faces, coarsest: bool) -> Self {
        let (w, h) = (faces.w, faces.h);
        let inv: Vec<f32> = (0..w * h)
            .map(|c| {
                // The CPU's SplitFaces::new, in natural order.
                let d = faces.diagonal(c % w, c / w);
                if d > 0.0 { 1.0 / d } else { 0.0 }
            })
            .collect();
        let region = coarsest.then(|| {
            let regions = Regions::new(faces);
            let table: Vec<[u32; 2]> = regions
                .labels()
                .iter()
                .map(|&l| match regions.sizes().get(l as usize) {
                    Some(&n) => [l, n],
                    None => [u32::MAX, 0],
                })
                .collect();
            storage_init(device, "Buffer: mg regions", &table)
        });
        Self {
            x: storage_init(device, "Buffer: mg couplings x", &faces.x),
            y: storage_init(device, "Buffer: mg couplings y", &faces.y),
            inv: storage_init(device, "Buffer: mg inverse diagonal", &inv),
            region,
        }
    }
}

/// A mask's buffers and bind groups.
pub(in crate::sim::grid::gpu) struct Solids {
    /// The mask at the grid's size.
    pub mask: Mask,
    /// The finest level's couplings.
    pub finest: LevelFaces,
    /// The coarse multigrid levels (none on grids too small for any), until the multigrid
    /// takes them ([`Obstacles::take_nodes`]).
    nodes: Option<Hierarchy>,
    /// Solid flag (u32) per simulation cell.
    pub solid: wgpu::Buffer,
    /// Fluid dye cells near solids, nearest first, and how many lie within each distance.
    pub near: wgpu::Buffer,
    pub near_ends: wgpu::Buffer,
    pub near_count: usize,
    counts: SolidsUniform,
    /// `[velocity parity]`.
    close: [wgpu::BindGroup; 2],
    /// `[dye parity]`.
    clear: [wgpu::BindGroup; 2],
    partial: wgpu::BindGroup,
    mean: wgpu::BindGroup,
    rhs: wgpu::BindGroup,
    /// `[velocity parity]`: the largest |u| and |v| (for the near-solids dye pass).
    speed_u: [Reduction; 2],
    speed_v: [Reduction; 2],
    _buffers: Vec<wgpu::Buffer>,
}

/// The obstacle pass: its kernels (built once) and the current mask's buffers, if any.
pub(in crate::sim::grid::gpu) struct Obstacles {
    close_faces: Kernel,
    clear_solid_dye: Kernel,
    region_partial: Kernel,
    region_mean: Kernel,
    set_rhs: Kernel,
    solids: Option<Solids>,
}

impl Obstacles {
    pub fn new(device: &wgpu::Device) -> Self {
        let m = module(device, "obstacles");
        let k = |entry| Kernel::new(device, &m, entry);
        Self {
            close_faces: k("close_faces"),
            clear_solid_dye: k("clear_solid_dye"),
            region_partial: k("region_partial"),
            region_mean: k("region_mean"),
            set_rhs: k("set_rhs"),
            solids: None,
        }
    }

    /// The current mask's buffers, if there is a mask with any solid cell.
    pub fn solids(&self) -> Option<&Solids> {
        self.solids.as_ref()
    }

    /// The coarse multigrid levels of the mask just set, once: the multigrid uploads them and
    /// keeps no copy on the CPU.
    pub fn take_nodes(&mut self) -> Option<Hierarchy> {
        self.solids.as_mut()?.nodes.take()
    }

    /// Build everything for `mask` (already at the grid's size; `None` or empty: no
    /// obstacles). `plans`: the multigrid levels below the finest.
    pub fn set(
        &mut self,
        device: &wgpu::Device,
        b: &Buffers,
        s: &Sizes,
        plans: &[LevelPlan],
        reduce: &Reduce,
        mask: Option<&Mask>,
    ) {
        self.solids = mask
            .filter(|m| !m.is_empty())
            .map(|m| self.build(device, b, s, plans, reduce, m));
    }

    fn build(
        &self,
        device: &wgpu::Device,
        b: &Buffers,
        s: &Sizes,
        plans: &[LevelPlan],
        reduce: &Reduce,
        mask: &Mask,
    ) -> Solids {
        use binding::*;
        let (w, h) = (s.w, s.h);
        debug_assert_eq!((mask.width(), mask.height()), (w, h));
        // The finest level's couplings and the coarse levels (cpu Multigrid::set_faces).
        let finest = Faces::from_mask(mask);
        let nodes = Hierarchy::new(&finest, plans);
        let finest_faces = LevelFaces::new(device, &finest, plans.is_empty());
        // Closed faces and solid dye cells (cpu Obstacles::new).
        let closed_u: Vec<u32> = (0..h)
            .flat_map(|j| (1..w).map(move |i| (i, j)))
            .filter(|&(i, j)| !mask.u_open(i, j))
            .map(|(i, j)| (j * (w + 1) + i) as u32)
            .collect();
        let closed_v: Vec<u32> = (1..h)
            .flat_map(|j| (0..w).map(move |i| (i, j)))
            .filter(|&(i, j)| !mask.v_open(i, j))
            .map(|(i, j)| (j * w + i) as u32)
            .collect();
        let scale = s.dw / w;
        let solid_dye_flags: Vec<bool> = (0..s.dh)
            .flat_map(|dj| (0..s.dw).map(move |di| (di, dj)))
            .map(|(di, dj)| mask.is_solid(di / scale, dj / scale))
            .collect();
        let solid_dye: Vec<u32> = (0..solid_dye_flags.len() as u32)
            .filter(|&k| solid_dye_flags[k as usize])
            .collect();
        let near = NearSolids::new(&solid_dye_flags, s.dw);
        let near_ends: Vec<u32> = near.ends().iter().map(|&e| e as u32).collect();
        let solid: Vec<u32> = mask.cells().iter().map(|&c| u32::from(c)).collect();
        // The fluid regions' cells, grouped, and their chunks (cpu Regions::remove_means).
        let regions = Regions::new(&finest);
        let mut members: Vec<Vec<u32>> = vec![Vec::new(); regions.count()];
        for (c, &l) in regions.labels().iter().enumerate() {
            if let Some(m) = members.get_mut(l as usize) {
                m.push(c as u32);
            }
        }
        let mut chunks: Vec<[u32; 2]> = Vec::new();
        let mut region_table: Vec<[u32; 4]> = Vec::new();
        let mut flat: Vec<u32> = Vec::with_capacity(w * h);
        for cells in &members {
            let first = chunks.len() as u32;
            for piece in cells.chunks(CHUNK_CELLS) {
                let at = flat.len() as u32;
                flat.extend_from_slice(piece);
                chunks.push([at, flat.len() as u32]);
            }
            region_table.push([first, chunks.len() as u32, cells.len() as u32, 0]);
        }
        let counts = SolidsUniform {
            closed_u: closed_u.len() as u32,
            closed_v: closed_v.len() as u32,
            solid_dye: solid_dye.len() as u32,
            regions: region_table.len() as u32,
            chunks: chunks.len() as u32,
            cells: (w * h) as u32,
            _p: [0; 2],
        };
        let su = uniform(device, "Uniform: solids", &counts);
        let list_u = storage_init(device, "Buffer: closed u faces", &closed_u);
        let list_v = storage_init(device, "Buffer: closed v faces", &closed_v);
        let list_dye = storage_init(device, "Buffer: solid dye cells", &solid_dye);
        let members = storage_init(device, "Buffer: region members", &flat);
        let chunk_buf = storage_init(device, "Buffer: region chunks", &chunks);
        let partials = storage(device, "Buffer: region partials", (chunks.len() * 4) as u64);
        let region_buf = storage_init(device, "Buffer: regions", &region_table);
        let means = storage(
            device,
            "Buffer: region means",
            (region_table.len() * 4) as u64,
        );
        let label = storage_init(device, "Buffer: region labels", regions.labels());
        let close = [0, 1].map(|i| {
            self.close_faces.bind(
                device,
                &[
                    (S, &su),
                    (LIST_U, &list_u),
                    (LIST_V, &list_v),
                    (U, &b.u[i]),
                    (V, &b.v[i]),
                ],
            )
        });
        let clear = [0, 1].map(|i| {
            self.clear_solid_dye
                .bind(device, &[(S, &su), (LIST_DYE, &list_dye), (DYE, &b.dye[i])])
        });
        let partial = self.region_partial.bind(
            device,
            &[
                (S, &su),
                (D, &b.d),
                (MEMBERS, &members),
                (CHUNKS, &chunk_buf),
                (PARTIALS, &partials),
            ],
        );
        let mean = self.region_mean.bind(
            device,
            &[
                (S, &su),
                (PARTIALS, &partials),
                (REGIONS, &region_buf),
                (MEANS, &means),
            ],
        );
        let rhs = self.set_rhs.bind(
            device,
            &[
                (S, &su),
                (D, &b.d),
                (B, &b.b),
                (MEANS, &means),
                (LABEL, &label),
            ],
        );
        let speed = |x: &wgpu::Buffer, n: usize, at: u32| reduce.reduction(device, x, None, n, at);
        Solids {
            mask: mask.clone(),
            finest: finest_faces,
            nodes,
            solid: storage_init(device, "Buffer: solid cells", &solid),
            near: storage_init(device, "Buffer: dye cells near solids", near.cells()),
            near_ends: storage_init(device, "Buffer: near solids by distance", &near_ends),
            near_count: near.cells().len(),
            counts,
            close,
            clear,
            partial,
            mean,
            rhs,
            // v over its first w x h values: the last row is the wall (as the activity probe).
            speed_u: [0, 1].map(|i| speed(&b.u[i], s.nu(), slot::SPEED_U)),
            speed_v: [0, 1].map(|i| speed(&b.v[i], s.nc(), slot::SPEED_V)),
            _buffers: vec![
                su, list_u, list_v, list_dye, members, chunk_buf, partials, region_buf, means,
                label,
            ],
        }
    }

    /// Hold the velocity `vel` through every solid face at 0.
    pub fn encode_close(&self, d: &mut Dispatcher, vel: usize) {
        if let Some(s) = &self.solids {
            let n = (s.counts.closed_u + s.counts.closed_v) as usize;
            if n > 0 {
                d.go(&self.close_faces, &s.close[vel], list_groups(n));
            }
        }
    }

    /// Clear the dye `dye` inside solids.
    pub fn encode_clear(&self, d: &mut Dispatcher, dye: usize) {
        if let Some(s) = &self.solids {
            let n = s.counts.solid_dye as usize;
            if n > 0 {
                d.go(&self.clear_solid_dye, &s.clear[dye], list_groups(n));
            }
        }
    }

    /// The pressure right-hand side from the divergence: -D, mean-free in every fluid
    /// region, 0 in cells with no open face (instead of `divergence_subtract_mean`).
    pub fn encode_rhs(&self, d: &mut Dispatcher) {
        if let Some(s) = &self.solids {
            let c = &s.counts;
            if c.chunks > 0 {
                d.go(&self.region_partial, &s.partial, folded(c.chunks as usize));
                d.go(&self.region_mean, &s.mean, list_groups(c.regions as usize));
            }
            d.go(&self.set_rhs, &s.rhs, list_groups(c.cells as usize));
        }
    }

    /// The largest |u| and |v| of velocity `vel` into their result slots (the near-solids
    /// dye pass reads them: how far this step's traces reach).
    pub fn encode_speed(&self, d: &mut Dispatcher, reduce: &Reduce, vel: usize) {
        if let Some(s) = &self.solids {
            reduce.encode(d, &s.speed_u[vel]);
            reduce.encode(d, &s.speed_v[vel]);
        }
    }
}
