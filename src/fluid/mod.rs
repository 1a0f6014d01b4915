//! The words every stage shares: what the music asks of the fluid (splats of dye and force),
//! and how the picture reads it (look, colour mode, colour maths). A leaf: it imports nothing
//! of ours, so the audio side, mapping, the models, the display, the editor and the command
//! line can all use it without depending on one another.
//!
//! Units: positions and radii in canvas units (the canvas is 1 tall and `aspect` wide, x right,
//! y up); velocities in canvas heights per second; colours linear RGB.

pub mod mask;

use nice_plug::prelude::Enum;
use serde::{Deserialize, Serialize};

/// Shape of a splat's footprint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[repr(u32)]
pub enum SplatShape {
    /// exp(-d^2 / r^2): a soft round blob.
    #[default]
    Gaussian = 0,
    /// 1 inside the square of half-side `r`, 0 outside (the bench's "centre block").
    Block = 1,
    /// A pull towards the centre (a push away when `force[0]` is negative): the velocity added
    /// at offset d is `-force[0] * d / r * exp(-|d|^2 / r^2)`, strongest (0.43 `force[0]`) at
    /// `r / sqrt(2)`. `force[1]` is ignored; dye has the Gaussian footprint.
    Radial = 2,
}

/// A Gaussian (or block) injection of dye and momentum.
///
/// Positions and radii are in canvas units (height 1, width = aspect). Every field is
/// sanitised before use: NaN or infinite fields make the splat a no-op, the radius is clamped to
/// [half a cell, 4 canvas heights], and the force to the simulation's speed limit.
#[derive(Clone, Copy, Debug, PartialEq, Default, Serialize, Deserialize)]
pub struct Splat {
    /// Centre, in canvas units (x right, y up).
    pub pos: [f32; 2],
    /// Radius (Gaussian: 1/e distance; block: half side), in canvas units.
    pub radius: f32,
    /// Linear RGB colour of the dye added at the centre.
    pub color: [f32; 3],
    /// Scale of the dye added (0 = momentum only).
    pub amount: f32,
    /// Velocity added at the centre, in canvas heights per second.
    pub force: [f32; 2],
    /// Footprint.
    pub shape: SplatShape,
    /// Temperature added at the centre, with the dye's footprint (negative: cold); clamped to
    /// +-`MAX_HEAT`. Hot fluid rises and cold fluid sinks by the step's buoyancy.
    pub heat: f32,
    /// Particles emitted over the disc of `radius`, in the splat's colour (the fraction
    /// rounded at random; see [`crate::sim::grid::particles`]).
    pub particles: f32,
    /// Where it lands in depth, for the 3D liquid: -1 at the front of the tank, 1 at the back,
    /// 0 in the middle (the 2D fluids ignore it; splats from before it: the middle).
    #[serde(default)]
    pub depth: f32,
    /// The drum that struck it, if a drum did: models that show drums their own way read it
    /// (the 3D liquid); the 2D fluids draw every splat alike. Splats from before it: none.
    #[serde(default)]
    pub drum: Drum,
}

/// Which family of drum struck a splat (General MIDI's, `mapping::drums`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Drum {
    /// Not a drum: a note, an onset, the beat, the mouse.
    #[default]
    None,
    Kick,
    /// Snares, claps, rimshots.
    Snare,
    /// Hi-hats and cymbals.
    Cymbal,
    Tom,
    /// Other percussion.
    Other,
}

impl Splat {
    /// Whether its place, radius, colour, amount and force are all finite (a model ignores a
    /// splat that is not).
    pub fn is_finite(&self) -> bool {
        self.pos
            .iter()
            .chain(&self.force)
            .chain(&self.color)
            .all(|x| x.is_finite())
            && self.radius.is_finite()
            && self.amount.is_finite()
    }
}

/// How the dye is coloured when a frame is rendered.
#[derive(Enum, Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ColorMode {
    /// The dye's own RGB colour, as injected by the notes.
    #[id = "dye"]
    #[name = "Dye colour"]
    Dye,
    /// Hue cycles with density, as in the original stable-fluids demo.
    #[id = "density"]
    #[name = "Density hue"]
    DensityHue,
    /// Hue from the velocity's direction, value from its speed.
    #[id = "velocity"]
    #[name = "Velocity hue"]
    VelocityHue,
    /// The temperature (see heat and buoyancy) through a fire palette: dark red where it is
    /// barely warm, orange, yellow, then white-hot; blue where it is colder than 0.
    #[id = "heat"]
    #[name = "Temperature"]
    Temperature,
}

/// How the colour stage's light becomes display values (the display pipeline).
#[derive(Enum, Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ToneMode {
    /// Dyeflow's first look: `1 - e^-x` per channel, written as is (no sRGB encoding, no
    /// dither). Projects saved before the display pipeline load with it.
    #[id = "legacy"]
    #[name = "Legacy"]
    Legacy,
    /// Dye as emitted light in linear RGB: exposure, a hue-preserving filmic curve
    /// ([`filmic_ratio`]), sRGB encoding ([`srgb_encode`]) and a dither before rounding
    /// ([`dither`]).
    #[id = "filmic"]
    #[name = "Filmic"]
    Filmic,
}

/// How obstacles (solid cells) show in the picture: drawn over the finished frame.
#[derive(Enum, Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum ObstacleStyle {
    /// Filled with a stone colour ([`OBSTACLE_FILL_RGB8`]), anti-aliased edges.
    #[default]
    #[id = "fill"]
    #[name = "Fill"]
    Fill,
    /// Only their outline ([`OBSTACLE_OUTLINE_RGB8`]): the fluid's own picture shows inside
    /// (dark, since no dye lives in solids).
    #[id = "outline"]
    #[name = "Outline"]
    Outline,
    /// Not drawn: the flow still goes round them.
    #[id = "hidden"]
    #[name = "Hidden"]
    Hidden,
}

/// The fill colour of obstacles, 8-bit sRGB: a cool slate grey, lighter than the default
/// background and darker than lit dye, so walls read as objects in either.
pub const OBSTACLE_FILL_RGB8: [u8; 3] = [88, 96, 112];
/// The outline colour of obstacles, 8-bit sRGB: near white.
pub const OBSTACLE_OUTLINE_RGB8: [u8; 3] = [232, 238, 250];

/// Whether and how streamlines show (see [`crate::display::streamlines`]).
#[derive(Enum, Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum StreamlineMode {
    /// Not drawn.
    #[default]
    #[id = "off"]
    #[name = "Off"]
    Off,
    /// Drawn over the picture.
    #[id = "overlay"]
    #[name = "Overlay"]
    Overlay,
    /// Drawn alone, on black (the obstacles still show).
    #[id = "alone"]
    #[name = "Alone"]
    Alone,
}

/// The streamline knobs' ranges.
pub mod streamline_range {
    /// Fewest and most seed rows (the density knob).
    pub const MIN_DENSITY: u32 = 4;
    pub const MAX_DENSITY: u32 = 128;
    /// Fewest and most trace steps per line.
    pub const MIN_STEPS: u32 = 1;
    pub const MAX_STEPS: u32 = 64;
    /// Shortest and longest trace time, seconds of flow.
    pub const MIN_LENGTH_S: f32 = 0.01;
    pub const MAX_LENGTH_S: f32 = 2.0;
}
use streamline_range::*;

/// Largest particle glow (the look's multiplier of a particle's light).
pub const MAX_GLOW: f32 = 4.0;

/// How the streamlines look (the part of [`Look`] that is theirs; `display::streamlines` draws
/// them).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StreamlineLook {
    /// Off, over the picture, or alone.
    pub mode: StreamlineMode,
    /// Seed rows (lines per canvas height).
    pub density: u32,
    /// Trace steps per line.
    pub steps: u32,
    /// Trace time, seconds of flow.
    pub length: f32,
}

impl Default for StreamlineLook {
    /// Off; when turned on, 32 rows of 16-step lines tracing 0.3 s of flow.
    fn default() -> Self {
        Self {
            mode: StreamlineMode::Off,
            density: 32,
            steps: 16,
            length: 0.3,
        }
    }
}

impl StreamlineLook {
    /// Within range (a non-finite length takes the default).
    pub fn sanitized(self) -> Self {
        let length = if self.length.is_finite() {
            self.length.clamp(MIN_LENGTH_S, MAX_LENGTH_S)
        } else {
            Self::default().length
        };
        Self {
            mode: self.mode,
            density: self.density.clamp(MIN_DENSITY, MAX_DENSITY),
            steps: self.steps.clamp(MIN_STEPS, MAX_STEPS),
            length,
        }
    }
}

/// How frames are coloured and exposed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Look {
    /// Colour mode.
    pub color_mode: ColorMode,
    /// How light becomes display values.
    pub tone: ToneMode,
    /// Exposure multiplier.
    pub brightness: f32,
    /// Saturation, 0..1.
    pub saturation: f32,
    /// Hue rotation in degrees.
    pub hue_shift: f32,
    /// Bloom, rays, shading, palette and background (the filmic tone mode only).
    pub effects: Effects,
    /// How obstacles are drawn (both tone modes).
    pub obstacles: ObstacleStyle,
    /// Light of the particles: a multiplier of each one's colour (0: not drawn; at most
    /// [`MAX_GLOW`]).
    pub particle_glow: f32,
    /// Streamlines (off by default).
    pub streamlines: StreamlineLook,
    /// How the particle fluid is drawn (the grid ignores it).
    pub liquid: LiquidStyle,
    /// Where the 3D liquid's camera is (the 2D fluids ignore it).
    pub orbit: Orbit,
}

/// Where the 3D liquid's camera is: round the tank, above it, and how far.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Orbit {
    /// Degrees round the tank's vertical axis from straight in front (positive: from the
    /// right).
    pub yaw: f32,
    /// Degrees above the horizon.
    pub pitch: f32,
    /// Distance from the tank's middle, in tank widths.
    pub distance: f32,
}

impl Default for Orbit {
    /// A little from the right and above, the whole tank in view.
    fn default() -> Self {
        Self {
            yaw: 24.0,
            pitch: 22.0,
            distance: 1.55,
        }
    }
}

impl Orbit {
    /// Every field finite and within its range (NaN: the default's).
    pub fn sanitized(&self) -> Self {
        let d = Self::default();
        let clean = |x: f32, lo: f32, hi: f32, or: f32| {
            if x.is_finite() { x.clamp(lo, hi) } else { or }
        };
        Self {
            yaw: clean(self.yaw, -360.0, 360.0, d.yaw),
            pitch: clean(self.pitch, -10.0, 89.0, d.pitch),
            distance: clean(self.distance, 0.5, 8.0, d.distance),
        }
    }
}

impl Default for Look {
    /// The plain look: dye colours, filmic tone, no effects.
    fn default() -> Self {
        Self {
            color_mode: ColorMode::Dye,
            tone: ToneMode::Filmic,
            brightness: 1.0,
            saturation: 1.0,
            hue_shift: 0.0,
            effects: Effects::OFF,
            obstacles: ObstacleStyle::Fill,
            particle_glow: 1.0,
            streamlines: StreamlineLook::default(),
            liquid: LiquidStyle::Surface,
            orbit: Orbit::default(),
        }
    }
}

/// How the particle fluid (the liquid) is drawn; either way its colour follows the colour
/// mode: the notes' colours, or its speed in the velocity hue mode.
#[derive(Enum, Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum LiquidStyle {
    /// A smooth surface: the particles' light splatted with a wide kernel, so the liquid
    /// reads as one body with the picture's glow.
    #[default]
    #[id = "surface"]
    #[name = "Surface"]
    Surface,
    /// Each particle a soft disc, as in the source.
    #[id = "discs"]
    #[name = "Discs"]
    Discs,
}

/// The particle fluid's knobs, in canvas units (the canvas is 1 tall) and seconds; the
/// defaults are the source's tuned values plus a little drag. The model sanitises them; its
/// budget is this one's from the first step on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Liquid {
    /// Gravity, canvas heights/s² (x right, y up).
    pub gravity: [f32; 2],
    /// The pressure's stiffness, a multiple of the source's (1: its 500 per unit of density).
    pub stiffness: f32,
    /// The near pressure (which keeps the surface from clumping), a multiple of the source's.
    pub near: f32,
    /// Viscosity: how strongly neighbours' velocities even out, per second (the source:
    /// 0.06).
    pub viscosity: f32,
    /// The speed a bounce off a wall or an obstacle keeps, 0 to 1.
    pub bounce: f32,
    /// Drag, per second: the velocity decays as `exp(-drag t)` (the source has none).
    pub drag: f32,
    /// Most particles: a burst into a full box recycles the oldest.
    pub budget: u32,
    /// Balls floating in the 3D liquid, 0 to 8 (the 2D liquid has none).
    pub floaters: u32,
}

impl Default for Liquid {
    fn default() -> Self {
        Self {
            gravity: [0.0, -1.2],
            stiffness: 1.0,
            near: 1.0,
            viscosity: 0.06,
            bounce: 0.95,
            drag: 0.2,
            budget: 6_000,
            floaters: 3,
        }
    }
}

/// Gravity of `strength` canvas heights/s², turned `degrees` clockwise from straight down (90:
/// towards the left, as in a box tipped counter-clockwise by 90 degrees). The same vector as
/// minus the heat's up direction for the same angle.
pub fn gravity_vector(strength: f32, degrees: f32) -> [f32; 2] {
    let a = degrees.to_radians();
    [-strength * libm::sinf(a), -strength * libm::cosf(a)]
}

/// Gradient maps of the light's luminance: a palette replaces each pixel's colour by the
/// palette's colour at its brightness and keeps the luminance (dim light takes the first
/// stop's hue, bright light the last's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u32)]
pub enum Palette {
    /// The dye's own colours.
    #[default]
    Off = 0,
    /// Deep red, orange, yellow, white.
    Fire = 1,
    /// Deep blue, azure, cyan, white.
    Ice = 2,
    /// Magenta, violet, cyan, acid green.
    Neon = 3,
    /// Purple, magenta, orange, gold.
    Sunset = 4,
    /// Grey.
    Mono = 5,
}

/// Colour stops of a palette, evenly spaced from dim (first) to bright (last).
pub const PALETTE_STOPS: usize = 5;

/// Light at which a palette reaches its middle stop: the map's position is
/// `t = Y / (Y + PALETTE_HALF_LIGHT)` for luminance `Y`.
pub const PALETTE_HALF_LIGHT: f32 = 0.5;

/// Rec. 709 luminance weights of linear RGB.
pub const LUMA: [f32; 3] = [0.2126, 0.7152, 0.0722];

impl Palette {
    /// Every palette, in parameter order.
    pub const ALL: [Palette; 6] = [
        Palette::Off,
        Palette::Fire,
        Palette::Ice,
        Palette::Neon,
        Palette::Sunset,
        Palette::Mono,
    ];

    /// The palette's name (parameter text).
    pub fn name(self) -> &'static str {
        match self {
            Palette::Off => "Off",
            Palette::Fire => "Fire",
            Palette::Ice => "Ice",
            Palette::Neon => "Neon",
            Palette::Sunset => "Sunset",
            Palette::Mono => "Mono",
        }
    }

    /// The palette at `index` (parameter value); out of range is [`Palette::Off`].
    pub fn from_index(index: i32) -> Self {
        usize::try_from(index)
            .ok()
            .and_then(|i| Self::ALL.get(i).copied())
            .unwrap_or_default()
    }

    /// The stops as sRGB-encoded 8-bit colours (how they were chosen), dim to bright.
    fn srgb_stops(self) -> Option<[u32; PALETTE_STOPS]> {
        Some(match self {
            Palette::Off => return None,
            Palette::Fire => [0x8b0a00, 0xff2a00, 0xff8c00, 0xffd000, 0xfff4d8],
            Palette::Ice => [0x1020ff, 0x1e6bff, 0x30c0ff, 0x9ff0ff, 0xf4ffff],
            Palette::Neon => [0xff00c8, 0x8a00ff, 0x00e5ff, 0x39ff14, 0xf0ff40],
            Palette::Sunset => [0x5a0a8c, 0xc8125a, 0xff4e3a, 0xff9e2c, 0xffe08a],
            Palette::Mono => [0xffffff; PALETTE_STOPS],
        })
    }

    /// The stops in linear RGB, each scaled to luminance 1, dim to bright; `None` for
    /// [`Palette::Off`]. Any mix of two stops has luminance 1 too, so the tone pass maps a
    /// pixel of luminance `Y` to `Y` times the mix at its place.
    pub fn stops(self) -> Option<[[f32; 3]; PALETTE_STOPS]> {
        let srgb = self.srgb_stops()?;
        Some(srgb.map(|hex| {
            let rgb = [16, 8, 0].map(|shift| srgb_decode(((hex >> shift) & 0xff) as f32 / 255.0));
            let y: f32 = rgb.iter().zip(LUMA).map(|(c, w)| c * w).sum();
            rgb.map(|c| c / y)
        }))
    }
}

/// The picture effects of the filmic tone mode, in light units (linear RGB). [`Effects::OFF`]
/// gives the plain filmic picture, bit for bit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Effects {
    /// Bloom intensity: the glow added is this times the light above the threshold, spread
    /// out (0: off).
    pub bloom: f32,
    /// Light (brightest channel) from which the bloom starts.
    pub bloom_threshold: f32,
    /// Softness of the threshold, as a share (0..1) of it: light from `threshold (1 - knee)`
    /// on blooms a little, quadratically.
    pub bloom_knee: f32,
    /// Bloom spread, 0..1: how much of each mip level's glow comes from the wider levels.
    pub bloom_radius: f32,
    /// Sunrays: light scattered from bright dye along rays from the frame's centre (0: off).
    pub rays: f32,
    /// Shading: how much the light's relief, lit from [`Effects::light_angle`], shades the
    /// dye (0: off, 1: full).
    pub shading: f32,
    /// Where the shading's light comes from, degrees anticlockwise from the right.
    pub light_angle: f32,
    /// A gradient map of the light's luminance.
    pub palette: Palette,
    /// Light under the fluid, linear RGB (dye covers it as it brightens).
    pub background: [f32; 3],
    /// Vibrance, 0..1: pushes dull colours (every channel lit, as where several dyes mix or
    /// glow) away from grey, keeping their hue and luminance; vivid colours stay as they are
    /// (0: off).
    pub vibrance: f32,
}

impl Effects {
    /// No effect at all.
    pub const OFF: Effects = Effects {
        bloom: 0.0,
        bloom_threshold: 1.0,
        bloom_knee: 0.5,
        bloom_radius: 0.7,
        rays: 0.0,
        shading: 0.0,
        light_angle: 135.0,
        palette: Palette::Off,
        background: [0.0; 3],
        vibrance: 0.0,
    };

    /// Finite values in their ranges (a non-finite value turns its effect off or takes the
    /// neutral value).
    pub fn sanitized(&self) -> Self {
        let clamp = |x: f32, lo: f32, hi: f32, neutral: f32| {
            if x.is_finite() {
                x.clamp(lo, hi)
            } else {
                neutral
            }
        };
        Self {
            bloom: clamp(self.bloom, 0.0, 16.0, 0.0),
            bloom_threshold: clamp(self.bloom_threshold, 0.0, 64.0, 1.0),
            bloom_knee: clamp(self.bloom_knee, 0.0, 1.0, 0.5),
            bloom_radius: clamp(self.bloom_radius, 0.0, 1.0, 0.7),
            rays: clamp(self.rays, 0.0, 16.0, 0.0),
            shading: clamp(self.shading, 0.0, 1.0, 0.0),
            light_angle: clamp(self.light_angle, -1.0e4, 1.0e4, 135.0),
            palette: self.palette,
            background: self
                .background
                .map(|c| clamp(c, 0.0, FILMIC_MAX_LIGHT, 0.0)),
            vibrance: clamp(self.vibrance, 0.0, 1.0, 0.0),
        }
    }

    /// Whether any effect changes the picture (after [`Effects::sanitized`]).
    pub fn any(&self) -> bool {
        self.bloom > 0.0
            || self.rays > 0.0
            || self.shading > 0.0
            || self.palette != Palette::Off
            || self.background.iter().any(|&c| c > 0.0)
            || self.vibrance > 0.0
    }
}

/// The light whose display value is `value` (0..1, sRGB-encoded) after the filmic curve: the
/// inverse of `srgb_encode(filmic(m))`. A background of hue `h` and brightness `value` is the
/// colour `hsv(h, s, 1)` times this, so its brightest channel shows at `value`.
pub fn light_for_display(value: f32) -> f32 {
    let y = srgb_decode(value.clamp(0.0, 1.0)).min(0.999);
    // f(m) = y: (2.51 - 2.43 y) m^2 + (0.03 - 0.59 y) m - 0.14 y = 0, the positive root.
    let (a, b, c) = (2.51 - 2.43 * y, 0.03 - 0.59 * y, -0.14 * y);
    (-b + (b * b - 4.0 * a * c).sqrt()) / (2.0 * a)
}

/// The inverse of [`srgb_encode`]: an encoded value in 0..1 to linear light.
pub fn srgb_decode(v: f32) -> f32 {
    let v = v.clamp(0.0, 1.0);
    if v <= 0.040_45 {
        v / 12.92
    } else {
        libm::powf((v + 0.055) / 1.055, 2.4)
    }
}

/// Hue turns per unit of total density in the density-hue mode.
pub const DENSITY_HUE_TURNS: f32 = 0.35;
/// Exposure of speed in the velocity-hue mode: a speed of 1 canvas/s reads at 1 - e^-2.
pub const VELOCITY_VALUE_SCALE: f32 = 2.0;

/// Largest light [`filmic_ratio`] looks at; more is the same white.
pub const FILMIC_MAX_LIGHT: f32 = 1.0e4;

/// The filmic curve's gain on a pixel's light: the display pipeline scales all three channels
/// by `filmic_ratio(m)`, where `m` is the brightest channel, so the curve shapes brightness
/// and leaves hue and saturation alone (red and green light mix to yellow at any exposure).
///
/// The curve is Narkowicz's fit of the ACES filmic reference (2015),
/// `f(m) = m (2.51 m + 0.03) / (m (2.43 m + 0.59) + 0.14)`, a toe for contrast, mid-grey 0.18
/// to 0.267, a soft shoulder, capped so that `m * ratio <= 1` (f reaches 1 at m = 7.24).
/// Written as `f(m) / m` it needs no division by `m` (finite at 0: 0.03 / 0.14).
#[inline(always)]
#[allow(clippy::manual_clamp)] // clamp would keep NaN; max-then-min maps it to 0
pub fn filmic_ratio(m: f32) -> f32 {
    // Past 7.24 the cap decides; the clamp keeps `m * m` from overflowing to a gain of 0 (huge
    // light would turn black) and maps NaN to 0.
    let m = m.max(0.0).min(FILMIC_MAX_LIGHT);
    let (n, d) = (
        m.mul_add(2.51, 0.03),
        m.mul_add(m.mul_add(2.43, 0.59), 0.14),
    );
    // The smaller of f(m) / m = n / d and the cap 1.000001 / m (rounded up a little so that
    // the brightest channel reaches 1 and is clamped there, rather than 0.99999994), chosen
    // by cross-multiplying (d > 0, m >= 0) so that a pixel pays for one division, not two;
    // at m = 0 the cap is +inf and n / d is chosen.
    let (num, den) = if n * m > 1.000_001 * d {
        (1.000_001, m)
    } else {
        (n, d)
    };
    num / den
}

/// The filmic curve itself, `m * filmic_ratio(m)` (at most 1): 0 at 0, monotonic, 1 from
/// m = 7.24 on.
#[inline(always)]
pub fn filmic(m: f32) -> f32 {
    (m.max(0.0) * filmic_ratio(m)).min(1.0)
}

/// The sRGB transfer function (IEC 61966-2-1): linear light in 0..1 to the encoded value in
/// 0..1 (out-of-range input is clamped).
#[inline]
pub fn srgb_encode(x: f32) -> f32 {
    let x = x.clamp(0.0, 1.0);
    if x <= 0.003_130_8 {
        12.92 * x
    } else if x >= 1.0 {
        // 1.055 - 0.055 rounds to 0.99999994: white must stay white.
        1.0
    } else {
        1.055 * libm::powf(x, 1.0 / 2.4) - 0.055
    }
}

/// A deterministic dither offset in [0, 1) for pixel (x, y): Jimenez's interleaved gradient
/// noise, `fract(52.98 fract(0.0671 x + 0.00584 y))`, in 24-bit fixed point so the CPU and the
/// GPU (tone.wgsl) give the same bits. Added to `value * 255` before rounding down it
/// keeps the mean and turns the 8-bit steps of a dark gradient into fine noise.
#[inline(always)]
pub fn dither(x: u32, y: u32) -> f32 {
    // 0.06711056 * 2^24 = 1125928.2, 0.00583715 * 2^24 = 97931.4: fract(...) * 2^24.
    let a = x
        .wrapping_mul(1_125_928)
        .wrapping_add(y.wrapping_mul(97_931))
        & 0x00ff_ffff;
    // 52.9829189 * 2^8 = 13563.6: a 24-bit fraction times an 8-bit one wraps to fract * 2^32.
    let b = a.wrapping_mul(13_564);
    (b >> 8) as f32 * (1.0 / 16_777_216.0)
}

/// HSV (hue in turns, any real; saturation and value in 0..1) to RGB in 0..1.
#[inline(always)]
pub fn hsv_to_rgb(h: f32, s: f32, v: f32) -> [f32; 3] {
    let h = h - h.floor();
    let k = |n: f32| {
        // n + 6h lies in [1, 11): one conditional subtraction is the exact `% 6` (no libm).
        let k = n + h * 6.0;
        let k = if k >= 6.0 { k - 6.0 } else { k };
        let m = k.min(4.0 - k).clamp(0.0, 1.0);
        v - v * s * m
    };
    [k(5.0), k(3.0), k(1.0)]
}

/// RGB in 0..1 to HSV (hue in turns 0..1).
#[inline(always)]
pub fn rgb_to_hsv(rgb: [f32; 3]) -> [f32; 3] {
    let [r, g, b] = rgb;
    let max = r.max(g).max(b);
    let min = r.min(g).min(b);
    let c = max - min;
    let h = if c <= 0.0 {
        0.0
    } else if max == r {
        ((g - b) / c).rem_euclid(6.0)
    } else if max == g {
        (b - r) / c + 2.0
    } else {
        (r - g) / c + 4.0
    };
    let s = if max > 0.0 { c / max } else { 0.0 };
    [h / 6.0, s, max]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filmic_curve_known_answers() {
        assert_eq!(filmic(0.0), 0.0);
        // 0.18 (2.51 * 0.18 + 0.03) / (0.18 (2.43 * 0.18 + 0.59) + 0.14)
        //   = 0.086724 / 0.324932 = 0.26690.
        approx::assert_relative_eq!(filmic(0.18), 0.266_90, max_relative = 1e-4);
        // 1: 2.54 / 3.16 = 0.80380.
        approx::assert_relative_eq!(filmic(1.0), 0.803_80, max_relative = 1e-4);
        // The slope at 0 is 0.03 / 0.14: a gentle toe, never a crushed black.
        approx::assert_relative_eq!(filmic_ratio(0.0), 0.214_29, max_relative = 1e-4);
        let mut prev = 0.0;
        for i in 1..=4000 {
            let y = filmic(i as f32 * 0.005);
            assert!(
                y >= prev && y <= 1.0,
                "monotonic and at most 1: f({i}) = {y}"
            );
            prev = y;
        }
        assert!(filmic(4.0) > 0.97 && filmic(4.0) < 1.0, "{}", filmic(4.0));
        assert_eq!(filmic(1.0e6), 1.0);
        assert_eq!(filmic(f32::INFINITY), 1.0);
        assert_eq!(filmic(-1.0), 0.0);
    }

    #[test]
    fn srgb_encoding_known_answers() {
        assert_eq!(srgb_encode(0.0), 0.0);
        assert_eq!(srgb_encode(1.0), 1.0);
        // The linear segment: 0.002 * 12.92.
        approx::assert_relative_eq!(srgb_encode(0.002), 0.025_84, max_relative = 1e-5);
        // Mid-grey 0.18 encodes to 0.4614 (118 of 255); 0.5 to 0.7354 (188).
        approx::assert_relative_eq!(srgb_encode(0.18), 0.461_36, max_relative = 1e-4);
        approx::assert_relative_eq!(srgb_encode(0.5), 0.735_36, max_relative = 1e-4);
        // The two pieces meet (continuity at 0.0031308).
        let (a, b) = (srgb_encode(0.003_130_7), srgb_encode(0.003_131));
        assert!((a - b).abs() < 1e-5, "{a} {b}");
        assert_eq!(srgb_encode(2.0), 1.0);
    }

    #[test]
    fn dither_is_uniform_and_deterministic() {
        // 256 x 256 offsets: in [0, 1), mean 1/2, each tenth of the range about as common.
        let mut bins = [0usize; 10];
        let mut sum = 0.0f64;
        for y in 0..256 {
            for x in 0..256 {
                let d = dither(x, y);
                assert!((0.0..1.0).contains(&d));
                assert_eq!(d, dither(x, y));
                bins[(d * 10.0) as usize] += 1;
                sum += f64::from(d);
            }
        }
        let mean = sum / 65536.0;
        assert!((mean - 0.5).abs() < 0.01, "mean {mean}");
        for b in bins {
            assert!((b as f64 / 6553.6 - 1.0).abs() < 0.1, "{bins:?}");
        }
    }

    #[test]
    fn palettes_keep_luminance_and_backgrounds_show_at_their_value() {
        assert!(Palette::Off.stops().is_none());
        for p in Palette::ALL.into_iter().skip(1) {
            for stop in p.stops().unwrap() {
                let y: f32 = stop.iter().zip(LUMA).map(|(c, w)| c * w).sum();
                approx::assert_relative_eq!(y, 1.0, max_relative = 1e-5);
            }
        }
        for (i, p) in Palette::ALL.into_iter().enumerate() {
            assert_eq!(Palette::from_index(i as i32), p);
        }
        assert_eq!(Palette::from_index(-1), Palette::Off);
        assert_eq!(Palette::from_index(99), Palette::Off);
        for v in [0.0, 0.02, 0.1, 0.5, 0.9] {
            let m = light_for_display(v);
            approx::assert_abs_diff_eq!(srgb_encode(filmic(m)), v, epsilon = 1e-4);
        }
        assert!(!Effects::OFF.any());
        let nan = Effects {
            bloom: f32::NAN,
            background: [f32::INFINITY, 0.0, f32::NAN],
            ..Effects::OFF
        };
        assert!(!nan.sanitized().any(), "{:?}", nan.sanitized());
    }

    #[test]
    fn hsv_round_trip() {
        for rgb in [
            [1.0, 0.0, 0.0],
            [0.2, 0.5, 0.9],
            [0.0, 0.0, 0.0],
            [0.5, 0.5, 0.5],
        ] {
            let [h, s, v] = rgb_to_hsv(rgb);
            let back = hsv_to_rgb(h, s, v);
            for c in 0..3 {
                assert!((back[c] - rgb[c]).abs() < 1e-6, "{rgb:?} -> {back:?}");
            }
        }
        // Pure hues: 0 = red, 1/3 = green, 2/3 = blue.
        assert_eq!(hsv_to_rgb(0.0, 1.0, 1.0), [1.0, 0.0, 0.0]);
        assert_eq!(hsv_to_rgb(1.0 / 3.0, 1.0, 1.0), [0.0, 1.0, 0.0]);
    }
}
