//! GPU timing with timestamp queries: a query set, the buffer its stamps resolve into, and the
//! adapter's tick length, read back as the milliseconds between pairs of stamps (a pass's
//! start and end). For the benches: reading the stamps back waits for the GPU.

use super::context::GpuContext;
use super::frames::read_buffer;

/// `count` timestamp queries and their resolve buffer.
pub struct Timestamps {
    queries: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    /// Nanoseconds per timestamp tick.
    period_ns: f32,
    count: u32,
}

impl Timestamps {
    /// `count` queries labelled `label`, when the adapter has timestamps (`None` otherwise).
    pub fn new(ctx: &GpuContext, label: &str, count: u32) -> Option<Self> {
        let device = &ctx.device;
        ctx.timestamps.then(|| Self {
            queries: device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some(label),
                ty: wgpu::QueryType::Timestamp,
                count,
            }),
            resolve: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: u64::from(count) * 8,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            }),
            period_ns: ctx.queue.get_timestamp_period(),
            count,
        })
    }

    /// The query set, for a pass's timestamp writes.
    pub fn queries(&self) -> &wgpu::QuerySet {
        &self.queries
    }

    /// Resolve the first `n` stamps into the buffer (in `encoder`, after the passes wrote them).
    pub fn resolve(&self, encoder: &mut wgpu::CommandEncoder, n: u32) {
        encoder.resolve_query_set(&self.queries, 0..n.min(self.count), &self.resolve, 0);
    }

    /// The milliseconds between the stamps of each of the first `pairs` pairs (stamps `2k` and
    /// `2k + 1`), read back after a resolve (waits for the GPU).
    pub fn read_pairs_ms(&self, ctx: &GpuContext, pairs: u32) -> Vec<f64> {
        let pairs = pairs.min(self.count / 2);
        let bytes = read_buffer(ctx, &self.resolve, u64::from(pairs) * 16);
        let stamps: &[u64] = bytemuck::cast_slice(&bytes);
        let ms = f64::from(self.period_ns) * 1e-6;
        stamps
            .chunks_exact(2)
            .map(|s| s[1].wrapping_sub(s[0]) as f64 * ms)
            .collect()
    }
}
