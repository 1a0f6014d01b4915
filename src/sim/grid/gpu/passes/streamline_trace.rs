//! Streamline trace (streamline_trace.wgsl): each line traced through the grid's velocity into
//! a vertex buffer, which the picture draws over the finished frame
//! (`display::gpu::streamlines`). Mirrors cpu/streamline_trace.rs. The vertex buffer is made at
//! the first frame with lines and grows as needed: a solver whose frames have no streamlines
//! holds none.

use crate::display::gpu::streamlines::{StreamUniform, groups1};
use crate::display::streamlines::Lines;
use crate::gpu::kernel::{Binding, Dispatcher, Kernel, module, storage, uniform};
use crate::sim::grid::gpu::buffers::Buffers;

/// The `@binding`s of streamline_trace.wgsl.
pub(in crate::sim) mod binding {
    use super::Binding;
    pub const S: Binding = Binding::new(0, "S");
    pub const U: Binding = Binding::new(1, "u");
    pub const V: Binding = Binding::new(2, "v");
    pub const SOLID: Binding = Binding::new(3, "solid");
    pub const VERTS: Binding = Binding::new(4, "verts");
    #[cfg(test)]
    pub const ALL: &[Binding] = &[S, U, V, SOLID, VERTS];
}

/// The vertex buffer and its bind groups.
struct Bound {
    verts: wgpu::Buffer,
    /// Vertices the buffer holds.
    capacity: usize,
    /// `[velocity parity]`.
    trace: [wgpu::BindGroup; 2],
}

/// The trace pass.
pub(in crate::sim::grid::gpu) struct StreamlineTrace {
    trace: Kernel,
    uniform: wgpu::Buffer,
    bound: Option<Bound>,
}

impl StreamlineTrace {
    pub fn new(device: &wgpu::Device) -> Self {
        let m = module(device, "streamline_trace");
        Self {
            trace: Kernel::new(device, &m, "trace_streamlines"),
            uniform: uniform(
                device,
                "Uniform: streamline trace",
                &StreamUniform::default(),
            ),
            bound: None,
        }
    }

    /// The vertex buffer and bind groups for `lines`, made (or remade larger) as needed.
    fn bind(&mut self, device: &wgpu::Device, b: &Buffers, lines: &Lines) {
        use binding::*;
        let needed = lines.vertices();
        if self.bound.as_ref().is_some_and(|x| x.capacity >= needed) {
            return;
        }
        let capacity = needed.next_power_of_two();
        let bytes = (capacity * std::mem::size_of::<[f32; 2]>()) as u64;
        let verts = storage(device, "Buffer: streamline vertices", bytes);
        let u = &self.uniform;
        self.bound = Some(Bound {
            trace: [0, 1].map(|i| {
                self.trace.bind(
                    device,
                    &[
                        (S, u),
                        (U, &b.u[i]),
                        (V, &b.v[i]),
                        (SOLID, &b.solid),
                        (VERTS, &verts),
                    ],
                )
            }),
            verts,
            capacity,
        });
    }

    /// Trace `lines` over a `grid` through velocity `vel` in a compute pass of `encoder`; the
    /// buffer of their vertices (canvas units, `steps + 1` per seed, seeds in order).
    #[allow(clippy::too_many_arguments)]
    pub fn encode(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        b: &Buffers,
        lines: &Lines,
        grid: (usize, usize),
        vel: usize,
    ) -> &wgpu::Buffer {
        self.bind(device, b, lines);
        let u = StreamUniform::new(lines, grid);
        queue.write_buffer(&self.uniform, 0, bytemuck::bytes_of(&u));
        let bound = self.bound.as_ref().expect("bound above");
        let mut d = Dispatcher::direct(encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("grid.trace_streamlines"),
            timestamp_writes: None,
        }));
        d.go(&self.trace, &bound.trace[vel], groups1(lines.seeds()));
        drop(d);
        &bound.verts
    }
}
