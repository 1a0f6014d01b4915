//! Implicit diffusion (diffuse.wgsl): Jacobi iterations of (1 - a laplacian) x = b for the
//! velocity components (viscosity) and the dye, ping-ponging between the two buffers of each
//! field. Mirrors cpu/diffuse.rs (`diffuse`).

use crate::gpu::kernel::{Binding, Dispatcher, Kernel, groups2, module, storage, uniform};
use crate::sim::grid::gpu::buffers::{Buffers, Sizes, bytes_f32};
use crate::sim::grid::gpu::uniforms::GridUniforms;
use bytemuck::{Pod, Zeroable};

/// The `@binding`s of diffuse.wgsl.
pub(in crate::sim) mod binding {
    use super::Binding;
    pub const D: Binding = Binding::new(0, "D");
    pub const X_IN: Binding = Binding::new(1, "x_in");
    pub const B: Binding = Binding::new(2, "b");
    pub const X_OUT: Binding = Binding::new(3, "x_out");
    pub const C_IN: Binding = Binding::new(4, "c_in");
    pub const CB: Binding = Binding::new(5, "cb");
    pub const C_OUT: Binding = Binding::new(6, "c_out");
    #[cfg(test)]
    pub const ALL: &[Binding] = &[D, X_IN, B, X_OUT, C_IN, CB, C_OUT];
}

/// `Diffuse` in diffuse.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable, Default)]
pub(in crate::sim) struct DiffuseUniform {
    pub nx: u32,
    pub ny: u32,
    /// Boundary rule: 0 none, 1 first and last columns held at 0, 2 first and last rows.
    pub fixed: u32,
    pub _pad: u32,
    pub a: f32,
    pub _p: [f32; 3],
}

/// One diffused field: its uniform, right-hand side and the bind groups `[read parity]`.
struct Field {
    uniform: wgpu::Buffer,
    rhs: wgpu::Buffer,
    groups: [wgpu::BindGroup; 2],
    cells: (u32, u32),
    bytes: u64,
}

/// The diffusion pass: u, v (viscosity) and dye.
pub(in crate::sim::grid::gpu) struct Diffuse {
    diffuse_scalar: Kernel,
    diffuse_dye: Kernel,
    u: Field,
    v: Field,
    dye: Field,
    sizes: Sizes,
}

impl Diffuse {
    pub fn new(device: &wgpu::Device, b: &Buffers, s: &Sizes) -> Self {
        use binding::*;
        let m = module(device, "diffuse");
        let diffuse_scalar = Kernel::new(device, &m, "diffuse_scalar");
        let diffuse_dye = Kernel::new(device, &m, "diffuse_dye");
        let field = |name: &str,
                     kernel: &Kernel,
                     [x_in, rhs_b, x_out]: [Binding; 3],
                     pair: &[wgpu::Buffer; 2],
                     (nx, ny): (usize, usize),
                     channels: usize| {
            let u = uniform(
                device,
                &format!("Uniform: diffuse {name}"),
                &DiffuseUniform::default(),
            );
            let bytes = bytes_f32(nx * ny * channels);
            let rhs = storage(device, &format!("Buffer: {name} rhs"), bytes);
            Field {
                groups: [0, 1].map(|i| {
                    kernel.bind(
                        device,
                        &[
                            (D, &u),
                            (x_in, &pair[i]),
                            (rhs_b, &rhs),
                            (x_out, &pair[1 - i]),
                        ],
                    )
                }),
                uniform: u,
                rhs,
                cells: groups2(nx, ny),
                bytes,
            }
        };
        let scalar = [X_IN, B, X_OUT];
        Self {
            u: field("u", &diffuse_scalar, scalar, &b.u, (s.w + 1, s.h), 1),
            v: field("v", &diffuse_scalar, scalar, &b.v, (s.w, s.h + 1), 1),
            dye: field(
                "dye",
                &diffuse_dye,
                [C_IN, CB, C_OUT],
                &b.dye,
                (s.dw, s.dh),
                4,
            ),
            diffuse_scalar,
            diffuse_dye,
            sizes: *s,
        }
    }

    /// Write this step's coefficients (only for the solves that run).
    pub fn write(&self, queue: &wgpu::Queue, gp: &GridUniforms, velocity: bool, dye: bool) {
        let s = &self.sizes;
        let write = |f: &Field, nx: usize, ny: usize, fixed: u32, a: f32| {
            let value = DiffuseUniform {
                nx: nx as u32,
                ny: ny as u32,
                fixed,
                a,
                ..Default::default()
            };
            queue.write_buffer(&f.uniform, 0, bytemuck::bytes_of(&value));
        };
        if velocity {
            write(&self.u, s.w + 1, s.h, 1, gp.a_visc);
            write(&self.v, s.w, s.h + 1, 2, gp.a_visc);
        }
        if dye {
            write(&self.dye, s.dw, s.dh, 0, gp.a_dye);
        }
    }

    /// Copy velocity `vel` into the right-hand sides (outside any compute pass).
    pub fn keep_velocity(&self, encoder: &mut wgpu::CommandEncoder, b: &Buffers, vel: usize) {
        encoder.copy_buffer_to_buffer(&b.u[vel], 0, &self.u.rhs, 0, self.u.bytes);
        encoder.copy_buffer_to_buffer(&b.v[vel], 0, &self.v.rhs, 0, self.v.bytes);
    }

    /// Copy dye `dye` into its right-hand side (outside any compute pass).
    pub fn keep_dye(&self, encoder: &mut wgpu::CommandEncoder, b: &Buffers, dye: usize) {
        encoder.copy_buffer_to_buffer(&b.dye[dye], 0, &self.dye.rhs, 0, self.dye.bytes);
    }

    /// `iterations` Jacobi iterations of the viscosity solve from velocity `vel`; returns the
    /// parity holding the result.
    pub fn encode_velocity(&self, d: &mut Dispatcher, mut vel: usize, iterations: u32) -> usize {
        for _ in 0..iterations {
            d.go(&self.diffuse_scalar, &self.u.groups[vel], self.u.cells);
            d.go(&self.diffuse_scalar, &self.v.groups[vel], self.v.cells);
            vel = 1 - vel;
        }
        vel
    }

    /// `iterations` Jacobi iterations of the dye diffusion from dye `dye`; returns the parity
    /// holding the result.
    pub fn encode_dye(&self, d: &mut Dispatcher, mut dye: usize, iterations: u32) -> usize {
        for _ in 0..iterations {
            d.go(&self.diffuse_dye, &self.dye.groups[dye], self.dye.cells);
            dye = 1 - dye;
        }
        dye
    }
}
