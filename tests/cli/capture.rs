//! Bounce capture end to end: the plugin, driven through its real CLAP entry point in offline
//! mode with audio, notes and viscosity automation, writes a capture; `dyeflow render
//! --capture` of it gives, frame for frame, the hashes of the engine (the same `Driver` and CPU
//! model) fed the same audio, notes and automation directly.

use crate::common;

use common::clap_host::{Event, Instance};
use dyeflow::bridge::chroma::{ChromaAnalyzer, TARGET_RATE_HZ};
use dyeflow::bridge::events::TimedEvent;
use dyeflow::bridge::{Bridge, ChromaSink, queue};
use dyeflow::cli::render::{RenderOptions, grid_for, render};
use dyeflow::engine::Driver;
use dyeflow::params::{BackendChoice, DyeflowParams};
use dyeflow::sim::create_model;
use dyeflow::sim::model::{Backend, ModelSpec};
use nice_plug::midi::{Channel, Key, NoteEvent, VoiceID};
use nice_plug::prelude::Params;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

const RATE: f64 = 48_000.0;
/// Samples a block.
const BLOCK: usize = 480;
/// 2.4 s.
const BLOCKS: usize = 240;
const WIDTH: usize = 96;
const HEIGHT: usize = 54;
const FPS: u32 = 30;
/// The viscosity's automation: this normalized value from this block on.
const VISCOSITY: (usize, f64) = (90, 0.9);

/// The input: a low hum with a click every 0.4 s.
fn audio() -> Vec<f32> {
    (0..BLOCK * BLOCKS)
        .map(|i| {
            let t = i as f32 / RATE as f32;
            let click = if i % 19_200 < 200 { 0.6 } else { 0.0 };
            0.2 * (t * 110.0 * std::f32::consts::TAU).sin() + click
        })
        .collect()
}

/// (block, offset, on, key): notes on channel 1, velocity 0.75.
const NOTES: [(usize, u32, bool, u8); 6] = [
    (10, 100, true, 60),
    (40, 0, false, 60),
    (50, 333, true, 67),
    (60, 20, true, 48),
    (120, 479, false, 67),
    (150, 5, false, 48),
];

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

fn tempdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dyeflow-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Run the plugin offline over the input; the capture it wrote (into the test process's own
/// capture folder).
fn bounce() -> PathBuf {
    let dir = &common::private_captures();
    let mut plugin = Instance::new();
    let viscosity = plugin.param_id("Viscosity");
    // Played in real time first (no capture), so the bridge's clock stands at 2.4 s when the
    // bounce starts, as in a host: a replay must not depend on it (comparing absolute times
    // put records on step boundaries into the wrong step from such a start).
    assert!(plugin.activate(RATE, 1, 2400));
    assert!(plugin.start_processing());
    let hum = vec![vec![0.1f32; 2400]; 2];
    for _ in 0..48 {
        plugin.process(&hum, &mut vec![vec![0.0; 2400]; 2], &Vec::new(), true);
    }
    plugin.deactivate();
    assert!(plugin.set_render_offline(true), "clap.render takes offline");
    assert!(plugin.activate(RATE, 1, BLOCK as u32));
    assert!(plugin.start_processing());
    let input = audio();
    for b in 0..BLOCKS {
        let block = input[b * BLOCK..(b + 1) * BLOCK].to_vec();
        let inputs = vec![block.clone(), block];
        let mut outputs = vec![vec![0.0; BLOCK]; 2];
        let mut events: Vec<Event> = NOTES
            .iter()
            .filter(|n| n.0 == b)
            .map(|&(_, at, on, key)| Event::note(at, on, 0, i16::from(key), 0.75, -1))
            .collect();
        if b == VISCOSITY.0 {
            events.insert(0, Event::param(0, viscosity, VISCOSITY.1));
        }
        plugin.process(&inputs, &mut outputs, &events, true);
    }
    plugin.deactivate();
    drop(plugin);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let done: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| Some(e.ok()?.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "dyeflow-capture"))
            .collect();
        if let [one] = done.as_slice() {
            return one.clone();
        }
        assert!(done.len() <= 1, "one capture per bounce: {done:?}");
        assert!(
            std::time::Instant::now() < deadline,
            "no capture in {}",
            dir.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The render's frames (PNG) as hashes of their pixels.
fn frame_hashes(dir: &Path) -> Vec<u64> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "png"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| {
            let decoder =
                png::Decoder::new(std::io::BufReader::new(std::fs::File::open(p).unwrap()));
            let mut reader = decoder.read_info().unwrap();
            let mut buf = vec![0; reader.output_buffer_size().unwrap()];
            let info = reader.next_frame(&mut buf).unwrap();
            assert_eq!(info.color_type, png::ColorType::Rgb);
            fnv(&buf[..info.buffer_size()])
        })
        .collect()
}

/// The engine fed the input directly: the plugin's bridge (offline: the chroma analysis
/// inline) over the same blocks and notes, the automation set from its block on, the
/// render's steps and frames; the frames' hashes.
fn live_hashes(frames: usize, automate: bool) -> Vec<u64> {
    let params = DyeflowParams::default();
    let (tx, mut rx) = queue::channel(1 << 16);
    let mut bridge = Bridge::new(
        tx,
        RATE as f32,
        params.envelope_attack.value(),
        params.envelope_release.value(),
    );
    bridge.set_chroma_sink(ChromaSink::Inline(Box::new(ChromaAnalyzer::new(
        TARGET_RATE_HZ,
    ))));
    let input = audio();
    let mut events: Vec<TimedEvent> = Vec::new();
    for b in 0..BLOCKS {
        let block = &input[b * BLOCK..(b + 1) * BLOCK];
        let mut notes = NOTES.iter().filter(|n| n.0 == b).map(|&(_, at, on, key)| {
            let (voice_id, channel, key) =
                (VoiceID::Wildcard, Channel::Number(0), Key::Number(key));
            if on {
                NoteEvent::<()>::NoteOn {
                    timing: at,
                    voice_id,
                    channel,
                    key,
                    velocity: 0.75,
                }
            } else {
                NoteEvent::NoteOff {
                    timing: at,
                    voice_id,
                    channel,
                    key,
                    velocity: 0.75,
                }
            }
        });
        bridge.process(&[block, block], None, || notes.next());
        rx.drain(|e| events.push(e));
    }
    let settings = params.settings().sanitized();
    let steps_per_frame =
        ((f64::from(settings.sim_rate_hz) / f64::from(FPS)).round() as u64).max(1);
    let step = 1.0 / (f64::from(FPS) * steps_per_frame as f64);
    let mut driver = Driver::new(&params);
    let spec = ModelSpec {
        kind: settings.fluid.into(),
        cells: grid_for(WIDTH as u32, HEIGHT as u32, settings.sim_resolution),
        detail: settings.dye_scale as usize,
        effort_sweeps: driver.discrete().pressure_iterations,
        backend: Backend::Cpu,
        gpu: Default::default(),
        cpu_threads: 1,
    };
    let (mut model, _) = create_model(&spec).unwrap();
    let viscosity = params
        .param_map()
        .into_iter()
        .find(|(id, _, _)| id == "visc")
        .map(|(_, p, _)| p)
        .expect("the viscosity parameter");
    let automation_s = (VISCOSITY.0 * BLOCK) as f64 / RATE;
    let mut rgba = vec![0u8; WIDTH * HEIGHT * 4];
    let (mut next, mut k) = (0, 0u64);
    let mut hashes = Vec::new();
    for frame in 0..frames {
        if frame > 0 {
            for _ in 0..steps_per_frame {
                let t1 = (k + 1) as f64 * step;
                if automate && automation_s < t1 {
                    // SAFETY: the pointer comes from `params`, alive for this function.
                    unsafe { viscosity._internal_set_normalized_value(VISCOSITY.1 as f32) };
                }
                while let Some(e) = events.get(next).filter(|e| e.time_s < t1) {
                    driver.event(model.as_mut(), e);
                    next += 1;
                }
                driver.step(model.as_mut(), &params, step as f32);
                k += 1;
            }
        }
        model.render(&driver.look(), WIDTH, HEIGHT, &mut rgba);
        // As the PNG frames hold it: RGB.
        let rgb: Vec<u8> = rgba
            .chunks_exact(4)
            .flat_map(|p| [p[0], p[1], p[2]])
            .collect();
        hashes.push(fnv(&rgb));
    }
    hashes
}

#[test]
fn a_bounce_capture_renders_the_fluid_the_engine_computed() {
    let dir = tempdir("capture");
    let path = bounce();
    // What it holds: the viscosity's automation at its block, and the notes.
    let capture = dyeflow::capture::file::load(&path).expect("a capture that loads");
    let bytes = std::fs::metadata(&path).unwrap().len();
    eprintln!(
        "capture: {} records, {bytes} bytes, {:.0} bytes per second of audio",
        capture.records.len(),
        bytes as f64 / (BLOCK * BLOCKS) as f64 * RATE
    );
    assert_eq!(capture.dropped, 0);
    assert!(!capture.limited);
    assert!(
        (capture.header.start_s - 2.4).abs() < 1e-9,
        "the capture starts where the bridge's clock stood: {}",
        capture.header.start_s
    );
    assert!((capture.duration_s() - (BLOCK * BLOCKS) as f64 / RATE).abs() < 1e-6);
    let visc = capture
        .header
        .params
        .iter()
        .position(|id| id == "visc")
        .expect("the viscosity's id") as u16;
    let changes: Vec<(f64, f32)> = capture
        .records
        .iter()
        .filter_map(|r| match *r {
            dyeflow::capture::Record::Param {
                time_s,
                index,
                value,
            } if index == visc => Some((time_s - capture.header.start_s, value)),
            _ => None,
        })
        .collect();
    assert_eq!(
        changes.len(),
        2,
        "the start value and the automation: {changes:?}"
    );
    assert!((changes[1].0 - (VISCOSITY.0 * BLOCK) as f64 / RATE).abs() < 1e-9);
    assert!(
        changes[1].1 > changes[0].1,
        "the viscosity rose: {changes:?}"
    );
    let notes = capture
        .records
        .iter()
        .filter(|r| {
            matches!(
                r,
                dyeflow::capture::Record::Event(TimedEvent {
                    event: dyeflow::bridge::events::SimEvent::NoteOn { .. },
                    ..
                })
            )
        })
        .count();
    assert_eq!(notes, 3);

    // Rendered from the capture, on the CPU.
    let out = dir.join("frames");
    let opts = RenderOptions {
        capture: Some(path.clone()),
        out: out.clone(),
        width: WIDTH as u32,
        height: HEIGHT as u32,
        fps: FPS,
        backend: BackendChoice::Cpu,
        progress: false,
        cpu_threads: 1,
        ..RenderOptions::default()
    };
    let summary = render(&opts, &AtomicBool::new(false)).expect("the capture renders");
    let rendered = frame_hashes(&out);
    assert_eq!(rendered.len() as u64, summary.frames);
    assert!(
        rendered.len() >= 70,
        "{} frames of a 2.4 s capture",
        rendered.len()
    );
    let live = live_hashes(rendered.len(), true);
    let first_difference = rendered.iter().zip(&live).position(|(a, b)| a != b);
    assert_eq!(
        first_difference, None,
        "the capture's render and the engine fed the same input differ"
    );
    let distinct: std::collections::HashSet<_> = rendered.iter().collect();
    assert!(distinct.len() > rendered.len() / 2, "the fluid moves");
    // The automation is in the picture: without it the frames differ after it.
    let plain = live_hashes(rendered.len(), false);
    let automation_frame = (VISCOSITY.0 * BLOCK) as f64 / RATE * f64::from(FPS);
    assert_eq!(
        rendered[..automation_frame as usize],
        plain[..automation_frame as usize]
    );
    assert_ne!(
        rendered.last(),
        plain.last(),
        "the viscosity's automation shows"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A capture whose brush strokes go to a point far off the canvas with a brush far thinner than
/// a cell (a 3 kB file that used to hang the render for many minutes, deaf to Ctrl-C), and a
/// flood of full-canvas strokes in one step: the render finishes, the visible part of the
/// stroke drawn.
#[test]
fn hostile_strokes_in_a_capture_render_in_bounded_time() {
    use dyeflow::bridge::events::{Brush, SimEvent};
    use dyeflow::capture::Record;
    use dyeflow::capture::file::{CaptureFile, FORMAT_NAME, FORMAT_VERSION, Header};
    let dir = tempdir("capture-strokes");
    let params = DyeflowParams::default();
    let header = Header {
        format: FORMAT_NAME.into(),
        version: FORMAT_VERSION,
        plugin_version: "test".into(),
        sample_rate: RATE as f32,
        start_s: 0.0,
        params: dyeflow::capture::recorder::Recorder::param_ids(&params),
        state: serde_json::Value::Null,
        cause: Some(dyeflow::capture::Cause::Record),
    };
    let path = dir.join("strokes.dyeflow-capture");
    let mut file = CaptureFile::create(&path, &header).unwrap();
    let stroke = |t: f64, from: [f32; 2], to: [f32; 2], radius: f32| {
        Record::Event(TimedEvent {
            time_s: t,
            event: SimEvent::Brush(Brush {
                from,
                to,
                radius,
                solid: true,
            }),
        })
    };
    file.write(&stroke(0.05, [0.5, 0.5], [3e38, -3e38], 1e-9))
        .unwrap();
    file.write(&stroke(0.1, [0.9, 0.3], [1e30, 0.3], 0.03))
        .unwrap();
    for k in 0..5000 {
        let y = (k % 100) as f32 / 100.0;
        file.write(&stroke(0.2, [0.0, y], [1.8, y], 2.0)).unwrap();
    }
    file.finish(0, 1.0).unwrap();
    let out = dir.join("frames");
    let opts = RenderOptions {
        capture: Some(path),
        out: out.clone(),
        width: WIDTH as u32,
        height: HEIGHT as u32,
        fps: 10,
        backend: BackendChoice::Cpu,
        progress: false,
        cpu_threads: 1,
        ..RenderOptions::default()
    };
    let summary = render(&opts, &AtomicBool::new(false)).expect("the capture renders");
    assert_eq!(summary.frames, 10);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A bounce whose host pre-rolled with its transport stopped (Ardour's export: 2 s stopped,
/// then rolling from minus its latency, here 1776 samples): its render starts where the
/// transport reached position 0, where the bounced audio starts, and lasts as long as the
/// bounce; a capture made with Record keeps every second.
#[test]
fn a_bounce_renders_from_where_its_host_rolled() {
    use dyeflow::capture::file::{CaptureFile, FORMAT_NAME, FORMAT_VERSION, Header};
    use dyeflow::capture::{Cause, Record};
    let dir = tempdir("capture-preroll");
    let params = DyeflowParams::default();
    let render_of = |cause: Cause| {
        let header = Header {
            format: FORMAT_NAME.into(),
            version: FORMAT_VERSION,
            plugin_version: "test".into(),
            sample_rate: RATE as f32,
            start_s: 10.0,
            params: dyeflow::capture::recorder::Recorder::param_ids(&params),
            state: serde_json::Value::Null,
            cause: Some(cause),
        };
        let path = dir.join(format!("{cause:?}.dyeflow-capture"));
        let mut file = CaptureFile::create(&path, &header).unwrap();
        // Blocks of 480 samples: 2 s stopped at position 272, then 4 s rolling from -1776.
        for b in 0..600 {
            let (playing, samples) = if b < 200 {
                (false, 272)
            } else {
                (true, -1776 + 480 * (b - 200))
            };
            let record = Record::Transport {
                time_s: 10.0 + b as f64 * 0.01,
                samples,
                beat: f64::NAN,
                tempo_bpm: 120.0,
                playing,
            };
            file.write(&record).unwrap();
        }
        file.finish(0, 16.0).unwrap();
        let out = dir.join(format!("{cause:?}"));
        let opts = RenderOptions {
            capture: Some(path),
            out,
            width: WIDTH as u32,
            height: HEIGHT as u32,
            fps: 50,
            backend: BackendChoice::Cpu,
            progress: false,
            cpu_threads: 1,
            ..RenderOptions::default()
        };
        render(&opts, &AtomicBool::new(false)).expect("the capture renders")
    };
    let bounce = render_of(Cause::Offline);
    // 6 s captured, less 2 s of pre-roll and the 1776 samples (37 ms) before position 0.
    assert_eq!(bounce.frames, 198, "{:?}", bounce.notes);
    assert!(
        bounce.notes.iter().any(|n| n.contains("pre-rolled 2.04 s")),
        "{:?}",
        bounce.notes
    );
    assert_eq!(render_of(Cause::Pace).frames, 198);
    assert_eq!(render_of(Cause::Record).frames, 300);
    let _ = std::fs::remove_dir_all(&dir);
}
