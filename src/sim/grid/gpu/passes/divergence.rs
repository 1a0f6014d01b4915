//! Divergence (divergence.wgsl): the flux divergence D and the pressure right-hand side
//! b = -D, made mean-free; and the compressibility test that decides, on the GPU, whether
//! the next projection runs extra iterations. Mirrors cpu/divergence.rs
//! (`divergence_rhs`, `divergence_norms`, `compressibility`).

use super::reduce::{Reduce, Reduction, slot};
use crate::gpu::kernel::{Binding, Dispatcher, Kernel, groups2, module, storage, uniform};
use crate::sim::grid::gpu::buffers::{Buffers, Sizes};
use crate::sim::grid::physics::REPROJECT_ABOVE_COMPRESSIBILITY;
use bytemuck::{Pod, Zeroable};

/// The `@binding`s of divergence.wgsl.
pub(in crate::sim) mod binding {
    use super::Binding;
    pub const P: Binding = Binding::new(0, "P");
    pub const U: Binding = Binding::new(1, "u");
    pub const V: Binding = Binding::new(2, "v");
    pub const D: Binding = Binding::new(3, "d");
    pub const B: Binding = Binding::new(4, "b");
    pub const M: Binding = Binding::new(5, "M");
    pub const SUMS: Binding = Binding::new(6, "sums");
    pub const DC: Binding = Binding::new(7, "DC");
    pub const TABLE: Binding = Binding::new(8, "table");
    pub const ARGS: Binding = Binding::new(9, "args");
    #[cfg(test)]
    pub const ALL: &[Binding] = &[P, U, V, D, B, M, SUMS, DC, TABLE, ARGS];
}

/// `Mean` (divergence.wgsl) and `Grad` (gradient.wgsl): a result slot and a count.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable, Default)]
pub(in crate::sim) struct SlotUniform {
    pub slot: u32,
    pub count: u32,
    pub _p: [u32; 2],
}

/// `Decide` in divergence.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable, Default)]
pub(in crate::sim) struct DecideUniform {
    pub w: u32,
    pub h: u32,
    pub count: u32,
    pub slot_div: u32,
    pub slot_u: u32,
    pub slot_v: u32,
    pub k: f32,
    pub threshold: f32,
}

/// Which divergence norms a divergence pass measures (each has its result slot).
#[derive(Clone, Copy)]
pub(in crate::sim::grid::gpu) enum Norms {
    /// Before the projection (also fixes its right-hand side's mean).
    Before,
    /// After the projection (statistics only).
    After,
    /// After velocity advection (the compressibility test).
    Advected,
}

/// The divergence pass.
pub(in crate::sim::grid::gpu) struct Divergence {
    divergence: Kernel,
    subtract_mean: Kernel,
    /// `[velocity parity]`.
    groups: [wgpu::BindGroup; 2],
    /// b += mean(D), the mean from the divergence measured before the projection.
    mean: wgpu::BindGroup,
    /// `[Norms]`.
    norms: [Reduction; 3],
    cells: (u32, u32),
}

impl Divergence {
    pub fn new(device: &wgpu::Device, b: &Buffers, s: &Sizes, reduce: &Reduce) -> Self {
        use binding::*;
        let m = module(device, "divergence");
        let divergence = Kernel::new(device, &m, "divergence");
        let subtract_mean = Kernel::new(device, &m, "divergence_subtract_mean");
        let p = &b.uniforms;
        let nc = s.nc();
        let u = uniform(
            device,
            "Uniform: mean",
            &SlotUniform {
                slot: slot::DIV_BEFORE,
                count: nc as u32,
                _p: [0; 2],
            },
        );
        let mean = subtract_mean.bind(device, &[(P, p), (B, &b.b), (M, &u), (SUMS, &b.results)]);
        Self {
            groups: [0, 1].map(|i| {
                divergence.bind(
                    device,
                    &[(P, p), (U, &b.u[i]), (V, &b.v[i]), (D, &b.d), (B, &b.b)],
                )
            }),
            mean,
            norms: [slot::DIV_BEFORE, slot::DIV_AFTER, slot::DIV_ADVECTED]
                .map(|at| reduce.reduction(device, &b.d, None, nc, at)),
            divergence,
            subtract_mean,
            cells: groups2(s.w, s.h),
        }
    }

    /// D and b = -D of velocity `vel`, and D's norms into the `norms` slot.
    pub fn encode(&self, d: &mut Dispatcher, reduce: &Reduce, vel: usize, norms: Norms) {
        d.go(&self.divergence, &self.groups[vel], self.cells);
        reduce.encode(d, &self.norms[norms as usize]);
    }

    /// Make b mean-free (its divergence was measured before).
    pub fn encode_subtract_mean(&self, d: &mut Dispatcher) {
        d.go(&self.subtract_mean, &self.mean, self.cells);
    }
}

/// Bytes of the extra iterations' indirect arguments before any table needs more.
const ARGS_BYTES: u64 = 1024 * 12;

/// The compressibility test after advection: the flow's norms, the divergence, and
/// `compressibility_decide`, which writes the indirect dispatch arguments of the next
/// projection's extra iterations (their full sizes from `table`, or zeros).
pub(in crate::sim::grid::gpu) struct Compressibility {
    decide: Kernel,
    group: wgpu::BindGroup,
    uniform: wgpu::Buffer,
    /// The extra iterations' full dispatch sizes.
    table: wgpu::Buffer,
    count: u32,
    /// What `decide` writes and the extra iterations dispatch from (zeros: none).
    args: wgpu::Buffer,
    /// `[velocity parity]`: u over all faces, v over its first h rows (as the CPU's
    /// compressibility).
    u: [Reduction; 2],
    v: [Reduction; 2],
    sizes: Sizes,
}

fn args_buffer(device: &wgpu::Device, bytes: u64) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("Buffer: extra iterations' dispatches"),
        size: bytes,
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::INDIRECT
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

impl Compressibility {
    /// The test with an empty table (see [`Compressibility::set_table`]).
    pub fn new(device: &wgpu::Device, b: &Buffers, s: &Sizes, reduce: &Reduce) -> Self {
        let m = module(device, "divergence");
        let decide = Kernel::new(device, &m, "compressibility_decide");
        let uniform = uniform(device, "Uniform: decide", &DecideUniform::default());
        let table = storage(device, "Buffer: extra iterations table", 16);
        let args = args_buffer(device, ARGS_BYTES);
        let group = Self::bind(device, &decide, b, &uniform, &table, &args);
        Self {
            u: [0, 1].map(|i| reduce.reduction(device, &b.u[i], None, s.nu(), slot::U)),
            v: [0, 1].map(|i| reduce.reduction(device, &b.v[i], None, s.nc(), slot::V)),
            decide,
            group,
            uniform,
            table,
            count: 0,
            args,
            sizes: *s,
        }
    }

    fn bind(
        device: &wgpu::Device,
        decide: &Kernel,
        b: &Buffers,
        uniform: &wgpu::Buffer,
        table: &wgpu::Buffer,
        args: &wgpu::Buffer,
    ) -> wgpu::BindGroup {
        use binding::*;
        decide.bind(
            device,
            &[
                (SUMS, &b.results),
                (DC, uniform),
                (TABLE, table),
                (ARGS, args),
            ],
        )
    }

    /// Take the extra iterations' dispatch sizes (recorded with `Dispatcher::record`). The
    /// arguments may still hold a decision sized for the old table: [`Compressibility::forget`]
    /// it.
    pub fn set_table(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        b: &Buffers,
        table: &[[u32; 3]],
    ) {
        let flat: Vec<u32> = table.iter().flatten().copied().collect();
        let bytes = (table.len() * 12).max(12) as u64;
        if bytes > self.args.size() {
            self.args = args_buffer(device, bytes);
        }
        self.table =
            crate::gpu::kernel::storage_init(device, "Buffer: extra iterations table", &flat);
        self.count = table.len() as u32;
        let s = &self.sizes;
        let value = DecideUniform {
            w: s.w as u32,
            h: s.h as u32,
            count: self.count,
            slot_div: slot::DIV_ADVECTED,
            slot_u: slot::U,
            slot_v: slot::V,
            k: 0.0,
            threshold: REPROJECT_ABOVE_COMPRESSIBILITY,
        };
        queue.write_buffer(&self.uniform, 0, bytemuck::bytes_of(&value));
        self.group = Self::bind(
            device,
            &self.decide,
            b,
            &self.uniform,
            &self.table,
            &self.args,
        );
    }

    /// This step's trace length `k` (cells per unit velocity).
    pub fn write_k(&self, queue: &wgpu::Queue, k: f32) {
        let at = std::mem::offset_of!(DecideUniform, k) as u64;
        queue.write_buffer(&self.uniform, at, bytemuck::bytes_of(&k));
    }

    /// Dispatches in the extra iterations.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// No extra iterations pending (fields were written: the decision was about another flow).
    pub fn forget(&self, queue: &wgpu::Queue) {
        let zeros = vec![0u8; self.args.size() as usize];
        queue.write_buffer(&self.args, 0, &zeros);
    }

    /// The extra iterations' indirect arguments.
    pub fn args(&self) -> &wgpu::Buffer {
        &self.args
    }

    /// Measure the advected velocity `vel` and its divergence, and decide.
    pub fn encode(&self, d: &mut Dispatcher, reduce: &Reduce, divergence: &Divergence, vel: usize) {
        reduce.encode(d, &self.u[vel]);
        reduce.encode(d, &self.v[vel]);
        divergence.encode(d, reduce, vel, Norms::Advected);
        d.go(&self.decide, &self.group, (self.count.div_ceil(64), 1));
    }
}
