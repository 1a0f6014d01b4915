//! Obstacle overlay (obstacle_overlay.wgsl): the obstacles drawn over the finished frame,
//! after colorize and tone, filled or outlined. Mirrors cpu/obstacle_overlay.rs (`draw`).
//! The pass keeps its own copy of the mask (one `u32` per cell), uploaded when the obstacles
//! change.

use crate::fluid::mask::Mask;
use crate::fluid::{OBSTACLE_FILL_RGB8, OBSTACLE_OUTLINE_RGB8, ObstacleStyle};
use crate::gpu::kernel::{Binding, Dispatcher, Kernel, groups2, module, storage_init, uniform};

/// The `@binding`s of obstacle_overlay.wgsl.
pub(crate) mod binding {
    use super::Binding;
    pub const O: Binding = Binding::new(0, "O");
    pub const MASK: Binding = Binding::new(1, "mask");
    pub const FRAME: Binding = Binding::new(2, "frame");
    #[cfg(test)]
    pub const ALL: &[Binding] = &[O, MASK, FRAME];
}

/// Half the outline's width in pixels on a 720-pixel frame, its reference height, and its
/// least half width: `display::cpu::obstacle_overlay`'s `OUTLINE_HALF_PX`,
/// `OUTLINE_REFERENCE_HEIGHT_PX` and `OUTLINE_MIN_HALF_PX` (mirrored, not imported; the parity
/// test holds them together).
const OUTLINE_HALF_PX: f32 = 1.0;
const OUTLINE_REFERENCE_HEIGHT_PX: f32 = 720.0;
const OUTLINE_MIN_HALF_PX: f32 = 0.75;

/// The pass's uniform (`Overlay` in obstacle_overlay.wgsl).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct OverlayUniform {
    pub w: u32,
    pub h: u32,
    pub out_w: u32,
    pub out_h: u32,
    pub outline: u32,
    pub half: f32,
    pub k: f32,
    pub rgb: u32,
}

impl OverlayUniform {
    /// For a `grid` drawn into a `frame` in `style`; `None` when nothing is drawn.
    pub fn new(style: ObstacleStyle, grid: (usize, usize), frame: (usize, usize)) -> Option<Self> {
        let (outline, [r, g, b]) = match style {
            ObstacleStyle::Fill => (0, OBSTACLE_FILL_RGB8),
            ObstacleStyle::Outline => (1, OBSTACLE_OUTLINE_RGB8),
            ObstacleStyle::Hidden => return None,
        };
        let half = (OUTLINE_HALF_PX * frame.1 as f32 / OUTLINE_REFERENCE_HEIGHT_PX)
            .max(OUTLINE_MIN_HALF_PX);
        let kx = frame.0 as f32 / grid.0.max(1) as f32;
        let ky = frame.1 as f32 / grid.1.max(1) as f32;
        Some(Self {
            w: grid.0 as u32,
            h: grid.1 as u32,
            out_w: frame.0 as u32,
            out_h: frame.1 as u32,
            outline,
            half,
            k: kx.min(ky).max(2.0 * half + 1.0),
            rgb: u32::from(r) | u32::from(g) << 8 | u32::from(b) << 16,
        })
    }
}

/// The overlay pass: its kernel, uniform, mask and the bind group for the current frame.
pub(crate) struct ObstacleOverlay {
    kernel: Kernel,
    uniform: wgpu::Buffer,
    /// The mask on the GPU and its grid size, when there are obstacles.
    mask: Option<(wgpu::Buffer, (usize, usize))>,
    /// The bind group for the current mask and frame target (rebuilt when either changes).
    group: Option<wgpu::BindGroup>,
}

impl ObstacleOverlay {
    pub fn new(device: &wgpu::Device) -> Self {
        let m = module(device, "obstacle_overlay");
        Self {
            kernel: Kernel::new(device, &m, "obstacle_overlay"),
            uniform: uniform(
                device,
                "Uniform: obstacle overlay",
                &OverlayUniform::default(),
            ),
            mask: None,
            group: None,
        }
    }

    /// Upload `mask` (already at the grid's size), or drop it (`None`: nothing is drawn).
    pub fn set_mask(&mut self, device: &wgpu::Device, mask: Option<&Mask>) {
        self.mask = mask.map(|m| {
            let cells: Vec<u32> = m.cells().iter().map(|&s| u32::from(s)).collect();
            let buffer = storage_init(device, "Buffer: obstacle mask", &cells);
            (buffer, (m.width(), m.height()))
        });
        self.group = None;
    }

    /// Whether there is a mask to draw.
    pub fn has_mask(&self) -> bool {
        self.mask.is_some()
    }

    /// The frame target changed (colorize rebuilt it): bind again at the next encode.
    pub fn unbind(&mut self) {
        self.group = None;
    }

    /// Draw the obstacles over `frame` (`size` pixels) in `style`, when there are any.
    pub fn encode(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        d: &mut Dispatcher,
        frame: &wgpu::Buffer,
        size: (usize, usize),
        style: ObstacleStyle,
    ) {
        use binding::*;
        let Some((mask, grid)) = &self.mask else {
            return;
        };
        let Some(u) = OverlayUniform::new(style, *grid, size) else {
            return;
        };
        queue.write_buffer(&self.uniform, 0, bytemuck::bytes_of(&u));
        let group = self.group.get_or_insert_with(|| {
            self.kernel
                .bind(device, &[(O, &self.uniform), (MASK, mask), (FRAME, frame)])
        });
        d.go(&self.kernel, group, groups2(size.0, size.1));
    }
}
