//! GPU timing with timestamp queries: a query set, the buffer its stamps resolve into, and the
//! adapter's tick length, read back as the milliseconds between pairs of stamps (a pass's
//! start and end). For the benches: reading the stamps back waits for the GPU.

use super::context::GpuContext;
use super::frames::read_buffer;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

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
        let stamps: Vec<u64> = super::frames::pod_vec(&bytes);
        let ms = f64::from(self.period_ns) * 1e-6;
        stamps
            .chunks_exact(2)
            .map(|s| s[1].wrapping_sub(s[0]) as f64 * ms)
            .collect()
    }
}

/// Steps timed with timestamp queries, for the particle models' benches: each step's first
/// pass writes its start and its last pass its end into the next two slots, without waiting;
/// the slots are read back when full (before the next step) or when asked.
pub struct StepTimes {
    stamps: Timestamps,
    /// Steps written since the last readback.
    next: u32,
    /// Steps the slots hold.
    steps: u32,
    /// GPU times of the steps read back so far, ms.
    times: Vec<f64>,
}

impl StepTimes {
    /// Room for `steps` steps between readbacks, when the adapter has timestamps.
    pub fn new(ctx: &GpuContext, label: &str, steps: u32) -> Option<Self> {
        Timestamps::new(ctx, label, 2 * steps).map(|stamps| Self {
            stamps,
            next: 0,
            steps,
            times: Vec::new(),
        })
    }

    /// The timestamp writes of the next step's first pass (`last` false: its start) or last
    /// pass (`last` true: its end).
    pub fn writes(&self, last: bool) -> wgpu::ComputePassTimestampWrites<'_> {
        wgpu::ComputePassTimestampWrites {
            query_set: self.stamps.queries(),
            beginning_of_pass_write_index: (!last).then_some(2 * self.next),
            end_of_pass_write_index: last.then_some(2 * self.next + 1),
        }
    }

    /// Before encoding a step: read the slots back if they are full (waits for the GPU).
    pub fn make_room(&mut self, ctx: &GpuContext) {
        if self.next == self.steps {
            self.read(ctx);
        }
    }

    /// After submitting a step.
    pub fn step_done(&mut self) {
        self.next += 1;
    }

    /// Read the stamps written so far (waits for their steps).
    fn read(&mut self, ctx: &GpuContext) {
        if self.next == 0 {
            return;
        }
        let mut enc = ctx.device.create_command_encoder(&Default::default());
        self.stamps.resolve(&mut enc, 2 * self.next);
        ctx.queue.submit([enc.finish()]);
        self.times.extend(self.stamps.read_pairs_ms(ctx, self.next));
        self.next = 0;
    }

    /// The GPU times of the steps timed since the last call, ms (waits for them).
    pub fn take(&mut self, ctx: &GpuContext) -> Vec<f64> {
        self.read(ctx);
        std::mem::take(&mut self.times)
    }
}

/// Compute passes timed one by one, for the benches' `passes` tables: every pass begun with
/// [`PassTimes::writes`] gets its start and end stamps and keeps its label; after the submit,
/// [`PassTimes::collect`] reads them back (waits for the GPU) and adds each label's time and
/// dispatches (the sums of its passes in that submit) to its samples.
pub struct PassTimes {
    stamps: Timestamps,
    /// The labels of the passes written since the last collect, in order, each with the
    /// count of its dispatches.
    labels: std::cell::RefCell<Vec<(String, Arc<AtomicU32>)>>,
    /// Each label's samples, in the order the labels first came.
    times: Vec<(String, Vec<PassSample>)>,
}

/// One label's passes in one submit: their GPU time and their dispatches.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PassSample {
    pub ms: f64,
    pub dispatches: u32,
}

impl PassTimes {
    /// Passes one submit can time; later ones run untimed.
    pub const MAX_PASSES: u32 = 64;

    /// Per-pass timing, when the adapter has timestamps.
    pub fn new(ctx: &GpuContext, label: &str) -> Option<Self> {
        Timestamps::new(ctx, label, 2 * Self::MAX_PASSES).map(|stamps| Self {
            stamps,
            labels: Default::default(),
            times: Vec::new(),
        })
    }

    /// The timestamp writes for the next pass, labelled `label`, and the counter its
    /// dispatcher counts its dispatches in ([`Dispatcher::counted`]); `None` when the submit's
    /// slots are used up.
    ///
    /// [`Dispatcher::counted`]: super::kernel::Dispatcher::counted
    pub fn writes(
        &self,
        label: &str,
    ) -> Option<(wgpu::ComputePassTimestampWrites<'_>, Arc<AtomicU32>)> {
        let mut labels = self.labels.borrow_mut();
        let k = labels.len() as u32;
        if k >= Self::MAX_PASSES {
            return None;
        }
        let counter = Arc::new(AtomicU32::new(0));
        labels.push((label.to_owned(), counter.clone()));
        let writes = wgpu::ComputePassTimestampWrites {
            query_set: self.stamps.queries(),
            beginning_of_pass_write_index: Some(2 * k),
            end_of_pass_write_index: Some(2 * k + 1),
        };
        Some((writes, counter))
    }

    /// Resolve the stamps written (in the submit's encoder, after its passes).
    pub fn resolve(&self, encoder: &mut wgpu::CommandEncoder) {
        let n = self.labels.borrow().len() as u32;
        if n > 0 {
            self.stamps.resolve(encoder, 2 * n);
        }
    }

    /// After the submit: read the stamps back (waits for the GPU) and add each label's time.
    pub fn collect(&mut self, ctx: &GpuContext) {
        let labels = std::mem::take(&mut *self.labels.borrow_mut());
        if labels.is_empty() {
            return;
        }
        let ms = self.stamps.read_pairs_ms(ctx, labels.len() as u32);
        let mut this: Vec<(String, PassSample)> = Vec::new();
        for ((label, counter), t) in labels.into_iter().zip(ms) {
            let dispatches = counter.load(Ordering::Relaxed);
            match this.iter_mut().find(|(l, _)| *l == label) {
                Some((_, sum)) => {
                    sum.ms += t;
                    sum.dispatches += dispatches;
                }
                None => this.push((label, PassSample { ms: t, dispatches })),
            }
        }
        for (label, sample) in this {
            match self.times.iter_mut().find(|(l, _)| *l == label) {
                Some((_, samples)) => samples.push(sample),
                None => self.times.push((label, vec![sample])),
            }
        }
    }

    /// Each label's samples so far (one per submit it ran in), in the order the labels came.
    pub fn samples(&self) -> &[(String, Vec<PassSample>)] {
        &self.times
    }
}
