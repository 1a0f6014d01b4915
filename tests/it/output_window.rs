//! The output window under Xvfb with two monitors side by side (RandR 1.5 monitors LEFT and
//! RIGHT on one 2560x720 screen): it opens on the chosen monitor at the chosen size or
//! fullscreen, shows live frames, leaves fullscreen on Esc, survives 50 editor open/close
//! cycles, comes back with a project saved with it open, and closes with the instance.
//!
//! As in `tests/it/editor.rs`, the plugin runs in a child process (the harness, driven through
//! its standard input) on a display of its own; screenshots are kept in
//! `target/tmp/output-window-tests/`.

use crate::common;

use common::harness::{self, in_harness};
use common::xvfb::{self, Display, HarnessChild, Image, serial};
use dyeflow::output_window::{Placement, TITLE};
use dyeflow::params::OutputSettings;
use std::time::{Duration, Instant};
use x11rb::connection::Connection;
use x11rb::protocol::randr::{ConnectionExt as _, MonitorInfo};
use x11rb::protocol::xproto::ConnectionExt as _;

#[test]
#[ignore = "the output window harness, run by the tests below in a child process"]
fn harness_output() {
    if in_harness() {
        harness::run_output(harness::small_cpu(), None);
    }
}

#[test]
#[ignore = "the output window harness, run by the tests below in a child process"]
fn harness_output_saved_open() {
    if in_harness() {
        let saved = OutputSettings {
            open: true,
            placement: Placement {
                monitor: "RIGHT".into(),
                fullscreen: false,
                width: 640,
                height: 360,
            },
        };
        harness::run_output(harness::small_cpu(), Some(saved));
    }
}

#[test]
#[ignore = "the output window harness, run by the tests below in a child process"]
fn harness_editor() {
    if in_harness() {
        harness::run(harness::small_cpu(), false);
    }
}

const SCREEN: (u32, u32) = (2560, 720);
const LEFT: (i32, i32, u32, u32) = (0, 0, 1280, 720);
const RIGHT: (i32, i32, u32, u32) = (1280, 0, 1280, 720);

/// A 2560x720 display with two 1280x720 monitors, LEFT and RIGHT.
fn two_monitors() -> Display {
    let display = Display::start(SCREEN.0, SCREEN.1);
    let (conn, screen) = x11rb::connect(Some(&display.name)).expect("connect to Xvfb");
    let root = conn.setup().roots[screen].root;
    for (name, (x, y, w, h), primary) in [("LEFT", LEFT, true), ("RIGHT", RIGHT, false)] {
        let atom = conn
            .intern_atom(false, name.as_bytes())
            .unwrap()
            .reply()
            .unwrap()
            .atom;
        let info = MonitorInfo {
            name: atom,
            primary,
            automatic: false,
            x: x as i16,
            y: y as i16,
            width: w as u16,
            height: h as u16,
            width_in_millimeters: 340,
            height_in_millimeters: 190,
            outputs: Vec::new(),
        };
        conn.randr_set_monitor(root, info)
            .expect("RandR SetMonitor")
            .check()
            .expect("Xvfb takes the monitor");
    }
    let monitors = conn
        .randr_get_monitors(root, false)
        .unwrap()
        .reply()
        .unwrap();
    assert!(
        monitors.monitors.len() >= 2,
        "two monitors: {:?}",
        monitors.monitors
    );
    display
}

fn save(image: &Image, name: &str) {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("output-window-tests");
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::write(dir.join(name), image.encode_png());
}

/// The area of the screen a rectangle covers.
fn shot(display: &Display, (x, y, w, h): (i32, i32, u32, u32)) -> Image {
    display.screenshot().crop(x as u32, y as u32, w, h)
}

/// Fraction of pixels brighter than 40 (max channel).
fn lit(image: &Image) -> f32 {
    let n = image
        .rgba
        .chunks_exact(4)
        .filter(|p| p[..3].iter().copied().max().unwrap_or(0) > 40)
        .count();
    n as f32 / (image.width * image.height) as f32
}

/// Fraction of pixels that differ by more than 8 in some channel.
fn changed(a: &Image, b: &Image) -> f32 {
    let n = a
        .rgba
        .chunks_exact(4)
        .zip(b.rgba.chunks_exact(4))
        .filter(|(p, q)| p[..3].iter().zip(&q[..3]).any(|(x, y)| x.abs_diff(*y) > 8))
        .count();
    n as f32 / (a.width * a.height) as f32
}

/// Wait until the window's geometry is `want` (a window placed by another client takes a
/// moment); the last geometry seen.
fn geometry_becomes(
    display: &Display,
    id: &str,
    want: (i32, i32, u32, u32),
) -> (i32, i32, u32, u32) {
    let start = Instant::now();
    loop {
        let g = display.geometry(id);
        if g == want || start.elapsed() > Duration::from_secs(10) {
            return g;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The window shows the live fluid: lit, and changing between two shots 400 ms apart.
fn assert_live(display: &Display, area: (i32, i32, u32, u32), name: &str) {
    let start = Instant::now();
    let mut first = shot(display, area);
    while lit(&first) < 0.02 && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(250));
        first = shot(display, area);
    }
    std::thread::sleep(Duration::from_millis(400));
    let second = shot(display, area);
    save(&first, &format!("{name}-a.png"));
    save(&second, &format!("{name}-b.png"));
    assert!(
        lit(&first) >= 0.02,
        "{name}: the fluid shows ({} lit)",
        lit(&first)
    );
    let d = changed(&first, &second);
    assert!(
        d >= 0.005,
        "{name}: the picture moves ({d} of the pixels changed)"
    );
}

fn status(h: &mut HarnessChild) -> String {
    let before = h.reports().len();
    h.send("output status");
    assert!(h.wait_for(|l| l.starts_with("OUTPUT"), Duration::from_secs(10)));
    let start = Instant::now();
    loop {
        let lines = h.reports();
        if let Some(l) = lines[before..].iter().find(|l| l.starts_with("OUTPUT")) {
            return l.clone();
        }
        assert!(start.elapsed() < Duration::from_secs(10), "no status");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The display with two monitors (and the display tests' lock), and the harness `test` on it,
/// ready; `None` (skip) without the display tools.
fn start(test: &str) -> Option<(std::sync::MutexGuard<'static, ()>, Display, HarnessChild)> {
    if !xvfb::tools_available() {
        return None;
    }
    let serial = serial();
    let display = two_monitors();
    let mut h = HarnessChild::start(&display, test);
    assert!(
        h.wait_for(|l| l.ends_with("READY"), Duration::from_secs(60)),
        "{:?}",
        h.reports()
    );
    Some((serial, display, h))
}

/// Send an `output` command; wait until the window's geometry is `want`.
fn place(display: &Display, h: &mut HarnessChild, command: &str, want: (i32, i32, u32, u32)) {
    h.send(command);
    let id = display
        .find_window(TITLE, Duration::from_secs(30))
        .expect("the output window opens");
    let g = geometry_becomes(display, &id, want);
    assert_eq!(g, want, "after `{command}`: {:?}", h.reports());
}

#[test]
fn opens_on_the_chosen_monitor_shows_live_frames_and_outlives_the_editor() {
    let Some((_serial, display, mut h)) = start("harness_output") else {
        return;
    };
    assert!(
        display
            .find_window(TITLE, Duration::from_millis(500))
            .is_none(),
        "closed until asked"
    );

    // Windowed on the right monitor, centred at its size.
    let right_windowed = (1280 + 320, 180, 640, 360);
    place(
        &display,
        &mut h,
        "output open RIGHT 640x360",
        right_windowed,
    );
    assert_live(&display, right_windowed, "right-windowed");

    // Fullscreen on it.
    place(&display, &mut h, "output open RIGHT full", RIGHT);
    assert_live(&display, RIGHT, "right-fullscreen");
    let s = status(&mut h);
    assert!(
        s.contains("open=1") && s.contains("full=1") && s.contains("monitor=RIGHT"),
        "{s}"
    );

    // Esc leaves fullscreen, back to the windowed size, and the project knows.
    let id = display.find_window(TITLE, Duration::from_secs(5)).unwrap();
    display.xdotool(&["windowfocus", "--sync", &id]);
    display.xdotool(&["key", "Escape"]);
    let g = geometry_becomes(&display, &id, right_windowed);
    assert_eq!(g, right_windowed, "Esc leaves fullscreen");
    let s = status(&mut h);
    assert!(s.contains("full=0") && s.contains("saved_open=1"), "{s}");

    // Moved to the left monitor, another size; F11 fills it.
    let left_windowed = (240, 135, 800, 450);
    place(&display, &mut h, "output open LEFT 800x450", left_windowed);
    display.xdotool(&["windowfocus", "--sync", &id]);
    display.xdotool(&["key", "F11"]);
    assert_eq!(geometry_becomes(&display, &id, LEFT), LEFT, "F11 fills it");
    assert_live(&display, LEFT, "left-fullscreen");

    // The editor opens and closes 50 times; the output window stays, live.
    h.send("cycles 50");
    assert!(
        h.wait_for(|l| l.starts_with("CYCLED"), Duration::from_secs(180)),
        "{:?}",
        h.reports()
    );
    assert_eq!(
        display
            .find_window(TITLE, Duration::from_secs(5))
            .as_deref(),
        Some(id.as_str()),
        "the same window is still open"
    );
    assert_live(&display, LEFT, "after-cycles");

    // A project load changes only the project's settings (the editor is closed): the
    // simulation thread's settings poll makes the window follow.
    h.send("project close");
    assert!(
        becomes_visible(&display, TITLE, false),
        "a loaded project that has it closed closes it"
    );
    h.send("project open RIGHT 640x360");
    assert!(
        becomes_visible(&display, TITLE, true),
        "a loaded project that has it open opens it"
    );
    let id = display.find_window(TITLE, Duration::from_secs(5)).unwrap();
    assert_eq!(
        geometry_becomes(&display, &id, right_windowed),
        right_windowed
    );

    // The audio thread never waited while the window opened, moved, went fullscreen and the
    // editor came and went: process() did not once go to sleep.
    let reports = h.reports();
    let blocks: Vec<&String> = reports.iter().filter(|l| l.starts_with("BLOCK ")).collect();
    assert!(blocks.len() >= 3, "block reports: {blocks:?}");
    let waits: u64 = blocks
        .iter()
        .filter_map(|l| {
            l.split_whitespace()
                .find_map(|kv| kv.strip_prefix("waits="))?
                .parse::<u64>()
                .ok()
        })
        .sum();
    assert_eq!(
        waits, 0,
        "process() went to sleep in {waits} blocks: {blocks:?}"
    );

    // It closes with the instance (the process lives on, as a host does).
    h.send("drop");
    assert!(
        h.wait_for(|l| l.contains("DROPPED"), Duration::from_secs(30)),
        "{:?}",
        h.reports()
    );
    assert!(
        !visible(&display, TITLE),
        "the window is gone with the instance"
    );
    assert!(h.quit(Duration::from_secs(30)), "the harness exits cleanly");
}

#[test]
fn a_project_saved_with_the_window_open_opens_it_again() {
    let Some((_serial, display, mut h)) = start("harness_output_saved_open") else {
        return;
    };
    let id = display
        .find_window(TITLE, Duration::from_secs(30))
        .expect("the saved window opens with the project");
    let want = (1280 + 320, 180, 640, 360);
    assert_eq!(geometry_becomes(&display, &id, want), want);
    assert_live(&display, want, "saved-open");

    // The host names the track: the title says it (two instances' windows told apart).
    h.send("output track Drums");
    assert!(
        becomes_visible(&display, &format!("{TITLE} · Drums"), true),
        "the title names the track"
    );

    // Closed from the panel: gone, and the project says so.
    h.send("output close");
    let start = Instant::now();
    while !display
        .xdotool(&["search", "--onlyvisible", "--name", TITLE])
        .trim()
        .is_empty()
    {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the window closes"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let s = status(&mut h);
    assert!(s.contains("open=0") && s.contains("saved_open=0"), "{s}");
    assert!(h.quit(Duration::from_secs(30)));
}

/// Whether a window titled exactly `title` is visible.
fn visible(display: &Display, title: &str) -> bool {
    let pattern = format!("^{title}$");
    !display
        .xdotool(&["search", "--onlyvisible", "--name", &pattern])
        .trim()
        .is_empty()
}

/// Wait until `visible` is `want`; whether it became so.
fn becomes_visible(display: &Display, title: &str, want: bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(15) {
        if visible(display, title) == want {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

#[test]
fn the_editors_o_key_opens_and_closes_it() {
    let Some((_serial, display, h)) = start("harness_editor") else {
        return;
    };
    assert!(
        becomes_visible(&display, "Dyeflow", true),
        "the editor opens"
    );
    let editor = display
        .xdotool(&["search", "--onlyvisible", "--name", "^Dyeflow$"])
        .split_whitespace()
        .next()
        .expect("the editor's window")
        .to_owned();
    let press_o = || {
        display.xdotool(&["windowfocus", "--sync", &editor]);
        display.xdotool(&["mousemove", "--window", &editor, "200", "200"]);
        display.xdotool(&["key", "o"]);
    };
    assert!(!visible(&display, TITLE), "closed at first");
    press_o();
    assert!(becomes_visible(&display, TITLE, true), "O opens it");
    // On the primary monitor (LEFT), at the default size (the monitor's, at most).
    let id = display.find_window(TITLE, Duration::from_secs(5)).unwrap();
    assert_eq!(geometry_becomes(&display, &id, LEFT), LEFT);
    press_o();
    assert!(becomes_visible(&display, TITLE, false), "O closes it");
    assert!(h.quit(Duration::from_secs(30)));
}

/// Without a display the window does not open, the panel's status says why, and the plugin
/// runs on (no panic, no hang).
#[test]
fn without_a_display_it_says_why() {
    use std::io::{BufRead, BufReader, Write};
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            &common::test_named("harness_output"),
            "--nocapture",
            "--test-threads=1",
        ])
        .env(harness::HARNESS_ENV, "1")
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("start the harness");
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    writeln!(stdin, "output open X full").unwrap();
    // Ask until the window has given up (its thread fails at once without a display).
    let start = Instant::now();
    let mut statuses = Vec::new();
    let failed = |l: &String| l.contains("open=0") && l.contains("error=the output window failed");
    while !statuses.iter().any(failed) && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(200));
        writeln!(stdin, "output status").unwrap();
        for line in lines.by_ref().map_while(Result::ok) {
            if line.starts_with("OUTPUT") {
                statuses.push(line);
                break;
            }
        }
    }
    writeln!(stdin, "quit").unwrap();
    for _ in lines.by_ref() {}
    assert!(child.wait().unwrap().success(), "the harness exits cleanly");
    assert!(statuses.iter().any(failed), "{statuses:?}");
}

/// A window manager on the display (openbox), killed on drop; `None` (skip) when it is not
/// installed, unless the display tools are required.
struct WindowManager(std::process::Child);

impl WindowManager {
    fn start(display: &Display) -> Option<Self> {
        match std::process::Command::new("openbox")
            .env("DISPLAY", &display.name)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
        {
            Ok(child) => {
                // It takes the display over within a moment.
                std::thread::sleep(Duration::from_millis(700));
                Some(Self(child))
            }
            Err(e) => {
                assert!(
                    std::env::var("DYEFLOW_REQUIRE_DISPLAY").as_deref() != Ok("1"),
                    "DYEFLOW_REQUIRE_DISPLAY=1 but openbox does not start: {e} (Debian: openbox)"
                );
                eprintln!("SKIPPED: no openbox ({e})");
                None
            }
        }
    }
}

impl Drop for WindowManager {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Under a window manager, fullscreen goes through EWMH: the window manager fills the chosen
/// monitor (moving from one monitor's fullscreen to the other's too), the window stays
/// borderless (no frame around it), and Esc gives the windowed size back.
#[test]
fn under_a_window_manager_fullscreen_fills_the_chosen_monitor() {
    let Some((_serial, display, mut h)) = start("harness_output") else {
        return;
    };
    let Some(_wm) = WindowManager::start(&display) else {
        return;
    };
    let right_windowed = (1280 + 320, 180, 640, 360);
    place(
        &display,
        &mut h,
        "output open RIGHT 640x360",
        right_windowed,
    );
    place(&display, &mut h, "output open RIGHT full", RIGHT);
    place(&display, &mut h, "output open LEFT full", LEFT);
    place(&display, &mut h, "output open RIGHT full", RIGHT);
    assert_live(&display, RIGHT, "wm-right-fullscreen");
    let id = display.find_window(TITLE, Duration::from_secs(5)).unwrap();
    display.xdotool(&["windowactivate", "--sync", &id]);
    display.xdotool(&["key", "Escape"]);
    assert_eq!(
        geometry_becomes(&display, &id, right_windowed),
        right_windowed,
        "Esc leaves fullscreen"
    );
    assert!(h.quit(Duration::from_secs(30)));
}
