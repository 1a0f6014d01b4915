//! The capture thread: drains the audio thread's capture queue (and the chroma thread's, in
//! real time) into capture files. A start opens a new file in the capture folder (named by
//! the date and time), a stop finishes it; so does the thread's end, with whatever was queued.
//! The chroma thread's records (and the editor's and OSC's, through the input tap) lag the
//! audio thread's a little: each is written once the audio thread's records have passed its
//! time (the reader sorts by time), those of a capture that has ended up to its stop.
//!
//! Why this file is long: about 330 of its lines are tests; the writer thread's modes
//! (watching, capturing, finishing) share one loop and its lookback.

use super::file::{CaptureFile, FORMAT_NAME, FORMAT_VERSION, Header};
use super::{CAPTURE_EXTENSION, Cause, LOOKBACK_RECORDS, LOOKBACK_S, Record};
use crate::bridge::queue::Receiver;
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the thread looks at the queues while a capture is on, and between captures, ms.
const POLL_MS: u64 = 20;
const IDLE_POLL_MS: u64 = 200;
/// A capture is finished when the audio thread has sent nothing for this long, seconds: a host
/// that stops processing after a bounce without deactivating the plugin (DawDreamer's engine
/// stays prepared) gets its capture now, not when the plugin goes. If the host then processes
/// again without a restart, a new capture goes on from there ([`Resume`]).
pub const IDLE_FINISH_S: f64 = 3.0;
/// A capture of less audio than this, seconds, is not kept: hosts process a block or two while
/// probing a plugin they load (JUCE's hosts flag those offline), which is not a bounce.
pub const MIN_CAPTURE_S: f64 = 0.5;
/// Side records (chroma thread and input tap) held until the audio thread's pass their time,
/// and while watching: a lookback's worth (the chroma thread's 22 a second and a mouse's 60).
const SIDE_RECORDS: usize = 2 * (super::CHROMA_CAPTURE_RECORDS + super::INPUT_CAPTURE_RECORDS);
/// The thread's name.
pub const CAPTURE_THREAD_NAME: &str = "dyeflow-capture";
/// Longest wait for the thread when the plugin goes, ms (it ends within milliseconds unless
/// the disk is slow).
pub const DROP_WAIT_MS: u64 = 3000;

/// What the editor shows about captures.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CaptureStatus {
    /// The file being written.
    pub recording: Option<PathBuf>,
    /// The last file finished.
    pub last: Option<PathBuf>,
    /// Why the last capture failed, if it did.
    pub error: Option<String>,
    /// Records the last capture lost on a full queue.
    pub dropped: u64,
    /// Whether the size limit cut the last capture short.
    pub limited: bool,
    /// Where captures go (`None`: no home directory and no `DYEFLOW_CAPTURE_DIR`).
    pub folder: Option<PathBuf>,
}

impl CaptureStatus {
    /// A status for captures going to [`super::capture_dir`], none written yet.
    pub fn new() -> Self {
        Self {
            folder: super::capture_dir(),
            ..Self::default()
        }
    }
}

/// The plugin's whole state now, as a preset's JSON (for each capture's header).
pub type StateFn = Box<dyn Fn() -> String + Send>;

/// The running capture thread.
pub struct CaptureThread {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    status: Arc<Mutex<CaptureStatus>>,
}

impl CaptureThread {
    /// Start the thread: it writes what arrives on `records` (and `chroma`) into files in
    /// `dir`, with the parameter ids `ids` and the state `state` gives in each header, and says
    /// how it goes in `status`.
    pub fn spawn(
        (records, chroma, input): (Receiver<Record>, Receiver<Record>, Receiver<Record>),
        (ids, state): (Vec<String>, StateFn),
        dir: PathBuf,
        status: Arc<Mutex<CaptureStatus>>,
    ) -> std::io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (stop, status) = (stop.clone(), status.clone());
            std::thread::Builder::new()
                .name(CAPTURE_THREAD_NAME.into())
                .spawn(move || {
                    run(
                        &stop,
                        (records, chroma, input),
                        (&ids, &*state),
                        &dir,
                        &status,
                    )
                })?
        };
        Ok(Self {
            stop,
            thread: Some(thread),
            status,
        })
    }

    /// Finish what is queued and stop; the last capture's status.
    pub fn finish(mut self) -> CaptureStatus {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
        self.status.lock().clone()
    }
}

impl Drop for CaptureThread {
    /// Finish the capture in progress and wait for the thread, at most [`DROP_WAIT_MS`]: long
    /// enough to write what is queued and close the file on a slow disk, since a capture
    /// without its end line cannot be rendered.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            crate::pin::join_within(thread, DROP_WAIT_MS, "The capture thread");
        }
    }
}

/// The capture being written and the queue's drop count at its start.
struct Open {
    file: CaptureFile,
    dropped_at_start: u64,
    /// The capture's start, audio seconds: side records from before it are not its own.
    start_s: f64,
    sample_rate: f32,
    cause: Cause,
    /// Each parameter's latest value in it (NaN: none yet), for a [`Resume`].
    params: Vec<f32>,
}

impl Open {
    /// Write `record`, following the parameters' values.
    fn write(&mut self, record: &Record) -> std::io::Result<()> {
        if let Record::Param { index, value, .. } = *record
            && let Some(v) = self.params.get_mut(usize::from(index))
        {
            *v = value;
        }
        self.file.write(record)
    }
}

/// A capture finished because the host went quiet ([`IDLE_FINISH_S`]) without a stop: if its
/// records go on, so does the capture, in a new file from there with every parameter's value.
struct Resume {
    sample_rate: f32,
    cause: Cause,
    params: Vec<f32>,
}

/// Each known value of `params` as a record at `time_s`.
fn param_records(params: Vec<f32>, time_s: f64) -> impl Iterator<Item = Record> {
    params.into_iter().enumerate().filter_map(move |(i, v)| {
        (!v.is_nan()).then_some(Record::Param {
            time_s,
            index: i as u16,
            value: v,
        })
    })
}

/// What the thread keeps while the plugin watches (see [`Record::Watch`]): the last
/// [`LOOKBACK_S`] of the audio thread's records, and every parameter's value before them.
struct Watch {
    sample_rate: f32,
    /// Audio time the watch began at.
    since_s: f64,
    /// The records kept, in the order they came.
    kept: VecDeque<Record>,
    /// Each parameter's value as of the oldest kept record (NaN: not known).
    params: Vec<f32>,
    /// The audio time up to which records were let go (older than the lookback, or past
    /// [`LOOKBACK_RECORDS`]).
    forgotten_until: f64,
    /// The queue's count of dropped records at the watch's start, and after each look at the
    /// queue within the lookback (with the latest record's time then): a bounce's capture counts
    /// the records dropped since its start.
    dropped_at_watch: u64,
    drops: VecDeque<(f64, u64)>,
}

impl Watch {
    fn new(since_s: f64, sample_rate: f32, params: usize, dropped: u64) -> Self {
        Self {
            sample_rate,
            since_s,
            kept: VecDeque::new(),
            params: vec![f32::NAN; params],
            forgotten_until: f64::NEG_INFINITY,
            dropped_at_watch: dropped,
            drops: VecDeque::new(),
        }
    }

    /// After a look at the queue: `dropped` records dropped so far, the latest at `latest`.
    fn looked(&mut self, latest: f64, dropped: u64) {
        self.drops.push_back((latest, dropped));
        // One mark older than the lookback stays, as the count before it.
        while self.drops.len() > 1
            && (self.drops[1].0 < latest - LOOKBACK_S || self.drops.len() > 1024)
        {
            self.drops.pop_front();
        }
    }

    /// The queue's dropped count before audio time `start_s` (at the last look whose records
    /// all came before it): what a capture starting there counts its losses from.
    fn dropped_before(&self, start_s: f64) -> u64 {
        self.drops
            .iter()
            .rev()
            .find(|(t, _)| *t < start_s)
            .map_or(self.dropped_at_watch, |&(_, d)| d)
    }

    /// Keep `record`; let go of what is older than the lookback (the latest record's time is
    /// `latest`) or beyond the count, folding the parameters into the values before them.
    fn keep(&mut self, record: Record, latest: f64) {
        self.kept.push_back(record);
        while let Some(&front) = self.kept.front() {
            let old = front.time_s() < latest - LOOKBACK_S;
            if !old && self.kept.len() <= LOOKBACK_RECORDS {
                break;
            }
            self.forget(front);
            self.kept.pop_front();
        }
    }

    fn forget(&mut self, record: Record) {
        self.forgotten_until = self.forgotten_until.max(record.time_s());
        if let Record::Param { index, value, .. } = record
            && let Some(v) = self.params.get_mut(usize::from(index))
        {
            *v = value;
        }
    }

    /// The capture of a bounce that began at `from_s`: where it starts (no earlier than what
    /// is still kept), and its first records: every known parameter's value then, and the
    /// records kept since.
    fn bounce(mut self, from_s: f64) -> (f64, impl Iterator<Item = Record>) {
        let start_s = from_s.max(self.since_s).max(self.forgotten_until);
        while let Some(&front) = self.kept.front() {
            if front.time_s() >= start_s {
                break;
            }
            self.forget(front);
            self.kept.pop_front();
        }
        (
            start_s,
            param_records(self.params, start_s).chain(self.kept),
        )
    }
}

/// Open a capture in `dir` starting at audio time `start_s`, and say so in `status`.
fn open_capture(
    (start_s, sample_rate, cause): (f64, f32, Cause),
    (ids, state): (&[String], &(dyn Fn() -> String + Send)),
    (dir, status): (&Path, &Mutex<CaptureStatus>),
    dropped_at_start: u64,
) -> Option<Open> {
    let header = Header {
        format: FORMAT_NAME.into(),
        version: FORMAT_VERSION,
        plugin_version: env!("CARGO_PKG_VERSION").into(),
        sample_rate,
        start_s,
        params: ids.to_vec(),
        state: serde_json::from_str(&state()).unwrap_or_default(),
        cause: Some(cause),
    };
    let started = std::fs::create_dir_all(dir)
        .and_then(|()| create_unique(dir, &header))
        .map_err(|e| format!("cannot write a capture in {}: {e}", dir.display()));
    let mut s = status.lock();
    match started {
        Ok((file, path)) => {
            s.recording = Some(path);
            s.error = None;
            Some(Open {
                file,
                dropped_at_start,
                start_s,
                sample_rate,
                cause,
                params: vec![f32::NAN; ids.len()],
            })
        }
        Err(e) => {
            nice_plug::nice_error!("{e}");
            s.error = Some(e);
            None
        }
    }
}

fn run(
    stop: &AtomicBool,
    (mut records, mut chroma, mut input): (Receiver<Record>, Receiver<Record>, Receiver<Record>),
    (ids, state): (&[String], &(dyn Fn() -> String + Send)),
    dir: &Path,
    status: &Mutex<CaptureStatus>,
) {
    let mut open: Option<Open> = None;
    let mut watch: Option<Watch> = None;
    let mut resume: Option<Resume> = None;
    // When the audio thread last sent something.
    let mut heard = std::time::Instant::now();
    // The chroma thread's records not written yet, and the audio thread's last record's time.
    let mut side: VecDeque<Record> = VecDeque::new();
    let mut latest = f64::NEG_INFINITY;
    let mut looked = std::time::Instant::now();
    loop {
        let stopping = stop.load(Ordering::Acquire);
        let stats = records.stats().clone();
        let latest_before = latest;
        let mut any = false;
        // The side records (the chroma thread's, the input tap's) are kept in time order.
        // Full (a long watch, or a writer far behind), the oldest go: the newest are those a
        // bounce or the capture being written needs.
        let mut keep = |r: Record| {
            if side.len() >= SIDE_RECORDS {
                side.pop_front();
            }
            let at = side.partition_point(|s| s.time_s() <= r.time_s());
            side.insert(at, r);
        };
        chroma.drain(&mut keep);
        input.drain(&mut keep);
        records.drain(|record| {
            any = true;
            if !matches!(
                record,
                Record::Param { .. } | Record::Transport { .. } | Record::Event(_)
            ) {
                resume = None;
            }
            match record {
                Record::Start {
                    time_s,
                    sample_rate,
                    cause,
                } => {
                    if let Some(o) = open.take() {
                        finish(o, stats.dropped(), latest, status);
                    }
                    watch = None;
                    side.retain(|r| r.time_s() >= time_s);
                    latest = time_s;
                    open = open_capture(
                        (time_s, sample_rate, cause),
                        (ids, state),
                        (dir, status),
                        stats.dropped(),
                    );
                }
                Record::Watch {
                    time_s,
                    sample_rate,
                } => {
                    if let Some(o) = open.take() {
                        finish(o, stats.dropped(), latest, status);
                    }
                    latest = latest.max(time_s);
                    watch = Some(Watch::new(time_s, sample_rate, ids.len(), stats.dropped()));
                }
                Record::Bounce { from_s } => {
                    let Some(w) = watch.take() else {
                        return;
                    };
                    let sample_rate = w.sample_rate;
                    let dropped_at_start = w.dropped_before(from_s.max(w.since_s));
                    let (start_s, first) = w.bounce(from_s);
                    side.retain(|r| r.time_s() >= start_s);
                    open = open_capture(
                        (start_s, sample_rate, Cause::Pace),
                        (ids, state),
                        (dir, status),
                        dropped_at_start,
                    );
                    if start_s > from_s.max(0.0) + 1e-9 && open.is_some() {
                        // More records came than the lookback holds (a flood of events).
                        let e = format!(
                            "the bounce's first {:.2} s are not in its capture: more records \
                             came than it keeps while watching",
                            start_s - from_s
                        );
                        nice_plug::nice_error!("{e}");
                        status.lock().error = Some(e);
                    }
                    write_all(&mut open, first, status);
                }
                Record::Stop { time_s } => {
                    watch = None;
                    if let Some(mut o) = open.take() {
                        let _ = write_side(&mut o, &mut side, time_s);
                        finish(o, stats.dropped(), time_s, status);
                    }
                    // Later ones may belong to the next capture (its start prunes the rest).
                    side.retain(|r| r.time_s() > time_s);
                }
                other => {
                    latest = latest.max(other.time_s());
                    if open.is_none()
                        && let Some(r) = resume.take()
                    {
                        // The host processes again after going quiet: the capture goes on.
                        let time_s = other.time_s();
                        side.retain(|r| r.time_s() >= time_s);
                        open = open_capture(
                            (time_s, r.sample_rate, r.cause),
                            (ids, state),
                            (dir, status),
                            stats.dropped(),
                        );
                        write_all(&mut open, param_records(r.params, time_s), status);
                    }
                    if let Some(o) = &mut open {
                        if let Err(e) = o.write(&other) {
                            abandon(&mut open, &e, status);
                        }
                    } else if let Some(w) = &mut watch {
                        w.keep(other, latest);
                    }
                }
            }
        });
        if any {
            heard = std::time::Instant::now();
        } else if open.is_some() && heard.elapsed().as_secs_f64() >= IDLE_FINISH_S {
            // The host went quiet without a stop: finish what it bounced.
            let mut o = open.take().expect("checked");
            let _ = write_side(&mut o, &mut side, latest);
            resume = Some(Resume {
                sample_rate: o.sample_rate,
                cause: o.cause,
                params: std::mem::take(&mut o.params),
            });
            finish(o, stats.dropped(), latest, status);
        }
        if let Some(w) = &mut watch {
            w.looked(latest, stats.dropped());
        }
        if let Some(o) = &mut open
            && let Err(e) = write_side(o, &mut side, latest)
        {
            abandon(&mut open, &e, status);
        }
        if open.is_none() && watch.is_some() {
            // Watching: the side records of the lookback only.
            while side
                .front()
                .is_some_and(|r| r.time_s() < latest - LOOKBACK_S)
            {
                side.pop_front();
            }
        }
        if stopping {
            if let Some(mut o) = open.take() {
                let _ = write_side(&mut o, &mut side, f64::INFINITY);
                finish(o, stats.dropped(), latest, status);
            }
            return;
        }
        // Often while writing, and while the audio runs faster than real time (a bounce may be
        // starting: its records must not fill the queue); rarely otherwise.
        let audio_s = latest - latest_before;
        let fast = audio_s.is_finite() && audio_s > 2.0 * looked.elapsed().as_secs_f64();
        looked = std::time::Instant::now();
        let wait = if open.is_some() || fast {
            POLL_MS
        } else {
            IDLE_POLL_MS
        };
        std::thread::park_timeout(Duration::from_millis(wait));
    }
}

/// Write `records` into the capture in `open`, if any (giving it up on a failure).
fn write_all(
    open: &mut Option<Open>,
    records: impl Iterator<Item = Record>,
    status: &Mutex<CaptureStatus>,
) {
    for r in records {
        if let Some(o) = open
            && let Err(e) = o.write(&r)
        {
            abandon(open, &e, status);
        }
    }
}

/// Give up the capture in `open` after a write failed with `e` (its `.part` file stays, without
/// an end line), and say why in `status`.
fn abandon(open: &mut Option<Open>, e: &std::io::Error, status: &Mutex<CaptureStatus>) {
    let e = format!("the capture could not be written: {e}");
    nice_plug::nice_error!("{e}");
    let mut s = status.lock();
    s.error = Some(e);
    s.recording = None;
    *open = None;
}

/// Write the chroma thread's records up to time `until` into `open`.
fn write_side(open: &mut Open, side: &mut VecDeque<Record>, until: f64) -> std::io::Result<()> {
    while let Some(r) = side.front() {
        if r.time_s() > until {
            break;
        }
        if r.time_s() >= open.start_s {
            open.write(r)?;
        }
        side.pop_front();
    }
    Ok(())
}

/// Finish `open` (its end line, stopped at audio time `stop_s`; its name) and say so in
/// `status`.
fn finish(open: Open, dropped_now: u64, stop_s: f64, status: &Mutex<CaptureStatus>) {
    let dropped = dropped_now.saturating_sub(open.dropped_at_start);
    let limited = open.file.limited();
    let length_s = stop_s - open.start_s;
    if length_s.is_nan() || length_s < MIN_CAPTURE_S {
        // A host probing the plugin, not a bounce.
        let result = open.file.discard();
        let mut s = status.lock();
        s.recording = None;
        if let Err(e) = result {
            s.error = Some(format!(
                "a capture too short to keep could not be removed: {e}"
            ));
        }
        return;
    }
    let result = open.file.finish(dropped, stop_s);
    let mut s = status.lock();
    s.recording = None;
    s.dropped = dropped;
    s.limited = limited;
    match result {
        Ok(path) => {
            nice_plug::nice_log!("Capture written: {}", path.display());
            s.last = Some(path);
        }
        Err(e) => {
            let e = format!("the capture could not be finished: {e}");
            nice_plug::nice_error!("{e}");
            s.error = Some(e);
        }
    }
}

/// A new capture in `dir`: `capture-YYYYMMDD-HHMMSS[-n].dyeflow-capture` (UTC), the first
/// name no capture (of this or another instance) has taken; the file and its path.
fn create_unique(dir: &Path, header: &Header) -> std::io::Result<(CaptureFile, PathBuf)> {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let stamp = utc_stamp(secs);
    for n in 1..10_000 {
        let suffix = if n == 1 {
            String::new()
        } else {
            format!("-{n}")
        };
        let path = dir.join(format!("capture-{stamp}{suffix}.{CAPTURE_EXTENSION}"));
        match CaptureFile::create(&path, header) {
            Ok(file) => return Ok((file, path)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other(
        "every capture name of this second is taken",
    ))
}

/// `YYYYMMDD-HHMMSS` of `secs` after the Unix epoch, UTC (days to a civil date as in Howard
/// Hinnant's algorithm).
fn utc_stamp(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rest = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A capture stops and the next starts within one look at the queues: each gets the side
    /// records (input tap, chroma thread) of its own time, whatever order they came in, and
    /// none from before its start or between the two.
    #[test]
    fn side_records_go_to_the_capture_of_their_time() {
        use crate::bridge::events::{SimEvent, TimedEvent};
        use crate::bridge::queue;
        let dir = std::env::temp_dir().join(format!("dyeflow-writer-side-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (mut tx, records) = queue::bounded(64);
        let (mut chroma_tx, chroma) = queue::bounded(64);
        let (mut input_tx, input) = queue::bounded(64);
        let event = |time_s: f64, x: f32| {
            Record::Event(TimedEvent {
                time_s,
                event: SimEvent::Splat(crate::fluid::Splat {
                    pos: [x, 0.5],
                    ..Default::default()
                }),
            })
        };
        for r in [
            Record::Start {
                time_s: 1.0,
                sample_rate: 48_000.0,
                cause: Cause::Offline,
            },
            event(1.1, 0.0),
            Record::Stop { time_s: 2.0 },
            Record::Start {
                time_s: 2.5,
                sample_rate: 48_000.0,
                cause: Cause::Offline,
            },
            event(2.6, 0.0),
            Record::Stop { time_s: 3.0 },
        ] {
            assert!(tx.send(r));
        }
        // Out of time order, as the threads deliver them.
        for (t, x) in [(2.7, 0.27), (0.5, 0.05), (1.5, 0.15), (2.2, 0.22)] {
            assert!(input_tx.send(event(t, x)));
        }
        assert!(chroma_tx.send(event(1.2, 0.12)));
        assert!(chroma_tx.send(event(2.9, 0.29)));
        let stop = AtomicBool::new(true);
        let status = Mutex::new(CaptureStatus::new());
        let state = || "{}".to_owned();
        run(
            &stop,
            (records, chroma, input),
            (&[], &state),
            &dir,
            &status,
        );
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        assert_eq!(files.len(), 2, "{files:?}");
        let side_xs = |path: &Path| -> Vec<f32> {
            let c = super::super::file::load(path).unwrap();
            c.records
                .iter()
                .filter_map(|r| match r {
                    Record::Event(TimedEvent {
                        event: SimEvent::Splat(s),
                        ..
                    }) if s.pos[0] > 0.0 => Some(s.pos[0]),
                    _ => None,
                })
                .collect()
        };
        let (a, b) = (side_xs(&files[0]), side_xs(&files[1]));
        let (a, b) = if a.contains(&0.15) { (a, b) } else { (b, a) };
        assert_eq!(
            a,
            vec![0.12, 0.15],
            "the first capture's own, in time order"
        );
        assert_eq!(
            b,
            vec![0.27, 0.29],
            "the second's: none from before its start"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Run the capture thread over `records` (the audio thread's queue, nothing from the other
    /// threads) with parameters `visc` and `speed`; the captures it wrote, loaded, in the order
    /// of their start.
    fn captures_of(name: &str, records: &[Record]) -> Vec<super::super::file::Capture> {
        use crate::bridge::queue;
        let dir =
            std::env::temp_dir().join(format!("dyeflow-writer-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (mut tx, rx) = queue::bounded(records.len() + 1);
        for r in records {
            assert!(tx.send(*r));
        }
        let (_, chroma) = queue::bounded::<Record>(1);
        let (_, input) = queue::bounded::<Record>(1);
        let status = Mutex::new(CaptureStatus::new());
        let state = || "{}".to_owned();
        let ids = ["visc".to_owned(), "speed".to_owned()];
        run(
            &AtomicBool::new(true),
            (rx, chroma, input),
            (&ids, &state),
            &dir,
            &status,
        );
        let mut found: Vec<_> = std::fs::read_dir(&dir)
            .map(|d| d.map(|e| e.unwrap().path()).collect())
            .unwrap_or_default();
        found.sort();
        let mut captures: Vec<_> = found
            .iter()
            .map(|p| super::super::file::load(p).unwrap())
            .collect();
        captures.sort_by(|a, b| a.header.start_s.total_cmp(&b.header.start_s));
        let _ = std::fs::remove_dir_all(&dir);
        captures
    }

    fn onset(time_s: f64) -> Record {
        use crate::bridge::events::{SimEvent, TimedEvent};
        Record::Event(TimedEvent {
            time_s,
            event: SimEvent::Onset { strength: 0.5 },
        })
    }

    fn param(time_s: f64, index: u16, value: f32) -> Record {
        Record::Param {
            time_s,
            index,
            value,
        }
    }

    /// Watching writes nothing; a bounce found later starts its capture where it began, with
    /// every parameter's value then (a change made while watching included) and the records
    /// kept since, and none from before.
    #[test]
    fn a_bounce_is_captured_from_where_it_began() {
        let mut records = vec![
            Record::Watch {
                time_s: 10.0,
                sample_rate: 48_000.0,
            },
            param(10.0, 0, 0.25),
            param(10.0, 1, 1.0),
        ];
        records.extend((0..100).map(|i| onset(10.0 + 0.1 * f64::from(i))));
        records.push(param(15.0, 0, 0.75));
        records.extend((0..50).map(|i| onset(20.0 + 0.1 * f64::from(i))));
        records.push(Record::Bounce { from_s: 22.0 });
        records.push(onset(25.5));
        records.push(Record::Stop { time_s: 26.0 });
        let captures = captures_of("bounce", &records);
        assert_eq!(captures.len(), 1);
        let c = &captures[0];
        assert_eq!(c.header.start_s, 22.0);
        assert_eq!(c.stop_s, Some(26.0));
        assert_eq!(
            &c.records[..2],
            &[param(22.0, 0, 0.75), param(22.0, 1, 1.0)]
        );
        let onsets: Vec<f64> = c.records[2..].iter().map(Record::time_s).collect();
        let want: Vec<f64> = (20..50)
            .map(|i| 20.0 + 0.1 * f64::from(i))
            .chain([25.5])
            .collect();
        assert_eq!(onsets, want);
        assert_eq!(c.dropped, 0);
        // Without the bounce: nothing at all.
        records.retain(|r| !matches!(r, Record::Bounce { .. }));
        assert!(captures_of("watch", &records).is_empty());
    }

    /// The lookback is bounded: in time (a bounce said to begin before it starts where it
    /// does, with the parameters' values there) and in count (a flood of records lets the
    /// oldest go, and the capture starts after them).
    #[test]
    fn the_lookback_is_bounded() {
        let mut records = vec![
            Record::Watch {
                time_s: 0.0,
                sample_rate: 48_000.0,
            },
            param(0.0, 0, 0.5),
        ];
        records.extend((0..600).map(|i| onset(0.1 * f64::from(i))));
        records.push(Record::Bounce { from_s: 1.0 });
        records.push(Record::Stop { time_s: 61.0 });
        let c = &captures_of("old", &records)[0];
        let oldest = 59.9 - LOOKBACK_S;
        assert!(
            (c.header.start_s - oldest).abs() < 0.11,
            "{}",
            c.header.start_s
        );
        assert_eq!(c.records[0], param(c.header.start_s, 0, 0.5));
        assert!(
            c.records[1..]
                .iter()
                .all(|r| r.time_s() >= c.header.start_s)
        );
        let flood = LOOKBACK_RECORDS + 1000;
        let mut records = vec![Record::Watch {
            time_s: 0.0,
            sample_rate: 48_000.0,
        }];
        records.extend((0..flood).map(|i| onset(i as f64 * 1e-5)));
        records.push(Record::Bounce { from_s: 0.0 });
        records.push(Record::Stop { time_s: 2.0 });
        let c = &captures_of("flood", &records)[0];
        assert_eq!(c.records.len(), LOOKBACK_RECORDS);
        // It starts after the records let go (their time is before its start: not lost in it).
        assert!(
            (c.header.start_s - 999e-5).abs() < 1e-12,
            "{}",
            c.header.start_s
        );
        assert_eq!(c.dropped, 0);
    }

    /// A host that goes quiet after a bounce without a stop gets its capture after
    /// IDLE_FINISH_S; when it processes again the capture goes on in a new file, from every
    /// parameter's value; a capture of a host's probe (less than MIN_CAPTURE_S) is not kept.
    #[test]
    fn a_quiet_host_gets_its_capture_and_probes_leave_none() {
        use crate::bridge::queue;
        let dir = std::env::temp_dir().join(format!("dyeflow-writer-idle-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (mut tx, rx) = queue::bounded(1024);
        let (_, chroma) = queue::bounded::<Record>(1);
        let (_, input) = queue::bounded::<Record>(1);
        let status = Arc::new(Mutex::new(CaptureStatus::new()));
        let ids = vec!["visc".to_owned()];
        let state: StateFn = Box::new(|| "{}".to_owned());
        let thread = CaptureThread::spawn(
            (rx, chroma, input),
            (ids, state),
            dir.clone(),
            status.clone(),
        )
        .unwrap();
        let start = |time_s| Record::Start {
            time_s,
            sample_rate: 48_000.0,
            cause: Cause::Offline,
        };
        // A probe: 50 ms, started and stopped.
        for r in [start(0.0), onset(0.02), Record::Stop { time_s: 0.05 }] {
            assert!(tx.send(r));
        }
        // A bounce of 2 s, then nothing.
        for r in [start(1.0), param(1.0, 0, 0.3)] {
            assert!(tx.send(r));
        }
        for i in 0..20 {
            assert!(tx.send(onset(1.0 + 0.1 * f64::from(i))));
        }
        assert!(tx.send(param(2.5, 0, 0.6)));
        assert!(tx.send(onset(3.0)));
        let finished = |n: usize| {
            let deadline = std::time::Instant::now() + Duration::from_secs_f64(IDLE_FINISH_S + 3.0);
            loop {
                let mut done: Vec<PathBuf> = std::fs::read_dir(&dir)
                    .unwrap()
                    .map(|e| e.unwrap().path())
                    .filter(|p| p.extension().is_some_and(|e| e == CAPTURE_EXTENSION))
                    .collect();
                if done.len() >= n || std::time::Instant::now() > deadline {
                    done.sort();
                    return done;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        };
        let first = finished(1);
        assert_eq!(
            first.len(),
            1,
            "the bounce alone, finished while the host is quiet"
        );
        let c = super::super::file::load(&first[0]).unwrap();
        assert_eq!((c.header.start_s, c.stop_s), (1.0, Some(3.0)));
        // The host processes again: the capture goes on from there.
        for i in 0..10 {
            assert!(tx.send(onset(3.1 + 0.1 * f64::from(i))));
        }
        assert!(tx.send(Record::Stop { time_s: 4.5 }));
        thread.finish();
        let all = finished(2);
        assert_eq!(all.len(), 2, "{all:?}");
        let next = all.iter().find(|p| **p != first[0]).unwrap();
        let c = super::super::file::load(next).unwrap();
        assert!(
            (c.header.start_s - 3.1).abs() < 1e-9,
            "{}",
            c.header.start_s
        );
        assert_eq!(c.records[0], param(c.header.start_s, 0, 0.6));
        assert_eq!(c.records.len(), 11);
        let leftovers: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(leftovers.len(), 2, "no part file of the probe is left");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn stamps_are_utc_dates() {
        assert_eq!(utc_stamp(0), "19700101-000000");
        // 2026-11-26 08:58:07 UTC.
        assert_eq!(utc_stamp(1_795_683_487), "20261126-085807");
        // A leap day.
        assert_eq!(utc_stamp(951_782_400), "20000229-000000");
    }
}
