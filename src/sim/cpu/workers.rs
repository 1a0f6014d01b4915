//! The CPU solver's worker threads: a rayon pool whose threads are waited for when it is
//! dropped.
//!
//! Dropping a rayon `ThreadPool` only tells its threads to stop. A host that unloads the plugin
//! right after destroying its last instance would unmap code those threads still run (rayon's
//! loop is compiled into the plugin). So the pool's threads are spawned here, their handles
//! kept, and the drop waits for them; they end within microseconds once told. One that has not
//! ended after [`WORKER_WAIT_MS`] is left behind with the library pinned (`src/pin.rs`).

use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Longest a dropped pool waits for its threads before leaving them behind (pinned).
pub const WORKER_WAIT_MS: u64 = 100;

/// A rayon pool and its threads.
pub(super) struct Workers {
    /// `None` only while dropping.
    pool: Option<rayon::ThreadPool>,
    threads: Vec<JoinHandle<()>>,
}

impl Workers {
    /// A pool of `threads` workers (0: rayon's default, one per core), named `dyeflow-cpu-N`.
    pub(super) fn new(threads: usize) -> Result<Self, rayon::ThreadPoolBuildError> {
        let handles = std::sync::Arc::new(parking_lot::Mutex::new(Vec::new()));
        let spawned = handles.clone();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .spawn_handler(move |thread| {
                let handle = std::thread::Builder::new()
                    .name(format!("dyeflow-cpu-{}", thread.index()))
                    .spawn(move || thread.run())?;
                spawned.lock().push(handle);
                Ok(())
            })
            .build()?;
        let threads = std::mem::take(&mut *handles.lock());
        Ok(Self {
            pool: Some(pool),
            threads,
        })
    }

    /// The pool.
    pub(super) fn pool(&self) -> &rayon::ThreadPool {
        self.pool.as_ref().expect("the pool is taken only in drop")
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        // Tells the workers to stop once idle (they are: nothing runs on a dropped solver).
        drop(self.pool.take());
        let deadline = Instant::now() + Duration::from_millis(WORKER_WAIT_MS);
        while self.threads.iter().any(|t| !t.is_finished()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_micros(200));
        }
        if self.threads.iter().any(|t| !t.is_finished()) && crate::pin::pin_library() {
            nice_plug::nice_warn!("A CPU solver thread is still busy; it ends on its own");
            return;
        }
        for thread in self.threads.drain(..) {
            // A worker's panic was already reported by rayon's handler.
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Once the pool is dropped, its threads are gone (checked in /proc by thread id).
    #[test]
    #[cfg(target_os = "linux")]
    fn dropping_the_pool_ends_its_threads() {
        let workers = Workers::new(3).unwrap();
        // SAFETY: gettid has no preconditions.
        let tids = workers.pool().broadcast(|_| unsafe { libc::gettid() });
        assert_eq!(tids.len(), 3);
        let alive = |tid: &i32| std::path::Path::new(&format!("/proc/self/task/{tid}")).exists();
        assert!(tids.iter().all(alive));
        drop(workers);
        let left: Vec<_> = tids.iter().filter(|t| alive(t)).collect();
        assert!(
            left.is_empty(),
            "threads still running after the drop: {left:?}"
        );
    }
}
