//! What the model and the mapping are told: the parameters read into plain values (physics
//! knobs in solver units, smoothed in simulation time; the mapping's settings). The engine is
//! where parameters become knobs: the models and the mapping never see the plugin's params.
//!
//! Smoothing happens here, on the simulation side, rather than in `process()`: the simulation
//! steps whether or not the host is calling `process()` (transport stopped, editor tweaks,
//! offline renders), and smoothing per simulation step in simulation time makes an automation
//! step look the same at 30, 60 or 144 steps per second.

use crate::fluid::StreamlineLook;
use crate::fluid::{
    ColorMode, Effects, Liquid, LiquidStyle, Look, ObstacleStyle, Orbit, Palette, StreamlineMode,
    ToneMode, gravity_vector, hsv_to_rgb, light_for_display,
};
use crate::kernels::portable::Portable;
use crate::mapping::MappingConfig;
use crate::params::{DyeflowParams, MM2_PER_S_TO_CANVAS2_PER_S};
use crate::sim::StepInput;
use nice_plug::prelude::{FloatParam, Param};

/// Time constant of the physics smoothing. 60 ms turns a jump into a glide shorter than a
/// sixteenth note at 120 BPM, yet long enough that a jump never shows as a jolt at 144 fps.
pub const KNOB_SMOOTHING_MS: f32 = 60.0;

/// Declares [`Knobs`] from one list: each knob's doc, name and how it reads from the
/// parameters. The struct, [`Knobs::from_params`] and the list the smoother walks
/// ([`Knobs::fields`], [`Knobs::fields_mut`]) all come from it, so a knob cannot be added
/// without being read and smoothed (a test checks every one glides).
macro_rules! knobs {
    ($($(#[$doc:meta])* $name:ident: $($field:ident).+ => |$v:ident| $conv:expr,)*) => {
        /// The continuous knobs that change the fluid's behaviour or look, in solver units.
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct Knobs {
            $($(#[$doc])* pub $name: f32,)*
        }

        /// Continuous knobs smoothed together.
        pub(crate) const KNOBS: usize = [$(stringify!($name)),*].len();

        impl Knobs {
            /// The knobs' names, in the order of [`Knobs::fields`].
            pub const NAMES: [&'static str; KNOBS] = [$(stringify!($name)),*];

            /// The knobs' current (unsmoothed) values. Lock-free: parameters are atomics.
            pub fn from_params(p: &DyeflowParams) -> Self {
                Self::from_params_modulated(p, &[0.0; KNOBS])
            }

            /// The same with `offsets` added to the parameters' normalised values (the
            /// modulation's, [`super::modulation`]), clamped to their ranges.
            pub fn from_params_modulated(p: &DyeflowParams, offsets: &[f32; KNOBS]) -> Self {
                let params = Self::params(p);
                let mut plain = [0.0; KNOBS];
                for ((out, param), &offset) in plain.iter_mut().zip(params).zip(offsets) {
                    *out = modulated(param, offset);
                }
                let [$($name),*] = plain;
                Self {
                    $($name: {
                        let $v = $name;
                        $conv
                    },)*
                }
            }

            /// The parameter each knob reads, in the order of [`Knobs::NAMES`].
            pub fn params(p: &DyeflowParams) -> [&FloatParam; KNOBS] {
                [$(&p.$($field).+),*]
            }

            fn fields_mut(&mut self) -> [&mut f32; KNOBS] {
                [$(&mut self.$name),*]
            }

            /// Every knob's value, in the order of [`Knobs::NAMES`].
            pub fn fields(&self) -> [f32; KNOBS] {
                [$(self.$name),*]
            }
        }
    };
}

/// `param`'s value with `offset` added to its normalised value (clamped to its range).
fn modulated(param: &FloatParam, offset: f32) -> f32 {
    if offset == 0.0 || !offset.is_finite() {
        return param.value();
    }
    param.preview_plain((param.modulated_normalized_value() + offset).clamp(0.0, 1.0))
}

knobs! {
    /// Kinematic viscosity in canvas²/s (canvas height = 1).
    viscosity: viscosity => |v| v * MM2_PER_S_TO_CANVAS2_PER_S,
    /// Dye diffusivity in canvas²/s.
    dye_diffusion: dye_diffusion => |v| v * MM2_PER_S_TO_CANVAS2_PER_S,
    /// Velocity decay rate in 1/s.
    velocity_dissipation: velocity_dissipation => |v| v,
    /// Dye decay rate in 1/s.
    dye_dissipation: dye_dissipation => |v| v,
    /// Vorticity confinement epsilon (dimensionless).
    vorticity: vorticity => |v| v,
    /// Simulated seconds per real second.
    speed: speed => |v| v,
    /// Frame exposure multiplier.
    brightness: brightness => |v| v,
    /// Frame saturation, 0..1.
    saturation: saturation => |v| v,
    /// Hue rotation in degrees.
    hue_shift: hue_shift => |v| v,
    /// The picture effects' continuous knobs, as the parameters read (see
    /// [`crate::params::EffectsParams`]).
    bloom: effects.bloom => |v| v,
    bloom_threshold: effects.bloom_threshold => |v| v,
    bloom_knee: effects.bloom_knee => |v| v,
    bloom_radius: effects.bloom_radius => |v| v,
    rays: effects.rays => |v| v,
    shading: effects.shading => |v| v,
    light_angle: effects.light_angle => |v| v,
    bg_hue: effects.bg_hue => |v| v,
    bg_saturation: effects.bg_saturation => |v| v,
    bg_brightness: effects.bg_brightness => |v| v,
    vibrance: effects.vibrance => |v| v,
    /// Heat and buoyancy, in solver units (see [`crate::params::HeatParams`]).
    buoyancy: heat.buoyancy => |v| v,
    weight: heat.weight => |v| v,
    cooling: heat.cooling => |v| v,
    ambient: heat.ambient => |v| v,
    /// The lift's direction, degrees clockwise from up.
    lift_angle: heat.lift_angle => |v| v,
    /// The particles' life (seconds) and glow (see [`crate::params::ParticleParams`]).
    particle_life: particles.life => |v| v,
    particle_glow: particles.glow => |v| v,
    /// The streamlines' trace time, seconds (see [`crate::params::StreamlineParams`]).
    stream_length: streamlines.length => |v| v,
    /// The liquid's gravity (canvas heights/s²), tilt and sway (degrees), stiffness and near
    /// pressure (multiples of the source's), viscosity (/s), bounce and drag (/s) (see
    /// [`crate::params::LiquidParams`]).
    liquid_gravity: liquid.gravity => |v| v,
    liquid_tilt: liquid.tilt => |v| v,
    liquid_sway: liquid.sway => |v| v,
    liquid_stiffness: liquid.stiffness => |v| v,
    liquid_near: liquid.near => |v| v,
    liquid_viscosity: liquid.viscosity => |v| v,
    liquid_bounce: liquid.bounce => |v| v,
    liquid_drag: liquid.drag => |v| v,
    /// The 3D liquid's camera: orbit and height (degrees), distance (tank widths).
    camera_orbit: liquid.orbit => |v| v,
    camera_height: liquid.height => |v| v,
    camera_distance: liquid.distance => |v| v,
}

impl Default for Knobs {
    fn default() -> Self {
        Self::from_params(&DyeflowParams::default())
    }
}

impl Knobs {
    /// The step parameters for `real_dt_s` seconds of wall-clock (or render) time: the
    /// simulated time is scaled by the speed knob. The liquid's gravity turns by its tilt plus
    /// `swing` (-1 to 1, from the music) times its sway; its budget is the default (the
    /// driver sets the parameter's).
    pub fn step_input(&self, real_dt_s: f32, swing: f32) -> StepInput {
        let swing = if swing.is_finite() {
            swing.clamp(-1.0, 1.0)
        } else {
            0.0
        };
        StepInput {
            dt: real_dt_s * self.speed,
            viscosity: self.viscosity,
            dye_diffusion: self.dye_diffusion,
            velocity_dissipation: self.velocity_dissipation,
            dye_dissipation: self.dye_dissipation,
            vorticity: self.vorticity,
            buoyancy: self.buoyancy,
            weight: self.weight,
            cooling: self.cooling,
            ambient: self.ambient,
            up: crate::params::heat::up_direction(self.lift_angle),
            particle_life: self.particle_life,
            liquid: Liquid {
                gravity: gravity_vector(
                    self.liquid_gravity,
                    self.liquid_tilt + self.liquid_sway * swing,
                ),
                stiffness: self.liquid_stiffness,
                near: self.liquid_near,
                viscosity: self.liquid_viscosity,
                bounce: self.liquid_bounce,
                drag: self.liquid_drag,
                ..Liquid::default()
            },
        }
        .sanitized()
    }

    /// The look for rendering frames.
    pub fn look(&self, color_mode: ColorMode, tone: ToneMode, palette: Palette) -> Look {
        let bg = light_for_display(self.bg_brightness);
        let hue = hsv_to_rgb(self.bg_hue / 360.0, self.bg_saturation.clamp(0.0, 1.0), 1.0);
        Look {
            color_mode,
            tone,
            brightness: self.brightness,
            saturation: self.saturation,
            hue_shift: self.hue_shift,
            effects: Effects {
                bloom: self.bloom,
                bloom_threshold: self.bloom_threshold,
                bloom_knee: self.bloom_knee,
                bloom_radius: self.bloom_radius,
                rays: self.rays,
                shading: self.shading,
                light_angle: self.light_angle,
                palette,
                background: hue.map(|c| c * bg),
                vibrance: self.vibrance,
            },
            obstacles: ObstacleStyle::default(),
            particle_glow: self.particle_glow,
            streamlines: StreamlineLook {
                length: self.stream_length,
                ..StreamlineLook::default()
            },
            liquid: LiquidStyle::default(),
            orbit: Orbit {
                yaw: self.camera_orbit,
                pitch: self.camera_height,
                distance: self.camera_distance,
            },
        }
    }
}

/// The discrete knobs: applied at once, since they have no in-between.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Discrete {
    /// Pressure solver iterations per projection.
    pub pressure_iterations: u32,
    /// How frames are coloured.
    pub color_mode: ColorMode,
    /// How the picture's light becomes display values.
    pub tone: ToneMode,
    /// The picture's palette.
    pub palette: Palette,
    /// How obstacles are drawn.
    pub obstacles: ObstacleStyle,
    /// Whether and how streamlines show, their lines per height and trace steps.
    pub streamlines: StreamlineMode,
    pub stream_density: u32,
    pub stream_steps: u32,
    /// How the liquid is drawn, and its particle budget.
    pub liquid_style: LiquidStyle,
    pub liquid_budget: u32,
    /// The 3D liquid's floaters.
    pub liquid_floaters: u32,
}

impl Discrete {
    /// The current values.
    pub fn from_params(p: &DyeflowParams) -> Self {
        Self {
            pressure_iterations: p.pressure_iterations.value().max(1) as u32,
            color_mode: p.color_mode.value(),
            tone: p.tone_mode.value(),
            palette: Palette::from_index(p.effects.palette.value()),
            obstacles: p.obstacle_style.value(),
            streamlines: p.streamlines.mode.value(),
            stream_density: p.streamlines.density.value().max(0) as u32,
            stream_steps: p.streamlines.steps.value().max(0) as u32,
            liquid_style: p.liquid.style.value(),
            liquid_budget: p.liquid.budget.value().max(1) as u32,
            liquid_floaters: p.liquid.floaters.value().clamp(0, 8) as u32,
        }
    }
}

/// The mapping's settings: the current parameter values, for a canvas of `aspect`.
pub fn mapping_config(p: &DyeflowParams, aspect: f32) -> MappingConfig {
    MappingConfig {
        mode: p.mapping_mode.value(),
        aspect,
        splat_radius: p.splat_radius.value(),
        splat_force: p.splat_force.value(),
        dye_amount: p.dye_amount.value(),
        reactivity: p.audio_reactivity.value(),
        beat_pulse: p.beat_pulse.value(),
        // 1 to 16 are MIDI channels; the mapping counts them from 0.
        drum_channel: match p.drum_channel.value() {
            c @ 1..=16 => Some((c - 1) as u8),
            _ => None,
        },
        bands: [
            p.low_amount.value(),
            p.mid_amount.value(),
            p.high_amount.value(),
        ],
        chroma: p.chroma_amount.value(),
        heat: p.heat.buoyancy.value() > 0.0,
        particles: p.particles.amount.value(),
        pillar_channel: match p.pillar_channel.value() {
            c @ 1..=16 => Some((c - 1) as u8),
            _ => None,
        },
    }
}

/// The mapping's continuous parameters (beside the knobs) a modulation route can move, in the
/// order of [`mapped_params`].
pub const MAPPED: usize = 9;

/// The mapping's continuous parameters: splat radius, force and dye amount, the audio's
/// reactivity, its three bands' amounts, the chroma's, and the particles per note.
pub fn mapped_params(p: &DyeflowParams) -> [&FloatParam; MAPPED] {
    [
        &p.splat_radius,
        &p.splat_force,
        &p.dye_amount,
        &p.audio_reactivity,
        &p.low_amount,
        &p.mid_amount,
        &p.high_amount,
        &p.chroma_amount,
        &p.particles.amount,
    ]
}

/// [`mapping_config`] with the mapping's continuous parameters moved by `offsets` (on their
/// normalised values, clamped to their ranges), in the order of [`mapped_params`].
pub fn mapping_config_modulated(
    p: &DyeflowParams,
    aspect: f32,
    offsets: &[f32; MAPPED],
) -> MappingConfig {
    let params = mapped_params(p);
    let v = |i: usize| modulated(params[i], offsets[i]);
    MappingConfig {
        splat_radius: v(0),
        splat_force: v(1),
        dye_amount: v(2),
        reactivity: v(3),
        bands: [v(4), v(5), v(6)],
        chroma: v(7),
        particles: v(8),
        ..mapping_config(p, aspect)
    }
}

/// One-pole smoothing of [`Knobs`] in simulation time.
#[derive(Clone, Debug)]
pub struct KnobsSmoother {
    current: Knobs,
    time_constant_s: f32,
}

impl KnobsSmoother {
    /// Start at `initial` with no glide (a project opens as it was saved).
    pub fn new(initial: Knobs) -> Self {
        Self {
            current: initial,
            time_constant_s: KNOB_SMOOTHING_MS / 1000.0,
        }
    }

    /// The smoothed values now.
    pub fn current(&self) -> Knobs {
        self.current
    }

    /// Whether the glide towards `target` is over: every value within 1e-4 of its size (or
    /// 1e-9 absolute) of its target. Non-finite targets count as arrived, since they are held.
    pub fn settled(&self, target: Knobs) -> bool {
        let target = nearest_turn(target, &self.current);
        self.current
            .fields()
            .into_iter()
            .zip(target.fields())
            .all(|(value, target)| {
                !target.is_finite() || (target - value).abs() <= 1e-4 * target.abs().max(1e-5)
            })
    }

    /// Jump to `target` (used on reset or when a preset loads).
    pub fn snap(&mut self, target: Knobs) {
        self.current = target;
    }

    /// Move towards `target` by `dt_s` seconds of simulation time and return the new values.
    ///
    /// After time t a step change has covered 1 - exp(-t / tau) of its way, whatever the step
    /// size, so the glide is frame-rate independent. Non-finite targets are ignored (the value
    /// holds), and a non-finite or negative `dt_s` counts as 0.
    pub fn advance(&mut self, target: Knobs, dt_s: f32) -> Knobs {
        let dt = if dt_s.is_finite() { dt_s.max(0.0) } else { 0.0 };
        let alpha = 1.0 - (-dt / self.time_constant_s).pexp();
        let targets = nearest_turn(target, &self.current).fields();
        for (value, target) in self.current.fields_mut().into_iter().zip(targets) {
            if target.is_finite() {
                *value += (target - *value) * alpha;
            }
        }
        // The angles stay within half a turn of their targets, so they never wind up.
        let mut raw = target;
        for (value, target) in angles(&mut self.current).into_iter().zip(angles(&mut raw)) {
            if target.is_finite() && value.is_finite() {
                *value = *target + half_turn(*value - *target);
            }
        }
        self.current
    }
}

/// The knobs that are angles in degrees (every consumer takes their sine and cosine): they
/// glide the short way round, from 170 to -170 through 180, not through 0.
fn angles(k: &mut Knobs) -> [&mut f32; 4] {
    [
        &mut k.light_angle,
        &mut k.lift_angle,
        &mut k.liquid_tilt,
        &mut k.camera_orbit,
    ]
}

/// `x` degrees brought into -180..=180.
fn half_turn(x: f32) -> f32 {
    x - 360.0 * (x / 360.0).round()
}

/// `target` with each angle moved by whole turns to within half a turn of `current`'s.
fn nearest_turn(mut target: Knobs, current: &Knobs) -> Knobs {
    let mut now = *current;
    for (t, v) in angles(&mut target).into_iter().zip(angles(&mut now)) {
        if t.is_finite() && v.is_finite() {
            *t = *v + half_turn(*t - *v);
        }
    }
    target
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Angles glide the short way round: a tilt automated from 170 to -170 degrees passes
    /// 180, not 0, and settles on the target's direction without winding up.
    #[test]
    fn angles_glide_the_short_way_round() {
        let start = Knobs {
            liquid_tilt: 170.0,
            light_angle: -175.0,
            ..Knobs::default()
        };
        let target = Knobs {
            liquid_tilt: -170.0,
            light_angle: 175.0,
            ..start
        };
        let mut s = KnobsSmoother::new(start);
        let tau = KNOB_SMOOTHING_MS / 1000.0;
        let half = s.advance(target, tau);
        // 63.2 % of the way: the tilt's 20 degrees to 182.6 (-177.4), the light's 10 degrees
        // to -181.3 (178.7).
        assert!(
            (half_turn(half.liquid_tilt) - -177.36).abs() < 0.05,
            "{}",
            half.liquid_tilt
        );
        assert!(
            (half_turn(half.light_angle) - 178.68).abs() < 0.05,
            "{}",
            half.light_angle
        );
        assert!(!s.settled(target));
        for _ in 0..100 {
            s.advance(target, tau);
        }
        assert!(s.settled(target), "{:?}", s.current().liquid_tilt);
        let done = s.current();
        assert!((half_turn(done.liquid_tilt - -170.0)).abs() < 1e-3);
        assert!(
            done.liquid_tilt.abs() <= 180.0 + 1e-3,
            "{}",
            done.liquid_tilt
        );
        // Plain knobs glide as before.
        assert_eq!(done.viscosity, target.viscosity);
    }

    #[test]
    fn the_mappings_defaults_are_the_parameters_defaults() {
        let aspect = MappingConfig::default().aspect;
        assert_eq!(
            mapping_config(&DyeflowParams::default(), aspect),
            MappingConfig::default()
        );
    }

    /// A new instance (and a project saved before heat existed, which names none of its
    /// parameters) steps exactly as before: no buoyancy, no weight, up is up. Turned up, the
    /// heat knobs reach the step in solver units, and the lift's direction turns clockwise.
    #[test]
    fn heat_knobs_default_to_no_lift_and_reach_the_step() {
        let p = Knobs::default().step_input(1.0 / 60.0, 0.0);
        assert_eq!((p.buoyancy, p.weight, p.ambient), (0.0, 0.0, 0.0));
        assert!(!p.lifts());
        assert!(
            p.up[0].abs() < 1e-7 && (p.up[1] - 1.0).abs() < 1e-7,
            "{:?}",
            p.up
        );
        assert!(!mapping_config(&DyeflowParams::default(), 1.0).heat);
        let knobs = Knobs {
            buoyancy: 3.0,
            weight: 0.5,
            cooling: 2.0,
            ambient: -0.25,
            lift_angle: 90.0,
            ..Knobs::default()
        };
        let p = knobs.step_input(1.0 / 60.0, 0.0);
        assert_eq!(
            (p.buoyancy, p.weight, p.cooling, p.ambient),
            (3.0, 0.5, 2.0, -0.25)
        );
        assert!(
            (p.up[0] - 1.0).abs() < 1e-6 && p.up[1].abs() < 1e-6,
            "{:?}",
            p.up
        );
    }

    #[test]
    fn particle_knobs_default_to_none_and_reach_the_step_look_and_mapping() {
        let d = DyeflowParams::default();
        assert_eq!(mapping_config(&d, 1.0).particles, 0.0);
        let k = Knobs::default();
        assert_eq!(k.step_input(1.0 / 60.0, 0.0).particle_life, 3.0);
        let look = k.look(ColorMode::Dye, ToneMode::Filmic, Palette::Off);
        assert_eq!(look.particle_glow, 1.0);
        let knobs = Knobs {
            particle_life: 7.5,
            particle_glow: 2.5,
            ..Knobs::default()
        };
        assert_eq!(knobs.step_input(1.0 / 60.0, 0.0).particle_life, 7.5);
        let look = knobs.look(ColorMode::Dye, ToneMode::Filmic, Palette::Off);
        assert_eq!(look.particle_glow, 2.5);
        let mut p = Knobs::from_params(&d);
        p.particle_glow = f32::NAN;
        let look = p.look(ColorMode::Dye, ToneMode::Filmic, Palette::Off);
        assert_eq!(
            crate::sim::grid::particles::sanitize_glow(look.particle_glow),
            0.0
        );
    }

    /// The streamline parameters reach the frames' look: the mode, density and steps at once,
    /// the length smoothed; off by default.
    #[test]
    fn streamline_parameters_reach_the_look() {
        let p = DyeflowParams::default();
        let look = crate::engine::driver::Driver::new(&p).look();
        assert_eq!(look.streamlines, StreamlineLook::default());
        assert_eq!(look.streamlines.mode, StreamlineMode::Off);
        crate::preset::apply(
            br#"{"params": {"stream": "alone", "stream_dens": 50, "stream_len": 0.8,
                "stream_steps": 24}}"#,
            &p,
        )
        .expect("applies");
        let look = crate::engine::driver::Driver::new(&p).look();
        let want = StreamlineLook {
            mode: StreamlineMode::Alone,
            density: 50,
            steps: 24,
            length: 0.8,
        };
        let got = look.streamlines;
        assert_eq!(
            (got.mode, got.density, got.steps),
            (want.mode, want.density, want.steps)
        );
        assert!((got.length - 0.8).abs() < 1e-5, "{got:?}");
        let mut s = KnobsSmoother::new(Knobs::default());
        let target = Knobs::from_params(&p);
        assert!(!s.settled(target), "the length glides");
        s.snap(target);
        assert!(s.settled(target));
    }

    /// The liquid's knobs reach the step: gravity turned by the tilt plus the music's swing
    /// times the sway, the rest as set; the defaults are the model's (the source's).
    #[test]
    fn liquid_knobs_reach_the_step() {
        let d = Knobs::default().step_input(1.0 / 60.0, 0.0).liquid;
        assert_eq!(d, Liquid::default());
        let knobs = Knobs {
            liquid_gravity: 2.0,
            liquid_tilt: 30.0,
            liquid_sway: 60.0,
            liquid_stiffness: 2.0,
            liquid_viscosity: 0.5,
            ..Knobs::default()
        };
        let l = knobs.step_input(1.0 / 60.0, 1.0).liquid;
        // 30 + 60 = 90 degrees clockwise from down: to the left.
        assert!(
            (l.gravity[0] + 2.0).abs() < 1e-5 && l.gravity[1].abs() < 1e-5,
            "{:?}",
            l.gravity
        );
        let l = knobs.step_input(1.0 / 60.0, -0.5).liquid;
        // 30 - 30 = straight down.
        assert!(
            l.gravity[0].abs() < 1e-5 && (l.gravity[1] + 2.0).abs() < 1e-5,
            "{:?}",
            l.gravity
        );
        assert_eq!((l.stiffness, l.viscosity), (2.0, 0.5));
        // A broken swing counts as none.
        let l = knobs.step_input(1.0 / 60.0, f32::NAN).liquid;
        assert!((l.gravity[0] + 1.0).abs() < 1e-5, "{:?}", l.gravity);
    }

    /// Every knob the list declares is read and smoothed: a jump of any one alone covers
    /// 1 - 1/e of its way in one time constant, and no other knob moves. (The struct is made
    /// from the same list, so it holds nothing else: its size is the list's.)
    #[test]
    fn every_knob_glides() {
        assert_eq!(
            std::mem::size_of::<Knobs>(),
            KNOBS * std::mem::size_of::<f32>()
        );
        let start = Knobs::default();
        let expected = 1.0 - (-1.0f32).exp();
        for (i, name) in Knobs::NAMES.iter().enumerate() {
            let mut target = start;
            *target.fields_mut()[i] += 10.0;
            let mut smoother = KnobsSmoother::new(start);
            let now = smoother.advance(target, KNOB_SMOOTHING_MS / 1000.0);
            let (from, to, at) = (start.fields()[i], target.fields()[i], now.fields()[i]);
            let covered = (at - from) / (to - from);
            assert!(
                (covered - expected).abs() < 1e-3,
                "{name} covered {covered}"
            );
            for (j, other) in Knobs::NAMES.iter().enumerate() {
                if j != i {
                    assert_eq!(
                        now.fields()[j],
                        start.fields()[j],
                        "{other} moved with {name}"
                    );
                }
            }
            assert!(!smoother.settled(target), "{name} arrived at once");
        }
    }

    /// The 3D liquid's camera comes from its parameters, gliding; by default it is the
    /// look's default place; its orbit is an angle and glides the short way round.
    #[test]
    fn the_camera_comes_from_the_parameters() {
        let look = |k: &Knobs| k.look(ColorMode::Dye, ToneMode::Filmic, Palette::default());
        assert_eq!(look(&Knobs::default()).orbit, Orbit::default());
        let params = DyeflowParams::default();
        let k = Knobs::from_params(&params);
        assert_eq!(
            (k.camera_orbit, k.camera_height, k.camera_distance),
            (24.0, 22.0, 1.55)
        );
        let start = Knobs {
            camera_orbit: 170.0,
            ..Knobs::default()
        };
        let target = Knobs {
            camera_orbit: -170.0,
            ..Knobs::default()
        };
        let mut s = KnobsSmoother::new(start);
        let half = s.advance(target, 0.05);
        assert!(
            half_turn(half.camera_orbit).abs() > 170.0,
            "{}",
            half.camera_orbit
        );
    }

    fn with_viscosity(v: f32) -> Knobs {
        Knobs {
            viscosity: v,
            ..Knobs::default()
        }
    }

    #[test]
    fn a_jump_becomes_a_glide() {
        let mut s = KnobsSmoother::new(with_viscosity(0.0));
        let dt = 1.0 / 60.0;
        let first = s.advance(with_viscosity(1.0), dt).viscosity;
        // 1 - exp(-16.67 / 60) = 0.2425: a quarter of the way in the first step, not all of it.
        approx::assert_relative_eq!(first, 0.2425, max_relative = 1e-3);
        let mut prev = first;
        for _ in 0..60 {
            let v = s.advance(with_viscosity(1.0), dt).viscosity;
            assert!(v >= prev && v <= 1.0, "monotone approach, never overshoots");
            prev = v;
        }
        // After one second (16.7 time constants) it has arrived.
        approx::assert_relative_eq!(prev, 1.0, max_relative = 1e-6);
    }

    #[test]
    fn the_glide_is_frame_rate_independent() {
        let target = with_viscosity(1.0);
        let at = |fps: u32| {
            let mut s = KnobsSmoother::new(with_viscosity(0.0));
            for _ in 0..fps / 10 {
                s.advance(target, 1.0 / fps as f32);
            }
            s.current().viscosity
        };
        // 100 ms of simulated time: 1 - exp(-100 / 60) = 0.8111 at any rate.
        for fps in [30, 60, 120, 240] {
            approx::assert_relative_eq!(at(fps), 0.8111, max_relative = 1e-3);
        }
    }

    #[test]
    fn bad_input_holds_the_value() {
        let mut s = KnobsSmoother::new(with_viscosity(0.5));
        assert_eq!(s.advance(with_viscosity(f32::NAN), 0.1).viscosity, 0.5);
        assert_eq!(s.advance(with_viscosity(1.0), f32::NAN).viscosity, 0.5);
        assert_eq!(s.advance(with_viscosity(1.0), -1.0).viscosity, 0.5);
        // A huge dt lands exactly on the target, never past it.
        assert_eq!(s.advance(with_viscosity(1.0), 1.0e9).viscosity, 1.0);
    }

    #[test]
    fn reads_params_in_solver_units() {
        let p = DyeflowParams::default();
        let phys = Knobs::from_params(&p);
        assert_eq!(phys.viscosity, 0.0);
        assert_eq!(phys.velocity_dissipation, 0.2);
        assert_eq!(Discrete::from_params(&p).pressure_iterations, 20);
    }
}
