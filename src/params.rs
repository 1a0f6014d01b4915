//! Dyeflow's parameters and persisted settings.
//!
//! Parameters are what a host automates: every physics and look knob. Their `#[id]`s are stable
//! forever, since hosts store automation and presets by these strings; rename the display name if
//! you must, never the id. Values are stored unnormalised in the state, so widening a range later
//! keeps old projects sounding (looking) the same.
//!
//! Settings are what a user sets but a host must not automate: the simulation resolution, the
//! aspect, the backend, the editor's size. They are persisted as JSON fields next to the
//! parameters and are sanitised whenever a state is loaded (see [`migrate_state`]).
//!
//! Units: the canvas is taken as 1 m tall, so viscosity and diffusion read in mm²/s (1 mm²/s =
//! 1 cSt; water is about 1, olive oil about 80, honey about 10 000), and speeds in canvas heights
//! per second.
//!
//! Why this file is long: `DyeflowParams` must list every host parameter with its stable
//! `#[id]` in one struct (nice-plug's derive), with its ranges and formatters; the state's
//! migration is `state.rs`, the groups that could stand alone are in `params/`.

use crate::kernels::portable::Portable;
use nice_plug::plugin::ParamValue;
use nice_plug::prelude::*;
use parking_lot::RwLock;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::sync::atomic::AtomicU32;

use crate::fluid::{ColorMode, ObstacleStyle, ToneMode};
use crate::mapping::MappingMode;
pub use crate::output_window::Placement;

pub mod effects;
pub mod heat;
pub mod liquid;
pub mod modulation;
pub mod obstacles;
pub mod particles;
mod state;
pub mod streamlines;

pub use effects::EffectsParams;
pub use heat::HeatParams;
pub use liquid::LiquidParams;
pub use modulation::{MODULATION_KEY, Modulation};
pub use obstacles::{OBSTACLES_KEY, ObstacleField, ObstacleSettings};
pub use particles::ParticleParams;
use state::parse_lenient;
pub use state::{migrate_state, state_version};
pub use streamlines::StreamlineParams;

/// The version of the persisted state layout. Bump it whenever a parameter id, a range's meaning
/// or a settings field changes in a way that needs [`migrate_state`] to rewrite old projects.
///
/// - 1: the first layout.
/// - 2: the drum channel ([`DRUM_CHANNEL_ID`]); older states load with drums off.
/// - 3: the display pipeline ([`TONE_MODE_ID`]); older states load with the legacy tone.
/// - 4: the picture effects ([`EffectsParams`]); older states load with every effect off.
/// - 5: rows mode, the new default note mapping ([`MAPPING_MODE_ID`]); older states that name
///   no mapping load with the keyboard.
/// - 6: the audio bands and colour by pitch ([`AUDIO_AMOUNT_IDS`]); older states load with
///   them at 0, the full-band audio path of old.
/// - 7: obstacles ([`OBSTACLES_KEY`], the pillar channel and the obstacle look); older states
///   load with no obstacles and no pillar channel.
/// - 8: vibrance ([`effects::VIBRANCE_ID`]); older states load with it off.
/// - 9: the liquid's knobs ([`LiquidParams`]); older states load with no sway, no drag and
///   the tilt their heat lift direction gave the liquid.
/// - 10: a drawn obstacle mask keeps its shape on a grid of another aspect (fitted, no longer
///   stretched); older states' drawings are redrawn at the project's own grid as they showed
///   there ([`obstacles::migrate_to_v10`]).
/// - 11: the 3D liquid's floaters ([`liquid::FLOATERS_ID`]); older states load without them.
/// - 12: adaptive dye ([`ADAPTIVE_DYE_ID`]); older states load with it off.
pub const STATE_VERSION: u32 = 12;

/// Id of the adaptive dye's amount (also written by [`migrate_state`]).
pub const ADAPTIVE_DYE_ID: &str = "adapt_dye";

/// Id of the note mapping parameter (also written by [`migrate_state`]).
pub const MAPPING_MODE_ID: &str = "mapping";

/// Id of the tone mode parameter (also written by [`migrate_state`]).
pub const TONE_MODE_ID: &str = "display";

/// Ids of the low, mid and high band amounts and the colour-by-pitch amount (also written by
/// [`migrate_state`]).
pub const AUDIO_AMOUNT_IDS: [&str; 4] = ["low_amt", "mid_amt", "high_amt", "chroma_amt"];

/// Id of the drum channel parameter (also written by [`migrate_state`]).
pub const DRUM_CHANNEL_ID: &str = "drum_ch";

/// Key of the persisted state-version field.
pub const STATE_VERSION_KEY: &str = "state-version";
/// Key of the persisted settings field.
pub const SETTINGS_KEY: &str = "settings";
/// Key of the persisted output window field.
pub const OUTPUT_KEY: &str = "output";
/// Key of the persisted editor field.
pub const EDITOR_KEY: &str = "editor";

/// One cSt (mm²/s) expressed in canvas²/s on a canvas 1 m tall.
pub const MM2_PER_S_TO_CANVAS2_PER_S: f32 = 1.0e-6;

/// Which solver the simulation thread should use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendChoice {
    /// The GPU when one is found, the CPU otherwise.
    #[default]
    Auto,
    /// The GPU; falls back to the CPU (and says so) when there is none.
    Gpu,
    /// The CPU solver only.
    Cpu,
}

impl BackendChoice {
    /// Every choice.
    pub const ALL: [Self; 3] = [Self::Auto, Self::Gpu, Self::Cpu];

    /// Its place in [`BackendChoice::ALL`] (see [`FluidChoice::index`]).
    pub fn index(self) -> usize {
        match self {
            Self::Auto => 0,
            Self::Gpu => 1,
            Self::Cpu => 2,
        }
    }
}

/// Shape of the simulated canvas.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Aspect {
    #[serde(rename = "1:1")]
    Square,
    #[serde(rename = "4:3")]
    FourThree,
    #[default]
    #[serde(rename = "16:9")]
    Wide,
    #[serde(rename = "9:16")]
    Portrait,
    #[serde(rename = "21:9")]
    UltraWide,
}

impl Aspect {
    /// Every shape.
    pub const ALL: [Self; 5] = [
        Self::Square,
        Self::FourThree,
        Self::Wide,
        Self::Portrait,
        Self::UltraWide,
    ];

    /// Its place in [`Aspect::ALL`] (see [`FluidChoice::index`]).
    pub fn index(self) -> usize {
        match self {
            Self::Square => 0,
            Self::FourThree => 1,
            Self::Wide => 2,
            Self::Portrait => 3,
            Self::UltraWide => 4,
        }
    }

    /// Width divided by height.
    pub fn ratio(self) -> f32 {
        match self {
            Aspect::Square => 1.0,
            Aspect::FourThree => 4.0 / 3.0,
            Aspect::Wide => 16.0 / 9.0,
            Aspect::Portrait => 9.0 / 16.0,
            Aspect::UltraWide => 21.0 / 9.0,
        }
    }
}

/// Simulation resolutions offered to users, in cells along the canvas height.
pub const SIM_RESOLUTIONS_CELLS: [u32; 5] = [128, 256, 512, 1024, 2048];
/// Dye grid refinement factors offered (dye cells per simulation cell, per axis).
pub const DYE_SCALES: [u32; 3] = [1, 2, 4];
/// Simulation rates offered, in steps per second.
pub const SIM_RATES_HZ: [u32; 4] = [30, 60, 120, 144];

/// Non-automatable settings that come back with the project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// Simulation grid height in cells; one of [`SIM_RESOLUTIONS_CELLS`].
    pub sim_resolution: u32,
    /// Dye grid refinement; one of [`DYE_SCALES`].
    pub dye_scale: u32,
    /// Canvas shape.
    pub aspect: Aspect,
    /// Solver backend preference.
    pub backend: BackendChoice,
    /// Simulation steps per second; one of [`SIM_RATES_HZ`].
    pub sim_rate_hz: u32,
    /// Which fluid: the grid (dye in air) or the particles (a liquid). States from before it
    /// existed load as the grid.
    pub fluid: FluidChoice,
}

/// Which fluid an instance runs ("Fluid: Grid / Particles / Liquid 3D").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FluidChoice {
    /// Dye in air: the grid fluid (stable fluids).
    #[default]
    Grid,
    /// A liquid: the particle fluid (SPH).
    Particles,
    /// A liquid in 3D, in a tank (SPH in 3D, ray-marched).
    Liquid3d,
}

impl FluidChoice {
    /// Every fluid, in menu order.
    pub const ALL: [Self; 3] = [Self::Grid, Self::Particles, Self::Liquid3d];

    /// Its place in [`FluidChoice::ALL`] (a new fluid must be added there: this match
    /// will not compile without it).
    pub fn index(self) -> usize {
        match self {
            Self::Grid => 0,
            Self::Particles => 1,
            Self::Liquid3d => 2,
        }
    }

    /// Whether it is a liquid of particles (2D or 3D): the liquid's knobs and mouse apply.
    pub fn is_liquid(self) -> bool {
        matches!(self, Self::Particles | Self::Liquid3d)
    }
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            sim_resolution: 256,
            dye_scale: 2,
            aspect: Aspect::Wide,
            backend: BackendChoice::Auto,
            sim_rate_hz: 60,
            fluid: FluidChoice::Grid,
        }
    }
}

/// Snap `value` to the nearest entry of `allowed` (ties go to the smaller entry).
fn nearest(allowed: &[u32], value: u32) -> u32 {
    *allowed
        .iter()
        .min_by_key(|&&a| a.abs_diff(value))
        .expect("allowed lists are non-empty constants")
}

impl Settings {
    /// The same settings with every field snapped to an allowed value.
    pub fn sanitized(&self) -> Self {
        Self {
            sim_resolution: nearest(&SIM_RESOLUTIONS_CELLS, self.sim_resolution),
            dye_scale: nearest(&DYE_SCALES, self.dye_scale),
            aspect: self.aspect,
            backend: self.backend,
            sim_rate_hz: nearest(&SIM_RATES_HZ, self.sim_rate_hz),
            fluid: self.fluid,
        }
    }

    /// Simulation grid size `(width, height)` in cells.
    pub fn sim_grid(&self) -> (usize, usize) {
        let s = self.sanitized();
        let h = s.sim_resolution as usize;
        let w = ((h as f32 * s.aspect.ratio()).round() as usize).max(1);
        (w, h)
    }

    /// The dye grid's size: the simulation grid times the dye detail.
    pub fn dye_grid(&self) -> (usize, usize) {
        let (w, h) = self.sim_grid();
        let k = self.sanitized().dye_scale as usize;
        (w * k, h * k)
    }
}

/// Smallest editor size, in logical pixels.
pub const EDITOR_MIN_SIZE: (u32, u32) = (320, 200);
/// Largest editor size, in logical pixels.
pub const EDITOR_MAX_SIZE: (u32, u32) = (7680, 4320);

/// Smallest and largest mouse brush radius, fractions of the canvas height.
pub const BRUSH_RADIUS_RANGE: (f32, f32) = (0.005, 0.25);

/// OSC in (see `engine::osc`): off by default. Comes back with the project; presets leave it
/// alone (a preset shared between machines should not open a network port).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct OscSettings {
    /// Listen for OSC.
    pub enabled: bool,
    /// The UDP port, 1024 to 65535.
    pub port: u16,
}

impl Default for OscSettings {
    fn default() -> Self {
        Self {
            enabled: false,
            port: 9000,
        }
    }
}

impl OscSettings {
    /// The same with the port in 1024..=65535.
    pub fn sanitized(self) -> Self {
        Self {
            port: self.port.max(1024),
            ..self
        }
    }
}

/// The output window (see [`crate::output_window`]): whether it is open, and where and how it shows.
/// Comes back with the project (closed when the project has none); presets leave it alone.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct OutputSettings {
    /// The window is open.
    pub open: bool,
    /// Its monitor, fullscreen or not, its windowed size.
    pub placement: Placement,
}

impl OutputSettings {
    /// The same with the size in range.
    pub fn sanitized(&self) -> Self {
        Self {
            open: self.open,
            placement: self.placement.sanitized(),
        }
    }
}

/// Editor state that comes back with the project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EditorSettings {
    /// Window width in logical pixels.
    pub width: u32,
    /// Window height in logical pixels.
    pub height: u32,
    /// Whether the control panel is shown.
    pub panel_open: bool,
    /// Radius of the mouse brush, fraction of the canvas height (the mouse wheel sets it).
    pub brush_radius: f32,
    /// Radius of the obstacle brush (Draw and Erase), fraction of the canvas height (the
    /// panel's slider, or the wheel while drawing, sets it).
    pub wall_radius: f32,
}

impl Default for EditorSettings {
    fn default() -> Self {
        Self {
            width: 960,
            height: 540,
            panel_open: false,
            brush_radius: 0.04,
            wall_radius: 0.02,
        }
    }
}

impl EditorSettings {
    /// The same settings with the size clamped to [`EDITOR_MIN_SIZE`]..=[`EDITOR_MAX_SIZE`].
    pub fn sanitized(&self) -> Self {
        Self {
            width: self.width.clamp(EDITOR_MIN_SIZE.0, EDITOR_MAX_SIZE.0),
            height: self.height.clamp(EDITOR_MIN_SIZE.1, EDITOR_MAX_SIZE.1),
            panel_open: self.panel_open,
            brush_radius: if self.brush_radius.is_finite() {
                self.brush_radius
                    .clamp(BRUSH_RADIUS_RANGE.0, BRUSH_RADIUS_RANGE.1)
            } else {
                EditorSettings::default().brush_radius
            },
            wall_radius: if self.wall_radius.is_finite() {
                self.wall_radius
                    .clamp(BRUSH_RADIUS_RANGE.0, BRUSH_RADIUS_RANGE.1)
            } else {
                EditorSettings::default().wall_radius
            },
        }
    }
}

/// All of Dyeflow's parameters and persisted fields.
///
/// Threads: the host (main or audio thread) writes parameter values; the audio thread reads
/// `bypass`; the simulation thread reads the rest once per step. Persisted fields are touched only
/// off the audio thread (host main thread, editor, simulation thread), so their locks never meet
/// `process()`.
#[derive(Params)]
pub struct DyeflowParams {
    /// Layout version of the persisted state, written on save and checked by [`migrate_state`].
    #[persist = "state-version"]
    pub state_version: AtomicU32,

    /// Resolution, aspect, backend and rate. Written by the editor and by state loads.
    #[persist = "settings"]
    pub settings: RwLock<Settings>,

    /// Editor window size and panel visibility. Written by the editor and by state loads.
    #[persist = "editor"]
    pub editor: RwLock<EditorSettings>,

    /// OSC in. Written by the editor and by state loads.
    #[persist = "osc"]
    pub osc: RwLock<OscSettings>,

    /// The output window. Written by the editor, by the window itself (Esc, a resize) and by
    /// state loads.
    #[persist = "output"]
    pub output: RwLock<OutputSettings>,

    /// Modulation: the LFOs, the routes and the learned CCs ([`modulation`]). Written by
    /// state loads, presets, the editor and (a CC learned) the simulation thread, which reads
    /// it once a step.
    #[persist = "modulation"]
    pub modulation: RwLock<Modulation>,

    /// Modulation at work, shared by the engine and the editor (not saved).
    pub modulation_live: modulation::Live,

    /// The obstacles: the layout last picked and the mask as drawn. Written by the editor,
    /// by state loads and by the simulation thread (the brush's strokes); see
    /// [`ObstacleField`].
    #[persist = "obstacles"]
    pub obstacles: ObstacleField,

    #[id = "bypass"]
    pub bypass: BoolParam,

    #[id = "visc"]
    pub viscosity: FloatParam,
    #[id = "dye_diff"]
    pub dye_diffusion: FloatParam,
    #[id = "vel_diss"]
    pub velocity_dissipation: FloatParam,
    #[id = "dye_diss"]
    pub dye_dissipation: FloatParam,
    /// Adaptive dye (engine::adaptive): how hard a frame filling with dye fades the old dye
    /// and turns the sources down, 0 (off) ..= 1.
    #[id = "adapt_dye"]
    pub adaptive_dye: FloatParam,
    #[id = "vort"]
    pub vorticity: FloatParam,
    #[id = "p_iters"]
    pub pressure_iterations: IntParam,
    #[id = "speed"]
    pub speed: FloatParam,

    #[id = "radius"]
    pub splat_radius: FloatParam,
    #[id = "force"]
    pub splat_force: FloatParam,
    #[id = "amount"]
    pub dye_amount: FloatParam,
    #[id = "react"]
    pub audio_reactivity: FloatParam,
    #[id = "attack"]
    pub envelope_attack: FloatParam,
    #[id = "release"]
    pub envelope_release: FloatParam,
    /// How much the low band (kick, bass) paints: a wide swell up from the bottom.
    #[id = "low_amt"]
    pub low_amount: FloatParam,
    /// How much the mid band (voices, guitars, chords, snare) paints, in the middle.
    #[id = "mid_amt"]
    pub mid_amount: FloatParam,
    /// How much the high band (cymbals, air) paints: small bright sparkles at the top.
    #[id = "high_amt"]
    pub high_amount: FloatParam,
    /// How much the audio's pitch classes colour the bands and stream dye in MIDI notes' hues.
    #[id = "chroma_amt"]
    pub chroma_amount: FloatParam,
    #[id = "mapping"]
    pub mapping_mode: EnumParam<MappingMode>,
    /// A push on every beat while the host plays, phase-locked to its beat position.
    #[id = "pulse"]
    pub beat_pulse: BoolParam,
    /// The MIDI channel (1 to 16) whose notes are General MIDI drums, played by instrument
    /// rather than pitch; 0: none. A setup choice, so not automatable; a parameter (not a
    /// setting) so the simulation thread reads it lock-free and presets carry it.
    #[id = "drum_ch"]
    pub drum_channel: IntParam,
    /// The MIDI channel (1 to 16) whose notes raise and lower pillars instead of painting
    /// (the performer plays the walls); 0: none. Not automatable, like the drum channel.
    #[id = "pillar_ch"]
    pub pillar_channel: IntParam,

    #[id = "colour"]
    pub color_mode: EnumParam<ColorMode>,
    #[id = "bright"]
    pub brightness: FloatParam,
    #[id = "sat"]
    pub saturation: FloatParam,
    #[id = "hue"]
    pub hue_shift: FloatParam,
    /// How the picture's light becomes display values: filmic (tone curve, sRGB, dither) or
    /// the legacy `1 - e^-x` of projects saved before it.
    #[id = "display"]
    pub tone_mode: EnumParam<ToneMode>,
    /// How obstacles show in the picture: filled, outlined or hidden.
    #[id = "obst_look"]
    pub obstacle_style: EnumParam<ObstacleStyle>,
    /// Bloom, sunrays, shading, palette and background (the filmic tone's effects).
    #[nested(group = "Picture")]
    pub effects: EffectsParams,
    /// Heat and buoyancy: notes heat the fluid, hot fluid rises, heavy dye sinks.
    #[nested(group = "Heat")]
    pub heat: HeatParams,
    /// Particles: glowing points that notes, onsets and the mouse emit and the flow carries.
    #[nested(group = "Particles")]
    pub particles: ParticleParams,
    /// Streamlines: the flow's lines, coloured by speed, over the picture or alone.
    #[nested(group = "Streamlines")]
    pub streamlines: StreamlineParams,
    /// The particle fluid: gravity, tilt and sway, stiffness, viscosity, bounce, budget, look.
    #[nested(group = "Liquid")]
    pub liquid: LiquidParams,
}

// Ranges, as functions so the editor's widgets and the tests share them with the parameters.

/// Viscosity in mm²/s (cSt on a 1 m canvas). Half of the knob's travel lands near 100.
pub fn viscosity_range() -> FloatRange {
    FloatRange::Skewed {
        min: 0.0,
        max: 10_000.0,
        factor: FloatRange::skew_factor(-2.75),
    }
}

/// Dye diffusion in mm²/s.
pub fn dye_diffusion_range() -> FloatRange {
    FloatRange::Skewed {
        min: 0.0,
        max: 1_000.0,
        factor: FloatRange::skew_factor(-2.5),
    }
}

/// Dissipation rate in 1/s: the field decays as exp(-rate * t).
pub fn dissipation_range() -> FloatRange {
    FloatRange::Skewed {
        min: 0.0,
        max: 10.0,
        factor: FloatRange::skew_factor(-1.5),
    }
}

/// Vorticity confinement strength (dimensionless epsilon of Fedkiw et al.).
pub fn vorticity_range() -> FloatRange {
    FloatRange::Linear { min: 0.0, max: 1.0 }
}

/// Pressure solver work per step, in iterations.
pub fn pressure_iterations_range() -> IntRange {
    IntRange::Linear { min: 2, max: 200 }
}

/// Simulation speed as a multiple of real time.
pub fn speed_range() -> FloatRange {
    FloatRange::Linear { min: 0.0, max: 4.0 }
}

/// Splat radius as a fraction of the canvas height.
pub fn splat_radius_range() -> FloatRange {
    FloatRange::Skewed {
        min: 0.002,
        max: 0.25,
        factor: FloatRange::skew_factor(-1.0),
    }
}

/// Multipliers shown in percent: splat force, dye amount.
pub fn multiplier_range() -> FloatRange {
    FloatRange::Linear { min: 0.0, max: 4.0 }
}

/// Audio reactivity, 1.0 = 100 %.
pub fn reactivity_range() -> FloatRange {
    FloatRange::Linear { min: 0.0, max: 2.0 }
}

/// Envelope attack time in ms.
pub fn attack_range() -> FloatRange {
    FloatRange::Skewed {
        min: 0.1,
        max: 200.0,
        factor: FloatRange::skew_factor(-2.0),
    }
}

/// Envelope release time in ms.
pub fn release_range() -> FloatRange {
    FloatRange::Skewed {
        min: 5.0,
        max: 5_000.0,
        factor: FloatRange::skew_factor(-2.0),
    }
}

/// Drum channel: 0 (none), or MIDI channels 1 to 16.
pub fn drum_channel_range() -> IntRange {
    IntRange::Linear { min: 0, max: 16 }
}

/// Brightness (exposure) multiplier, 1.0 = 100 %.
pub fn brightness_range() -> FloatRange {
    FloatRange::Linear { min: 0.0, max: 3.0 }
}

/// Saturation, 1.0 = 100 %.
pub fn saturation_range() -> FloatRange {
    FloatRange::Linear { min: 0.0, max: 1.0 }
}

/// Hue rotation in degrees.
pub fn hue_shift_range() -> FloatRange {
    FloatRange::Linear {
        min: 0.0,
        max: 360.0,
    }
}

// Value strings. Each parser accepts what its formatter prints, with or without the unit, so
// text -> value -> text round-trips (hosts and clap-validator check this).

type V2s = Arc<dyn Fn(f32) -> String + Send + Sync>;
type S2v = Arc<dyn Fn(&str) -> Option<f32> + Send + Sync>;

/// Three significant figures for values that span decades (0.00123, 4.56, 78.9, 10000).
///
/// The number of decimals is chosen from the value *after* rounding to three significant
/// figures, so 99.999 prints as "100" rather than "100.0" and text -> value -> text is stable at
/// the decade boundaries.
pub fn v2s_adaptive() -> V2s {
    Arc::new(|v| {
        let a = v.abs();
        if a == 0.0 || !a.is_finite() {
            return "0".to_owned();
        }
        let exponent = a.plog10().floor() as i32;
        let quantum = 10f64.powi(exponent - 2);
        let rounded = (f64::from(a) / quantum).round() * quantum;
        let digits = (2 - rounded.plog10().floor() as i32).clamp(0, 6) as usize;
        let s = format!("{v:.digits$}");
        // Anything that rounds to zero prints as a bare "0" (never "-0.000").
        if s.trim_start_matches('-')
            .chars()
            .all(|c| c == '0' || c == '.')
        {
            "0".to_owned()
        } else {
            s
        }
    })
}

/// Parse a number, ignoring a trailing unit (any non-numeric suffix) and surrounding spaces.
pub fn s2v_number() -> S2v {
    Arc::new(|s| {
        let s = s.trim();
        let end = s
            .char_indices()
            .find(|&(i, c)| {
                !(c.is_ascii_digit()
                    || c == '.'
                    || ((c == '-' || c == '+') && i == 0)
                    || c == 'e'
                    || c == 'E')
            })
            .map_or(s.len(), |(i, _)| i);
        let v: f32 = s[..end].trim().parse().ok()?;
        v.is_finite().then_some(v)
    })
}

/// The drum (or pillar) channel as text: "Off" for 0, else the channel number.
pub fn v2s_drum_channel(channel: i32) -> String {
    if channel <= 0 {
        "Off".to_owned()
    } else {
        channel.to_string()
    }
}

/// Parse a drum (or pillar) channel: "off" or "none" (any case) for 0, else a number ("Ch 10"
/// too).
pub fn s2v_drum_channel(s: &str) -> Option<i32> {
    let s = s.trim();
    if s.eq_ignore_ascii_case("off") || s.eq_ignore_ascii_case("none") {
        return Some(0);
    }
    let digits = s.trim_start_matches(|c: char| !c.is_ascii_digit());
    digits.trim().parse().ok()
}

/// Format a fraction as a percentage with `digits` decimals (no sign: the unit carries "%").
pub fn v2s_percent(digits: usize) -> V2s {
    formatters::v2s_f32_percentage(digits)
}

/// Parse a percentage back into a fraction.
pub fn s2v_percent() -> S2v {
    let number = s2v_number();
    Arc::new(move |s| number(s).map(|v| v / 100.0))
}

impl Default for DyeflowParams {
    fn default() -> Self {
        Self {
            state_version: AtomicU32::new(STATE_VERSION),
            settings: RwLock::new(Settings::default()),
            editor: RwLock::new(EditorSettings::default()),
            osc: RwLock::new(OscSettings::default()),
            output: RwLock::new(OutputSettings::default()),
            modulation: RwLock::new(Modulation::default()),
            modulation_live: Default::default(),
            obstacles: ObstacleField::default(),

            bypass: BoolParam::new("Bypass", false)
                .with_value_to_string(formatters::v2s_bool_bypass())
                .with_string_to_value(formatters::s2v_bool_bypass())
                .make_bypass(),

            viscosity: FloatParam::new("Viscosity", 0.0, viscosity_range())
                .with_unit(" mm²/s")
                .with_value_to_string(v2s_adaptive())
                .with_string_to_value(s2v_number()),
            dye_diffusion: FloatParam::new("Dye diffusion", 0.0, dye_diffusion_range())
                .with_unit(" mm²/s")
                .with_value_to_string(v2s_adaptive())
                .with_string_to_value(s2v_number()),
            velocity_dissipation: FloatParam::new("Velocity dissipation", 0.2, dissipation_range())
                .with_unit(" /s")
                .with_value_to_string(v2s_adaptive())
                .with_string_to_value(s2v_number()),
            dye_dissipation: FloatParam::new("Dye dissipation", 0.5, dissipation_range())
                .with_unit(" /s")
                .with_value_to_string(v2s_adaptive())
                .with_string_to_value(s2v_number()),
            adaptive_dye: FloatParam::new(
                "Adaptive dye",
                1.0,
                FloatRange::Linear { min: 0.0, max: 1.0 },
            )
            .with_unit(" %")
            .with_value_to_string(v2s_percent(0))
            .with_string_to_value(s2v_percent()),
            vorticity: FloatParam::new("Vorticity", 0.3, vorticity_range())
                .with_value_to_string(formatters::v2s_f32_rounded(3))
                .with_string_to_value(s2v_number()),
            pressure_iterations: IntParam::new(
                "Pressure iterations",
                20,
                pressure_iterations_range(),
            ),
            speed: FloatParam::new("Speed", 1.0, speed_range())
                .with_unit(" %")
                .with_value_to_string(v2s_percent(1))
                .with_string_to_value(s2v_percent()),

            splat_radius: FloatParam::new("Splat radius", 0.03, splat_radius_range())
                .with_unit(" %")
                .with_value_to_string(v2s_percent(2))
                .with_string_to_value(s2v_percent()),
            splat_force: FloatParam::new("Splat force", 1.0, multiplier_range())
                .with_unit(" %")
                .with_value_to_string(v2s_percent(1))
                .with_string_to_value(s2v_percent()),
            dye_amount: FloatParam::new("Dye amount", 1.0, multiplier_range())
                .with_unit(" %")
                .with_value_to_string(v2s_percent(1))
                .with_string_to_value(s2v_percent()),
            audio_reactivity: FloatParam::new("Audio reactivity", 1.0, reactivity_range())
                .with_unit(" %")
                .with_value_to_string(v2s_percent(1))
                .with_string_to_value(s2v_percent()),
            envelope_attack: FloatParam::new("Envelope attack", 5.0, attack_range())
                .with_unit(" ms")
                .with_value_to_string(v2s_adaptive())
                .with_string_to_value(s2v_number()),
            envelope_release: FloatParam::new("Envelope release", 200.0, release_range())
                .with_unit(" ms")
                .with_value_to_string(v2s_adaptive())
                .with_string_to_value(s2v_number()),
            low_amount: amount_param("Low band"),
            mid_amount: amount_param("Mid band"),
            high_amount: amount_param("High band"),
            chroma_amount: amount_param("Pitch colour"),
            mapping_mode: EnumParam::new("Note mapping", MappingMode::Rows),
            beat_pulse: BoolParam::new("Beat pulse", false),
            drum_channel: IntParam::new(
                "Drum channel",
                i32::from(crate::mapping::GM_DRUM_CHANNEL) + 1,
                drum_channel_range(),
            )
            .with_value_to_string(Arc::new(v2s_drum_channel))
            .with_string_to_value(Arc::new(s2v_drum_channel))
            .non_automatable(),
            pillar_channel: IntParam::new("Pillar channel", 0, drum_channel_range())
                .with_value_to_string(Arc::new(v2s_drum_channel))
                .with_string_to_value(Arc::new(s2v_drum_channel))
                .non_automatable(),

            color_mode: EnumParam::new("Colour mode", ColorMode::Dye),
            brightness: FloatParam::new("Brightness", 1.0, brightness_range())
                .with_unit(" %")
                .with_value_to_string(v2s_percent(1))
                .with_string_to_value(s2v_percent()),
            saturation: FloatParam::new("Saturation", 1.0, saturation_range())
                .with_unit(" %")
                .with_value_to_string(v2s_percent(1))
                .with_string_to_value(s2v_percent()),
            hue_shift: FloatParam::new("Hue shift", 0.0, hue_shift_range())
                .with_unit("°")
                .with_value_to_string(formatters::v2s_f32_rounded(1))
                .with_string_to_value(s2v_number()),
            tone_mode: EnumParam::new("Display", ToneMode::Filmic),
            obstacle_style: EnumParam::new("Obstacle look", ObstacleStyle::Fill),
            effects: EffectsParams::default(),
            heat: HeatParams::default(),
            particles: ParticleParams::default(),
            streamlines: StreamlineParams::default(),
            liquid: LiquidParams::default(),
        }
    }
}

/// A 0 to 400 % amount knob of the audio's painting, 100 % by default.
fn amount_param(name: &str) -> FloatParam {
    FloatParam::new(name, 1.0, multiplier_range())
        .with_unit(" %")
        .with_value_to_string(v2s_percent(1))
        .with_string_to_value(s2v_percent())
}

impl DyeflowParams {
    /// A copy of the current settings. Never call this from the audio thread.
    pub fn settings(&self) -> Settings {
        self.settings.read().clone()
    }

    /// Replace the settings (sanitised). Never call this from the audio thread.
    pub fn set_settings(&self, settings: Settings) {
        *self.settings.write() = settings.sanitized();
    }

    /// A copy of the editor settings.
    pub fn editor_settings(&self) -> EditorSettings {
        self.editor.read().clone()
    }

    /// Replace the editor settings (sanitised).
    pub fn set_editor_settings(&self, editor: EditorSettings) {
        *self.editor.write() = editor.sanitized();
    }

    /// The OSC settings (sanitised).
    pub fn osc(&self) -> OscSettings {
        self.osc.read().sanitized()
    }

    /// Replace the OSC settings. Never call this from the audio thread.
    pub fn set_osc(&self, osc: OscSettings) {
        *self.osc.write() = osc.sanitized();
    }

    /// The output window's settings (sanitised).
    pub fn output(&self) -> OutputSettings {
        self.output.read().sanitized()
    }

    /// Replace the output window's settings. Never call this from the audio thread.
    pub fn set_output(&self, output: OutputSettings) {
        *self.output.write() = output.sanitized();
    }
}

#[cfg(test)]
mod audio_migration_tests;
#[cfg(test)]
mod obstacle_migration_tests;
#[cfg(test)]
mod output_state_tests;

#[cfg(test)]
mod tests;
