//! Readback: frames through a fixed pool of staging buffers mapped without stalls (a frame is
//! skipped and counted when none is free), and the blocking reads the tests and statistics
//! use.

use super::bytes_f32;
use super::context::GpuContext;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

/// Staging buffers for frame readback: one being written, one in flight, one being read.
pub const FRAME_STAGING_BUFFERS: usize = 3;

/// Staging buffer states.
const FREE: u8 = 0;
const MAPPING: u8 = 1;
const READY: u8 = 2;
const FAILED: u8 = 3;

struct Staging {
    buffer: wgpu::Buffer,
    size: (usize, usize),
    /// FREE, MAPPING, READY or FAILED; written by wgpu's mapping callback.
    state: Arc<AtomicU8>,
    /// Submission order, to hand out the newest ready frame.
    serial: u64,
    /// The submit that fills it, to wait for that alone ([`Frames::take`]).
    submission: Option<wgpu::SubmissionIndex>,
}

/// The staging pool.
#[derive(Default)]
pub(crate) struct Frames {
    staging: Vec<Staging>,
    /// The last frame submitted.
    serial: u64,
    /// Frames skipped because every staging buffer was busy.
    pub skipped: u64,
}

impl Frames {
    /// Drop the staging buffers of sizes other than `size` once they are read or free.
    pub fn resize(&mut self, size: (usize, usize)) {
        self.staging
            .retain(|s| s.size == size || s.state.load(Ordering::Acquire) == MAPPING);
    }

    /// A free staging buffer of `size` (made while the pool has room); `None` counts a skip.
    pub fn take_free(&mut self, device: &wgpu::Device, size: (usize, usize)) -> Option<usize> {
        let free = self
            .staging
            .iter()
            .position(|s| s.size == size && s.state.load(Ordering::Acquire) == FREE);
        match free {
            Some(i) => Some(i),
            None if self.staging.len() < FRAME_STAGING_BUFFERS => {
                self.staging.push(Staging {
                    buffer: device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some("Buffer: frame staging"),
                        size: bytes_f32(size.0 * size.1),
                        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                        mapped_at_creation: false,
                    }),
                    size,
                    state: Arc::new(AtomicU8::new(FREE)),
                    serial: 0,
                    submission: None,
                });
                Some(self.staging.len() - 1)
            }
            None => {
                self.skipped += 1;
                None
            }
        }
    }

    /// Copy `frame` into staging buffer `index`, submit `encoder` and request the mapping.
    /// Returns the frame's serial.
    pub fn submit(
        &mut self,
        ctx: &GpuContext,
        mut encoder: wgpu::CommandEncoder,
        frame: &wgpu::Buffer,
        index: usize,
    ) -> u64 {
        let staging = &mut self.staging[index];
        let bytes = bytes_f32(staging.size.0 * staging.size.1);
        encoder.copy_buffer_to_buffer(frame, 0, &staging.buffer, 0, bytes);
        staging.submission = Some(ctx.queue.submit([encoder.finish()]));
        self.serial += 1;
        staging.serial = self.serial;
        staging.state.store(MAPPING, Ordering::Release);
        let state = staging.state.clone();
        staging
            .buffer
            .slice(..)
            .map_async(wgpu::MapMode::Read, move |r| {
                state.store(if r.is_ok() { READY } else { FAILED }, Ordering::Release);
            });
        self.serial
    }

    /// Copy the newest ready frame into `out` and free it (and older ready ones); returns its
    /// size and serial.
    pub fn collect(&mut self, out: &mut Vec<u8>) -> Option<((usize, usize), u64)> {
        let newest = self
            .staging
            .iter()
            .enumerate()
            .filter(|(_, s)| s.state.load(Ordering::Acquire) == READY)
            .max_by_key(|(_, s)| s.serial)
            .map(|(i, _)| i)?;
        let serial = self.staging[newest].serial;
        let size = self.staging[newest].size;
        {
            let s = &self.staging[newest];
            out.clear();
            match s.buffer.slice(..).get_mapped_range() {
                Ok(data) => out.extend_from_slice(&data[..size.0 * size.1 * 4]),
                Err(e) => {
                    nice_plug::nice_error!("GPU frame readback failed: {e}");
                    out.resize(size.0 * size.1 * 4, 0);
                }
            }
        }
        for s in &mut self.staging {
            let state = s.state.load(Ordering::Acquire);
            if state == FAILED || (state == READY && s.serial <= serial) {
                if state == READY {
                    s.buffer.unmap();
                }
                s.state.store(FREE, Ordering::Release);
            }
        }
        Some((size, serial))
    }
}

impl Frames {
    /// Wait for frame `serial` alone (not for what was submitted after it: the next frame's
    /// steps keep the GPU busy meanwhile), copy it into `out` and free its buffer. `false`
    /// when there is no such frame, its mapping failed, `out` is not its size, or it did not
    /// come within `timeout`.
    pub fn take(
        &mut self,
        ctx: &GpuContext,
        serial: u64,
        out: &mut [u8],
        timeout: std::time::Duration,
    ) -> bool {
        let Some(s) = self
            .staging
            .iter_mut()
            .find(|s| s.serial == serial && s.state.load(Ordering::Acquire) != FREE)
        else {
            return false;
        };
        if s.state.load(Ordering::Acquire) == MAPPING {
            // The mapping's callback runs in this poll once the submit is done.
            let _ = ctx.device.poll(wgpu::PollType::Wait {
                submission_index: s.submission.clone(),
                timeout: Some(timeout),
            });
        }
        let ok = match s.state.load(Ordering::Acquire) {
            READY => {
                let fits = out.len() == s.size.0 * s.size.1 * 4;
                let copied = fits
                    && match s.buffer.slice(..).get_mapped_range() {
                        Ok(data) => {
                            out.copy_from_slice(&data[..out.len()]);
                            true
                        }
                        Err(e) => {
                            nice_plug::nice_error!("GPU frame readback failed: {e}");
                            false
                        }
                    };
                s.buffer.unmap();
                copied
            }
            // Still mapping (it never came): left to a later collect or settle.
            MAPPING => {
                nice_plug::nice_error!("GPU frame {serial} did not come back in {timeout:?}");
                return false;
            }
            _ => false,
        };
        s.state.store(FREE, Ordering::Release);
        ok
    }
}

/// Read `bytes` of a buffer back, blocking (tests, statistics and `read_fields` only).
pub(crate) fn read_buffer(ctx: &GpuContext, source: &wgpu::Buffer, bytes: u64) -> Vec<u8> {
    let device = &ctx.device;
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("Buffer: readback"),
        size: bytes.max(4),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    encoder.copy_buffer_to_buffer(source, 0, &staging, 0, bytes);
    ctx.queue.submit([encoder.finish()]);
    let slice = staging.slice(..);
    slice.map_async(wgpu::MapMode::Read, |_| {});
    if let Err(e) = device.poll(wgpu::PollType::wait_indefinitely()) {
        nice_plug::nice_error!("GPU readback failed: {e}");
        return vec![0; bytes as usize];
    }
    let data = match slice.get_mapped_range() {
        Ok(view) => view.to_vec(),
        Err(e) => {
            nice_plug::nice_error!("GPU readback failed: {e}");
            vec![0; bytes as usize]
        }
    };
    staging.unmap();
    data
}

/// Read `n` f32 values of a buffer back, blocking.
pub(crate) fn read_f32(ctx: &GpuContext, source: &wgpu::Buffer, n: usize) -> Vec<f32> {
    pod_vec(&read_buffer(ctx, source, bytes_f32(n)))
}

/// `bytes` as values of `T` (as many whole ones as they hold), read without assuming
/// alignment: the bytes of a `Vec<u8>` need not be aligned for `T`, and `bytemuck::cast_slice`
/// panics where they are not.
pub(crate) fn pod_vec<T: bytemuck::AnyBitPattern>(bytes: &[u8]) -> Vec<T> {
    bytes
        .chunks_exact(size_of::<T>())
        .map(bytemuck::pod_read_unaligned)
        .collect()
}

#[cfg(test)]
mod tests {
    /// Values come back from bytes at any alignment (where `bytemuck::cast_slice` would panic),
    /// and a partial value at the end is left out.
    #[test]
    fn pod_vec_reads_bytes_at_any_alignment() {
        let values = [1.5f32, -2.25, 3.0e-7];
        let mut bytes = vec![0u8; 1];
        bytes.extend(values.iter().flat_map(|v| v.to_ne_bytes()));
        bytes.push(9);
        let got: Vec<f32> = super::pod_vec(&bytes[1..]);
        assert_eq!(got, values);
        let pairs: Vec<[f32; 2]> = super::pod_vec(&bytes[1..13]);
        assert_eq!(pairs, [[1.5, -2.25]]);
    }
}
