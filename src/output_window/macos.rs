//! The output window on macOS: AppKit makes and drives windows only on the application's main
//! thread, which belongs to the host, so the window is made there, when the editor (whose
//! frames run on the main thread) follows the project, and the host's run loop drives it: its
//! timer and its events come on the main thread like the editor's. The [`Window`] handles are
//! held in the main thread's own list, by their instance, and dropped (closing their windows)
//! there: when the instance closes its window, and, for windows that closed by themselves, at
//! the next follow on the main thread (a closed window's view keeps its timer until then).
//!
//! While no editor is open, nothing opens or moves (closing works from any thread: the window
//! closes itself on its next tick): a project saved with its output window open opens it when
//! the editor opens. Windowed only (no monitor list, no fullscreen yet), and its title does not
//! name the track yet.
//!
//! Compiled for macOS in CI (clippy for `aarch64-apple-darwin`);
//! not run anywhere yet: the build machines are Linux.

use super::{Live, draw};
use nice_plug_egui::baseview::Window;
use std::cell::RefCell;
use std::sync::Arc;

/// A window made here: its instance's id, what it shares with the instance, its handle.
type Held = (u64, Arc<Live>, Window);

thread_local! {
    /// The windows made on this thread (only ever the main thread).
    static WINDOWS: RefCell<Vec<Held>> = const { RefCell::new(Vec::new()) };
}

/// Whether this is the application's main thread.
pub fn on_main_thread() -> bool {
    // SAFETY: pthread_main_np only reads the calling thread's identity.
    unsafe { libc::pthread_main_np() != 0 }
}

/// Open a window for instance `id` on this, the main thread, after dropping the instance's
/// earlier ones (closed, or closing).
pub fn open(id: u64, live: Arc<Live>, setup: draw::Setup) -> Result<(), String> {
    if !on_main_thread() {
        return Err("the output window opens from the editor on macOS".into());
    }
    close(id);
    let window = draw::create(setup)?;
    WINDOWS.with_borrow_mut(|windows| windows.push((id, live, window)));
    Ok(())
}

/// Drop the handles of windows that closed (by the user, or asked to), any instance's: a
/// closed window's view keeps its timer firing until its handle goes. Main thread only.
pub fn reap() {
    if on_main_thread() {
        take(|(_, live, _)| !live.status.lock().open);
    }
}

/// Take the windows `which` picks out of the list, and drop them after it is let go (a
/// window's handler may look at the list as it closes).
fn take(which: impl Fn(&Held) -> bool) {
    let gone: Vec<Held> = WINDOWS.with_borrow_mut(|windows| {
        let (gone, kept) = std::mem::take(windows).into_iter().partition(|h| which(h));
        *windows = kept;
        gone
    });
    drop(gone);
}

/// Drop instance `id`'s windows, closing those still open (main thread only; elsewhere
/// nothing is held). Whether none is left.
pub fn close(id: u64) -> bool {
    if !on_main_thread() {
        return false;
    }
    take(|(owner, _, _)| *owner == id);
    true
}
