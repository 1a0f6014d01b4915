//! The control panel, over the right edge of the fluid: every parameter (each change wrapped in
//! the host's begin/set/end gesture, so automation records it), the mapping and colour modes,
//! the non-automatable settings, and a status line. F (or the button) hides it.

use super::EditorShared;
use super::input::Painter;
use super::view::FluidView;
use crate::params::{
    Aspect, BackendChoice, DYE_SCALES, DyeflowParams, SIM_RATES_HZ, SIM_RESOLUTIONS_CELLS,
};
use egui::{self, Align2, Color32, RichText};
use nice_plug::prelude::{BoolParam, Enum, EnumParam, IntParam, Param, ParamSetter};
use nice_plug_egui::widgets::ParamSlider;

/// Panel width in points.
const WIDTH: f32 = 330.0;
/// Slider width in points.
const SLIDER: f32 = 120.0;

/// The panel's state.
#[derive(Default)]
pub struct Panel {
    /// What the last "Save preset" did, shown under the button.
    saved: Option<String>,
}

/// A bool parameter as a checkbox, with the host gesture.
fn toggle(ui: &mut egui::Ui, param: &BoolParam, setter: &ParamSetter) {
    let mut on = param.value();
    if ui.checkbox(&mut on, param.name()).changed() {
        setter.begin_set_parameter(param);
        setter.set_parameter(param, on);
        setter.end_set_parameter(param);
    }
}

/// An enum parameter as a combo box, with the host gesture.
fn choice<T: Enum + PartialEq + 'static>(
    ui: &mut egui::Ui,
    param: &EnumParam<T>,
    setter: &ParamSetter,
) {
    let current = param.value().to_index();
    let names = T::variants();
    egui::ComboBox::from_id_salt(param.name())
        .width(SLIDER)
        .selected_text(names.get(current).copied().unwrap_or("?"))
        .show_ui(ui, |ui| {
            for (i, name) in names.iter().enumerate() {
                if ui.selectable_label(i == current, *name).clicked() && i != current {
                    setter.begin_set_parameter(param);
                    setter.set_parameter(param, T::from_index(i));
                    setter.end_set_parameter(param);
                }
            }
        });
}

/// The drum channel as a labelled combo box row (Off, 1 to 16), with the host gesture.
fn drum_channel(ui: &mut egui::Ui, param: &IntParam, setter: &ParamSetter) {
    use crate::params::v2s_drum_channel;
    ui.label(param.name()).on_hover_text(
        "General MIDI drums: this channel's notes play as a kit (kick, snare, hats, toms), \
         not as pitches",
    );
    let current = param.value();
    egui::ComboBox::from_id_salt(param.name())
        .width(SLIDER)
        .selected_text(v2s_drum_channel(current))
        .show_ui(ui, |ui| {
            for c in 0..=16 {
                if ui
                    .selectable_label(c == current, v2s_drum_channel(c))
                    .clicked()
                    && c != current
                {
                    setter.begin_set_parameter(param);
                    setter.set_parameter(param, c);
                    setter.end_set_parameter(param);
                }
            }
        });
    ui.end_row();
}

/// A labelled slider row in a grid.
fn slider<P: Param>(ui: &mut egui::Ui, param: &P, setter: &ParamSetter) {
    ui.label(param.name());
    ui.add(ParamSlider::for_param(param, setter).with_width(SLIDER));
    ui.end_row();
}

fn section(ui: &mut egui::Ui, title: &str, open: bool, add: impl FnOnce(&mut egui::Ui)) {
    egui::CollapsingHeader::new(RichText::new(title).strong())
        .default_open(open)
        .show(ui, |ui| {
            egui::Grid::new(title)
                .num_columns(2)
                .spacing([8.0, 4.0])
                .show(ui, add);
        });
}

/// A settings combo box over `options`, written back to the plugin's settings on change.
fn setting<T: Copy + PartialEq>(
    ui: &mut egui::Ui,
    label: &str,
    current: T,
    options: &[(T, String)],
) -> Option<T> {
    ui.label(label);
    let mut picked = None;
    let text = options
        .iter()
        .find(|(v, _)| *v == current)
        .map_or("?", |(_, t)| t.as_str());
    egui::ComboBox::from_id_salt(label)
        .width(SLIDER)
        .selected_text(text)
        .show_ui(ui, |ui| {
            for (v, t) in options {
                if ui.selectable_label(*v == current, t.as_str()).clicked() && *v != current {
                    picked = Some(*v);
                }
            }
        });
    ui.end_row();
    picked
}

fn settings_section(ui: &mut egui::Ui, params: &DyeflowParams) {
    let mut s = params.settings();
    let before = s.clone();
    let resolutions: Vec<(u32, String)> = SIM_RESOLUTIONS_CELLS
        .iter()
        .map(|&r| (r, format!("{r} cells tall")))
        .collect();
    let scales: Vec<(u32, String)> = DYE_SCALES
        .iter()
        .map(|&d| {
            (
                d,
                if d == 1 {
                    "same".into()
                } else {
                    format!("{d}x finer")
                },
            )
        })
        .collect();
    let aspects = [
        (Aspect::Wide, "16:9".to_owned()),
        (Aspect::FourThree, "4:3".into()),
        (Aspect::Square, "1:1".into()),
        (Aspect::Portrait, "9:16".into()),
        (Aspect::UltraWide, "21:9".into()),
    ];
    let backends = [
        (BackendChoice::Auto, "Auto".to_owned()),
        (BackendChoice::Gpu, "GPU".into()),
        (BackendChoice::Cpu, "CPU".into()),
    ];
    let rates: Vec<(u32, String)> = SIM_RATES_HZ
        .iter()
        .map(|&r| (r, format!("{r} Hz")))
        .collect();
    egui::CollapsingHeader::new(RichText::new("Settings").strong())
        .default_open(false)
        .show(ui, |ui| {
            egui::Grid::new("settings")
                .num_columns(2)
                .spacing([8.0, 4.0])
                .show(ui, |ui| {
                    if let Some(v) = setting(ui, "Resolution", s.sim_resolution, &resolutions) {
                        s.sim_resolution = v;
                    }
                    if let Some(v) = setting(ui, "Dye detail", s.dye_scale, &scales) {
                        s.dye_scale = v;
                    }
                    if let Some(v) = setting(ui, "Canvas", s.aspect, &aspects) {
                        s.aspect = v;
                    }
                    if let Some(v) = setting(ui, "Solver", s.backend, &backends) {
                        s.backend = v;
                    }
                    if let Some(v) = setting(ui, "Rate", s.sim_rate_hz, &rates) {
                        s.sim_rate_hz = v;
                    }
                });
        });
    if s != before {
        params.set_settings(s);
    }
}

/// The status line: backend and device, step time, display rate, event traffic.
pub fn status_text(shared: &EditorShared, view: &FluidView) -> Vec<String> {
    let Some(st) = shared.engine.status() else {
        return vec!["Simulation not started".into()];
    };
    if st.backend.is_empty() {
        return vec![match &st.fallback {
            // The solver could not start (its threads were refused); it retries.
            Some(why) => format!("Not running: {why}"),
            None => "Starting the simulation...".into(),
        }];
    }
    let work = if st.resting {
        "at rest, no steps".to_owned()
    } else {
        format!("{:.2} ms/step", st.ms_per_step)
    };
    let mut lines = vec![
        format!("{} · {}", st.backend.to_uppercase(), st.device),
        format!(
            "{}x{} grid, dye {}x{} · {work}",
            st.grid.0, st.grid.1, st.dye_grid.0, st.dye_grid.1
        ),
        format!(
            "{:.0} fps · {:.0} events/s · {} dropped{}",
            view.fps(),
            st.events_per_s,
            st.dropped_events,
            if st.paused { " · PAUSED (P)" } else { "" }
        ),
    ];
    if let Some(why) = &st.fallback {
        lines.push(format!("GPU unavailable: {why}"));
    }
    lines
}

impl Panel {
    /// Draw the panel (or, when hidden, the button that brings it back).
    pub fn show(
        &mut self,
        ui: &mut egui::Ui,
        shared: &EditorShared,
        setter: &ParamSetter,
        view: &FluidView,
        painter: &Painter,
    ) {
        let ctx = ui.ctx().clone();
        if shared.engine.paused() {
            // Visible with the panel hidden too: a frozen picture should say why.
            egui::Area::new(egui::Id::unique("dyeflow-paused"))
                .anchor(Align2::LEFT_TOP, [8.0, 8.0])
                .order(egui::Order::Foreground)
                .interactable(false)
                .show(&ctx, |ui| {
                    egui::Frame::new()
                        .fill(Color32::from_black_alpha(190))
                        .corner_radius(4)
                        .inner_margin(4)
                        .show(ui, |ui| ui.label(RichText::new("Paused (P)").strong()));
                });
        }
        let mut editor = shared.params.editor_settings();
        if !editor.panel_open {
            egui::Area::new(egui::Id::unique("dyeflow-panel-button"))
                .anchor(Align2::RIGHT_TOP, [-8.0, 8.0])
                .order(egui::Order::Foreground)
                .show(&ctx, |ui| {
                    if ui.button("Controls (F)").clicked() {
                        editor.panel_open = true;
                        shared.params.set_editor_settings(editor.clone());
                    }
                });
            return;
        }
        let height = ctx.content_rect().height() - 16.0;
        egui::Area::new(egui::Id::unique("dyeflow-panel"))
            .anchor(Align2::RIGHT_TOP, [-8.0, 8.0])
            .order(egui::Order::Foreground)
            .default_height(height)
            .show(&ctx, |ui| {
                // An area otherwise keeps the height it had (400 points at first), so the panel
                // would not grow with the window.
                ui.set_max_height(height);
                egui::Frame::new()
                    .fill(Color32::from_black_alpha(190))
                    .corner_radius(6)
                    .inner_margin(8)
                    .show(ui, |ui| {
                        ui.set_width(WIDTH);
                        ui.horizontal(|ui| {
                            ui.label(RichText::new("Dyeflow").strong().size(16.0));
                            ui.with_layout(
                                egui::Layout::right_to_left(egui::Align::Center),
                                |ui| {
                                    if ui.small_button("Hide (F)").clicked() {
                                        editor.panel_open = false;
                                        shared.params.set_editor_settings(editor.clone());
                                    }
                                },
                            );
                        });
                        for line in status_text(shared, view) {
                            ui.label(RichText::new(line).small().color(Color32::LIGHT_GRAY));
                        }
                        ui.separator();
                        egui::ScrollArea::vertical()
                            .max_height((height - 124.0).max(60.0))
                            .show(ui, |ui| self.controls(ui, shared, setter, painter));
                    });
            });
    }

    fn controls(
        &mut self,
        ui: &mut egui::Ui,
        shared: &EditorShared,
        setter: &ParamSetter,
        painter: &Painter,
    ) {
        let p = &shared.params;
        toggle(ui, &p.bypass, setter);
        section(ui, "Fluid", true, |ui| {
            slider(ui, &p.viscosity, setter);
            slider(ui, &p.dye_diffusion, setter);
            slider(ui, &p.velocity_dissipation, setter);
            slider(ui, &p.dye_dissipation, setter);
            slider(ui, &p.vorticity, setter);
            slider(ui, &p.pressure_iterations, setter);
            slider(ui, &p.speed, setter);
        });
        section(ui, "Notes", true, |ui| {
            ui.label(p.mapping_mode.name());
            choice(ui, &p.mapping_mode, setter);
            ui.end_row();
            drum_channel(ui, &p.drum_channel, setter);
            slider(ui, &p.splat_radius, setter);
            slider(ui, &p.splat_force, setter);
            slider(ui, &p.dye_amount, setter);
            ui.label("");
            toggle(ui, &p.beat_pulse, setter);
            ui.end_row();
        });
        section(ui, "Audio", false, |ui| {
            slider(ui, &p.audio_reactivity, setter);
            slider(ui, &p.envelope_attack, setter);
            slider(ui, &p.envelope_release, setter);
        });
        section(ui, "Look", true, |ui| {
            ui.label(p.color_mode.name());
            choice(ui, &p.color_mode, setter);
            ui.end_row();
            ui.label(p.tone_mode.name());
            choice(ui, &p.tone_mode, setter);
            ui.end_row();
            slider(ui, &p.brightness, setter);
            slider(ui, &p.saturation, setter);
            slider(ui, &p.hue_shift, setter);
            // The filmic tone's effects.
            let e = &p.effects;
            slider(ui, &e.bloom, setter);
            slider(ui, &e.bloom_threshold, setter);
            slider(ui, &e.bloom_knee, setter);
            slider(ui, &e.bloom_radius, setter);
            slider(ui, &e.rays, setter);
            slider(ui, &e.shading, setter);
            slider(ui, &e.light_angle, setter);
            slider(ui, &e.palette, setter);
            slider(ui, &e.bg_hue, setter);
            slider(ui, &e.bg_saturation, setter);
            slider(ui, &e.bg_brightness, setter);
        });
        settings_section(ui, p);
        ui.horizontal(|ui| {
            if ui
                .button("Save preset")
                .on_hover_text("Save these settings for `dyeflow render --preset FILE`")
                .clicked()
            {
                self.saved = Some(match crate::preset::save_new(p) {
                    Ok(path) => format!("Saved {}", path.display()),
                    Err(e) => format!("Could not save the preset: {e}"),
                });
            }
        });
        if let Some(msg) = &self.saved {
            ui.label(RichText::new(msg).small().color(Color32::LIGHT_GRAY));
        }
        egui::CollapsingHeader::new(RichText::new("Mouse and keys").strong())
            .default_open(false)
            .show(ui, |ui| {
                let (r, g, b) = {
                    let c = crate::fluid::hsv_to_rgb(painter.hue(), 0.9, 1.0);
                    (c[0], c[1], c[2])
                };
                ui.horizontal(|ui| {
                    ui.label("Left-drag: paint dye and push (next colour:");
                    let (rect, _) =
                        ui.allocate_exact_size(egui::vec2(12.0, 12.0), egui::Sense::hover());
                    ui.painter()
                        .rect_filled(rect, 2.0, egui::Rgba::from_rgb(r, g, b));
                    ui.label(")");
                });
                ui.label("Right-drag: pull the fluid; Shift + right-drag: push it away");
                ui.label("Wheel: brush size");
                ui.label("P pause · Space random splats · R reset · F hide this panel");
            });
    }
}
