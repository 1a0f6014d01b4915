//! The output window's part of the panel's settings: open or close the instance's output window (O does it
//! too), pick its monitor, fullscreen or a windowed size, and see how it runs.
//!
//! Every change goes into the project's output settings, and the window follows them
//! ([`EditorShared::follow_output`], once per editor frame).

use super::EditorShared;
use crate::output_window::{self, Monitor};
use egui::{Color32, RichText};
use std::time::{Duration, Instant};

/// How often the monitor list is read again (a monitor plugged in shows within this).
const MONITORS_REFRESH: Duration = Duration::from_secs(2);

/// The section's state: the monitors, read now and then (an X round trip is too slow for
/// every frame).
#[derive(Default)]
pub struct OutputControls {
    monitors: Vec<Monitor>,
    monitors_error: Option<String>,
    read_at: Option<Instant>,
}

/// Open or close the output window (the panel's button and the O key).
pub fn toggle(shared: &EditorShared) {
    let mut s = shared.params.output();
    s.open = !shared.output.is_open();
    shared.params.set_output(s);
    // A window that failed to open is tried again when asked again.
    shared.output.retry();
    shared.follow_output();
}

impl OutputControls {
    fn monitors(&mut self) -> &[Monitor] {
        if self.read_at.is_none_or(|t| t.elapsed() >= MONITORS_REFRESH) {
            self.read_at = Some(Instant::now());
            match output_window::monitors() {
                Ok(m) => {
                    self.monitors = m;
                    self.monitors_error = None;
                }
                Err(e) => self.monitors_error = Some(e),
            }
        }
        &self.monitors
    }

    /// The controls.
    pub fn show(&mut self, ui: &mut egui::Ui, shared: &EditorShared) {
        let open = shared.output.is_open();
        let status = shared.output.status();
        ui.label(RichText::new("Output window").strong());
        ui.horizontal(|ui| {
            let text = if open {
                "Close output window (O)"
            } else {
                "Open output window (O)"
            };
            if ui
                .button(text)
                .on_hover_text(
                    "The fluid alone in a borderless window, for a projector or a second \
                     screen. It stays open when the editor closes. In it: F11 or a double \
                     click toggles fullscreen, Esc leaves it.",
                )
                .clicked()
            {
                toggle(shared);
            }
        });
        let mut s = shared.params.output();
        let before = s.clone();
        let monitors = self.monitors().to_vec();
        let current = output_window::pick(&monitors, &s.placement.monitor).cloned();
        let describe = |m: &Monitor| {
            format!(
                "{} · {}x{} · {:.0} Hz{}",
                if m.name.is_empty() {
                    "monitor"
                } else {
                    &m.name
                },
                m.rect.width,
                m.rect.height,
                m.refresh_hz,
                if m.primary { " · primary" } else { "" }
            )
        };
        ui.horizontal(|ui| {
            ui.label("Monitor");
            egui::ComboBox::from_id_salt("dyeflow-output-monitor")
                .selected_text(current.as_ref().map_or("none found".into(), describe))
                .show_ui(ui, |ui| {
                    for m in &monitors {
                        let chosen = current.as_ref().is_some_and(|c| c.name == m.name);
                        if ui.selectable_label(chosen, describe(m)).clicked() {
                            s.placement.monitor = m.name.clone();
                        }
                    }
                });
        });
        ui.horizontal(|ui| {
            ui.checkbox(&mut s.placement.fullscreen, "Fullscreen");
            ui.add_enabled_ui(!s.placement.fullscreen, |ui| {
                ui.label("Size");
                let range = output_window::MIN_EDGE..=output_window::MAX_EDGE;
                ui.add(egui::DragValue::new(&mut s.placement.width).range(range.clone()));
                ui.label("x");
                ui.add(egui::DragValue::new(&mut s.placement.height).range(range));
            });
        });
        if s != before {
            shared.params.set_output(s);
            shared.follow_output();
        }
        if open {
            let place = status.monitor.as_ref().map_or(String::new(), |m| {
                format!(" on {}", if m.name.is_empty() { "?" } else { &m.name })
            });
            ui.label(format!(
                "Open{place} · {}x{} · {:.0} fps of {:.0} Hz",
                status.rect.width, status.rect.height, status.fps, status.refresh_hz
            ));
        }
        for e in status.error.iter().chain(self.monitors_error.iter()) {
            ui.label(RichText::new(e).color(Color32::from_rgb(255, 140, 120)));
        }
    }
}
