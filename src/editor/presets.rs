//! The panel's preset menu: the factory presets, the user's own (the `.json` files in
//! `preset::preset_dir`, newest first), and saving the current values as a new one.
//!
//! Loading goes through the host's gestures, one begin/set/end per parameter that changes, as
//! if the user had moved each knob: the host records it (and can undo it), and the values it
//! sends back are the ones shown. A preset is a whole look: the knobs it does not name go
//! back to their defaults ([`crate::preset::resolve`]). Bypass is left alone (a look does not
//! switch the plugin off), and so are the settings and the obstacles, unless a user preset
//! carries them.

use super::EditorShared;
use crate::preset::{self, FACTORY_PRESETS, FactoryPreset};
use egui::{self, RichText};
use nice_plug::params::internals::ParamPtr;
use nice_plug::prelude::{Param, ParamSetter, Params};
use std::path::PathBuf;

/// User presets listed in the menu, newest first.
const MAX_LISTED: usize = 20;

/// The preset menu's state: what the last action did, for the panel to show.
#[derive(Default)]
pub struct PresetMenu {
    /// One line: "Loaded Neon", "Saved ...", or why not.
    pub message: Option<String>,
}

/// The `.json` files in the preset folder, newest first (at most [`MAX_LISTED`]).
fn user_presets() -> Vec<PathBuf> {
    let Some(dir) = preset::preset_dir() else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("json"))
        })
        .map(|p| {
            let modified = std::fs::metadata(&p)
                .and_then(|m| m.modified())
                .unwrap_or(std::time::UNIX_EPOCH);
            (modified, p)
        })
        .collect();
    files.sort_by_key(|(modified, _)| std::cmp::Reverse(*modified));
    files.into_iter().take(MAX_LISTED).map(|(_, p)| p).collect()
}

/// Set every parameter to `bytes`'s preset through the host's gestures (bypass excepted);
/// the number of parameters changed and a note worth showing (a preset made by a newer
/// Dyeflow), or why the preset cannot be used (then nothing changes).
pub fn load(
    bytes: &[u8],
    shared: &EditorShared,
    setter: &ParamSetter,
) -> Result<(usize, Option<String>), String> {
    let resolved = preset::resolve(bytes).map_err(|e| e.to_string())?;
    let params = &shared.params;
    let current: std::collections::HashMap<String, ParamPtr> = params
        .param_map()
        .into_iter()
        .map(|(id, ptr, _)| (id, ptr))
        .collect();
    let mut changed = 0;
    for (id, normalized) in &resolved.values {
        let Some(&ptr) = current.get(id) else {
            continue;
        };
        if ptr == params.bypass.as_ptr() {
            continue;
        }
        // SAFETY: the pointers come from the plugin's parameters, which outlive the editor;
        // the setter is the host's GUI context, used on the GUI thread.
        unsafe {
            if (ptr.unmodulated_normalized_value() - normalized).abs() < 1e-6 {
                continue;
            }
            setter.raw_context.raw_begin_set_parameter(ptr);
            setter
                .raw_context
                .raw_set_parameter_normalized(ptr, *normalized);
            setter.raw_context.raw_end_set_parameter(ptr);
        }
        changed += 1;
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
    Ok((changed, resolved.report.version_note()))
}

/// The menu's line after loading the preset `name`.
fn loaded(name: &str, result: Result<(usize, Option<String>), String>) -> String {
    match result {
        Ok((_, None)) => format!("Loaded {name}"),
        Ok((_, Some(note))) => format!("Loaded {name}, {note}"),
        Err(why) => format!("{name}: {why}"),
    }
}

impl PresetMenu {
    /// The "Presets" menu button.
    pub fn button(&mut self, ui: &mut egui::Ui, shared: &EditorShared, setter: &ParamSetter) {
        ui.menu_button("Presets", |ui| {
            ui.label(RichText::new("Factory").strong());
            for factory in &FACTORY_PRESETS {
                if ui
                    .button(factory.name)
                    .on_hover_text(factory.description)
                    .clicked()
                {
                    self.load_factory(factory, shared, setter);
                    ui.close();
                }
            }
            ui.separator();
            let files = user_presets();
            if !files.is_empty() {
                ui.label(RichText::new("Yours").strong());
                for path in files {
                    let name = path
                        .file_stem()
                        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
                    if ui
                        .button(&name)
                        .on_hover_text(path.display().to_string())
                        .clicked()
                    {
                        // Not `fs::read`: a FIFO named like a preset would block the editor.
                        self.message = Some(match preset::read_file(&path) {
                            Ok(bytes) => loaded(&name, load(&bytes, shared, setter)),
                            Err(e) => format!("{name}: {e}"),
                        });
                        ui.close();
                    }
                }
                ui.separator();
            }
            if ui
                .button("Save current…")
                .on_hover_text(format!(
                    "Save these settings in {}, for this menu and for \
                     `dyeflow render --preset FILE`",
                    preset::preset_dir()
                        .map_or_else(|| "Dyeflow/presets".into(), |d| d.display().to_string())
                ))
                .clicked()
            {
                self.message = Some(match preset::save_new(&shared.params) {
                    Ok(path) => format!("Saved {}", path.display()),
                    Err(e) => format!("Could not save the preset: {e}"),
                });
                ui.close();
            }
        });
    }

    fn load_factory(
        &mut self,
        factory: &FactoryPreset,
        shared: &EditorShared,
        setter: &ParamSetter,
    ) {
        self.message = Some(loaded(
            factory.name,
            load(factory.json().as_bytes(), shared, setter),
        ));
    }
}
