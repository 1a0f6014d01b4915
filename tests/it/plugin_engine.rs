//! The plugin starts its simulation lazily: a host scanning it (create, activate, destroy)
//! gets no solver and no GPU device; audio flowing starts it.

use crate::common;

use common::mock::{Process, activate_48k, process_silence};
use dyeflow::Dyeflow;
use nice_plug::prelude::*;
use std::time::{Duration, Instant};

#[test]
fn a_scan_creates_no_solver() {
    common::private_captures();
    let mut plugin = Dyeflow::default();
    let engine = plugin.engine();
    assert!(engine.status().is_none(), "no thread before activation");
    assert!(activate_48k(&mut plugin));
    // The thread waits in standby: no solver, no device.
    std::thread::sleep(Duration::from_millis(100));
    assert!(!engine.running());
    assert_eq!(engine.status().map(|s| s.backend), Some(String::new()));
    drop(plugin);
}

#[test]
fn audio_flowing_starts_the_simulation() {
    common::private_captures();
    let mut plugin = Dyeflow::default();
    let engine = plugin.engine();
    assert!(activate_48k(&mut plugin));
    let mut ctx = Process::new(48_000.0);
    assert_eq!(
        process_silence(&mut plugin, &mut ctx, 2, 512),
        ProcessStatus::Normal
    );
    assert!(engine.running());
    let start = Instant::now();
    loop {
        if engine.status().is_some_and(|s| !s.backend.is_empty()) {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the solver never started"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    drop(plugin);
}
