//! Shared test helpers.
#![allow(dead_code)]

pub mod clap_host;
pub mod fields;
#[cfg(target_os = "linux")]
pub mod harness;
#[cfg(feature = "cli")]
pub mod midi;
pub mod mock;
pub mod xvfb;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Splat `k` of a busy scene: pushes in turning directions at places wandering over a 16:9
/// canvas (the GPU parity tests' stirring).
pub fn busy_splat(k: usize) -> dyeflow::fluid::Splat {
    let a = k as f32 * 0.9;
    dyeflow::fluid::Splat {
        pos: [
            0.75 + 0.5 * (k as f32 * 0.37).sin(),
            0.5 + 0.3 * (k as f32 * 0.53).cos(),
        ],
        radius: 0.06,
        color: [1.0, 0.5, 0.2],
        amount: 0.5,
        force: [2.5 * a.cos(), 2.5 * a.sin()],
        shape: dyeflow::fluid::SplatShape::Gaussian,
        ..dyeflow::fluid::Splat::default()
    }
}

/// Captures of plugin instances made in this test process go to a folder of its own under the
/// build's temporary directory, never to the user's `~/Dyeflow/captures`: an instance driven
/// faster than real time for seconds is a bounce (see `dyeflow::capture::pace`). The folder.
pub fn private_captures() -> std::path::PathBuf {
    static DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("captures-{}", std::process::id()));
        // Process ids come again (under Wine at once): what an earlier process of this id
        // left goes first. No live process shares the id.
        let _ = std::fs::remove_dir_all(&dir);
        dyeflow::capture::set_capture_dir(Some(dir.clone()));
        dir
    })
    .clone()
}

/// A seeded generator, so failures reproduce.
pub fn rng(seed: u64) -> SmallRng {
    SmallRng::seed_from_u64(seed)
}

/// Audio that mixes ordinary samples with every kind of extreme value: full-scale and huge
/// values, the smallest normals, subnormals, signed zeros, infinities and NaNs (with payloads).
pub fn hostile_audio(rng: &mut SmallRng, len: usize) -> Vec<f32> {
    (0..len)
        .map(|_| match rng.random_range(0..20) {
            0 => f32::MAX,
            1 => f32::MIN,
            2 => f32::MIN_POSITIVE * if rng.random() { 1.0 } else { -1.0 },
            3 => f32::from_bits(rng.random_range(1..0x0080_0000)), // positive subnormal
            4 => f32::from_bits(0x8000_0000 | rng.random_range(1..0x0080_0000)), // negative
            5 => 0.0,
            6 => -0.0,
            7 => f32::INFINITY,
            8 => f32::NEG_INFINITY,
            9 => f32::from_bits(0x7fc0_0000 | rng.random_range(0..0x0040_0000)), // NaN
            10 => rng.random_range(-1.0e30..1.0e30),
            _ => rng.random_range(-1.0..1.0),
        })
        .collect()
}

/// What Dyeflow's output must be for `x`: `x` itself, bit for bit, except that a subnormal
/// becomes a zero of the same sign.
pub fn expected_passthrough(x: f32) -> u32 {
    if x.is_subnormal() {
        x.to_bits() & 0x8000_0000
    } else {
        x.to_bits()
    }
}

/// The GPU for a test, or `None` (with a note) when there is none. With
/// `DYEFLOW_REQUIRE_GPU=1` (as in CI, which installs lavapipe) a missing GPU fails the test.
pub fn gpu_context() -> Option<dyeflow::gpu::GpuContext> {
    match dyeflow::gpu::GpuContext::new(&Default::default()) {
        Ok(ctx) => Some(ctx),
        Err(e) => {
            assert!(
                std::env::var("DYEFLOW_REQUIRE_GPU").as_deref() != Ok("1"),
                "DYEFLOW_REQUIRE_GPU=1 but no GPU: {e}"
            );
            eprintln!("SKIPPED: no GPU adapter ({e}); set DYEFLOW_REQUIRE_GPU=1 to fail instead");
            None
        }
    }
}

/// The full name of this test binary's test `name`, as `--exact` wants it (`module::name` in a
/// binary of several modules), for running that test alone in a child process. Panics unless
/// exactly one test (ignored ones included) is called so.
pub fn test_named(name: &str) -> String {
    let exe = std::env::current_exe().expect("this test binary's path");
    let out = std::process::Command::new(exe)
        .args(["--list", "--include-ignored", "--format", "terse"])
        .output()
        .expect("list this binary's tests");
    let list = String::from_utf8_lossy(&out.stdout);
    let found: Vec<&str> = list
        .lines()
        .filter_map(|l| l.strip_suffix(": test"))
        .filter(|t| *t == name || t.rsplit("::").next() == Some(name))
        .collect();
    assert_eq!(found.len(), 1, "tests named {name}: {found:?}");
    found[0].to_owned()
}

/// Runs `command` to its end (standard output dropped): its exit code (-1 when a signal ended
/// it), its standard error, and its peak resident memory in bytes. The peak is the child's own
/// (`VmHWM` of `/proc/PID/status`, read every millisecond while it runs), not `wait4`'s
/// `ru_maxrss`, which also counts the pages of this test process that the child held between
/// `fork` and `exec`: a test binary of many tests can be larger than the child it measures.
#[cfg(target_os = "linux")]
pub fn run_measuring_rss(command: &mut std::process::Command) -> (i32, String, u64) {
    use std::io::Read;
    let mut child = command
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let status_file = format!("/proc/{}/status", child.id());
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let high_water = || {
        let status = std::fs::read_to_string(&status_file).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        line.split_whitespace().nth(1)?.parse::<u64>().ok()
    };
    let mut peak_kb = 0;
    let status = loop {
        // Read before asking whether it ended: a zombie has no memory left to tell.
        peak_kb = peak_kb.max(high_water().unwrap_or(0));
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    };
    (
        status.code().unwrap_or(-1),
        reader.join().unwrap(),
        peak_kb * 1024,
    )
}
