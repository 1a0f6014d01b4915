//! Streamlines (streamlines.wgsl): traced, drawn and composited over the finished frame in
//! three dispatches of one compute pass. Mirrors cpu/streamlines.rs. The vertex and code
//! buffers are made at the first frame with lines and grow (or follow the frame's size) as
//! needed: a solver whose frames have no streamlines holds none.

use crate::gpu::kernel::{Binding, Dispatcher, Kernel, groups2, module, storage, uniform};
use crate::sim::grid::gpu::buffers::Buffers;
use crate::sim::grid::streamlines::Lines;

/// The `@binding`s of streamlines.wgsl.
pub(in crate::sim) mod binding {
    use super::Binding;
    pub const S: Binding = Binding::new(0, "S");
    pub const U: Binding = Binding::new(1, "u");
    pub const V: Binding = Binding::new(2, "v");
    pub const SOLID: Binding = Binding::new(3, "solid");
    pub const VERTS: Binding = Binding::new(4, "verts");
    pub const COVER: Binding = Binding::new(5, "cover");
    pub const FRAME: Binding = Binding::new(6, "frame");
    #[cfg(test)]
    pub const ALL: &[Binding] = &[S, U, V, SOLID, VERTS, COVER, FRAME];
}

/// Threads per workgroup of the 1D passes (`SW` in streamlines.wgsl).
const SW: u32 = 256;

/// The pass's uniform (`Stream` in streamlines.wgsl).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub(in crate::sim) struct StreamUniform {
    pub w: u32,
    pub h: u32,
    pub out_w: u32,
    pub out_h: u32,
    pub cols: u32,
    pub rows: u32,
    pub steps: u32,
    pub alone: u32,
    pub dt: f32,
    pub aspect: f32,
    pub half: f32,
    pub _pad0: f32,
    pub sx: f32,
    pub sy: f32,
    pub _pad1: f32,
    pub _pad2: f32,
}

impl StreamUniform {
    /// For `lines` over a `grid` of cells.
    pub fn new(lines: &Lines, grid: (usize, usize)) -> Self {
        let (sx, sy) = lines.scale();
        Self {
            w: grid.0 as u32,
            h: grid.1 as u32,
            out_w: lines.frame.0 as u32,
            out_h: lines.frame.1 as u32,
            cols: lines.cols as u32,
            rows: lines.rows as u32,
            steps: lines.steps as u32,
            alone: u32::from(lines.alone),
            dt: lines.h,
            aspect: lines.aspect,
            half: lines.half,
            sx,
            sy,
            ..Self::default()
        }
    }
}

/// Workgroups (two-dimensional past the 65 535 limit) covering `n` items of the 1D passes.
fn groups1(n: usize) -> (u32, u32) {
    let g = (n as u32).div_ceil(SW).max(1);
    if g <= 65_535 {
        (g, 1)
    } else {
        (65_535, g.div_ceil(65_535))
    }
}

/// The buffers and bind groups of the current frame's size and vertex count.
struct Bound {
    verts: wgpu::Buffer,
    /// Vertices the buffer holds.
    capacity: usize,
    cover: wgpu::Buffer,
    /// The frame the codes and the composite are for.
    frame: wgpu::Buffer,
    size: (usize, usize),
    /// `[velocity parity]`.
    trace: [wgpu::BindGroup; 2],
    draw: wgpu::BindGroup,
    composite: wgpu::BindGroup,
}

/// The streamlines pass.
pub(in crate::sim::grid::gpu) struct Streamlines {
    trace: Kernel,
    draw: Kernel,
    composite: Kernel,
    uniform: wgpu::Buffer,
    bound: Option<Bound>,
}

impl Streamlines {
    pub fn new(device: &wgpu::Device) -> Self {
        let m = module(device, "streamlines");
        Self {
            trace: Kernel::new(device, &m, "trace_streamlines"),
            draw: Kernel::new(device, &m, "draw_streamlines"),
            composite: Kernel::new(device, &m, "composite_streamlines"),
            uniform: uniform(device, "Uniform: streamlines", &StreamUniform::default()),
            bound: None,
        }
    }

    /// The buffers and bind groups for `lines` drawn over `frame`, made or remade as needed.
    fn bind(&mut self, device: &wgpu::Device, b: &Buffers, lines: &Lines, frame: &wgpu::Buffer) {
        use binding::*;
        let needed = lines.vertices();
        let fits = self
            .bound
            .as_ref()
            .is_some_and(|x| x.capacity >= needed && x.size == lines.frame && &x.frame == frame);
        if fits {
            return;
        }
        // Keep what still fits: the vertices for as many, the codes for a frame this size.
        let (old_verts, old_cover) = match self.bound.take() {
            Some(x) => (
                (x.capacity >= needed).then_some((x.verts, x.capacity)),
                (x.size == lines.frame).then_some(x.cover),
            ),
            None => (None, None),
        };
        let (verts, capacity) = old_verts.unwrap_or_else(|| {
            let capacity = needed.next_power_of_two();
            let bytes = (capacity * std::mem::size_of::<[f32; 2]>()) as u64;
            (
                storage(device, "Buffer: streamline vertices", bytes),
                capacity,
            )
        });
        let (w, h) = lines.frame;
        let cover = old_cover
            .unwrap_or_else(|| storage(device, "Buffer: streamline codes", (w * h * 4) as u64));
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
            draw: self
                .draw
                .bind(device, &[(S, u), (VERTS, &verts), (COVER, &cover)]),
            composite: self
                .composite
                .bind(device, &[(S, u), (COVER, &cover), (FRAME, frame)]),
            verts,
            capacity,
            cover,
            frame: frame.clone(),
            size: lines.frame,
        });
    }

    /// Clear the codes, before the compute pass that draws `lines` over `frame`.
    #[allow(clippy::too_many_arguments)]
    pub fn prepare(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        b: &Buffers,
        lines: &Lines,
        grid: (usize, usize),
        frame: &wgpu::Buffer,
    ) {
        self.bind(device, b, lines, frame);
        let u = StreamUniform::new(lines, grid);
        queue.write_buffer(&self.uniform, 0, bytemuck::bytes_of(&u));
        let bound = self.bound.as_ref().expect("bound above");
        encoder.clear_buffer(&bound.cover, 0, None);
    }

    /// Trace `lines` through velocity `vel`, draw them and composite them over the frame
    /// (after [`Streamlines::prepare`]).
    pub fn encode(&self, d: &mut Dispatcher, lines: &Lines, vel: usize) {
        let bound = self.bound.as_ref().expect("prepared");
        d.go(&self.trace, &bound.trace[vel], groups1(lines.seeds()));
        d.go(
            &self.draw,
            &bound.draw,
            groups1(lines.seeds() * lines.steps),
        );
        d.go(
            &self.composite,
            &bound.composite,
            groups2(lines.frame.0, lines.frame.1),
        );
    }
}
