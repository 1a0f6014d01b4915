//! The audio alone paints the music: bands and pitch classes to dye and pushes.
//!
//! - **Bands** (the bridge's low, mid and high envelopes and onsets), each with its own place,
//!   force and dye, scaled by its amount knob ([`MappingConfig::bands`]): the lows swell up
//!   from the bottom, wide; the mids stream and swirl in the middle; the highs sparkle near the
//!   top, small and bright. A band's onset (a kick, a snare, a cymbal) adds a burst there.
//! - **Colour by pitch** (the chroma analysis: 12 pitch-class weights): a band's dye takes the
//!   hue of the pitch classes sounding, each in its own column (one octave, C at the left, B
//!   at the right), so a chord paints side by side instead of mixing to grey. Each sounding
//!   class also streams dye of its hue ([`MappingConfig::chroma`]) where a MIDI note of that
//!   class would sit in circle mode (its angle round the centre), or in its column low in the
//!   canvas in keyboard mode, in exactly a MIDI note's hue (channel 1). While MIDI notes sound
//!   the streams give way ([`CHROMA_MIDI_DUCK`]): the notes say it better.
//! - Where no pitch stands out (drums alone, noise) a band falls back to its own colour: lows
//!   orange-red, mids electric blue, highs pale gold, as the drum kit's kick, snare and
//!   cymbals.
//!
//! Band levels are read on a dB scale ([`BAND_FLOOR_DB`] to [`BAND_FULL_DB`] above it), so a
//! quiet mix still paints and a loud one does not blow out. Everything scales with Audio
//! reactivity, Dye amount and Splat force like the rest of the audio.

use crate::kernels::portable::Portable;

#[cfg(doc)]
use super::NOTE_SATURATION;
use super::{KEYBOARD_MARGIN, MappingConfig, MappingMode, r2};
use crate::bridge::bands::Band;
use crate::bridge::events::SimEvent;
use crate::fluid::{Splat, SplatShape, hsv_to_rgb};

/// Band level (RMS, dBFS) at which a band starts to paint: low, mid, high. The highs of a mix
/// run 10 dB or more under its lows and mids, so their floor is lower.
pub const BAND_FLOOR_DB: [f32; 3] = [-50.0, -50.0, -58.0];
/// Band level above its floor that paints at full strength, dB.
pub const BAND_FULL_DB: f32 = 36.0;
/// Height of each band's emitters, canvas heights above the bottom.
pub const BAND_Y: [f32; 3] = [0.05, 0.5, 0.86];
/// Radius of each band's emitters, canvas heights: lows wide, highs small.
pub const BAND_RADIUS: [f32; 3] = [0.11, 0.06, 0.022];
/// Dye a band streams per second at full level (times its amount, reactivity, Dye amount),
/// shared among the sounding pitch classes.
pub const BAND_DYE_PER_S: [f32; 3] = [1.8, 1.4, 1.2];
/// Push a band gives per second at full level, canvas heights per second squared: the lows up,
/// the mids sideways (alternating, a swirl), the highs a little down.
pub const BAND_ACCEL: [f32; 3] = [3.0, 1.5, 0.6];
/// Dye of a band's onset burst at full strength.
pub const BURST_DYE: [f32; 3] = [1.4, 1.0, 0.8];
/// Push of a band's onset burst at full strength, canvas heights per second.
pub const BURST_KICK: [f32; 3] = [1.6, 1.4, 0.5];
/// Radius of a band's onset burst, canvas heights.
pub const BURST_RADIUS: [f32; 3] = [0.13, 0.07, 0.025];
/// A band's own colour (hue in turns, saturation) where no pitch class stands out: the drum
/// kit's kick, snare and cymbals.
pub const BAND_COLOUR: [(f32, f32); 3] = [(20.0 / 360.0, 0.9), (195.0 / 360.0, 0.9), (0.13, 0.45)];
/// Dye a pitch class streams per second at weight 1 (times the chroma knob).
pub const CHROMA_DYE_PER_S: f32 = 1.8;
/// Push of a pitch-class stream per second at weight 1, canvas heights per second squared.
pub const CHROMA_ACCEL: f32 = 1.0;
/// Radius of a pitch-class stream, canvas heights.
pub const CHROMA_RADIUS: f32 = 0.045;
/// Keyboard mode: height of the pitch-class streams.
pub const CHROMA_Y: f32 = 0.28;
/// Circle mode: distance of the pitch-class streams from the centre, canvas heights.
pub const CHROMA_CIRCLE_RADIUS: f32 = 0.3;
/// How much of the pitch-class streams MIDI notes take away while they sound at full level.
pub const CHROMA_MIDI_DUCK: f32 = 0.75;
/// Pitch classes weaker than this are not painted.
pub const CHROMA_MIN: f32 = 0.05;
/// Smoothing of the pitch-class weights: rise and fall time constants, seconds (a hop is
/// 46 ms: this keeps the colours from flickering hop to hop).
pub const CHROMA_RISE_S: f32 = 0.08;
/// See [`CHROMA_RISE_S`].
pub const CHROMA_FALL_S: f32 = 0.3;
/// Weights older than this (the audio stopped coming) count as silence.
pub const CHROMA_STALE_S: f32 = 0.5;
/// RMS below which a band counts as silent (about -60 dBFS), as the full-band level.
pub const SILENT_RMS: f32 = 1.0e-3;

/// The audio's painting state.
#[derive(Clone, Debug, Default)]
pub struct AudioPaint {
    /// Latest RMS of each band.
    band_rms: [f32; 3],
    /// Onset strengths per band waiting for the next step.
    bursts: [[f32; 8]; 3],
    pending: [usize; 3],
    /// Onsets fired per band so far (their placement and colour turn).
    hits: [u32; 3],
    /// The latest weights from the analysis, and the smoothed ones painted.
    chroma_target: [f32; 12],
    chroma: [f32; 12],
    /// Seconds since the latest weights came.
    chroma_age: f32,
    /// Seconds of emission (the mids' swirl).
    time: f32,
}

/// A pitch class's column in keyboard mode: one octave across the canvas, C at the left.
pub fn column(pc: usize, aspect: f32) -> f32 {
    let width = (aspect - 2.0 * KEYBOARD_MARGIN).max(0.0);
    KEYBOARD_MARGIN.min(aspect / 2.0) + (pc as f32 + 0.5) / 12.0 * width
}

/// Saturation of the audio's pitch-class dye: fuller than a note's ([`NOTE_SATURATION`]),
/// since many classes stream side by side and mix at their edges, and a full mix would
/// otherwise come out pastel (measured on a full rock mix: lit pixels' saturation 0.55 at
/// 0.85, the notes' own).
pub const CLASS_SATURATION: f32 = 1.0;

/// The colour of pitch class `pc`: the hue a MIDI note of that class on channel 1 gets (see
/// `Mapper::emitter`), at [`CLASS_SATURATION`].
pub fn class_colour(pc: usize) -> [f32; 3] {
    hsv_to_rgb(pc as f32 / 12.0, CLASS_SATURATION, 1.0)
}

/// A band's level 0 to 1 from its RMS, on the dB scale.
pub fn band_level(band: usize, rms: f32) -> f32 {
    // NaN fails this too.
    if rms.is_nan() || rms <= SILENT_RMS {
        return 0.0;
    }
    let db = 20.0 * rms.min(4.0).plog10();
    ((db - BAND_FLOOR_DB[band]) / BAND_FULL_DB).clamp(0.0, 1.0)
}

impl AudioPaint {
    /// Take one event (the audio ones; others are ignored).
    pub fn handle(&mut self, event: &SimEvent) {
        match *event {
            SimEvent::Bands { rms } => {
                self.band_rms = rms.map(|r| {
                    if r.is_finite() {
                        r.clamp(0.0, 4.0)
                    } else {
                        0.0
                    }
                });
            }
            SimEvent::BandOnset { band, strength } => {
                let b = band.index();
                if self.pending[b] < self.bursts[b].len() {
                    self.bursts[b][self.pending[b]] = super::finite_in(strength, 0.0, 1.0);
                    self.pending[b] += 1;
                }
            }
            SimEvent::Chroma { weights } => {
                self.chroma_target = weights.map(|w| super::finite_in(w, 0.0, 1.0));
                self.chroma_age = 0.0;
            }
            SimEvent::Silence => *self = Self::default(),
            _ => {}
        }
    }

    /// Whether the next [`AudioPaint::emit`] would emit nothing.
    pub fn quiet(&self, cfg: &MappingConfig) -> bool {
        let react = cfg.reactivity > 0.0;
        let bands = Band::ALL.iter().any(|b| {
            cfg.bands[b.index()] > 0.0
                && (self.band_rms[b.index()] > SILENT_RMS || self.pending[b.index()] > 0)
        });
        let chroma = cfg.chroma > 0.0
            && (self.chroma.iter().any(|&w| w >= CHROMA_MIN)
                || self.chroma_target.iter().any(|&w| w > 0.0));
        !react || !(bands || chroma)
    }

    /// The weight of each pitch class now (smoothed), 0 to 1.
    pub fn chroma(&self) -> &[f32; 12] {
        &self.chroma
    }

    /// Advance `dt` seconds and paint: `midi` is how strongly MIDI notes sound (0 to 1).
    pub fn emit(&mut self, dt: f32, cfg: &MappingConfig, midi: f32, out: &mut Vec<Splat>) {
        self.time += dt;
        self.smooth_chroma(dt);
        let react = cfg.reactivity.max(0.0);
        if react > 0.0 {
            if dt > 0.0 {
                self.emit_bands(dt, cfg, react, out);
                self.emit_chroma(dt, cfg, react, midi, out);
            }
            self.emit_bursts(cfg, react, out);
        }
        for b in 0..3 {
            self.hits[b] = self.hits[b].wrapping_add(self.pending[b] as u32);
        }
        self.pending = [0; 3];
    }

    fn smooth_chroma(&mut self, dt: f32) {
        self.chroma_age += dt;
        if self.chroma_age > CHROMA_STALE_S {
            self.chroma_target = [0.0; 12];
        }
        if dt <= 0.0 {
            return;
        }
        let rise = 1.0 - (-dt / CHROMA_RISE_S).pexp();
        let fall = 1.0 - (-dt / CHROMA_FALL_S).pexp();
        for (w, &t) in self.chroma.iter_mut().zip(&self.chroma_target) {
            *w += (t - *w) * if t > *w { rise } else { fall };
            if *w < 1e-4 {
                *w = 0.0;
            }
        }
    }

    /// The pitch classes that colour the bands, with their shares of a band's dye (summing to
    /// at most 1), and the share left to the band's own colour. None while colour by pitch is
    /// off.
    fn shares(&self, cfg: &MappingConfig) -> ([f32; 12], f32) {
        let mut shares = [0.0; 12];
        if cfg.chroma <= 0.0 {
            return (shares, 1.0);
        }
        let total: f32 = self.chroma.iter().filter(|&&w| w >= CHROMA_MIN).sum();
        if total <= 0.0 {
            return (shares, 1.0);
        }
        // The strongest class's weight says how clearly pitch sounds; it takes that much of
        // the band from the band's own colour.
        let clear = self.chroma.iter().fold(0.0f32, |m, &w| m.max(w));
        for (s, &w) in shares.iter_mut().zip(&self.chroma) {
            if w >= CHROMA_MIN {
                *s = w / total * clear;
            }
        }
        // NOTE: a band's own colour takes what pitch leaves, unless that is a trace.
        (shares, 1.0 - clear)
    }

    fn emit_bands(&mut self, dt: f32, cfg: &MappingConfig, react: f32, out: &mut Vec<Splat>) {
        let (shares, own) = self.shares(cfg);
        let swirl = (self.time * std::f32::consts::TAU / 6.0).psin();
        for b in 0..3 {
            let amount = cfg.bands[b].max(0.0) * react;
            let level = band_level(b, self.band_rms[b]);
            if amount <= 0.0 || level <= 0.0 {
                continue;
            }
            let dye = BAND_DYE_PER_S[b] * level * amount * cfg.dye_amount * dt;
            let push = BAND_ACCEL[b] * level * amount * cfg.splat_force * dt;
            let dir = match b {
                0 => [0.0, 1.0],
                1 => [swirl, 0.35],
                _ => [0.3 * swirl, -1.0],
            };
            let mut paint = |x: f32, colour: [f32; 3], share: f32| {
                out.push(Splat {
                    pos: [x.clamp(0.0, cfg.aspect), BAND_Y[b]],
                    radius: BAND_RADIUS[b],
                    color: colour,
                    amount: dye * share,
                    force: [dir[0] * push * share, dir[1] * push * share],
                    shape: SplatShape::Gaussian,
                    heat: 0.0,
                    particles: 0.0,
                    depth: 0.0,
                    drum: Default::default(),
                });
            };
            for (pc, &share) in shares.iter().enumerate() {
                if share > 0.0 {
                    paint(column(pc, cfg.aspect), class_colour(pc), share);
                }
            }
            if own > CHROMA_MIN {
                let (h, s) = BAND_COLOUR[b];
                let x = cfg.aspect * (0.5 + 0.3 * swirl * if b == 1 { -1.0 } else { 1.0 });
                paint(x, hsv_to_rgb(h, s, 1.0), own);
            }
        }
    }

    fn emit_chroma(
        &mut self,
        dt: f32,
        cfg: &MappingConfig,
        react: f32,
        midi: f32,
        out: &mut Vec<Splat>,
    ) {
        let amount = cfg.chroma.max(0.0) * react * (1.0 - CHROMA_MIDI_DUCK * midi.clamp(0.0, 1.0));
        if amount <= 0.0 {
            return;
        }
        for (pc, &w) in self.chroma.iter().enumerate() {
            if w < CHROMA_MIN {
                continue;
            }
            let (pos, dir) = match cfg.mode {
                // Audio has no channels: in rows mode it streams as in keyboard mode.
                MappingMode::Keyboard | MappingMode::Rows => {
                    ([column(pc, cfg.aspect), CHROMA_Y], [0.0, 1.0])
                }
                MappingMode::Circle => {
                    let angle =
                        std::f32::consts::FRAC_PI_2 - pc as f32 / 12.0 * std::f32::consts::TAU;
                    let (s, c) = angle.psin_cos();
                    (
                        [
                            cfg.aspect / 2.0 + CHROMA_CIRCLE_RADIUS * c,
                            0.5 + CHROMA_CIRCLE_RADIUS * s,
                        ],
                        [c, s],
                    )
                }
            };
            let push = CHROMA_ACCEL * w * amount * cfg.splat_force * dt;
            out.push(Splat {
                pos,
                radius: CHROMA_RADIUS,
                color: class_colour(pc),
                amount: CHROMA_DYE_PER_S * w * amount * cfg.dye_amount * dt,
                force: [dir[0] * push, dir[1] * push],
                shape: SplatShape::Gaussian,
                heat: 0.0,
                particles: 0.0,
                depth: 0.0,
                drum: Default::default(),
            });
        }
    }

    fn emit_bursts(&mut self, cfg: &MappingConfig, react: f32, out: &mut Vec<Splat>) {
        let (shares, _) = self.shares(cfg);
        let sounding: u32 = shares.iter().filter(|&&s| s > 0.0).count() as u32;
        for b in 0..3 {
            let amount = cfg.bands[b].max(0.0) * react;
            for k in 0..self.pending[b] {
                if amount <= 0.0 {
                    continue;
                }
                let strength = self.bursts[b][k];
                let n = self.hits[b].wrapping_add(k as u32);
                // The sounding classes take turns; without pitch, the band's own colour along
                // a low-discrepancy row.
                let (x, colour) = if sounding > 0 {
                    let turn = (n % sounding) as usize;
                    let pc = (0..12).filter(|&c| shares[c] > 0.0).nth(turn).unwrap_or(0);
                    (column(pc, cfg.aspect), class_colour(pc))
                } else {
                    let (a, _) = r2(n);
                    let (h, s) = BAND_COLOUR[b];
                    (
                        KEYBOARD_MARGIN + a * (cfg.aspect - 2.0 * KEYBOARD_MARGIN).max(0.0),
                        hsv_to_rgb(h, s, 1.0),
                    )
                };
                let kick = BURST_KICK[b] * strength * amount * cfg.splat_force;
                let side = if n.is_multiple_of(2) { 1.0 } else { -1.0 };
                let dir = match b {
                    0 => [0.0, 1.0],
                    1 => [side * 0.8, 0.6],
                    _ => {
                        let a = (n as f32 * 0.618_034).fract() * std::f32::consts::TAU;
                        [a.pcos(), a.psin()]
                    }
                };
                out.push(Splat {
                    pos: [x.clamp(0.0, cfg.aspect), BAND_Y[b]],
                    radius: BURST_RADIUS[b] * (0.7 + 0.6 * strength),
                    color: colour,
                    amount: BURST_DYE[b] * strength * amount * cfg.dye_amount,
                    force: [dir[0] * kick, dir[1] * kick],
                    shape: SplatShape::Gaussian,
                    heat: 0.0,
                    particles: super::ONSET_PARTICLES * cfg.particles.max(0.0) * strength * amount,
                    depth: 0.0,
                    drum: Default::default(),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bridge::events::{NoteId, TimedEvent};
    use crate::mapping::Mapper;

    fn at(event: SimEvent) -> TimedEvent {
        TimedEvent { time_s: 0.0, event }
    }

    fn chroma(classes: &[(usize, f32)]) -> SimEvent {
        let mut weights = [0.0; 12];
        for &(pc, w) in classes {
            weights[pc] = w;
        }
        SimEvent::Chroma { weights }
    }

    /// `steps` steps of 1/60 s with `events` handled before each; the last step's splats.
    fn run(m: &mut Mapper, cfg: &MappingConfig, events: &[SimEvent], steps: usize) -> Vec<Splat> {
        let mut out = Vec::new();
        for _ in 0..steps {
            for e in events {
                m.handle(&at(*e));
            }
            m.emit(1.0 / 60.0, cfg, &mut out);
        }
        out
    }

    fn near(a: [f32; 3], b: [f32; 3]) -> bool {
        a.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-5)
    }

    #[test]
    fn each_band_paints_its_own_place_in_its_own_colour_without_pitch() {
        let cfg = MappingConfig::default();
        let mut m = Mapper::new();
        let out = run(&mut m, &cfg, &[SimEvent::Bands { rms: [0.1; 3] }], 1);
        assert_eq!(out.len(), 3, "{out:?}");
        for (b, s) in out.iter().enumerate() {
            assert_eq!(s.pos[1], BAND_Y[b]);
            assert_eq!(s.radius, BAND_RADIUS[b]);
            let (h, sat) = BAND_COLOUR[b];
            assert!(near(s.color, hsv_to_rgb(h, sat, 1.0)), "{b}: {s:?}");
            // -20 dBFS: (30 / 36) of full on the lows and mids, all of it on the highs.
            let level = band_level(b, 0.1);
            let want = BAND_DYE_PER_S[b] * level / 60.0;
            assert!(
                (s.amount - want).abs() < 1e-6,
                "{b}: {} vs {want}",
                s.amount
            );
        }
        assert!((band_level(0, 0.1) - 30.0 / 36.0).abs() < 1e-5);
        assert_eq!(band_level(2, 0.1), 1.0);
        // Lows push up, highs down; wide below, small above.
        assert!(out[0].force[1] > 0.0 && out[2].force[1] < 0.0);
        assert!(out[0].radius > out[1].radius && out[1].radius > out[2].radius);
        // Each band follows its own knob.
        let cfg = MappingConfig {
            bands: [0.0, 2.0, 0.0],
            ..cfg
        };
        let out = run(&mut m, &cfg, &[SimEvent::Bands { rms: [0.1; 3] }], 1);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].pos[1], BAND_Y[1]);
    }

    #[test]
    fn pitch_classes_paint_in_midi_hues_in_their_columns() {
        let cfg = MappingConfig::default();
        let mut m = Mapper::new();
        // C major: C, E, G. After half a second of it the weights have settled.
        let events = [
            SimEvent::Bands { rms: [0.1; 3] },
            chroma(&[(0, 1.0), (4, 0.8), (7, 0.8)]),
        ];
        let out = run(&mut m, &cfg, &events, 30);
        // Middle C's hue, as a MIDI note on channel 1 gets it (rgb (1, 0.15, 0.15)), fully
        // saturated: pure red.
        assert!(
            near(class_colour(0), [1.0, 0.0, 0.0]),
            "{:?}",
            class_colour(0)
        );
        let mut note = Mapper::new();
        note.handle(&at(SimEvent::NoteOn {
            note: NoteId {
                key: 64,
                channel: 0,
                voice: -1,
            },
            velocity: 1.0,
        }));
        let mut midi = Vec::new();
        note.emit(0.01, &cfg, &mut midi);
        let hue = |c: [f32; 3]| {
            let s = crate::mapping::NOTE_SATURATION;
            // hsv_to_rgb(h, s, 1): the smallest channel is 1 - s; unsaturate to compare.
            c.map(|x| 1.0 - (1.0 - x) * s)
        };
        assert!(near(midi[0].color, hue(class_colour(4))), "E: {midi:?}");
        for pc in 0..12 {
            let here: Vec<&Splat> = out
                .iter()
                .filter(|s| (s.pos[0] - column(pc, cfg.aspect)).abs() < 1e-5)
                .collect();
            if [0, 4, 7].contains(&pc) {
                // Three bands and the class's own stream, all in its hue.
                assert_eq!(here.len(), 4, "{pc}: {here:?}");
                assert!(here.iter().all(|s| near(s.color, class_colour(pc))), "{pc}");
                assert!(here.iter().any(|s| s.pos[1] == CHROMA_Y));
            } else {
                assert!(here.is_empty(), "{pc}: {here:?}");
            }
        }
        // Pitch this clear leaves nothing to the bands' own colours.
        assert_eq!(out.len(), 12, "{out:?}");
        // The strongest class gets the most dye.
        let dye = |pc: usize| -> f32 {
            out.iter()
                .filter(|s| (s.pos[0] - column(pc, cfg.aspect)).abs() < 1e-5)
                .map(|s| s.amount)
                .sum()
        };
        assert!(dye(0) > dye(4) && (dye(4) - dye(7)).abs() < 1e-6);
        // Circle mode: the streams sit round the centre, C at the top.
        let circle = MappingConfig {
            mode: MappingMode::Circle,
            ..cfg
        };
        let out = run(&mut m, &circle, &events, 1);
        let top = [cfg.aspect / 2.0, 0.5 + CHROMA_CIRCLE_RADIUS];
        assert!(
            out.iter().any(|s| (s.pos[0] - top[0]).abs() < 1e-5
                && (s.pos[1] - top[1]).abs() < 1e-5
                && near(s.color, class_colour(0))),
            "{out:?}"
        );
    }

    #[test]
    fn band_onsets_burst_at_their_band_in_the_sounding_colours() {
        let cfg = MappingConfig::default();
        let mut m = Mapper::new();
        run(&mut m, &cfg, &[chroma(&[(9, 1.0)])], 30);
        for band in Band::ALL {
            m.handle(&at(SimEvent::BandOnset {
                band,
                strength: 1.0,
            }));
        }
        let mut out = Vec::new();
        m.emit(0.0, &cfg, &mut out);
        assert_eq!(
            out.len(),
            3,
            "a step of no time shows the bursts alone: {out:?}"
        );
        for (b, s) in out.iter().enumerate() {
            assert_eq!(s.pos, [column(9, cfg.aspect), BAND_Y[b]]);
            assert!(near(s.color, class_colour(9)));
            assert!((s.amount - BURST_DYE[b]).abs() < 1e-6);
        }
        assert!(out[0].force[1] > 0.0, "the kick pushes up");
    }

    #[test]
    fn midi_notes_duck_the_pitch_streams_and_silence_is_calm() {
        let cfg = MappingConfig::default();
        let stream = |out: &[Splat]| -> f32 {
            out.iter()
                .filter(|s| s.pos[1] == CHROMA_Y)
                .map(|s| s.amount)
                .sum()
        };
        let mut alone = Mapper::new();
        let free = stream(&run(&mut alone, &cfg, &[chroma(&[(2, 1.0)])], 30));
        let mut with_midi = Mapper::new();
        with_midi.handle(&at(SimEvent::NoteOn {
            note: NoteId {
                key: 62,
                channel: 0,
                voice: -1,
            },
            velocity: 1.0,
        }));
        let ducked = stream(&run(&mut with_midi, &cfg, &[chroma(&[(2, 1.0)])], 30));
        // Held at its sustain level, 0.5: the stream gives up 0.75 * 0.5 of its dye.
        assert!(
            (ducked / free - (1.0 - CHROMA_MIDI_DUCK * 0.5)).abs() < 1e-3,
            "{ducked} vs {free}"
        );
        // Silence: the weights fade, then nothing at all, and the mapping rests.
        let mut m = Mapper::new();
        run(
            &mut m,
            &cfg,
            &[chroma(&[(2, 1.0)]), SimEvent::Bands { rms: [0.1; 3] }],
            10,
        );
        assert!(!m.quiet(&cfg));
        let out = run(
            &mut m,
            &cfg,
            &[chroma(&[]), SimEvent::Bands { rms: [0.0; 3] }],
            240,
        );
        assert!(out.is_empty(), "{out:?}");
        assert!(m.quiet(&cfg));
        // Weights that stop coming (the host stopped) fade out too.
        let mut m = Mapper::new();
        run(&mut m, &cfg, &[chroma(&[(2, 1.0)])], 10);
        let out = run(&mut m, &cfg, &[], 240);
        assert!(out.is_empty() && m.quiet(&cfg), "{out:?}");
    }

    #[test]
    fn hostile_audio_events_are_absorbed() {
        let cfg = MappingConfig::default();
        let mut m = Mapper::new();
        let mut bad = [f32::NAN; 12];
        bad[3] = f32::INFINITY;
        let out = run(
            &mut m,
            &cfg,
            &[
                SimEvent::Bands {
                    rms: [f32::INFINITY, f32::NAN, -1.0],
                },
                SimEvent::Chroma { weights: bad },
                SimEvent::BandOnset {
                    band: Band::High,
                    strength: f32::NAN,
                },
            ],
            20,
        );
        assert!(!out.is_empty());
        for s in &out {
            let values = s.pos.iter().chain(&s.color).chain(&s.force);
            assert!(values.clone().all(|x| x.is_finite()), "{s:?}");
            assert!(s.amount.is_finite() && s.amount >= 0.0, "{s:?}");
        }
    }
}
