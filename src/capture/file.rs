//! The capture file: JSON lines.
//!
//! 1. A [`Header`]: the format's name and version, the plugin's version, the sample rate, the
//!    audio time the capture starts at, the parameter ids (records name parameters by their
//!    place in this list), and the plugin's whole state then, as a preset.
//! 2. One line per record (see [`super::Record`]; the start and stop are the header and end).
//! 3. An end line: how many records, how many the audio thread dropped on a full queue,
//!    whether the size limit cut the capture short, and the CRC-32 of every byte before it.
//!
//! [`load`] refuses a file without its end line (truncated), with a wrong count or checksum
//! (damaged), of another format or a newer version, or past the size limit, each with one
//! sentence saying so.
//!
//! The format's writer and its streaming, checked reader must agree byte for byte, so they
//! live together.

use super::{MAX_CAPTURE_BYTES, Record};
use crate::bridge::events::{SimEvent, TimedEvent};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// The format's name, first in every header.
pub const FORMAT_NAME: &str = "dyeflow-capture";
/// The format's version: a reader refuses newer ones.
pub const FORMAT_VERSION: u32 = 1;
/// The longest line a reader takes (a header with every parameter and obstacles is ~100 kB).
const MAX_LINE_BYTES: usize = 8 << 20;

/// A capture's first line.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Header {
    pub format: String,
    pub version: u32,
    /// The plugin version that wrote it.
    pub plugin_version: String,
    pub sample_rate: f32,
    /// Audio time of the capture's first sample, seconds (the bridge's clock).
    pub start_s: f64,
    /// Parameter ids; a record's parameter index is its place here.
    pub params: Vec<String>,
    /// The plugin's state at the start, as a preset (`preset::to_json`).
    pub state: serde_json::Value,
    /// Why it was made (absent in captures written before Dyeflow said).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<super::Cause>,
}

/// A record's line.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase")]
enum Line {
    Event {
        t: f64,
        e: SimEvent,
    },
    Param {
        t: f64,
        i: u16,
        v: f32,
    },
    /// Beat and tempo are absent where the host does not give them.
    Transport {
        t: f64,
        samples: i64,
        beat: Option<f64>,
        tempo: Option<f64>,
        playing: bool,
    },
    End {
        records: u64,
        dropped: u64,
        limited: bool,
        /// Audio time the capture stopped at (its records may end earlier: a quiet tail).
        #[serde(default)]
        stop: Option<f64>,
        crc32: u32,
    },
}

/// Why a capture cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("cannot read it: {0}")]
    Io(#[from] std::io::Error),
    #[error("it is not a Dyeflow capture ({0})")]
    NotACapture(String),
    #[error(
        "it is a capture of format version {0}; this Dyeflow reads version {FORMAT_VERSION}: update Dyeflow"
    )]
    Newer(u64),
    #[error(
        "it is a Dyeflow capture of an unreadable format version ({0}); this Dyeflow reads \
         version {FORMAT_VERSION}"
    )]
    UnreadableVersion(String),
    #[error(
        "it is larger than a capture can be ({size} bytes, at most {MAX_CAPTURE_BYTES} and its header)"
    )]
    TooLarge { size: u64 },
    #[error("it is truncated (it has no end line): the recording did not finish")]
    Truncated,
    #[error("it is damaged at line {line}: {why}")]
    Damaged { line: u64, why: String },
}

/// A capture read into memory.
#[derive(Clone, Debug, PartialEq)]
pub struct Capture {
    pub header: Header,
    /// The records, in time order.
    pub records: Vec<Record>,
    /// Records the audio thread dropped on a full queue.
    pub dropped: u64,
    /// Whether the size limit cut the recording short.
    pub limited: bool,
    /// Audio time the capture stopped at, if it says.
    pub stop_s: Option<f64>,
}

impl Capture {
    /// Seconds from the start to the stop (or to the last record, if it does not say).
    pub fn duration_s(&self) -> f64 {
        let last = self
            .records
            .last()
            .map_or(self.header.start_s, |r| r.time_s());
        // The stop is where it ends: a bounce recognised by its pace stops where the audio went
        // back to real time, before the last records.
        let end = self.stop_s.unwrap_or(last);
        (end - self.header.start_s).max(0.0)
    }
}

/// Writes a capture under a temporary name, renamed to its own when finished.
pub struct CaptureFile {
    out: std::io::BufWriter<std::fs::File>,
    part: PathBuf,
    path: PathBuf,
    crc: crc32fast::Hasher,
    bytes: u64,
    records: u64,
    limited: bool,
    /// Records left out for a value JSON cannot hold.
    skipped: u64,
}

impl CaptureFile {
    /// Start `path` (written as `path.part` until [`CaptureFile::finish`]) with `header`.
    /// Fails with [`std::io::ErrorKind::AlreadyExists`] when either exists (another instance's
    /// capture is never overwritten).
    pub fn create(path: &Path, header: &Header) -> std::io::Result<Self> {
        let mut part = path.as_os_str().to_owned();
        part.push(".part");
        let part = PathBuf::from(part);
        if path.exists() {
            return Err(std::io::ErrorKind::AlreadyExists.into());
        }
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&part)?;
        let out = std::io::BufWriter::new(file);
        let mut file = Self {
            out,
            part,
            path: path.to_owned(),
            crc: crc32fast::Hasher::new(),
            bytes: 0,
            records: 0,
            limited: false,
            skipped: 0,
        };
        file.line(&serde_json::to_string(header).map_err(std::io::Error::other)?)?;
        Ok(file)
    }

    fn line(&mut self, text: &str) -> std::io::Result<()> {
        let bytes = text.as_bytes();
        self.out.write_all(bytes)?;
        self.out.write_all(b"\n")?;
        self.crc.update(bytes);
        self.crc.update(b"\n");
        self.bytes += bytes.len() as u64 + 1;
        Ok(())
    }

    /// Append `record` (the start and stop are not lines). Past [`MAX_CAPTURE_BYTES`] the
    /// capture stops growing and its end line says so.
    pub fn write(&mut self, record: &Record) -> std::io::Result<()> {
        let line = match *record {
            Record::Start { .. }
            | Record::Watch { .. }
            | Record::Bounce { .. }
            | Record::Stop { .. } => return Ok(()),
            Record::Event(e) => Line::Event {
                t: e.time_s,
                e: e.event,
            },
            Record::Param {
                time_s,
                index,
                value,
            } => Line::Param {
                t: time_s,
                i: index,
                v: value,
            },
            Record::Transport {
                time_s,
                samples,
                beat,
                tempo_bpm,
                playing,
            } => Line::Transport {
                t: time_s,
                samples,
                beat: beat.is_finite().then_some(beat),
                tempo: tempo_bpm.is_finite().then_some(tempo_bpm),
                playing,
            },
        };
        if self.limited {
            return Ok(());
        }
        let text = serde_json::to_string(&line).map_err(std::io::Error::other)?;
        // JSON has no NaN or infinity (they would be written as null, which no float reads):
        // such an event is left out and counted (the fluid ignores non-finite values anyway).
        if text.contains("null") && !matches!(line, Line::Transport { .. }) {
            self.skipped += 1;
            return Ok(());
        }
        if self.bytes + text.len() as u64 + 1 > MAX_CAPTURE_BYTES {
            self.limited = true;
            return Ok(());
        }
        self.records += 1;
        self.line(&text)
    }

    /// Give the capture up: its temporary file is removed.
    pub fn discard(self) -> std::io::Result<()> {
        let Self { out, part, .. } = self;
        drop(out);
        std::fs::remove_file(part)
    }

    /// Whether the size limit has cut the recording short.
    pub fn limited(&self) -> bool {
        self.limited
    }

    /// Write the end line (with `dropped` records lost on a full queue, and those left out,
    /// and the audio time `stop_s` it stopped at), and move the file to its own name; that
    /// path.
    pub fn finish(mut self, dropped: u64, stop_s: f64) -> std::io::Result<PathBuf> {
        let end = Line::End {
            records: self.records,
            dropped: dropped + self.skipped,
            limited: self.limited,
            stop: stop_s.is_finite().then_some(stop_s),
            crc32: self.crc.clone().finalize(),
        };
        let text = serde_json::to_string(&end).map_err(std::io::Error::other)?;
        self.out.write_all(text.as_bytes())?;
        self.out.write_all(b"\n")?;
        self.out.flush()?;
        self.out.get_ref().sync_all()?;
        std::fs::rename(&self.part, &self.path)?;
        Ok(self.path)
    }
}

/// The latest audio time a capture's header or record may name, seconds (31 years of the
/// bridge's clock): beyond it a time has lost the precision of a sample (at 1e300 every record
/// fell on the same one), so such a file is damaged, not a capture to render.
pub const MAX_AUDIO_TIME_S: f64 = 1e9;

/// How far out of time order a record may come in the file, in records. The writer puts the
/// side records (the chroma thread's, the editor's and OSC's) among the audio thread's once
/// those have passed their time, so a side record trails by at most what one look at the
/// queues writes: the audio thread's queue ([`super::CAPTURE_QUEUE_RECORDS`]) and the side
/// queues; twice the first leaves room. The replay keeps that many records (about 90 bytes
/// each: 6 MiB) to put them in order.
pub const REORDER_WINDOW_RECORDS: usize = 2 * super::CAPTURE_QUEUE_RECORDS;

/// Lines read between looks at the stop flag while a capture is checked.
const STOP_CHECK_LINES: u64 = 1024;

/// A capture opened and checked by [`open`]: its header and end line, its length, and where
/// its records are, which [`CaptureReader::records`] streams (in time order) without holding
/// them.
pub struct CaptureReader {
    pub header: Header,
    /// Records the audio thread dropped on a full queue while recording (and those left out
    /// for values JSON cannot hold).
    pub dropped: u64,
    /// Whether the size limit cut the recording short.
    pub limited: bool,
    /// Audio time the capture stopped at, if it says.
    pub stop_s: Option<f64>,
    /// How many records it holds.
    pub count: u64,
    /// The latest record's time, if there is a record.
    pub last_s: Option<f64>,
    /// Where the host's transport started to roll (audio time, and its position in samples
    /// then), when the capture began with it stopped: a host's pre-roll before a bounce
    /// (Ardour runs its export's pre-roll with the transport stopped).
    pub rolled: Option<(f64, i64)>,
    file: std::fs::File,
    /// Where the first record's line starts, bytes.
    records_at: u64,
    /// The checksum of the header line.
    header_crc: crc32fast::Hasher,
    /// Whether the records are in time order in the file (as the writer writes nearly all):
    /// they are then given out as they are; else through the reorder window.
    in_order: bool,
}

impl CaptureReader {
    /// Seconds from the start to the stop (or to the last record, if it does not say).
    pub fn duration_s(&self) -> f64 {
        let last = self.last_s.unwrap_or(self.header.start_s);
        // The stop is where it ends: a bounce recognised by its pace stops where the audio went
        // back to real time, before the last records.
        let end = self.stop_s.unwrap_or(last);
        (end - self.header.start_s).max(0.0)
    }

    /// The records from the first, in time order (records of one time in the file's order,
    /// as a stable sort puts them), read and checked as they are given out: the checks of
    /// [`open`] again, so a file changed since is an error, not a different render. One
    /// stream at a time (they share the file's position).
    pub fn records(&self) -> Result<Records, CaptureError> {
        use std::io::{Seek, SeekFrom};
        let mut file = self.file.try_clone()?;
        file.seek(SeekFrom::Start(self.records_at))?;
        Ok(Records {
            lines: Lines {
                reader: std::io::BufReader::new(file),
                buf: Vec::new(),
                number: 1,
                crc: self.header_crc.clone(),
                params: self.header.params.len(),
                read: 0,
                end: None,
            },
            window: (!self.in_order).then(std::collections::BinaryHeap::new),
            last_out: None,
            done: false,
        })
    }
}

/// A capture's lines after the header: each record checked, then the end line.
struct Lines {
    reader: std::io::BufReader<std::fs::File>,
    buf: Vec<u8>,
    /// The number of the last line read (the header is line 1).
    number: u64,
    crc: crc32fast::Hasher,
    /// How many parameters the header names.
    params: usize,
    /// Records read.
    read: u64,
    /// The end line, once read and checked.
    end: Option<End>,
}

/// What a capture's end line says.
#[derive(Clone, Copy, Debug)]
struct End {
    dropped: u64,
    limited: bool,
    stop_s: Option<f64>,
}

impl Lines {
    /// The next record, or `None` after the end line (checked: the count, the checksum,
    /// nothing after it).
    fn next_record(&mut self) -> Result<Option<Record>, CaptureError> {
        if self.end.is_some() {
            return Ok(None);
        }
        if !next_line(&mut self.reader, &mut self.buf, &mut self.number)? {
            return Err(CaptureError::Truncated);
        }
        let line = self.number;
        if self.buf.last() != Some(&b'\n') {
            return Err(CaptureError::Truncated);
        }
        let damaged = |why: String| CaptureError::Damaged { line, why };
        let parsed: Line = serde_json::from_slice(&self.buf).map_err(|e| damaged(e.to_string()))?;
        let record = match parsed {
            Line::End {
                records: count,
                dropped,
                limited,
                stop,
                crc32,
            } => {
                if count != self.read {
                    return Err(damaged(format!(
                        "its end line counts {count} records, but it holds {}",
                        self.read
                    )));
                }
                if crc32 != self.crc.clone().finalize() {
                    return Err(damaged("its checksum does not match".into()));
                }
                if next_line(&mut self.reader, &mut self.buf, &mut self.number)?
                    && self.buf.iter().any(|b| !b.is_ascii_whitespace())
                {
                    return Err(CaptureError::Damaged {
                        line: self.number,
                        why: "something follows its end line".into(),
                    });
                }
                self.end = Some(End {
                    dropped,
                    limited,
                    stop_s: stop.filter(|s| s.is_finite()),
                });
                return Ok(None);
            }
            Line::Event { t, e } => Record::Event(TimedEvent {
                time_s: t,
                event: e,
            }),
            Line::Param { t, i, v } => {
                if usize::from(i) >= self.params || !v.is_finite() {
                    return Err(damaged(format!(
                        "parameter {i} = {v} is not a parameter's value"
                    )));
                }
                Record::Param {
                    time_s: t,
                    index: i,
                    value: v,
                }
            }
            Line::Transport {
                t,
                samples,
                beat,
                tempo,
                playing,
            } => Record::Transport {
                time_s: t,
                samples,
                beat: beat.unwrap_or(f64::NAN),
                tempo_bpm: tempo.unwrap_or(f64::NAN),
                playing,
            },
        };
        let t = record.time_s();
        if !t.is_finite() {
            return Err(damaged("a record's time is not a number".into()));
        }
        if t.abs() > MAX_AUDIO_TIME_S {
            return Err(damaged(format!(
                "a record's time, {t:e} s, is past any audio time (at most {MAX_AUDIO_TIME_S:e} s)"
            )));
        }
        self.crc.update(&self.buf);
        self.read += 1;
        Ok(Some(record))
    }
}

/// A record's time as an ordered key (the stable sort's: by `total_cmp`).
#[derive(Clone, Copy, Debug)]
struct Key(f64);

impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        self.0.total_cmp(&other.0).is_eq()
    }
}

impl Eq for Key {}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// A record waiting in the reorder window: by time, then by its place in the file.
struct Pending {
    key: (Key, u64),
    record: Record,
}

impl PartialEq for Pending {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl Eq for Pending {}

impl PartialOrd for Pending {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Pending {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key.cmp(&other.key)
    }
}

/// The reorder window: the records read and not given out yet, the earliest first.
type Window<T> = std::collections::BinaryHeap<std::cmp::Reverse<T>>;

/// A capture's records in time order (see [`CaptureReader::records`]).
pub struct Records {
    lines: Lines,
    /// `None` when the file is in order.
    window: Option<Window<Pending>>,
    /// The time of the last record given out from the window.
    last_out: Option<Key>,
    done: bool,
}

impl Records {
    fn next_in_order(&mut self) -> Result<Option<Record>, CaptureError> {
        let Some(window) = &mut self.window else {
            return self.lines.next_record();
        };
        while window.len() <= REORDER_WINDOW_RECORDS {
            let seq = self.lines.read;
            let Some(record) = self.lines.next_record()? else {
                break;
            };
            let key = Key(record.time_s());
            if self.last_out.is_some_and(|last| key < last) {
                return Err(out_of_order(self.lines.number));
            }
            window.push(std::cmp::Reverse(Pending {
                key: (key, seq),
                record,
            }));
        }
        Ok(window.pop().map(|std::cmp::Reverse(p)| {
            self.last_out = Some(p.key.0);
            p.record
        }))
    }
}

fn out_of_order(line: u64) -> CaptureError {
    CaptureError::Damaged {
        line,
        why: format!(
            "a record is further out of time order than the {REORDER_WINDOW_RECORDS} records the \
             writer may leave it"
        ),
    }
}

impl Iterator for Records {
    type Item = Result<Record, CaptureError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.next_in_order() {
            Ok(Some(record)) => Some(Ok(record)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

/// Read line `number + 1` into `buf` (cleared first); `false` at the end of the file.
fn next_line(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    number: &mut u64,
) -> Result<bool, CaptureError> {
    buf.clear();
    let n = reader
        .take(MAX_LINE_BYTES as u64 + 1)
        .read_until(b'\n', buf)?;
    *number += 1;
    if n > MAX_LINE_BYTES {
        return Err(CaptureError::Damaged {
            line: *number,
            why: "a line is far too long".into(),
        });
    }
    Ok(n > 0)
}

/// Open the capture at `path` and check it all (the module's documentation says what), reading
/// it once through without keeping its records: memory stays at a line, and the reorder
/// window's keys (16 bytes a record, 1 MiB), whatever the file's size. `None` when `stop` was
/// set meanwhile.
pub fn open(path: &Path, stop: &AtomicBool) -> Result<Option<CaptureReader>, CaptureError> {
    let file = crate::preset::open_regular(path)?;
    let size = file.metadata()?.len();
    if size > MAX_CAPTURE_BYTES + MAX_LINE_BYTES as u64 {
        return Err(CaptureError::TooLarge { size });
    }
    let mut reader = std::io::BufReader::new(file.try_clone()?);
    let mut buf = Vec::new();
    let mut number = 0u64;
    if !next_line(&mut reader, &mut buf, &mut number)? {
        return Err(CaptureError::NotACapture("it is empty".into()));
    }
    let header = read_header(&buf)?;
    let mut header_crc = crc32fast::Hasher::new();
    header_crc.update(&buf);
    let records_at = buf.len() as u64;
    drop(reader);
    let mut capture = CaptureReader {
        header,
        dropped: 0,
        limited: false,
        stop_s: None,
        count: 0,
        last_s: None,
        rolled: None,
        file,
        records_at,
        header_crc,
        in_order: true,
    };
    // Through once: every check, the length, whether the records are in order and, if not,
    // whether the window puts them in order (with the keys alone).
    let mut lines = capture.records()?.lines;
    let mut window: Window<(Key, u64)> = Window::new();
    let mut last_out: Option<Key> = None;
    let mut beyond_window = false;
    let mut previous: Option<f64> = None;
    // Whether the first transport record played.
    let mut first_playing: Option<bool> = None;
    while let Some(record) = lines.next_record()? {
        if lines.read % STOP_CHECK_LINES == 0 && stop.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let t = record.time_s();
        if let Record::Transport {
            samples, playing, ..
        } = record
        {
            match first_playing {
                None => first_playing = Some(playing),
                Some(false) if playing && capture.rolled.is_none() => {
                    capture.rolled = Some((t, samples));
                }
                _ => {}
            }
        }
        // As the sort's check was: `<=`, under which 0.0 and -0.0 are in order.
        capture.in_order &= previous.is_none_or(|p| p <= t);
        previous = Some(t);
        capture.last_s = Some(
            capture
                .last_s
                .map_or(t, |l| if Key(t) >= Key(l) { t } else { l }),
        );
        beyond_window |= last_out.is_some_and(|last| Key(t) < last);
        window.push(std::cmp::Reverse((Key(t), lines.read)));
        if window.len() > REORDER_WINDOW_RECORDS {
            last_out = window.pop().map(|std::cmp::Reverse((key, _))| key);
        }
    }
    if !capture.in_order && beyond_window {
        return Err(out_of_order(lines.number));
    }
    let end = lines.end.expect("the end line ends the records");
    capture.count = lines.read;
    capture.dropped = end.dropped;
    capture.limited = end.limited;
    capture.stop_s = end.stop_s;
    Ok(Some(capture))
}

/// Read a capture's header line (its first).
fn read_header(line: &[u8]) -> Result<Header, CaptureError> {
    // The format and version first, as plain JSON: a header of another version may not
    // parse as this one's, and its version may not be a number this one holds.
    let value: serde_json::Value = serde_json::from_slice(line).map_err(|_| {
        CaptureError::NotACapture("its first line is not a capture's header".into())
    })?;
    match value.get("format").and_then(serde_json::Value::as_str) {
        Some(FORMAT_NAME) => {}
        Some(other) => {
            return Err(CaptureError::NotACapture(format!(
                "its header names the format {other:?}"
            )));
        }
        None => {
            return Err(CaptureError::NotACapture(
                "its first line is not a capture's header".into(),
            ));
        }
    }
    let version = value.get("version");
    match version.and_then(serde_json::Value::as_u64) {
        Some(v) if v > u64::from(FORMAT_VERSION) => return Err(CaptureError::Newer(v)),
        Some(v) if v >= 1 => {}
        _ => {
            let text = version.map_or_else(|| "none".to_owned(), |v| v.to_string());
            return Err(CaptureError::UnreadableVersion(
                text.chars().take(40).collect(),
            ));
        }
    }
    let header: Header = serde_json::from_value(value).map_err(|e| CaptureError::Damaged {
        line: 1,
        why: format!("its header does not read ({e})"),
    })?;
    let damaged = |why: String| CaptureError::Damaged { line: 1, why };
    if !(header.sample_rate.is_finite() && header.sample_rate > 0.0 && header.start_s.is_finite()) {
        return Err(damaged(
            "its sample rate or start time is not a number".into(),
        ));
    }
    if header.start_s.abs() > MAX_AUDIO_TIME_S {
        return Err(damaged(format!(
            "its start time, {:e} s, is past any audio time (at most {MAX_AUDIO_TIME_S:e} s)",
            header.start_s
        )));
    }
    if header.params.len() > usize::from(u16::MAX) {
        return Err(damaged("it names too many parameters".into()));
    }
    Ok(header)
}

/// Read and check the capture at `path` into memory, every record: for tests and small tools
/// (a render streams it through [`open`] instead).
pub fn load(path: &Path) -> Result<Capture, CaptureError> {
    let capture = open(path, &AtomicBool::new(false))?.expect("never stopped");
    let records = capture.records()?.collect::<Result<Vec<_>, _>>()?;
    Ok(Capture {
        header: capture.header,
        records,
        dropped: capture.dropped,
        limited: capture.limited,
        stop_s: capture.stop_s,
    })
}

#[cfg(test)]
mod tests;
