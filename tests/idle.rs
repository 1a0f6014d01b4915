//! What an instance costs when nothing happens: hosted through its real CLAP entry point, an
//! instance that no one feeds (no `process()` for a second, or deactivated) and no one watches
//! takes at most 5 % of a core; one the host feeds with silence, with the fluid at rest, about
//! as little; and the fluid still wakes at once for a note. The same for the engine with a
//! watcher (the editor open): at rest it takes no steps and renders no frames.
//!
//! CPU time is the whole process's (`getrusage`), so this file holds a single test: no other
//! test may run beside it.

mod common;

use common::clap_host::{Event, Instance};
use dyeflow::bridge::events::{SimEvent, TimedEvent};
use dyeflow::bridge::queue;
use dyeflow::engine::{Engine, EngineOptions};
use dyeflow::fluid::{Splat, SplatShape};
use dyeflow::frame::frame_channel;
use dyeflow::params::{Aspect, BackendChoice, DyeflowParams, Settings};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// User plus system CPU time of the whole process so far, in seconds.
fn process_cpu_s() -> f64 {
    // SAFETY: getrusage writes into the struct we hand it and nothing else.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        assert_eq!(libc::getrusage(libc::RUSAGE_SELF, &mut usage), 0);
        usage
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// The share of one core the process used while `during` ran.
fn core_share(during: impl FnOnce()) -> f64 {
    let (cpu, wall) = (process_cpu_s(), Instant::now());
    during();
    (process_cpu_s() - cpu) / wall.elapsed().as_secs_f64()
}

/// Feed `seconds` of 10 ms blocks of silence (with `events` in the first) in real time, as a
/// host does while it plays.
fn play(instance: &mut Instance, seconds: f64, events: Vec<Event>) {
    let block = vec![vec![0.0f32; 480]; 2];
    let mut out = block.clone();
    let start = Instant::now();
    let mut events = Some(events);
    for n in 0..(seconds * 100.0).round() as u32 {
        instance.process(&block, &mut out, &events.take().unwrap_or_default(), true);
        let next = start + Duration::from_millis(10 * u64::from(n + 1));
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
    }
}

fn engine_params() -> Arc<DyeflowParams> {
    let p = DyeflowParams::default();
    // Dye fades in about 2 s instead of 15 s, so the test need not wait long for it.
    dyeflow::preset::apply(br#"{"params": {"dye_diss": 4.0}}"#, &p).expect("preset");
    p.set_settings(Settings {
        sim_resolution: 128,
        dye_scale: 1,
        aspect: Aspect::Square,
        backend: BackendChoice::Cpu,
        sim_rate_hz: 60,
        ..Settings::default()
    });
    Arc::new(p)
}

fn splat(x: f32, y: f32) -> TimedEvent {
    TimedEvent {
        time_s: 0.0,
        event: SimEvent::Splat(Splat {
            pos: [x, y],
            radius: 0.08,
            color: [4.0, 0.0, 0.0],
            amount: 1.0,
            force: [0.0, 0.5],
            shape: SplatShape::Gaussian,
            heat: 0.0,
            particles: 0.0,
            depth: 0.0,
            drum: Default::default(),
        }),
    }
}

#[test]
fn an_instance_at_rest_costs_next_to_nothing_and_wakes_at_once() {
    let mut figures = Vec::new();

    // --- Hosted through CLAP: one block, then the host stops calling process().
    let mut instance = Instance::new();
    assert!(instance.activate(48_000.0, 32, 512));
    assert!(instance.start_processing());
    play(&mut instance, 0.01, Vec::new());
    // Past the feeding timeout, with the solver made.
    std::thread::sleep(Duration::from_millis(1500));
    let unfed = core_share(|| std::thread::sleep(Duration::from_secs(2)));
    figures.push(format!(
        "not fed, no editor: {:.2} % of a core",
        unfed * 100.0
    ));

    // --- Playing silence in real time, the fluid at rest.
    play(&mut instance, 1.0, Vec::new());
    let at_rest = core_share(|| play(&mut instance, 2.0, Vec::new()));
    figures.push(format!(
        "fed silence at rest, no editor: {:.2} % of a core (with the host's own process calls)",
        at_rest * 100.0
    ));

    // --- Notes: the fluid wakes and runs (this costs: it shows the engine is not just dead).
    let keys = [60i16, 64, 67];
    let notes: Vec<Event> = keys
        .iter()
        .map(|&k| Event::note(0, true, 0, k, 0.9, -1))
        .collect();
    let playing = core_share(|| play(&mut instance, 1.5, notes));
    figures.push(format!(
        "three held notes, no editor: {:.2} % of a core",
        playing * 100.0
    ));
    let offs: Vec<Event> = keys
        .iter()
        .map(|&k| Event::note(0, false, 0, k, 0.0, -1))
        .collect();
    play(&mut instance, 0.1, offs);

    // --- Deactivated (with a moving fluid): asleep at once.
    instance.deactivate();
    std::thread::sleep(Duration::from_millis(300));
    let inactive = core_share(|| std::thread::sleep(Duration::from_secs(2)));
    figures.push(format!(
        "deactivated, no editor: {:.2} % of a core",
        inactive * 100.0
    ));
    drop(instance);

    // --- The engine with a watcher (the editor open): at rest, no steps and no frames.
    let (mut tx, rx) = queue::channel(64);
    let (input, mut output) = frame_channel();
    let engine = Engine::start(engine_params(), vec![rx], input, EngineOptions::default())
        .expect("spawn the simulation thread");
    output.request(64, 64);
    let start = Instant::now();
    while !(engine.resting() && engine.frames_published() > 0) {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "an empty, silent fluid never came to rest"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let (steps, frames) = (engine.steps(), engine.frames_published());
    let watched = core_share(|| std::thread::sleep(Duration::from_secs(2)));
    assert_eq!(engine.steps(), steps, "steps while at rest");
    assert_eq!(engine.frames_published(), frames, "frames while at rest");
    figures.push(format!(
        "editor open, fluid at rest: {:.2} % of a core",
        watched * 100.0
    ));

    // A splat wakes it at once: its dye shows in a new frame.
    let sent = Instant::now();
    assert!(tx.send(splat(0.5, 0.5)));
    let latency = loop {
        let f = output.latest();
        if f.serial > frames && f.pixels[(32 * 64 + 32) * 4] > 100 {
            break sent.elapsed();
        }
        assert!(
            sent.elapsed() < Duration::from_secs(5),
            "the splat never showed: frame {} (after {frames}), centre {:?}, steps {}, resting {}",
            f.serial,
            &f.pixels[(32 * 64 + 32) * 4..][..4],
            engine.steps(),
            engine.resting()
        );
        std::thread::sleep(Duration::from_micros(200));
    };
    assert!(!engine.resting(), "moving dye, yet the engine rests");
    figures.push(format!(
        "splat into a resting fluid shown after {:.1} ms",
        latency.as_secs_f64() * 1e3
    ));
    // The splat's motion and dye fade (dissipation), and it comes to rest again.
    let start = Instant::now();
    while !engine.resting() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "a splat's motion never came to rest"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    figures.push(format!(
        "back at rest {:.1} s after the splat",
        sent.elapsed().as_secs_f64()
    ));
    drop(engine);

    eprintln!("{}", figures.join("\n"));
    assert!(unfed < 0.05, "{}", figures.join("; "));
    assert!(inactive < 0.05, "{}", figures.join("; "));
    assert!(watched < 0.05, "{}", figures.join("; "));
    // The host's own process() calls (a debug build's bridge, 100 a second) are in here too.
    assert!(at_rest < 0.10, "{}", figures.join("; "));
    assert!(
        playing > at_rest,
        "held notes cost no more than silence: the fluid never ran; {}",
        figures.join("; ")
    );
    assert!(
        latency < Duration::from_millis(250),
        "{}",
        figures.join("; ")
    );
}
