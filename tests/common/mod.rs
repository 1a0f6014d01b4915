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
