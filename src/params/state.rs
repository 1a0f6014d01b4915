//! The saved state's versions: [`migrate_state`] brings a project or preset saved by any
//! Dyeflow to this one's layout, leniently (a project must load).

use super::*;

/// Migrate and sanitise a state before nice-plug loads it into the parameters.
///
/// Runs from [`nice_plug::prelude::Plugin::filter_state`], on the host's main thread. It:
/// - reads the state's layout version (a missing field means a state from before versioning,
///   treated as version 1, the first layout);
/// - applies each migration step from that version up to [`STATE_VERSION`] (add new ones
///   here as `if version < N { ... }` blocks);
/// - parses the settings and editor fields leniently, keeps every readable field, snaps values to
///   the allowed ones, and writes them back, so a hand-edited or damaged state never puts the
///   plugin into an impossible configuration (the modulation through the check a preset's
///   goes through, [`Modulation::read`], logging its notes);
/// - stamps the state with the current version.
///
/// A state from a *newer* Dyeflow is loaded as far as it is understood, with a warning.
pub fn migrate_state(state: &mut PluginState) {
    let version = match state_version(state) {
        Ok(version) => version,
        Err(text) => {
            // A project cannot be refused: it loads as the first layout, as far as it reads.
            // (Presets refuse such a version: `preset::apply`.)
            nice_warn!(
                "This project's state version {text} is not a version; loading it as the first \
                 layout"
            );
            1
        }
    };
    if version > STATE_VERSION {
        nice_warn!(
            "This project was saved by a newer Dyeflow (state version {version}, this one reads \
             {STATE_VERSION}); loading what it understands"
        );
    }

    // Migration steps go here, oldest first.

    // 1 -> 2: the drum channel. Before it, channel 10 played pitched notes like every other, so
    // an old project loads with drums off (a value it names anyway is kept).
    if version < 2 {
        state
            .params
            .entry(DRUM_CHANNEL_ID.to_owned())
            .or_insert(ParamValue::I32(0));
    }

    // 2 -> 3: the display pipeline. Before it every picture was toned 1 - e^-x per channel,
    // so an old project keeps that look (a value it names anyway is kept).
    if version < 3 {
        state
            .params
            .entry(TONE_MODE_ID.to_owned())
            .or_insert(ParamValue::String("legacy".to_owned()));
    }

    // 3 -> 4: the picture effects, off for an old project.
    if version < 4 {
        effects::migrate_to_v4(state);
    }

    // 4 -> 5: rows mode became the default note mapping. nice-plug saves every parameter, so
    // an old project names its mapping anyway; one that does not (a hand-written or partial
    // state or preset) keeps the keyboard it was made with.
    if version < 5 {
        state
            .params
            .entry(MAPPING_MODE_ID.to_owned())
            .or_insert(ParamValue::String("keyboard".to_owned()));
    }

    // 5 -> 6: the audio bands and colour by pitch. Before them the audio painted only through
    // the full-band level and onsets, so an old project loads with all four amounts at 0 and
    // looks as it did (a value it names anyway is kept).
    if version < 6 {
        for id in AUDIO_AMOUNT_IDS {
            state
                .params
                .entry(id.to_owned())
                .or_insert(ParamValue::F32(0.0));
        }
    }

    // 6 -> 7: obstacles. An old project has none (a field it names anyway, as a preset
    // written by hand may, is kept).
    if version < 7 {
        state
            .fields
            .entry(OBSTACLES_KEY.to_owned())
            .or_insert_with(|| {
                serde_json::to_string(&ObstacleSettings::default())
                    .expect("plain struct serialises")
            });
    }

    // 7 -> 8: vibrance, off for an old project.
    if version < 8 {
        effects::migrate_to_v8(state);
    }

    // 8 -> 9: the liquid's knobs, as the liquid was for an old project.
    if version < 9 {
        liquid::migrate_to_v9(state);
    }

    // 9 -> 10: drawn masks keep their shape; an old project's drawing is redrawn as it
    // showed on the project's grid.
    if version < 10 {
        obstacles::migrate_to_v10(state);
    }

    // 10 -> 11: the 3D liquid's floaters, none for an old project.
    if version < 11 {
        liquid::migrate_to_v11(state);
    }

    // 11 -> 12: adaptive dye, off for an old project, which keeps its look (a value it names
    // anyway is kept).
    if version < 12 {
        state
            .params
            .entry(ADAPTIVE_DYE_ID.to_owned())
            .or_insert(ParamValue::F32(0.0));
    }

    let settings = parse_lenient::<Settings>(state.fields.get(SETTINGS_KEY)).sanitized();
    // Checked as a preset's is; a project without modulation has none, with no note.
    let (modulation, notes) = state
        .fields
        .get(MODULATION_KEY)
        .map_or_else(Default::default, |json| Modulation::read(json));
    for note in notes {
        nice_warn!("The saved modulation: {note}");
    }
    state.fields.insert(
        MODULATION_KEY.to_owned(),
        serde_json::to_string(&modulation).expect("plain struct serialises"),
    );
    let obstacles = parse_lenient::<ObstacleSettings>(state.fields.get(OBSTACLES_KEY)).sanitized();
    state.fields.insert(
        OBSTACLES_KEY.to_owned(),
        serde_json::to_string(&obstacles).expect("plain struct serialises"),
    );
    let editor = parse_lenient::<EditorSettings>(state.fields.get(EDITOR_KEY)).sanitized();
    // A project from before the output window (or one saved with it closed) loads with it
    // closed, whatever this instance showed before.
    let output = parse_lenient::<OutputSettings>(state.fields.get(OUTPUT_KEY)).sanitized();
    state.fields.insert(
        OUTPUT_KEY.to_owned(),
        serde_json::to_string(&output).expect("plain struct serialises"),
    );
    state.fields.insert(
        SETTINGS_KEY.to_owned(),
        serde_json::to_string(&settings).expect("plain struct serialises"),
    );
    state.fields.insert(
        EDITOR_KEY.to_owned(),
        serde_json::to_string(&editor).expect("plain struct serialises"),
    );
    state
        .fields
        .insert(STATE_VERSION_KEY.to_owned(), STATE_VERSION.to_string());
}

/// A state's layout version: 1 when it names none (a state from before versioning), else the
/// whole number from 1 it names (as JSON text, `"9"`, or a JSON string of one, `"\"9\""`);
/// anything else (`"-1e99"`, `"9.5"`, `"0"`) is no version: `Err` with its text as written
/// (cut short).
pub fn state_version(state: &PluginState) -> Result<u32, String> {
    let Some(text) = state.fields.get(STATE_VERSION_KEY) else {
        return Ok(1);
    };
    let number = serde_json::from_str::<String>(text).unwrap_or_else(|_| text.clone());
    match number.trim().parse::<u32>() {
        Ok(version) if version >= 1 => Ok(version),
        _ => Err(text.chars().take(40).collect()),
    }
}

/// Parse a persisted JSON object, keeping every field that parses and defaulting the rest.
pub(super) fn parse_lenient<T: Default + Serialize + for<'de> Deserialize<'de>>(
    json: Option<&String>,
) -> T {
    let Some(json) = json else {
        return T::default();
    };
    if let Ok(v) = serde_json::from_str::<T>(json) {
        return v;
    }
    // Field by field: start from the defaults and overlay each field that parses on its own.
    let Ok(serde_json::Value::Object(given)) = serde_json::from_str::<serde_json::Value>(json)
    else {
        nice_warn!("Ignoring unreadable persisted field {json:?}");
        return T::default();
    };
    let mut merged = match serde_json::to_value(T::default()) {
        Ok(serde_json::Value::Object(m)) => m,
        _ => return T::default(),
    };
    for (key, value) in given {
        if let Some(slot) = merged.get_mut(&key) {
            let previous = std::mem::replace(slot, value);
            if serde_json::from_value::<T>(serde_json::Value::Object(merged.clone())).is_err() {
                nice_warn!("Ignoring unreadable persisted value for {key:?}");
                merged.insert(key, previous);
            }
        }
    }
    serde_json::from_value(serde_json::Value::Object(merged)).unwrap_or_default()
}
