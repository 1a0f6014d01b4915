//! The one check of a saved modulation, for a project's state and a preset alike: every
//! value brought within its range (a depth saturates at ±1, a rate at its slowest or
//! fastest), items past the limits or aimed at no [`TARGET_IDS`] parameter dropped, and a
//! note on each change (`route 3: depth 1e39 clamped to 1`). The plugin logs the notes;
//! `dyeflow render` prints them.

use super::{
    BEATS, HZ, LFOS, Learned, Lfo, MAX_LEARN_CC, MAX_LEARNED, MAX_ROUTES, Modulation, Route,
    is_target,
};
use serde_json::Value;

/// An item of a saved list: read (with its JSON when read from text, for the values as
/// written there), or why it does not read.
type Item<'a, T> = Result<(T, Option<&'a Value>), String>;

/// Longest id quoted in a note (a hostile file may name a megabyte).
const MAX_QUOTED_CHARS: usize = 40;

impl Modulation {
    /// A saved modulation (the JSON text of a state's or a preset's `modulation` field) read
    /// and checked as [`Modulation::checked`] checks it, and its notes, which give the
    /// values as written (`1e39`, not the infinity it reads as). Lenient, as a project must
    /// load: a list that is no list and an item that does not read are left out (an LFO: at
    /// its default) with a note; text that is no JSON object gives no modulation and a note.
    /// (A preset refuses what does not read before this: `preset::apply`.)
    pub fn read(json: &str) -> (Self, Vec<String>) {
        let mut notes = Vec::new();
        let value = match serde_json::from_str::<Value>(json) {
            Ok(value) if value.is_object() => value,
            Ok(_) => {
                notes.push("is not a JSON object; none loaded".to_owned());
                return (Self::default(), notes);
            }
            Err(e) => {
                notes.push(format!("does not read ({e}); none loaded"));
                return (Self::default(), notes);
            }
        };
        // In the order of the text, the notes too.
        let lfos = items(&value, "lfos", &mut notes);
        let lfos = check_lfos(lfos, &mut notes);
        let routes = items(&value, "routes", &mut notes);
        let routes = check_routes(routes, &mut notes);
        let learned = items(&value, "learned", &mut notes);
        let learned = check_learned(learned, &mut notes);
        let m = Self {
            lfos,
            routes,
            learned,
        };
        (m, notes)
    }

    /// Within bounds, and a note per value changed or item dropped:
    /// - LFO rates and phases clamped to [`BEATS`], [`HZ`] and 0..1 (not a number: the
    ///   default);
    /// - route depths clamped to -1..1 (an infinite one too); a route of depth 0 (it moves
    ///   nothing) left out without a note, one of depth not a number with one;
    /// - routes and learned CCs aimed at no [`TARGET_IDS`] parameter dropped, and learned CCs
    ///   above [`MAX_LEARN_CC`];
    /// - one learned CC per parameter (the last in the list wins);
    /// - at most [`LFOS`] LFOs, [`MAX_ROUTES`] routes, [`MAX_LEARNED`] learned CCs (the first
    ///   as saved).
    pub fn checked(self) -> (Self, Vec<String>) {
        let mut notes = Vec::new();
        let m = Self {
            lfos: check_lfos(self.lfos.map(|l| Ok((l, None))).into(), &mut notes),
            routes: check_routes(
                self.routes.into_iter().map(|r| Ok((r, None))).collect(),
                &mut notes,
            ),
            learned: check_learned(
                self.learned.into_iter().map(|l| Ok((l, None))).collect(),
                &mut notes,
            ),
        };
        (m, notes)
    }

    /// [`Modulation::checked`] without its notes.
    pub fn sanitized(self) -> Self {
        self.checked().0
    }
}

/// The items of `value`'s list `key`, each read on its own (none if it names none).
fn items<'a, T: serde::de::DeserializeOwned>(
    value: &'a Value,
    key: &str,
    notes: &mut Vec<String>,
) -> Vec<Item<'a, T>> {
    match value.get(key) {
        None => Vec::new(),
        Some(Value::Array(list)) => list
            .iter()
            .map(|v| {
                serde_json::from_value::<T>(v.clone())
                    .map(|t| (t, Some(v)))
                    .map_err(|e| e.to_string())
            })
            .collect(),
        Some(_) => {
            notes.push(format!("\"{key}\" is not a list; ignored"));
            Vec::new()
        }
    }
}

fn check_lfos(mut items: Vec<Item<Lfo>>, notes: &mut Vec<String>) -> [Lfo; LFOS] {
    let surplus = cut(&mut items, LFOS);
    let mut lfos = [Lfo::default(); LFOS];
    for (i, (slot, item)) in lfos.iter_mut().zip(items).enumerate() {
        let what = format!("LFO {}", i + 1);
        match item {
            Ok((lfo, raw)) => *slot = lfo.checked(&what, raw, notes),
            Err(why) => notes.push(format!("{what} does not read ({why}); at its default")),
        }
    }
    tell_surplus(surplus, LFOS, "LFO", notes);
    lfos
}

impl Lfo {
    /// Within bounds (not a number: the default), with a note on each value changed.
    fn checked(self, what: &str, raw: Option<&Value>, notes: &mut Vec<String>) -> Self {
        let d = Self::default();
        let mut field = |name: &str, got: f32, range: (f32, f32), or: f32| {
            bounded(got, written(raw, name), range, what, name, notes).unwrap_or_else(|| {
                notes.push(format!(
                    "{what}: {name} is not a number; set to {}",
                    shown(or)
                ));
                or
            })
        };
        Self {
            shape: self.shape,
            sync: self.sync,
            beats: field("beats", self.beats, BEATS, d.beats),
            hz: field("hz", self.hz, HZ, d.hz),
            phase: field("phase", self.phase, (0.0, 1.0), d.phase),
        }
    }
}

fn check_routes(mut items: Vec<Item<Route>>, notes: &mut Vec<String>) -> Vec<Route> {
    let surplus = cut(&mut items, MAX_ROUTES);
    let mut routes = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let what = format!("route {}", i + 1);
        let (mut route, raw) = match item {
            Ok(read) => read,
            Err(why) => {
                notes.push(format!("{what} does not read ({why}); dropped"));
                continue;
            }
        };
        if !is_target(&route.target) {
            notes.push(format!(
                "{what}: {} is not a parameter a route can move; dropped",
                quoted(&route.target)
            ));
            continue;
        }
        match bounded(
            route.depth,
            written(raw, "depth"),
            (-1.0, 1.0),
            &what,
            "depth",
            notes,
        ) {
            None => notes.push(format!("{what}: depth is not a number; dropped")),
            // A depth of 0 moves nothing: left out quietly.
            Some(0.0) => {}
            Some(depth) => {
                route.depth = depth;
                routes.push(route);
            }
        }
    }
    tell_surplus(surplus, MAX_ROUTES, "route", notes);
    routes
}

fn check_learned(mut items: Vec<Item<Learned>>, notes: &mut Vec<String>) -> Vec<Learned> {
    let surplus = cut(&mut items, MAX_LEARNED);
    let mut kept = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let what = format!("learned CC {}", i + 1);
        match item {
            Err(why) => notes.push(format!("{what} does not read ({why}); dropped")),
            Ok((l, _)) if l.cc > MAX_LEARN_CC => notes.push(format!(
                "{what}: cc {} cannot be learned (0 to {MAX_LEARN_CC}; 120 to 127 are MIDI's \
                 channel mode messages); dropped",
                l.cc
            )),
            Ok((l, _)) if !is_target(&l.target) => notes.push(format!(
                "{what}: {} is not a parameter a CC can be learned for; dropped",
                quoted(&l.target)
            )),
            Ok((l, _)) => kept.push((i, l)),
        }
    }
    // One CC per parameter: the last learned wins.
    let mut seen = std::collections::HashSet::new();
    let mut later = Vec::new();
    let mut learned: Vec<Learned> = kept
        .into_iter()
        .rev()
        .filter_map(|(i, l)| {
            if seen.insert(l.target.clone()) {
                Some(l)
            } else {
                later.push(format!(
                    "learned CC {}: {} has another CC later in the list; dropped",
                    i + 1,
                    quoted(&l.target)
                ));
                None
            }
        })
        .collect();
    learned.reverse();
    notes.extend(later.into_iter().rev());
    tell_surplus(surplus, MAX_LEARNED, "learned CC", notes);
    learned
}

/// Keep the first `most` of `items`; how many were past them.
fn cut<T>(items: &mut Vec<T>, most: usize) -> usize {
    let surplus = items.len().saturating_sub(most);
    items.truncate(most);
    surplus
}

/// The note on `surplus` items (each a `what`) dropped past the first `most`.
fn tell_surplus(surplus: usize, most: usize, what: &str, notes: &mut Vec<String>) {
    match surplus {
        0 => {}
        1 => notes.push(format!("1 {what} past the first {most} dropped")),
        n => notes.push(format!("{n} {what}s past the first {most} dropped")),
    }
}

/// `got` (as `written` in the saved text, when known) within `lo..=hi`: the nearer end when
/// out of range (an infinity too), with a note on `what`'s `field`; `None` when it is not a
/// number.
fn bounded(
    got: f32,
    written: Option<f64>,
    (lo, hi): (f32, f32),
    what: &str,
    field: &str,
    notes: &mut Vec<String>,
) -> Option<f32> {
    let v = written.unwrap_or(f64::from(got));
    let to = if v.is_nan() {
        return None;
    } else if v < f64::from(lo) {
        lo
    } else if v > f64::from(hi) {
        hi
    } else {
        return Some(got);
    };
    let text = written.map_or_else(|| shown(got), shown);
    notes.push(format!("{what}: {field} {text} clamped to {}", shown(to)));
    Some(to)
}

/// The number `raw`'s `field` holds, as written (before it is read into an `f32`).
fn written(raw: Option<&Value>, field: &str) -> Option<f64> {
    raw?.get(field)?.as_f64()
}

/// A number for a note: plain at usual sizes (`-5`, `0.25`), else in e notation (`1e39`).
fn shown<T: Copy + Into<f64> + std::fmt::Display + std::fmt::LowerExp>(v: T) -> String {
    let size = v.into().abs();
    if size.is_finite() && size != 0.0 && !(1e-4..1e6).contains(&size) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// An id for a note, quoted, and cut short when long.
fn quoted(id: &str) -> String {
    if id.chars().count() > MAX_QUOTED_CHARS {
        let short: String = id.chars().take(MAX_QUOTED_CHARS).collect();
        format!("{short:?}...")
    } else {
        format!("{id:?}")
    }
}
