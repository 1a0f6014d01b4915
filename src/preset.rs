//! Presets: a parameter set saved in the plugin's own state format (readable JSON:
//! `{"version": ..., "params": {"visc": 120.0, "mapping": "circle", ...}, "fields":
//! {"settings": "{...}", "obstacles": "{...}", ...}}`). The editor saves them; `dyeflow render
//! --preset FILE` loads them, so a look tuned in the DAW renders the same offline. A preset
//! that carries obstacles (`{"layout": "pillars", "mask": "W H runs..."}`) sets them; one
//! that carries none (the factory presets) leaves the walls as they are.
//!
//! It goes through the same migration as a project the plugin loads ([`migrate_state`]).
//! Parameters it does not name keep their defaults; ids this Dyeflow does not know are
//! reported and skipped (a newer version's preset still loads); a value of the wrong type or
//! out of range is an error naming the parameter.
//!
//! NOTE: nice-plug has no public way to set a parameter outside a host (its wrappers restore
//! state through `InternalParamMut`, and its `state` module is crate-private), so [`apply`]
//! checks every value first through the public `Param` previews and the enums' stable ids,
//! and then sets them in one loop through `ParamPtr`, as the wrappers do.
//!
//! Modulation is checked as the plugin's state checks it ([`Modulation::read`]): a value out
//! of its range is brought within it and reported ([`PresetReport::modulation_notes`]).

use crate::fluid::mask::{Layout, Mask};
use crate::fluid::{ColorMode, LiquidStyle, ObstacleStyle, StreamlineMode, ToneMode};
use crate::mapping::MappingMode;
use crate::params::{
    Aspect, BackendChoice, DyeflowParams, FluidChoice, MODULATION_KEY, Modulation, OBSTACLES_KEY,
    ObstacleSettings, SETTINGS_KEY, STATE_VERSION, Settings, migrate_state, state_version,
};
use nice_plug::params::internals::ParamPtr;
use nice_plug::plugin::{ParamValue, PluginState};
use nice_plug::prelude::{Enum, Params};

pub mod factory;
pub use factory::{FACTORY_PRESETS, FactoryPreset};

/// Largest preset file read (a real one is a few kilobytes).
pub const MAX_PRESET_BYTES: u64 = 1 << 20;

/// A file the user named is not a regular file: a FIFO, a device or a socket (the payload of
/// the [`std::io::ErrorKind::InvalidInput`] error [`open_regular`] gives).
#[derive(Debug, thiserror::Error)]
#[error("is not a regular file (a FIFO, a device or a socket); Dyeflow reads only files")]
pub struct NotARegularFile;

/// Open a file the user named (a preset, a capture, a render's inputs) for reading, refusing
/// anything but a regular file before a byte is read. The open itself never waits: a FIFO
/// would block it until someone writes to the other end, so it is opened non-blocking and
/// refused by what the open file is (no check-then-open race); a directory is an
/// [`std::io::ErrorKind::IsADirectory`] error, anything else not a file an
/// [`std::io::ErrorKind::InvalidInput`] one carrying [`NotARegularFile`].
pub fn open_regular(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    use std::io::{Error, ErrorKind};
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let is_a_directory = || Error::new(ErrorKind::IsADirectory, "is a directory, not a file");
    let file = match options.open(path) {
        Ok(file) => file,
        // Windows refuses to open a directory as a file ("access denied"): say what it is.
        Err(e)
            if cfg!(windows)
                && e.kind() == ErrorKind::PermissionDenied
                && std::fs::metadata(path).is_ok_and(|m| m.is_dir()) =>
        {
            return Err(is_a_directory());
        }
        Err(e) => return Err(e),
    };
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Err(is_a_directory());
    }
    if !meta.is_file() {
        return Err(Error::new(ErrorKind::InvalidInput, NotARegularFile));
    }
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        // Reads of a regular file ignore the flag; it is cleared all the same, so the file
        // behaves as one opened plainly.
        // SAFETY: `file` owns this descriptor for the whole call; F_GETFL and F_SETFL only
        // read and set its status flags.
        unsafe {
            let fd = file.as_raw_fd();
            let flags = libc::fcntl(fd, libc::F_GETFL);
            if flags >= 0 {
                libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
            }
        }
    }
    Ok(file)
}

/// Read a preset file (see [`open_regular`]) of at most [`MAX_PRESET_BYTES`].
pub fn read_file(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let file = open_regular(path)?;
    let too_large = || {
        std::io::Error::new(
            std::io::ErrorKind::FileTooLarge,
            format!("file too large (at most {} MiB)", MAX_PRESET_BYTES >> 20),
        )
    };
    if file.metadata()?.len() > MAX_PRESET_BYTES {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    file.take(MAX_PRESET_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_PRESET_BYTES {
        return Err(too_large());
    }
    Ok(bytes)
}

/// What loading a preset found worth telling the user.
#[derive(Debug, Default, PartialEq)]
pub struct PresetReport {
    /// Parameter ids the preset names that this Dyeflow does not know.
    pub unknown: Vec<String>,
    /// Whether the preset carries settings (fluid, grid, canvas, solver), which [`apply`] then
    /// set (those it names).
    pub settings: bool,
    /// The settings it names.
    pub patch: Option<SettingsPatch>,
    /// Whether the preset carries obstacles, which [`apply`] then set.
    pub obstacles: bool,
    /// Whether the preset carries modulation, which [`apply`] then set.
    pub modulation: bool,
    /// What checking its modulation changed ([`Modulation::read`]): a value brought within
    /// its range, an item dropped, one note each (`route 3: depth 1e39 clamped to 1`).
    pub modulation_notes: Vec<String>,
    /// The state version of a preset made by a newer Dyeflow (it loads as far as this one
    /// understands it).
    pub newer: Option<u32>,
}

impl PresetReport {
    /// The note a preset made by a newer Dyeflow deserves, if it is one.
    pub fn version_note(&self) -> Option<String> {
        self.newer.map(|version| {
            format!(
                "made by a newer Dyeflow: its state version is {version}, this one reads up to \
                 {STATE_VERSION}; loaded what this one understands"
            )
        })
    }
}

/// Why a preset cannot be used. Its text is a phrase, for "FILE: <phrase>" or the editor.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PresetError {
    /// Not JSON, or not a JSON object with `params`.
    #[error("not a Dyeflow preset ({0})")]
    NotAPreset(String),
    /// A `state-version` that is not a whole number from 1.
    #[error(
        "its \"state-version\" is {0}, which is not a state version (a whole number from 1); \
         Dyeflow cannot tell how to read it"
    )]
    BadStateVersion(String),
    /// `fields.settings` is not a JSON object.
    #[error("its \"settings\" are not a JSON object ({0})")]
    SettingsNotAnObject(String),
    /// `fields.obstacles` is not a JSON object.
    #[error("its \"obstacles\" are not a JSON object ({0})")]
    ObstaclesNotAnObject(String),
    /// `fields.obstacles.mask` is not a mask Dyeflow reads.
    #[error("its obstacle \"mask\" does not read: {0}")]
    BadObstacleMask(String),
    /// `fields.modulation` is not modulation Dyeflow reads.
    #[error("its \"modulation\" does not read: {0}")]
    BadModulation(String),
    /// A settings field has a value outside its allowed ones.
    #[error("settings field '{name}' is {value}; use one of {allowed}")]
    BadSetting {
        name: String,
        value: String,
        allowed: String,
    },
    /// A parameter's value has the wrong type (text for a number, a number for a switch...).
    #[error("parameter '{id}' has a value of the wrong type")]
    WrongType { id: String },
    /// A choice parameter names a choice it does not have.
    #[error("parameter '{id}' has no choice '{choice}'")]
    NoSuchChoice { id: String, choice: String },
    /// A number that is NaN or infinite.
    #[error("parameter '{id}' is {text}, not a finite number")]
    NotFinite { id: String, text: String },
    /// A number outside the parameter's range.
    #[error("parameter '{id}' is {text}, outside its range {lo} to {hi}")]
    OutOfRange {
        id: String,
        text: String,
        lo: f32,
        hi: f32,
    },
}

/// Apply a preset's JSON to `params`, or say why it cannot be used (then nothing changes).
pub fn apply(bytes: &[u8], params: &DyeflowParams) -> Result<PresetReport, PresetError> {
    // Editors on Windows like to start UTF-8 files with a byte order mark.
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let (mut state, texts) = parse(bytes)?;
    let mut report = PresetReport::default();
    // A preset that says which layout it has must say it readably (a project the plugin
    // loads cannot be refused; `migrate_state` reads such a one as the first layout).
    let version = state_version(&state).map_err(PresetError::BadStateVersion)?;
    report.newer = (version > STATE_VERSION).then_some(version);
    // Settings are checked as strictly as parameters: a value out of range is refused (the
    // plugin's own state loading snaps them instead, so a damaged project still opens).
    let mut patch = None;
    if let Some(json) = state.fields.get(SETTINGS_KEY) {
        report.unknown.extend(check_settings(json)?);
        report.settings = true;
        patch = Some(SettingsPatch::parse(json));
    }
    let mut obstacles = None;
    if let Some(json) = state.fields.get(OBSTACLES_KEY) {
        let (checked, unknown) = check_obstacles(json)?;
        report.unknown.extend(unknown);
        report.obstacles = true;
        // Written back as the plugin writes it (a layout named in any case reads), so the
        // migration below sees what was checked.
        let canonical = serde_json::to_string(&checked).expect("plain struct serialises");
        state.fields.insert(OBSTACLES_KEY.to_owned(), canonical);
        obstacles = Some(checked);
    }
    let modulation = match state.fields.get(MODULATION_KEY) {
        Some(json) => {
            // What does not read is refused; what reads is brought within bounds, noted.
            if let Some(why) = crate::params::modulation::unreadable_part(json) {
                return Err(PresetError::BadModulation(why));
            }
            serde_json::from_str::<Modulation>(json)
                .map_err(|e| PresetError::BadModulation(e.to_string()))?;
            let (checked, notes) = Modulation::read(json);
            report.modulation_notes = notes;
            Some(checked)
        }
        None => None,
    };
    migrate_state(&mut state);
    // As migrated: an older preset's drawing is redrawn as it showed (state version 10).
    if let Some(o) = &mut obstacles
        && let Some(migrated) = state
            .fields
            .get(OBSTACLES_KEY)
            .and_then(|json| serde_json::from_str::<ObstacleSettings>(json).ok())
    {
        *o = migrated;
    }
    let map: std::collections::HashMap<String, ParamPtr> = params
        .param_map()
        .into_iter()
        .map(|(id, ptr, _)| (id, ptr))
        .collect();
    // Check everything first, so a bad preset changes nothing.
    let mut changes = Vec::with_capacity(state.params.len());
    for (id, value) in &state.params {
        let Some(&ptr) = map.get(id) else {
            report.unknown.push(id.clone());
            continue;
        };
        let text = texts.get(id).map_or("?", String::as_str);
        changes.push((ptr, normalized(id, ptr, value, text)?));
    }
    for (ptr, normalized) in changes {
        // SAFETY: the pointers come from `params`, which outlives this call.
        unsafe { ptr._internal_set_normalized_value(normalized) };
    }
    if let Some(patch) = &patch {
        params.set_settings(patch.over(&params.settings()));
    }
    if let Some(obstacles) = obstacles {
        params.obstacles.set(obstacles);
    }
    if let Some(m) = &modulation {
        let mut now = params.modulation.write();
        *now = m.clone().loaded_over(&now);
    }
    report.modulation = modulation.is_some();
    report.patch = patch;
    Ok(report)
}

/// What loading a preset as a whole sets: every parameter (by id, normalized), those it does
/// not name at their defaults, and the settings if it carries any.
pub struct Resolved {
    /// Every parameter's id and normalized value, in the order of `param_map`.
    pub values: Vec<(String, f32)>,
    /// The settings the preset names, if it names any (laid over the settings of the moment).
    pub settings: Option<SettingsPatch>,
    /// The preset's obstacles, if it carries any.
    pub obstacles: Option<ObstacleSettings>,
    /// The preset's modulation (none if it carries none: routes move parameters, and the
    /// parameters a preset does not name go to their defaults too).
    pub modulation: Modulation,
    /// What else loading it found.
    pub report: PresetReport,
}

/// Read a preset as a whole (see [`Resolved`]), or say why it cannot be used.
pub fn resolve(bytes: &[u8]) -> Result<Resolved, PresetError> {
    let scratch = DyeflowParams::default();
    let report = apply(bytes, &scratch)?;
    let values = scratch
        .param_map()
        .into_iter()
        // SAFETY: the pointers come from `scratch`, alive for this closure.
        .map(|(id, ptr, _)| (id, unsafe { ptr.unmodulated_normalized_value() }))
        .collect();
    Ok(Resolved {
        values,
        settings: report.patch.clone(),
        obstacles: report.obstacles.then(|| scratch.obstacles.get().0),
        modulation: scratch.modulation.read().clone(),
        report,
    })
}

/// Load a preset as a whole into `params`: the values it names, defaults for every other
/// parameter, its modulation (no routes if it carries none; the learned CCs stay unless it
/// learned some), and its settings and obstacles if it
/// carries any (else they stay). Nothing
/// changes if it cannot be used. (The editor does the same through the host's gestures.)
pub fn load(bytes: &[u8], params: &DyeflowParams) -> Result<PresetReport, PresetError> {
    let resolved = resolve(bytes)?;
    let map: std::collections::HashMap<String, ParamPtr> = params
        .param_map()
        .into_iter()
        .map(|(id, ptr, _)| (id, ptr))
        .collect();
    for (id, normalized) in &resolved.values {
        if let Some(ptr) = map.get(id) {
            // SAFETY: the pointers come from `params`, which outlives this call.
            unsafe { ptr._internal_set_normalized_value(*normalized) };
        }
    }
    if let Some(patch) = resolved.settings {
        params.set_settings(patch.over(&params.settings()));
    }
    if let Some(obstacles) = resolved.obstacles {
        params.obstacles.set(obstacles);
    }
    let mut now = params.modulation.write();
    *now = resolved.modulation.loaded_over(&now);
    drop(now);
    Ok(resolved.report)
}

/// The current parameter values, settings and obstacles as a preset, in the plugin's own
/// state format (what [`apply`] reads back).
pub fn to_json(params: &DyeflowParams) -> String {
    let mut values = std::collections::BTreeMap::new();
    for (id, ptr, _) in params.param_map() {
        // SAFETY: the pointers come from `params`, alive for this call.
        let value = unsafe {
            match ptr {
                ParamPtr::FloatParam(_) => ParamValue::F32(ptr.unmodulated_plain_value()),
                ParamPtr::IntParam(_) => ParamValue::I32(ptr.unmodulated_plain_value() as i32),
                ParamPtr::BoolParam(_) => ParamValue::Bool(ptr.unmodulated_plain_value() > 0.5),
                ParamPtr::EnumParam(p) => match (*p).unmodulated_plain_id() {
                    Some(id) => ParamValue::String(id.to_owned()),
                    None => ParamValue::I32(ptr.unmodulated_plain_value() as i32),
                },
            }
        };
        values.insert(id, value);
    }
    let mut fields = std::collections::BTreeMap::new();
    fields.insert(
        SETTINGS_KEY.to_owned(),
        serde_json::to_string(&params.settings()).unwrap_or_default(),
    );
    fields.insert(
        OBSTACLES_KEY.to_owned(),
        serde_json::to_string(&params.obstacles.get().0).unwrap_or_default(),
    );
    fields.insert(
        MODULATION_KEY.to_owned(),
        serde_json::to_string(&*params.modulation.read()).unwrap_or_default(),
    );
    // The layout it is written in, as a project is: read back, no migration of an older
    // layout applies to it (without it, it read as version 1, and a drawing of another shape
    // than its grid was redrawn stretched).
    fields.insert(
        crate::params::STATE_VERSION_KEY.to_owned(),
        STATE_VERSION.to_string(),
    );
    let state = PluginState {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        params: values,
        fields,
    };
    serde_json::to_string_pretty(&state).unwrap_or_default()
}

/// Where the editor's "Save preset" button puts presets: `presets` in the user's Dyeflow
/// folder ([`crate::folders`]: `~/Dyeflow/presets/` on Linux, `Documents\Dyeflow\presets` on
/// Windows, `~/Documents/Dyeflow/presets` on macOS).
pub fn preset_dir() -> Option<std::path::PathBuf> {
    crate::folders::presets()
}

/// Save the current values as a new preset in [`preset_dir`]; its path.
pub fn save_new(params: &DyeflowParams) -> std::io::Result<std::path::PathBuf> {
    let dir = preset_dir().ok_or_else(|| std::io::Error::other("no home directory"))?;
    std::fs::create_dir_all(&dir)?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let path = dir.join(format!("dyeflow-{stamp}.json"));
    std::fs::write(&path, to_json(params))?;
    Ok(path)
}

/// Check a preset's settings (JSON text, or an inline object as text): every field known and
/// of an allowed value. Returns the fields this Dyeflow does not know, as `settings.name`.
fn check_settings(json: &str) -> Result<Vec<String>, PresetError> {
    use crate::params::{DYE_SCALES, SIM_RATES_HZ, SIM_RESOLUTIONS_CELLS};
    use serde_json::Value;
    let Ok(Value::Object(fields)) = serde_json::from_str::<Value>(json) else {
        return Err(PresetError::SettingsNotAnObject(short(json)));
    };
    let mut unknown = Vec::new();
    for (name, value) in &fields {
        let bad = |allowed: String| PresetError::BadSetting {
            name: name.clone(),
            value: short(&value.to_string()),
            allowed,
        };
        let one_of_numbers = |allowed: &[u32]| -> Result<(), PresetError> {
            match value.as_u64() {
                Some(n) if allowed.iter().any(|&a| u64::from(a) == n) => Ok(()),
                _ => Err(bad(allowed
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", "))),
            }
        };
        let one_of_names = |allowed: &[String]| -> Result<(), PresetError> {
            match value.as_str() {
                Some(s) if allowed.iter().any(|a| a == s) => Ok(()),
                _ => Err(bad(allowed.join(", "))),
            }
        };
        match name.as_str() {
            "sim_resolution" => one_of_numbers(&SIM_RESOLUTIONS_CELLS)?,
            "dye_scale" => one_of_numbers(&DYE_SCALES)?,
            "sim_rate_hz" => one_of_numbers(&SIM_RATES_HZ)?,
            "aspect" => one_of_names(&names_of(&Aspect::ALL))?,
            "backend" => one_of_names(&names_of(&BackendChoice::ALL))?,
            "fluid" => one_of_names(&names_of(&FluidChoice::ALL))?,
            _ => unknown.push(format!("settings.{name}")),
        }
    }
    Ok(unknown)
}

/// The names `all` serialise to (a settings enum's values as presets and projects write them).
fn names_of<T: serde::Serialize>(all: &[T]) -> Vec<String> {
    all.iter()
        .filter_map(|v| serde_json::to_value(v).ok()?.as_str().map(str::to_owned))
        .collect()
}

/// The settings a preset names, and only those: loading it lays them over the settings of the
/// moment, so a preset that names only the fluid leaves the grid, the canvas and the solver as
/// they were (one saved by the editor names them all).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SettingsPatch(serde_json::Map<String, serde_json::Value>);

impl SettingsPatch {
    /// The fields of a preset's settings (JSON text of an object; checked before).
    fn parse(json: &str) -> Self {
        let value: serde_json::Value = serde_json::from_str(json).unwrap_or_default();
        // An inline object written as text arrives as a JSON string of the object.
        let value = match value {
            serde_json::Value::String(text) => serde_json::from_str(&text).unwrap_or_default(),
            other => other,
        };
        Self(value.as_object().cloned().unwrap_or_default())
    }

    /// `base` with the named fields replaced (sanitised; `base` if they do not fit).
    pub fn over(&self, base: &Settings) -> Settings {
        let mut value = serde_json::to_value(base).expect("plain struct serialises");
        if let Some(fields) = value.as_object_mut() {
            for (name, v) in &self.0 {
                fields.insert(name.clone(), v.clone());
            }
        }
        serde_json::from_value::<Settings>(value)
            .map(|s| s.sanitized())
            .unwrap_or_else(|_| base.clone())
    }

    /// The fields it names.
    pub fn names(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}

/// Check a preset's obstacles (JSON text, or an inline object as text): a known layout and a
/// mask that reads (or none). Returns them, and the fields this Dyeflow does not know, as
/// `obstacles.name`.
fn check_obstacles(json: &str) -> Result<(ObstacleSettings, Vec<String>), PresetError> {
    use serde_json::Value;
    let Ok(Value::Object(fields)) = serde_json::from_str::<Value>(json) else {
        return Err(PresetError::ObstaclesNotAnObject(short(json)));
    };
    let mut out = ObstacleSettings::default();
    let mut unknown = Vec::new();
    for (name, value) in &fields {
        match name.as_str() {
            "layout" => {
                out.layout = value.as_str().and_then(Layout::from_id).ok_or_else(|| {
                    PresetError::BadSetting {
                        name: "obstacles.layout".into(),
                        value: short(&value.to_string()),
                        allowed: Layout::ALL.map(Layout::id).join(", "),
                    }
                })?;
            }
            "mask" => {
                let text = value
                    .as_str()
                    .ok_or_else(|| PresetError::BadObstacleMask(short(&value.to_string())))?;
                if !text.trim().is_empty() {
                    Mask::decode(text).map_err(|e| PresetError::BadObstacleMask(e.to_string()))?;
                }
                out.mask = text.to_owned();
            }
            _ => unknown.push(format!("obstacles.{name}")),
        }
    }
    Ok((out, unknown))
}

/// A value's text for a message, cut short if long.
fn short(text: &str) -> String {
    if text.chars().count() <= 40 {
        text.to_owned()
    } else {
        format!("{}…", text.chars().take(40).collect::<String>())
    }
}

/// Each parameter's value as written in the preset, for messages.
type ValueTexts = std::collections::HashMap<String, String>;

/// The plugin's state from JSON: exactly what the plugin saves (`"visc": {"f32": 120.0}`), or
/// the same with plain values (`"visc": 120.0`, `"mapping": "circle"`), which is easier to
/// write by hand. Also each parameter's value as written.
fn parse(bytes: &[u8]) -> Result<(PluginState, ValueTexts), PresetError> {
    use serde_json::Value;
    let root: Value = serde_json::from_slice(bytes)
        .map_err(|e| PresetError::NotAPreset(format!("invalid JSON: {e}")))?;
    let Some(obj) = root.as_object() else {
        let why = "expected a JSON object with \"params\"";
        return Err(PresetError::NotAPreset(why.into()));
    };
    let Some(entries) = obj.get("params").and_then(Value::as_object) else {
        return Err(PresetError::NotAPreset("no \"params\" object".into()));
    };
    let mut params = std::collections::BTreeMap::new();
    let mut texts = ValueTexts::new();
    for (id, v) in entries {
        let value = match v {
            Value::Bool(b) => ParamValue::Bool(*b),
            Value::String(s) => ParamValue::String(s.clone()),
            // Integers past i32 are out of every parameter's range: kept as floats, so the
            // range check refuses them (quoting the text as written, not a clamped number).
            Value::Number(n) => match n.as_i64().and_then(|i| i32::try_from(i).ok()) {
                Some(i) => ParamValue::I32(i),
                None => ParamValue::F32(n.as_f64().unwrap_or(f64::NAN) as f32),
            },
            tagged => serde_json::from_value::<ParamValue>(tagged.clone())
                .map_err(|_| PresetError::WrongType { id: id.clone() })?,
        };
        let text = match v {
            Value::Object(o) if o.len() == 1 => {
                o.values().next().map_or_else(String::new, Value::to_string)
            }
            other => other.to_string(),
        };
        texts.insert(id.clone(), short(&text));
        params.insert(id.clone(), value);
    }
    let mut fields = std::collections::BTreeMap::new();
    if let Some(f) = obj.get("fields").and_then(Value::as_object) {
        for (k, v) in f {
            // Fields are JSON text in the plugin's state; accept them inline too.
            let text = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
            fields.insert(k.clone(), text);
        }
    }
    let version = obj
        .get("version")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    Ok((
        PluginState {
            version,
            params,
            fields,
        },
        texts,
    ))
}

/// The normalized value a preset entry sets (written as `text`), or why it cannot.
fn normalized(id: &str, ptr: ParamPtr, value: &ParamValue, text: &str) -> Result<f32, PresetError> {
    let plain = match (ptr, value) {
        (ParamPtr::FloatParam(_), ParamValue::F32(v)) => *v,
        (ParamPtr::IntParam(_) | ParamPtr::EnumParam(_), ParamValue::I32(v)) => *v as f32,
        (ParamPtr::FloatParam(_), ParamValue::I32(v)) => *v as f32,
        (ParamPtr::IntParam(_), ParamValue::F32(v)) if v.fract() == 0.0 => *v,
        (ParamPtr::BoolParam(_), ParamValue::Bool(b)) => f32::from(u8::from(*b)),
        (ParamPtr::EnumParam(_), ParamValue::String(s)) => match enum_index(id, s) {
            Some(index) => index as f32,
            None => {
                return Err(PresetError::NoSuchChoice {
                    id: id.to_owned(),
                    choice: s.clone(),
                });
            }
        },
        _ => return Err(PresetError::WrongType { id: id.to_owned() }),
    };
    if !plain.is_finite() {
        // A number JSON holds but an f32 does not (1e308) is finite, only out of range.
        if text.parse::<f64>().is_ok_and(f64::is_finite) {
            // SAFETY: as below: previews only read the parameter's range.
            let (lo, hi) = unsafe { (ptr.preview_plain(0.0), ptr.preview_plain(1.0)) };
            return Err(PresetError::OutOfRange {
                id: id.to_owned(),
                text: text.to_owned(),
                lo,
                hi,
            });
        }
        return Err(PresetError::NotFinite {
            id: id.to_owned(),
            text: text.to_owned(),
        });
    }
    // SAFETY: `ptr` comes from the caller's `params` (its `param_map`), which outlives this call;
    // previews only read the parameter's range.
    let (n, back) = unsafe {
        let n = ptr.preview_normalized(plain);
        (n, ptr.preview_plain(n))
    };
    // Out of range: the parameter would clamp it; say so instead of rendering something else.
    let tolerance = 1e-4 * plain.abs().max(1.0);
    if (back - plain).abs() > tolerance {
        // SAFETY: as above.
        let (lo, hi) = unsafe { (ptr.preview_plain(0.0), ptr.preview_plain(1.0)) };
        return Err(PresetError::OutOfRange {
            id: id.to_owned(),
            text: text.to_owned(),
            lo,
            hi,
        });
    }
    Ok(n)
}

/// The index of the choice `choice` (its stable id, as the plugin saves it) of the enum
/// parameter `id`.
fn enum_index(id: &str, choice: &str) -> Option<usize> {
    let ids = match id {
        "mapping" => MappingMode::ids(),
        "colour" => ColorMode::ids(),
        "display" => ToneMode::ids(),
        "obst_look" => ObstacleStyle::ids(),
        "stream" => StreamlineMode::ids(),
        "liq_look" => LiquidStyle::ids(),
        _ => None,
    }?;
    ids.iter().position(|&c| c == choice)
}

#[cfg(test)]
mod tests;
