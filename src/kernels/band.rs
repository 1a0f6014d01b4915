//! Band-parallel loops: every thread of the pool takes a fixed band of rows and the threads
//! meet at a spin barrier between phases. For iterative solvers this replaces one rayon
//! fork-join per half-sweep (about 8 us of wake-ups each on the dev machine, 40 per step at 20
//! red-black iterations) with a barrier of well under a microsecond.
//!
//! Row bands are fixed and each row is computed by exactly one thread with the same code, so
//! results do not depend on the thread count.

use std::marker::PhantomData;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Grids below this many cells run on the calling thread: the barrier costs more than the work.
pub const MIN_PARALLEL_CELLS: usize = 16 * 1024;

/// Cells one rayon task should at least handle. Splitting small grids across threads costs
/// more in wake-ups (~10 us per parallel loop) than the work, and multigrid runs hundreds of
/// loops on tiny coarse levels.
pub const MIN_TASK_CELLS: usize = 2048;

/// Rows per rayon task for rows of `row_len` cells (`with_min_len`).
#[inline]
pub fn min_rows(row_len: usize) -> usize {
    (MIN_TASK_CELLS / row_len.max(1)).max(1)
}

/// Copy packed opaque RGBA8 pixels (little-endian `u32`s) into a row of bytes: one copy on
/// little-endian machines (a per-pixel loop of 4-byte copies cost 6 % of a frame with effects).
pub fn write_pixels(row: &mut [u8], pixels: &[u32]) {
    let n = (row.len() / 4).min(pixels.len());
    if cfg!(target_endian = "little") {
        row[..4 * n].copy_from_slice(bytemuck::cast_slice(&pixels[..n]));
    } else {
        for (dst, p) in row.chunks_exact_mut(4).zip(&pixels[..n]) {
            dst.copy_from_slice(&p.to_le_bytes());
        }
    }
}

/// Run `f` on a row of packed opaque RGBA8 pixels that ends up in `row` (bytes): on `row`
/// itself where it can be seen as `u32`s (little-endian and 4-byte aligned, as frame buffers
/// from the allocator are), which saves a copy of every pixel; otherwise on `scratch`, then
/// copied.
pub fn with_pixels(row: &mut [u8], scratch: &mut [u32], f: impl FnOnce(&mut [u32])) {
    if cfg!(target_endian = "little")
        && let Ok(pixels) = bytemuck::try_cast_slice_mut::<u8, u32>(row)
    {
        return f(pixels);
    }
    let n = (row.len() / 4).min(scratch.len());
    f(&mut scratch[..n]);
    write_pixels(row, &scratch[..n]);
}

/// A sense-counting barrier that spins briefly, yields a few times, then sleeps.
///
/// Sleeping matters when the machine has more runnable threads than cores (a render's encoder
/// beside a solver with a thread per core): a thread whose partner was descheduled used to
/// yield in a loop until the partner ran again, a system call each time, and those yields were
/// 8 % of a 720p render's CPU time on two cores (2026-11-28, perf).
struct SpinBarrier {
    arrived: AtomicUsize,
    generation: AtomicUsize,
    parties: usize,
    /// Threads asleep in `wait` (or about to be), and where they sleep.
    sleepers: AtomicUsize,
    lock: std::sync::Mutex<()>,
    woken: std::sync::Condvar,
}

/// Spins of a waiting thread before it yields, and yields before it sleeps.
const SPINS: u32 = 4096;
const YIELDS: u32 = 8;

impl SpinBarrier {
    fn new(parties: usize) -> Self {
        Self {
            arrived: AtomicUsize::new(0),
            generation: AtomicUsize::new(0),
            parties,
            sleepers: AtomicUsize::new(0),
            lock: std::sync::Mutex::new(()),
            woken: std::sync::Condvar::new(),
        }
    }

    fn wait(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.parties {
            self.arrived.store(0, Ordering::Relaxed);
            // Releases every write made before any thread arrived. SeqCst with the sleepers'
            // count below: either a sleeper sees the new generation, or this sees the sleeper.
            self.generation.fetch_add(1, Ordering::SeqCst);
            if self.sleepers.load(Ordering::SeqCst) > 0 {
                // Under the lock, so a sleeper between its check and its sleep is not missed.
                let _guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
                self.woken.notify_all();
            }
            return;
        }
        let passed = || self.generation.load(Ordering::Acquire) != generation;
        for _ in 0..SPINS {
            if passed() {
                return;
            }
            std::hint::spin_loop();
        }
        for _ in 0..YIELDS {
            if passed() {
                return;
            }
            std::thread::yield_now();
        }
        let mut guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        while self.generation.load(Ordering::SeqCst) == generation {
            guard = self.woken.wait(guard).unwrap_or_else(|e| e.into_inner());
        }
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The rows of band `t` of `n` over `h` rows.
fn band(t: usize, n: usize, h: usize) -> Range<usize> {
    (t * h / n)..((t + 1) * h / n)
}

/// Run `phases` phases of `f(phase, rows)` over `h` rows of `w` cells. Within a phase the
/// calls for different bands may run at the same time; every call of a phase finishes before
/// any call of the next begins.
///
/// Must be called from inside the pool that should do the work (the solver's `install`).
pub fn phases<F>(h: usize, w: usize, phases: usize, f: F)
where
    F: Fn(usize, Range<usize>) + Sync,
{
    let threads = rayon::current_num_threads().min(h);
    if threads <= 1 || h * w < MIN_PARALLEL_CELLS {
        for p in 0..phases {
            f(p, 0..h);
        }
        return;
    }
    let barrier = SpinBarrier::new(rayon::current_num_threads());
    rayon::broadcast(|ctx| {
        let rows = band(ctx.index(), ctx.num_threads(), h);
        for p in 0..phases {
            f(p, rows.clone());
            barrier.wait();
        }
    });
}

/// A plane shared by the threads of [`phases`]: each thread reads and writes only the rows the
/// phase structure allows it (see the callers' SAFETY notes). It borrows the plane mutably for
/// `'a`, so it cannot outlive it and nothing else can touch the plane meanwhile.
#[derive(Clone, Copy)]
pub struct Shared<'a> {
    ptr: *mut f32,
    len: usize,
    plane: PhantomData<&'a mut [f32]>,
}

// SAFETY: a `Shared` is a `&mut [f32]` split between the threads of `phases`, which
// coordinates them: within a phase, a row is written by at most one thread and not read by
// others; the barrier orders phases. `f32` is `Send`.
unsafe impl Send for Shared<'_> {}
// SAFETY: as for `Send`: shared references only hand out rows under the phase rules
// (`get`, `get_mut` are unsafe and state them).
unsafe impl Sync for Shared<'_> {}

impl<'a> Shared<'a> {
    pub fn new(data: &'a mut [f32]) -> Self {
        Self {
            ptr: data.as_mut_ptr(),
            len: data.len(),
            plane: PhantomData,
        }
    }

    /// Elements `range` for reading.
    ///
    /// # Safety
    /// No thread may write these elements during the current phase.
    #[inline(always)]
    pub unsafe fn get(&self, range: Range<usize>) -> &'a [f32] {
        assert!(range.start <= range.end && range.end <= self.len);
        // SAFETY: in bounds (checked); no concurrent writer (caller).
        unsafe { std::slice::from_raw_parts(self.ptr.add(range.start), range.len()) }
    }

    /// Element `i`.
    ///
    /// # Safety
    /// No thread may write element `i` during the current phase.
    #[inline(always)]
    pub unsafe fn read(&self, i: usize) -> f32 {
        assert!(i < self.len);
        // SAFETY: in bounds (checked); no concurrent writer (caller).
        unsafe { self.ptr.add(i).read() }
    }

    /// Set element `i`.
    ///
    /// # Safety
    /// No other thread may read or write element `i` during the current phase.
    #[inline(always)]
    pub unsafe fn write(&self, i: usize, value: f32) {
        assert!(i < self.len);
        // SAFETY: in bounds (checked); exclusive for this phase (caller).
        unsafe { self.ptr.add(i).write(value) }
    }

    /// Elements `range` for writing.
    ///
    /// # Safety
    /// No other thread may read or write these elements during the current phase.
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn get_mut(&self, range: Range<usize>) -> &'a mut [f32] {
        assert!(range.start <= range.end && range.end <= self.len);
        // SAFETY: in bounds (checked); exclusive for this phase (caller).
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(range.start), range.len()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_see_every_earlier_write() {
        check_phases(3, 16, None);
    }

    /// A thread late to a phase (descheduled, or slow) keeps the others waiting long enough
    /// that they go to sleep; the last arrival wakes them, phase after phase, and the order
    /// between phases holds. More threads than this machine may have cores.
    #[test]
    fn phases_wake_threads_that_slept_at_the_barrier() {
        let late = std::time::Duration::from_millis(3);
        let started = std::time::Instant::now();
        check_phases(5, 12, Some(late));
        // Every phase waited for its late thread, and no more than a moment beyond it.
        let took = started.elapsed();
        assert!(took >= late * 12, "{took:?}");
    }

    /// Even phases write their rows; odd phases read the row below (usually another thread's)
    /// and check it holds the previous phase's value. Missing ordering between phases shows as
    /// a stale value. With `late`, the thread of the first band starts every phase that late.
    fn check_phases(threads: usize, count: usize, late: Option<std::time::Duration>) {
        let (w, h) = (256, 256);
        let mut data = vec![0.0f32; w * h];
        let shared = Shared::new(&mut data);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let checked = AtomicUsize::new(0);
        pool.install(|| {
            phases(h, w, count, |p, rows| {
                if let Some(late) = late
                    && rows.start == 0
                {
                    std::thread::sleep(late);
                }
                for j in rows {
                    if p % 2 == 0 {
                        // SAFETY: even phases write only the band's own rows, nobody reads.
                        unsafe { shared.get_mut(j * w..(j + 1) * w) }.fill(p as f32 + 1.0);
                    } else if j > 0 {
                        // SAFETY: odd phases only read.
                        let below = unsafe { shared.get((j - 1) * w..j * w) };
                        assert!(below.iter().all(|&x| x == p as f32), "row {j} phase {p}");
                        checked.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        });
        assert_eq!(checked.load(Ordering::Relaxed), count / 2 * (h - 1));
        assert!(data.iter().all(|&x| x == (count - 1) as f32));
    }
}
