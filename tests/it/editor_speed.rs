//! The editor's speed with each solver backend: new fluid frames shown per second and the
//! process's CPU use, with seven notes held, under Xvfb (software OpenGL, as on a machine with
//! no GPU). A measurement, not a check: run it by hand.
//!
//! ```sh
//! cargo test --release --test it -- --ignored --nocapture editor_speed::measure
//! ```

use crate::common;

use common::harness;
use common::xvfb::{self, Display, HarnessChild};
use dyeflow::params::BackendChoice;
use std::time::{Duration, Instant};

/// The harness for one backend (`DYEFLOW_SPEED_BACKEND`: auto, gpu or cpu), with the default
/// simulation (256 cells tall, dye twice as fine): reports `SPEED shown=<frames> cpu_ms=<ms>`
/// every 500 ms.
#[test]
#[ignore = "the editor harness, run by `measure` in a child process"]
fn harness_speed() {
    if std::env::var_os(harness::HARNESS_ENV).is_none() {
        return;
    }
    let backend = match std::env::var("DYEFLOW_SPEED_BACKEND").as_deref() {
        Ok("gpu") => BackendChoice::Gpu,
        Ok("cpu") => BackendChoice::Cpu,
        _ => BackendChoice::Auto,
    };
    let settings = dyeflow::params::Settings {
        backend,
        ..dyeflow::params::Settings::default()
    };
    std::thread::spawn(|| {
        loop {
            std::thread::sleep(Duration::from_millis(500));
            let shown = dyeflow::editor::FRAMES_SHOWN.load(std::sync::atomic::Ordering::Relaxed);
            println!("SPEED shown={shown} cpu_ms={}", cpu_ms());
        }
    });
    harness::run(settings, true);
}

/// CPU time of this process so far, user and system, in milliseconds.
fn cpu_ms() -> u64 {
    // SAFETY: getrusage only writes the struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let ms = |t: libc::timeval| t.tv_sec as u64 * 1000 + t.tv_usec as u64 / 1000;
    ms(usage.ru_utime) + ms(usage.ru_stime)
}

fn field(line: &str, key: &str) -> Option<u64> {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
}

#[test]
#[ignore = "a measurement: run by hand"]
fn measure() {
    if !xvfb::tools_available() {
        eprintln!("no Xvfb: nothing measured");
        return;
    }
    println!("| backend | frames shown / s | CPU (100 % = one core) |");
    println!("|---|---|---|");
    for backend in ["auto", "cpu", "gpu"] {
        let display = Display::start(960, 540);
        let mut h = HarnessChild::start_with_env(
            &display,
            "harness_speed",
            &[("DYEFLOW_SPEED_BACKEND", backend)],
        );
        assert!(h.wait_for(|l| l.ends_with("READY"), Duration::from_secs(60)));
        h.send("notes 48,55,60,64,67,72,79");
        // Warm up (the engine starts its solver once audio flows), then 10 s.
        std::thread::sleep(Duration::from_secs(4));
        let last = |h: &HarnessChild| {
            h.reports()
                .into_iter()
                .rev()
                .find(|l| l.starts_with("SPEED"))
                .expect("a SPEED report")
        };
        let (a, t0) = (last(&h), Instant::now());
        std::thread::sleep(Duration::from_secs(10));
        let (b, dt) = (last(&h), t0.elapsed().as_secs_f64());
        let d = |k: &str| (field(&b, k).unwrap() - field(&a, k).unwrap()) as f64;
        println!(
            "| {backend} | {:.1} | {:.0} % |",
            d("shown") / dt,
            d("cpu_ms") / dt / 10.0
        );
        assert!(h.quit(Duration::from_secs(20)));
    }
}
