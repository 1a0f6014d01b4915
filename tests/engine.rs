//! The simulation thread: events in give frames out, frame sizes follow the consumer, the
//! thread stops and joins cleanly (100 times), and the CPU fallback works when there is no GPU.
//! (A binary of its own: one test counts the process's threads, while the others wait.)

mod common;

use dyeflow::bridge::events::{SimEvent, TimedEvent};
use dyeflow::bridge::queue;
use dyeflow::engine::{Engine, EngineOptions};
use dyeflow::fluid::{Splat, SplatShape};
use dyeflow::frame::{FrameOutput, frame_channel};
use dyeflow::gpu::GpuOptions;
use dyeflow::params::{Aspect, BackendChoice, DyeflowParams, Settings};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Every test here shares the process with the others, except the one that counts its threads:
/// that one takes the lock alone.
static THREADS: std::sync::RwLock<()> = std::sync::RwLock::new(());

fn beside_others() -> std::sync::RwLockReadGuard<'static, ()> {
    THREADS.read().unwrap_or_else(|e| e.into_inner())
}

fn params(backend: BackendChoice) -> Arc<DyeflowParams> {
    let p = DyeflowParams::default();
    p.set_settings(Settings {
        sim_resolution: 128,
        dye_scale: 1,
        aspect: Aspect::Square,
        backend,
        sim_rate_hz: 60,
        ..Settings::default()
    });
    Arc::new(p)
}

fn red_splat_at(x: f32, y: f32) -> TimedEvent {
    TimedEvent {
        time_s: 0.0,
        event: SimEvent::Splat(Splat {
            pos: [x, y],
            radius: 0.08,
            color: [4.0, 0.0, 0.0],
            amount: 1.0,
            force: [0.0, 0.0],
            shape: SplatShape::Gaussian,
            heat: 0.0,
            particles: 0.0,
            depth: 0.0,
            drum: Default::default(),
        }),
    }
}

/// Wait (up to 20 s) for a frame that satisfies `ok`.
fn wait_for(
    out: &mut FrameOutput,
    ok: impl Fn(&dyeflow::frame::Frame) -> bool,
) -> dyeflow::frame::Frame {
    let start = Instant::now();
    loop {
        let f = out.latest();
        if f.serial > 0 && ok(f) {
            return f.clone();
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no suitable frame in 20 s"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn pixel(f: &dyeflow::frame::Frame, x: usize, y: usize) -> [u8; 4] {
    let i = (y * f.width + x) * 4;
    f.pixels[i..i + 4].try_into().unwrap()
}

fn events_in_frames_out(backend: BackendChoice, options: EngineOptions) -> String {
    let (mut tx, rx) = queue::channel(256);
    let (input, mut output) = frame_channel();
    let engine = Engine::start(params(backend), vec![rx], input, options).unwrap();
    output.request(64, 64);
    // Dye at the upper left quarter of the canvas (y up): the picture's upper left.
    assert!(tx.send(red_splat_at(0.25, 0.75)));
    let frame = wait_for(&mut output, |f| f.width == 64 && pixel(f, 16, 16)[0] > 100);
    assert_eq!(frame.pixels.len(), 64 * 64 * 4);
    // Away from the splat only the dim background (4 % by default) shows.
    let away = pixel(&frame, 48, 48);
    assert!(
        away[..3].iter().all(|&c| c < 24) && away[3] == 255,
        "dye appeared away from the splat: {away:?}"
    );
    // The size follows the consumer.
    output.request(100, 30);
    let frame = wait_for(&mut output, |f| (f.width, f.height) == (100, 30));
    assert_eq!(frame.pixels.len(), 100 * 30 * 4);
    let status = engine.status();
    assert!(engine.steps() > 0);
    drop(engine);
    format!("{} {}", status.backend, status.fallback.unwrap_or_default())
}

#[test]
fn cpu_engine_turns_events_into_frames() {
    let _shared = beside_others();
    let status = events_in_frames_out(BackendChoice::Cpu, EngineOptions::default());
    assert!(status.starts_with("cpu"), "{status}");
}

#[test]
fn gpu_engine_turns_events_into_frames() {
    let _shared = beside_others();
    if common::gpu_context().is_none() {
        return;
    }
    let status = events_in_frames_out(BackendChoice::Gpu, EngineOptions::default());
    assert!(status.starts_with("gpu"), "{status}");
}

#[test]
fn no_adapter_falls_back_to_the_cpu_and_says_why() {
    let _shared = beside_others();
    let options = EngineOptions {
        gpu: GpuOptions {
            force_no_adapter: true,
            ..Default::default()
        },
        ..Default::default()
    };
    let status = events_in_frames_out(BackendChoice::Auto, options);
    assert!(status.starts_with("cpu"), "{status}");
    assert!(
        status.contains("switched off"),
        "the reason is reported: {status}"
    );
}

fn thread_count() -> usize {
    std::fs::read_dir("/proc/self/task").map_or(0, |d| d.count())
}

/// 100 create/drop cycles leave no thread behind (GPU devices go with their thread).
#[test]
fn hundred_start_stop_cycles_leave_nothing_behind() {
    let _alone = THREADS.write().unwrap_or_else(|e| e.into_inner());
    let backend = if common::gpu_context().is_some() {
        BackendChoice::Auto
    } else {
        BackendChoice::Cpu
    };
    // Warm up once so lazily started runtime threads (rayon, the GPU driver) are counted.
    {
        let (input, _output) = frame_channel();
        let _e = Engine::start(params(backend), Vec::new(), input, EngineOptions::default());
        std::thread::sleep(Duration::from_millis(100));
    }
    let before = thread_count();
    for n in 0..100 {
        let (input, mut output) = frame_channel();
        let (_tx, rx) = queue::channel(16);
        let engine =
            Engine::start(params(backend), vec![rx], input, EngineOptions::default()).unwrap();
        output.request(32, 32);
        if n % 10 == 0 {
            wait_for(&mut output, |_| true);
        }
        assert!(engine.is_running());
        drop(engine);
    }
    std::thread::sleep(Duration::from_millis(200));
    let after = thread_count();
    assert!(
        after <= before + 1,
        "threads leaked: {before} before, {after} after"
    );
}

/// A panic in the simulation (here injected at step 5) does not end it: the thread restarts on
/// the CPU solver, says so in its status, and goes on turning events into frames.
#[test]
fn a_crashed_simulation_restarts_on_the_cpu_and_says_so() {
    let _shared = beside_others();
    let options = EngineOptions {
        faults: dyeflow::engine::Faults {
            panic_at_step: Some(5),
            ..Default::default()
        },
        ..Default::default()
    };
    let (mut tx, rx) = queue::channel(256);
    let (input, mut output) = frame_channel();
    // Auto: after the crash the settings still ask for a GPU, and the restart must stay on the
    // CPU through the settings polls that follow.
    let engine = Engine::start(params(BackendChoice::Auto), vec![rx], input, options).unwrap();
    output.request(64, 64);
    let start = Instant::now();
    while engine.restarts() == 0 {
        assert!(start.elapsed() < Duration::from_secs(20), "no crash");
        // Keep it fed: the engine only steps while someone feeds or watches it.
        assert!(tx.send(red_splat_at(0.75, 0.25)));
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(engine.is_running(), "the thread ended with the crash");
    // After the restart: a fresh fluid, and new dye still shows.
    assert!(tx.send(red_splat_at(0.25, 0.75)));
    // (The filmic look shows the new dye from its first step on, so wait for the steps too.)
    wait_for(&mut output, |f| {
        f.width == 64 && pixel(f, 16, 16)[0] > 100 && engine.steps() > 5
    });
    assert_eq!(engine.restarts(), 1);
    // Several settings polls (every 250 ms) and status refreshes (every 500 ms) later.
    std::thread::sleep(Duration::from_millis(1200));
    let status = engine.status();
    assert_eq!(status.backend, "cpu");
    let why = status.fallback.unwrap_or_default();
    assert!(why.contains("crashed") && why.contains("injected"), "{why}");
}

/// A simulation thread stuck in a step (here an injected 6 s hang, as a hung GPU would be)
/// does not hold up the host: dropping the engine returns within about `DROP_WAIT_MS`, and the
/// thread, left to itself, ends once the step returns.
#[test]
fn dropping_an_engine_never_waits_on_a_hung_step() {
    let _shared = beside_others();
    let hang = Duration::from_secs(6);
    let options = EngineOptions {
        faults: dyeflow::engine::Faults {
            hang_at_step: Some((3, hang)),
            ..Default::default()
        },
        ..Default::default()
    };
    let (mut tx, rx) = queue::channel(256);
    let (input, output) = frame_channel();
    let engine = Engine::start(params(BackendChoice::Cpu), vec![rx], input, options).unwrap();
    // The thread owns the receiving end, which shares the queue's counters with `tx`.
    let thread_alive = |tx: &dyeflow::bridge::queue::EventSender| Arc::strong_count(tx.stats()) > 1;
    output.request(32, 32);
    let start = Instant::now();
    while engine.steps() < 3 {
        assert!(start.elapsed() < Duration::from_secs(20), "no steps");
        assert!(tx.send(red_splat_at(0.5, 0.5)));
        std::thread::sleep(Duration::from_millis(5));
    }
    // The thread is now asleep in its third step.
    let t0 = Instant::now();
    drop(engine);
    let took = t0.elapsed();
    assert!(
        took < Duration::from_millis(dyeflow::engine::DROP_WAIT_MS * 10),
        "drop waited {took:?} on a hung step"
    );
    assert!(thread_alive(&tx), "the thread ended before its hang did");
    // Left alone, the thread ends after the hang.
    let deadline = Instant::now() + hang + Duration::from_secs(5);
    while thread_alive(&tx) {
        assert!(Instant::now() < deadline, "the detached thread never ended");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The burst of a note poured into the particle fluid has landed at the bottom: the bottom
/// rows lit red, the top dark.
fn bottom_red(f: &dyeflow::frame::Frame) -> bool {
    (20..44).any(|x| pixel(f, x, 62)[0] > 100) && (0..64).all(|x| pixel(f, x, 2)[0] < 60)
}

/// An engine running the particle fluid on `backend`, 64x64 frames wanted, after a note's
/// burst has pooled at the bottom: its parameters, event queue, frames and handle.
fn poured(backend: BackendChoice) -> (Arc<DyeflowParams>, queue::EventSender, FrameOutput, Engine) {
    use dyeflow::params::FluidChoice;
    let p = params(backend);
    p.set_settings(Settings {
        fluid: FluidChoice::Particles,
        ..p.settings()
    });
    let (mut tx, rx) = queue::channel(256);
    let (input, mut output) = frame_channel();
    let engine = Engine::start(p.clone(), vec![rx], input, EngineOptions::default()).unwrap();
    output.request(64, 64);
    assert!(tx.send(red_splat_at(0.5, 0.75)));
    wait_for(&mut output, |f| f.width == 64 && bottom_red(f));
    (p, tx, output, engine)
}

/// "Fluid: Particles": the engine runs the particle fluid. A note's burst falls and pools at
/// the bottom of the frame; switching the setting back to the grid while it runs rebuilds the
/// model (the grid cannot take particles, so it starts empty) and dye then rises instead.
#[test]
fn the_engine_runs_the_particle_fluid_and_switches_back() {
    let _shared = beside_others();
    use dyeflow::params::FluidChoice;
    let (p, mut tx, mut output, engine) = poured(BackendChoice::Cpu);
    let status = engine.status();
    assert!(status.backend.starts_with("cpu"), "{}", status.backend);
    // Back to the grid: its dye shows where the splat is, and nothing pools.
    p.set_settings(Settings {
        fluid: FluidChoice::Grid,
        ..p.settings()
    });
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(20) {
        assert!(tx.send(red_splat_at(0.5, 0.75)));
        std::thread::sleep(Duration::from_millis(50));
        let f = output.latest();
        if f.width == 64 && pixel(f, 32, 16)[0] > 100 && (0..64).all(|x| pixel(f, x, 62)[0] < 60) {
            return;
        }
    }
    panic!("the grid fluid did not take over");
}

/// The particle fluid on the GPU in the engine: a note's burst pools at the bottom as on the
/// CPU; switching the backend to the CPU while it runs carries the liquid over (the pool is
/// still there, on the CPU now, without a new note).
#[test]
fn the_engine_runs_the_particle_fluid_on_the_gpu_and_carries_it_to_the_cpu() {
    let _shared = beside_others();
    if common::gpu_context().is_none() {
        return;
    }
    let (p, _tx, mut output, engine) = poured(BackendChoice::Gpu);
    let status = engine.status();
    assert!(status.backend.starts_with("gpu"), "{}", status.backend);
    assert_eq!(status.fallback, None);
    p.set_settings(Settings {
        backend: BackendChoice::Cpu,
        ..p.settings()
    });
    let start = Instant::now();
    while !engine.status().backend.starts_with("cpu") {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the engine did not switch to the CPU"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // Frames drawn by the CPU model after the switch still show the pool.
    let switched = output.latest().serial;
    wait_for(&mut output, |f| f.serial > switched + 1 && bottom_red(f));
}
