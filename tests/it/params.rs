//! Parameters at the `Params` level: stable ids, defaults, ranges and normalised round trips.

use dyeflow::params::DyeflowParams;
use nice_plug::prelude::*;
use std::collections::BTreeMap;

/// Every parameter id with its default plain value (enums by variant index, bools as 0/1).
/// Hosts store automation and projects by these ids: this list may grow, never change.
const EXPECTED: &[(&str, f32)] = &[
    ("bypass", 0.0),
    ("visc", 0.0),
    ("dye_diff", 0.0),
    ("vel_diss", 0.2),
    ("dye_diss", 0.5),
    ("adapt_dye", 1.0),
    ("vort", 0.3),
    ("p_iters", 20.0),
    ("speed", 1.0),
    ("radius", 0.03),
    ("force", 1.0),
    ("amount", 1.0),
    ("react", 1.0),
    ("attack", 5.0),
    ("release", 200.0),
    ("mapping", 2.0), // Rows by channel (index 2)
    ("pulse", 0.0),
    ("drum_ch", 10.0),
    ("colour", 0.0),
    ("bright", 1.0),
    ("sat", 1.0),
    ("hue", 0.0),
    ("display", 1.0),
    ("bloom", 1.0),
    ("bloom_thr", 0.3),
    ("bloom_knee", 0.5),
    ("bloom_rad", 0.75),
    ("rays", 0.6),
    ("shade", 0.35),
    ("light_dir", 120.0),
    ("palette", 0.0),
    ("bg_hue", 235.0),
    ("bg_sat", 0.7),
    ("bg_bright", 0.04),
    ("vibrance", 0.75),
    ("low_amt", 1.0),
    ("mid_amt", 1.0),
    ("high_amt", 1.0),
    ("chroma_amt", 1.0),
    ("pillar_ch", 0.0),
    ("obst_look", 0.0), // Fill
    ("buoyancy", 0.0),
    ("weight", 0.0),
    ("cooling", 0.5),
    ("ambient", 0.0),
    ("lift_dir", 0.0),
    ("particles", 0.0),
    ("ptcl_life", 3.0),
    ("ptcl_glow", 1.0),
    ("stream", 0.0), // Off
    ("stream_dens", 32.0),
    ("stream_len", 0.3),
    ("stream_steps", 16.0),
    ("liq_grav", 1.2),
    ("liq_tilt", 0.0),
    ("liq_sway", 15.0),
    ("liq_stiff", 1.0),
    ("liq_near", 1.0),
    ("liq_visc", 0.06),
    ("liq_bounce", 0.95),
    ("liq_count", 6000.0),
    ("liq_look", 0.0), // Surface
    ("liq_drag", 0.2),
    ("cam_orbit", 24.0),
    ("cam_height", 22.0),
    ("cam_dist", 1.55),
    ("l3_float", 3.0),
];

fn params() -> BTreeMap<String, ParamPtr> {
    let p: &'static DyeflowParams = Box::leak(Box::new(DyeflowParams::default()));
    p.param_map()
        .into_iter()
        .map(|(id, ptr, _group)| (id, ptr))
        .collect()
}

/// The plain value behind a normalised one, as f32 for every parameter kind.
///
/// # Safety
///
/// The params object `ptr` was made from must still be alive.
unsafe fn plain(ptr: ParamPtr, normalized: f32) -> f32 {
    // SAFETY: the caller guarantees (see `# Safety`) that the params object `ptr` was made from
    // is still alive, so dereferencing its parameter pointer is valid.
    unsafe {
        match ptr {
            ParamPtr::FloatParam(p) => (*p).preview_plain(normalized),
            ParamPtr::IntParam(p) => (*p).preview_plain(normalized) as f32,
            ParamPtr::BoolParam(p) => (*p).preview_plain(normalized) as u8 as f32,
            ParamPtr::EnumParam(p) => (*p).preview_plain(normalized) as f32,
        }
    }
}

#[test]
fn ids_are_exactly_the_stable_list() {
    let ids: Vec<String> = params().into_keys().collect();
    let mut expected: Vec<String> = EXPECTED.iter().map(|(id, _)| id.to_string()).collect();
    expected.sort();
    assert_eq!(ids, expected);
}

#[test]
fn defaults_are_as_documented() {
    let params = params();
    for (id, default) in EXPECTED {
        let ptr = params[*id];
        // SAFETY: `ptr` comes from `params()`, which leaks its `DyeflowParams`, so the parameter
        // it points to lives for the rest of the process, as `plain` and
        // `default_normalized_value` require.
        let got = unsafe { plain(ptr, ptr.default_normalized_value()) };
        approx::assert_relative_eq!(got, *default, max_relative = 1e-5);
        // The current value starts at the default.
        // SAFETY: `ptr` points into the leaked `DyeflowParams` from `params()`, alive for the rest
        // of the process.
        unsafe {
            assert_eq!(
                ptr.unmodulated_normalized_value(),
                ptr.default_normalized_value()
            )
        };
    }
}

#[test]
fn ranges_have_the_documented_ends() {
    let params = params();
    let ends: &[(&str, f32, f32)] = &[
        ("visc", 0.0, 10_000.0),
        ("dye_diff", 0.0, 1_000.0),
        ("vel_diss", 0.0, 10.0),
        ("dye_diss", 0.0, 10.0),
        ("adapt_dye", 0.0, 1.0),
        ("vort", 0.0, 1.0),
        ("p_iters", 2.0, 200.0),
        ("speed", 0.0, 4.0),
        ("radius", 0.002, 0.25),
        ("force", 0.0, 4.0),
        ("amount", 0.0, 4.0),
        ("react", 0.0, 2.0),
        ("attack", 0.1, 200.0),
        ("release", 5.0, 5_000.0),
        ("mapping", 0.0, 2.0),
        ("pulse", 0.0, 1.0),
        ("drum_ch", 0.0, 16.0),
        ("colour", 0.0, 3.0),
        ("bright", 0.0, 3.0),
        ("sat", 0.0, 1.0),
        ("hue", 0.0, 360.0),
        ("display", 0.0, 1.0),
        ("bypass", 0.0, 1.0),
        ("bloom", 0.0, 2.0),
        ("bloom_thr", 0.0, 8.0),
        ("bloom_knee", 0.0, 1.0),
        ("bloom_rad", 0.0, 1.0),
        ("rays", 0.0, 2.0),
        ("shade", 0.0, 1.0),
        ("light_dir", 0.0, 360.0),
        ("palette", 0.0, 5.0),
        ("bg_hue", 0.0, 360.0),
        ("bg_sat", 0.0, 1.0),
        ("bg_bright", 0.0, 0.5),
        ("vibrance", 0.0, 1.0),
        ("low_amt", 0.0, 4.0),
        ("mid_amt", 0.0, 4.0),
        ("high_amt", 0.0, 4.0),
        ("chroma_amt", 0.0, 4.0),
        ("pillar_ch", 0.0, 16.0),
        ("obst_look", 0.0, 2.0),
        ("buoyancy", 0.0, 20.0),
        ("weight", 0.0, 20.0),
        ("cooling", 0.0, 10.0),
        ("ambient", -1.0, 1.0),
        ("lift_dir", -180.0, 180.0),
        ("particles", 0.0, 2000.0),
        ("ptcl_life", 0.2, 20.0),
        ("ptcl_glow", 0.0, 4.0),
        ("stream", 0.0, 2.0),
        ("stream_dens", 4.0, 128.0),
        ("stream_len", 0.01, 2.0),
        ("stream_steps", 1.0, 64.0),
        ("liq_grav", 0.0, 10.0),
        ("liq_tilt", -180.0, 180.0),
        ("liq_sway", 0.0, 90.0),
        ("liq_stiff", 0.1, 3.0),
        ("liq_near", 0.1, 3.0),
        ("liq_visc", 0.0, 3.0),
        ("liq_bounce", 0.0, 1.0),
        ("liq_count", 500.0, 50_000.0),
        ("liq_look", 0.0, 1.0),
        ("liq_drag", 0.0, 10.0),
        ("cam_orbit", -180.0, 180.0),
        ("cam_height", -5.0, 85.0),
        ("cam_dist", 0.8, 4.0),
        ("l3_float", 0.0, 8.0),
    ];
    assert_eq!(ends.len(), EXPECTED.len());
    for (id, lo, hi) in ends {
        let ptr = params[*id];
        // SAFETY: `ptr` points into the leaked `DyeflowParams` from `params()`, alive for the rest
        // of the process, as `plain` requires.
        unsafe {
            approx::assert_relative_eq!(plain(ptr, 0.0), *lo, max_relative = 1e-5);
            approx::assert_relative_eq!(plain(ptr, 1.0), *hi, max_relative = 1e-5);
            // Out-of-range normalised values clamp to the ends.
            approx::assert_relative_eq!(plain(ptr, -3.0), *lo, max_relative = 1e-5);
            approx::assert_relative_eq!(plain(ptr, 7.0), *hi, max_relative = 1e-5);
        }
    }
}

#[test]
fn normalised_values_round_trip() {
    for (id, ptr) in params() {
        for i in 0..=1000 {
            let n = i as f32 / 1000.0;
            // SAFETY: `params()` leaks its `DyeflowParams`, so the object behind every `ParamPtr`
            // lives for the rest of the process. Each `p` is the raw pointer of one such
            // parameter, so dereferencing it is valid.
            unsafe {
                match ptr {
                    // Plain -> normalised -> plain comes back within a millionth of the range.
                    // (Normalised -> plain -> normalised cannot be exact at the flat end of a
                    // strongly skewed range: 0.001^4 of the range is below f32 resolution.)
                    ParamPtr::FloatParam(p) => {
                        let v = (*p).preview_plain(n);
                        let back = (*p).preview_plain((*p).preview_normalized(v));
                        let span = (*p).preview_plain(1.0) - (*p).preview_plain(0.0);
                        assert!((back - v).abs() <= 1e-6 * span, "{id}: {v} -> {back}");
                        if n >= 0.05 {
                            let n2 = (*p).preview_normalized(v);
                            assert!((n2 - n).abs() < 1e-4, "{id}: {n} -> {n2}");
                        }
                    }
                    ParamPtr::IntParam(p) => {
                        let v = (*p).preview_plain(n);
                        assert_eq!((*p).preview_plain((*p).preview_normalized(v)), v, "{id}");
                    }
                    ParamPtr::EnumParam(p) => {
                        let v = (*p).preview_plain(n);
                        assert_eq!((*p).preview_plain((*p).preview_normalized(v)), v, "{id}");
                    }
                    ParamPtr::BoolParam(p) => {
                        let v = (*p).preview_plain(n);
                        assert_eq!((*p).preview_plain((*p).preview_normalized(v)), v, "{id}");
                    }
                }
            }
        }
    }
}

#[test]
fn value_strings_are_readable_and_carry_units() {
    let params = params();
    // SAFETY: `params()` leaks its `DyeflowParams`, so the object behind every `ParamPtr` lives
    // for the rest of the process.
    let text = |id: &str, n: f32| unsafe { params[id].normalized_value_to_string(n, true) };
    // SAFETY: `params()` leaks its `DyeflowParams`, so the object behind every `ParamPtr` lives
    // for the rest of the process. `p` is the raw pointer of one such parameter.
    let at = |id: &str, plain: f32| unsafe {
        let ParamPtr::FloatParam(p) = params[id] else {
            panic!("{id} is not a float")
        };
        (*p).preview_normalized(plain)
    };
    assert_eq!(text("visc", at("visc", 80.0)), "80.0 mm²/s");
    assert_eq!(text("vel_diss", at("vel_diss", 0.2)), "0.200 /s");
    assert_eq!(text("radius", at("radius", 0.03)), "3.00 %");
    assert_eq!(text("attack", at("attack", 5.0)), "5.00 ms");
    assert_eq!(text("hue", at("hue", 90.0)), "90.0°");
    assert_eq!(text("bypass", 1.0), "Bypassed");
    assert_eq!(text("mapping", 0.5), "Circle of pitch");
    assert_eq!(text("mapping", 1.0), "Rows by channel");
    assert_eq!(text("colour", 1.0 / 3.0), "Density hue");
    assert_eq!(text("colour", 1.0), "Temperature");
    assert_eq!(text("buoyancy", at("buoyancy", 2.0)), "2.00 /s²");
    assert_eq!(text("lift_dir", at("lift_dir", 90.0)), "90°");
    assert_eq!(text("display", 0.0), "Legacy");
    assert_eq!(text("display", 1.0), "Filmic");
    assert_eq!(text("p_iters", 0.0), "2");
    assert_eq!(text("drum_ch", 0.0), "Off");
    assert_eq!(text("drum_ch", 10.0 / 16.0), "10");
    assert_eq!(text("pillar_ch", 0.0), "Off");
    assert_eq!(text("pillar_ch", 1.0), "16");
    assert_eq!(text("obst_look", 0.0), "Fill");
    assert_eq!(text("obst_look", 0.5), "Outline");
    assert_eq!(text("obst_look", 1.0), "Hidden");
    assert_eq!(text("palette", 0.0), "Off");
    assert_eq!(text("palette", 0.2), "Fire");
    assert_eq!(text("palette", 1.0), "Mono");
    assert_eq!(text("bloom", at("bloom", 0.6)), "60 %");
    assert_eq!(text("light_dir", at("light_dir", 120.0)), "120°");
    assert_eq!(text("bg_bright", at("bg_bright", 0.04)), "4 %");
}

#[test]
fn bypass_is_the_host_bypass() {
    let params = params();
    // SAFETY: `params()` leaks its `DyeflowParams`, so the object behind every `ParamPtr` lives
    // for the rest of the process.
    let flags = unsafe { params["bypass"].flags() };
    assert!(flags.contains(ParamFlags::BYPASS));
}
