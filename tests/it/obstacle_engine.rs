//! Obstacles in the product, between the parameters and the model: the project's layout and
//! drawing reach the fluid, the brush draws and erases and its strokes are saved back into the
//! project, the pillar channel's notes raise and lower pillars (and paint nothing), and the
//! walls survive a change of resolution. Through the driver (deterministic) and through the
//! running simulation thread (frames).

use dyeflow::bridge::events::{Brush, NoteId, SimEvent, TimedEvent};
use dyeflow::bridge::queue;
use dyeflow::engine::{Driver, Engine, EngineOptions};
use dyeflow::fluid::OBSTACLE_FILL_RGB8;
use dyeflow::frame::{FrameOutput, frame_channel};
use dyeflow::mapping::Pillar;
use dyeflow::params::{Aspect, BackendChoice, DyeflowParams, ObstacleSettings, Settings};
use dyeflow::sim::obstacles::{Layout, Mask};
use dyeflow::sim::{Backend, GpuOptions, Model, ModelSpec, create_model};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn model(cells: (usize, usize)) -> Box<dyn Model> {
    let spec = ModelSpec {
        kind: Default::default(),
        cells,
        detail: 1,
        effort_sweeps: 20,
        backend: Backend::Cpu,
        gpu: GpuOptions::default(),
        cpu_threads: 1,
    };
    create_model(&spec).expect("a CPU model").0
}

fn event(event: SimEvent) -> TimedEvent {
    TimedEvent { time_s: 0.0, event }
}

fn note(channel: u8, key: u8) -> NoteId {
    NoteId {
        key,
        channel,
        voice: -1,
    }
}

/// Params with the pillar channel set to MIDI channel `channel` (1-based; 0: off).
fn with_pillar_channel(channel: i32) -> DyeflowParams {
    let p = DyeflowParams::default();
    let json =
        format!(r#"{{"params": {{"pillar_ch": {channel}}}, "fields": {{"state-version": "7"}}}}"#);
    dyeflow::preset::apply(json.as_bytes(), &p).expect("a preset");
    p
}

fn cell_of(p: [f32; 2], h: usize) -> (usize, usize) {
    ((p[0] * h as f32) as usize, (p[1] * h as f32) as usize)
}

fn max_dye(m: &mut Box<dyn Model>) -> f32 {
    m.probe_activity(0)
        .expect("the CPU measures at once")
        .1
        .max_dye
}

const GRID: (usize, usize) = (96, 54);
const DT: f32 = 1.0 / 60.0;

/// A note on the pillar channel stands a pillar where its pitch says, sized by velocity, for
/// as long as the key is down, and paints nothing; the same note on another channel paints
/// and stands nothing. With no pillar channel (a project from before) notes only paint.
#[test]
fn the_pillar_channel_plays_the_walls() {
    let aspect = GRID.0 as f32 / GRID.1 as f32;
    let params = with_pillar_channel(4);
    let mut m = model(GRID);
    let mut d = Driver::new(&params);
    d.event(
        m.as_mut(),
        &event(SimEvent::NoteOn {
            note: note(3, 60),
            velocity: 1.0,
        }),
    );
    d.step(m.as_mut(), &params, DT);
    let pillar = Pillar::for_key(60, 1.0, aspect);
    let (i, j) = cell_of(pillar.centre, GRID.1);
    let mask = m.obstacles().expect("a pillar stands").clone();
    assert!(mask.is_solid(i, j));
    // Its size: the cells within the radius, nothing more (a disc 0.06 tall on 54 rows).
    let mut disc = Mask::empty(GRID.0, GRID.1);
    disc.paint_disc(pillar.centre, pillar.radius, true);
    assert_eq!(mask, disc);
    assert_eq!(max_dye(&mut m), 0.0, "a pillar note paints nothing");
    // A softer note on another key stands a smaller pillar to its left.
    d.event(
        m.as_mut(),
        &event(SimEvent::NoteOn {
            note: note(3, 48),
            velocity: 0.1,
        }),
    );
    d.step(m.as_mut(), &params, DT);
    let small = Pillar::for_key(48, 0.1, aspect);
    assert!(small.radius < pillar.radius && small.centre[0] < pillar.centre[0]);
    assert!(m.obstacles().unwrap().solid_count() > disc.solid_count());
    // Key up: down again.
    for key in [60, 48] {
        d.event(m.as_mut(), &event(SimEvent::NoteOff { note: note(3, key) }));
    }
    d.step(m.as_mut(), &params, DT);
    assert!(m.obstacles().is_none(), "the pillars came down");

    // Another channel, or no pillar channel: the note paints and stands nothing.
    for (params, channel) in [(with_pillar_channel(4), 0), (DyeflowParams::default(), 3)] {
        let mut m = model(GRID);
        let mut d = Driver::new(&params);
        d.event(
            m.as_mut(),
            &event(SimEvent::NoteOn {
                note: note(channel, 60),
                velocity: 1.0,
            }),
        );
        d.step(m.as_mut(), &params, DT);
        assert!(m.obstacles().is_none());
        assert!(max_dye(&mut m) > 0.1, "the note paints");
    }
}

/// A pillar raised over the project's layout and lowered again gives the layout back.
#[test]
fn lowering_a_pillar_keeps_the_layout() {
    let params = with_pillar_channel(1);
    params
        .obstacles
        .set(ObstacleSettings::layout(Layout::Pillars));
    let mut m = model(GRID);
    let mut d = Driver::new(&params);
    d.step(m.as_mut(), &params, DT);
    let layout = Mask::layout(Layout::Pillars, GRID.0, GRID.1);
    assert_eq!(m.obstacles(), Some(&layout));
    for key in [36, 50, 60, 72, 84] {
        d.event(
            m.as_mut(),
            &event(SimEvent::NoteOn {
                note: note(0, key),
                velocity: 0.8,
            }),
        );
    }
    d.step(m.as_mut(), &params, DT);
    assert!(m.obstacles().unwrap().solid_count() > layout.solid_count());
    d.event(
        m.as_mut(),
        &event(SimEvent::ControlChange {
            channel: 0,
            cc: 123,
            value: 1.0,
        }),
    );
    d.step(m.as_mut(), &params, DT);
    assert_eq!(m.obstacles(), Some(&layout));
}

/// The brush draws on the layout and erases; its drawing is written back into the project
/// (and the project's own change wins over a write-back that comes after it); a driver on
/// a finer grid (a reloaded project at a new resolution) gets the drawing resampled.
#[test]
fn the_brush_draws_erases_and_is_saved() {
    let params = DyeflowParams::default();
    params.obstacles.set(ObstacleSettings::layout(Layout::Disc));
    let mut m = model(GRID);
    let mut d = Driver::new(&params);
    d.step(m.as_mut(), &params, DT);
    let disc = Mask::layout(Layout::Disc, GRID.0, GRID.1);
    assert_eq!(m.obstacles(), Some(&disc));
    let brush = |from: [f32; 2], to: [f32; 2], solid: bool| {
        event(SimEvent::Brush(Brush {
            from,
            to,
            radius: 0.04,
            solid,
        }))
    };
    d.event(m.as_mut(), &brush([0.2, 0.2], [0.6, 0.2], true));
    // Erase the disc's middle.
    d.event(m.as_mut(), &brush([0.889, 0.5], [0.889, 0.5], false));
    d.step(m.as_mut(), &params, DT);
    let drawn = m.obstacles().unwrap().clone();
    assert!(drawn.is_solid(cell_of([0.4, 0.2], GRID.1).0, cell_of([0.4, 0.2], GRID.1).1));
    let (ci, cj) = cell_of([0.889, 0.5], GRID.1);
    assert!(disc.is_solid(ci, cj) && !drawn.is_solid(ci, cj));

    assert!(d.write_back_obstacles(&params));
    let saved = params.obstacles.get().0;
    assert_eq!(saved.layout, Layout::Disc);
    assert_eq!(saved.mask_at(GRID.0, GRID.1).as_ref(), Some(&drawn));
    assert!(!d.write_back_obstacles(&params), "nothing new to write");
    // The write-back did not count as a change of the project: the model keeps its mask.
    assert!(!d.sync_obstacles(m.as_mut(), &params));

    // Picking a layout in the editor meanwhile wins over strokes not yet written back.
    d.event(m.as_mut(), &brush([1.2, 0.8], [1.4, 0.8], true));
    params.obstacles.set(ObstacleSettings::layout(Layout::Maze));
    assert!(!d.write_back_obstacles(&params));
    d.step(m.as_mut(), &params, DT);
    assert_eq!(
        m.obstacles(),
        Some(&Mask::layout(Layout::Maze, GRID.0, GRID.1))
    );

    // A project with a drawing, opened at a finer grid.
    params.obstacles.set(saved.clone());
    let fine = (GRID.0 * 2, GRID.1 * 2);
    let mut m2 = model(fine);
    let mut d2 = Driver::new(&params);
    d2.step(m2.as_mut(), &params, DT);
    assert_eq!(m2.obstacles(), Some(&drawn.resampled(fine.0, fine.1)));
    // Clear: nothing solid.
    params.obstacles.set(ObstacleSettings::default());
    d2.step(m2.as_mut(), &params, DT);
    assert!(m2.obstacles().is_none());
}

fn engine_params() -> Arc<DyeflowParams> {
    let p = DyeflowParams::default();
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

/// Wait (up to 20 s) until `ok` holds for the newest frame (or, with no frame test, until
/// `ok` holds at all).
fn wait_for(out: &mut FrameOutput, what: &str, ok: impl Fn(&dyeflow::frame::Frame) -> bool) {
    let start = Instant::now();
    loop {
        let f = out.latest();
        if f.serial > 0 && ok(f) {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{what}: not in 20 s"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The colour at canvas point `p` of a square frame.
fn at(f: &dyeflow::frame::Frame, p: [f32; 2]) -> [u8; 3] {
    let x = ((p[0] * f.width as f32) as usize).min(f.width - 1);
    let y = (((1.0 - p[1]) * f.height as f32) as usize).min(f.height - 1);
    let i = (y * f.width + x) * 4;
    [f.pixels[i], f.pixels[i + 1], f.pixels[i + 2]]
}

/// The running engine: the project's layout shows, Clear takes it away, a brush stroke from
/// the editor's queue shows and is written back into the project within a second, and the
/// drawing survives a change of resolution.
#[test]
fn the_engine_shows_and_saves_the_obstacles() {
    let params = engine_params();
    params.obstacles.set(ObstacleSettings::layout(Layout::Disc));
    let (mut tx, rx) = queue::channel(256);
    let (input, mut output) = frame_channel();
    let engine = Engine::start(params.clone(), vec![rx], input, EngineOptions::default()).unwrap();
    output.request(64, 64);
    let centre = [0.5, 0.5];
    wait_for(&mut output, "the disc", |f| {
        f.width == 64 && at(f, centre) == OBSTACLE_FILL_RGB8
    });
    params.obstacles.set(ObstacleSettings::default());
    wait_for(&mut output, "Clear", |f| {
        at(f, centre) != OBSTACLE_FILL_RGB8
    });

    let spot = [0.25, 0.75];
    assert!(tx.send(event(SimEvent::Brush(Brush {
        from: spot,
        to: spot,
        radius: 0.08,
        solid: true,
    }))));
    wait_for(&mut output, "the stroke", |f| {
        at(f, spot) == OBSTACLE_FILL_RGB8
    });
    let start = Instant::now();
    while params.obstacles.get().0.mask.is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "the stroke was not written back"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // A finer grid: the drawing comes along.
    let mut s = params.settings();
    s.sim_resolution = 256;
    params.set_settings(s);
    let start = Instant::now();
    while engine.status().grid != (256, 256) {
        assert!(start.elapsed() < Duration::from_secs(20), "no rebuild");
        std::thread::sleep(Duration::from_millis(10));
    }
    // Ask for a new size so a fresh frame of the new grid comes.
    output.request(80, 80);
    wait_for(&mut output, "the stroke after the rebuild", |f| {
        f.width == 80 && at(f, spot) == OBSTACLE_FILL_RGB8 && at(f, centre) != OBSTACLE_FILL_RGB8
    });
    drop(engine);
}
