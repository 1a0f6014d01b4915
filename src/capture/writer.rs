//! The capture thread: drains the audio thread's capture queue (and the chroma thread's, in
//! real time) into capture files. A start opens a new file in the capture folder (named by
//! the date and time), a stop finishes it; so does the thread's end, with whatever was queued.
//! The chroma thread's records (and the editor's and OSC's, through the input tap) lag the
//! audio thread's a little: each is written once the audio thread's records have passed its
//! time (the reader sorts by time), those of a capture that has ended up to its stop.

use super::file::{CaptureFile, FORMAT_NAME, FORMAT_VERSION, Header};
use super::{CAPTURE_EXTENSION, Record};
use crate::bridge::queue::Receiver;
use parking_lot::Mutex;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the thread looks at the queues while a capture is on, and between captures, ms.
const POLL_MS: u64 = 20;
const IDLE_POLL_MS: u64 = 200;
/// Side records (chroma thread and input tap) held until the audio thread's pass their time.
const SIDE_RECORDS: usize = super::CHROMA_CAPTURE_RECORDS + super::INPUT_CAPTURE_RECORDS;
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
}

fn run(
    stop: &AtomicBool,
    (mut records, mut chroma, mut input): (Receiver<Record>, Receiver<Record>, Receiver<Record>),
    (ids, state): (&[String], &(dyn Fn() -> String + Send)),
    dir: &Path,
    status: &Mutex<CaptureStatus>,
) {
    let mut open: Option<Open> = None;
    // The chroma thread's records not written yet, and the audio thread's last record's time.
    let mut side: std::collections::VecDeque<Record> = std::collections::VecDeque::new();
    let mut latest = f64::NEG_INFINITY;
    loop {
        let stopping = stop.load(Ordering::Acquire);
        let stats = records.stats().clone();
        // The side records (the chroma thread's, the input tap's) are kept in time order.
        let mut keep = |r: Record| {
            if side.len() < SIDE_RECORDS {
                let at = side.partition_point(|s| s.time_s() <= r.time_s());
                side.insert(at, r);
            }
        };
        chroma.drain(&mut keep);
        input.drain(&mut keep);
        records.drain(|record| match record {
            Record::Start {
                time_s,
                sample_rate,
            } => {
                if let Some(o) = open.take() {
                    finish(o, stats.dropped(), latest, status);
                }
                side.retain(|r| r.time_s() >= time_s);
                latest = time_s;
                let header = Header {
                    format: FORMAT_NAME.into(),
                    version: FORMAT_VERSION,
                    plugin_version: env!("CARGO_PKG_VERSION").into(),
                    sample_rate,
                    start_s: time_s,
                    params: ids.to_vec(),
                    state: serde_json::from_str(&state()).unwrap_or_default(),
                };
                let started = std::fs::create_dir_all(dir)
                    .and_then(|()| create_unique(dir, &header))
                    .map_err(|e| format!("cannot write a capture in {}: {e}", dir.display()));
                let mut s = status.lock();
                match started {
                    Ok((file, path)) => {
                        s.recording = Some(path);
                        s.error = None;
                        open = Some(Open {
                            file,
                            dropped_at_start: stats.dropped(),
                            start_s: time_s,
                        });
                    }
                    Err(e) => {
                        nice_plug::nice_error!("{e}");
                        s.error = Some(e);
                    }
                }
            }
            Record::Stop { time_s } => {
                if let Some(mut o) = open.take() {
                    let _ = write_side(&mut o, &mut side, time_s);
                    finish(o, stats.dropped(), time_s, status);
                }
                // Later ones may belong to the next capture (its start prunes the rest).
                side.retain(|r| r.time_s() > time_s);
            }
            other => {
                latest = latest.max(other.time_s());
                if let Some(o) = &mut open
                    && let Err(e) = o.file.write(&other)
                {
                    abandon(&mut open, &e, status);
                }
            }
        });
        if let Some(o) = &mut open
            && let Err(e) = write_side(o, &mut side, latest)
        {
            abandon(&mut open, &e, status);
        }
        if stopping {
            if let Some(mut o) = open.take() {
                let _ = write_side(&mut o, &mut side, f64::INFINITY);
                finish(o, stats.dropped(), latest, status);
            }
            return;
        }
        let wait = if open.is_some() {
            POLL_MS
        } else {
            IDLE_POLL_MS
        };
        std::thread::park_timeout(Duration::from_millis(wait));
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
fn write_side(
    open: &mut Open,
    side: &mut std::collections::VecDeque<Record>,
    until: f64,
) -> std::io::Result<()> {
    while let Some(r) = side.front() {
        if r.time_s() > until {
            break;
        }
        if r.time_s() >= open.start_s {
            open.file.write(r)?;
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
            },
            event(1.1, 0.0),
            Record::Stop { time_s: 2.0 },
            Record::Start {
                time_s: 2.5,
                sample_rate: 48_000.0,
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

    #[test]
    fn stamps_are_utc_dates() {
        assert_eq!(utc_stamp(0), "19700101-000000");
        // 2026-11-26 08:58:07 UTC.
        assert_eq!(utc_stamp(1_795_683_487), "20261126-085807");
        // A leap day.
        assert_eq!(utc_stamp(951_782_400), "20000229-000000");
    }
}
