//! Small wgpu helpers: compute kernels with their layouts, buffers, bind groups, and a
//! dispatcher that can record, issue, or issue indirectly (for passes the GPU itself decides
//! to run).

use bytemuck::Pod;
use wgpu::util::DeviceExt;

/// Workgroup edge of every 2D pass; mirrors `WG` in `shaders/common.wgsl`.
pub const WORKGROUP: u32 = 16;

/// A compute pipeline and the layout of its bind group 0 (derived from the entry point, so it
/// lists only the bindings that entry uses).
pub struct Kernel {
    pub pipeline: wgpu::ComputePipeline,
    pub layout: wgpu::BindGroupLayout,
    pub label: &'static str,
}

impl Kernel {
    pub fn new(device: &wgpu::Device, module: &wgpu::ShaderModule, entry: &'static str) -> Self {
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(entry),
            layout: None,
            module,
            entry_point: Some(entry),
            compilation_options: Default::default(),
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
    pub fn bind(&self, device: &wgpu::Device, entries: &[(u32, &wgpu::Buffer)]) -> wgpu::BindGroup {
        let entries: Vec<wgpu::BindGroupEntry> = entries
            .iter()
            .map(|(binding, buffer)| wgpu::BindGroupEntry {
                binding: *binding,
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

/// How dispatches are issued.
pub enum Dispatch<'a> {
    /// Directly, with the given sizes.
    Direct,
    /// Not at all: the sizes are appended to a table (to build indirect arguments).
    Record(&'a mut Vec<[u32; 3]>),
    /// Indirectly, from consecutive argument triples of a buffer starting at `next`.
    Indirect { args: &'a wgpu::Buffer, next: u64 },
}

impl Dispatch<'_> {
    /// Dispatch `kernel` with `bind` over `x` by `y` workgroups.
    pub fn go(
        &mut self,
        pass: &mut Option<wgpu::ComputePass<'_>>,
        kernel: &Kernel,
        bind: &wgpu::BindGroup,
        x: u32,
        y: u32,
    ) {
        match self {
            Dispatch::Record(table) => table.push([x, y, 1]),
            Dispatch::Direct => {
                if let Some(pass) = pass {
                    pass.set_pipeline(&kernel.pipeline);
                    pass.set_bind_group(0, bind, &[]);
                    pass.dispatch_workgroups(x, y, 1);
                }
            }
            Dispatch::Indirect { args, next } => {
                if let Some(pass) = pass {
                    pass.set_pipeline(&kernel.pipeline);
                    pass.set_bind_group(0, bind, &[]);
                    pass.dispatch_workgroups_indirect(args, *next);
                }
                *next += 12;
            }
        }
    }

    /// Whether this only records sizes.
    pub fn recording(&self) -> bool {
        matches!(self, Dispatch::Record(_))
    }
}
