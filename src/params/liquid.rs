//! The particle fluid's parameters (the liquid: gravity and its tilt, how the music sways it,
//! stiffness, near pressure, viscosity, bounce, how many particles and how they are drawn, and
//! for the 3D liquid its camera: orbit, height and distance),
//! nested into [`super::DyeflowParams`] under the group "Liquid". The continuous ones are
//! automatable and smoothed with the physics knobs; the budget and the look apply at once.
//!
//! The grid fluid ignores them. The defaults are the source's tuned values plus a little sway
//! and drag, which the source has not; a project saved before them (state version 8 or older)
//! loads as it was: no sway, no drag, and the tilt its liquid had then, which followed the
//! heat's lift direction ([`migrate_to_v9`]).

use super::effects::{share, unit_range};
use super::heat::{LIFT_ANGLE_ID, number};
use super::{dissipation_range, s2v_number};
use crate::fluid::{LiquidStyle, Orbit};
use nice_plug::plugin::{ParamValue, PluginState};
use nice_plug::prelude::*;
use std::sync::Arc;

/// Ids written by [`migrate_to_v9`].
pub const SWAY_ID: &str = "liq_sway";
pub const DRAG_ID: &str = "liq_drag";
pub const TILT_ID: &str = "liq_tilt";
/// Id written by [`migrate_to_v11`].
pub const FLOATERS_ID: &str = "l3_float";

/// Most particles the budget allows: the CPU steps 16 384 in about 5 ms on two cores, so
/// 50 000 is about as many as it can move three times a frame at 30 frames a second.
pub const MAX_BUDGET: i32 = 50_000;
/// Fewest.
pub const MIN_BUDGET: i32 = 500;

/// The liquid's parameters.
#[derive(Params)]
pub struct LiquidParams {
    /// Gravity, canvas heights/s² (the source's 12 box units/s² in its 10-unit box).
    #[id = "liq_grav"]
    pub gravity: FloatParam,
    /// Which way gravity pulls: degrees clockwise from straight down (90: to the left).
    #[id = "liq_tilt"]
    pub tilt: FloatParam,
    /// How far the music swings the tilt, degrees: the audio's level, swinging with the beat
    /// (left on one, right on the next) while the host plays, slowly otherwise.
    #[id = "liq_sway"]
    pub sway: FloatParam,
    /// The pressure's stiffness, as a fraction of the source's (100 %): stiffer keeps the
    /// liquid closer to its rest density but needs its short sub-steps.
    #[id = "liq_stiff"]
    pub stiffness: FloatParam,
    /// Near pressure, as a fraction of the source's: it keeps particles from clumping at the
    /// surface.
    #[id = "liq_near"]
    pub near: FloatParam,
    /// How strongly neighbours' velocities even out, per second: water near 0.06, syrup above
    /// 1.
    #[id = "liq_visc"]
    pub viscosity: FloatParam,
    /// The speed a bounce off a wall or an obstacle keeps.
    #[id = "liq_bounce"]
    pub bounce: FloatParam,
    /// Drag, per second: the velocity decays as `exp(-drag t)`, so a sloshing pool settles.
    #[id = "liq_drag"]
    pub drag: FloatParam,
    /// Most particles: a note into a full box recycles the oldest. Not automatable (a change
    /// drops or makes room for particles), nor is the look.
    #[id = "liq_count"]
    pub budget: IntParam,
    /// Smooth surface or discs.
    #[id = "liq_look"]
    pub style: EnumParam<LiquidStyle>,
    /// The 3D liquid's camera: degrees round the tank from its front.
    #[id = "cam_orbit"]
    pub orbit: FloatParam,
    /// Degrees above the horizon.
    #[id = "cam_height"]
    pub height: FloatParam,
    /// Distance from the tank, in tank widths.
    #[id = "cam_dist"]
    pub distance: FloatParam,
    /// Balls floating in the 3D liquid, 0 to 8. Not automatable (a change drops balls in or
    /// takes them out).
    #[id = "l3_float"]
    pub floaters: IntParam,
}

/// The camera's height, degrees above the horizon.
pub fn height_range() -> FloatRange {
    FloatRange::Linear {
        min: -5.0,
        max: 85.0,
    }
}

/// The camera's distance, tank widths.
pub fn distance_range() -> FloatRange {
    FloatRange::Skewed {
        min: 0.8,
        max: 4.0,
        factor: FloatRange::skew_factor(-1.0),
    }
}

/// Gravity, canvas heights/s².
pub fn gravity_range() -> FloatRange {
    FloatRange::Skewed {
        min: 0.0,
        max: 10.0,
        factor: FloatRange::skew_factor(-1.0),
    }
}

/// Tilt, degrees.
pub fn tilt_range() -> FloatRange {
    FloatRange::Linear {
        min: -180.0,
        max: 180.0,
    }
}

/// Sway, degrees.
pub fn sway_range() -> FloatRange {
    FloatRange::Linear {
        min: 0.0,
        max: 90.0,
    }
}

/// Stiffness and near pressure, multiples of the source's.
pub fn pressure_range() -> FloatRange {
    FloatRange::Linear { min: 0.1, max: 3.0 }
}

/// Viscosity, per second.
pub fn viscosity_range() -> FloatRange {
    FloatRange::Skewed {
        min: 0.0,
        max: 3.0,
        factor: FloatRange::skew_factor(-2.0),
    }
}

/// The particle budget.
pub fn budget_range() -> IntRange {
    IntRange::Linear {
        min: MIN_BUDGET,
        max: MAX_BUDGET,
    }
}

/// Whole degrees; a value that rounds to 0 reads "0", never "-0" (which reads back as 0 and
/// then writes "0": a host round-tripping the text would see it change).
fn degrees(name: &str, default: f32, range: FloatRange) -> FloatParam {
    FloatParam::new(name, default, range)
        .with_unit("°")
        .with_value_to_string(Arc::new(|v| {
            let r = v.round();
            format!("{:.0}", if r == 0.0 { 0.0 } else { r })
        }))
        .with_string_to_value(s2v_number())
}

impl Default for LiquidParams {
    fn default() -> Self {
        Self {
            gravity: number("Gravity", 1.2, gravity_range(), " /s²"),
            tilt: degrees("Tilt", 0.0, tilt_range()),
            sway: degrees("Sway", 15.0, sway_range()),
            stiffness: share("Stiffness", 1.0, pressure_range()),
            near: share("Near pressure", 1.0, pressure_range()),
            viscosity: number("Liquid viscosity", 0.06, viscosity_range(), " /s"),
            // A share 0..1, and a decay rate like the grid's dissipation.
            bounce: share("Bounce", 0.95, unit_range()),
            drag: number("Liquid drag", 0.2, dissipation_range(), " /s"),
            budget: IntParam::new("Liquid particles", 6_000, budget_range())
                .with_value_to_string(Arc::new(|v| v.to_string()))
                .with_string_to_value(Arc::new(|s| {
                    s.trim().replace([' ', ','], "").parse::<i32>().ok()
                }))
                .non_automatable(),
            style: EnumParam::new("Liquid look", LiquidStyle::Surface).non_automatable(),
            orbit: degrees("Camera orbit", Orbit::default().yaw, tilt_range()),
            height: degrees("Camera height", Orbit::default().pitch, height_range()),
            distance: number(
                "Camera distance",
                Orbit::default().distance,
                distance_range(),
                "x",
            ),
            floaters: IntParam::new(
                "Floaters",
                crate::fluid::Liquid::default().floaters as i32,
                IntRange::Linear { min: 0, max: 8 },
            )
            .non_automatable(),
        }
    }
}

/// 8 -> 9: the liquid's knobs. Before them its gravity pointed against the heat's lift
/// direction, nothing swayed it and nothing dragged it: an old project loads with the tilt
/// its lift direction gave (the same vector: see [`crate::fluid::gravity_vector`]), no sway
/// and no drag (values it names anyway are kept).
pub fn migrate_to_v9(state: &mut PluginState) {
    let tilt = match state.params.get(LIFT_ANGLE_ID) {
        Some(ParamValue::F32(a)) if a.is_finite() => *a,
        _ => 0.0,
    };
    for (id, value) in [(SWAY_ID, 0.0), (DRAG_ID, 0.0), (TILT_ID, tilt)] {
        state
            .params
            .entry(id.to_owned())
            .or_insert(ParamValue::F32(value));
    }
}

/// 10 -> 11: the 3D liquid's floaters. An old project loads without them (a value it names
/// anyway is kept).
pub fn migrate_to_v11(state: &mut PluginState) {
    state
        .params
        .entry(FLOATERS_ID.to_owned())
        .or_insert(ParamValue::I32(0));
}

#[cfg(test)]
mod tests {
    use super::super::{STATE_VERSION, STATE_VERSION_KEY, migrate_state};
    use super::*;
    use crate::fluid::{Liquid, gravity_vector};

    fn state(version: u32, params: &[(&str, ParamValue)]) -> PluginState {
        PluginState {
            version: String::new(),
            params: params
                .iter()
                .map(|(id, v)| ((*id).to_owned(), v.clone()))
                .collect(),
            fields: [(STATE_VERSION_KEY.to_owned(), version.to_string())]
                .into_iter()
                .collect(),
        }
    }

    /// A project from before the liquid's knobs (version 8) loads with no sway, no drag and
    /// the tilt its heat lift direction gave its gravity then (the same vector); values it
    /// names are kept; a current state keeps the new defaults.
    #[test]
    fn states_from_before_the_liquid_knobs_load_as_they_were() {
        let mut s = state(8, &[(LIFT_ANGLE_ID, ParamValue::F32(30.0))]);
        migrate_state(&mut s);
        let f = |id: &str| match s.params.get(id) {
            Some(ParamValue::F32(v)) => *v,
            other => panic!("{id}: {other:?}"),
        };
        assert_eq!((f(SWAY_ID), f(DRAG_ID), f(TILT_ID)), (0.0, 0.0, 30.0));
        // The old gravity: against the lift's up direction.
        let up = crate::params::heat::up_direction(30.0);
        let g = gravity_vector(1.0, f(TILT_ID));
        assert!((g[0] + up[0]).abs() < 1e-6 && (g[1] + up[1]).abs() < 1e-6);
        let mut s = state(8, &[(SWAY_ID, ParamValue::F32(40.0))]);
        migrate_state(&mut s);
        assert!(matches!(s.params[SWAY_ID], ParamValue::F32(40.0)));
        assert!(matches!(s.params[TILT_ID], ParamValue::F32(0.0)));
        let mut s = state(STATE_VERSION, &[]);
        migrate_state(&mut s);
        assert!(
            [SWAY_ID, DRAG_ID, TILT_ID]
                .iter()
                .all(|id| !s.params.contains_key(*id))
        );
        let p = LiquidParams::default();
        assert!(p.sway.value() > 0.0 && p.drag.value() > 0.0);
    }

    /// A project from before the floaters (version 10) loads without them; a current one
    /// keeps the new default (three).
    #[test]
    fn states_from_before_the_floaters_load_without_them() {
        let mut s = state(10, &[]);
        migrate_state(&mut s);
        assert!(matches!(s.params[FLOATERS_ID], ParamValue::I32(0)));
        let mut s = state(10, &[(FLOATERS_ID, ParamValue::I32(5))]);
        migrate_state(&mut s);
        assert!(matches!(s.params[FLOATERS_ID], ParamValue::I32(5)));
        let mut s = state(STATE_VERSION, &[]);
        migrate_state(&mut s);
        assert!(!s.params.contains_key(FLOATERS_ID));
        assert_eq!(LiquidParams::default().floaters.value(), 3);
    }

    /// The parameters' defaults are the model's defaults (the source's values), so a new
    /// instance and an old project behave alike.
    #[test]
    fn the_defaults_are_the_liquids_defaults() {
        let p = LiquidParams::default();
        let d = Liquid::default();
        assert_eq!(p.gravity.value(), -d.gravity[1]);
        assert_eq!(p.stiffness.value(), d.stiffness);
        assert_eq!(p.near.value(), d.near);
        assert_eq!(p.viscosity.value(), d.viscosity);
        assert_eq!(p.bounce.value(), d.bounce);
        assert_eq!(p.drag.value(), d.drag);
        assert_eq!(p.budget.value() as u32, d.budget);
        assert_eq!(p.floaters.value() as u32, d.floaters);
        assert_eq!(p.style.value(), LiquidStyle::Surface);
    }

    /// Text round-trips through each parameter's formatter and parser.
    #[test]
    fn values_round_trip_as_text() {
        let p = LiquidParams::default();
        for param in [&p.gravity, &p.tilt, &p.sway, &p.stiffness, &p.viscosity] {
            let text = param.to_string();
            let back = param.string_to_normalized_value(&text).expect(&text);
            let again = param.normalized_value_to_string(back, true);
            assert_eq!(again, text);
        }
        assert_eq!(
            p.budget
                .string_to_normalized_value("12,000")
                .map(|n| p.budget.preview_plain(n)),
            Some(12_000)
        );
    }
}
