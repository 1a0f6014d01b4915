//! The pressure solve on the finest grid (pressure.wgsl): the warm start's scaling and the
//! Jacobi iterations. Red-black Gauss-Seidel and the V-cycles, which
//! also run on coarse grids, are in [`super::Multigrid`]. Mirrors cpu/pressure.rs
//! (`scale_warm_start`, `jacobi`, and with obstacles `jacobi_faces` and the warm start's
//! residual with couplings).

use super::multigrid::SMOOTH_TILE;
use super::obstacles::LevelFaces;
use super::reduce::{Reduce, Reduction, slot};
use crate::gpu::kernel::{Binding, Dispatcher, Kernel, groups2, storage, uniform};
use crate::sim::grid::gpu::buffers::{Buffers, Sizes, bytes_f32};
use bytemuck::{Pod, Zeroable};

/// The `@binding`s of pressure.wgsl (shared with [`super::Multigrid`]).
pub(in crate::sim) mod binding {
    use super::Binding;
    pub const L: Binding = Binding::new(0, "L");
    pub const Q_IN: Binding = Binding::new(1, "q_in");
    pub const Q: Binding = Binding::new(2, "q");
    pub const B: Binding = Binding::new(3, "b");
    pub const R: Binding = Binding::new(4, "r");
    pub const RTAP_FIRST: Binding = Binding::new(5, "rtap_first");
    pub const RTAP_FRAC: Binding = Binding::new(6, "rtap_frac");
    pub const PTAP: Binding = Binding::new(7, "ptap");
    pub const RESULTS: Binding = Binding::new(8, "results");
    pub const FACE_X: Binding = Binding::new(9, "face_x");
    pub const FACE_Y: Binding = Binding::new(10, "face_y");
    pub const INV_DIAG: Binding = Binding::new(11, "inv_diag");
    pub const REGION: Binding = Binding::new(12, "region");
    pub const TAIL: Binding = Binding::new(13, "tail");
    #[cfg(test)]
    pub const ALL: &[Binding] = &[
        L, Q_IN, Q, B, R, RTAP_FIRST, RTAP_FRAC, PTAP, RESULTS, FACE_X, FACE_Y, INV_DIAG, REGION,
        TAIL,
    ];
}

/// `Level` in pressure.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable, Default)]
pub(in crate::sim) struct LevelUniform {
    pub w: u32,
    pub h: u32,
    /// Red-black colour for `rb_sor`; the results slot for `scale_warm_start`.
    pub colour: u32,
    /// The other size in transfers; 1 for a coarsest solve that keeps its warm start.
    pub cw: u32,
    pub cx: f32,
    pub cy: f32,
    pub omega: f32,
    /// Sweeps of a coarsest solve; red-black sweeps per dispatch of `rb_smooth`.
    pub sweeps: u32,
    /// The coarse level's rows in `residual_restrict`.
    pub ch: u32,
    pub _pad: [u32; 3],
}

impl LevelUniform {
    /// The finest level: the projection's grid with the unit operator.
    pub(in crate::sim::grid::gpu) fn finest(s: &Sizes) -> Self {
        Self {
            w: s.w as u32,
            h: s.h as u32,
            cx: 1.0,
            cy: 1.0,
            omega: 1.0,
            ..Default::default()
        }
    }
}

/// The bind groups on the projection's pressure.
struct Target {
    /// Jacobi iterations two a dispatch between q and the scratch.
    jacobi: PingPong,
    /// `aq = -A q` (a residual with b = 0), the dots and the scale of the warm start.
    neg_a: wgpu::BindGroup,
    dots: Reduction,
    scale: wgpu::BindGroup,
}

/// The bind groups on the projection's pressure around obstacles (the kernels with
/// couplings).
struct FacesTarget {
    jacobi: [wgpu::BindGroup; 2],
    neg_a: wgpu::BindGroup,
}

/// Warm start and Jacobi on the finest grid.
pub(in crate::sim::grid::gpu) struct Pressure {
    jacobi_block: Kernel,
    jacobi_copy: Kernel,
    residual: Kernel,
    scale_warm_start: Kernel,
    jacobi_faces: Kernel,
    residual_faces: Kernel,
    target: Target,
    /// With obstacles.
    faces: Option<FacesTarget>,
    /// The finest level's uniform, the Jacobi scratch, zeros and `-A q`.
    level0: wgpu::Buffer,
    tmp: wgpu::Buffer,
    zeros: wgpu::Buffer,
    neg_aq: wgpu::Buffer,
    /// The projection's pressure and right-hand side.
    q: wgpu::Buffer,
    b: wgpu::Buffer,
    cells: (u32, u32),
}

/// Most Jacobi iterations one `jacobi_block` dispatch runs (`JH` in pressure.wgsl).
pub(in crate::sim) const JACOBI_BLOCK_ITERATIONS: u32 = 2;

/// A level's unknowns relaxed out of place in tiles (`rb_smooth`, `jacobi_block`): up to
/// `per_dispatch` sweeps or iterations a dispatch, from one of two buffers into the other (0:
/// the unknowns, 1: a scratch), and a copy (`jacobi_copy`) back into the unknowns.
pub(in crate::sim::grid::gpu) struct PingPong {
    /// `[from][sweeps - 1]`.
    blocks: [[wgpu::BindGroup; 2]; 2],
    /// The scratch into the unknowns.
    copy: wgpu::BindGroup,
    per_dispatch: u32,
    tiles: (u32, u32),
    cells: (u32, u32),
}

impl PingPong {
    /// `kernel`'s bind groups on the level of uniform `level` (its `sweeps` set here) between
    /// `sides` (the unknowns, the scratch) with right-hand side `b`; `copy`: `jacobi_copy`.
    pub fn new(
        device: &wgpu::Device,
        (kernel, copy): (&Kernel, &Kernel),
        level: LevelUniform,
        sides: [&wgpu::Buffer; 2],
        b: &wgpu::Buffer,
        per_dispatch: u32,
    ) -> Self {
        use binding::*;
        let u = [1, 2]
            .map(|sweeps| uniform(device, "Uniform: blocks", &LevelUniform { sweeps, ..level }));
        let blocks = [0, 1].map(|from| {
            [0, 1].map(|k| {
                let entries = [
                    (L, &u[k]),
                    (Q_IN, sides[from]),
                    (Q, sides[1 - from]),
                    (B, b),
                ];
                kernel.bind(device, &entries)
            })
        });
        let copy = copy.bind(device, &[(L, &u[0]), (Q_IN, sides[1]), (Q, sides[0])]);
        let (w, h) = (level.w as usize, level.h as usize);
        Self {
            blocks,
            copy,
            per_dispatch,
            tiles: (
                w.div_ceil(SMOOTH_TILE) as u32,
                h.div_ceil(SMOOTH_TILE) as u32,
            ),
            cells: groups2(w, h),
        }
    }

    /// `sweeps` of `kernel` on the unknowns in buffer `from`; the buffer that holds them
    /// after.
    pub fn encode(
        &self,
        d: &mut Dispatcher,
        kernel: &Kernel,
        mut from: usize,
        sweeps: u32,
    ) -> usize {
        let mut left = sweeps;
        while left > 0 {
            let n = left.min(self.per_dispatch);
            d.go(kernel, &self.blocks[from][n as usize - 1], self.tiles);
            from = 1 - from;
            left -= n;
        }
        from
    }

    /// [`PingPong::encode`], then the unknowns back into buffer 0 (`copy`: `jacobi_copy`).
    pub fn encode_home(
        &self,
        d: &mut Dispatcher,
        (kernel, copy): (&Kernel, &Kernel),
        from: usize,
        sweeps: u32,
    ) {
        let side = self.encode(d, kernel, from, sweeps);
        self.copy_home(d, copy, side);
    }

    /// The unknowns back into buffer 0 when they are in the scratch (`side` 1).
    pub fn copy_home(&self, d: &mut Dispatcher, copy: &Kernel, side: usize) {
        if side == 1 {
            d.go(copy, &self.copy, self.cells);
        }
    }
}

impl Pressure {
    pub fn new(
        device: &wgpu::Device,
        m: &wgpu::ShaderModule,
        b: &Buffers,
        s: &Sizes,
        reduce: &Reduce,
    ) -> Self {
        use binding::*;
        // It writes each cell of its workgroup memory before reading it.
        let jacobi_block = Kernel::without_zeroed_workgroup_memory(device, m, "jacobi_block");
        let jacobi_copy = Kernel::new(device, m, "jacobi_copy");
        let residual = Kernel::new(device, m, "residual");
        let scale_warm_start = Kernel::new(device, m, "scale_warm_start");
        let nc = s.nc();
        let zeros = storage(device, "Buffer: zeros", bytes_f32(nc));
        let neg_aq = storage(device, "Buffer: residual", bytes_f32(nc));
        let level0 = LevelUniform::finest(s);
        let u0 = uniform(device, "Uniform: level 0", &level0);
        let target = |q: &wgpu::Buffer, dots_slot: u32| {
            let u_scale = uniform(
                device,
                "Uniform: warm-start scale",
                &LevelUniform {
                    colour: dots_slot,
                    ..level0
                },
            );
            let kernels = (&jacobi_block, &jacobi_copy);
            let sides = [q, &b.q_scratch];
            Target {
                jacobi: PingPong::new(
                    device,
                    kernels,
                    level0,
                    sides,
                    &b.b,
                    JACOBI_BLOCK_ITERATIONS,
                ),
                neg_a: residual.bind(device, &[(L, &u0), (Q_IN, q), (B, &zeros), (R, &neg_aq)]),
                dots: reduce.reduction(device, &b.b, Some(&neg_aq), nc, dots_slot),
                scale: scale_warm_start
                    .bind(device, &[(L, &u_scale), (Q, q), (RESULTS, &b.results)]),
            }
        };
        let target = target(&b.q, slot::DOTS);
        Self {
            jacobi_block,
            jacobi_copy,
            residual,
            scale_warm_start,
            jacobi_faces: Kernel::new(device, m, "jacobi_faces"),
            residual_faces: Kernel::new(device, m, "residual_faces"),
            target,
            faces: None,
            level0: u0,
            tmp: b.q_scratch.clone(),
            zeros,
            neg_aq,
            q: b.q.clone(),
            b: b.b.clone(),
            cells: groups2(s.w, s.h),
        }
    }

    /// Solve around obstacles with the finest level's couplings `f` (`None`: the plain
    /// kernels).
    pub fn set_faces(&mut self, device: &wgpu::Device, f: Option<&LevelFaces>) {
        use binding::*;
        self.faces = f.map(|f| {
            // The relaxation reads the inverse diagonal too, the residual only the couplings.
            let relax = [(FACE_X, &f.x), (FACE_Y, &f.y), (INV_DIAG, &f.inv)];
            let residual = &relax[..2];
            let bind = |k: &Kernel, c: &[(Binding, &wgpu::Buffer)], more: &[_]| {
                let entries: Vec<_> = more.iter().chain(c).copied().collect();
                k.bind(device, &entries)
            };
            let (u0, tmp, b) = (&self.level0, &self.tmp, &self.b);
            let q = &self.q;
            FacesTarget {
                jacobi: [
                    bind(
                        &self.jacobi_faces,
                        &relax,
                        &[(L, u0), (Q_IN, q), (Q, tmp), (B, b)],
                    ),
                    bind(
                        &self.jacobi_faces,
                        &relax,
                        &[(L, u0), (Q_IN, tmp), (Q, q), (B, b)],
                    ),
                ],
                neg_a: bind(
                    &self.residual_faces,
                    residual,
                    &[(L, u0), (Q_IN, q), (B, &self.zeros), (R, &self.neg_aq)],
                ),
            }
        });
    }

    /// Scale the warm start so it never hurts: q *= argmin_s |b - s A q|.
    pub fn encode_warm_start(&self, d: &mut Dispatcher, reduce: &Reduce) {
        let tg = &self.target;
        match &self.faces {
            Some(f) => d.go(&self.residual_faces, &f.neg_a, self.cells),
            None => d.go(&self.residual, &tg.neg_a, self.cells),
        }
        reduce.encode(d, &tg.dots);
        d.go(&self.scale_warm_start, &tg.scale, self.cells);
    }

    /// `iterations` Jacobi iterations, the result back in the pressure.
    pub fn encode_jacobi(&self, d: &mut Dispatcher, iterations: u32) {
        let jacobi = &self.target.jacobi;
        let Some(f) = &self.faces else {
            // Two iterations a dispatch, tiled in workgroup memory.
            let kernels = (&self.jacobi_block, &self.jacobi_copy);
            jacobi.encode_home(d, kernels, 0, iterations);
            return;
        };
        // Where the pressure is after them: 0 in q, 1 in the scratch.
        let mut side = 0;
        for _ in 0..iterations {
            d.go(&self.jacobi_faces, &f.jacobi[side], self.cells);
            side = 1 - side;
        }
        jacobi.copy_home(d, &self.jacobi_copy, side);
    }
}
