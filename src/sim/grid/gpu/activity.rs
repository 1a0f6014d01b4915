//! The GPU side of [`Solver::probe_activity`](crate::sim::Solver::probe_activity): the largest
//! |u|, |v| and dye value, reduced on the GPU (reduce.wgsl) into three result slots and read
//! back through one staging buffer without ever waiting. A probe started by one call is read
//! by a later one; until then the last finished measurement is returned.

use super::buffers::{Buffers, Sizes};
use super::passes::reduce::{Reduce, Reduction, slot};
use crate::gpu::GpuContext;
use crate::gpu::kernel::Dispatcher;
use crate::sim::Activity;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

/// The staging buffer is free to start a probe.
const FREE: u8 = 0;
/// A probe was submitted and its mapping requested.
const MAPPING: u8 = 1;
/// The mapping finished: the results can be read.
const READY: u8 = 2;
/// The mapping failed (device lost); the probe is given up and the buffer reused.
const FAILED: u8 = 3;

/// Bytes of the three result slots (vec4 each: sum, sum of squares, max |x|, 0).
const RESULT_BYTES: u64 = 3 * 16;

/// Reductions of the current velocity and dye into the activity slots, and their readback.
pub(crate) struct ActivityProbe {
    /// Per velocity parity.
    u: [Reduction; 2],
    v: [Reduction; 2],
    /// Per dye parity.
    dye: [Reduction; 2],
    staging: wgpu::Buffer,
    /// FREE, MAPPING, READY or FAILED; written by wgpu's mapping callback.
    state: Arc<AtomicU8>,
    /// The tag of the probe in flight.
    tag: u64,
    latest: Option<(u64, Activity)>,
}

impl ActivityProbe {
    /// Reductions over the `u` (all faces), `v` (its first `w x h` values: the last row is
    /// the wall) and RGBA `dye` buffers of both parities.
    pub(crate) fn new(device: &wgpu::Device, reduce: &Reduce, b: &Buffers, s: &Sizes) -> Self {
        let at = slot::ACTIVITY;
        let red =
            |x: &wgpu::Buffer, n: usize, slot: u32| reduce.reduction(device, x, None, n, slot);
        Self {
            u: [0, 1].map(|i| red(&b.u[i], s.nu(), at)),
            v: [0, 1].map(|i| red(&b.v[i], s.nc(), at + 1)),
            dye: [0, 1].map(|i| red(&b.dye[i], s.nd() * 4, at + 2)),
            staging: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("Buffer: activity staging"),
                size: RESULT_BYTES,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
            state: Arc::new(AtomicU8::new(FREE)),
            tag: 0,
            latest: None,
        }
    }

    /// Read a finished probe (if any), start a new one tagged `tag` when the staging buffer
    /// is free, and return the newest finished measurement with its tag. `vel` and `dye` are
    /// the current parities.
    pub(crate) fn probe(
        &mut self,
        ctx: &GpuContext,
        reduce: &Reduce,
        results: &wgpu::Buffer,
        vel: usize,
        dye: usize,
        tag: u64,
    ) -> Option<(u64, Activity)> {
        match self.state.load(Ordering::Acquire) {
            READY => {
                if let Ok(view) = self.staging.slice(..).get_mapped_range() {
                    let r: &[[f32; 4]] = bytemuck::cast_slice(&view);
                    let activity = Activity {
                        max_speed: r[0][2].max(r[1][2]),
                        max_dye: r[2][2],
                        // The solver knows this without the GPU.
                        particles: false,
                        keeps_colour: false,
                    };
                    self.latest = Some((self.tag, activity));
                }
                self.staging.unmap();
                self.state.store(FREE, Ordering::Release);
            }
            FAILED => self.state.store(FREE, Ordering::Release),
            _ => {}
        }
        if self.state.load(Ordering::Acquire) == FREE {
            let mut encoder = ctx
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("Activity probe"),
                });
            {
                let mut d =
                    Dispatcher::direct(encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                        label: Some("grid.probe_activity"),
                        timestamp_writes: None,
                    }));
                reduce.encode(&mut d, &self.u[vel]);
                reduce.encode(&mut d, &self.v[vel]);
                reduce.encode(&mut d, &self.dye[dye]);
            }
            encoder.copy_buffer_to_buffer(
                results,
                u64::from(slot::ACTIVITY) * 16,
                &self.staging,
                0,
                RESULT_BYTES,
            );
            ctx.queue.submit([encoder.finish()]);
            self.tag = tag;
            self.state.store(MAPPING, Ordering::Release);
            let state = self.state.clone();
            self.staging
                .slice(..)
                .map_async(wgpu::MapMode::Read, move |r| {
                    state.store(if r.is_ok() { READY } else { FAILED }, Ordering::Release);
                });
        }
        self.latest
    }
}
