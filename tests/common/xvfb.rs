//! A private X display (Xvfb) with screenshots (ImageMagick's `import`) and input (`xdotool`),
//! for the editor tests.
//!
//! Without the tools the tests skip, unless `DYEFLOW_REQUIRE_DISPLAY=1` (CI sets it after
//! installing them), where a missing tool fails the test.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
// The harness child (the editor tests') runs on Linux only.
use std::time::{Duration, Instant};
#[cfg(target_os = "linux")]
use std::{io::Write, process::ChildStdin, sync::Arc};

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The display tests of a test binary run one at a time: each brings an X server, a
/// software-GL window and a simulation, and on a 2-core machine in parallel they would measure
/// each other's load.
static SERIAL: Mutex<()> = Mutex::new(());

/// Hold this while a display test runs.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Whether the display tools exist; `false` (with a note) means skip. Panics when they are
/// missing but required.
pub fn tools_available() -> bool {
    let missing: Vec<&str> = ["Xvfb", "xdotool", "import"]
        .into_iter()
        .filter(|t| !have(t))
        .collect();
    if missing.is_empty() {
        return true;
    }
    assert!(
        std::env::var("DYEFLOW_REQUIRE_DISPLAY").as_deref() != Ok("1"),
        "DYEFLOW_REQUIRE_DISPLAY=1 but missing: {missing:?} (Debian: xvfb xdotool imagemagick)"
    );
    eprintln!("SKIPPED: missing {missing:?}; set DYEFLOW_REQUIRE_DISPLAY=1 to fail instead");
    false
}

/// A running Xvfb server, killed on drop.
pub struct Display {
    pub name: String,
    server: Child,
}

impl Display {
    /// Start Xvfb, 24-bit, `width x height`, on a display number that the server picks
    /// itself (`-displayfd`) so that tests running in parallel never race for one.
    pub fn start(width: u32, height: u32) -> Self {
        let mut server = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                &format!("{width}x{height}x24"),
                "-nolisten",
                "tcp",
                // By default the server resets when its last client leaves, and a window
                // opened during the reset fails to connect: the open/close cycles do exactly
                // that.
                "-noreset",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start Xvfb");
        // Xvfb writes the number once it accepts connections.
        let stdout = server.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        match rx.recv_timeout(Duration::from_secs(20)) {
            Ok(line) if line.trim().parse::<u32>().is_ok() => Self {
                name: format!(":{}", line.trim()),
                server,
            },
            other => {
                let _ = server.kill();
                panic!("Xvfb did not start: {other:?}");
            }
        }
    }

    /// Run `xdotool` with `args` on this display; its standard output.
    pub fn xdotool(&self, args: &[&str]) -> String {
        let out = Command::new("xdotool")
            .args(args)
            .env("DISPLAY", &self.name)
            .output()
            .expect("run xdotool");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A left-button drag in `window` (window pixels): press at `from`, move to `to` in
    /// `steps` even steps `pause` apart, release.
    pub fn drag(
        &self,
        window: &str,
        from: (f32, f32),
        to: (f32, f32),
        steps: u32,
        pause: Duration,
    ) {
        let move_to = |(x, y): (f32, f32)| {
            let (x, y) = ((x as i64).to_string(), (y as i64).to_string());
            self.xdotool(&["mousemove", "--window", window, &x, &y]);
        };
        move_to(from);
        self.xdotool(&["mousedown", "1"]);
        for k in 1..=steps {
            let t = k as f32 / steps as f32;
            move_to((from.0 + (to.0 - from.0) * t, from.1 + (to.1 - from.1) * t));
            std::thread::sleep(pause);
        }
        self.xdotool(&["mouseup", "1"]);
    }

    /// The id of the first visible window titled `title`, waiting up to `timeout`.
    pub fn find_window(&self, title: &str, timeout: Duration) -> Option<String> {
        let start = Instant::now();
        while start.elapsed() < timeout {
            let out = self.xdotool(&["search", "--onlyvisible", "--name", title]);
            if let Some(id) = out.split_whitespace().next() {
                return Some(id.to_owned());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        None
    }

    /// The ids of the visible windows titled `title`, waiting up to `timeout` for `count`.
    pub fn find_windows(&self, title: &str, count: usize, timeout: Duration) -> Vec<String> {
        let start = Instant::now();
        loop {
            let out = self.xdotool(&["search", "--onlyvisible", "--name", title]);
            let ids: Vec<String> = out.split_whitespace().map(str::to_owned).collect();
            if ids.len() >= count || start.elapsed() > timeout {
                return ids;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// A window's position and size on screen.
    pub fn geometry(&self, window: &str) -> (i32, i32, u32, u32) {
        let out = self.xdotool(&["getwindowgeometry", "--shell", window]);
        let get = |key: &str| -> i64 {
            out.lines()
                .find_map(|l| l.strip_prefix(&format!("{key}=")))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or_else(|| panic!("no {key} in {out:?}"))
        };
        (
            get("X") as i32,
            get("Y") as i32,
            get("WIDTH") as u32,
            get("HEIGHT") as u32,
        )
    }

    /// The whole screen as RGBA8.
    pub fn screenshot(&self) -> Image {
        let out = Command::new("import")
            .args(["-display", &self.name, "-window", "root", "png:-"])
            .output()
            .expect("run import");
        assert!(
            out.status.success(),
            "import failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Image::decode_png(&out.stdout)
    }
}

impl Drop for Display {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

/// An RGBA8 picture.
#[derive(Clone)]
pub struct Image {
    pub width: u32,
    pub height: u32,
    pub rgba: Vec<u8>,
}

impl Image {
    /// Decode a PNG (any colour type png can expand to 8-bit RGB or RGBA).
    pub fn decode_png(bytes: &[u8]) -> Self {
        let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
        let mut reader = decoder.read_info().expect("a PNG");
        let mut buf = vec![0; reader.output_buffer_size().expect("PNG size")];
        let info = reader.next_frame(&mut buf).expect("PNG frame");
        let (w, h) = (info.width, info.height);
        let rgba = match info.color_type {
            png::ColorType::Rgba => buf[..(w * h * 4) as usize].to_vec(),
            png::ColorType::Rgb => buf[..(w * h * 3) as usize]
                .chunks_exact(3)
                .flat_map(|p| [p[0], p[1], p[2], 255])
                .collect(),
            png::ColorType::Grayscale => buf[..(w * h) as usize]
                .iter()
                .flat_map(|&g| [g, g, g, 255])
                .collect(),
            other => panic!("unexpected PNG colour type {other:?}"),
        };
        Self {
            width: w,
            height: h,
            rgba,
        }
    }

    /// Encode as PNG.
    pub fn encode_png(&self) -> Vec<u8> {
        let mut out = Vec::new();
        {
            let mut enc = png::Encoder::new(&mut out, self.width, self.height);
            enc.set_color(png::ColorType::Rgba);
            enc.set_depth(png::BitDepth::Eight);
            let mut w = enc.write_header().expect("PNG header");
            w.write_image_data(&self.rgba).expect("PNG data");
        }
        out
    }

    /// The pixel at `(x, y)`.
    pub fn at(&self, x: u32, y: u32) -> [u8; 4] {
        let i = ((y.min(self.height - 1) * self.width + x.min(self.width - 1)) * 4) as usize;
        self.rgba[i..i + 4].try_into().unwrap()
    }

    /// The brightest pixel (by max channel) in the square of half-side `r` around `(x, y)`.
    pub fn brightest_near(&self, x: u32, y: u32, r: u32) -> [u8; 4] {
        let mut best = [0u8; 4];
        for yy in y.saturating_sub(r)..=(y + r).min(self.height - 1) {
            for xx in x.saturating_sub(r)..=(x + r).min(self.width - 1) {
                let p = self.at(xx, yy);
                if p[..3].iter().max() > best[..3].iter().max() {
                    best = p;
                }
            }
        }
        best
    }

    /// A sub-rectangle.
    pub fn crop(&self, x: u32, y: u32, w: u32, h: u32) -> Image {
        let mut rgba = Vec::with_capacity((w * h * 4) as usize);
        for yy in y..y + h {
            let start = ((yy * self.width + x) * 4) as usize;
            rgba.extend_from_slice(&self.rgba[start..start + (w * 4) as usize]);
        }
        Image {
            width: w,
            height: h,
            rgba,
        }
    }
}

/// Hue in degrees and value (0..1) of a pixel.
pub fn hue_value(p: [u8; 4]) -> (f32, f32) {
    let [r, g, b] = [p[0], p[1], p[2]].map(|c| f32::from(c) / 255.0);
    let max = r.max(g).max(b);
    let d = max - r.min(g).min(b);
    if d <= 1e-6 {
        return (0.0, max);
    }
    let h = if max == r {
        60.0 * ((g - b) / d).rem_euclid(6.0)
    } else if max == g {
        60.0 * ((b - r) / d + 2.0)
    } else {
        60.0 * ((r - g) / d + 4.0)
    };
    (h, max)
}

/// Distance between two hues in degrees.
pub fn hue_distance(a: f32, b: f32) -> f32 {
    let d = (a - b).rem_euclid(360.0);
    d.min(360.0 - d)
}

/// A child process of this test binary running the harness, with its reports collected.
#[cfg(target_os = "linux")]
pub struct HarnessChild {
    child: Child,
    stdin: ChildStdin,
    pub lines: Arc<Mutex<Vec<String>>>,
}

#[cfg(target_os = "linux")]
impl HarnessChild {
    /// Start `test_name` (an ignored test that calls the harness) on `display`.
    pub fn start(display: &Display, test_name: &str) -> Self {
        Self::start_with_env(display, test_name, &[])
    }

    /// [`Self::start`] with extra environment variables for the child.
    pub fn start_with_env(display: &Display, test_name: &str, env: &[(&str, &str)]) -> Self {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--ignored",
                "--exact",
                &super::test_named(test_name),
                "--nocapture",
                "--test-threads=1",
            ])
            .env(super::harness::HARNESS_ENV, "1")
            .env("DISPLAY", &display.name)
            .env("LIBGL_ALWAYS_SOFTWARE", "1")
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the harness");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let lines = Arc::new(Mutex::new(Vec::new()));
        {
            let lines = lines.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                    lines.lock().unwrap().push(line);
                }
            });
        }
        Self {
            child,
            stdin,
            lines,
        }
    }

    /// Send one command line.
    pub fn send(&mut self, command: &str) {
        writeln!(self.stdin, "{command}").expect("write to the harness");
        self.stdin.flush().unwrap();
    }

    /// Wait until a report line satisfies `pred`.
    /// `false` at once if the child has exited without one.
    pub fn wait_for(&mut self, pred: impl Fn(&str) -> bool, timeout: Duration) -> bool {
        let start = Instant::now();
        while start.elapsed() < timeout {
            if self.lines.lock().unwrap().iter().any(|l| pred(l)) {
                return true;
            }
            if let Ok(Some(_)) = self.child.try_wait() {
                // Give the reader thread a moment to collect the last lines.
                std::thread::sleep(Duration::from_millis(100));
                return self.lines.lock().unwrap().iter().any(|l| pred(l));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// The reports so far.
    pub fn reports(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }

    /// Ask the harness to quit and wait for it (killing it after `timeout`); whether it exited
    /// cleanly.
    pub fn quit(mut self, timeout: Duration) -> bool {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.stdin.flush();
        let start = Instant::now();
        while start.elapsed() < timeout {
            if let Ok(Some(status)) = self.child.try_wait() {
                if !status.success() {
                    eprintln!("the harness exited with {status}");
                }
                return status.success();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        eprintln!("the harness did not exit within {timeout:?}; killing it");
        let _ = self.child.kill();
        let _ = self.child.wait();
        false
    }
}
