//! Streamlines (streamlines.wgsl): a model's traced lines drawn and composited over the
//! finished frame in two dispatches of one compute pass. Mirrors cpu/streamlines.rs. The code
//! buffer is made at the first frame with lines and follows the frame's size: a picture whose
//! frames have no streamlines holds none.

use crate::display::streamlines::Lines;
use crate::gpu::kernel::{Binding, Dispatcher, Kernel, folded, groups2, module, storage, uniform};

/// The `@binding`s of streamlines.wgsl.
pub(crate) mod binding {
    use super::Binding;
    pub const S: Binding = Binding::new(0, "S");
    pub const VERTS: Binding = Binding::new(1, "verts");
    pub const COVER: Binding = Binding::new(2, "cover");
    pub const FRAME: Binding = Binding::new(3, "frame");
    #[cfg(test)]
    pub const ALL: &[Binding] = &[S, VERTS, COVER, FRAME];
}

/// Threads per workgroup of the 1D passes (`SW` in streamlines.wgsl and
/// streamline_trace.wgsl).
pub const SW: u32 = 256;

/// The streamlines' uniform (`Stream` in common.wgsl), for the trace and the drawing.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct StreamUniform {
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
    /// For `lines` traced over a `grid` of cells (the drawing reads no grid: `(0, 0)`).
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

/// Workgroups (folded into two dimensions past the per-axis limit) covering `n` items of a
/// 1D pass of `SW` threads a workgroup (at least one).
pub fn groups1(n: usize) -> (u32, u32) {
    folded(n.div_ceil(SW as usize).max(1))
}

/// The code buffer and bind groups of the current frame and vertex buffer.
struct Bound {
    cover: wgpu::Buffer,
    size: (usize, usize),
    /// The vertices and frame the groups are for.
    verts: wgpu::Buffer,
    frame: wgpu::Buffer,
    draw: wgpu::BindGroup,
    composite: wgpu::BindGroup,
}

/// The streamlines' drawing.
pub(crate) struct Streamlines {
    draw: Kernel,
    composite: Kernel,
    uniform: wgpu::Buffer,
    bound: Option<Bound>,
}

impl Streamlines {
    pub fn new(device: &wgpu::Device) -> Self {
        let m = module(device, "streamlines");
        Self {
            draw: Kernel::new(device, &m, "draw_streamlines"),
            composite: Kernel::new(device, &m, "composite_streamlines"),
            uniform: uniform(device, "Uniform: streamlines", &StreamUniform::default()),
            bound: None,
        }
    }

    /// The code buffer and bind groups for `lines` drawn from `verts` over `frame`, made or
    /// remade as needed.
    fn bind(
        &mut self,
        device: &wgpu::Device,
        lines: &Lines,
        verts: &wgpu::Buffer,
        frame: &wgpu::Buffer,
    ) {
        use binding::*;
        let fits = self
            .bound
            .as_ref()
            .is_some_and(|x| x.size == lines.frame && &x.verts == verts && &x.frame == frame);
        if fits {
            return;
        }
        // Keep the codes for a frame this size.
        let old_cover = self
            .bound
            .take()
            .and_then(|x| (x.size == lines.frame).then_some(x.cover));
        let (w, h) = lines.frame;
        let cover = old_cover
            .unwrap_or_else(|| storage(device, "Buffer: streamline codes", (w * h * 4) as u64));
        let u = &self.uniform;
        self.bound = Some(Bound {
            draw: self
                .draw
                .bind(device, &[(S, u), (VERTS, verts), (COVER, &cover)]),
            composite: self
                .composite
                .bind(device, &[(S, u), (COVER, &cover), (FRAME, frame)]),
            cover,
            size: lines.frame,
            verts: verts.clone(),
            frame: frame.clone(),
        });
    }

    /// Draw `lines` from `verts` (canvas units, `steps + 1` per seed, seeds in order) over
    /// `frame`: the codes cleared, then a compute pass drawing and compositing them.
    pub fn encode(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        lines: &Lines,
        verts: &wgpu::Buffer,
        frame: &wgpu::Buffer,
    ) {
        self.bind(device, lines, verts, frame);
        let u = StreamUniform::new(lines, (0, 0));
        queue.write_buffer(&self.uniform, 0, bytemuck::bytes_of(&u));
        let bound = self.bound.as_ref().expect("bound above");
        encoder.clear_buffer(&bound.cover, 0, None);
        let mut d = Dispatcher::direct(encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("display.streamlines"),
            timestamp_writes: None,
        }));
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
