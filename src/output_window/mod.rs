//! The output window: the fluid alone, borderless, windowed at any size or fullscreen on a
//! chosen monitor, for a projector or a second screen.
//!
//! Each plugin instance has one [`OutputWindow`]. It is independent of the editor: it has its
//! own frames from the simulation thread (its own consumer of [`crate::frame`], asking for its
//! own size) and its own thread, so it stays open and live while the editor opens and closes,
//! and closes with the instance. Nothing here ever blocks the simulation or the audio thread:
//! the window takes the newest frame when it draws, and the simulation never waits for it.
//!
//! - [`draw`]: the window itself (a baseview window drawn with OpenGL), its keys and pacing.
//! - `x11`, `win32`: the monitors and the placement (borderless, windowed or fullscreen on a
//!   chosen monitor) on X11 and on Windows.
//!
//! Platforms: on Linux (X11) everything works and is tested. On Windows the window opens on a
//! thread of its own with the same monitors, placement and fullscreen (compiled in CI, not
//! run there). macOS allows windows only on the application's main thread, which belongs to
//! the host: there the window is made when the editor follows the project (its frames run on
//! the main thread) and the host's run loop drives it (`macos`; windowed only, compiled in
//! CI, not run).

mod draw;
#[cfg(target_os = "macos")]
mod macos;
#[cfg(windows)]
mod win32;
#[cfg(target_os = "linux")]
mod x11;

/// The platform's monitors and placement.
#[cfg(windows)]
use win32 as platform;
#[cfg(target_os = "linux")]
use x11 as platform;

use crate::frame::FrameOutput;
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

/// The window's title (window managers and task bars show it; the tests find it by it).
pub const TITLE: &str = "Dyeflow output";

/// Smallest and largest windowed size, in pixels per side.
pub const MIN_EDGE: u32 = 64;
pub const MAX_EDGE: u32 = 8192;

/// How long closing waits for the window's threads at most.
const CLOSE_WAIT_MS: u64 = 5000;

/// A rectangle on the screen, in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Rect {
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
}

/// A monitor of the display.
#[derive(Debug, Clone, PartialEq)]
pub struct Monitor {
    /// Its name (e.g. `HDMI-1`), as the display server reports it.
    pub name: String,
    /// Where it is on the screen.
    pub rect: Rect,
    /// Its refresh rate (60 Hz where the server does not tell).
    pub refresh_hz: f64,
    /// The primary monitor.
    pub primary: bool,
}

/// Where and how the window shows; comes back with the project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Placement {
    /// The monitor's name; empty (or a monitor that is gone): the primary one.
    pub monitor: String,
    /// Fill the monitor.
    pub fullscreen: bool,
    /// The windowed size, in pixels (centred on the monitor, at most its size).
    pub width: u32,
    pub height: u32,
}

impl Default for Placement {
    fn default() -> Self {
        Self {
            monitor: String::new(),
            fullscreen: false,
            width: 1280,
            height: 720,
        }
    }
}

impl Placement {
    /// The same with the size in [`MIN_EDGE`]..=[`MAX_EDGE`].
    pub fn sanitized(&self) -> Self {
        Self {
            width: self.width.clamp(MIN_EDGE, MAX_EDGE),
            height: self.height.clamp(MIN_EDGE, MAX_EDGE),
            ..self.clone()
        }
    }

    /// The window's rectangle on `monitor`: all of it in fullscreen, else the windowed size
    /// (at most the monitor's) centred on it.
    pub fn rect_on(&self, monitor: &Monitor) -> Rect {
        let m = monitor.rect;
        if self.fullscreen {
            return m;
        }
        let s = self.sanitized();
        let (w, h) = (s.width.min(m.width), s.height.min(m.height));
        Rect {
            x: m.x + ((m.width - w) / 2) as i32,
            y: m.y + ((m.height - h) / 2) as i32,
            width: w,
            height: h,
        }
    }
}

/// The monitor named `name`; the primary (or first) one when none is.
pub fn pick<'a>(monitors: &'a [Monitor], name: &str) -> Option<&'a Monitor> {
    monitors
        .iter()
        .find(|m| !name.is_empty() && m.name == name)
        .or_else(|| monitors.iter().find(|m| m.primary))
        .or_else(|| monitors.first())
}

/// The display's monitors, primary first (empty where this platform does not list them).
pub fn monitors() -> Result<Vec<Monitor>, String> {
    #[cfg(any(target_os = "linux", windows))]
    {
        platform::monitors()
    }
    #[cfg(not(any(target_os = "linux", windows)))]
    {
        Ok(Vec::new())
    }
}

/// How the window stands, for the editor's panel.
#[derive(Debug, Clone, Default)]
pub struct OutputStatus {
    /// The window is open.
    pub open: bool,
    /// Why it could not open or place itself, if so.
    pub error: Option<String>,
    /// The monitor it is on, and its rectangle.
    pub monitor: Option<Monitor>,
    pub rect: Rect,
    /// New fluid frames shown per second.
    pub fps: f32,
    /// Its rate of drawing (the monitor's refresh rate).
    pub refresh_hz: f64,
}

/// The largest frame worth asking for (the dye grid's size: the GPU of the display scales up
/// as well as the simulation would, for free).
pub type FrameCap = Arc<dyn Fn() -> (usize, usize) + Send + Sync>;

/// Told whenever the window changes its placement or closes by itself (Esc leaving fullscreen,
/// the window manager resizing or closing it), to keep the project's copy current.
pub type OnChange = Arc<dyn Fn(&Placement, bool) + Send + Sync>;

/// What the controller and one window's thread share (each window has its own, so a window
/// still closing never mixes with the next one).
struct Live {
    /// A placement to apply (taken by the window when it next draws).
    wanted: Mutex<Option<Placement>>,
    /// A title to show (taken likewise).
    title: Mutex<Option<String>>,
    /// Asked to close.
    close: AtomicBool,
    status: Mutex<OutputStatus>,
}

impl Live {
    fn new(placement: Option<Placement>, title: String) -> Arc<Self> {
        Arc::new(Self {
            wanted: Mutex::new(placement),
            title: Mutex::new(Some(title)),
            close: AtomicBool::new(false),
            status: Mutex::new(OutputStatus::default()),
        })
    }
}

/// A window's thread and what it shares.
struct Running {
    /// The window's thread; none on macOS, where the window lives on the main thread (and
    /// says it closed through its status).
    thread: Option<JoinHandle<()>>,
    live: Arc<Live>,
}

impl Running {
    /// Open, not closing.
    fn open(&self) -> bool {
        let alive = match &self.thread {
            Some(thread) => !thread.is_finished(),
            None => self.live.status.lock().open,
        };
        alive && !self.live.close.load(Ordering::Acquire)
    }
}

/// Tells instances apart (macOS keeps their windows in one list on the main thread).
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// One instance's output window: open, placed and closed from any thread.
pub struct OutputWindow {
    /// This instance's number, unique in the process.
    #[cfg_attr(not(target_os = "macos"), allow(dead_code))]
    id: u64,
    frames: Arc<Mutex<FrameOutput>>,
    cap: FrameCap,
    on_change: OnChange,
    /// The window's thread, if one was started (it may have ended or be closing).
    running: Mutex<Option<Running>>,
    /// Threads of windows asked to close while a new one opened (joined on close).
    closing: Mutex<Vec<JoinHandle<()>>>,
    /// The instance is going: nothing opens any more.
    shut: AtomicBool,
    /// The host's name for the instance's track, if it told.
    track: Mutex<Option<String>>,
    /// The status of the last window (or why none opened).
    last: Mutex<Arc<Live>>,
    /// The settings last followed (see [`OutputWindow::follow`]), kept current by the window
    /// when it changes them itself.
    followed: Arc<Mutex<Option<(bool, Placement)>>>,
}

impl OutputWindow {
    /// An output window (closed) showing `frames`.
    pub fn new(frames: FrameOutput, cap: FrameCap, on_change: OnChange) -> Self {
        Self {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            frames: Arc::new(Mutex::new(frames)),
            cap,
            on_change,
            running: Mutex::new(None),
            closing: Mutex::new(Vec::new()),
            shut: AtomicBool::new(false),
            track: Mutex::new(None),
            last: Mutex::new(Live::new(None, TITLE.into())),
            followed: Arc::new(Mutex::new(None)),
        }
    }

    /// Follow the project's settings, as `settings` reads them (open, placement): open, move
    /// or close the window when they changed since they were last followed (or since the
    /// window itself changed them). A window that could not open is not tried again until they
    /// change, or until [`OutputWindow::retry`]. Follows from several threads happen one at a
    /// time, each reading the settings as it acts, so the last word is the project's. Never
    /// waits for a window to close, so any thread may call it. On macOS only the main
    /// thread's follows (the editor's) act: windows are made and moved there.
    pub fn follow(&self, settings: impl FnOnce() -> (bool, Placement)) {
        #[cfg(target_os = "macos")]
        if !macos::on_main_thread() {
            // Closing is safe from any thread (the window closes itself on its next tick); the
            // editor's follow on the main thread does the rest.
            if !settings().0 {
                self.request_close();
            }
            return;
        }
        #[cfg(target_os = "macos")]
        macos::reap();
        let mut followed = self.followed.lock();
        let (open, placement) = settings();
        let want = (open, placement.sanitized());
        if followed.as_ref() == Some(&want) {
            return;
        }
        *followed = Some(want.clone());
        // macOS: the window is made on this thread, and one the screen cannot hold is resized
        // as it shows, which tells the project through `on_change` (which takes this lock).
        // Only the main thread acts there, so follows stay one at a time without it.
        #[cfg(target_os = "macos")]
        drop(followed);
        if open {
            self.open(&want.1);
        } else {
            self.request_close();
        }
    }

    /// Forget the settings last followed: the next [`OutputWindow::follow`] acts on them.
    pub fn retry(&self) {
        *self.followed.lock() = None;
    }

    /// Whether the window is open (or opening), and not closing.
    pub fn is_open(&self) -> bool {
        self.running.lock().as_ref().is_some_and(Running::open)
    }

    /// How it stands.
    pub fn status(&self) -> OutputStatus {
        // The window's lock is taken after the controller's is let go.
        let live = self.last.lock().clone();
        live.status.lock().clone()
    }

    /// Open the window as `placement` asks, or move an open one there. Never waits.
    pub fn open(&self, placement: &Placement) {
        if self.shut.load(Ordering::Acquire) {
            return;
        }
        let placement = placement.sanitized();
        let mut running = self.running.lock();
        if let Some(r) = running.as_ref()
            && r.open()
        {
            *r.live.wanted.lock() = Some(placement);
            return;
        }
        // One still closing finishes on its own (it has its own state); it is joined on
        // close.
        if let Some(old) = running.take() {
            old.live.close.store(true, Ordering::Release);
            let mut closing = self.closing.lock();
            closing.retain(|t| !t.is_finished());
            closing.extend(old.thread);
        }
        let live = Live::new(Some(placement.clone()), self.title());
        *self.last.lock() = live.clone();
        live.status.lock().open = true;
        // What the window changes itself is followed already: the project and what was
        // followed change together, under the lock every follow takes.
        let (followed, told) = (self.followed.clone(), self.on_change.clone());
        let on_change: OnChange = Arc::new(move |p: &Placement, open: bool| {
            let mut followed = followed.lock();
            told(p, open);
            *followed = Some((open, p.sanitized()));
        });
        let window = draw::Setup {
            frames: self.frames.clone(),
            cap: self.cap.clone(),
            on_change,
            live: live.clone(),
            placement,
        };
        #[cfg(target_os = "macos")]
        match macos::open(self.id, live.clone(), window) {
            Ok(()) => *running = Some(Running { thread: None, live }),
            Err(e) => {
                let mut status = live.status.lock();
                status.open = false;
                status.error = Some(format!("the output window failed: {e}"));
            }
        }
        #[cfg(not(target_os = "macos"))]
        match std::thread::Builder::new()
            .name("dyeflow-output".into())
            .spawn(move || draw::run(window))
        {
            Ok(thread) => {
                *running = Some(Running {
                    thread: Some(thread),
                    live,
                })
            }
            Err(e) => {
                let mut status = live.status.lock();
                status.open = false;
                status.error = Some(format!("no thread for the output window: {e}"));
            }
        }
    }

    /// The host named the instance's track (`None` or empty: it did not): the window's title
    /// says it, so two instances' windows are told apart.
    pub fn set_track_name(&self, name: Option<&str>) {
        let name = name
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(str::to_owned);
        *self.track.lock() = name;
        let title = self.title();
        if let Some(r) = self.running.lock().as_ref() {
            *r.live.title.lock() = Some(title);
        }
    }

    /// The window's title: [`TITLE`], and the track's name when the host told it.
    pub fn title(&self) -> String {
        match self.track.lock().as_deref() {
            Some(track) => format!("{TITLE} · {track}"),
            None => TITLE.to_owned(),
        }
    }

    /// Ask the window to close, without waiting for it.
    pub fn request_close(&self) {
        if let Some(r) = self.running.lock().as_ref() {
            r.live.close.store(true, Ordering::Release);
        }
    }

    /// Close the window and wait for its thread, and for any still closing (a few seconds at
    /// most).
    pub fn close(&self) {
        let current = self.running.lock().take();
        #[cfg(target_os = "macos")]
        let had_window = current.is_some();
        let mut threads = std::mem::take(&mut *self.closing.lock());
        if let Some(old) = current {
            old.live.close.store(true, Ordering::Release);
            threads.extend(old.thread);
        }
        for thread in threads {
            crate::pin::join_within(thread, CLOSE_WAIT_MS, "The output window's thread");
        }
        // macOS: the window goes with its handle, on the main thread. Elsewhere it closes on
        // its next tick (it was asked to), with this library's code in its timer and handler:
        // the library stays loaded for it.
        #[cfg(target_os = "macos")]
        if !macos::close(self.id) && had_window {
            crate::pin::pin_library();
        }
        self.frames.lock().request(0, 0);
    }

    /// The instance is going: close the window, and open none again (a follow from the
    /// simulation thread may still come before it stops).
    pub fn shut_down(&self) {
        self.shut.store(true, Ordering::Release);
        self.close();
    }
}

impl Drop for OutputWindow {
    fn drop(&mut self) {
        self.shut_down();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn monitor(name: &str, x: i32, primary: bool) -> Monitor {
        Monitor {
            name: name.into(),
            rect: Rect {
                x,
                y: 0,
                width: 1920,
                height: 1080,
            },
            refresh_hz: 60.0,
            primary,
        }
    }

    #[test]
    fn monitors_are_picked_by_name_then_primary() {
        let ms = [monitor("A", 0, false), monitor("B", 1920, true)];
        assert_eq!(pick(&ms, "A").unwrap().name, "A");
        assert_eq!(pick(&ms, "gone").unwrap().name, "B", "the primary");
        assert_eq!(pick(&ms, "").unwrap().name, "B");
        assert_eq!(pick(&ms[..1], "").unwrap().name, "A", "the first");
        assert!(pick(&[], "A").is_none());
    }

    #[test]
    fn the_title_names_the_track() {
        let (_input, output) = crate::frame::frame_channel();
        let w = OutputWindow::new(output, Arc::new(|| (64, 36)), Arc::new(|_, _| {}));
        assert_eq!(w.title(), TITLE);
        w.set_track_name(Some("  Drums "));
        assert_eq!(w.title(), format!("{TITLE} · Drums"));
        w.set_track_name(Some(""));
        assert_eq!(w.title(), TITLE);
    }

    #[test]
    fn windows_are_centred_and_fit_their_monitor() {
        let m = monitor("B", 1920, true);
        let p = Placement {
            width: 800,
            height: 600,
            ..Placement::default()
        };
        assert_eq!(
            p.rect_on(&m),
            Rect {
                x: 1920 + 560,
                y: 240,
                width: 800,
                height: 600
            }
        );
        let big = Placement {
            width: 5000,
            height: 10,
            ..Placement::default()
        };
        let r = big.rect_on(&m);
        assert_eq!((r.x, r.width, r.height), (1920, 1920, MIN_EDGE));
        let full = Placement {
            fullscreen: true,
            ..p
        };
        assert_eq!(full.rect_on(&m), m.rect);
    }
}
