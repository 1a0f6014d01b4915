//! The editor's obstacle controls under Xvfb (as tests/it/editor.rs drives the editor): the
//! layout selector shows its walls in the picture and saves them with the project, the
//! brush's Draw and Erase paint and remove walls along a drag instead of dye, Clear takes
//! everything away, and the obstacle look switches to outlines.

use crate::common;

use common::harness::{self, in_harness};
use common::xvfb::{self, Display, HarnessChild, Image};
use std::time::{Duration, Instant};

/// The editor with its panel open in a window tall enough to show the Obstacles section
/// without scrolling.
#[test]
#[ignore = "the editor harness, run by the editor tests in a child process"]
fn harness_tall_window_with_panel() {
    if in_harness() {
        harness::run_sized(harness::small_cpu(), true, Some((960, 1000)));
    }
}

fn save(image: &Image, name: &str) {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("editor-tests");
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::write(dir.join(name), image.encode_png());
}

/// Where the panel's obstacle controls are in the 960x1000 window, in window pixels (the
/// Obstacles section sits under the collapsed Audio section).
const LAYOUT_COMBO: (u32, u32) = (800, 558);
const PILLARS_ENTRY: (u32, u32) = (770, 631);
const CLEAR_BUTTON: (u32, u32) = (917, 558);
const DRAW_BUTTON: (u32, u32) = (806, 582);
const ERASE_BUTTON: (u32, u32) = (860, 582);
const LOOK_COMBO: (u32, u32) = (800, 630);
/// The second entry of the look's list (Fill, Outline, Hidden), a row under the combo's.
const OUTLINE_ENTRY: (u32, u32) = (770, 680);

/// The Heat section's header, a row under the Pillar channel, and its first slider (Buoyancy,
/// a row under the header once it is open): where a drag starts and ends.
const HEAT_HEADER: (u32, u32) = (612, 677);
const BUOYANCY_FROM: (u32, u32) = (745, 701);
const BUOYANCY_TO: (u32, u32) = (805, 701);
/// The Particles section's header, under the open Heat section's five sliders, and its first
/// slider (Particles) once it is open.
const PARTICLES_HEADER: (u32, u32) = (620, 830);
const PARTICLES_FROM: (u32, u32) = (745, 854);
const PARTICLES_TO: (u32, u32) = (805, 854);
/// The Streamlines section's header, under the open Particles section's three sliders, and its
/// second row (Stream density, under the mode's combo) once it is open.
const STREAMLINES_HEADER: (u32, u32) = (630, 935);
const DENSITY_FROM: (u32, u32) = (745, 977);
const DENSITY_TO: (u32, u32) = (805, 977);

/// The canvas: 16:9, the window's full width, centred vertically (rows 230 to 770).
const CANVAS_TOP: f32 = 230.0;
const CANVAS_HEIGHT: f32 = 540.0;
const ASPECT: f32 = 16.0 / 9.0;

/// Window pixel of canvas point `p` (x right, y up, canvas 1 tall).
fn px(p: [f32; 2]) -> (u32, u32) {
    (
        (p[0] / ASPECT * 960.0) as u32,
        (CANVAS_TOP + (1.0 - p[1]) * CANVAS_HEIGHT) as u32,
    )
}

/// Whether a pixel shows `colour`, within the rounding of the texture's scaling.
fn shows(p: [u8; 4], colour: [u8; 3]) -> bool {
    p[..3].iter().zip(colour).all(|(&a, b)| a.abs_diff(b) <= 6)
}

/// The editor's obstacle controls end to end: a layout, the brush's Draw and Erase, the
/// outline look (through the host's gestures) and Clear, seen in the picture and in the
/// project's saved obstacles.
#[test]
fn the_panel_draws_erases_and_clears_obstacles() {
    use dyeflow::fluid::OBSTACLE_FILL_RGB8 as FILL;
    if !xvfb::tools_available() {
        return;
    }
    let display = Display::start(1280, 1100);
    let mut h = HarnessChild::start(&display, "harness_tall_window_with_panel");
    assert!(
        h.wait_for(|l| l.ends_with("READY"), Duration::from_secs(60)),
        "{:?}",
        h.reports()
    );
    let win = display
        .find_window("Dyeflow", Duration::from_secs(20))
        .expect("the editor window");
    let area = display.geometry(&win);
    assert_eq!((area.2, area.3), (960, 1000));
    let shot = || {
        display
            .screenshot()
            .crop(area.0 as u32, area.1 as u32, area.2, area.3)
    };
    let until = |what: &str, ok: &dyn Fn(&Image) -> bool| {
        let start = Instant::now();
        loop {
            let s = shot();
            if ok(&s) {
                return s;
            }
            if start.elapsed() > Duration::from_secs(15) {
                let name = format!("obstacles-failed-{}.png", what.replace(' ', "-"));
                save(&s, &name);
                panic!("{what}: not seen in 15 s (screenshot {name})");
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    let move_to = |(x, y): (u32, u32)| {
        display.xdotool(&[
            "mousemove",
            "--window",
            &win,
            &x.to_string(),
            &y.to_string(),
        ]);
        std::thread::sleep(Duration::from_millis(120));
    };
    let click = |at: (u32, u32)| {
        move_to(at);
        display.xdotool(&["click", "1"]);
        std::thread::sleep(Duration::from_millis(400));
    };
    let drag = |from: (u32, u32), to: (u32, u32)| {
        move_to(from);
        let f = |(x, y): (u32, u32)| (x as f32, y as f32);
        display.drag(&win, f(from), f(to), 30, Duration::from_millis(20));
        // Away from the canvas, so the brush outline is not in the picture.
        move_to((700, 900));
    };
    let obstacles = |h: &mut HarnessChild| -> String {
        let before = h.reports().len();
        h.send("obstacles");
        let start = Instant::now();
        loop {
            let new = h.reports()[before..]
                .iter()
                .find(|l| l.starts_with("OBSTACLES"))
                .cloned();
            if let Some(line) = new {
                return line;
            }
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "no OBSTACLES report"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    };

    // The panel is up (its title, light on dark, at the top right) and takes input.
    until("the panel", &|s| {
        let title = s.crop(580, 15, 120, 25);
        title.rgba.chunks_exact(4).filter(|p| p[0] > 150).count() > 20
    });
    std::thread::sleep(Duration::from_millis(500));

    // The Pillars layout: five discs on the middle line, the first three left of the panel.
    // (A click on a loaded machine can come before egui has drawn the list: pick again.)
    let pillars = [1.0, 2.0, 3.0].map(|k| px([ASPECT * k / 6.0, 0.5]));
    for _ in 0..3 {
        click(LAYOUT_COMBO);
        click(PILLARS_ENTRY);
        if obstacles(&mut h) == "OBSTACLES layout=pillars drawn=0" {
            break;
        }
    }
    assert_eq!(obstacles(&mut h), "OBSTACLES layout=pillars drawn=0");
    let s = until("pillars", &|s| {
        pillars.iter().all(|&(x, y)| shows(s.at(x, y), FILL))
    });
    save(&s, "obstacles-pillars.png");

    // Draw a wall along the bottom, left to right; no dye comes with it.
    let (left, right) = (px([0.1, 0.13]), px([0.9, 0.13]));
    click(DRAW_BUTTON);
    drag(left, right);
    let along = |s: &Image, from: f32, to: f32| {
        (0..=8)
            .map(|k| from + (to - from) * k as f32 / 8.0)
            .all(|x| {
                let (x, y) = px([x, 0.13]);
                shows(s.at(x, y), FILL)
            })
    };
    let s = until("the drawn wall", &|s| along(s, 0.15, 0.85));
    save(&s, "obstacles-drawn.png");
    let (dx, dy) = px([0.5, 0.3]);
    assert!(
        s.brightest_near(dx, dy, 20)[..3].iter().all(|&c| c < 60),
        "dye came with the wall"
    );
    // Saved into the project (written back within a quarter second).
    std::thread::sleep(Duration::from_millis(600));
    let report = obstacles(&mut h);
    assert!(
        report.starts_with("OBSTACLES layout=pillars drawn=") && !report.ends_with("drawn=0"),
        "{report}"
    );

    // Erase its left half.
    click(ERASE_BUTTON);
    drag(left, px([0.5, 0.13]));
    let s = until("the erased half", &|s| {
        along(s, 0.65, 0.85) && {
            let (x, y) = px([0.3, 0.13]);
            !shows(s.at(x, y), FILL)
        }
    });
    save(&s, "obstacles-erased.png");

    // Outlines instead of fill, through the host's gestures.
    for _ in 0..3 {
        click(LOOK_COMBO);
        click(OUTLINE_ENTRY);
        if h.wait_for(
            |l| l.ends_with("GESTURE end obst_look"),
            Duration::from_secs(2),
        ) {
            break;
        }
    }
    assert!(
        h.reports()
            .iter()
            .any(|l| l.ends_with("GESTURE end obst_look")),
        "no gesture for the obstacle look"
    );
    let (cx, cy) = pillars[0];
    // The pillar is 0.05 canvas heights in radius: 27 pixels.
    let s = until("outlines", &|s| {
        !shows(s.at(cx, cy), FILL) && s.brightest_near(cx + 27, cy, 3)[1] > 120
    });
    save(&s, "obstacles-outline.png");

    // Clear: nothing left, in the picture or the project.
    click(CLEAR_BUTTON);
    let s = until("cleared", &|s| {
        pillars
            .iter()
            .chain([&px([0.8, 0.13])])
            .all(|&(x, y)| s.brightest_near(x, y, 30)[..3].iter().all(|&c| c < 120))
    });
    save(&s, "obstacles-cleared.png");
    assert_eq!(obstacles(&mut h), "OBSTACLES layout=none drawn=0");

    // Heat, the section under Obstacles: opened, its first slider (Buoyancy) dragged to the
    // right raises buoyancy through the host's gestures.
    click(HEAT_HEADER);
    let s = shot();
    save(&s, "heat-open.png");
    drag(BUOYANCY_FROM, BUOYANCY_TO);
    assert!(
        h.wait_for(
            |l| l.ends_with("GESTURE end buoyancy"),
            Duration::from_secs(5)
        ),
        "no Buoyancy gesture (screenshot heat-open.png)"
    );
    assert!(
        h.reports()
            .iter()
            .any(|l| l.ends_with("GESTURE set buoyancy")),
        "the drag set no value"
    );

    // Particles, the section under Heat: opened, its first slider (Particles) dragged to the
    // right raises the sparks per note through the host's gestures.
    click(PARTICLES_HEADER);
    let s = shot();
    save(&s, "particles-open.png");
    drag(PARTICLES_FROM, PARTICLES_TO);
    assert!(
        h.wait_for(
            |l| l.ends_with("GESTURE end particles"),
            Duration::from_secs(5)
        ),
        "no Particles gesture (screenshot particles-open.png)"
    );
    assert!(
        h.reports()
            .iter()
            .any(|l| l.ends_with("GESTURE set particles")),
        "the drag set no value"
    );

    // Streamlines, the section under Particles: opened, its density slider dragged through
    // the host's gestures.
    click(STREAMLINES_HEADER);
    let s = shot();
    save(&s, "streamlines-open.png");
    drag(DENSITY_FROM, DENSITY_TO);
    assert!(
        h.wait_for(
            |l| l.ends_with("GESTURE end stream_dens"),
            Duration::from_secs(5)
        ),
        "no Stream density gesture (screenshot streamlines-open.png)"
    );
    assert!(
        h.quit(Duration::from_secs(20)),
        "the harness did not exit cleanly"
    );
}
