//! Small wgpu helpers: compute kernels with their layouts, buffers, bind groups, and a
//! dispatcher that can record, issue, or issue indirectly (for passes the GPU itself decides
//! to run).

use bytemuck::Pod;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use wgpu::util::DeviceExt;

/// Workgroup edge of every 2D pass; mirrors `WG` in `shaders/common.wgsl`.
pub const WORKGROUP: u32 = 16;

/// A named `@group(0) @binding(index)` slot of a WGSL pass. `name` is the WGSL global at that
/// slot; the shader tests (`sim::shader_tests`) check the two agree for every pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Binding {
    pub index: u32,
    pub name: &'static str,
}

impl Binding {
    pub const fn new(index: u32, name: &'static str) -> Self {
        Self { index, name }
    }
}

/// The shader module of pass `name` (`shaders/<name>.wgsl` after `common.wgsl`).
pub fn module(device: &wgpu::Device, name: &str) -> wgpu::ShaderModule {
    device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(name),
        source: wgpu::ShaderSource::Wgsl(super::shaders::source(name).into()),
    })
}

/// The module of particle stage `stage` (`shaders/particle_<stage>.wgsl`) in `dim` (2 or 3)
/// dimensions.
pub fn particle_module(device: &wgpu::Device, stage: &str, dim: usize) -> wgpu::ShaderModule {
    let label = format!("{stage}_{dim}d");
    device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(&label),
        source: wgpu::ShaderSource::Wgsl(super::shaders::particle_source(stage, dim).into()),
    })
}

/// A compute pipeline and the layout of its bind group 0 (derived from the entry point, so it
/// lists only the bindings that entry uses).
pub struct Kernel {
    pub pipeline: wgpu::ComputePipeline,
    pub layout: wgpu::BindGroupLayout,
    pub label: &'static str,
}

impl Kernel {
    /// Run this kernel over `group` in `pass`, `x` workgroups.
    pub fn dispatch(&self, pass: &mut wgpu::ComputePass<'_>, group: &wgpu::BindGroup, x: u32) {
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, group, &[]);
        pass.dispatch_workgroups(x, 1, 1);
    }

    pub fn new(device: &wgpu::Device, module: &wgpu::ShaderModule, entry: &'static str) -> Self {
        Self::build(device, module, entry, true)
    }

    /// A kernel whose workgroup memory is not zeroed first: for entries that write every
    /// workgroup cell before they read it (zeroing a tile of workgroup memory costs each
    /// workgroup a pass over it and a barrier).
    pub fn without_zeroed_workgroup_memory(
        device: &wgpu::Device,
        module: &wgpu::ShaderModule,
        entry: &'static str,
    ) -> Self {
        Self::build(device, module, entry, false)
    }

    fn build(
        device: &wgpu::Device,
        module: &wgpu::ShaderModule,
        entry: &'static str,
        zero_workgroup_memory: bool,
    ) -> Self {
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(entry),
            layout: None,
            module,
            entry_point: Some(entry),
            compilation_options: wgpu::PipelineCompilationOptions {
                zero_initialize_workgroup_memory: zero_workgroup_memory,
                ..Default::default()
            },
            cache: None,
        });
        let layout = pipeline.get_bind_group_layout(0);
        Self {
            pipeline,
            layout,
            label: entry,
        }
    }

    /// A bind group for this kernel from `(binding, buffer)` pairs.
    pub fn bind(
        &self,
        device: &wgpu::Device,
        entries: &[(Binding, &wgpu::Buffer)],
    ) -> wgpu::BindGroup {
        let entries: Vec<wgpu::BindGroupEntry> = entries
            .iter()
            .map(|(binding, buffer)| wgpu::BindGroupEntry {
                binding: binding.index,
                resource: buffer.as_entire_binding(),
            })
            .collect();
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(self.label),
            layout: &self.layout,
            entries: &entries,
        })
    }
}

/// A storage buffer of `bytes` (rounded up to 16), zeroed.
pub fn storage(device: &wgpu::Device, label: &str, bytes: u64) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: bytes.max(16).div_ceil(16) * 16,
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// A storage buffer holding `data`.
pub fn storage_init<T: Pod>(device: &wgpu::Device, label: &str, data: &[T]) -> wgpu::Buffer {
    let mut bytes = bytemuck::cast_slice::<T, u8>(data).to_vec();
    bytes.resize(bytes.len().max(16).div_ceil(16) * 16, 0);
    device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some(label),
        contents: &bytes,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
    })
}

/// A uniform buffer holding `value`, rewritable.
pub fn uniform<T: Pod>(device: &wgpu::Device, label: &str, value: &T) -> wgpu::Buffer {
    device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some(label),
        contents: bytemuck::bytes_of(value),
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
    })
}

/// Workgroups to cover `n` items.
pub fn groups(n: usize) -> u32 {
    (n as u32).div_ceil(WORKGROUP)
}

/// Most workgroups a dispatch may have along one axis (WebGPU's
/// `maxComputeWorkgroupsPerDimension` default).
pub const MAX_GROUPS_PER_AXIS: u32 = 65_535;

/// `groups` workgroups of a 1D pass folded into 2D: at most [`MAX_GROUPS_PER_AXIS`] along x,
/// as many rows of them as needed (the shader's item: `gid.y * (groups in x * threads) +
/// gid.x`). None for none.
pub fn folded(groups: usize) -> (u32, u32) {
    let groups = groups as u32;
    let x = groups.min(MAX_GROUPS_PER_AXIS);
    (x, if x == 0 { 0 } else { groups.div_ceil(x) })
}

/// Workgroups to cover a `w x h` grid.
pub fn groups2(w: usize, h: usize) -> (u32, u32) {
    (groups(w), groups(h))
}

/// How dispatches are issued.
pub enum Mode<'a> {
    /// Directly, with the given sizes.
    Direct,
    /// Not at all: the sizes are appended to a table (to build indirect arguments).
    Record(&'a mut Vec<[u32; 3]>),
    /// Indirectly, from consecutive argument triples of a buffer starting at `next`.
    Indirect { args: &'a wgpu::Buffer, next: u64 },
}

/// Where the passes' dispatches go: one labelled compute pass (none when recording), and how
/// they are issued. Every pass's `encode` takes one; dropping it ends the compute pass.
pub struct Dispatcher<'a, 'e> {
    mode: Mode<'a>,
    pass: Option<wgpu::ComputePass<'e>>,
    /// Counts the dispatches issued (the bench's `passes` table).
    issued: Option<Arc<AtomicU32>>,
}

impl<'a, 'e> Dispatcher<'a, 'e> {
    /// Dispatches issued directly into `pass`.
    pub fn direct(pass: wgpu::ComputePass<'e>) -> Self {
        Self {
            mode: Mode::Direct,
            pass: Some(pass),
            issued: None,
        }
    }

    /// Dispatches issued into `pass` from the argument triples of `args`, in order.
    pub fn indirect(pass: wgpu::ComputePass<'e>, args: &'a wgpu::Buffer) -> Self {
        Self {
            mode: Mode::Indirect { args, next: 0 },
            pass: Some(pass),
            issued: None,
        }
    }

    /// Dispatch sizes appended to `table`, nothing issued.
    pub fn record(table: &'a mut Vec<[u32; 3]>) -> Self {
        Self {
            mode: Mode::Record(table),
            pass: None,
            issued: None,
        }
    }

    /// Count the dispatches issued (direct or indirect, even those of size zero: each still
    /// costs the GPU a barrier) in `counter`, when given.
    pub fn counted(mut self, counter: Option<Arc<AtomicU32>>) -> Self {
        self.issued = counter;
        self
    }

    /// Dispatch `kernel` with `bind` over `(x, y)` workgroups.
    pub fn go(&mut self, kernel: &Kernel, bind: &wgpu::BindGroup, (x, y): (u32, u32)) {
        match &mut self.mode {
            Mode::Record(table) => table.push([x, y, 1]),
            Mode::Direct => {
                if let Some(pass) = &mut self.pass {
                    pass.set_pipeline(&kernel.pipeline);
                    pass.set_bind_group(0, bind, &[]);
                    pass.dispatch_workgroups(x, y, 1);
                }
                self.count();
            }
            Mode::Indirect { args, next } => {
                if let Some(pass) = &mut self.pass {
                    pass.set_pipeline(&kernel.pipeline);
                    pass.set_bind_group(0, bind, &[]);
                    pass.dispatch_workgroups_indirect(args, *next);
                }
                *next += 12;
                self.count();
            }
        }
    }

    fn count(&self) {
        if let Some(c) = &self.issued {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }
}
