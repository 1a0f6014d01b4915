//! The particle fluid's parameters (the liquid: gravity and its tilt, how the music sways it,
//! stiffness, near pressure, viscosity, bounce, how many particles and how they are drawn),
//! nested into [`super::DyeflowParams`] under the group "Liquid". The continuous ones are
//! automatable and smoothed with the physics knobs; the budget and the look apply at once.
//!
//! The grid fluid ignores them, and the defaults are the source's tuned values, so projects
//! saved before they existed load unchanged (no state migration: a missing value loads its
//! default).

use super::{s2v_number, s2v_percent, v2s_adaptive, v2s_percent};
use crate::fluid::LiquidStyle;
use nice_plug::prelude::*;
use std::sync::Arc;

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
    /// Most particles: a note into a full box recycles the oldest. Not automatable (a change
    /// drops or makes room for particles).
    #[id = "liq_count"]
    pub budget: IntParam,
    /// Smooth surface or discs.
    #[id = "liq_look"]
    pub style: EnumParam<LiquidStyle>,
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

/// Bounce, 0 to 1.
pub fn bounce_range() -> FloatRange {
    FloatRange::Linear { min: 0.0, max: 1.0 }
}

/// The particle budget.
pub fn budget_range() -> IntRange {
    IntRange::Linear {
        min: MIN_BUDGET,
        max: MAX_BUDGET,
    }
}

fn percent(name: &str, default: f32, range: FloatRange) -> FloatParam {
    FloatParam::new(name, default, range)
        .with_unit(" %")
        .with_value_to_string(v2s_percent(0))
        .with_string_to_value(s2v_percent())
}

fn degrees(name: &str, default: f32, range: FloatRange) -> FloatParam {
    FloatParam::new(name, default, range)
        .with_unit("°")
        .with_value_to_string(formatters::v2s_f32_rounded(0))
        .with_string_to_value(s2v_number())
}

impl Default for LiquidParams {
    fn default() -> Self {
        Self {
            gravity: FloatParam::new("Gravity", 1.2, gravity_range())
                .with_unit(" /s²")
                .with_value_to_string(v2s_adaptive())
                .with_string_to_value(s2v_number()),
            tilt: degrees("Tilt", 0.0, tilt_range()),
            sway: degrees("Sway", 15.0, sway_range()),
            stiffness: percent("Stiffness", 1.0, pressure_range()),
            near: percent("Near pressure", 1.0, pressure_range()),
            viscosity: FloatParam::new("Liquid viscosity", 0.06, viscosity_range())
                .with_unit(" /s")
                .with_value_to_string(v2s_adaptive())
                .with_string_to_value(s2v_number()),
            bounce: percent("Bounce", 0.95, bounce_range()),
            budget: IntParam::new("Liquid particles", 6_000, budget_range())
                .with_value_to_string(Arc::new(|v| v.to_string()))
                .with_string_to_value(Arc::new(|s| {
                    s.trim().replace([' ', ','], "").parse::<i32>().ok()
                }))
                .non_automatable(),
            style: EnumParam::new("Liquid look", LiquidStyle::Surface),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fluid::Liquid;

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
        assert_eq!(p.budget.value() as u32, d.budget);
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
