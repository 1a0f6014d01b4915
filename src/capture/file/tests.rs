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
        cause: Some(super::super::Cause::Offline),
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

/// A capture at `dir/name` of `records` as written, in that order.
fn write_all(dir: &Path, name: &str, records: &[Record]) -> PathBuf {
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    let mut f = CaptureFile::create(&path, &header()).unwrap();
    for r in records {
        f.write(r).unwrap();
    }
    f.finish(0, f64::NAN).unwrap()
}

/// An onset at `time_s` whose strength tells records apart.
fn onset(time_s: f64, k: usize) -> Record {
    Record::Event(TimedEvent {
        time_s,
        event: SimEvent::Onset { strength: k as f32 },
    })
}

/// Records come out in the order a stable sort by time gives (the reader sorted them all
/// in memory before): side records trailing by up to the window, ties in the file's
/// order; a file in order comes out as it is.
#[test]
fn records_stream_in_the_order_a_stable_sort_gives() {
    let dir = tempdir();
    let w = REORDER_WINDOW_RECORDS;
    let mut written = Vec::new();
    for k in 0..w + 500 {
        written.push(onset(1.5 + (k / 3) as f64 * 0.001, k));
        // A late side record every 97, trailing by up to 400 records; one by the whole
        // window.
        if k % 97 == 0 && k >= 400 {
            written.push(onset(1.5 + ((k - 400) / 3) as f64 * 0.001, w + k));
        }
    }
    let late = written.len() - w;
    written.push(written[late]);
    let mut sorted = written.clone();
    sorted.sort_by(|a, b| a.time_s().total_cmp(&b.time_s()));
    let path = write_all(&dir, "unsorted.dyeflow-capture", &written);
    let c = load(&path).unwrap();
    assert_eq!(c.records.len(), sorted.len());
    assert!(c.records == sorted, "not the stable sort's order");
    let opened = open(&path, &AtomicBool::new(false)).unwrap().unwrap();
    assert_eq!(opened.count, written.len() as u64);
    assert!(!opened.in_order);
    assert_eq!(opened.last_s, sorted.last().map(Record::time_s));
    // In order (ties included): as written.
    let path = write_all(&dir, "sorted.dyeflow-capture", &sorted);
    let opened = open(&path, &AtomicBool::new(false)).unwrap().unwrap();
    assert!(opened.in_order);
    let streamed: Vec<Record> = opened.records().unwrap().map(Result::unwrap).collect();
    assert!(streamed == sorted);
}

/// A record further out of order than the window is refused (as damaged) before anything
/// is replayed, not reordered wrongly.
#[test]
fn a_record_beyond_the_window_is_refused() {
    let dir = tempdir();
    let mut written: Vec<Record> = (0..REORDER_WINDOW_RECORDS + 2)
        .map(|k| onset(2.0 + k as f64 * 0.001, k))
        .collect();
    written.push(onset(1.9, 0));
    let path = write_all(&dir, "late.dyeflow-capture", &written);
    let e = open(&path, &AtomicBool::new(false)).err().expect("refused");
    assert!(e.to_string().contains("further out of time order"), "{e}");
}

/// A version that is newer or no version number, a start time or a record's time past
/// any audio time: each refused with what it is.
#[test]
fn odd_versions_and_times_say_what_they_are() {
    let dir = tempdir();
    let text = std::fs::read_to_string(written(&dir)).unwrap();
    let bad = dir.join("odd");
    let check = |data: &str, want: &str| {
        std::fs::write(&bad, data).unwrap();
        let e = load(&bad).expect_err(want).to_string();
        assert!(e.contains(want), "{e:?} should say {want:?}");
        e
    };
    let e = check(
        &text.replacen("\"version\":1", "\"version\":1099511627776", 1),
        "a capture of format version 1099511627776",
    );
    assert!(!e.contains("not a Dyeflow capture"), "{e}");
    for version in ["\"x\"", "-1", "1.5", "0", "null"] {
        check(
            &text.replacen("\"version\":1", &format!("\"version\":{version}"), 1),
            "unreadable format version",
        );
    }
    check(
        &text.replacen("\"start_s\":1.5", "\"start_s\":1e300", 1),
        "its start time, 1e300 s, is past any audio time",
    );
    let far = write_all(&dir, "far.dyeflow-capture", &[onset(1e300, 1)]);
    let e = load(&far).unwrap_err().to_string();
    assert!(
        e.contains("a record's time, 1e300 s, is past any audio time"),
        "{e}"
    );
}

/// Checking a capture hears the stop flag.
#[test]
fn opening_stops_when_told() {
    let dir = tempdir();
    let many: Vec<Record> = (0..5000).map(|k| onset(2.0 + k as f64, k)).collect();
    let path = write_all(&dir, "many.dyeflow-capture", &many);
    assert!(open(&path, &AtomicBool::new(true)).unwrap().is_none());
    assert!(open(&path, &AtomicBool::new(false)).unwrap().is_some());
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
