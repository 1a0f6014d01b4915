//! Bloom (bloom.wgsl): the light above a threshold spread through a mip chain, and the glow
//! the tone pass adds (bloom plus the sunrays). Mirrors cpu/bloom.rs (`Chain::run`).

use crate::display::effects::{level_sizes, rays_level};
use crate::fluid::Effects;
use crate::gpu::kernel::{Binding, Dispatcher, Kernel, groups2, module, storage, uniform};
use bytemuck::{Pod, Zeroable};

/// The `@binding`s of bloom.wgsl.
pub(crate) mod binding {
    use super::Binding;
    pub const Q: Binding = Binding::new(0, "Q");
    pub const M: Binding = Binding::new(1, "M");
    pub const SRC: Binding = Binding::new(2, "src");
    pub const AUX: Binding = Binding::new(3, "aux");
    pub const DST: Binding = Binding::new(4, "dst");
    #[cfg(test)]
    pub const ALL: &[Binding] = &[Q, M, SRC, AUX, DST];
}

/// `Mip` in bloom.wgsl and sunrays.wgsl: the level a dispatch reads and the one it writes.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable, Default, Debug)]
pub(crate) struct MipUniform {
    pub src_w: u32,
    pub src_h: u32,
    pub dst_w: u32,
    pub dst_h: u32,
}

impl MipUniform {
    pub fn new(src: (usize, usize), dst: (usize, usize)) -> Self {
        Self {
            src_w: src.0 as u32,
            src_h: src.1 as u32,
            dst_w: dst.0 as u32,
            dst_h: dst.1 as u32,
        }
    }
}

/// A dispatch: its bind group and the size it covers.
struct Step {
    group: wgpu::BindGroup,
    size: (usize, usize),
}

/// The chain's buffers and bind groups for one frame size.
struct Target {
    frame: (usize, usize),
    sizes: Vec<(usize, usize)>,
    /// Each level's down and up (vec4 per texel).
    down: Vec<wgpu::Buffer>,
    /// The sunrays, at the size of level `rays_level(sizes)`.
    rays: wgpu::Buffer,
    /// The glow, at level 0's size (what the tone pass samples).
    glow: wgpu::Buffer,
    prefilter: Step,
    downs: Vec<Step>,
    /// `ups[k]` writes level k (from level k + 1), for k below the coarsest.
    ups: Vec<Step>,
    glow_step: Step,
    /// Kept alive for the bind groups.
    _up: Vec<wgpu::Buffer>,
    _mips: Vec<wgpu::Buffer>,
}

/// The bloom passes; their target is rebuilt only when the frame size changes.
pub(crate) struct Bloom {
    prefilter: Kernel,
    down: Kernel,
    up: Kernel,
    glow: Kernel,
    target: Option<Target>,
}

impl Bloom {
    pub fn new(device: &wgpu::Device) -> Self {
        let m = module(device, "bloom");
        Self {
            prefilter: Kernel::new(device, &m, "bloom_prefilter"),
            down: Kernel::new(device, &m, "bloom_down"),
            up: Kernel::new(device, &m, "bloom_up"),
            glow: Kernel::new(device, &m, "bloom_glow"),
            target: None,
        }
    }

    /// Build the levels for a `frame` of `light` (call whenever colorize rebuilds its target).
    pub fn bind(
        &mut self,
        device: &wgpu::Device,
        picture: &wgpu::Buffer,
        light: &wgpu::Buffer,
        frame: (usize, usize),
    ) {
        use binding::*;
        let sizes = level_sizes(frame.0, frame.1);
        let texels = |(w, h): (usize, usize)| (16 * w * h) as u64;
        let down: Vec<_> = sizes
            .iter()
            .map(|&s| storage(device, "Buffer: bloom down", texels(s)))
            .collect();
        let up: Vec<_> = sizes
            .iter()
            .map(|&s| storage(device, "Buffer: bloom up", texels(s)))
            .collect();
        let r = rays_level(&sizes);
        let rays = storage(device, "Buffer: sunrays", texels(sizes[r]));
        let glow = storage(device, "Buffer: glow", texels(sizes[0]));
        let mut mips = Vec::new();
        let mut mip = |src, dst| {
            let b = uniform(device, "Uniform: bloom mip", &MipUniform::new(src, dst));
            mips.push(b);
            mips.len() - 1
        };
        let pre = mip(frame, sizes[0]);
        let downs_m: Vec<usize> = (1..sizes.len())
            .map(|k| mip(sizes[k - 1], sizes[k]))
            .collect();
        let ups_m: Vec<usize> = (0..sizes.len() - 1)
            .map(|k| mip(sizes[k + 1], sizes[k]))
            .collect();
        let glow_m = mip(sizes[r], sizes[0]);
        let last = sizes.len() - 1;
        let prefilter = Step {
            group: self.prefilter.bind(
                device,
                &[(Q, picture), (M, &mips[pre]), (SRC, light), (DST, &down[0])],
            ),
            size: sizes[0],
        };
        let downs = (1..sizes.len())
            .map(|k| Step {
                group: self.down.bind(
                    device,
                    &[
                        (M, &mips[downs_m[k - 1]]),
                        (SRC, &down[k - 1]),
                        (DST, &down[k]),
                    ],
                ),
                size: sizes[k],
            })
            .collect();
        let ups = (0..last)
            .map(|k| {
                // The coarsest level's up is its down.
                let coarse = if k + 1 == last {
                    &down[last]
                } else {
                    &up[k + 1]
                };
                Step {
                    group: self.up.bind(
                        device,
                        &[
                            (Q, picture),
                            (M, &mips[ups_m[k]]),
                            (SRC, coarse),
                            (AUX, &down[k]),
                            (DST, &up[k]),
                        ],
                    ),
                    size: sizes[k],
                }
            })
            .collect();
        let base = if last == 0 { &down[0] } else { &up[0] };
        let glow_step = Step {
            group: self.glow.bind(
                device,
                &[
                    (Q, picture),
                    (M, &mips[glow_m]),
                    (SRC, &rays),
                    (AUX, base),
                    (DST, &glow),
                ],
            ),
            size: sizes[0],
        };
        self.target = Some(Target {
            frame,
            sizes,
            down,
            rays,
            glow,
            prefilter,
            downs,
            ups,
            glow_step,
            _up: up,
            _mips: mips,
        });
    }

    fn target(&self) -> &Target {
        self.target.as_ref().expect("bind made the target")
    }

    /// The glow buffer and its size (level 0).
    pub fn glow(&self) -> (&wgpu::Buffer, (usize, usize)) {
        let t = self.target();
        (&t.glow, t.sizes[0])
    }

    /// The level the sunrays read (its down buffer and size) and their buffer.
    pub fn rays_source(&self) -> (&wgpu::Buffer, (usize, usize), &wgpu::Buffer) {
        let t = self.target();
        let r = rays_level(&t.sizes);
        (&t.down[r], t.sizes[r], &t.rays)
    }

    /// Whether the target was built for `frame`.
    pub fn fits(&self, frame: (usize, usize)) -> bool {
        self.target.as_ref().is_some_and(|t| t.frame == frame)
    }

    /// Prefilter and go down the chain (as deep as `fx` needs), then back up; the sunrays
    /// (`rays`, encoded in between by the caller) and the glow follow. Returns whether there
    /// is a glow at all.
    pub fn encode_down_up(&self, d: &mut Dispatcher, fx: &Effects) -> bool {
        if fx.bloom <= 0.0 && fx.rays <= 0.0 {
            return false;
        }
        let t = self.target();
        let go = |d: &mut Dispatcher, k: &Kernel, s: &Step| {
            d.go(k, &s.group, groups2(s.size.0, s.size.1));
        };
        go(d, &self.prefilter, &t.prefilter);
        let deepest = if fx.bloom > 0.0 {
            t.sizes.len() - 1
        } else {
            rays_level(&t.sizes)
        };
        for s in &t.downs[..deepest] {
            go(d, &self.down, s);
        }
        if fx.bloom > 0.0 {
            for s in t.ups.iter().rev() {
                go(d, &self.up, s);
            }
        }
        true
    }

    /// Combine bloom and sunrays into the glow.
    pub fn encode_glow(&self, d: &mut Dispatcher) {
        let s = &self.target().glow_step;
        d.go(&self.glow, &s.group, groups2(s.size.0, s.size.1));
    }
}
