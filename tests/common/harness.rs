//! An editor harness: what a host does with Dyeflow's editor, without a host. It creates the
//! plugin, activates it, runs an audio thread that calls `process()` every 10.7 ms (512 frames
//! at 48 kHz) with the notes it is told to play, and opens the editor as a top-level X11
//! window with a GUI context that records the parameter gestures.
//!
//! It is driven through its standard input, one command per line, and reports on its standard
//! output (one line per report), so a test can run it as a child process on an Xvfb display:
//!
//! - `notes K,K,...`: hold these notes (velocity 100, channel 1) from the next block on;
//! - `off`: all notes off (CC 123) on channel 1;
//! - `obstacles`: report the project's obstacles;
//! - `output open MONITOR full|WxH`, `output close`, `output track NAME`, `output status`: the
//!   output window (`track`: the host names the track),
//!   through the project's settings as the editor's panel changes them;
//! - `quit`: close the window and exit.
//!
//! Reports: `READY` once the window shows, `GESTURE begin|set|end <param id>` for every
//! parameter gesture, `BLOCK max_us=<n> wall_us=<n> waits=<n>` every second (the CPU time of the
//! slowest `process()` of that second, its wall time, which preemption by other processes also
//! counts, and in how many blocks `process()` went to sleep), `OBSTACLES layout=<id>
//! drawn=<solid cells drawn>` when asked, `DONE` before exiting.
#![allow(dead_code)]

use super::mock::{Process, activate_48k};
use dyeflow::Dyeflow;
use dyeflow::params::{Aspect, BackendChoice, Settings};
use nice_plug::context::gui::{AsyncExecutor, GuiContext, GuiContextInner};
use nice_plug::editor::{Editor, EditorHandle};
use nice_plug::midi::{Channel, Key, VoiceID};
use nice_plug::prelude::*;
use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Environment variable that turns a test binary into the harness.
pub const HARNESS_ENV: &str = "DYEFLOW_EDITOR_HARNESS";

/// Whether this process is the harness (a child a display test started).
pub fn in_harness() -> bool {
    std::env::var_os(HARNESS_ENV).is_some()
}

fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// A GUI context that applies parameter changes directly and reports each gesture.
struct Gui {
    ids: HashMap<ParamPtr, String>,
}

impl Gui {
    fn id(&self, p: ParamPtr) -> &str {
        self.ids.get(&p).map_or("?", String::as_str)
    }
}

impl GuiContextInner for Gui {
    fn plugin_api(&self) -> PluginApi {
        PluginApi::Clap
    }

    unsafe fn raw_begin_set_parameter(&self, param: ParamPtr) {
        say(&format!("GESTURE begin {}", self.id(param)));
    }

    unsafe fn raw_set_parameter_normalized(&self, param: ParamPtr, normalized: f32) {
        // SAFETY: the pointer comes from the plugin's own parameter map, which outlives us.
        unsafe { param._internal_set_normalized_value(normalized) };
        say(&format!("GESTURE set {}", self.id(param)));
    }

    unsafe fn raw_end_set_parameter(&self, param: ParamPtr) {
        say(&format!("GESTURE end {}", self.id(param)));
    }

    fn get_state(&self) -> PluginState {
        PluginState {
            version: String::new(),
            params: Default::default(),
            fields: Default::default(),
        }
    }

    fn set_state(&self, _state: PluginState) {}

    fn request_restart(&self) {}
}

enum Command {
    Notes(Vec<u8>),
    Off,
    /// Drop the plugin (as a host removes the instance) and report `DROPPED`.
    Drop,
    /// A MIDI CC on channel 1: number and value (0..1).
    Cc(u8, f32),
}

/// A plugin with its editor and a running audio thread.
pub struct Session {
    pub editor: dyeflow::editor::DyeflowEditor,
    pub engine: Arc<dyeflow::engine::LazyEngine>,
    pub frames: Arc<parking_lot::Mutex<dyeflow::frame::FrameOutput>>,
    pub params: Arc<dyeflow::params::DyeflowParams>,
    pub output: Arc<dyeflow::output_window::OutputWindow>,
    ids: HashMap<ParamPtr, String>,
    commands: mpsc::Sender<Command>,
    quit: Arc<AtomicBool>,
    audio: Option<std::thread::JoinHandle<()>>,
}

impl Session {
    /// Create, activate and start processing. `settings` picks the simulation; `panel` whether
    /// the control panel starts open. The notes map in keyboard mode (the editor tests place
    /// them by it).
    pub fn start(settings: Settings, panel: bool) -> Self {
        Self::start_sized(settings, panel, None)
    }

    /// [`Session::start`] with the editor window `size` (logical points) instead of the
    /// default.
    pub fn start_sized(settings: Settings, panel: bool, size: Option<(u32, u32)>) -> Self {
        Self::start_with(settings, panel, size, |_| {})
    }

    /// [`Session::start_sized`], with `project` changing the parameters before the plugin is
    /// activated (as a host restores a project).
    pub fn start_with(
        settings: Settings,
        panel: bool,
        size: Option<(u32, u32)>,
        project: impl FnOnce(&dyeflow::params::DyeflowParams),
    ) -> Self {
        super::private_captures();
        let mut plugin = Dyeflow::default();
        let params = plugin.shared_params();
        let keyboard = format!(
            r#"{{"params": {{"mapping": "keyboard"}}, "fields": {{"state-version": "{}"}}}}"#,
            dyeflow::params::STATE_VERSION
        );
        dyeflow::preset::apply(keyboard.as_bytes(), &params).expect("keyboard mode");
        params.set_settings(settings);
        let mut editor_settings = params.editor_settings();
        if let Some((w, h)) = size {
            editor_settings.width = w;
            editor_settings.height = h;
        }
        editor_settings.panel_open = panel;
        params.set_editor_settings(editor_settings);
        let ids: HashMap<ParamPtr, String> = params
            .param_map()
            .into_iter()
            .map(|(id, ptr, _)| (ptr, id))
            .collect();
        let executor = AsyncExecutor::<Dyeflow>::new(Arc::new(|_| {}), Arc::new(|_| {}));
        let editor = plugin.editor(executor).expect("Dyeflow has an editor");
        let engine = plugin.engine();
        let frames = plugin.frames();
        let output = plugin.output();
        project(&params);
        assert!(activate_48k(&mut plugin));
        let (commands, rx) = mpsc::channel::<Command>();
        let quit = Arc::new(AtomicBool::new(false));
        let audio_quit = quit.clone();
        let audio = std::thread::spawn(move || audio_thread(plugin, rx, audio_quit));
        Self {
            editor,
            engine,
            frames,
            params,
            output,
            ids,
            commands,
            quit,
            audio: Some(audio),
        }
    }

    /// A GUI context for a window of this session.
    pub fn gui(&self) -> GuiContext {
        GuiContext::new(Arc::new(Gui {
            ids: self.ids.clone(),
        }))
    }

    /// Hold `keys` from the next block on.
    pub fn notes(&self, keys: &[u8]) {
        let _ = self.commands.send(Command::Notes(keys.to_vec()));
    }

    /// Forward standard input's commands to the audio thread until `quit` (or end of input).
    pub fn follow_stdin(&self) {
        let tx = self.commands.clone();
        let quit = self.quit.clone();
        let params = self.params.clone();
        let output = self.output.clone();
        std::thread::spawn(move || {
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                let mut parts = line.split_whitespace();
                match parts.next() {
                    Some("notes") => {
                        let keys = parts
                            .next()
                            .unwrap_or("")
                            .split(',')
                            .filter_map(|k| k.parse().ok())
                            .collect();
                        let _ = tx.send(Command::Notes(keys));
                    }
                    Some("off") => {
                        let _ = tx.send(Command::Off);
                    }
                    Some("cc") => {
                        let cc = parts.next().and_then(|v| v.parse().ok());
                        let value = parts.next().and_then(|v| v.parse().ok());
                        if let (Some(cc), Some(value)) = (cc, value) {
                            let _ = tx.send(Command::Cc(cc, value));
                        }
                    }
                    Some("learned") => {
                        let m = params.modulation.read();
                        let list: Vec<String> = m
                            .learned
                            .iter()
                            .map(|l| format!("{}={}", l.cc, l.target))
                            .collect();
                        say(&format!(
                            "LEARNED [{}] routes={} waiting={}",
                            list.join(","),
                            m.routes.len(),
                            params.modulation_live.learning().unwrap_or_default()
                        ));
                    }
                    Some("obstacles") => {
                        let o = params.obstacles.get().0;
                        let drawn = o.drawn().map_or(0, |m| m.solid_count());
                        say(&format!("OBSTACLES layout={} drawn={drawn}", o.layout.id()));
                    }
                    Some("output") => {
                        let args: Vec<&str> = parts.collect();
                        output_command(&params, &output, &args, true);
                    }
                    Some("quit") => break,
                    _ => {}
                }
            }
            quit.store(true, Ordering::Release);
        });
    }

    /// A window of this session's editor, opened (no parent, scale 1) and shown.
    pub fn open_window(
        &self,
    ) -> nice_plug::editor::SpawnedEditor<<dyeflow::editor::DyeflowEditor as Editor>::Handle> {
        let spawned = self
            .editor
            .spawn(None, false, Some(1.0), self.gui(), None)
            .expect("open an editor window");
        spawned
            .handle
            .show(&spawned.window)
            .expect("show the window");
        spawned
    }

    /// Whether `quit` was received.
    pub fn quitting(&self) -> bool {
        self.quit.load(Ordering::Acquire)
    }

    /// Stop the audio thread (dropping the plugin).
    pub fn stop(mut self) {
        self.quit.store(true, Ordering::Release);
        if let Some(a) = self.audio.take() {
            a.join().expect("the audio thread");
        }
    }
}

/// The `output` commands (see the module's header). Reports `OUTPUT open=<0|1>
/// saved_open=<0|1> full=<0|1> monitor=<name> rect=<x,y,w,h> fps=<n> error=<text>`.
fn output_command(
    params: &dyeflow::params::DyeflowParams,
    output: &dyeflow::output_window::OutputWindow,
    args: &[&str],
    follow: bool,
) {
    let mut s = params.output();
    match args {
        ["open", monitor, how] => {
            s.open = true;
            s.placement.monitor = (*monitor).to_owned();
            s.placement.fullscreen = *how == "full";
            if let Some((w, h)) = how.split_once('x') {
                s.placement.width = w.parse().unwrap_or(640);
                s.placement.height = h.parse().unwrap_or(360);
            }
        }
        ["close"] => s.open = false,
        ["track", name] => output.set_track_name(Some(name)),
        _ => {}
    }
    params.set_output(s.clone());
    if follow {
        output.follow(|| (s.open, s.placement.clone()));
    }
    let st = output.status();
    let s = params.output();
    let r = st.rect;
    say(&format!(
        "OUTPUT open={} saved_open={} full={} monitor={} rect={},{},{},{} fps={:.0} error={}",
        u8::from(output.is_open()),
        u8::from(s.open),
        u8::from(s.placement.fullscreen),
        st.monitor.map_or("-".into(), |m| m.name),
        r.x,
        r.y,
        r.width,
        r.height,
        st.fps,
        st.error.unwrap_or_default()
    ));
}

/// The output window's harness: a session playing notes, its output window opened from the
/// project when `saved` (as a project saved with it open), standard input's commands, and
/// `cycles N`: open and close the editor N times; `project ...` (as `output ...`, but only
/// the project's settings change, as a state load changes them); `drop`: drop the plugin.
/// Reports `READY`, `CYCLED n=<N>`, `DROPPED`, `DONE`.
pub fn run_output(settings: Settings, saved: Option<dyeflow::params::OutputSettings>) {
    let session = Session::start_with(settings, false, None, |p| {
        if let Some(s) = saved {
            p.set_output(s);
        }
    });
    session.notes(&[48, 60, 67, 76]);
    let (tx, cycles) = mpsc::channel::<usize>();
    // Standard input, with `cycles` taken here (the editor opens on this thread).
    {
        let commands = session.commands.clone();
        let quit = session.quit.clone();
        let params = session.params.clone();
        let output = session.output.clone();
        std::thread::spawn(move || {
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                let mut parts = line.split_whitespace();
                match parts.next() {
                    Some("output") => {
                        let args: Vec<&str> = parts.collect();
                        output_command(&params, &output, &args, true);
                    }
                    // The project's settings alone, as a state load writes them.
                    Some("project") => {
                        let args: Vec<&str> = parts.collect();
                        output_command(&params, &output, &args, false);
                    }
                    Some("drop") => {
                        let _ = commands.send(Command::Drop);
                    }
                    Some("cycles") => {
                        let _ = tx.send(parts.next().and_then(|n| n.parse().ok()).unwrap_or(1));
                    }
                    Some("off") => {
                        let _ = commands.send(Command::Off);
                    }
                    Some("quit") => break,
                    _ => {}
                }
            }
            quit.store(true, Ordering::Release);
        });
    }
    say("READY");
    while !session.quitting() {
        if let Ok(n) = cycles.recv_timeout(Duration::from_millis(20)) {
            for _ in 0..n {
                let spawned = session.open_window();
                std::thread::sleep(Duration::from_millis(30));
                drop(spawned);
            }
            say(&format!("CYCLED n={n}"));
        }
    }
    session.stop();
    say("DONE");
}

/// CPU time the calling thread has used so far (not the time it waited or was preempted).
fn thread_cpu_time() -> Duration {
    // SAFETY: clock_gettime only writes the struct it is given.
    unsafe {
        let mut t: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t);
        Duration::new(
            t.tv_sec.max(0) as u64,
            t.tv_nsec.clamp(0, 999_999_999) as u32,
        )
    }
}

/// Voluntary context switches of the calling thread so far: the times it went to sleep waiting
/// (on a lock, a futex, I/O). Being preempted by the scheduler does not count.
fn voluntary_switches() -> i64 {
    // SAFETY: getrusage only writes the struct it is given.
    unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_THREAD, &mut usage);
        usage.ru_nvcsw
    }
}

/// `process()` every 512 frames at 48 kHz, in real time, with the commanded notes. Every second
/// it reports `BLOCK max_us=<the most CPU time a process() took> wall_us=<the longest one in
/// wall time> waits=<blocks in which process() slept>`.
fn audio_thread(mut plugin: Dyeflow, rx: mpsc::Receiver<Command>, quit: Arc<AtomicBool>) {
    let mut ctx = Process::<Dyeflow>::new(48_000.0);
    let mut left = vec![0.0f32; 512];
    let mut right = vec![0.0f32; 512];
    let period = Duration::from_secs_f64(512.0 / 48_000.0);
    let mut next = Instant::now();
    let (mut worst, mut worst_wall) = (Duration::ZERO, Duration::ZERO);
    let mut waits = 0u32;
    let mut report = Instant::now();
    'blocks: while !quit.load(Ordering::Acquire) {
        while let Ok(cmd) = rx.try_recv() {
            match cmd {
                Command::Drop => break 'blocks,
                Command::Notes(keys) => {
                    for key in keys {
                        ctx.events.push_back(NoteEvent::NoteOn {
                            timing: 0,
                            voice_id: VoiceID::Wildcard,
                            channel: Channel::Number(0),
                            key: Key::Number(key),
                            velocity: 100.0 / 127.0,
                        });
                    }
                }
                Command::Off => ctx.events.push_back(NoteEvent::MidiCC {
                    timing: 0,
                    channel: 0,
                    cc: 123,
                    value: 0.0,
                }),
                Command::Cc(cc, value) => ctx.events.push_back(NoteEvent::MidiCC {
                    timing: 0,
                    channel: 0,
                    cc,
                    value,
                }),
            }
        }
        left.fill(0.0);
        right.fill(0.0);
        let mut buffer = Buffer::default();
        // SAFETY: the slices outlive `buffer`, which is dropped at the end of the block.
        unsafe {
            buffer.set_slices(512, |slices| {
                slices.clear();
                slices.push(&mut *(left.as_mut_slice() as *mut [f32]));
                slices.push(&mut *(right.as_mut_slice() as *mut [f32]));
            });
        }
        let mut aux = AuxiliaryBuffers {
            inputs: &mut [],
            outputs: &mut [],
        };
        let (t0, cpu0, slept0) = (Instant::now(), thread_cpu_time(), voluntary_switches());
        plugin.process(&mut buffer, &mut aux, &mut ctx);
        worst = worst.max(thread_cpu_time().saturating_sub(cpu0));
        worst_wall = worst_wall.max(t0.elapsed());
        if voluntary_switches() != slept0 {
            waits += 1;
        }
        if report.elapsed() >= Duration::from_secs(1) {
            let (cpu, wall) = (worst.as_micros(), worst_wall.as_micros());
            say(&format!("BLOCK max_us={cpu} wall_us={wall} waits={waits}"));
            (worst, worst_wall) = (Duration::ZERO, Duration::ZERO);
            waits = 0;
            report = Instant::now();
        }
        next += period;
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        } else {
            next = now;
        }
    }
    if !quit.load(Ordering::Acquire) {
        drop(plugin);
        say("DROPPED");
    }
}

/// The harness as a window: open the editor, follow standard input, close on `quit`.
pub fn run(settings: Settings, panel: bool) {
    run_sized(settings, panel, None);
}

/// [`run`] with the editor window `size` (logical points) instead of the default.
pub fn run_sized(settings: Settings, panel: bool, size: Option<(u32, u32)>) {
    let session = Session::start_sized(settings, panel, size);
    session.follow_stdin();
    let spawned = session.open_window();
    say("READY");
    while !session.quitting() {
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(spawned);
    session.stop();
    say("DONE");
}

/// Two plugin instances in one process, as a DAW hosts them: instance A holds note 48 (red, far
/// left), instance B note 79 (azure, far right), and each opens its own window. Standard input
/// only ends it (`quit`).
pub fn run_two(settings: Settings) {
    let a = Session::start(settings.clone(), false);
    let b = Session::start(settings, false);
    a.notes(&[48]);
    b.notes(&[79]);
    a.follow_stdin();
    let (wa, wb) = (a.open_window(), b.open_window());
    say("READY");
    while !a.quitting() {
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(wa);
    drop(wb);
    a.stop();
    b.stop();
    say("DONE");
}

/// Four plugin instances in one process, each holding a note of its own (`keys`) and showing
/// its own window; every second `INSTANCES fps=<a>,<b>,<c>,<d> steps=<a>,<b>,<c>,<d>` (each
/// engine's frames and steps per second), besides each audio thread's `BLOCK` reports.
/// Standard input only ends it (`quit`).
pub fn run_four(settings: Settings, keys: [u8; 4]) {
    let sessions: Vec<Session> = keys
        .iter()
        .map(|&k| {
            let s = Session::start(settings.clone(), false);
            s.notes(&[k]);
            s
        })
        .collect();
    sessions[0].follow_stdin();
    let windows: Vec<_> = sessions.iter().map(Session::open_window).collect();
    say("READY");
    let mut report = Instant::now();
    while !sessions[0].quitting() {
        std::thread::sleep(Duration::from_millis(20));
        if report.elapsed() >= Duration::from_secs(1) {
            report = Instant::now();
            let status: Vec<_> = sessions.iter().map(|s| s.engine.status()).collect();
            let list = |f: &dyn Fn(&dyeflow::engine::EngineStatus) -> f32| {
                status
                    .iter()
                    .map(|st| st.as_ref().map_or(0.0, f).round().to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            };
            say(&format!(
                "INSTANCES fps={} steps={}",
                list(&|st| st.frames_per_s),
                list(&|st| st.steps_per_s)
            ));
        }
    }
    drop(windows);
    for s in sessions {
        s.stop();
    }
    say("DONE");
}

/// The harness's default simulation: CPU, small, 16:9 (fast and deterministic enough under
/// Xvfb on a 2-core machine).
pub fn small_cpu() -> Settings {
    Settings {
        sim_resolution: 128,
        dye_scale: 2,
        aspect: Aspect::Wide,
        backend: BackendChoice::Cpu,
        sim_rate_hz: 60,
        ..Settings::default()
    }
}

fn thread_count() -> usize {
    std::fs::read_dir("/proc/self/task").map_or(0, |d| d.count())
}

fn fd_count() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count())
}

fn rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}

/// Open the editor, resize it three times, close it; `n` times, while notes play. Reports
/// `CYCLE i fds=.. rss_kb=..` every 20 cycles (the lowest RSS after a close in those 20), then
/// `CYCLES n=.. threads_before=.. threads_after=.. rss_before_kb=.. rss_after_kb=..
/// frames_resumed=..`.
pub fn run_cycles(settings: Settings, n: usize) {
    use nice_plug::editor::dpi::NativeSize;
    let session = Session::start(settings, true);
    session.notes(&[48, 60, 67, 72]);
    // Closes after which the window's thread was still running: baseview can return from the
    // window's drop before its thread ends (see `dyeflow::editor::DyeflowWindow`).
    let lingering = std::cell::Cell::new(0usize);
    let cycle = |i: usize| {
        let spawned = session.open_window();
        for k in 0..3 {
            std::thread::sleep(Duration::from_millis(15));
            let size = NativeSize {
                width: 400 + ((i * 37 + k * 91) % 800) as u32,
                height: 260 + ((i * 53 + k * 71) % 500) as u32,
            };
            spawned
                .handle
                .set_size(size, &spawned.window)
                .expect("resize");
        }
        std::thread::sleep(Duration::from_millis(20));
        let window = spawned.window;
        drop(spawned.handle);
        // The window's thread is known to the window (on Linux), and is gone with it.
        let thread = window.thread_watch().expect("the window knows its thread");
        drop(window);
        if !thread.ended() {
            lingering.set(lingering.get() + 1);
        }
    };
    // Warm up: the first window loads GL and X libraries and starts their threads.
    cycle(0);
    std::thread::sleep(Duration::from_millis(300));
    let (threads_before, rss_before, fds_before) = (thread_count(), rss_kb(), fd_count());
    // The RSS right after each close, at its lowest over each 20 cycles: a leak raises that
    // floor, while the memory of whichever window happened to be open comes and goes.
    let mut floor = u64::MAX;
    for i in 1..=n {
        cycle(i);
        floor = floor.min(rss_kb());
        if i % 20 == 0 {
            say(&format!("CYCLE {i} fds={} rss_kb={floor}", fd_count()));
            floor = u64::MAX;
        }
    }
    std::thread::sleep(Duration::from_millis(500));
    let (threads_after, rss_after, fds_after) = (thread_count(), rss_kb(), fd_count());
    // Reopened, the editor gets frames again (the fluid went on meanwhile).
    let serial = session.frames.lock().latest().serial;
    let spawned = session.open_window();
    let start = Instant::now();
    let mut resumed = false;
    while start.elapsed() < Duration::from_secs(10) {
        if session.frames.lock().latest().serial > serial + 2 {
            resumed = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(spawned);
    say(&format!(
        "CYCLES n={n} threads_before={threads_before} threads_after={threads_after} \
         fds_before={fds_before} fds_after={fds_after} rss_before_kb={rss_before} \
         rss_after_kb={rss_after} frames_resumed={resumed} lingering={}",
        lingering.get()
    ));
    session.stop();
    say("DONE");
}
