//! The core's second way of sorting the particles by cell on the GPU
//! (`shaders/bitonic_sort.wgsl`, Lague's): (key, index) pairs of the keys the predict stage
//! wrote, padded to a power of two, sorted by a bitonic merge network, and the order and the
//! start table read off the sorted pairs. It gives the counting sort's order exactly.

use super::groups;
use crate::gpu::kernel::{Binding, Kernel, module, storage, uniform};

/// Pairs per workgroup of the in-memory stages.
pub const BLOCK: usize = 512;

/// The `@binding`s of bitonic_sort.wgsl.
pub mod binding {
    use super::Binding;
    pub const S: Binding = Binding::new(0, "S");
    pub const KEYS: Binding = Binding::new(2, "keys");
    pub const START: Binding = Binding::new(4, "start");
    pub const ORDER: Binding = Binding::new(8, "order");
    pub const PAIRS: Binding = Binding::new(9, "pairs");
    pub const T: Binding = Binding::new(10, "T");
    #[cfg(test)]
    pub const ALL: &[Binding] = &[S, KEYS, START, ORDER, PAIRS, T];
}

/// The uniform `Stage` of bitonic_sort.wgsl: one merge step.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct StageUniform {
    pub k: u32,
    pub j: u32,
    pub _p0: u32,
    pub _p1: u32,
}

/// The sort's length for `n` particles: a power of two, at least a block (the step's uniform
/// carries it as `padded`).
pub fn padded(n: usize) -> usize {
    n.next_power_of_two().max(BLOCK)
}

/// The sort's kernels, built once per device.
pub struct Bitonic {
    key_pairs: Kernel,
    blocks: Kernel,
    local: Kernel,
    global: Kernel,
    pair_starts: Kernel,
}

/// The sort's bind groups over one set of buffers, for up to their capacity of particles.
pub struct BitonicGroups {
    key_pairs: wgpu::BindGroup,
    blocks: wgpu::BindGroup,
    /// Each merge step: `(k, j, group)`; `j == 0` is the in-memory run of half-widths 256..1
    /// of stage `k`.
    stages: Vec<(u32, u32, wgpu::BindGroup)>,
    pair_starts: wgpu::BindGroup,
}

impl Bitonic {
    pub fn new(device: &wgpu::Device) -> Self {
        let m = module(device, "bitonic_sort");
        let k = |entry| Kernel::new(device, &m, entry);
        Self {
            key_pairs: k("key_pairs"),
            blocks: k("bitonic_blocks"),
            local: k("bitonic_local"),
            global: k("bitonic_global"),
            pair_starts: k("pair_starts"),
        }
    }

    /// The bind groups for up to `capacity` particles (a power of two) over the step's
    /// uniform, the keys, the start table and the order.
    pub fn bind(
        &self,
        device: &wgpu::Device,
        capacity: usize,
        [s, keys, start, order]: [&wgpu::Buffer; 4],
    ) -> BitonicGroups {
        use binding::*;
        let pairs = &storage(device, "Particles: sort pairs", (capacity * 8) as u64);
        let mut stages = Vec::new();
        let mut k = 2 * BLOCK;
        while k <= capacity {
            let mut j = k / 2;
            while j >= BLOCK {
                stages.push((k as u32, j as u32));
                j /= 2;
            }
            stages.push((k as u32, 0));
            k *= 2;
        }
        let stages = stages
            .into_iter()
            .map(|(k, j)| {
                let stage = StageUniform {
                    k,
                    j,
                    ..Default::default()
                };
                let t = &uniform(device, "Particles: sort stage", &stage);
                let group = if j == 0 {
                    self.local.bind(device, &[(PAIRS, pairs), (T, t)])
                } else {
                    self.global.bind(device, &[(S, s), (PAIRS, pairs), (T, t)])
                };
                (k, j, group)
            })
            .collect();
        BitonicGroups {
            key_pairs: self
                .key_pairs
                .bind(device, &[(S, s), (KEYS, keys), (PAIRS, pairs)]),
            blocks: self.blocks.bind(device, &[(PAIRS, pairs)]),
            stages,
            pair_starts: self.pair_starts.bind(
                device,
                &[(S, s), (START, start), (ORDER, order), (PAIRS, pairs)],
            ),
        }
    }

    /// Sort `n` particles by their keys, in `pass`: the order and the start table.
    pub fn encode(&self, pass: &mut wgpu::ComputePass<'_>, g: &BitonicGroups, n: usize) {
        let len = padded(n);
        let blocks = (len / BLOCK) as u32;
        self.key_pairs.dispatch(pass, &g.key_pairs, groups(len));
        self.blocks.dispatch(pass, &g.blocks, blocks);
        for (_, j, group) in g.stages.iter().filter(|s| s.0 as usize <= len) {
            if *j == 0 {
                self.local.dispatch(pass, group, blocks);
            } else {
                self.global.dispatch(pass, group, groups(len / 2));
            }
        }
        self.pair_starts
            .dispatch(pass, &g.pair_starts, groups(n + 1));
    }
}
