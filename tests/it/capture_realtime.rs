//! Capturing while the host plays in real time: the bridge's events, the chroma thread's
//! pitch classes and the editor's mouse (through the input tap) reach the capture file (its
//! own process: the chroma thread's tests count the threads by name).

use dyeflow::bridge::events::SimEvent;
use dyeflow::bridge::{Bridge, ChromaSink, queue};
use dyeflow::capture::Record;
use dyeflow::capture::writer::{CaptureStatus, CaptureThread};
use dyeflow::engine::ChromaThread;
use dyeflow::params::DyeflowParams;
use parking_lot::Mutex;
use std::sync::Arc;
use std::time::Duration;

/// Recording while playing in real time: the bridge's events and the chroma thread's
/// pitch classes of the blocks between the start and the stop reach the file, each once,
/// and nothing from before or after.
#[test]
fn a_realtime_capture_holds_the_bridge_and_the_chroma_thread() {
    let dir = std::env::temp_dir().join(format!("dyeflow-realtime-capture-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let params = Arc::new(DyeflowParams::default());
    let (input_tap, input_records) = dyeflow::capture::InputTap::new();
    let (recorder, tap, (records, chroma_records)) =
        dyeflow::capture::queues(params.clone(), &input_tap);
    let receivers = (records, chroma_records, input_records);
    let status = Arc::new(Mutex::new(CaptureStatus::default()));
    let ids = dyeflow::capture::recorder::Recorder::param_ids(&*params);
    let state = {
        let params = params.clone();
        Box::new(move || dyeflow::preset::to_json(&params)) as dyeflow::capture::writer::StateFn
    };
    let thread =
        CaptureThread::spawn(receivers, (ids, state), dir.clone(), status.clone()).unwrap();
    let (tx, mut rx) = queue::channel(1 << 16);
    let mut bridge = Bridge::heard_by(tx, 48_000.0, (5.0, 200.0), recorder);
    let (taps_tx, taps) = queue::tap_channel(1 << 15);
    let (chroma_tx, mut chroma_rx) = queue::channel(256);
    let chroma = ChromaThread::spawn(taps, chroma_tx, Some(tap)).unwrap();
    bridge.set_chroma_sink(ChromaSink::Queue(taps_tx));
    // An A (440 Hz) for 3 s in 10 ms blocks; recording from 1 s to 2 s.
    let block: Vec<f32> = (0..480)
        .map(|i| 0.5 * (i as f32 / 48_000.0 * 440.0 * std::f32::consts::TAU).sin())
        .collect();
    let mut sent = Vec::new();
    // The editor paints a splat every 50 ms (its thread: the tap stamps the block's time).
    let mut painted = Vec::new();
    for b in 0..300 {
        let now = bridge.time_s(0);
        input_tap.set_clock(now);
        if b % 5 == 2 {
            let splat = dyeflow::fluid::Splat {
                pos: [0.5, 0.001 * b as f32],
                ..dyeflow::fluid::Splat::default()
            };
            input_tap.record(&SimEvent::Splat(splat));
            painted.push((now, splat));
        }
        let r = bridge.listener();
        let want = (100..200)
            .contains(&b)
            .then_some(dyeflow::capture::Cause::Record);
        r.follow(want, now, 48_000.0);
        if r.is_on() {
            r.block(now, (0, f64::NAN, f64::NAN, true));
        }
        bridge.process(&[&block], None, || None::<nice_plug::midi::NoteEvent<()>>);
        rx.drain(|e| sent.push(e));
        // The chroma thread keeps up with real time, more or less.
        if b % 10 == 0 {
            std::thread::sleep(Duration::from_millis(15));
        }
    }
    let mut chroma_sent = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while std::time::Instant::now() < deadline && chroma_sent.len() < 40 {
        chroma_rx.drain(|e| chroma_sent.push(e));
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(chroma);
    let last = thread.finish();
    let path = last.last.clone().expect("a capture was written");
    let c = dyeflow::capture::file::load(&path).unwrap();
    assert_eq!(c.dropped, 0);
    let (t0, t1) = (1.0, 2.0);
    assert!((c.header.start_s - t0).abs() < 1e-9, "{}", c.header.start_s);
    let events: Vec<_> = c
        .records
        .iter()
        .filter_map(|r| match r {
            Record::Event(e) => Some(*e),
            _ => None,
        })
        .collect();
    let want: Vec<_> = sent
        .iter()
        .filter(|e| e.time_s >= t0 && e.time_s < t1)
        .copied()
        .collect();
    let bridge_events: Vec<_> = events
        .iter()
        .filter(|e| !matches!(e.event, SimEvent::Chroma { .. } | SimEvent::Splat(_)))
        .copied()
        .collect();
    // The editor's splats of the recorded second, each once, at their blocks' times.
    let splats: Vec<_> = events
        .iter()
        .filter_map(|e| match e.event {
            SimEvent::Splat(s) => Some((e.time_s, s)),
            _ => None,
        })
        .collect();
    let painted_in: Vec<_> = painted
        .iter()
        .filter(|(t, _)| *t >= t0 && *t < t1)
        .copied()
        .collect();
    assert_eq!(splats.len(), 20, "a splat every 50 ms for a second");
    assert_eq!(
        splats, painted_in,
        "the editor's splats, in order, at their times"
    );
    let first = (0..bridge_events.len().max(want.len()))
        .find(|&i| bridge_events.get(i) != want.get(i))
        .map(|i| (i, bridge_events.get(i), want.get(i)));
    assert_eq!(
        (bridge_events.len(), first),
        (want.len(), None),
        "the bridge's events of the recorded second (count, first difference)"
    );
    let chroma_got = events.len() - bridge_events.len() - splats.len();
    let chroma_in: Vec<_> = chroma_sent
        .iter()
        .filter(|e| e.time_s >= t0 && e.time_s < t1)
        .collect();
    assert!(
        chroma_got > 5,
        "the chroma thread's pitch classes: {chroma_got}"
    );
    assert!(
        chroma_got <= chroma_in.len() + 1,
        "each once: {chroma_got} of {}",
        chroma_in.len()
    );
    assert!(
        events
            .iter()
            .all(|e| e.time_s >= t0 - 1e-9 && e.time_s <= t1 + 0.1)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
