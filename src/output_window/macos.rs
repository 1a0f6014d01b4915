//! The output window on macOS: AppKit makes and drives windows only on the application's main
//! thread, which belongs to the host, so the window is made there, when the editor (whose
//! frames run on the main thread) follows the project, and the host's run loop drives it: its
//! timer and its events come on the main thread like the editor's. The [`Window`] handles are
//! held in the main thread's own list, by their instance, and dropped (closing their windows)
//! there.
//!
//! While no editor is open, nothing opens or moves: a project saved with its output window
//! open opens it when the editor opens. Windowed only (no monitor list, no fullscreen yet).
//!
//! Compiled for macOS in CI (clippy for `aarch64-apple-darwin` and `x86_64-apple-darwin`);
//! not run anywhere yet: the build machines are Linux.

use super::draw;
use nice_plug_egui::baseview::Window;
use std::cell::RefCell;

thread_local! {
    /// The windows made on this thread (only ever the main thread), by their instance's id.
    static WINDOWS: RefCell<Vec<(u64, Window)>> = const { RefCell::new(Vec::new()) };
}

/// Whether this is the application's main thread.
pub fn on_main_thread() -> bool {
    // SAFETY: pthread_main_np only reads the calling thread's identity.
    unsafe { libc::pthread_main_np() != 0 }
}

/// Open a window for instance `id` on this, the main thread, after dropping the instance's
/// earlier ones (closed, or closing).
pub fn open(id: u64, setup: draw::Setup) -> Result<(), String> {
    if !on_main_thread() {
        return Err("the output window opens from the editor on macOS".into());
    }
    close(id);
    let window = draw::create(setup)?;
    WINDOWS.with_borrow_mut(|windows| windows.push((id, window)));
    Ok(())
}

/// Drop instance `id`'s windows, closing those still open (main thread only; elsewhere
/// nothing is held). Whether none is left.
pub fn close(id: u64) -> bool {
    if !on_main_thread() {
        return false;
    }
    // Taken out first: a window's handler may run code that looks at the list as it closes.
    let gone: Vec<Window> = WINDOWS.with_borrow_mut(|windows| {
        let (gone, kept) = std::mem::take(windows)
            .into_iter()
            .partition(|(owner, _)| *owner == id);
        *windows = kept;
        gone.into_iter().map(|(_, w)| w).collect()
    });
    drop(gone);
    true
}
