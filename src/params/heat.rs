//! Heat and buoyancy's parameters (the smoke model: notes heat the fluid, hot fluid rises,
//! heavy dye sinks), nested into [`super::DyeflowParams`] under the group "Heat". Every one is
//! automatable and smoothed with the physics knobs.
//!
//! Buoyancy and weight start at 0, so a new instance and every project saved before heat
//! existed behave as before (no state migration: a missing value loads its default, which is
//! the old behaviour). The Fire preset turns them on.

use super::{s2v_number, v2s_adaptive};
use crate::kernels::portable::Portable;
use nice_plug::prelude::*;

/// Id of the lift direction (read by [`super::liquid::migrate_to_v9`]).
pub const LIFT_ANGLE_ID: &str = "lift_dir";

/// The heat parameters.
#[derive(Params)]
pub struct HeatParams {
    /// Upward acceleration of fluid one unit hotter than the ambient, canvas heights/s² (0:
    /// heat moves nothing). A note at full velocity heats its emitter by about one unit.
    #[id = "buoyancy"]
    pub buoyancy: FloatParam,
    /// Downward acceleration of dye of density 1, canvas heights/s² (0: dye is weightless).
    #[id = "weight"]
    pub weight: FloatParam,
    /// How fast the fluid cools back to 0, per second.
    #[id = "cooling"]
    pub cooling: FloatParam,
    /// The temperature at which fluid neither rises nor sinks.
    #[id = "ambient"]
    pub ambient: FloatParam,
    /// Which way is up for the lift: degrees clockwise from straight up.
    #[id = "lift_dir"]
    pub lift_angle: FloatParam,
}

/// Buoyancy and weight, canvas heights/s².
pub fn lift_range() -> FloatRange {
    FloatRange::Skewed {
        min: 0.0,
        max: 20.0,
        factor: FloatRange::skew_factor(-1.5),
    }
}

/// Cooling rate, 1/s.
pub fn cooling_range() -> FloatRange {
    FloatRange::Skewed {
        min: 0.0,
        max: 10.0,
        factor: FloatRange::skew_factor(-1.0),
    }
}

/// Ambient temperature.
pub fn ambient_range() -> FloatRange {
    FloatRange::Linear {
        min: -1.0,
        max: 1.0,
    }
}

/// The lift's direction, degrees.
pub fn lift_angle_range() -> FloatRange {
    FloatRange::Linear {
        min: -180.0,
        max: 180.0,
    }
}

/// A number with `unit`, three significant figures.
pub(super) fn number(
    name: &str,
    default: f32,
    range: FloatRange,
    unit: &'static str,
) -> FloatParam {
    FloatParam::new(name, default, range)
        .with_unit(unit)
        .with_value_to_string(v2s_adaptive())
        .with_string_to_value(s2v_number())
}

impl Default for HeatParams {
    fn default() -> Self {
        Self {
            buoyancy: number("Buoyancy", 0.0, lift_range(), " /s²"),
            weight: number("Weight", 0.0, lift_range(), " /s²"),
            cooling: number("Cooling", 0.5, cooling_range(), " /s"),
            ambient: number("Ambient", 0.0, ambient_range(), ""),
            lift_angle: FloatParam::new("Lift direction", 0.0, lift_angle_range())
                .with_unit("°")
                .with_value_to_string(formatters::v2s_f32_rounded(0))
                .with_string_to_value(s2v_number()),
        }
    }
}

/// The lift's up direction (x right, y up) for `degrees` clockwise from straight up.
pub fn up_direction(degrees: f32) -> [f32; 2] {
    let a = degrees.to_radians();
    [a.psin(), a.pcos()]
}
