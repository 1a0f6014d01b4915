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

use super::{MAX_CAPTURE_BYTES, Record};
use crate::bridge::events::{SimEvent, TimedEvent};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};

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
    Newer(u32),
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
        let end = self.stop_s.map_or(last, |s| s.max(last));
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
            Record::Start { .. } | Record::Stop { .. } => return Ok(()),
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

/// Read and check the capture at `path` (see the module's documentation).
pub fn load(path: &Path) -> Result<Capture, CaptureError> {
    let file = crate::preset::open_regular(path)?;
    let size = file.metadata()?.len();
    if size > MAX_CAPTURE_BYTES + MAX_LINE_BYTES as u64 {
        return Err(CaptureError::TooLarge { size });
    }
    let mut reader = std::io::BufReader::new(file);
    let mut buf = Vec::new();
    let mut crc = crc32fast::Hasher::new();
    let mut number = 0u64;
    let mut next = |buf: &mut Vec<u8>, number: &mut u64| next_line(&mut reader, buf, number);
    if !next(&mut buf, &mut number)? {
        return Err(CaptureError::NotACapture("it is empty".into()));
    }
    let header: Header = match serde_json::from_slice(&buf) {
        Ok(h) => h,
        Err(_) => {
            // A header of another version may not parse: say which when it names one.
            #[derive(Deserialize)]
            struct Named {
                format: String,
                version: u32,
            }
            return Err(match serde_json::from_slice::<Named>(&buf) {
                Ok(n) if n.format == FORMAT_NAME && n.version > FORMAT_VERSION => {
                    CaptureError::Newer(n.version)
                }
                _ => CaptureError::NotACapture("its first line is not a capture's header".into()),
            });
        }
    };
    if header.format != FORMAT_NAME {
        return Err(CaptureError::NotACapture(format!(
            "its header names the format {:?}",
            header.format
        )));
    }
    if header.version > FORMAT_VERSION {
        return Err(CaptureError::Newer(header.version));
    }
    let damaged = |line: u64, why: String| CaptureError::Damaged { line, why };
    if !(header.sample_rate.is_finite() && header.sample_rate > 0.0 && header.start_s.is_finite()) {
        return Err(damaged(
            1,
            "its sample rate or start time is not a number".into(),
        ));
    }
    if header.params.len() > usize::from(u16::MAX) {
        return Err(damaged(1, "it names too many parameters".into()));
    }
    crc.update(&buf);
    let mut records = Vec::new();
    loop {
        if !next(&mut buf, &mut number)? {
            return Err(CaptureError::Truncated);
        }
        let line = number;
        if buf.last() != Some(&b'\n') {
            return Err(CaptureError::Truncated);
        }
        let parsed: Line =
            serde_json::from_slice(&buf).map_err(|e| damaged(line, e.to_string()))?;
        match parsed {
            Line::End {
                records: count,
                dropped,
                limited,
                stop,
                crc32,
            } => {
                if count != records.len() as u64 {
                    return Err(damaged(
                        line,
                        format!(
                            "its end line counts {count} records, but it holds {}",
                            records.len()
                        ),
                    ));
                }
                if crc32 != crc.clone().finalize() {
                    return Err(damaged(line, "its checksum does not match".into()));
                }
                if next(&mut buf, &mut number)? && buf.iter().any(|b| !b.is_ascii_whitespace()) {
                    return Err(damaged(number, "something follows its end line".into()));
                }
                // Stable: records of one time keep their order. (Only the chroma thread's come
                // out of order, a little.)
                if !records.is_sorted_by(|a: &Record, b: &Record| a.time_s() <= b.time_s()) {
                    records.sort_by(|a: &Record, b: &Record| a.time_s().total_cmp(&b.time_s()));
                }
                return Ok(Capture {
                    header,
                    records,
                    dropped,
                    limited,
                    stop_s: stop.filter(|s| s.is_finite()),
                });
            }
            other => {
                crc.update(&buf);
                let record = match other {
                    Line::Event { t, e } => Record::Event(TimedEvent {
                        time_s: t,
                        event: e,
                    }),
                    Line::Param { t, i, v } => {
                        if usize::from(i) >= header.params.len() || !v.is_finite() {
                            return Err(damaged(
                                line,
                                format!("parameter {i} = {v} is not a parameter's value"),
                            ));
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
                    Line::End { .. } => unreachable!("matched above"),
                };
                if !record.time_s().is_finite() {
                    return Err(damaged(line, "a record's time is not a number".into()));
                }
                records.push(record);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bridge::events::NoteId;

    fn header() -> Header {
        Header {
            format: FORMAT_NAME.into(),
            version: FORMAT_VERSION,
            plugin_version: "test".into(),
            sample_rate: 48_000.0,
            start_s: 1.5,
            params: vec!["visc".into(), "speed".into()],
            state: serde_json::json!({"params": {}}),
        }
    }

    fn records() -> Vec<Record> {
        let note = NoteId {
            key: 60,
            channel: 0,
            voice: -1,
        };
        vec![
            Record::Param {
                time_s: 1.5,
                index: 0,
                value: 0.25,
            },
            Record::Transport {
                time_s: 1.5,
                samples: 72_000,
                beat: f64::NAN,
                tempo_bpm: 120.0,
                playing: true,
            },
            Record::Event(TimedEvent {
                time_s: 1.5 + 1.0 / 3.0,
                event: SimEvent::NoteOn {
                    note,
                    velocity: 0.1 + 0.2,
                },
            }),
            // A time serde_json's default parser reads one unit in the last place off.
            Record::Event(TimedEvent {
                time_s: 1.009_979_166_666_666_7,
                event: SimEvent::Onset { strength: 0.3 },
            }),
            Record::Event(TimedEvent {
                time_s: 2.0,
                event: SimEvent::Chroma { weights: [0.1; 12] },
            }),
            Record::Param {
                time_s: 2.5,
                index: 1,
                value: 1.0,
            },
        ]
    }

    fn written(dir: &Path) -> PathBuf {
        let path = dir.join("a.dyeflow-capture");
        let mut f = CaptureFile::create(&path, &header()).unwrap();
        for r in records() {
            f.write(&r).unwrap();
        }
        // An event JSON cannot hold is left out and counted with the dropped ones.
        f.write(&Record::Event(TimedEvent {
            time_s: 2.2,
            event: SimEvent::Onset { strength: f32::NAN },
        }))
        .unwrap();
        assert_eq!(f.finish(2, 3.25).unwrap(), path);
        assert_eq!(
            CaptureFile::create(&path, &header())
                .err()
                .map(|e| e.kind()),
            Some(std::io::ErrorKind::AlreadyExists),
            "a capture is never overwritten"
        );
        path
    }

    /// What is written reads back exactly (floats to the bit: JSON keeps the shortest
    /// representation that parses back to the same value), the start and stop aside.
    #[test]
    fn a_capture_reads_back_exactly() {
        let dir = tempdir();
        let path = written(&dir);
        assert!(!dir.join("a.dyeflow-capture.part").exists());
        let c = load(&path).unwrap();
        assert_eq!(c.header, header());
        // In time order, as the reader gives them.
        let mut want = records();
        want.sort_by(|a, b| a.time_s().total_cmp(&b.time_s()));
        assert_eq!(c.records.len(), want.len());
        for (got, want) in c.records.iter().zip(want) {
            match (got, want) {
                // NaN is not equal to itself: compared by its bits.
                (Record::Transport { beat: b1, .. }, Record::Transport { beat: b2, .. }) => {
                    assert_eq!(b1.to_bits(), b2.to_bits())
                }
                _ => assert_eq!(*got, want),
            }
        }
        assert_eq!((c.dropped, c.limited), (3, false));
        // To the stop, 1.75 s after the start, past the last record.
        assert_eq!(c.stop_s, Some(3.25));
        assert!((c.duration_s() - 1.75).abs() < 1e-12);
    }

    /// Truncated anywhere, a byte changed, a line added or removed, another format or a newer
    /// version: each is refused with its own reason.
    #[test]
    fn damaged_captures_are_refused() {
        let dir = tempdir();
        let bytes = std::fs::read(written(&dir)).unwrap();
        let bad = dir.join("bad");
        let check = |data: &[u8], want: &str| {
            std::fs::write(&bad, data).unwrap();
            let e = load(&bad).expect_err(want).to_string();
            assert!(e.contains(want), "{e:?} should say {want:?}");
        };
        for cut in [bytes.len() - 1, bytes.len() - 20, bytes.len() / 2, 10] {
            let e = {
                std::fs::write(&bad, &bytes[..cut]).unwrap();
                load(&bad).unwrap_err().to_string()
            };
            assert!(
                e.contains("truncated") || e.contains("damaged") || e.contains("not a Dyeflow"),
                "cut at {cut}: {e}"
            );
        }
        check(&bytes[..bytes.len() - 1], "truncated");
        // A digit changed in a record: still valid JSON, but the checksum fails.
        let text = String::from_utf8(bytes.clone()).unwrap();
        let changed = text.replacen("\"v\":0.25", "\"v\":0.35", 1);
        assert_ne!(changed, text);
        check(changed.as_bytes(), "checksum");
        // A record removed: the count fails.
        let lines: Vec<&str> = text.lines().collect();
        let mut fewer = lines.clone();
        fewer.remove(2);
        check((fewer.join("\n") + "\n").as_bytes(), "counts 6 records");
        let mut more = lines.clone();
        more.push("{}");
        check((more.join("\n") + "\n").as_bytes(), "follows its end line");
        check(b"{\"hello\": 1}\n", "not a Dyeflow capture");
        check(b"", "empty");
        let newer = text.replacen("\"version\":1", "\"version\":9", 1);
        check(newer.as_bytes(), "version 9");
        let bad_param = text.replacen("\"i\":1", "\"i\":7", 1);
        check(bad_param.as_bytes(), "not a parameter's value");
    }

    fn tempdir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "dyeflow-capture-test-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }
}
