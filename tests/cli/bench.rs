//! `dyeflow bench` from the command line: the particle fluid's and the streamlines' figures,
//! as a table and as JSON.

use crate::commands::run;

/// A bench run small enough for a test: 32² on the CPU, 3 steps, a 64x36 frame.
const SMALL_BENCH: [&str; 11] = [
    "bench",
    "--backend",
    "cpu",
    "--size",
    "32",
    "--steps",
    "3",
    "--iters",
    "2",
    "--frame-size",
    "64x36",
];

/// `bench --particles N` seeds them, reports their count (at most the backend's slots) and
/// their stage's time in the JSON (and in the table), and refuses more than the GPU holds.
#[test]
fn bench_reports_particles() {
    let base = SMALL_BENCH;
    fn with<'a>(base: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
        base.iter().chain(extra).copied().collect()
    }
    let (code, out, err) = run(&with(&base, &["--particles", "5000", "--json"]));
    assert_eq!(code, 0, "{err}");
    let r: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON line");
    assert_eq!(r["particles"], 5000, "{out}");
    assert!(
        r["particles_ms"].as_f64().is_some_and(|ms| ms > 0.0),
        "{out}"
    );
    let (code, out, err) = run(&with(&base, &["--json"]));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("\"particles\":0") && !out.contains("particles_ms"),
        "{out}"
    );
    let (code, out, _) = run(&with(&base, &["--particles", "5000"]));
    assert_eq!(code, 0);
    assert!(out.contains("5000 particles: their step stage"), "{out}");
    // More than the CPU's slots: the figure is what it holds, not what was asked for.
    let (code, out, err) = run(&with(&base, &["--particles", "200000", "--json"]));
    assert_eq!(code, 0, "{err}");
    let r: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON line");
    assert_eq!(
        r["particles"],
        dyeflow::sim::grid::particles::CPU_CAPACITY,
        "{out}"
    );
    let (code, _, err) = run(&with(&base, &["--particles", "2000000"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--particles"), "{err}");
}

/// `--streamlines` times a frame of the lines alone: the JSON has their number (32 rows of 32
/// on a square grid) and time, the table a line; without it, neither.
#[test]
fn bench_reports_streamlines() {
    let base = SMALL_BENCH;
    let args: Vec<&str> = base
        .iter()
        .chain(&["--streamlines", "--json"])
        .copied()
        .collect();
    let (code, out, err) = run(&args);
    assert_eq!(code, 0, "{err}");
    let r: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON line");
    assert_eq!(r["streamlines"], 32 * 32, "{out}");
    assert!(
        r["streamlines_ms"].as_f64().is_some_and(|ms| ms > 0.0),
        "{out}"
    );
    let (code, out, _) = run(&base.iter().chain(&["--json"]).copied().collect::<Vec<_>>());
    assert_eq!(code, 0);
    assert!(
        out.contains("\"streamlines\":0") && !out.contains("streamlines_ms"),
        "{out}"
    );
    let (code, out, _) = run(&base
        .iter()
        .chain(&["--streamlines"])
        .copied()
        .collect::<Vec<_>>());
    assert_eq!(code, 0);
    assert!(out.contains("1024 streamlines alone at 64x36"), "{out}");
}
