//! Modulation's tests: sources, saving, the one check of a saved modulation (values, limits,
//! targets, notes) for states and presets, and MIDI learn's arming.

use super::*;

#[test]
fn sources_round_trip_their_names() {
    let all = (0..LFOS as u8)
        .map(Source::Lfo)
        .chain([
            Source::Level,
            Source::Low,
            Source::Mid,
            Source::High,
            Source::Velocity,
            Source::Notes,
        ])
        .chain((0..128).map(Source::Cc));
    for s in all {
        assert_eq!(Source::parse(&s.name()), Some(s));
    }
    for bad in ["lfo0", "lfo5", "cc128", "cc-1", "", "tempo"] {
        assert_eq!(Source::parse(bad), None, "{bad}");
    }
    assert_eq!(Source::parse(" LFO2 "), Some(Source::Lfo(1)));
}

/// A saved modulation reads back; bad values are brought within bounds; a field it does
/// not name takes its default; an unknown source fails to parse (the state's lenient
/// reader then keeps the default: no routes).
#[test]
fn it_saves_and_sanitises() {
    let text = r#"{"lfos": [{"shape": "saw", "sync": false, "hz": 99, "phase": -1},
        {"beats": "x"}, {"shape": "square", "hz": 2}], "routes": [
        {"source": "lfo1", "target": "dye_diss", "depth": 3},
        {"source": "cc74", "target": "vort", "depth": -0.25},
        {"source": "low", "target": "bloom", "depth": 0}]}"#;
    // An LFO that does not read takes its default alone; a preset hears which.
    let m: Modulation = serde_json::from_str(text).expect("the rest reads");
    assert_eq!(m.lfos[0].shape, Shape::Saw);
    assert_eq!(m.lfos[1], Lfo::default());
    assert_eq!(m.lfos[2].shape, Shape::Square);
    assert_eq!(m.routes.len(), 3);
    let why = unreadable_part(text).expect("LFO 2 does not read");
    assert!(why.starts_with("LFO 2:"), "{why}");
    let text = text.replace(r#"{"beats": "x"}"#, r#"{"beats": 1000}"#);
    let m: Modulation = serde_json::from_str::<Modulation>(&text)
        .expect("it parses")
        .sanitized();
    assert_eq!(m.lfos[0].shape, Shape::Saw);
    assert_eq!((m.lfos[0].hz, m.lfos[0].phase), (HZ.1, 0.0));
    assert_eq!(m.lfos[1].beats, BEATS.1);
    assert_eq!(m.lfos[3], Lfo::default());
    assert_eq!(m.routes.len(), 2, "the route of depth 0 dropped");
    assert_eq!(m.routes[0].depth, 1.0);
    assert_eq!(m.routes[1].source, Source::Cc(74));
    let back: Modulation = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
    assert_eq!(back, m);
    // A route that does not read is left out, the others stay; a preset hears why.
    let bad = r#"{"routes": [{"source": "tempo", "target": "vort", "depth": 1},
        {"source": "mid", "target": "vort", "depth": 0.5}]}"#;
    let m: Modulation = serde_json::from_str(bad).expect("the rest reads");
    assert_eq!(m.routes.len(), 1);
    assert_eq!(m.routes[0].source, Source::Mid);
    let why = unreadable_part(bad).expect("route 1 does not read");
    assert!(
        why.starts_with("route 1:") && why.contains("tempo"),
        "{why}"
    );
    assert_eq!(unreadable_part(&serde_json::to_string(&m).unwrap()), None);
    let many = Modulation {
        routes: vec![
            Route {
                source: Source::Level,
                target: "vort".into(),
                depth: 0.5,
            };
            100
        ],
        ..Default::default()
    };
    assert_eq!(many.sanitized().routes.len(), MAX_ROUTES);
}

/// Learned CCs: one per parameter (the last learned wins), none of the channel mode
/// messages; one that does not read is left out (a preset hears which); learn and forget.
#[test]
fn learned_ccs_save_and_sanitise() {
    let text = r#"{"learned": [{"cc": 21, "target": "vort"}, {"cc": 123, "target": "hue"},
        {"cc": 22, "target": "vort"}, {"cc": "x", "target": "bloom"},
        {"cc": 7, "target": "bloom"}]}"#;
    let m: Modulation = serde_json::from_str(text).expect("the rest reads");
    assert_eq!(m.learned.len(), 4);
    let why = unreadable_part(text).expect("learned CC 4 does not read");
    assert!(why.starts_with("learned CC 4:"), "{why}");
    let mut m = m.sanitized();
    assert_eq!(m.learned_cc("vort"), Some(22));
    assert_eq!(m.learned_cc("hue"), None, "all notes off cannot be learned");
    assert_eq!(m.learned_cc("bloom"), Some(7));
    assert_eq!(m.learned.len(), 2);
    assert!(m.learn(30, "bloom") && !m.learn(120, "hue"));
    assert_eq!(m.learned_cc("bloom"), Some(30));
    m.forget("vort");
    assert_eq!(m.learned_cc("vort"), None);
    let back: Modulation = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
    assert_eq!(back, m);
    // A project saved before learning existed has none.
    let old: Modulation = serde_json::from_str(r#"{"routes": []}"#).unwrap();
    assert!(old.learned.is_empty());
}

/// The notes of reading `json`, and the modulation.
fn read(json: &str) -> (Modulation, Vec<String>) {
    let (m, notes) = Modulation::read(json);
    (m, notes)
}

/// Every value out of its range is clamped to it and named in a note as written; a huge or
/// infinite depth saturates at ±1 rather than vanishing; routes and learned CCs aimed at no
/// modulatable parameter, and CCs that cannot be learned, are dropped with a note.
#[test]
fn hostile_values_are_clamped_and_noted() {
    let (m, notes) = read(
        r#"{"lfos": [{"sync": false, "hz": -5, "phase": 7},
            {"hz": 0, "beats": 1e9}, {"beats": 0.1, "phase": -0.5}, {"hz": 1e39}],
        "routes": [{"source": "lfo1", "target": "vort", "depth": 0.5},
            {"source": "lfo2", "target": "hue", "depth": 5},
            {"source": "lfo3", "target": "bloom", "depth": 1e39},
            {"source": "low", "target": "dye_diss", "depth": -1e39},
            {"source": "mid", "target": "no_such", "depth": 0.5},
            {"source": "high", "target": "attack", "depth": 0.5}],
        "learned": [{"cc": 21, "target": "vort"}, {"cc": 120, "target": "hue"},
            {"cc": 255, "target": "bloom"}, {"cc": 7, "target": "mapping"},
            {"cc": 8, "target": "radius"}]}"#,
    );
    let expected = [
        "LFO 1: hz -5 clamped to 0.01",
        "LFO 1: phase 7 clamped to 1",
        "LFO 2: beats 1e9 clamped to 64",
        "LFO 2: hz 0 clamped to 0.01",
        "LFO 3: beats 0.1 clamped to 0.25",
        "LFO 3: phase -0.5 clamped to 0",
        "LFO 4: hz 1e39 clamped to 20",
        "route 2: depth 5 clamped to 1",
        "route 3: depth 1e39 clamped to 1",
        "route 4: depth -1e39 clamped to -1",
        "route 5: \"no_such\" is not a parameter a route can move; dropped",
        "route 6: \"attack\" is not a parameter a route can move; dropped",
        "learned CC 2: cc 120 cannot be learned (0 to 119; 120 to 127 are MIDI's channel mode \
         messages); dropped",
        "learned CC 3: cc 255 cannot be learned (0 to 119; 120 to 127 are MIDI's channel mode \
         messages); dropped",
        "learned CC 4: \"mapping\" is not a parameter a CC can be learned for; dropped",
    ];
    assert_eq!(notes, expected);
    assert_eq!((m.lfos[0].hz, m.lfos[0].phase), (HZ.0, 1.0));
    assert_eq!((m.lfos[1].hz, m.lfos[1].beats), (HZ.0, BEATS.1));
    assert_eq!((m.lfos[2].beats, m.lfos[2].phase), (BEATS.0, 0.0));
    assert_eq!(m.lfos[3].hz, HZ.1);
    let depths: Vec<(&str, f32)> = m
        .routes
        .iter()
        .map(|r| (r.target.as_str(), r.depth))
        .collect();
    assert_eq!(
        depths,
        [
            ("vort", 0.5),
            ("hue", 1.0),
            ("bloom", 1.0),
            ("dye_diss", -1.0)
        ]
    );
    assert_eq!(m.learned_cc("vort"), Some(21));
    assert_eq!(m.learned_cc("radius"), Some(8));
    assert_eq!(m.learned.len(), 2);
    // Checked once, nothing is left to note: what it wrote reads back as it is.
    let (again, notes) = read(&serde_json::to_string(&m).unwrap());
    assert_eq!(again, m);
    assert!(notes.is_empty(), "{notes:?}");
}

/// A modulation the editor writes (every value within bounds, fractions included) reads
/// back unchanged with no note; a project without modulation fields has none.
#[test]
fn a_good_modulation_reads_without_notes() {
    let m = Modulation {
        lfos: [
            Lfo {
                shape: Shape::Random,
                sync: false,
                beats: 0.3,
                hz: 0.01,
                phase: 0.7,
            },
            Lfo {
                beats: 64.0,
                hz: 20.0,
                phase: 1.0,
                ..Lfo::default()
            },
            Lfo::default(),
            Lfo {
                beats: 0.25,
                ..Lfo::default()
            },
        ],
        routes: vec![Route {
            source: Source::Cc(74),
            target: "particles".into(),
            depth: -0.3,
        }],
        learned: vec![Learned {
            cc: MAX_LEARN_CC,
            target: "visc".into(),
        }],
    };
    let (back, notes) = read(&serde_json::to_string(&m).unwrap());
    assert_eq!(back, m);
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(m.clone().checked(), (m, Vec::new()));
    assert_eq!(read("{}"), (Modulation::default(), Vec::new()));
}

/// Lists longer than the limits keep their first items, with one note saying how many were
/// dropped (not one note per item).
#[test]
fn surplus_items_are_dropped_with_a_count() {
    let lfos = vec![r#"{"hz": 1}"#; 10_000].join(",");
    let routes = vec![r#"{"source": "level", "target": "vort", "depth": 0.5}"#; 10_000].join(",");
    let learned = (0..10_000)
        .map(|i| {
            format!(
                r#"{{"cc": {}, "target": "{}"}}"#,
                i % 100,
                TARGET_IDS[i % 48]
            )
        })
        .collect::<Vec<_>>()
        .join(",");
    let (m, notes) = read(&format!(
        r#"{{"lfos": [{lfos}], "routes": [{routes}], "learned": [{learned}]}}"#
    ));
    assert_eq!(m.routes.len(), MAX_ROUTES);
    assert!(m.lfos.iter().all(|l| l.hz == 1.0));
    assert_eq!(
        notes[..2],
        [
            "9996 LFOs past the first 4 dropped",
            "9968 routes past the first 32 dropped",
        ]
    );
    // Of the first 64 learned CCs, the last 16 name the first 16 parameters again.
    assert_eq!(m.learned.len(), 48);
    assert_eq!(m.learned_cc("visc"), Some(48));
    assert_eq!(notes.len(), 2 + 16 + 1, "{notes:?}");
    assert_eq!(
        notes[2],
        "learned CC 1: \"visc\" has another CC later in the list; dropped"
    );
    assert_eq!(notes[18], "9936 learned CCs past the first 64 dropped");
    let one_more = vec![r#"{"source": "level", "target": "vort", "depth": 0.5}"#; 33].join(",");
    let (_, notes) = read(&format!(r#"{{"routes": [{one_more}]}}"#));
    assert_eq!(notes, ["1 route past the first 32 dropped"]);
}

/// What no text can hold, a modulation set in memory can: an infinite depth saturates,
/// one not a number drops its route, an LFO value not a number takes its default; each is
/// noted. A depth of 0 moves nothing and is left out quietly.
#[test]
fn checked_saturates_infinities_and_defaults_nans() {
    let route = |target: &str, depth| Route {
        source: Source::Level,
        target: target.into(),
        depth,
    };
    let (m, notes) = Modulation {
        lfos: [
            Lfo {
                hz: f32::NAN,
                beats: f32::INFINITY,
                ..Lfo::default()
            },
            Lfo::default(),
            Lfo::default(),
            Lfo::default(),
        ],
        routes: vec![
            route("vort", f32::INFINITY),
            route("hue", f32::NEG_INFINITY),
            route("bloom", f32::NAN),
            route("sat", 0.0),
            route("visc", 1e-7),
        ],
        learned: Vec::new(),
    }
    .checked();
    assert_eq!(
        notes,
        [
            "LFO 1: beats inf clamped to 64",
            "LFO 1: hz is not a number; set to 0.25",
            "route 1: depth inf clamped to 1",
            "route 2: depth -inf clamped to -1",
            "route 3: depth is not a number; dropped",
        ]
    );
    assert_eq!((m.lfos[0].hz, m.lfos[0].beats), (0.25, BEATS.1));
    let depths: Vec<f32> = m.routes.iter().map(|r| r.depth).collect();
    assert_eq!(depths, [1.0, -1.0, 1e-7]);
}

/// A project's state is read leniently: what does not read is left out with a note, the
/// rest loads; text that is no modulation at all gives none.
#[test]
fn unreadable_parts_are_noted_and_left_out() {
    let (m, notes) = read(
        r#"{"lfos": [{"beats": "x"}, {"hz": 2, "sync": false}], "routes": "all",
            "learned": [{"cc": 300, "target": "vort"}, {"cc": 9, "target": "vort"}]}"#,
    );
    assert_eq!(m.lfos[0], Lfo::default());
    assert_eq!(m.lfos[1].hz, 2.0);
    assert!(m.routes.is_empty());
    assert_eq!(m.learned_cc("vort"), Some(9));
    assert_eq!(notes.len(), 3, "{notes:?}");
    assert!(notes[0].starts_with("LFO 1 does not read ("), "{notes:?}");
    assert!(notes[0].ends_with("); at its default"), "{notes:?}");
    assert_eq!(notes[1], "\"routes\" is not a list; ignored");
    assert!(
        notes[2].starts_with("learned CC 1 does not read ("),
        "{notes:?}"
    );
    for text in ["[1, 2]", "", "null", "{"] {
        let (m, notes) = read(text);
        assert_eq!(m, Modulation::default(), "{text}");
        assert_eq!(notes.len(), 1, "{text}: {notes:?}");
        assert!(notes[0].ends_with("none loaded"), "{notes:?}");
    }
    // A hostile id is quoted short.
    let long = "x".repeat(100_000);
    let (_, notes) = read(&format!(
        r#"{{"routes": [{{"source": "level", "target": "{long}", "depth": 1}}]}}"#
    ));
    assert!(notes[0].len() < 120, "{}", notes[0]);
}

/// The plugin's state goes through the same check as a preset: the modulation it keeps is
/// the checked one; a state without modulation loads with none, as before modulation existed.
#[test]
fn a_state_is_checked_as_a_preset_is() {
    use crate::params::migrate_state;
    use nice_plug::plugin::PluginState;
    let hostile = r#"{"lfos": [{"hz": -5}], "routes": [
        {"source": "lfo1", "target": "vort", "depth": 1e39},
        {"source": "lfo1", "target": "nowhere", "depth": 0.5}],
        "learned": [{"cc": 127, "target": "hue"}]}"#;
    let state = |modulation: Option<&str>| PluginState {
        version: String::new(),
        params: Default::default(),
        fields: modulation
            .map(|m| (MODULATION_KEY.to_owned(), m.to_owned()))
            .into_iter()
            .collect(),
    };
    let mut s = state(Some(hostile));
    migrate_state(&mut s);
    let kept: Modulation = serde_json::from_str(&s.fields[MODULATION_KEY]).unwrap();
    assert_eq!(kept, Modulation::read(hostile).0);
    assert_eq!(kept.lfos[0].hz, HZ.0);
    assert_eq!(kept.routes.len(), 1);
    assert_eq!(kept.routes[0].depth, 1.0, "saturated, not dropped");
    assert!(kept.learned.is_empty());
    let mut old = state(None);
    migrate_state(&mut old);
    assert_eq!(
        old.fields[MODULATION_KEY],
        serde_json::to_string(&Modulation::default()).unwrap()
    );
}

/// MIDI learn refuses what the check would drop: a channel mode message, a parameter that
/// is no target.
#[test]
fn learning_takes_targets_only() {
    let mut m = Modulation::default();
    assert!(!m.learn(21, "mapping"));
    assert!(!m.learn(21, "no_such"));
    assert!(!m.learn(MAX_LEARN_CC + 1, "vort"));
    assert!(m.learn(MAX_LEARN_CC, "vort"));
    assert_eq!(m.clone().checked(), (m, Vec::new()));
}

/// An arming since the simulation thread looked (another parameter, or the same one again)
/// is not taken by it: it stays waiting for a CC of its own.
#[test]
fn a_rearm_between_look_and_take_is_not_lost() {
    let live = Live::default();
    assert_eq!(live.armed(), None);
    live.arm(Some("vort"));
    let seen = live.armed().expect("armed");
    assert_eq!(seen.target, "vort");
    live.arm(Some("hue"));
    assert!(!live.take_learning_if(&seen));
    assert_eq!(
        live.learning().as_deref(),
        Some("hue"),
        "the re-arm is not lost"
    );
    let seen = live.armed().expect("armed");
    live.arm(Some("hue"));
    assert!(
        !live.take_learning_if(&seen),
        "armed again for the same one"
    );
    assert_eq!(live.learning().as_deref(), Some("hue"));
    let seen = live.armed().expect("armed");
    assert!(live.take_learning_if(&seen));
    assert_eq!(live.learning(), None);
    assert!(!live.take_learning_if(&seen), "taken once");
    // Disarmed meanwhile: nothing to take.
    live.arm(Some("vort"));
    let seen = live.armed().expect("armed");
    live.arm(None);
    assert!(!live.take_learning_if(&seen));
    assert_eq!(live.armed(), None);
}
