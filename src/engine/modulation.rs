//! Modulation at work (what [`crate::params::modulation`] saves): on the simulation thread,
//! the sources' values from the events the engine takes (MIDI notes and CCs, the audio's
//! envelope and bands, the host's transport) and the LFOs from the time, the music's beat or
//! the clock, then each route's share added to its parameter's normalised value before the
//! knobs are read ([`Knobs::from_params_modulated`]). The host's automation keeps moving the
//! base value; the simulation sees the sum, clamped to the parameter's range. Several routes
//! to one parameter add.
//!
//! Nothing here allocates per step: the routes are resolved to knobs when the saved
//! modulation changes.

use super::knobs::{KNOBS, Knobs, MAPPED, mapped_params};
use crate::bridge::events::SimEvent;
use crate::kernels::portable::Portable;
use crate::params::DyeflowParams;
use crate::params::modulation::{
    Armed, LFOS, Lfo, MAX_LEARN_CC, MAX_LEARNED, MAX_ROUTES, Modulation, Shape, Source,
};
use nice_plug::prelude::{FloatParam, Param, Params};

/// The tempo the LFOs follow until the host says otherwise, beats a minute.
pub const DEFAULT_BPM: f32 = 120.0;
/// Notes held for the note count to read 1.
const FULL_NOTES: f32 = 8.0;
/// The level that reads 0, dBFS (0 dBFS reads 1).
const FLOOR_DB: f32 = -60.0;

/// The sources' state and the routes resolved to knobs.
pub struct Modulator {
    /// The saved modulation the routes were resolved from.
    seen: Modulation,
    /// (source, knob, depth) per route whose target is a knob.
    routes: Vec<(Source, usize, f32)>,
    /// (CC, knob) per learned CC whose target is a knob.
    learned: Vec<(u8, usize)>,
    /// The CCs heard so far, a bit each: a learned CC moves its knob from then on.
    heard: u128,
    /// The last CC heard since the editor armed learning, and the arming seen at the last
    /// look (so a CC from before an arming is not taken for it).
    pending: Option<u8>,
    armed: Option<Armed>,
    lfos: [Lfo; LFOS],
    /// Simulated seconds and beats so far; the tempo.
    seconds: f64,
    beats: f64,
    bpm: f32,
    cc: [f32; 128],
    velocity: f32,
    /// The keys held, a bit per (channel, key): a repeated note-on or a second note-off of
    /// one key counts once.
    held: [u128; 16],
    level: f32,
    bands: [f32; 3],
}

impl Default for Modulator {
    fn default() -> Self {
        Self {
            seen: Modulation::default(),
            routes: Vec::with_capacity(MAX_ROUTES),
            learned: Vec::with_capacity(MAX_LEARNED),
            heard: 0,
            pending: None,
            armed: None,
            lfos: [Lfo::default(); LFOS],
            seconds: 0.0,
            beats: 0.0,
            bpm: DEFAULT_BPM,
            cc: [0.0; 128],
            velocity: 0.0,
            held: [0; 16],
            level: 0.0,
            bands: [0.0; 3],
        }
    }
}

/// A linear amplitude on the 0..1 scale of [`FLOOR_DB`]..0 dBFS.
fn loudness(rms: f32) -> f32 {
    if rms.is_nan() || rms <= 0.0 {
        return 0.0;
    }
    ((20.0 * rms.plog10()) / -FLOOR_DB + 1.0).clamp(0.0, 1.0)
}

/// A hash of `(lfo, cycle)` to -1..1: the random wave's held value.
fn held_random(lfo: usize, cycle: i64) -> f32 {
    let mut x = (cycle as u64) ^ ((lfo as u64) << 56) ^ 0x9e37_79b9_7f4a_7c15;
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^= x >> 33;
    (x >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
}

/// `shape` at `position` cycles (the whole part counts the cycles), -1..1.
pub fn wave(shape: Shape, lfo: usize, position: f64) -> f32 {
    let cycle = position.floor();
    let p = (position - cycle) as f32;
    match shape {
        Shape::Sine => (std::f32::consts::TAU * p).psin(),
        Shape::Triangle => 1.0 - 4.0 * (p - 0.5).abs(),
        Shape::Saw => 2.0 * p - 1.0,
        Shape::Square => {
            if p < 0.5 {
                1.0
            } else {
                -1.0
            }
        }
        Shape::Random => held_random(lfo, cycle as i64),
    }
}

/// The parameters a route can move: the knobs (in the order of [`Knobs::NAMES`]), then the
/// mapping's continuous parameters (in the order of [`mapped_params`]).
pub const TARGETS: usize = KNOBS + MAPPED;
// Every target has a slot for the editor's rings.
const _: () = assert!(TARGETS <= crate::params::modulation::LIVE_SLOTS);

/// The parameters a route can move, in the order of their offsets.
pub fn target_params(params: &DyeflowParams) -> [&FloatParam; TARGETS] {
    let knobs = Knobs::params(params);
    let mapped = mapped_params(params);
    std::array::from_fn(|i| {
        if i < KNOBS {
            knobs[i]
        } else {
            mapped[i - KNOBS]
        }
    })
}

/// The knobs' part of a target's offsets.
pub fn knob_offsets(offsets: &[f32; TARGETS]) -> [f32; KNOBS] {
    std::array::from_fn(|i| offsets[i])
}

/// The mapping's part of a target's offsets.
pub fn mapping_offsets(offsets: &[f32; TARGETS]) -> [f32; MAPPED] {
    std::array::from_fn(|i| offsets[KNOBS + i])
}

/// The ids of the parameters a route can move, in the order of [`target_params`].
pub fn targets(params: &DyeflowParams) -> Vec<String> {
    let map = params.param_map();
    target_params(params)
        .iter()
        .filter_map(|&p| {
            map.iter().find_map(|(id, ptr, _)| match ptr {
                nice_plug::prelude::ParamPtr::FloatParam(q) if std::ptr::eq(*q, p) => {
                    Some(id.clone())
                }
                _ => None,
            })
        })
        .collect()
}

impl Modulator {
    /// Take an event: notes and CCs, the audio's envelope and bands, the transport.
    pub fn event(&mut self, event: &SimEvent) {
        match *event {
            SimEvent::NoteOn { note, velocity } => {
                if let Some(keys) = self.keys(note.channel, note.key) {
                    *keys.0 |= keys.1;
                }
                if velocity.is_finite() {
                    self.velocity = velocity.clamp(0.0, 1.0);
                }
            }
            SimEvent::NoteOff { note } | SimEvent::Choke { note } => {
                if let Some(keys) = self.keys(note.channel, note.key) {
                    *keys.0 &= !keys.1;
                }
            }
            SimEvent::Silence => self.held = [0; 16],
            SimEvent::ControlChange { channel, cc, value } => {
                // All sound off and all notes off let go of the channel's keys, as the
                // mapping's voices do.
                if matches!(cc, 120 | 123)
                    && let Some(keys) = self.held.get_mut(usize::from(channel))
                {
                    *keys = 0;
                }
                if let Some(v) = self.cc.get_mut(usize::from(cc))
                    && value.is_finite()
                {
                    *v = value.clamp(0.0, 1.0);
                    self.heard |= 1 << cc;
                    if cc <= MAX_LEARN_CC {
                        self.pending = Some(cc);
                    }
                }
            }
            SimEvent::Envelope { rms, .. } => self.level = loudness(0.5 * (rms[0] + rms[1])),
            SimEvent::Bands { rms } => self.bands = rms.map(loudness),
            SimEvent::Transport {
                playing,
                tempo_bpm,
                beat,
            } => {
                if tempo_bpm.is_finite() && tempo_bpm > 0.0 {
                    self.bpm = tempo_bpm.clamp(10.0, 999.0);
                }
                if playing && beat.is_finite() {
                    self.beats = beat;
                }
            }
            _ => {}
        }
    }

    /// The word of held keys for `(channel, key)` and the key's bit in it (none for a channel
    /// or key out of MIDI's range).
    fn keys(&mut self, channel: u8, key: u8) -> Option<(&mut u128, u128)> {
        let bit = 1u128.checked_shl(u32::from(key))?;
        self.held.get_mut(usize::from(channel)).map(|w| (w, bit))
    }

    /// The number of keys held.
    fn keys_held(&self) -> u32 {
        self.held.iter().map(|w| w.count_ones()).sum()
    }

    /// Whether a route moves its parameter with time alone (an LFO's, at a depth): then the
    /// knobs never settle.
    pub fn moving(&self) -> bool {
        self.routes
            .iter()
            .any(|&(source, _, depth)| matches!(source, Source::Lfo(_)) && depth != 0.0)
    }

    /// Set the clocks to `seconds` of music (the beat at the tempo last heard, until the
    /// transport says otherwise).
    pub fn start_at(&mut self, seconds: f64) {
        if seconds.is_finite() {
            self.seconds = seconds;
            self.beats = seconds * f64::from(self.bpm) / 60.0;
        }
    }

    /// Advance the clocks by `dt` simulated seconds (the beat at the tempo last heard).
    pub fn advance(&mut self, dt: f32) {
        if dt.is_finite() && dt > 0.0 {
            self.seconds += f64::from(dt);
            self.beats += f64::from(dt) * f64::from(self.bpm) / 60.0;
        }
    }

    /// Resolve the routes of the saved modulation in `params` to knobs, when it changed.
    fn refresh(&mut self, params: &DyeflowParams) {
        let saved = params.modulation.read();
        if *saved == self.seen {
            return;
        }
        self.seen = saved.clone();
        drop(saved);
        let m = &self.seen;
        self.lfos = m.lfos;
        self.routes.clear();
        self.learned.clear();
        let targets = target_params(params);
        let map = params.param_map();
        let knob = |target: &str| {
            let (_, ptr, _) = map.iter().find(|(id, ..)| id == target)?;
            let nice_plug::prelude::ParamPtr::FloatParam(ptr) = *ptr else {
                return None;
            };
            targets.iter().position(|p| std::ptr::eq(*p, ptr))
        };
        for r in m.routes.iter().take(MAX_ROUTES) {
            if let Some(k) = knob(&r.target) {
                self.routes.push((r.source, k, r.depth));
            }
        }
        // Within MIDI's CCs whatever wrote them (the bits and the values are indexed by them).
        for l in m
            .learned
            .iter()
            .filter(|l| l.cc <= MAX_LEARN_CC)
            .take(MAX_LEARNED)
        {
            if let Some(k) = knob(&l.target) {
                self.learned.push((l.cc, k));
            }
        }
    }

    /// MIDI learn: while the editor has a parameter waiting, the first CC heard after it
    /// started waiting is learned for it (saved with the modulation, which the next refresh
    /// takes). Taken only if the arming is still the one seen: an arming since (another
    /// parameter, or the same again) waits for a CC of its own.
    fn learn(&mut self, params: &DyeflowParams) {
        let live = &params.modulation_live;
        let Some(now) = live.armed() else {
            self.armed = None;
            return;
        };
        if self.armed.as_ref() != Some(&now) {
            // Just armed: a CC from before does not count.
            self.pending = None;
            self.armed = Some(now);
            return;
        }
        let Some(cc) = self.pending.take() else {
            return;
        };
        if live.take_learning_if(&now) {
            params.modulation.write().learn(cc, &now.target);
        }
        self.armed = None;
    }

    /// LFO `i`'s value now, -1..1.
    pub fn lfo(&self, i: usize) -> f32 {
        let Some(l) = self.lfos.get(i) else {
            return 0.0;
        };
        let cycles = if l.sync {
            self.beats / f64::from(l.beats)
        } else {
            self.seconds * f64::from(l.hz)
        };
        wave(l.shape, i, cycles + f64::from(l.phase))
    }

    /// Source `s`'s value now.
    pub fn value(&self, s: Source) -> f32 {
        match s {
            Source::Lfo(i) => self.lfo(usize::from(i)),
            Source::Level => self.level,
            Source::Low => self.bands[0],
            Source::Mid => self.bands[1],
            Source::High => self.bands[2],
            Source::Velocity => self.velocity,
            Source::Notes => (self.keys_held() as f32 / FULL_NOTES).min(1.0),
            Source::Cc(n) => self.cc.get(usize::from(n)).copied().unwrap_or(0.0),
        }
    }

    /// The offsets to the knobs' normalised values now (the routes of the modulation saved
    /// in `params` summed per knob).
    ///
    /// A learned CC, once heard, sets its knob's normalised value (the routes then add onto
    /// that). Each knob's value as modulated is published for the editor
    /// ([`crate::params::modulation::Live`]).
    pub fn offsets(&mut self, params: &DyeflowParams) -> [f32; TARGETS] {
        self.learn(params);
        self.refresh(params);
        let targets = target_params(params);
        let mut out = [0.0; TARGETS];
        let mut moved = [false; TARGETS];
        for &(cc, k) in &self.learned {
            if self.heard & (1 << cc) != 0 {
                out[k] = self.cc[usize::from(cc)] - targets[k].modulated_normalized_value();
            }
            moved[k] = true;
        }
        for &(source, k, depth) in &self.routes {
            out[k] += self.value(source) * depth;
            moved[k] = true;
        }
        let live = &params.modulation_live;
        for (k, target) in targets.iter().enumerate() {
            live.set_now(
                k,
                moved[k].then(|| (target.modulated_normalized_value() + out[k]).clamp(0.0, 1.0)),
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bridge::events::NoteId;
    use crate::params::modulation::Route;

    #[test]
    fn the_waves_have_their_shapes() {
        let near = |a: f32, b: f32| (a - b).abs() < 1e-5;
        for (p, sine, tri, saw, square) in [
            (0.0, 0.0, -1.0, -1.0, 1.0),
            (0.25, 1.0, 0.0, -0.5, 1.0),
            (0.5, 0.0, 1.0, 0.0, -1.0),
            (0.75, -1.0, 0.0, 0.5, -1.0),
        ] {
            for cycle in [0.0, 3.0] {
                let at = cycle + p;
                assert!(near(wave(Shape::Sine, 0, at), sine), "sine at {at}");
                assert!(near(wave(Shape::Triangle, 0, at), tri), "triangle at {at}");
                assert!(near(wave(Shape::Saw, 0, at), saw), "saw at {at}");
                assert!(near(wave(Shape::Square, 0, at), square), "square at {at}");
            }
        }
        // The random wave holds a value through a cycle, changes between cycles, stays within
        // -1..1, differs between LFOs, and is the same every run.
        let values: Vec<f32> = (0..64)
            .map(|c| wave(Shape::Random, 0, c as f64 + 0.3))
            .collect();
        for (c, v) in values.iter().enumerate() {
            assert_eq!(*v, wave(Shape::Random, 0, c as f64 + 0.9));
            assert!((-1.0..=1.0).contains(v));
        }
        assert!(values.windows(2).filter(|w| w[0] != w[1]).count() > 60);
        let mean = values.iter().sum::<f32>() / 64.0;
        assert!(mean.abs() < 0.3, "{mean}");
        assert_ne!(wave(Shape::Random, 0, 5.5), wave(Shape::Random, 1, 5.5));
    }

    /// The sources read what the events say: the CCs, the last velocity, the notes held, the
    /// audio's level and bands on a -60..0 dBFS scale, the transport's tempo and beat.
    #[test]
    fn the_sources_follow_the_music() {
        let mut m = Modulator::default();
        let note = |n: u8| NoteId {
            channel: 0,
            key: n,
            voice: -1,
        };
        m.event(&SimEvent::ControlChange {
            channel: 3,
            cc: 74,
            value: 0.25,
        });
        m.event(&SimEvent::ControlChange {
            channel: 0,
            cc: 1,
            value: f32::NAN,
        });
        for k in 0..3 {
            m.event(&SimEvent::NoteOn {
                note: note(60 + k),
                velocity: 0.5 + 0.1 * f32::from(k),
            });
        }
        m.event(&SimEvent::NoteOff { note: note(60) });
        m.event(&SimEvent::Envelope {
            rms: [0.1, 0.1],
            peak: [0.2, 0.2],
        });
        m.event(&SimEvent::Bands {
            rms: [1.0, 0.001, 0.0],
        });
        assert_eq!(m.value(Source::Cc(74)), 0.25);
        assert_eq!(m.value(Source::Cc(1)), 0.0, "not a number: ignored");
        assert!((m.value(Source::Velocity) - 0.7).abs() < 1e-6);
        assert_eq!(m.value(Source::Notes), 2.0 / FULL_NOTES);
        // -20 dBFS: 2/3 of the way up; the bands 0, -60 and silence.
        assert!((m.value(Source::Level) - 2.0 / 3.0).abs() < 1e-5);
        assert_eq!(m.value(Source::Low), 1.0);
        assert!(m.value(Source::Mid).abs() < 1e-5);
        assert_eq!(m.value(Source::High), 0.0);
        // Keys, not events: a repeated note-on counts once, a choke and a note-off of one key
        // free it once, and all notes off frees its channel's keys only.
        m.event(&SimEvent::NoteOn {
            note: note(61),
            velocity: 0.5,
        });
        m.event(&SimEvent::Choke { note: note(62) });
        m.event(&SimEvent::NoteOff { note: note(62) });
        assert_eq!(m.value(Source::Notes), 1.0 / FULL_NOTES);
        m.event(&SimEvent::NoteOn {
            note: NoteId {
                channel: 5,
                ..note(61)
            },
            velocity: 0.5,
        });
        m.event(&SimEvent::ControlChange {
            channel: 0,
            cc: 123,
            value: 0.0,
        });
        assert_eq!(m.value(Source::Notes), 1.0 / FULL_NOTES, "channel 5's key");
        m.event(&SimEvent::Silence);
        assert_eq!(m.value(Source::Notes), 0.0);
        // A bar-long LFO at the host's 90 bpm from beat 2: a quarter of the way after 0 s.
        m.lfos[0] = Lfo {
            shape: Shape::Saw,
            ..Lfo::default()
        };
        m.event(&SimEvent::Transport {
            playing: true,
            tempo_bpm: 90.0,
            beat: 1.0,
        });
        assert!((m.lfo(0) - (2.0 * 0.25 - 1.0)).abs() < 1e-6, "{}", m.lfo(0));
        // Two seconds at 90 bpm: three beats on, a quarter plus three quarters of the bar.
        m.advance(2.0);
        assert!((m.lfo(0) - -1.0).abs() < 1e-5, "{}", m.lfo(0));
    }

    /// Every knob's parameter and the mapping's continuous ones can be targets, and the
    /// manual lists exactly those.
    #[test]
    fn every_knob_is_a_target_and_the_manual_lists_them() {
        let p = DyeflowParams::default();
        let ids = targets(&p);
        assert_eq!(ids.len(), TARGETS);
        let manual = include_str!("../../docs/src/reference/presets.md");
        let listed = manual
            .lines()
            .find(|l| l.starts_with("Targets:"))
            .expect("the manual's list of targets");
        for id in &ids {
            assert!(
                listed.contains(&format!("`{id}`")),
                "{id} is not in the manual"
            );
        }
        assert_eq!(listed.matches('`').count(), 2 * ids.len(), "{listed}");
    }

    /// The saved modulation's list of targets is the engine's, in its order.
    #[test]
    fn the_target_ids_are_the_targets() {
        let p = DyeflowParams::default();
        assert_eq!(targets(&p), crate::params::modulation::TARGET_IDS);
    }

    /// MIDI learn: a CC heard while one parameter waits is not learned for another armed
    /// before the simulation thread took it; that one waits for a CC of its own.
    #[test]
    fn a_rearm_waits_for_its_own_cc() {
        let p = DyeflowParams::default();
        let mut m = Modulator::default();
        let cc = |m: &mut Modulator, cc| {
            m.event(&SimEvent::ControlChange {
                channel: 0,
                cc,
                value: 0.5,
            })
        };
        let live = &p.modulation_live;
        live.arm(Some("vort"));
        m.offsets(&p);
        cc(&mut m, 21);
        live.arm(Some("hue"));
        m.offsets(&p);
        assert_eq!(p.modulation.read().learned, []);
        assert_eq!(live.learning().as_deref(), Some("hue"));
        m.offsets(&p);
        assert_eq!(live.learning().as_deref(), Some("hue"), "no CC since");
        cc(&mut m, 22);
        m.offsets(&p);
        assert_eq!(p.modulation.read().learned_cc("hue"), Some(22));
        assert_eq!(p.modulation.read().learned_cc("vort"), None);
        assert_eq!(live.learning(), None);
    }

    /// Routes resolve to the knobs they name (unknown targets and parameters that are not
    /// knobs are left out), several to one knob add, and the knob reads its parameter moved by
    /// the sum, clamped to its range.
    #[test]
    fn routes_add_onto_their_knobs() {
        let p = DyeflowParams::default();
        let route = |source, target: &str, depth| Route {
            source,
            target: target.into(),
            depth,
        };
        *p.modulation.write() = Modulation {
            routes: vec![
                route(Source::Cc(10), "vort", 0.2),
                route(Source::Cc(11), "vort", 0.3),
                route(Source::Cc(10), "no_such", 1.0),
                route(Source::Cc(10), "mapping", 1.0),
                route(Source::Cc(11), "bloom", -1.0),
                route(Source::Cc(11), "radius", 0.2),
            ],
            ..Default::default()
        }
        .sanitized();
        let mut m = Modulator::default();
        assert!(m.offsets(&p).iter().all(|&o| o == 0.0), "the CCs are at 0");
        m.event(&SimEvent::ControlChange {
            channel: 0,
            cc: 10,
            value: 1.0,
        });
        m.event(&SimEvent::ControlChange {
            channel: 0,
            cc: 11,
            value: 0.5,
        });
        let offsets = m.offsets(&p);
        assert_eq!(m.routes.len(), 4, "{:?}", m.routes);
        let k = Knobs::NAMES.iter().position(|n| *n == "vorticity").unwrap();
        assert!((offsets[k] - 0.35).abs() < 1e-6);
        let knobs = Knobs::from_params_modulated(&p, &knob_offsets(&offsets));
        let base = p.vorticity.modulated_normalized_value();
        assert!((knobs.vorticity - p.vorticity.preview_plain(base + 0.35)).abs() < 1e-6);
        assert_eq!(
            knobs.bloom,
            p.effects.bloom.preview_plain(0.0),
            "clamped at the bottom"
        );
        // Unmodulated knobs read their parameters as before.
        assert_eq!(knobs.viscosity, Knobs::from_params(&p).viscosity);
        // The mapping's parameters too: the splat radius moved by 0.1 of its range.
        let mapping = crate::engine::mapping_config_modulated(&p, 1.0, &mapping_offsets(&offsets));
        let base = p.splat_radius.modulated_normalized_value();
        assert!((mapping.splat_radius - p.splat_radius.preview_plain(base + 0.1)).abs() < 1e-6);
        assert_eq!(mapping.splat_force, p.splat_force.value());
        // What each target is now, for the editor's rings: the moved ones only.
        let live = &p.modulation_live;
        assert!(
            (live.now(k).unwrap() - (p.vorticity.modulated_normalized_value() + 0.35)).abs() < 1e-6
        );
        assert_eq!(live.now(KNOBS), Some(base + 0.1));
        assert_eq!(live.now(KNOBS + 1), None);
        // A change to the saved routes is taken at the next step.
        p.modulation.write().routes.clear();
        assert!(m.offsets(&p).iter().all(|&o| o == 0.0));
    }
}
