//! The Windows build, run for real under Wine: the command line's tests (this binary, `cli`:
//! its `commands`, `render`, `capture`, `presets` and `hostile` modules) cross-built for
//! `x86_64-pc-windows-gnu` with mingw-w64 and run as a Windows program, and renders by the
//! Windows `dyeflow.exe` that are byte for byte the Linux build's for the same input (the simulation and the picture call no platform maths:
//! `kernels::portable`).
//!
//! The Windows side is built in `target/windows` (its own build directory: this test runs
//! while the outer `cargo test` holds `target/debug`) and run in a Wine prefix of its own there,
//! with a stand-in for `bcryptprimitives.dll`, which Wine 8.0 lacks and Rust's standard library
//! needs (tests/wine/bcryptprimitives.c). Its Unix-only tests (signals, file modes, FIFOs,
//! peak memory through `wait4`) are compiled out on Windows; so is ffmpeg's (Wine sees no
//! Windows ffmpeg), and the GPU there is not lavapipe's.
//!
//! The output window is run too: the Windows standalone app under Wine on a virtual X display
//! (Wine draws its windows through X11 and its OpenGL through Mesa's), opened from the editor,
//! placed, fullscreen and back.
//!
//! Needs Wine, mingw-w64 and the Rust target `x86_64-pc-windows-gnu`; without them the tests
//! skip, unless `DYEFLOW_REQUIRE_CROSS=1` (as `.ci/test` sets after installing them), where
//! they fail. The output window's test needs the display tools too (`DYEFLOW_REQUIRE_DISPLAY`).
#![cfg(target_os = "linux")]

use crate::common;

use common::xvfb::{Display, Image};

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

const TARGET: &str = "x86_64-pc-windows-gnu";
const MINGW_GCC: &str = "x86_64-w64-mingw32-gcc";
/// The command line's test binaries, run as Windows programs.
const WINDOWS_TESTS: [&str; 1] = ["cli"];

/// Where the Windows side is built and run: `target/windows`.
fn windows_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the build's tmp folder is inside its target folder")
        .join("windows")
}

fn runs(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The tools the Windows side needs that this machine lacks.
fn missing_tools() -> Vec<String> {
    let mut missing = Vec::new();
    if !runs("wine", &["--version"]) {
        missing.push("wine (Debian: wine, wine64)".to_string());
    }
    if !runs(MINGW_GCC, &["--version"]) {
        missing.push(format!("{MINGW_GCC} (Debian: gcc-mingw-w64-x86-64)"));
    }
    let libdir = Command::new("rustc")
        .args(["--print", "target-libdir", "--target", TARGET])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    if !libdir.is_some_and(|d| has_std(&d)) {
        missing.push(format!(
            "the Rust target {TARGET} (rustup target add {TARGET})"
        ));
    }
    missing
}

/// Whether a target's library folder holds a standard library.
fn has_std(libdir: &Path) -> bool {
    std::fs::read_dir(libdir).is_ok_and(|entries| {
        entries
            .filter_map(Result::ok)
            .any(|e| e.file_name().to_string_lossy().starts_with("libstd-"))
    })
}

/// False (and a note) where the tools are missing and not required; a failure where they are.
fn tools_or_skip() -> bool {
    let missing = missing_tools();
    if missing.is_empty() {
        return true;
    }
    assert!(
        std::env::var_os("DYEFLOW_REQUIRE_CROSS").is_none_or(|v| v != "1"),
        "DYEFLOW_REQUIRE_CROSS=1 but this machine lacks {}",
        missing.join(", ")
    );
    eprintln!(
        "SKIPPED: no {}; set DYEFLOW_REQUIRE_CROSS=1 to fail instead",
        missing.join(", ")
    );
    false
}

/// `wine` (or `wineboot`, `wineserver`) in the test's own prefix: quiet, without the Mono and
/// Gecko installers' prompts, and without a display (the programs under test are console
/// programs).
fn wine(program: &str) -> Command {
    let mut command = Command::new(program);
    in_the_prefix(&mut command);
    command
}

/// The test's Wine prefix and settings for `command` (see [`wine`]).
fn in_the_prefix(command: &mut Command) {
    command
        .env("WINEPREFIX", windows_dir().join("wine-prefix"))
        .env("WINEDEBUG", "-all")
        .env("WINEDLLOVERRIDES", "mscoree,mshtml=")
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY");
}

fn tail(bytes: &[u8], lines: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

fn check(what: &str, output: &Output) {
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{}\n{}",
        output.status,
        tail(&output.stdout, 60),
        tail(&output.stderr, 60)
    );
}

/// `cargo` for the Windows side and `tests`: its target, its build folder, the command line's
/// feature, and Wine as the runner of what it builds.
fn cargo(subcommand: &str, tests: &[&str]) -> Command {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        // The same features for every call (another set would build again): the command line,
        // and the standalone app for the output window's test.
        .args([
            subcommand,
            "--target",
            TARGET,
            "--features",
            "cli,standalone",
        ])
        .env("CARGO_TARGET_DIR", windows_dir())
        .env("CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER", "wine");
    in_the_prefix(&mut command);
    for test in tests {
        command.args(["--test", test]);
    }
    command
}

/// The Windows side, set up once for this process: a Wine prefix with the stand-in DLL, the
/// test binaries and `dyeflow.exe` built. The path of `dyeflow.exe`.
fn windows_build() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    static SETTING_UP: Mutex<()> = Mutex::new(());
    let _one_at_a_time = SETTING_UP.lock().unwrap_or_else(|e| e.into_inner());
    BUILT.get_or_init(|| {
        let dir = windows_dir();
        let prefix = dir.join("wine-prefix");
        std::fs::create_dir_all(&dir).unwrap();
        if !prefix.join("system.reg").exists() {
            check(
                "wineboot --init",
                &wine("wineboot").arg("--init").output().unwrap(),
            );
        }
        // Wine writes its registry when its server ends.
        check(
            "wineserver -w",
            &wine("wineserver").arg("-w").output().unwrap(),
        );
        let system32 = prefix.join("drive_c/windows/system32");
        assert!(system32.is_dir(), "no {}", system32.display());
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/wine/bcryptprimitives.c");
        check(
            "building the bcryptprimitives.dll stand-in",
            &Command::new(MINGW_GCC)
                .args(["-shared", "-O2", "-o"])
                .arg(system32.join("bcryptprimitives.dll"))
                .arg(&source)
                .arg("-ladvapi32")
                .output()
                .unwrap(),
        );
        check(
            "the Windows build",
            &cargo("test", &WINDOWS_TESTS)
                .arg("--no-run")
                .output()
                .unwrap(),
        );
        let exe = dir.join(TARGET).join("debug").join("dyeflow.exe");
        assert!(exe.is_file(), "no {}", exe.display());
        exe
    })
}

/// Wine 8.0 now and then fails to start a process ("Internal error", Windows error 1359) when
/// several start at once; a test binary that failed only so is run again, once.
const WINE_SPAWN_FLAKE: &str = "code: 1359";

/// Every test of the command line's test binaries that compiles on Windows passes as a Windows
/// program under Wine, and each binary ran some.
#[test]
fn the_command_lines_tests_pass_under_wine() {
    if !tools_or_skip() {
        return;
    }
    windows_build();
    for test in WINDOWS_TESTS {
        let run = || {
            cargo("test", &[test])
                // Wine has no Windows ffmpeg, and no GPU here (no Vulkan or DX12 driver).
                .env_remove("DYEFLOW_REQUIRE_FFMPEG")
                .env_remove("DYEFLOW_REQUIRE_GPU")
                .output()
                .unwrap()
        };
        let mut output = run();
        if !output.status.success()
            && String::from_utf8_lossy(&output.stdout).contains(WINE_SPAWN_FLAKE)
        {
            eprintln!("{test}: Wine failed to start a process (error 1359); once more");
            output = run();
        }
        let stdout = String::from_utf8_lossy(&output.stdout);
        let results: Vec<&str> = stdout
            .lines()
            .filter(|l| l.starts_with("test result:"))
            .collect();
        eprintln!("{test} under Wine: {}", results.join(" / "));
        check(&format!("tests/{test}/ under Wine"), &output);
        assert_eq!(results.len(), 1, "{stdout}");
        let passed: usize = results[0]
            .split(';')
            .find_map(|part| part.trim().strip_suffix(" passed"))
            .and_then(|n| n.rsplit(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no count in {:?}", results[0]));
        assert!(
            passed > 0,
            "tests/{test}/ ran nothing under Wine: {}",
            results[0]
        );
    }
}

/// A render's output files, by name.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}

/// The same renders by the Linux build and by the Windows build under Wine (CPU, several
/// threads): the grid fluid with the demo's audio and notes, the particle fluid, and the grid
/// with heat, obstacles, particles and streamlines. Every frame is the same file, byte for byte.
#[test]
fn windows_renders_are_the_linux_renders_byte_for_byte() {
    if !tools_or_skip() {
        return;
    }
    let exe = windows_build();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("windows-renders");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let preset = dir.join("heavy.json");
    std::fs::write(
        &preset,
        r#"{"params": {"vort": 0.85, "dye_diss": 1.1, "colour": "density", "bright": 2.2,
            "buoyancy": 4.0, "cooling": 1.5, "particles": 2000.0, "ptcl_life": 20.0}}"#,
    )
    .unwrap();
    let preset = preset.to_string_lossy().into_owned();
    let renders: [(&str, &[&str]); 3] = [
        ("demo", &[]),
        ("sph", &["--model", "sph"]),
        (
            "heavy",
            &[
                "--preset",
                &preset,
                "--obstacles",
                "pillars",
                "--streamlines",
                "overlay",
            ],
        ),
    ];
    for (name, extra) in renders {
        let mut outs = Vec::new();
        for (side, mut command) in [
            ("linux", Command::new(env!("CARGO_BIN_EXE_dyeflow"))),
            ("windows", {
                let mut c = wine("wine");
                c.arg(exe);
                c
            }),
        ] {
            let out = dir.join(format!("{name}-{side}"));
            let output = command
                .args(["render", "--quiet", "--backend", "cpu", "--threads", "2"])
                .args(["--size", "320x180", "--fps", "15", "--seconds", "2"])
                .args(extra)
                .arg("--out")
                .arg(&out)
                .output()
                .unwrap();
            check(&format!("the {side} render of {name}"), &output);
            outs.push(files(&out));
        }
        let (linux, windows) = (&outs[0], &outs[1]);
        let names = |f: &[(String, Vec<u8>)]| f.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
        assert_eq!(names(linux), names(windows), "{name}: not the same files");
        let frames = linux.iter().filter(|(n, _)| n.ends_with(".png")).count();
        assert_eq!(frames, 30, "{name}: {:?}", names(linux));
        let differing: Vec<&str> = linux
            .iter()
            .zip(windows)
            .filter(|(a, b)| a.1 != b.1)
            .map(|(a, _)| a.0.as_str())
            .collect();
        assert!(
            differing.is_empty(),
            "{name}: {} of {} files differ between Linux and Windows, first {}",
            differing.len(),
            linux.len(),
            differing[0]
        );
    }
}

/// A child process killed (and reaped) on drop.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Wait until `window`'s geometry is `want` (x, y, width, height), at most `limit`; the last
/// one seen.
fn wait_geometry(
    display: &Display,
    window: &str,
    want: (i32, i32, u32, u32),
    limit: Duration,
) -> (i32, i32, u32, u32) {
    let start = Instant::now();
    loop {
        let now = display.geometry(window);
        if now == want || start.elapsed() > limit {
            return now;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The share of pixels brighter than `luma` (0-255).
fn lit_share(image: &Image, luma: f32) -> f64 {
    let lit = image
        .rgba
        .chunks_exact(4)
        .filter(|p| 0.2126 * p[0] as f32 + 0.7152 * p[1] as f32 + 0.0722 * p[2] as f32 > luma)
        .count();
    lit as f64 / (image.rgba.len() / 4) as f64
}

/// The output window as a Windows program: the standalone app (dummy audio) under Wine on a
/// 1920x1080 virtual display. O in the editor opens the window borderless at its default
/// 1280x720, centred on the monitor; a drag in the editor stirs dye; F11 in the output window
/// fills the monitor and shows the fluid; Esc brings it back to 1280x720, centred.
#[test]
fn the_output_window_places_itself_on_windows() {
    if !tools_or_skip() || !common::xvfb::tools_available() {
        return;
    }
    windows_build();
    let standalone = windows_dir()
        .join(TARGET)
        .join("debug")
        .join("dyeflow-standalone.exe");
    assert!(standalone.is_file(), "no {}", standalone.display());
    let _one = common::xvfb::serial();
    let display = Display::start(1920, 1080);
    // A window manager, so that keys go to the window activated (as on a desktop).
    let _wm = Killed(
        Command::new("openbox")
            .env("DISPLAY", &display.name)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("openbox (Debian: openbox)"),
    );
    let captures = Path::new(env!("CARGO_TARGET_TMPDIR")).join("windows-standalone-captures");
    let _app = Killed(
        wine("wine")
            .arg(&standalone)
            .args(["--backend", "dummy"])
            .env("DISPLAY", &display.name)
            .env("DYEFLOW_CAPTURE_DIR", &captures)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let editor = display
        .find_window("^Dyeflow$", Duration::from_secs(120))
        .expect("the editor did not open under Wine");
    // The editor's first frames (a software GL under Wine) before it takes keys.
    std::thread::sleep(Duration::from_secs(3));
    let activate = |window: &str| {
        display.xdotool(&["windowactivate", "--sync", window]);
        display.xdotool(&["windowfocus", window]);
        std::thread::sleep(Duration::from_millis(300));
    };
    activate(&editor);
    display.xdotool(&["key", "--window", &editor, "o"]);
    let output = display
        .find_window("^Dyeflow output", Duration::from_secs(30))
        .expect("O did not open the output window");
    let windowed = (320, 180, 1280, 720);
    let limit = Duration::from_secs(20);
    assert_eq!(wait_geometry(&display, &output, windowed, limit), windowed);

    display.drag(
        &editor,
        (200.0, 250.0),
        (560.0, 370.0),
        30,
        Duration::from_millis(30),
    );
    activate(&output);
    display.xdotool(&["key", "--window", &output, "F11"]);
    let fullscreen = (0, 0, 1920, 1080);
    assert_eq!(
        wait_geometry(&display, &output, fullscreen, limit),
        fullscreen
    );
    // The dye the drag put in, on the whole monitor (the background alone is near black).
    let start = Instant::now();
    let mut lit = 0.0;
    while start.elapsed() < limit {
        lit = lit_share(&display.screenshot(), 60.0);
        if lit > 0.005 {
            break;
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    assert!(
        lit > 0.005,
        "the fullscreen window shows no fluid ({lit:.4} lit)"
    );

    display.xdotool(&["key", "--window", &output, "Escape"]);
    assert_eq!(wait_geometry(&display, &output, windowed, limit), windowed);
}
