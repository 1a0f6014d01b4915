//! The editor's window, which on Linux is not gone until the thread that runs it is.
//!
//! baseview 0.4 runs an X11 window on a thread of its own, and dropping the window normally
//! joins that thread. But when the thread is already on its way out (its event loop has
//! stopped), the drop's last request to it gets no answer and the drop returns without
//! joining: the thread goes on tearing down its OpenGL context, and EGL unloads the driver
//! library, while the host goes on. A host that unloads the plugin right after closing the
//! editor, or a process that exits then, crashes in that thread (the editor tests saw it as a
//! SIGSEGV at exit in about one run of four). So [`DyeflowWindow`] waits, after baseview's
//! drop, until the window's thread has ended; Linux removes `/proc/<pid>/task/<tid>` once a
//! thread has fully exited.

use nice_plug_egui::baseview;
use parking_lot::Mutex;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long closing the editor waits for the window's thread at most (it takes a few
/// milliseconds; software OpenGL up to about a hundred).
const THREAD_END_LIMIT: Duration = Duration::from_secs(5);

/// Where the window's thread leaves its identity for the window (it builds the egui app on
/// that thread while the editor's `spawn` waits for it).
#[derive(Clone, Default)]
pub(super) struct ThreadSlot(Arc<Mutex<Option<WindowThread>>>);

impl ThreadSlot {
    /// Record the calling thread (the window's).
    pub fn record_current(&self) {
        *self.0.lock() = WindowThread::current();
    }

    /// The thread recorded since the last call, if any.
    pub fn take(&self) -> Option<WindowThread> {
        self.0.lock().take()
    }
}

/// A window's thread, watched until it ends.
#[derive(Clone, Debug)]
pub struct WindowThread {
    /// `/proc/<pid>/task/<tid>`: there as long as the thread is.
    task: PathBuf,
}

impl WindowThread {
    /// The calling thread (on Linux; elsewhere baseview runs the window on the host's thread).
    fn current() -> Option<Self> {
        if !cfg!(target_os = "linux") {
            return None;
        }
        let link = std::fs::read_link("/proc/thread-self").ok()?;
        let task = PathBuf::from("/proc").join(link);
        task.exists().then_some(Self { task })
    }

    /// Whether the thread has ended.
    pub fn ended(&self) -> bool {
        !self.task.exists()
    }

    /// Wait until the thread has ended, at most `limit`; whether it has.
    fn wait(&self, limit: Duration) -> bool {
        let start = Instant::now();
        while !self.ended() {
            if start.elapsed() >= limit {
                return false;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        true
    }
}

/// An editor window: baseview's, and the thread that runs it.
pub struct DyeflowWindow {
    inner: Option<baseview::Window>,
    thread: Option<WindowThread>,
}

impl DyeflowWindow {
    pub(super) fn new(inner: baseview::Window, thread: Option<WindowThread>) -> Self {
        Self {
            inner: Some(inner),
            thread,
        }
    }

    /// baseview's window.
    pub(super) fn inner(&self) -> &baseview::Window {
        self.inner
            .as_ref()
            .expect("the window is only taken when it is consumed or dropped")
    }

    /// baseview's window, for `run_until_closed` (which consumes it); the thread is still
    /// waited for when `self` drops.
    pub(super) fn take_inner(&mut self) -> baseview::Window {
        self.inner
            .take()
            .expect("the window is only taken when it is consumed or dropped")
    }

    /// The window's thread (`None` where the window has no thread of its own).
    pub fn thread_watch(&self) -> Option<WindowThread> {
        self.thread.clone()
    }
}

impl Drop for DyeflowWindow {
    fn drop(&mut self) {
        drop(self.inner.take());
        if let Some(thread) = self.thread.take()
            && !thread.wait(THREAD_END_LIMIT)
        {
            nice_plug::nice_error!(
                "The editor window's thread did not end within {} s of its close",
                THREAD_END_LIMIT.as_secs()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_os = "linux")]
    fn a_recorded_thread_is_seen_to_end() {
        let slot = ThreadSlot::default();
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let recorder = slot.clone();
        let handle = std::thread::spawn(move || {
            recorder.record_current();
            let _ = wait.recv();
        });
        let thread = loop {
            if let Some(t) = slot.take() {
                break t;
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        assert!(!thread.ended(), "the thread is still waiting");
        assert!(
            !thread.wait(Duration::from_millis(20)),
            "a running thread is waited for until the limit"
        );
        go.send(()).unwrap();
        assert!(thread.wait(Duration::from_secs(5)), "the thread ended");
        handle.join().unwrap();
        assert!(slot.take().is_none(), "taken once");
    }
}
