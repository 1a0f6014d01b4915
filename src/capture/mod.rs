//! Bounce capture: while the host renders offline, the plugin records everything that drives
//! the fluid, so `dyeflow render --capture FILE` can compute the same fluid afterwards, frame
//! for frame, at any size and frame rate.
//!
//! - A capture runs while the host renders offline (it says so at activation or in the block,
//!   or the pace of its blocks shows it: [`pace`]), or while the editor's Record switch is on.
//!   While the host processes without a capture, the recorder watches: the records go to the
//!   capture thread, which keeps the last [`LOOKBACK_S`] in memory only, so that a bounce the
//!   pace recognises is captured from its first block.
//! - The audio thread ([`recorder::Recorder`]) pushes fixed-size [`Record`]s into a lock-free
//!   queue of its own: the bridge's events at their audio times, the host's transport once a
//!   block, and every parameter's value when it changes (all of them when a capture starts). A
//!   full queue drops the record and counts it; it never blocks. Offline, the pitch-class
//!   analysis runs inline, so its events are the bridge's; in real time the chroma thread
//!   records them through a [`CaptureTap`] of its own.
//! - The editor's mouse (splats, resets, obstacle strokes) and OSC splats drive the fluid too:
//!   their threads record them through the [`InputTap`] (a queue of its own behind a lock,
//!   never touched by the audio thread), stamped with the audio time of the latest block.
//! - A non-realtime thread ([`writer::CaptureThread`]) drains the queue into a file in the
//!   capture folder ([`capture_dir`]): written under a `.part` name and renamed when complete.
//! - The file ([`file`]) is JSON lines: a header (format version, sample rate, the parameter ids,
//!   and the plugin's whole state at the start as a preset: settings and obstacles included),
//!   one line per record, and an end line with the record count and a CRC-32 of everything
//!   before it, so a truncated or damaged capture is refused with a clear error. A capture
//!   stops growing at [`MAX_CAPTURE_BYTES`] (over two hours of a busy track, at about 55 kB a
//!   second) and says so.

pub mod file;
pub mod pace;
pub mod recorder;
pub mod writer;

use crate::bridge::events::{SimEvent, TimedEvent};
use crate::bridge::queue::{self, Receiver, Sender};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The environment variable that overrides the capture folder.
pub const CAPTURE_DIR_ENV: &str = "DYEFLOW_CAPTURE_DIR";
/// Records the audio thread can queue for the writer: over a minute of a dense passage in real
/// time (about 500 a second: envelope readings every 5 ms, the transport every block, notes),
/// and a host bouncing 100 times faster than real time fills it in 0.7 s, while the writer
/// looks every 20 ms (every 200 ms between captures).
pub const CAPTURE_QUEUE_RECORDS: usize = 1 << 15;
/// Pitch-class records the chroma thread can queue (about 22 a second).
pub const CHROMA_CAPTURE_RECORDS: usize = 1 << 10;
/// Records of the editor's and OSC's events the tap can queue (a mouse stroke sends about 60
/// a second; the writer looks every 20 ms).
pub const INPUT_CAPTURE_RECORDS: usize = 1 << 10;
/// Audio seconds of records the capture thread keeps while watching (see [`Record::Watch`]):
/// more than a bounce at [`pace::BOUNCE_RATIO`] times real time takes to be recognised.
pub const LOOKBACK_S: f64 = 30.0;
/// At most this many records are kept while watching (64 bytes each: 8 MiB), whatever a flood of
/// events.
pub const LOOKBACK_RECORDS: usize = 1 << 17;
// What the lookback's bound above says of its memory.
const _: () = assert!(std::mem::size_of::<Record>() <= 64);
/// A capture stops recording (and says so in its end line) at this size.
pub const MAX_CAPTURE_BYTES: u64 = 512 << 20;
/// A capture file's name ends with this.
pub const CAPTURE_EXTENSION: &str = "dyeflow-capture";

/// Why a capture was made (in its header).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Cause {
    /// The host said it renders offline (CLAP's `clap.render`, VST3's process mode).
    Offline,
    /// The editor's Record switch was on.
    Record,
    /// The host did not say, but processed far faster than real time: a bounce recognised by
    /// its pace (see [`pace`]).
    Pace,
}

/// What the audio thread records. Fixed size and `Copy`, so the queue never allocates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Record {
    /// A capture starts at audio time `time_s` (the bridge's clock), at `sample_rate`, asked
    /// for by `cause` ([`Cause::Offline`] or [`Cause::Record`]).
    Start {
        time_s: f64,
        sample_rate: f32,
        cause: Cause,
    },
    /// The host processes with no capture on: the records from `time_s` on (every parameter
    /// first) are kept in memory only, the last [`LOOKBACK_S`] of them, in case they turn out to
    /// be a bounce's first seconds ([`Record::Bounce`]). Nothing is written.
    Watch { time_s: f64, sample_rate: f32 },
    /// The records watched since audio time `from_s` were a bounce (see [`pace`]): a capture
    /// starts there, with what was kept since, and goes on.
    Bounce { from_s: f64 },
    /// An event the bridge sent to the simulation.
    Event(TimedEvent),
    /// Parameter `index` (in the order of the header's ids) took the plain `value` (modulation
    /// included; an integer's, a switch's 0 or 1, a choice's index) at the block starting at
    /// `time_s`. Plain, because a normalized value does not always come back to the same plain
    /// one.
    Param { time_s: f64, index: u16, value: f32 },
    /// The host's transport at the block starting at `time_s`: its position in samples and
    /// beats, tempo and whether it plays (`NaN` where the host does not say).
    Transport {
        time_s: f64,
        samples: i64,
        beat: f64,
        tempo_bpm: f64,
        playing: bool,
    },
    /// The capture ends (the host left offline rendering, or the plugin was deactivated).
    Stop { time_s: f64 },
}

impl Record {
    /// When it happened, audio seconds.
    pub fn time_s(&self) -> f64 {
        match *self {
            Record::Start { time_s, .. }
            | Record::Watch { time_s, .. }
            | Record::Bounce { from_s: time_s }
            | Record::Param { time_s, .. }
            | Record::Transport { time_s, .. }
            | Record::Stop { time_s } => time_s,
            Record::Event(e) => e.time_s,
        }
    }
}

/// The chroma thread's side of a capture: while one is recorded, the pitch classes it finds
/// (off the audio thread, in real time) go into a queue of their own.
pub struct CaptureTap {
    sender: Sender<Record>,
    /// Raised by the recorder while a capture is on or watched.
    recording: Arc<AtomicBool>,
}

impl CaptureTap {
    /// Record `event` if a capture is on.
    pub fn event(&mut self, event: &TimedEvent) {
        if self.recording.load(Ordering::Acquire) {
            self.sender.send(Record::Event(*event));
        }
    }
}

/// The editor's and OSC's side of a capture: while one is recorded, the events their threads
/// send the simulation (mouse splats, resets, obstacle strokes, OSC splats) go into a queue of
/// their own, stamped with the audio time of the latest block (the audio thread sets it).
/// Shared by those threads (the lock is never the audio thread's).
pub struct InputTap {
    sender: parking_lot::Mutex<Sender<Record>>,
    /// Raised by the recorder while a capture is on or watched.
    recording: Arc<AtomicBool>,
    /// The audio time at the start of the latest block, `f64` bits.
    clock: AtomicU64,
}

impl std::fmt::Debug for InputTap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InputTap").finish_non_exhaustive()
    }
}

impl InputTap {
    /// A tap and the receiving end of its queue (for the capture thread). Allocates about
    /// 80 kB.
    pub fn new() -> (Arc<Self>, Receiver<Record>) {
        let (sender, input) = queue::bounded(INPUT_CAPTURE_RECORDS);
        let tap = Arc::new(Self {
            sender: parking_lot::Mutex::new(sender),
            recording: Arc::new(AtomicBool::new(false)),
            clock: AtomicU64::new(0f64.to_bits()),
        });
        (tap, input)
    }

    /// The audio time of a block's start (the audio thread, once a block: one atomic store).
    pub fn set_clock(&self, time_s: f64) {
        self.clock.store(time_s.to_bits(), Ordering::Relaxed);
    }

    /// Record `event` if a capture is on, at the latest block's audio time.
    pub fn record(&self, event: &SimEvent) {
        if self.recording.load(Ordering::Acquire) {
            let time_s = f64::from_bits(self.clock.load(Ordering::Relaxed));
            self.sender.lock().send(Record::Event(TimedEvent {
                time_s,
                event: *event,
            }));
        }
    }
}

/// The audio thread's recorder, the chroma thread's tap, and the two queues' receiving ends for
/// the writer: a capture's queues for `params`, raising `input`'s flag while a capture is on
/// or watched.
/// Allocates (about 2.4 MB): at activation.
pub fn queues(
    params: Arc<dyn nice_plug::prelude::Params>,
    input: &InputTap,
) -> (
    recorder::Recorder,
    CaptureTap,
    (Receiver<Record>, Receiver<Record>),
) {
    let (tx, records) = queue::bounded(CAPTURE_QUEUE_RECORDS);
    let (tap_tx, chroma) = queue::bounded(CHROMA_CAPTURE_RECORDS);
    let recording = input.recording.clone();
    (
        recorder::Recorder::new(tx, params, recording.clone()),
        CaptureTap {
            sender: tap_tx,
            recording,
        },
        (records, chroma),
    )
}

/// Set the parameter behind `ptr` to the plain `value` (as [`Record::Param`] holds it), as
/// the plugin's own state loading does.
///
/// # Safety
/// `ptr` must point into parameters that are alive.
pub unsafe fn set_plain(ptr: nice_plug::prelude::ParamPtr, value: f32) {
    use nice_plug::params::InternalParamMut;
    use nice_plug::prelude::ParamPtr;
    // SAFETY: the caller keeps the parameters alive.
    unsafe {
        match ptr {
            ParamPtr::FloatParam(p) => (*p)._internal_set_plain_value(value),
            ParamPtr::IntParam(p) => (*p)._internal_set_plain_value(value.round() as i32),
            ParamPtr::BoolParam(p) => (*p)._internal_set_plain_value(value > 0.5),
            ParamPtr::EnumParam(p) => (*p)._internal_set_plain_value(value.round() as i32),
        };
    }
}

/// The capture folder set by [`set_capture_dir`], if any.
static CAPTURE_DIR: parking_lot::RwLock<Option<PathBuf>> = parking_lot::RwLock::new(None);

/// Capture into `dir` (`None`: as [`capture_dir`] finds it) in instances made from now on in
/// this process, whatever the environment says: for tests and programs that host the plugin
/// in their own process. Instances read the folder at their first activation.
pub fn set_capture_dir(dir: Option<PathBuf>) {
    *CAPTURE_DIR.write() = dir;
}

/// The capture folder: the one [`set_capture_dir`] gave, else `DYEFLOW_CAPTURE_DIR` when set,
/// else `captures` in the user's Dyeflow folder ([`crate::folders`]: `~/Dyeflow/captures` on
/// Linux, in the Documents folder on Windows and macOS).
pub fn capture_dir() -> Option<PathBuf> {
    if let Some(dir) = CAPTURE_DIR.read().clone() {
        return Some(dir);
    }
    match std::env::var_os(CAPTURE_DIR_ENV) {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => crate::folders::captures(),
    }
}
