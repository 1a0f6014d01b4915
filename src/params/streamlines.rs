//! The streamlines' parameters (PixelFlow's flow lines: curves traced through the velocity from
//! a grid of seeds, coloured by speed, over the picture or alone), nested into
//! [`super::DyeflowParams`] under the group "Streamlines". Every one is automatable.
//!
//! The mode starts Off, so a new instance and every project saved before streamlines existed
//! look as before (no state migration: a missing value loads its default, which is the old
//! behaviour). The Currents preset turns them on.

use super::{s2v_number, v2s_adaptive};
use crate::fluid::StreamlineLook;
use crate::fluid::StreamlineMode;
use crate::fluid::streamline_range::{
    MAX_DENSITY, MAX_LENGTH_S, MAX_STEPS, MIN_DENSITY, MIN_LENGTH_S, MIN_STEPS,
};
use nice_plug::prelude::*;

/// The streamline parameters.
#[derive(Params)]
pub struct StreamlineParams {
    /// Off, drawn over the picture, or alone (on black).
    #[id = "stream"]
    pub mode: EnumParam<StreamlineMode>,
    /// Lines per canvas height (the seed grid's rows).
    #[id = "stream_dens"]
    pub density: IntParam,
    /// Trace time: a line is as long as the fluid moves in it.
    #[id = "stream_len"]
    pub length: FloatParam,
    /// Trace steps per line (more: smoother curves).
    #[id = "stream_steps"]
    pub steps: IntParam,
}

/// Trace time, seconds.
pub fn length_range() -> FloatRange {
    FloatRange::Skewed {
        min: MIN_LENGTH_S,
        max: MAX_LENGTH_S,
        factor: FloatRange::skew_factor(-1.5),
    }
}

/// Lines per canvas height.
pub fn density_range() -> IntRange {
    IntRange::Linear {
        min: MIN_DENSITY as i32,
        max: MAX_DENSITY as i32,
    }
}

/// Trace steps.
pub fn steps_range() -> IntRange {
    IntRange::Linear {
        min: MIN_STEPS as i32,
        max: MAX_STEPS as i32,
    }
}

impl Default for StreamlineParams {
    fn default() -> Self {
        let d = StreamlineLook::default();
        Self {
            mode: EnumParam::new("Streamlines", d.mode),
            density: IntParam::new("Stream density", d.density as i32, density_range())
                .with_unit(" lines"),
            length: FloatParam::new("Stream length", d.length, length_range())
                .with_unit(" s")
                .with_value_to_string(v2s_adaptive())
                .with_string_to_value(s2v_number()),
            steps: IntParam::new("Stream steps", d.steps as i32, steps_range()),
        }
    }
}
