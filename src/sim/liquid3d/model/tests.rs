//! The 3D liquid's model: its pool, notes, shocks, picture, snapshots, rest and broken input.

use super::*;
use crate::fluid::Liquid as Knobs2d;
use crate::sim::model_tests::{broken_splats, broken_steps, note, shock};

fn model(budget: usize) -> Liquid3dModel {
    Liquid3dModel::new((64, 36), 1, budget).expect("a model")
}

/// The 2D liquid's knobs with a budget standing for `budget` 3D particles.
fn knobs(budget: usize) -> Knobs2d {
    Knobs2d {
        budget: (budget as f32 * BUDGET_2D / DEFAULT_PARTICLES as f32).round() as u32,
        ..Knobs2d::default()
    }
}

fn step(budget: usize, dt: f32) -> StepInput {
    StepInput {
        dt,
        liquid: knobs(budget),
        ..StepInput::default()
    }
}

/// A new tank holds a calm pool of pale water on its floor, inside the tank.
#[test]
fn a_new_tank_holds_a_calm_pool() {
    let mut m = model(4000);
    let l = m.liquid();
    assert_eq!(l.len(), (4000.0 * POOL) as usize);
    let size = l.size();
    assert!(l.color.iter().all(|c| *c == WATER));
    assert!(l.vel.iter().all(|v| *v == [0.0; 3]));
    assert!(
        l.pos
            .iter()
            .all(|p| (0..3).all(|c| p[c] >= 0.0 && p[c] <= size[c]))
    );
    let top = l.pos.iter().map(|p| p[1]).fold(0.0f32, f32::max);
    // POOL of the budget, which fills FILL of the height.
    assert!(
        (top / size[1] - POOL * FILL).abs() < 0.05,
        "{top} of {}",
        size[1]
    );
}

/// A note drops a ball of its colour from above its place (across by the canvas' x); the
/// tank keeps at most the budget, recycling the oldest particles (the pool) first.
#[test]
fn notes_drop_balls_of_their_colour_and_the_budget_recycles_the_oldest() {
    let budget = 4000;
    let mut m = model(budget);
    let before = m.liquid().len();
    let aspect = 64.0 / 36.0;
    m.inject(&[note(0.25 * aspect, [1.0, 0.0, 0.0])]);
    m.advance(&step(budget, 0.0));
    let l = m.liquid();
    let new: Vec<usize> = (0..l.len())
        .filter(|&i| l.color[i] == [1.0, 0.0, 0.0])
        .collect();
    assert_eq!(new.len(), l.len() - before, "{} {before}", l.len());
    assert!((20..=BURST_MAX).contains(&new.len()), "{}", new.len());
    let size = l.size();
    let mx = new.iter().map(|&i| l.pos[i][0]).sum::<f32>() / new.len() as f32;
    let my = new.iter().map(|&i| l.pos[i][1]).sum::<f32>() / new.len() as f32;
    assert!(
        (mx / size[0] - 0.25).abs() < 0.05,
        "across {mx} of {}",
        size[0]
    );
    assert!(my > 0.5 * size[1], "dropped from above: {my}");
    // It falls into the pool.
    for _ in 0..30 {
        m.advance(&step(budget, 1.0 / 60.0));
    }
    let l = m.liquid();
    let reds: Vec<f32> = (0..l.len())
        .filter(|&i| l.color[i] == [1.0, 0.0, 0.0])
        .map(|i| l.pos[i][1])
        .collect();
    let fell = reds.iter().sum::<f32>() / reds.len() as f32;
    assert!(fell < my - 0.1 * size[1], "{my} -> {fell}");
    // Past the budget: the pool's water goes first.
    for k in 0..12 {
        m.inject(&[Splat {
            radius: 0.1,
            ..note((0.1 + 0.06 * k as f32) * aspect, [0.0, 1.0, 0.0])
        }]);
        m.advance(&step(budget, 1.0 / 60.0));
    }
    let l = m.liquid();
    assert_eq!(l.len(), budget);
    let water = l.color.iter().filter(|c| **c == WATER).count();
    let red = l.color.iter().filter(|c| **c == [1.0, 0.0, 0.0]).count();
    assert!(water < before, "the pool was recycled first: {water}");
    assert!(
        red > 0 && red == reds.len(),
        "the newer red ball is all there: {red}"
    );
}

/// A splat without dye is a shock: the liquid near its place (through the whole depth)
/// speeds up along its force; the far side stays still.
#[test]
fn a_shock_pushes_the_liquid_near_it() {
    let budget = 4000;
    let mut m = model(budget);
    m.inject(&[shock([0.2, 0.05], [0.0, 2.0])]);
    m.advance(&step(budget, 0.0));
    let l = m.liquid();
    let size = l.size();
    // The kick's place: 0.2 of the canvas' height across, 0.05 up.
    let (x, y) = (0.2 * size[1], 0.05 * size[1]);
    let (mut near, mut far) = (0, 0);
    for (p, v) in l.pos.iter().zip(&l.vel) {
        if (p[0] - x).hypot(p[1] - y) < 0.05 * size[1] {
            assert!(v[1] > 0.5, "near the kick: {v:?}");
            near += 1;
        } else if p[0] > 0.5 * size[0] {
            assert_eq!(*v, [0.0; 3]);
            far += 1;
        }
    }
    assert!(near > 10 && far > 100, "{near} {far}");
}

/// The picture shows the liquid in its colour: a pool dyed red is red where the pool is
/// and a blue one blue, through the whole display pipeline.
#[test]
fn the_picture_shows_the_pool_in_its_dye() {
    let (w, h) = (160, 90);
    let mut frames = Vec::new();
    for colour in [[1.0, 0.1, 0.05], [0.05, 0.2, 1.0]] {
        let mut m = model(3000);
        let mut l = m.liquid().clone();
        l.color.iter_mut().for_each(|c| *c = colour);
        m.set_liquid(l);
        let mut out = vec![0u8; w * h * 4];
        m.render(&Look::default(), w, h, &mut out);
        frames.push(out);
    }
    // The tank's lower middle (rows top first).
    let mean = |f: &[u8], c: usize| {
        let mut sum = 0u32;
        let mut n = 0;
        for y in h * 55 / 100..h * 75 / 100 {
            for x in w * 35 / 100..w * 65 / 100 {
                sum += u32::from(f[(y * w + x) * 4 + c]);
                n += 1;
            }
        }
        sum as f32 / n as f32
    };
    let (red, blue) = (&frames[0], &frames[1]);
    assert!(
        mean(red, 0) > mean(red, 2) + 20.0,
        "{} {}",
        mean(red, 0),
        mean(red, 2)
    );
    assert!(
        mean(blue, 2) > mean(blue, 0) + 20.0,
        "{} {}",
        mean(blue, 2),
        mean(blue, 0)
    );
    // Far above the tank: the same dark sky in both.
    let sky = |f: &[u8]| f[(2 * w + 2) * 4..(2 * w + 2) * 4 + 3].to_vec();
    assert_eq!(sky(red), sky(blue));
}

/// Snapshots carry the liquid into a model of another tank size (scaled); other kinds of
/// snapshot are refused; a reset brings back the calm pool.
#[test]
fn snapshots_carry_the_liquid_and_reset_refills_the_pool() {
    let mut a = model(4000);
    a.inject(&[note(0.5, [0.0, 1.0, 0.0])]);
    a.advance(&step(4000, 1.0 / 60.0));
    let mut b = model(8000);
    assert!(b.restore(&a.snapshot()));
    assert_eq!(b.liquid().len(), a.liquid().len());
    let (sa, sb) = (a.liquid().size(), b.liquid().size());
    let k = sb[0] / sa[0];
    assert!(k > 1.2, "{sa:?} {sb:?}");
    assert!((b.liquid().pos[0][0] - a.liquid().pos[0][0] * k).abs() < 1e-4);
    assert!(!b.restore(&Snapshot::new(7u8)));
    b.reset();
    assert!(b.liquid().color.iter().all(|c| *c == WATER));
    assert_eq!(b.liquid().len(), (8000.0 * POOL) as usize);
}

/// A calm pool comes to rest by the engine's measure, a note wakes it; broken sources and
/// knobs leave everything finite and inside the tank.
#[test]
fn a_calm_pool_is_still_and_broken_input_is_harmless() {
    let budget = 2000;
    let mut m = model(budget);
    let mut still = false;
    for probe in 0..40 {
        for _ in 0..15 {
            m.advance(&step(budget, 1.0 / 60.0));
        }
        let (_, a) = m.probe_activity(probe).expect("a probe");
        if probe > 0 && a.max_speed == 0.0 {
            still = true;
            break;
        }
    }
    assert!(still, "the pool came to rest");
    m.inject(&[note(0.5, [1.0; 3])]);
    assert!(m.probe_activity(99).expect("a probe").1.max_speed > 0.0);
    m.inject(&broken_splats());
    for step in broken_steps(0) {
        m.advance(&step);
    }
    let l = m.liquid();
    let size = l.size();
    assert!(!l.is_empty());
    assert!(l.pos.iter().chain(&l.vel).flatten().all(|x| x.is_finite()));
    assert!(
        l.pos
            .iter()
            .all(|p| (0..3).all(|c| p[c] >= 0.0 && p[c] <= size[c]))
    );
}

/// The camera follows the look's orbit: another place another picture, the same place the
/// same picture; broken values fall back to the default.
#[test]
fn the_camera_follows_the_orbit() {
    use crate::fluid::Orbit;
    let look = Look::default();
    let mut m = model(2000);
    let (w, h) = (96, 54);
    let mut frame = |orbit: Orbit| {
        let mut out = vec![0u8; w * h * 4];
        m.render(&Look { orbit, ..look }, w, h, &mut out);
        out
    };
    let a = frame(Orbit::default());
    let b = frame(Orbit {
        yaw: -60.0,
        pitch: 50.0,
        distance: 2.5,
    });
    assert_ne!(a, b);
    assert_eq!(a, frame(Orbit::default()));
    let broken = Orbit {
        yaw: f32::NAN,
        pitch: f32::INFINITY,
        distance: -1.0,
    };
    assert_eq!(broken.sanitized().yaw, Orbit::default().yaw);
    assert!(frame(broken).iter().any(|&v| v > 0));
}

/// A note lands in its layer of the tank: depth -0.75 (the mapping's channel 1) at the front,
/// 0.75 (channel 4) at the back.
#[test]
fn a_note_lands_in_its_channels_layer() {
    let mut front = model(4000);
    let mut back = model(4000);
    for (m, depth) in [(&mut front, -0.75), (&mut back, 0.75)] {
        m.inject(&[Splat {
            depth,
            ..note(0.9, [1.0, 0.0, 0.0])
        }]);
        m.advance(&step(4000, 0.0));
    }
    let mean_z = |m: &mut Liquid3dModel| {
        let l = m.liquid();
        let z: Vec<f32> = (0..l.len())
            .filter(|&i| l.color[i] == [1.0, 0.0, 0.0])
            .map(|i| l.pos[i][2] / l.size()[2])
            .collect();
        z.iter().sum::<f32>() / z.len() as f32
    };
    let (f, b) = (mean_z(&mut front), mean_z(&mut back));
    assert!(f < 0.35 && b > 0.65, "front {f}, back {b}");
}

/// A flood of notes in one frame (the queue's 4096) keeps the newest particles up to the
/// budget, as notes one at a time do, and recycles the tank a few times, not once a note.
#[test]
fn a_flood_of_notes_keeps_the_newest_within_the_budget() {
    let budget = 2000;
    let mut m = model(budget);
    let flood: Vec<Splat> = (0..6000)
        .map(|k| Splat {
            radius: 0.1,
            ..note(0.5, [k as f32 / 6000.0, 1.0, 0.0])
        })
        .collect();
    let t = std::time::Instant::now();
    m.inject(&flood);
    m.advance(&step(budget, 0.0));
    let budget = m.budget;
    let l = m.liquid();
    // The budget the knobs stand for (2000 through the 2D knob's whole numbers).
    assert_eq!(l.len(), budget);
    assert!(l.color.iter().all(|c| c[1] == 1.0), "the pool is gone");
    // The newest notes' colours: the queue kept the last 4096 of the 6000, and the tank the
    // last of those.
    let oldest = l.color.iter().map(|c| c[0]).fold(1.0f32, f32::min);
    assert!(oldest > 0.9, "an old note survived: {oldest}");
    eprintln!("flood of 4096 notes: {:?}", t.elapsed());
}

/// A drum hit as the mapping strikes it (mapping/drums.rs, full velocity, default knobs on a
/// 16:9 canvas): the kick three wide splats pushing up at the bottom, the snare a pair pushing
/// apart half way up, a hi-hat one small splat near the top.
fn hit(drum: Drum) -> Vec<Splat> {
    let at = |x: f32, y: f32, radius: f32, amount: f32, force: [f32; 2], color: [f32; 3]| Splat {
        pos: [x, y],
        radius,
        amount,
        force,
        color,
        drum,
        ..Splat::default()
    };
    let c = 16.0 / 18.0;
    match drum {
        Drum::Kick => [-1.0, 0.0, 1.0]
            .map(|s| at(c + s * 0.2, 0.06, 0.12, 1.6, [0.0, 2.5], [1.0, 0.3, 0.1]))
            .to_vec(),
        Drum::Snare => [-1.0, 1.0]
            .map(|s| {
                at(
                    c + s * 0.05,
                    0.5,
                    0.06,
                    1.2,
                    [s * 3.0, 0.0],
                    [0.1, 0.6, 1.0],
                )
            })
            .to_vec(),
        _ => vec![at(0.3, 0.86, 0.02, 1.5, [0.2, 0.3], [1.0, 0.9, 0.55])],
    }
}

/// The drum kit as the 3D liquid plays it: the kick lifts the
/// liquid on the floor under it (and drops no ball), the snare jerks the whole liquid sideways
/// (one way, then the other on the next hit), and a hi-hat throws drops of its colour up from
/// the surface.
#[test]
fn the_kick_lifts_the_floor_the_snare_sloshes_and_hats_throw_spray() {
    let budget = 4000;
    // The kick.
    let mut m = model(budget);
    let before = m.liquid().len();
    m.inject(&hit(Drum::Kick));
    m.advance(&step(budget, 0.0));
    let l = m.liquid();
    assert_eq!(l.len(), before, "the kick drops no ball");
    let size = l.size();
    let low: Vec<f32> = (0..l.len())
        .filter(|&i| {
            l.pos[i][1] < 0.1 * size[1] && (l.pos[i][0] - 0.5 * size[0]).abs() < 0.1 * size[0]
        })
        .map(|i| l.vel[i][1])
        .collect();
    let lift = low.iter().sum::<f32>() / low.len().max(1) as f32;
    assert!(
        low.len() > 20 && lift > 0.3,
        "{} particles at {lift} m/s",
        low.len()
    );
    // The snare, twice.
    let mut m = model(budget);
    let mut means = Vec::new();
    for _ in 0..2 {
        let n = m.liquid().len();
        let before: f32 = m.liquid().vel.iter().map(|v| v[0]).sum::<f32>() / n as f32;
        m.inject(&hit(Drum::Snare));
        m.advance(&step(budget, 0.0));
        let l = m.liquid();
        assert_eq!(l.len(), n, "the snare drops no ball");
        let after: f32 = l.vel.iter().map(|v| v[0]).sum::<f32>() / n as f32;
        means.push(after - before);
    }
    assert!(means[0] > 0.1 && means[1] < -0.1, "{means:?}");
    // A closed hi-hat.
    let mut m = model(budget);
    let before = m.liquid().len();
    let top = m.liquid().pos.iter().map(|p| p[1]).fold(0.0, f32::max);
    let hat = hit(Drum::Cymbal);
    m.inject(&hat);
    m.advance(&step(budget, 0.0));
    let l = m.liquid();
    let colour = hat[0].color.map(|c| c.clamp(0.0, 1.0));
    let drops: Vec<usize> = (0..l.len()).filter(|&i| l.color[i] == colour).collect();
    assert_eq!(drops.len(), l.len() - before);
    assert!(drops.len() >= 8, "{} droplets", drops.len());
    assert!(
        drops
            .iter()
            .all(|&i| l.vel[i][1] > 1.0 && l.pos[i][1] > top),
        "thrown up from the surface"
    );
}
