//! The pressure solve on the finest grid (pressure.wgsl): the warm start's scaling and the
//! Jacobi iterations. Red-black Gauss-Seidel and the V-cycles, which
//! also run on coarse grids, are in [`super::Multigrid`]. Mirrors cpu/pressure.rs
//! (`scale_warm_start`, `jacobi`, and with obstacles `jacobi_faces` and the warm start's
//! residual with couplings).

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
    /// Jacobi q -> scratch and scratch -> q, and the final copy scratch -> q.
    jacobi: [wgpu::BindGroup; 2],
    copy: wgpu::BindGroup,
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
    jacobi: Kernel,
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

impl Pressure {
    pub fn new(
        device: &wgpu::Device,
        m: &wgpu::ShaderModule,
        b: &Buffers,
        s: &Sizes,
        reduce: &Reduce,
    ) -> Self {
        use binding::*;
        let jacobi = Kernel::new(device, m, "jacobi");
        let jacobi_copy = Kernel::new(device, m, "jacobi_copy");
        let residual = Kernel::new(device, m, "residual");
        let scale_warm_start = Kernel::new(device, m, "scale_warm_start");
        let nc = s.nc();
        let tmp = storage(device, "Buffer: pressure scratch", bytes_f32(nc));
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
            Target {
                jacobi: [
                    jacobi.bind(device, &[(L, &u0), (Q_IN, q), (Q, &tmp), (B, &b.b)]),
                    jacobi.bind(device, &[(L, &u0), (Q_IN, &tmp), (Q, q), (B, &b.b)]),
                ],
                copy: jacobi_copy.bind(device, &[(L, &u0), (Q_IN, &tmp), (Q, q)]),
                neg_a: residual.bind(device, &[(L, &u0), (Q_IN, q), (B, &zeros), (R, &neg_aq)]),
                dots: reduce.reduction(device, &b.b, Some(&neg_aq), nc, dots_slot),
                scale: scale_warm_start
                    .bind(device, &[(L, &u_scale), (Q, q), (RESULTS, &b.results)]),
            }
        };
        let target = target(&b.q, slot::DOTS);
        Self {
            jacobi,
            jacobi_copy,
            residual,
            scale_warm_start,
            jacobi_faces: Kernel::new(device, m, "jacobi_faces"),
            residual_faces: Kernel::new(device, m, "residual_faces"),
            target,
            faces: None,
            level0: u0,
            tmp,
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
        let tg = &self.target;
        for it in 0..iterations {
            let parity = it as usize % 2;
            match &self.faces {
                Some(f) => d.go(&self.jacobi_faces, &f.jacobi[parity], self.cells),
                None => d.go(&self.jacobi, &tg.jacobi[parity], self.cells),
            }
        }
        if iterations % 2 == 1 {
            d.go(&self.jacobi_copy, &tg.copy, self.cells);
        }
    }
}
