//! Modulation as saved: up to [`LFOS`] LFOs and up to [`MAX_ROUTES`] routes, each from a
//! source (an LFO, the audio's level or one of its bands, the last note's velocity, how many
//! notes are held, a MIDI CC) to a continuous parameter, with a signed depth (a share of the
//! parameter's whole range); and the MIDI CCs learned for parameters (MIDI learn: the CC
//! sets its parameter's value). Persisted as the JSON field [`MODULATION_KEY`]; a project or
//! a preset without it has no routes and no learned CCs, as before modulation existed. The
//! engine evaluates it (`engine::modulation`); [`Live`] is what the engine and the editor
//! share about it while they run (not saved).
//!
//! A saved modulation is read through one check, for a project's state and a preset alike
//! ([`Modulation::read`], in `check.rs`): values out of range are brought within it, items past
//! the limits or aimed at no [`TARGET_IDS`] parameter are dropped, and a note says each.

use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

mod check;

/// Key of the persisted modulation field.
pub const MODULATION_KEY: &str = "modulation";
/// LFOs.
pub const LFOS: usize = 4;
/// Most routes.
pub const MAX_ROUTES: usize = 32;
/// Most learned CCs.
pub const MAX_LEARNED: usize = 64;
/// The highest CC that can be learned: 120 to 127 are MIDI's channel mode messages (all
/// sound off, reset, all notes off...).
pub const MAX_LEARN_CC: u8 = 119;
/// The slowest and fastest tempo-synced cycles, beats.
pub const BEATS: (f32, f32) = (0.25, 64.0);
/// The slowest and fastest free cycles, Hz.
pub const HZ: (f32, f32) = (0.01, 20.0);

/// The ids of the parameters routes and learned CCs can move: the continuous ones (all but
/// `adapt_dye`, `attack` and `release`), in the order of the engine's targets
/// (`engine::modulation::target_params`, which a test holds to this list).
pub const TARGET_IDS: [&str; 48] = [
    "visc",
    "dye_diff",
    "vel_diss",
    "dye_diss",
    "vort",
    "speed",
    "bright",
    "sat",
    "hue",
    "bloom",
    "bloom_thr",
    "bloom_knee",
    "bloom_rad",
    "rays",
    "shade",
    "light_dir",
    "bg_hue",
    "bg_sat",
    "bg_bright",
    "vibrance",
    "buoyancy",
    "weight",
    "cooling",
    "ambient",
    "lift_dir",
    "ptcl_life",
    "ptcl_glow",
    "stream_len",
    "liq_grav",
    "liq_tilt",
    "liq_sway",
    "liq_stiff",
    "liq_near",
    "liq_visc",
    "liq_bounce",
    "liq_drag",
    "cam_orbit",
    "cam_height",
    "cam_dist",
    "radius",
    "force",
    "amount",
    "react",
    "low_amt",
    "mid_amt",
    "high_amt",
    "chroma_amt",
    "particles",
];

/// Whether `id` is a parameter routes and learned CCs can move ([`TARGET_IDS`]).
pub fn is_target(id: &str) -> bool {
    TARGET_IDS.contains(&id)
}

/// An LFO's wave.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Shape {
    #[default]
    Sine,
    Triangle,
    /// Rising from -1 to 1 over the cycle.
    Saw,
    Square,
    /// A new random value every cycle, held (sample and hold; the same values every run).
    Random,
}

/// One LFO.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Lfo {
    pub shape: Shape,
    /// Follows the tempo (a cycle of `beats`) rather than the clock (`hz`).
    pub sync: bool,
    pub beats: f32,
    pub hz: f32,
    /// Where in its cycle it starts, 0..1.
    pub phase: f32,
}

impl Default for Lfo {
    fn default() -> Self {
        Self {
            shape: Shape::Sine,
            sync: true,
            beats: 4.0,
            hz: 0.25,
            phase: 0.0,
        }
    }
}

/// Where a route's value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// LFO `0..LFOS`: -1..1.
    Lfo(u8),
    /// The audio's level, and its low, mid and high bands: 0..1 (-60 dBFS to 0).
    Level,
    Low,
    Mid,
    High,
    /// The last note's velocity, 0..1.
    Velocity,
    /// How many notes are held, 0..1 (eight or more: 1).
    Notes,
    /// A MIDI control change's last value, 0..1 (any channel).
    Cc(u8),
}

impl Source {
    /// Its name as saved: `lfo1`..`lfo4`, `level`, `low`, `mid`, `high`, `velocity`, `notes`,
    /// `cc0`..`cc127`.
    pub fn name(&self) -> String {
        match self {
            Self::Lfo(i) => format!("lfo{}", i + 1),
            Self::Level => "level".into(),
            Self::Low => "low".into(),
            Self::Mid => "mid".into(),
            Self::High => "high".into(),
            Self::Velocity => "velocity".into(),
            Self::Notes => "notes".into(),
            Self::Cc(n) => format!("cc{n}"),
        }
    }

    /// The source a saved name names, if any.
    pub fn parse(name: &str) -> Option<Self> {
        let name = name.trim().to_ascii_lowercase();
        let number = |prefix: &str| name.strip_prefix(prefix)?.parse::<u8>().ok();
        Some(match name.as_str() {
            "level" => Self::Level,
            "low" => Self::Low,
            "mid" => Self::Mid,
            "high" => Self::High,
            "velocity" => Self::Velocity,
            "notes" => Self::Notes,
            _ => {
                if let Some(i) = number("lfo").filter(|i| (1..=LFOS as u8).contains(i)) {
                    Self::Lfo(i - 1)
                } else if let Some(n) = number("cc").filter(|n| *n < 128) {
                    Self::Cc(n)
                } else {
                    return None;
                }
            }
        })
    }

    /// Whether it swings both ways (-1..1: the LFOs) rather than 0..1.
    pub fn bipolar(&self) -> bool {
        matches!(self, Self::Lfo(_))
    }
}

impl Serialize for Source {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}

impl<'de> Deserialize<'de> for Source {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Self::parse(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("no modulation source {name:?}")))
    }
}

/// A source moving a parameter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Route {
    pub source: Source,
    /// The parameter's id.
    pub target: String,
    /// How far the source at its most moves the parameter, as a share of its whole range,
    /// -1..1 (negative: the other way).
    pub depth: f32,
}

/// A MIDI CC learned for a parameter: the CC's value (0..1, any channel) sets the
/// parameter's normalised value from the first time it is heard on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Learned {
    pub cc: u8,
    /// The parameter's id.
    pub target: String,
}

/// The LFOs, the routes and the learned CCs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Modulation {
    /// The LFOs (a saved list of fewer: the rest at their defaults; more: the first).
    #[serde(deserialize_with = "some_lfos")]
    pub lfos: [Lfo; LFOS],
    /// The routes (a saved route that does not read is left out; the others stay).
    #[serde(deserialize_with = "readable")]
    pub routes: Vec<Route>,
    /// The learned CCs, at most one per parameter (one that does not read is left out).
    #[serde(deserialize_with = "readable")]
    pub learned: Vec<Learned>,
}

/// The items of a saved list that read, each on its own: one damaged route or learned CC
/// does not take the others with it. (A preset is checked more strictly: `preset::apply`
/// refuses it, see [`unreadable_part`].)
fn readable<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    let list = Vec::<serde_json::Value>::deserialize(d)?;
    Ok(list
        .into_iter()
        .filter_map(|v| serde_json::from_value::<T>(v).ok())
        .collect())
}

/// Why the first item of `value`'s list `key` that does not read as a `T` fails, named as
/// `what` and its place in the list.
fn first_unreadable<T: serde::de::DeserializeOwned>(
    value: &serde_json::Value,
    key: &str,
    what: &str,
) -> Option<String> {
    value
        .get(key)?
        .as_array()?
        .iter()
        .enumerate()
        .find_map(|(i, v)| {
            serde_json::from_value::<T>(v.clone())
                .err()
                .map(|e| format!("{what} {}: {e}", i + 1))
        })
}

/// The first LFO, route or learned CC of a saved modulation (JSON text) that does not read,
/// and why: for a preset, which is refused rather than loaded without it.
pub fn unreadable_part(json: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(json).ok()?;
    first_unreadable::<Lfo>(&value, "lfos", "LFO")
        .or_else(|| first_unreadable::<Route>(&value, "routes", "route"))
        .or_else(|| first_unreadable::<Learned>(&value, "learned", "learned CC"))
}

/// Up to [`LFOS`] LFOs from a list of any length, each on its own: one that does not read
/// takes its default, the others stay.
fn some_lfos<'de, D: serde::Deserializer<'de>>(d: D) -> Result<[Lfo; LFOS], D::Error> {
    let list = Vec::<serde_json::Value>::deserialize(d)?;
    let mut lfos = [Lfo::default(); LFOS];
    for (o, l) in lfos.iter_mut().zip(list) {
        *o = serde_json::from_value(l).unwrap_or_default();
    }
    Ok(lfos)
}

impl Modulation {
    /// This modulation, from a preset, loaded over the `current` one: the learned CCs are
    /// the controller's setup rather than the sound, so a preset that learned none keeps
    /// the current ones (a factory preset does not erase a mapping).
    pub fn loaded_over(mut self, current: &Modulation) -> Self {
        if self.learned.is_empty() {
            self.learned = current.learned.clone();
        }
        self
    }

    /// The CC learned for parameter `target`, if any.
    pub fn learned_cc(&self, target: &str) -> Option<u8> {
        self.learned
            .iter()
            .find(|l| l.target == target)
            .map(|l| l.cc)
    }

    /// Learn `cc` for parameter `target` (replacing what it had learned). Whether it could
    /// (a channel mode message cannot be learned, nor more than [`MAX_LEARNED`] CCs, nor for a
    /// parameter that is not one of the [`TARGET_IDS`]).
    pub fn learn(&mut self, cc: u8, target: &str) -> bool {
        if cc > MAX_LEARN_CC || !is_target(target) {
            return false;
        }
        self.forget(target);
        if self.learned.len() >= MAX_LEARNED {
            return false;
        }
        self.learned.push(Learned {
            cc,
            target: target.to_owned(),
        });
        true
    }

    /// Forget the CC learned for parameter `target`.
    pub fn forget(&mut self, target: &str) {
        self.learned.retain(|l| l.target != target);
    }

    /// The routes to parameter `target`.
    pub fn routes_to<'a>(&'a self, target: &'a str) -> impl Iterator<Item = &'a Route> + 'a {
        self.routes.iter().filter(move |r| r.target == target)
    }
}

/// Slots in [`Live`] for the knobs' values.
pub const LIVE_SLOTS: usize = 64;

/// A parameter waiting to learn a CC, as one look saw it: which parameter, and which arming
/// (each [`Live::arm`] is a new one, also for the same parameter).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Armed {
    /// The parameter's id.
    pub target: String,
    arming: u64,
}

/// The parameter waiting to learn a CC, if any, and how many times learning was armed.
#[derive(Default)]
struct Learning {
    target: Option<String>,
    armings: u64,
}

/// What the engine and the editor share about modulation while they run (not saved): each
/// knob's value as modulated now, for the editor's rings, and the parameter waiting to learn
/// a CC. The editor arms learning; the simulation thread, which takes the CCs, binds the next
/// one it hears and disarms, only if the arming it saw is still the one waiting
/// ([`Live::take_learning_if`]).
pub struct Live {
    /// Per knob (in the order of the engine's knobs): the normalised value the simulation
    /// sees now as f32 bits, NaN when no route or learned CC moves it.
    now: [AtomicU32; LIVE_SLOTS],
    /// Whether a parameter waits to learn a CC (read without the lock once a step).
    armed: AtomicBool,
    /// Written by the editor (arm, disarm) and the simulation thread (take); a mutex, on
    /// neither side's realtime path.
    learning: parking_lot::Mutex<Learning>,
}

impl Default for Live {
    fn default() -> Self {
        Self {
            now: std::array::from_fn(|_| AtomicU32::new(f32::NAN.to_bits())),
            armed: AtomicBool::new(false),
            learning: parking_lot::Mutex::new(Learning::default()),
        }
    }
}

impl Live {
    /// Knob `k`'s value as modulated now (`None`: not modulated).
    pub fn now(&self, k: usize) -> Option<f32> {
        let v = f32::from_bits(self.now.get(k)?.load(Ordering::Relaxed));
        v.is_finite().then_some(v)
    }

    /// Say knob `k`'s value as modulated now (`None`: not modulated).
    pub fn set_now(&self, k: usize, v: Option<f32>) {
        if let Some(slot) = self.now.get(k) {
            slot.store(v.unwrap_or(f32::NAN).to_bits(), Ordering::Relaxed);
        }
    }

    /// Wait for a CC to learn for parameter `target` (`None`: stop waiting).
    pub fn arm(&self, target: Option<&str>) {
        let mut learning = self.learning.lock();
        learning.target = target.map(str::to_owned);
        learning.armings = learning.armings.wrapping_add(1);
        self.armed
            .store(learning.target.is_some(), Ordering::Release);
    }

    /// The parameter waiting to learn a CC.
    pub fn learning(&self) -> Option<String> {
        self.armed().map(|a| a.target)
    }

    /// The parameter waiting to learn a CC and its arming, for [`Live::take_learning_if`].
    pub fn armed(&self) -> Option<Armed> {
        if !self.armed.load(Ordering::Acquire) {
            return None;
        }
        let learning = self.learning.lock();
        Some(Armed {
            target: learning.target.clone()?,
            arming: learning.armings,
        })
    }

    /// Take the parameter waiting to learn (it waits no more) if it is still the arming
    /// `seen`; whether it was. A re-arm since `seen` (another parameter, or the same one
    /// again) is left waiting: compared and taken under one lock, so none is lost.
    pub fn take_learning_if(&self, seen: &Armed) -> bool {
        let mut learning = self.learning.lock();
        if learning.armings != seen.arming || learning.target.as_deref() != Some(&seen.target) {
            return false;
        }
        learning.target = None;
        self.armed.store(false, Ordering::Release);
        true
    }
}

#[cfg(test)]
mod tests;
