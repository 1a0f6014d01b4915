//! The particles' parameters (PixelFlow's tracers: notes, onsets and the mouse emit glowing
//! points the flow carries), nested into [`super::DyeflowParams`] under the group
//! "Particles". Every one is automatable.
//!
//! The amount starts at 0, so a new instance and every project saved before particles existed
//! look as before (no state migration: a missing value loads its default, which is the old
//! behaviour). The Neon and Fire presets turn them on.

use super::{s2v_number, v2s_adaptive};
use nice_plug::prelude::*;

/// The particle parameters.
#[derive(Params)]
pub struct ParticleParams {
    /// Particles a note at full velocity emits when it starts (softer notes fewer; held notes
    /// keep emitting, onsets and the mouse emit too). 0: no particles.
    #[id = "particles"]
    pub amount: FloatParam,
    /// How long a particle lives, seconds (each one +-25 %).
    #[id = "ptcl_life"]
    pub life: FloatParam,
    /// How brightly the particles glow (a multiplier of their light).
    #[id = "ptcl_glow"]
    pub glow: FloatParam,
}

/// Particles per note.
pub fn amount_range() -> FloatRange {
    FloatRange::Skewed {
        min: 0.0,
        max: 2000.0,
        factor: FloatRange::skew_factor(-2.0),
    }
}

/// Particle life, seconds.
pub fn life_range() -> FloatRange {
    FloatRange::Skewed {
        min: 0.2,
        max: 20.0,
        factor: FloatRange::skew_factor(-1.5),
    }
}

/// Particle glow.
pub fn glow_range() -> FloatRange {
    FloatRange::Linear {
        min: 0.0,
        max: crate::fluid::MAX_GLOW,
    }
}

impl Default for ParticleParams {
    fn default() -> Self {
        Self {
            amount: FloatParam::new("Particles", 0.0, amount_range())
                .with_unit(" /note")
                .with_value_to_string(formatters::v2s_f32_rounded(0))
                .with_string_to_value(s2v_number()),
            life: FloatParam::new("Particle life", 3.0, life_range())
                .with_unit(" s")
                .with_value_to_string(v2s_adaptive())
                .with_string_to_value(s2v_number()),
            glow: FloatParam::new("Particle glow", 1.0, glow_range())
                .with_value_to_string(v2s_adaptive())
                .with_string_to_value(s2v_number()),
        }
    }
}
