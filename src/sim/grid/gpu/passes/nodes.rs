//! The coarse multigrid levels around obstacles on the GPU (nodes.wgsl): the node graphs of
//! `sim::obstacles::nodes`, uploaded and bound once per mask ([`Nodes::set`]), and the coarse
//! correction of one V-cycle ([`Nodes::encode`]). Mirrors cpu pressure/nodes.rs.

use super::obstacles::list_groups;
use crate::gpu::kernel::{Binding, Dispatcher, Kernel, module, storage, storage_init, uniform};
use crate::sim::grid::gpu::buffers::bytes_f32;
use crate::sim::multigrid::{COARSEST_OMEGA, NodeSweeps, coarsest_sweeps};
use crate::sim::obstacles::nodes::{Coarsest, Hierarchy, NodeLevel};
use bytemuck::{Pod, Zeroable};

/// The `@binding`s of nodes.wgsl.
pub(in crate::sim) mod binding {
    use super::Binding;
    pub const N: Binding = Binding::new(0, "N");
    pub const E: Binding = Binding::new(1, "e");
    pub const B: Binding = Binding::new(2, "b");
    pub const R: Binding = Binding::new(3, "r");
    pub const START: Binding = Binding::new(4, "start");
    pub const NBR: Binding = Binding::new(5, "nbr");
    pub const WEIGHT: Binding = Binding::new(6, "weight");
    pub const INV: Binding = Binding::new(7, "inv");
    pub const FINE_R: Binding = Binding::new(8, "fine_r");
    pub const CHILD_START: Binding = Binding::new(9, "child_start");
    pub const CHILD: Binding = Binding::new(10, "child");
    pub const FINE_E: Binding = Binding::new(11, "fine_e");
    pub const TAP_NODE: Binding = Binding::new(12, "tap_node");
    pub const TAP_WEIGHT: Binding = Binding::new(13, "tap_weight");
    pub const SOLVE: Binding = Binding::new(14, "solve");
    pub const REGION: Binding = Binding::new(15, "region");
    pub const SUMS: Binding = Binding::new(16, "sums");
    pub const CHILD_WEIGHT: Binding = Binding::new(17, "child_weight");
    pub const LISTED: Binding = Binding::new(18, "listed");
    #[cfg(test)]
    pub const ALL: &[Binding] = &[
        N,
        E,
        B,
        R,
        START,
        NBR,
        WEIGHT,
        INV,
        FINE_R,
        CHILD_START,
        CHILD,
        FINE_E,
        TAP_NODE,
        TAP_WEIGHT,
        SOLVE,
        REGION,
        SUMS,
        CHILD_WEIGHT,
        LISTED,
    ];
}

/// `Nodes` in nodes.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable, Default, Debug)]
pub(in crate::sim) struct NodesUniform {
    pub n: u32,
    pub red: u32,
    pub first: u32,
    pub count: u32,
    pub fine: u32,
    pub omega: f32,
    pub direct: u32,
    pub sweeps: u32,
}

/// One coarse level's bind groups.
struct Level {
    n: usize,
    fine: usize,
    /// Node ranges of the two colours.
    colours: [usize; 2],
    relax: [wgpu::BindGroup; 2],
    /// The nodes in the rows near walls, per colour: how many, and their sweep's bind group
    /// (none without any, and none when every node is near a wall: see `all_near`).
    near: [usize; 2],
    relax_near: Option<[wgpu::BindGroup; 2]>,
    /// Every row is near a wall (the maze): the sweeps near walls run as global ones, the
    /// same updates in one list of dispatches (a colour's nodes do not read each other).
    all_near: bool,
    residual: wgpu::BindGroup,
    restrict: wgpu::BindGroup,
    /// Into the finer level's unknowns.
    prolongate: wgpu::BindGroup,
    /// The last level's solve: dense (else the sweeps).
    coarsest: Option<(wgpu::BindGroup, bool)>,
}

/// The current mask's levels (none without obstacles) and the node-graph kernels, made with
/// the first mask (a solver that never sees obstacles compiles none of them).
pub(in crate::sim::grid::gpu) struct Nodes {
    kernels: Option<Kernels>,
    levels: Vec<Level>,
}

/// The kernels of nodes.wgsl.
struct Kernels {
    relax: Kernel,
    relax_listed: Kernel,
    residual: Kernel,
    restrict: Kernel,
    prolongate: Kernel,
    coarsest_direct: Kernel,
    coarsest_sweeps: Kernel,
}

impl Nodes {
    pub fn new() -> Self {
        Self {
            kernels: None,
            levels: Vec::new(),
        }
    }

    /// Upload `h`'s levels (`None`: no obstacles). `r0`: the finest level's residual; `q0`:
    /// the finest level's unknowns (the projection's pressure).
    pub fn set(
        &mut self,
        device: &wgpu::Device,
        h: Option<&Hierarchy>,
        r0: &wgpu::Buffer,
        q0: &wgpu::Buffer,
    ) {
        self.levels.clear();
        let Some(h) = h else {
            return;
        };
        let kernels = self.kernels.get_or_insert_with(|| Kernels::new(device));
        let mut fine_r = r0.clone();
        let mut fine_e = q0.clone();
        for (k, level) in h.levels.iter().enumerate() {
            let coarsest = (k + 1 == h.levels.len()).then_some(&h.coarsest);
            let (built, e, r) = kernels.level(device, level, coarsest, &fine_r, &fine_e);
            self.levels.push(built);
            fine_r = r;
            fine_e = e;
        }
    }

    /// The coarse correction of one V-cycle, added into the projection's pressure: from the
    /// finest level's residual down every level and back, `sweeps` red-black sweeps before
    /// and after each level's correction.
    pub fn encode(&self, d: &mut Dispatcher, sweeps: NodeSweeps) {
        if let Some(k) = &self.kernels
            && !self.levels.is_empty()
        {
            k.encode_level(d, &self.levels, 0, sweeps);
        }
    }
}

impl Kernels {
    fn new(device: &wgpu::Device) -> Self {
        let m = module(device, "nodes");
        let k = |entry| Kernel::new(device, &m, entry);
        Self {
            relax: k("relax_nodes"),
            relax_listed: k("relax_listed"),
            residual: k("residual_nodes"),
            restrict: k("restrict_nodes"),
            prolongate: k("prolongate_nodes_add"),
            coarsest_direct: k("coarsest_direct"),
            coarsest_sweeps: k("coarsest_sweeps"),
        }
    }

    /// One level's buffers and bind groups; also returns its unknowns and residual.
    fn level(
        &self,
        device: &wgpu::Device,
        lv: &NodeLevel,
        coarsest: Option<&Coarsest>,
        fine_r: &wgpu::Buffer,
        fine_e: &wgpu::Buffer,
    ) -> (Level, wgpu::Buffer, wgpu::Buffer) {
        use binding::*;
        let g = &lv.graph;
        let (n, fine) = (g.len(), lv.tap_node.len());
        let e = storage(device, "Buffer: nodes e", bytes_f32(n));
        let b = storage(device, "Buffer: nodes b", bytes_f32(n));
        let r = storage(device, "Buffer: nodes r", bytes_f32(n));
        let start = storage_init(device, "Buffer: nodes start", &g.start);
        let nbr = storage_init(device, "Buffer: nodes nbr", &g.nbr);
        let weight = storage_init(device, "Buffer: nodes weight", &g.weight);
        let inv = storage_init(device, "Buffer: nodes inv", &g.inverse_diagonal());
        let child_start = storage_init(device, "Buffer: nodes child start", &lv.child_start);
        let child = storage_init(device, "Buffer: nodes child", &lv.child);
        let child_weight = storage_init(device, "Buffer: nodes child weights", &lv.child_weight);
        let tap_node = storage_init(device, "Buffer: nodes taps", &lv.tap_node);
        let tap_weight = storage_init(device, "Buffer: nodes tap weights", &lv.tap_weight);
        let base = NodesUniform {
            n: n as u32,
            red: lv.red as u32,
            fine: fine as u32,
            omega: 1.0,
            ..Default::default()
        };
        let u = uniform(device, "Uniform: nodes", &base);
        let colour_u = [(0, lv.red), (lv.red, n - lv.red)].map(|(first, count)| {
            let c = NodesUniform {
                first: first as u32,
                count: count as u32,
                ..base
            };
            uniform(device, "Uniform: nodes colour", &c)
        });
        let graph = [(START, &start), (NBR, &nbr), (WEIGHT, &weight)];
        let relax = [0, 1].map(|c| {
            let mut entries = vec![(N, &colour_u[c]), (E, &e), (B, &b), (INV, &inv)];
            entries.extend(graph);
            self.relax.bind(device, &entries)
        });
        // The nodes in the rows near walls, red ones first (graph order: red nodes first).
        let rows = lv.near_rows();
        let near_row = {
            let mut at = vec![false; g.h];
            rows.iter().for_each(|&j| at[j as usize] = true);
            at
        };
        let listed: Vec<u32> = (0..n as u32)
            .filter(|&k| near_row[g.cell[k as usize] as usize / g.w.max(1)])
            .collect();
        let near_red = listed.partition_point(|&k| (k as usize) < lv.red);
        let near = [near_red, listed.len() - near_red];
        let all_near = n > 0 && listed.len() == n;
        let relax_near = (!listed.is_empty() && !all_near).then(|| {
            let listed = storage_init(device, "Buffer: nodes near walls", &listed);
            [(0, near[0]), (near[0], near[1])].map(|(first, count)| {
                let c = NodesUniform {
                    first: first as u32,
                    count: count as u32,
                    ..base
                };
                let cu = uniform(device, "Uniform: nodes near walls", &c);
                let mut entries = vec![(N, &cu), (E, &e), (B, &b), (INV, &inv), (LISTED, &listed)];
                entries.extend(graph);
                self.relax_listed.bind(device, &entries)
            })
        });
        let mut entries = vec![(N, &u), (E, &e), (B, &b), (R, &r)];
        entries.extend(graph);
        let residual = self.residual.bind(device, &entries);
        let restrict = self.restrict.bind(
            device,
            &[
                (N, &u),
                (E, &e),
                (B, &b),
                (FINE_R, fine_r),
                (CHILD_START, &child_start),
                (CHILD, &child),
                (CHILD_WEIGHT, &child_weight),
            ],
        );
        let prolongate = self.prolongate.bind(
            device,
            &[
                (N, &u),
                (E, &e),
                (FINE_E, fine_e),
                (TAP_NODE, &tap_node),
                (TAP_WEIGHT, &tap_weight),
            ],
        );
        let coarsest = coarsest.map(|c| {
            let (solve, region, direct): (&[f32], Vec<[u32; 2]>, bool) = match c {
                Coarsest::Direct(s) => (s, Vec::new(), true),
                Coarsest::Sweeps(regions) => (&[], regions.clone(), false),
            };
            let cu = uniform(
                device,
                "Uniform: nodes coarsest",
                &NodesUniform {
                    omega: COARSEST_OMEGA,
                    direct: u32::from(direct),
                    sweeps: coarsest_sweeps(g.w, g.h),
                    ..base
                },
            );
            if direct {
                let solve = storage_init(device, "Buffer: nodes solve", solve);
                let entries = [(N, &cu), (E, &e), (B, &b), (SOLVE, &solve)];
                return (self.coarsest_direct.bind(device, &entries), true);
            }
            let region = storage_init(device, "Buffer: nodes regions", &region);
            let sums = storage(device, "Buffer: nodes sums", bytes_f32(n));
            let mut entries = vec![
                (N, &cu),
                (E, &e),
                (B, &b),
                (INV, &inv),
                (REGION, &region),
                (SUMS, &sums),
            ];
            entries.extend(graph);
            (self.coarsest_sweeps.bind(device, &entries), false)
        });
        let level = Level {
            n,
            fine,
            colours: [lv.red, n - lv.red],
            relax,
            near,
            relax_near,
            all_near,
            residual,
            restrict,
            prolongate,
            coarsest,
        };
        (level, e, r)
    }

    /// Level `k`'s part of the coarse correction (see [`Nodes::encode`]).
    fn encode_level(&self, d: &mut Dispatcher, levels: &[Level], k: usize, sweeps: NodeSweeps) {
        let lv = &levels[k];
        go(d, &self.restrict, &lv.restrict, lv.n);
        match &lv.coarsest {
            Some((c, true)) => go(d, &self.coarsest_direct, c, lv.n),
            Some((c, false)) => {
                if lv.n > 0 {
                    d.go(&self.coarsest_sweeps, c, (1, 1));
                }
            }
            None => {
                self.smooth(d, lv, sweeps, k);
                go(d, &self.residual, &lv.residual, lv.n);
                self.encode_level(d, levels, k + 1, sweeps);
                self.smooth(d, lv, sweeps, k);
            }
        }
        go(d, &self.prolongate, &lv.prolongate, lv.fine);
    }

    /// Level `k`'s smoothing: its sweeps, then those of its rows near walls.
    fn smooth(&self, d: &mut Dispatcher, lv: &Level, sweeps: NodeSweeps, k: usize) {
        let near_too = if lv.all_near { sweeps.near_at(k) } else { 0 };
        for _ in 0..sweeps.at(k) + near_too {
            for (bind, &count) in lv.relax.iter().zip(&lv.colours) {
                go(d, &self.relax, bind, count);
            }
        }
        if let Some(near) = &lv.relax_near {
            for _ in 0..sweeps.near_at(k) {
                for (bind, &count) in near.iter().zip(&lv.near) {
                    go(d, &self.relax_listed, bind, count);
                }
            }
        }
    }
}

/// A 1D dispatch over `items` (none for 0).
fn go(d: &mut Dispatcher, k: &Kernel, bind: &wgpu::BindGroup, items: usize) {
    if items > 0 {
        d.go(k, bind, list_groups(items));
    }
}
