//! The particle fluids in the editor under Xvfb (as `editor` drives the editor): the 2D
//! liquid pools and the mouse pulls it; the 3D liquid shows its tank and the mouse turns the
//! camera.

use crate::common;
use crate::editor::{lit_fraction, mean_abs_diff, open_window, save, shoot_until};

use common::harness::{self, in_harness};
use common::xvfb::{self, Image, serial};
use std::time::Duration;

#[test]
#[ignore = "the editor harness, run by the editor tests in a child process"]
fn harness_liquid() {
    if in_harness() {
        let settings = dyeflow::params::Settings {
            fluid: dyeflow::params::FluidChoice::Particles,
            ..harness::small_cpu()
        };
        harness::run(settings, false);
    }
}

#[test]
#[ignore = "the editor harness, run by the editor tests in a child process"]
fn harness_liquid3d() {
    if in_harness() {
        let settings = dyeflow::params::Settings {
            fluid: dyeflow::params::FluidChoice::Liquid3d,
            ..harness::small_cpu()
        };
        harness::run(settings, false);
    }
}

/// The particle fluid in the editor (Settings: Fluid = Particles): held notes pour liquid that
/// falls and pools along the bottom (the lower quarter lit, the upper half dark), in the notes'
/// colours; a left-drag up from the pool pulls liquid up with it; R empties the box.
#[test]
fn the_liquid_pools_in_the_editor_and_the_mouse_pulls_it() {
    if !xvfb::tools_available() {
        return;
    }
    let _serial = serial();
    let (display, mut h, win, area) = open_window(1280, 800, "harness_liquid");
    let (_, _, ww, wh) = area;
    // Below the "Controls" button.
    let band = |s: &Image, from: f32, to: f32| {
        let (y0, y1) = (
            (from * s.height as f32) as u32,
            (to * s.height as f32) as u32,
        );
        lit_fraction(&s.crop(0, y0.max(40), s.width, y1 - y0.max(40)), 40)
    };
    h.send("notes 48,64,79");
    let pooled = |s: &Image| band(s, 0.75, 1.0) > 0.2 && band(s, 0.0, 0.5) < 0.01;
    let (shot, ok) = shoot_until(&display, area, Duration::from_secs(30), pooled);
    save(&shot, "liquid.png");
    assert!(
        ok,
        "the liquid did not pool: lower quarter {} lit, upper half {}",
        band(&shot, 0.75, 1.0),
        band(&shot, 0.0, 0.5)
    );
    h.send("off");
    std::thread::sleep(Duration::from_millis(1500));
    let before = display
        .screenshot()
        .crop(area.0.max(0) as u32, area.1.max(0) as u32, ww, wh);
    // A slow left-drag from inside the pool up to the middle: the pull lifts liquid.
    let x = ww as f32 * 0.5;
    display.drag(
        &win,
        (x, wh as f32 * 0.95),
        (x, wh as f32 * 0.45),
        60,
        Duration::from_millis(30),
    );
    let (shot, ok) = shoot_until(&display, area, Duration::from_secs(5), |s| {
        band(s, 0.3, 0.7) > band(&before, 0.3, 0.7) + 0.01
    });
    save(&shot, "liquid_pulled.png");
    assert!(
        ok,
        "the pull lifted nothing: middle band {} lit, {} before",
        band(&shot, 0.3, 0.7),
        band(&before, 0.3, 0.7)
    );
    display.xdotool(&["mousemove", "--window", &win, "100", "100"]);
    display.xdotool(&["key", "r"]);
    let (shot, ok) = shoot_until(&display, area, Duration::from_secs(10), |s| {
        band(s, 0.0, 1.0) < 0.002
    });
    assert!(ok, "R did not empty the box: {} lit", band(&shot, 0.0, 1.0));
    assert!(
        h.quit(Duration::from_secs(20)),
        "the harness did not exit cleanly"
    );
}

/// Fraction of a picture's pixels of a strong colour (its largest channel over its smallest by
/// more than `by`).
fn coloured_fraction(image: &Image, by: u8) -> f32 {
    let n = image
        .rgba
        .chunks_exact(4)
        .filter(|p| {
            let (hi, lo) = (p[..3].iter().max(), p[..3].iter().min());
            matches!((hi, lo), (Some(h), Some(l)) if h - l > by)
        })
        .count();
    n as f32 / (image.width * image.height) as f32
}

/// The 3D liquid in the editor (Settings: Fluid = Liquid 3D): the tank on its floor shows at
/// once (a clear pool: little strong colour), held notes dye the water, and a left-drag turns
/// the camera: the picture changes far more than the moving water changes it on its own, and
/// stays turned.
#[test]
fn the_3d_liquid_shows_its_tank_and_the_mouse_turns_the_camera() {
    if !xvfb::tools_available() {
        return;
    }
    let _serial = serial();
    let (display, mut h, win, area) = open_window(1280, 800, "harness_liquid3d");
    let (_, _, ww, wh) = area;
    let below_button = |s: &Image| s.crop(0, 40, s.width, s.height - 40);
    let (shot, ok) = shoot_until(&display, area, Duration::from_secs(30), |s| {
        lit_fraction(&below_button(s), 30) > 0.3
    });
    save(&shot, "liquid3d.png");
    assert!(
        ok,
        "no tank: {} lit",
        lit_fraction(&below_button(&shot), 30)
    );
    let clear = coloured_fraction(&shot, 90);
    h.send("notes 48,64,79");
    let (shot, ok) = shoot_until(&display, area, Duration::from_secs(30), |s| {
        coloured_fraction(s, 90) > clear + 0.01
    });
    save(&shot, "liquid3d_notes.png");
    assert!(
        ok,
        "the notes did not dye the water: {} strongly coloured, {clear} before",
        coloured_fraction(&shot, 90)
    );
    h.send("off");
    std::thread::sleep(Duration::from_millis(1500));
    let grab = || {
        display
            .screenshot()
            .crop(area.0.max(0) as u32, area.1.max(0) as u32, ww, wh)
    };
    let a = grab();
    std::thread::sleep(Duration::from_millis(500));
    let b = grab();
    let drift = mean_abs_diff(&a, &b);
    // A slow drag right to left across the middle: the camera goes round the tank.
    display.drag(
        &win,
        (ww as f32 * 0.8, wh as f32 * 0.5),
        (ww as f32 * 0.2, wh as f32 * 0.5),
        40,
        Duration::from_millis(30),
    );
    std::thread::sleep(Duration::from_millis(800));
    let turned = grab();
    save(&turned, "liquid3d_turned.png");
    let change = mean_abs_diff(&b, &turned);
    assert!(
        change > 4.0 * drift.max(0.5),
        "the drag did not turn the camera: {change} against {drift} on its own"
    );
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        mean_abs_diff(&b, &grab()) > 4.0 * drift.max(0.5),
        "the camera went back"
    );
    assert!(
        h.quit(Duration::from_secs(20)),
        "the harness did not exit cleanly"
    );
}
