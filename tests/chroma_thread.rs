//! The plugin's chroma thread starts with its first activation (not when a host merely
//! creates it) and stops with it: no thread is left behind, and dropping the plugin is not
//! held up by it. Alone in its test binary, so no other test's plugin owns such a thread.

mod common;

use common::mock::activate_48k;
use dyeflow::Dyeflow;
use dyeflow::engine::DROP_WAIT_MS;
use dyeflow::engine::chroma::CHROMA_THREAD_NAME;
use std::time::{Duration, Instant};

/// How many of this process's threads carry the chroma thread's name.
fn chroma_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .expect("/proc")
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .filter(|name| name.trim() == CHROMA_THREAD_NAME)
        .count()
}

#[cfg(target_os = "linux")]
#[test]
fn the_chroma_thread_lives_from_activation_to_drop() {
    for _ in 0..3 {
        common::private_captures();
        let mut plugin = Dyeflow::default();
        assert_eq!(chroma_threads(), 0, "a scan starts no thread");
        assert!(activate_48k(&mut plugin));
        // Re-activation keeps the one thread (which names itself once it runs).
        assert!(activate_48k(&mut plugin));
        let start = Instant::now();
        while chroma_threads() == 0 && start.elapsed() < Duration::from_secs(2) {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(chroma_threads(), 1);
        // The plugin's drop stops the simulation thread (in standby: no audio flowed, so no
        // solver is being made) and the chroma thread, each bounded by DROP_WAIT_MS.
        let start = Instant::now();
        drop(plugin);
        let took = start.elapsed();
        assert!(
            took < Duration::from_millis(2 * DROP_WAIT_MS + 50),
            "dropping took {took:?}"
        );
        assert_eq!(chroma_threads(), 0, "the thread was left behind");
    }
}
