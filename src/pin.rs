//! Keeping the plugin's library loaded for a thread that outlives its owner (the
//! [`Engine`](crate::engine::Engine)'s simulation and chroma threads, the CPU solver's workers).
//!
//! A host unloads the plugin's library once it has destroyed every instance. A simulation
//! thread left running after its engine was dropped (a GPU hung in a step, a device still
//! being created) would then run code that is no longer mapped, and crash the host. Pinning
//! the library (`RTLD_NODELETE` on Unix, `GET_MODULE_HANDLE_EX_FLAG_PIN` on Windows) keeps it
//! mapped until the process ends: a few megabytes, and only after such a detach.

/// Pin the library (or executable) this code lives in, so it is never unloaded. Returns
/// whether it is pinned; `false` means the caller must not leave a thread running in it.
#[cfg(unix)]
pub(crate) fn pin_library() -> bool {
    use std::ffi::c_void;
    let here = pin_library as *const c_void;
    // SAFETY: `Dl_info` is plain old data for which all-zeroes is valid; `dladdr` only
    // writes it, and reads no memory but the address it is given (our own code).
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: `here` points into this library's code, and `info` is a valid, writable
    // `Dl_info`.
    if unsafe { libc::dladdr(here, &mut info) } == 0 || info.dli_fname.is_null() {
        return false;
    }
    // SAFETY: `dli_fname` is the NUL-terminated path of an object that is loaded (it holds
    // this code); RTLD_NOLOAD only looks it up, and RTLD_NODELETE marks it never to be
    // unloaded. The handle's reference is kept on purpose: it is never closed.
    let handle = unsafe {
        libc::dlopen(
            info.dli_fname,
            libc::RTLD_NOW | libc::RTLD_NOLOAD | libc::RTLD_NODELETE,
        )
    };
    if !handle.is_null() {
        return true;
    }
    // The main executable (the standalone app, a test) is never unloaded, and dlopen does
    // not find it by its path.
    // SAFETY: `dli_fname` is a NUL-terminated string owned by the loader, valid while the
    // object is loaded (it holds this code).
    let path = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
    let canonical = |p: &std::path::Path| std::fs::canonicalize(p).ok();
    let ours = std::str::from_utf8(path.to_bytes())
        .ok()
        .and_then(|p| canonical(std::path::Path::new(p)));
    ours.is_some() && ours == std::env::current_exe().ok().and_then(|p| canonical(&p))
}

/// Pin the module (DLL or executable) this code lives in, so it is never unloaded. Returns
/// whether it is pinned; `false` means the caller must not leave a thread running in it.
#[cfg(windows)]
pub(crate) fn pin_library() -> bool {
    use std::ffi::c_void;
    const GET_MODULE_HANDLE_EX_FLAG_PIN: u32 = 0x1;
    const GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS: u32 = 0x4;
    #[link(name = "kernel32")]
    unsafe extern "system" {
        fn GetModuleHandleExW(flags: u32, name: *const c_void, module: *mut *mut c_void) -> i32;
    }
    let mut module: *mut c_void = std::ptr::null_mut();
    // SAFETY: with FLAG_FROM_ADDRESS, `name` is an address inside the module to look up
    // (this function's code), and `module` is a valid place for the handle. FLAG_PIN keeps
    // the module loaded until the process ends.
    let ok = unsafe {
        GetModuleHandleExW(
            GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_PIN,
            pin_library as *const c_void,
            &mut module,
        )
    };
    ok != 0
}

/// No way to pin here: the caller waits for its thread instead.
#[cfg(not(any(unix, windows)))]
pub(crate) fn pin_library() -> bool {
    false
}

/// End a thread that was told to stop (and unparked): wait for it at most `wait_ms`. One still
/// busy then is left to end on its own, with the library pinned first so a host unloading the
/// plugin cannot pull the code from under it; where pinning fails, wait for it instead. `what`
/// names it in the log ("The simulation thread").
pub(crate) fn join_within(thread: std::thread::JoinHandle<()>, wait_ms: u64, what: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(wait_ms);
    while !thread.is_finished() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    if !thread.is_finished() && pin_library() {
        nice_plug::nice_warn!("{what} is still busy after {wait_ms} ms; it ends on its own");
        return;
    }
    if thread.join().is_err() {
        nice_plug::nice_error!("{what} panicked");
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_library_can_be_pinned() {
        assert!(super::pin_library());
        // Pinning twice is harmless.
        assert!(super::pin_library());
    }
}
