//! Factory presets: a handful of looks built into the binary, in the preset format
//! ([`super::apply`] reads them like a file). The editor's preset menu lists them and
//! `dyeflow render --preset NAME` picks one by name.
//!
//! Each names only the physics and look knobs it changes; every parameter it leaves out takes
//! its default ([`load`] starts from a fresh parameter set), so a knob added later (bloom, a
//! palette) can join a preset by adding one entry, and the older presets keep its default.
//! Of the settings a preset may name only the fluid, and only the 3D liquid's presets do
//! (those looks exist only in it): a factory preset never changes the grid, the canvas or the
//! solver, and the grid's looks leave the fluid as it is.
//!
//! Units as in the parameter table: viscosity and diffusion in mm²/s (canvas 1 m tall),
//! dissipation in /s, radius a fraction of the canvas height, force, amount and brightness as
//! multipliers (1 = 100 %), hue shift in degrees. Density hue colours by the dye's density
//! (0.35 turn per unit: thin dye red, thicker orange, yellow, green), whatever the notes'
//! colours, which is how Fire and Honey keep to warm hues.

use super::{PresetError, PresetReport};
use crate::params::{DyeflowParams, STATE_VERSION, STATE_VERSION_KEY};

/// A preset built into the binary.
#[derive(Clone, Copy, Debug)]
pub struct FactoryPreset {
    /// Its name, as the menu shows it and `--preset` takes it (any case).
    pub name: &'static str,
    /// One line for the menu's tooltip and the README.
    pub description: &'static str,
    /// The parameters it sets, as the `"params"` object of a preset (plain values).
    pub params: &'static str,
    /// The fluid it needs, if it needs one (its settings name only that).
    pub fluid: Option<&'static str>,
}

/// The factory presets, in menu order.
pub const FACTORY_PRESETS: [FactoryPreset; 9] = [
    FactoryPreset {
        name: "Ink",
        description: "Dark, dense dye that lingers and curls slowly, like ink in water",
        params: r#"{
            "visc": 2.0, "dye_diff": 0.0, "vel_diss": 0.35, "dye_diss": 0.15,
            "vort": 0.35, "radius": 0.035, "force": 0.7, "amount": 1.5,
            "colour": "dye", "bright": 0.3, "sat": 1.0, "hue": 0.0
        }"#,
        fluid: None,
    },
    FactoryPreset {
        name: "Neon",
        description: "Thin, saturated, glowing streaks that whip and fade fast, shedding sparks",
        params: r#"{
            "visc": 0.0, "dye_diff": 0.0, "vel_diss": 0.3, "dye_diss": 0.6,
            "vort": 0.7, "radius": 0.02, "force": 1.6, "amount": 2.0,
            "colour": "dye", "bright": 2.5, "sat": 1.0, "hue": 0.0,
            "particles": 150.0, "ptcl_life": 2.0, "ptcl_glow": 1.5
        }"#,
        fluid: None,
    },
    FactoryPreset {
        name: "Smoke",
        description: "Pale grey smoke rising from the bottom and blurring as it goes",
        params: r#"{
            "visc": 5.0, "dye_diff": 250.0, "vel_diss": 0.12, "dye_diss": 0.3,
            "vort": 0.55, "radius": 0.05, "force": 1.6, "amount": 1.5,
            "mapping": "keyboard",
            "colour": "dye", "bright": 1.2, "sat": 0.12, "hue": 0.0, "vibrance": 0.0,
            "buoyancy": 1.5, "cooling": 0.3
        }"#,
        fluid: None,
    },
    FactoryPreset {
        name: "Fire",
        description: "Red, orange and yellow flames, turbulent and quick to burn out",
        params: r#"{
            "visc": 0.0, "dye_diff": 5.0, "vel_diss": 0.35, "dye_diss": 1.1,
            "vort": 0.85, "radius": 0.04, "force": 1.8, "amount": 0.6,
            "colour": "density", "bright": 2.2, "sat": 0.95, "hue": 0.0,
            "buoyancy": 4.0, "cooling": 1.5
        }"#,
        fluid: None,
    },
    FactoryPreset {
        name: "Honey",
        description: "Slow, thick golden swirls that ooze and hold their shape",
        params: r#"{
            "visc": 1500.0, "dye_diff": 0.0, "vel_diss": 0.5, "dye_diss": 0.4,
            "vort": 0.0, "radius": 0.06, "force": 2.5, "amount": 0.2,
            "colour": "density", "bright": 1.5, "sat": 0.85, "hue": 25.0
        }"#,
        fluid: None,
    },
    FactoryPreset {
        name: "Currents",
        description: "The flow made visible: speed-coloured streamlines and sparks over faint dye",
        params: r#"{
            "visc": 0.5, "dye_diff": 0.0, "vel_diss": 0.25, "dye_diss": 0.5,
            "vort": 0.6, "radius": 0.05, "force": 1.6, "amount": 0.8,
            "colour": "dye", "bright": 0.35, "sat": 0.8, "hue": 0.0,
            "stream": "overlay", "stream_dens": 40, "stream_len": 0.25, "stream_steps": 16,
            "particles": 80.0, "ptcl_life": 3.0, "ptcl_glow": 1.5
        }"#,
        fluid: None,
    },
    FactoryPreset {
        name: "Ripple Tank",
        description: "Clear water in a glass tank with toy balls bobbing; notes drop in and ripple",
        params: r#"{
            "l3_float": 3, "liq_sway": 6.0, "liq_drag": 0.35,
            "cam_orbit": 18.0, "cam_height": 26.0, "cam_dist": 1.5,
            "force": 0.8, "amount": 1.0, "bright": 1.1, "bloom": 0.8
        }"#,
        fluid: Some("liquid3d"),
    },
    FactoryPreset {
        name: "Storm",
        description: "The tank heaves with the beat; drums slam the water and throw spray",
        params: r#"{
            "l3_float": 6, "liq_sway": 35.0, "liq_drag": 0.05, "liq_visc": 0.02,
            "cam_orbit": -30.0, "cam_height": 12.0, "cam_dist": 1.25,
            "force": 1.8, "radius": 0.05, "amount": 1.5, "bright": 1.3, "bloom": 1.4
        }"#,
        fluid: Some("liquid3d"),
    },
    FactoryPreset {
        name: "Syrup",
        description: "Thick, slow liquid seen from above, folding the notes' colours in",
        params: r#"{
            "l3_float": 2, "liq_visc": 1.5, "liq_drag": 0.6, "liq_sway": 10.0,
            "cam_orbit": 35.0, "cam_height": 50.0, "cam_dist": 1.35,
            "force": 1.2, "radius": 0.06, "amount": 2.0, "sat": 1.0, "vibrance": 1.0
        }"#,
        fluid: Some("liquid3d"),
    },
];

/// The factory presets' names, comma-separated (for messages).
pub fn names() -> String {
    FACTORY_PRESETS
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The factory preset called `name` (any case, surrounding spaces ignored).
pub fn find(name: &str) -> Option<&'static FactoryPreset> {
    let name = name.trim();
    FACTORY_PRESETS
        .iter()
        .find(|p| p.name.eq_ignore_ascii_case(name))
}

impl FactoryPreset {
    /// The preset as JSON in the plugin's state format, stamped with this Dyeflow's state
    /// version: it is written for this version's parameters, so no migration applies to it.
    pub fn json(&self) -> String {
        let settings = self
            .fluid
            .map(|f| format!(r#", "settings": {{"fluid": "{f}"}}"#))
            .unwrap_or_default();
        format!(
            r#"{{"params": {}, "fields": {{"{STATE_VERSION_KEY}": "{STATE_VERSION}"{settings}}}}}"#,
            self.params
        )
    }
}

/// Set `params` to `preset`: the values it names, defaults for every other parameter (the
/// settings stay).
pub fn load(preset: &FactoryPreset, params: &DyeflowParams) -> Result<PresetReport, PresetError> {
    super::load(preset.json().as_bytes(), params)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nice_plug::prelude::Params;

    fn normalized(p: &DyeflowParams) -> Vec<(String, f32)> {
        p.param_map()
            .into_iter()
            // SAFETY: the pointers come from `p`, alive for this closure.
            .map(|(id, ptr, _)| (id, unsafe { ptr.unmodulated_normalized_value() }))
            .collect()
    }

    /// Each factory preset loads with no unknown id and no error, changes at least four
    /// parameters from their defaults, leaves the settings alone but for the fluid the 3D
    /// liquid's name, and differs from every other.
    #[test]
    fn every_factory_preset_loads_and_is_its_own() {
        let defaults = normalized(&DyeflowParams::default());
        let mut seen: Vec<Vec<(String, f32)>> = Vec::new();
        for preset in &FACTORY_PRESETS {
            let params = DyeflowParams::default();
            let report = load(preset, &params).unwrap_or_else(|e| panic!("{}: {e}", preset.name));
            assert!(
                report.unknown.is_empty(),
                "{}: {:?}",
                preset.name,
                report.unknown
            );
            assert_eq!(
                report.modulation_notes,
                Vec::<String>::new(),
                "{}",
                preset.name
            );
            assert_eq!(report.settings, preset.fluid.is_some(), "{}", preset.name);
            if let Some(patch) = &report.patch {
                assert_eq!(patch.names(), ["fluid"], "{}", preset.name);
            }
            let values = normalized(&params);
            let changed: Vec<&str> = values
                .iter()
                .zip(&defaults)
                .filter(|((_, a), (_, b))| (a - b).abs() > 1e-4)
                .map(|((id, _), _)| id.as_str())
                .collect();
            assert!(changed.len() >= 4, "{}: only {changed:?}", preset.name);
            assert!(!changed.contains(&"bypass"), "{}", preset.name);
            let fluid = match preset.fluid {
                Some("liquid3d") => crate::params::FluidChoice::Liquid3d,
                Some(other) => panic!("{}: {other}", preset.name),
                None => crate::params::FluidChoice::Grid,
            };
            assert_eq!(
                params.settings(),
                crate::params::Settings {
                    fluid,
                    ..crate::params::Settings::default()
                }
            );
            for other in &seen {
                assert_ne!(&values, other, "{} repeats an earlier preset", preset.name);
            }
            seen.push(values);
            assert!(!preset.description.is_empty());
        }
    }

    /// Loading a preset over a tuned parameter set puts every knob it does not name back to
    /// its default; the character each is meant to have shows in its knobs.
    #[test]
    fn a_factory_preset_is_a_whole_look() {
        let params = DyeflowParams::default();
        crate::preset::apply(br#"{"params": {"pulse": true, "p_iters": 80}}"#, &params)
            .expect("a tuned set");
        let honey = find(" honey ").expect("found in any case");
        load(honey, &params).expect("loads");
        assert!(!params.beat_pulse.value(), "unnamed: back to the default");
        assert_eq!(params.pressure_iterations.value(), 20);
        assert!(params.viscosity.value() >= 1000.0, "Honey is viscous");
        let at = |name: &str| {
            let p = DyeflowParams::default();
            load(find(name).expect("a factory preset"), &p).expect("loads");
            p
        };
        let (ink, neon, smoke, fire) = (at("Ink"), at("Neon"), at("Smoke"), at("Fire"));
        assert!(smoke.dye_diffusion.value() > 100.0, "Smoke diffuses");
        assert_eq!(
            smoke.mapping_mode.value(),
            crate::mapping::MappingMode::Keyboard
        );
        assert!(
            ink.brightness.value() < 0.5 && ink.dye_amount.value() >= 1.5,
            "Ink: dark, dense"
        );
        assert!(neon.saturation.value() == 1.0 && neon.brightness.value() > 2.0);
        assert!(fire.vorticity.value() > 0.7, "Fire is turbulent");
        // Flames and smoke rise on their heat; Fire's cools faster (flames burn out).
        assert!(fire.heat.buoyancy.value() > smoke.heat.buoyancy.value());
        assert!(smoke.heat.buoyancy.value() > 0.0);
        assert!(fire.heat.cooling.value() > smoke.heat.cooling.value());
        assert_eq!(ink.heat.buoyancy.value(), 0.0, "unnamed: no heat");
        assert!(neon.particles.amount.value() > 0.0, "Neon sheds sparks");
        assert_eq!(ink.particles.amount.value(), 0.0, "unnamed: no particles");
        let currents = at("Currents");
        assert_eq!(
            currents.streamlines.mode.value(),
            crate::fluid::StreamlineMode::Overlay,
            "Currents shows the flow's lines"
        );
        assert_eq!(currents.streamlines.density.value(), 40);
        assert_eq!(
            ink.streamlines.mode.value(),
            crate::fluid::StreamlineMode::Off,
            "unnamed: no lines"
        );
        // The 3D liquid's: floaters in each; Storm sways hardest and has the most of them,
        // Syrup is the thickest and looks down from highest.
        let (ripple, storm, syrup) = (at("Ripple Tank"), at("Storm"), at("Syrup"));
        for p in [&ripple, &storm, &syrup] {
            assert_eq!(p.settings().fluid, crate::params::FluidChoice::Liquid3d);
            assert!(p.liquid.floaters.value() > 0);
        }
        assert!(storm.liquid.sway.value() > ripple.liquid.sway.value());
        assert!(storm.liquid.floaters.value() > ripple.liquid.floaters.value());
        assert!(syrup.liquid.viscosity.value() > 10.0 * ripple.liquid.viscosity.value());
        assert!(syrup.liquid.height.value() > storm.liquid.height.value());
        assert!(find("Lava").is_none());
        assert_eq!(
            names(),
            "Ink, Neon, Smoke, Fire, Honey, Currents, Ripple Tank, Storm, Syrup"
        );
    }
}
