//! The control panel, over the right edge of the fluid: every parameter (each change wrapped in
//! the host's begin/set/end gesture, so automation records it), the mapping and colour modes,
//! the non-automatable settings, a status line and the preset menu. F (or the button) hides it.
//!
//! It fits any window from the smallest (320x200): it narrows to the window, and everything
//! under its title row scrolls. Every section's grid has the same two columns (labels, then
//! widgets of one width), so the sliders line up from section to section.

use super::EditorShared;
use super::input::{BrushMode, Painter};
use super::modulation::{self, ParamIndex};
use super::output_window::OutputControls;
use super::presets::PresetMenu;
use super::view::FluidView;
use crate::fluid::mask::Layout;
use crate::params::modulation::Modulation;
use crate::params::{
    Aspect, BRUSH_RADIUS_RANGE, BackendChoice, DYE_SCALES, FluidChoice, ObstacleSettings,
    SIM_RATES_HZ, SIM_RESOLUTIONS_CELLS,
};
use egui::{self, Align2, Color32, RichText};
use nice_plug::prelude::{BoolParam, Enum, EnumParam, IntParam, Param, ParamSetter};
use nice_plug_egui::widgets::ParamSlider;

/// Panel width in points, where the window has room.
const WIDTH: f32 = 380.0;
/// Room for a slider's value box ("10000 mm²/s") right of the slider, points.
const VALUE_BOX: f32 = 86.0;
/// The panel's distance from the window's edges, points.
const MARGIN: f32 = 8.0;
/// Inner margin of the panel's frame, points.
const PADDING: f32 = 8.0;
/// Room kept for the scroll bar, points.
const SCROLL_BAR: f32 = 14.0;
/// Gap between the label and widget columns, points.
const GAP: f32 = 8.0;
/// Height of the title row, points.
const TITLE: f32 = 26.0;
/// Width of the obstacles' Clear button, points.
const CLEAR_BUTTON: f32 = 52.0;

/// The two columns of every grid in the panel, in points.
#[derive(Clone, Copy, Debug)]
struct Cols {
    label: f32,
    widget: f32,
}

impl Cols {
    /// The columns for a panel `width` points wide.
    fn for_width(width: f32) -> Self {
        let inner = (width - 2.0 * PADDING - SCROLL_BAR - GAP).max(120.0);
        let label = (inner * 0.4).clamp(80.0, 140.0);
        Self {
            label,
            widget: inner - label,
        }
    }
}

/// The panel's state.
#[derive(Default)]
pub struct Panel {
    /// The preset menu (and what it last did).
    presets: PresetMenu,
    /// The output window section.
    output: OutputControls,
    /// Every parameter's id, name and knob (made at the first frame).
    index: Option<ParamIndex>,
}

/// The panel's width in a window `window_width` points wide.
pub fn panel_width(window_width: f32) -> f32 {
    WIDTH.min(window_width - 2.0 * MARGIN).max(120.0)
}

/// A label in the label column: its full width, cut short with "…" if longer.
fn label(ui: &mut egui::Ui, text: &str, cols: Cols) {
    ui.allocate_ui_with_layout(
        egui::vec2(cols.label, ui.spacing().interact_size.y),
        egui::Layout::left_to_right(egui::Align::Center),
        |ui| {
            ui.set_min_width(cols.label);
            ui.add(egui::Label::new(text).truncate());
        },
    );
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
    cols: Cols,
) {
    label(ui, param.name(), cols);
    let current = param.value().to_index();
    let names = T::variants();
    egui::ComboBox::from_id_salt(param.name())
        .width(cols.widget)
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
    ui.end_row();
}

/// A channel parameter (drums, pillars) as a labelled combo box row (Off, 1 to 16), with
/// the host gesture and `hover` as its tooltip.
fn channel(ui: &mut egui::Ui, param: &IntParam, setter: &ParamSetter, cols: Cols, hover: &str) {
    use crate::params::v2s_drum_channel;
    label(ui, param.name(), cols);
    let current = param.value();
    egui::ComboBox::from_id_salt(param.name())
        .width(cols.widget)
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
        })
        .response
        .on_hover_text(hover);
    ui.end_row();
}

/// What every slider row of a frame shares.
struct Cx<'a> {
    setter: &'a ParamSetter<'a>,
    cols: Cols,
    index: &'a ParamIndex,
    /// The saved modulation (as of this frame), and the parameter waiting to learn a CC.
    modulation: Modulation,
    learning: Option<String>,
    live: &'a crate::params::modulation::Live,
}

/// A labelled slider row in a grid. The label says what CC the control learned (or that it
/// waits for one); a right-click opens its menu (MIDI learn, forget, routes) rather than
/// setting it; a ring on the bar shows where a modulated control is now.
fn slider<P: Param>(ui: &mut egui::Ui, param: &P, cx: &Cx) {
    let entry = cx.index.of(param);
    let text = modulation::label_text(param.name(), entry, &cx.modulation, cx.learning.as_deref());
    label(ui, &text, cx.cols);
    let bar = (cx.cols.widget - VALUE_BOX).max(40.0);
    let key = egui::Id::unique(("dyeflow-slider", param as *const P as usize));
    let response = ui.add(ParamSlider::for_param(param, cx.setter).with_width(bar));
    if let (Some(pos), Some(e)) = (modulation::right_click(ui, key, response.rect), entry) {
        modulation::open_menu(ui.ctx(), &e.id, pos);
    }
    if let Some(v) = entry.and_then(|e| e.knob).and_then(|k| cx.live.now(k)) {
        // The bar's part of the slider (its value box is to the right).
        let bar_rect =
            egui::Rect::from_min_size(response.rect.min, egui::vec2(bar, response.rect.height()));
        modulation::ring(ui, bar_rect, v);
    }
    ui.end_row();
}

/// A collapsing section holding a two-column grid.
fn section(ui: &mut egui::Ui, title: &str, open: bool, add: impl FnOnce(&mut egui::Ui)) {
    section_then(ui, title, open, add, |_| {});
}

/// A collapsing section holding a two-column grid, then `after` laid out top to bottom under
/// it (text and rows that are not label-and-widget pairs).
fn section_then(
    ui: &mut egui::Ui,
    title: &str,
    open: bool,
    add: impl FnOnce(&mut egui::Ui),
    after: impl FnOnce(&mut egui::Ui),
) {
    egui::CollapsingHeader::new(RichText::new(title).strong())
        .default_open(open)
        .show(ui, |ui| {
            // NOTE: no indent, so every section's columns start at the same x.
            ui.spacing_mut().indent = 0.0;
            egui::Grid::new(title)
                .num_columns(2)
                .spacing([GAP, 4.0])
                .show(ui, add);
            after(ui);
        });
}

/// A settings combo box over `options`, written back to the plugin's settings on change.
fn setting<T: Copy + PartialEq>(
    ui: &mut egui::Ui,
    name: &str,
    current: T,
    options: &[(T, String)],
    cols: Cols,
) -> Option<T> {
    label(ui, name, cols);
    let mut picked = None;
    let text = options
        .iter()
        .find(|(v, _)| *v == current)
        .map_or("?", |(_, t)| t.as_str());
    egui::ComboBox::from_id_salt(name)
        .width(cols.widget)
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

/// The obstacles: the layout, the brush (what a left-drag does, and its size), Clear, how
/// they look, and the pillar channel.
fn obstacles_section(
    ui: &mut egui::Ui,
    shared: &EditorShared,
    setter: &ParamSetter,
    painter: &mut Painter,
    cols: Cols,
) {
    let p = &shared.params;
    let current = p.obstacles.get().0;
    let layouts: Vec<(Layout, &str)> = Layout::ALL.iter().map(|&l| (l, l.name())).collect();
    section(ui, "Obstacles", true, |ui| {
        label(ui, "Layout", cols);
        ui.horizontal(|ui| {
            let clear = CLEAR_BUTTON.min(cols.widget / 3.0);
            egui::ComboBox::from_id_salt("Layout")
                .width((cols.widget - clear - GAP).max(40.0))
                .selected_text(current.layout.name())
                .show_ui(ui, |ui| {
                    for &(l, name) in &layouts {
                        if ui.selectable_label(l == current.layout, name).clicked() {
                            // A layout replaces what was drawn (picking the same one again
                            // too: it is how to undo a drawing).
                            p.obstacles.set(ObstacleSettings::layout(l));
                        }
                    }
                });
            if ui
                .add(egui::Button::new("Clear").min_size(egui::vec2(clear, 0.0)))
                .on_hover_text("No obstacles: the layout and everything drawn go")
                .clicked()
            {
                p.obstacles.set(ObstacleSettings::default());
            }
        });
        ui.end_row();
        label(ui, "Brush", cols);
        ui.horizontal(|ui| {
            for mode in BrushMode::ALL {
                ui.selectable_value(&mut painter.mode, mode, mode.name())
                    .on_hover_text(match mode {
                        BrushMode::Off => "Left-drag paints dye",
                        BrushMode::Draw => "Left-drag draws walls",
                        BrushMode::Erase => "Left-drag erases walls",
                    });
            }
        });
        ui.end_row();
        label(ui, "Brush size", cols);
        let mut editor = p.editor_settings();
        let mut percent = editor.wall_radius * 100.0;
        let range = BRUSH_RADIUS_RANGE.0 * 100.0..=BRUSH_RADIUS_RANGE.1 * 100.0;
        ui.spacing_mut().slider_width = (cols.widget - VALUE_BOX).max(40.0);
        let slider = egui::Slider::new(&mut percent, range)
            .logarithmic(true)
            .suffix(" %")
            .max_decimals(1);
        if ui
            .add(slider)
            .on_hover_text("The obstacle brush's radius, in percent of the canvas height")
            .changed()
        {
            editor.wall_radius = percent / 100.0;
            p.set_editor_settings(editor);
        }
        ui.end_row();
        choice(ui, &p.obstacle_style, setter, cols);
        channel(
            ui,
            &p.pillar_channel,
            setter,
            cols,
            "This channel's notes raise pillars instead of painting: pitch places them on the \
             middle line (C2 left to C6 right), velocity sizes them, and each stands while its \
             key is down",
        );
    });
}

fn settings_section(
    ui: &mut egui::Ui,
    shared: &EditorShared,
    output: &mut OutputControls,
    cols: Cols,
) {
    let params = &*shared.params;
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
    let fluids = [
        (FluidChoice::Grid, "Grid".to_owned()),
        (FluidChoice::Particles, "Particles".into()),
        (FluidChoice::Liquid3d, "Liquid 3D".into()),
    ];
    let rates: Vec<(u32, String)> = SIM_RATES_HZ
        .iter()
        .map(|&r| (r, format!("{r} Hz")))
        .collect();
    let grid = |ui: &mut egui::Ui| {
        if let Some(v) = setting(ui, "Fluid", s.fluid, &fluids, cols) {
            s.fluid = v;
        }
        if let Some(v) = setting(ui, "Resolution", s.sim_resolution, &resolutions, cols) {
            s.sim_resolution = v;
        }
        if let Some(v) = setting(ui, "Dye detail", s.dye_scale, &scales, cols) {
            s.dye_scale = v;
        }
        if let Some(v) = setting(ui, "Canvas", s.aspect, &aspects, cols) {
            s.aspect = v;
        }
        if let Some(v) = setting(ui, "Solver", s.backend, &backends, cols) {
            s.backend = v;
        }
        if let Some(v) = setting(ui, "Rate", s.sim_rate_hz, &rates, cols) {
            s.sim_rate_hz = v;
        }
    };
    let ways_out = |ui: &mut egui::Ui| {
        ui.separator();
        output.show(ui, shared);
        ui.separator();
        capture_settings(ui, shared);
        ui.separator();
        osc_settings(ui, shared);
    };
    section_then(ui, "Settings", false, grid, ways_out);
    if s != before {
        params.set_settings(s);
    }
}

/// OSC in, in the settings: on or off, the port, and what the server took.
fn osc_settings(ui: &mut egui::Ui, shared: &EditorShared) {
    let params = &*shared.params;
    let mut osc = params.osc();
    let before = osc;
    ui.horizontal(|ui| {
        ui.checkbox(&mut osc.enabled, "OSC in, port").on_hover_text(
            "Listen for OSC on every network interface: /dyeflow/param/<id> <0..1> and \
                 /dyeflow/splat x y r g b dx dy",
        );
        ui.add(egui::DragValue::new(&mut osc.port).range(1024..=65535));
    });
    if osc != before {
        params.set_osc(osc);
    }
    if let Some(text) = shared.engine.status().and_then(|s| s.osc) {
        ui.label(format!("OSC {text}"));
    }
}

/// Bounce capture, in the settings: where the captures go, the last one, and the Record switch.
fn capture_settings(ui: &mut egui::Ui, shared: &EditorShared) {
    use std::sync::atomic::Ordering;
    let status = shared.capture.lock().clone();
    ui.label(RichText::new("Bounce capture").strong());
    ui.label(
        "An offline bounce in the host records everything that moves the fluid, and so \
         does playing with Record on. Turn it into a video with: dyeflow render --capture \
         FILE --audio BOUNCE.wav",
    );
    let mut record = shared.record.load(Ordering::Relaxed);
    if ui
        .checkbox(&mut record, "Record while playing")
        .on_hover_text("Capture what the host plays in real time (not saved with the project)")
        .changed()
    {
        shared.record.store(record, Ordering::Relaxed);
    }
    let name = |p: &std::path::Path| p.display().to_string();
    match &status.folder {
        Some(dir) => ui.label(format!("Folder: {}", name(dir))),
        None => ui.label("No folder: set DYEFLOW_CAPTURE_DIR"),
    };
    if let Some(now) = &status.recording {
        ui.label(RichText::new(format!("Recording: {}", name(now))).strong());
    } else if let Some(last) = &status.last {
        let mut text = format!("Last: {}", name(last));
        if status.dropped > 0 {
            text += &format!(" ({} records lost)", status.dropped);
        }
        if status.limited {
            text += " (cut at the size limit)";
        }
        ui.label(text);
    }
    if let Some(e) = &status.error {
        ui.colored_label(Color32::from_rgb(255, 140, 120), e);
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
        painter: &mut Painter,
    ) {
        let ctx = ui.ctx().clone();
        modulation::begin_frame(&ctx);
        if shared.engine.paused() {
            // Visible with the panel hidden too: a frozen picture should say why.
            egui::Area::new(egui::Id::unique("dyeflow-paused"))
                .anchor(Align2::LEFT_TOP, [MARGIN, MARGIN])
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
            modulation::close(&ctx, &shared.params);
            egui::Area::new(egui::Id::unique("dyeflow-panel-button"))
                .anchor(Align2::RIGHT_TOP, [-MARGIN, MARGIN])
                .order(egui::Order::Foreground)
                .show(&ctx, |ui| {
                    if ui.button("Controls (F)").clicked() {
                        editor.panel_open = true;
                        shared.params.set_editor_settings(editor.clone());
                    }
                });
            return;
        }
        let screen = ctx.content_rect();
        let height = screen.height() - 2.0 * MARGIN;
        let width = panel_width(screen.width());
        let cols = Cols::for_width(width);
        egui::Area::new(egui::Id::unique("dyeflow-panel"))
            .anchor(Align2::RIGHT_TOP, [-MARGIN, MARGIN])
            .order(egui::Order::Foreground)
            .default_height(height)
            .show(&ctx, |ui| {
                // An area otherwise keeps the height it had (400 points at first), so the panel
                // would not grow with the window.
                ui.set_max_height(height);
                egui::Frame::new()
                    .fill(Color32::from_black_alpha(200))
                    .corner_radius(6)
                    .inner_margin(PADDING)
                    .show(ui, |ui| {
                        ui.set_width(width - 2.0 * PADDING);
                        ui.horizontal(|ui| {
                            ui.label(RichText::new("Dyeflow").strong().size(16.0));
                            self.presets.button(ui, shared, setter);
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
                        // Everything else scrolls, so the last control is reachable in the
                        // smallest window.
                        egui::ScrollArea::vertical()
                            .max_height((height - 2.0 * PADDING - TITLE).max(40.0))
                            .show(ui, |ui| {
                                self.status(ui, shared, view);
                                ui.separator();
                                self.controls(ui, shared, setter, painter, cols);
                            });
                    });
            });
        if let Some(index) = &self.index {
            modulation::show_menu(&ctx, &shared.params, index);
        }
    }

    /// The status lines and what the preset menu last did, wrapped to the panel.
    fn status(&self, ui: &mut egui::Ui, shared: &EditorShared, view: &FluidView) {
        for line in status_text(shared, view) {
            ui.add(egui::Label::new(RichText::new(line).color(Color32::from_gray(205))).wrap());
        }
        if let Some(msg) = &self.presets.message {
            ui.add(egui::Label::new(RichText::new(msg).color(Color32::from_gray(235))).wrap());
        }
    }

    fn controls(
        &mut self,
        ui: &mut egui::Ui,
        shared: &EditorShared,
        setter: &ParamSetter,
        painter: &mut Painter,
        cols: Cols,
    ) {
        let p = &shared.params;
        let index = self.index.get_or_insert_with(|| ParamIndex::new(p));
        let cx = Cx {
            setter,
            cols,
            index,
            modulation: p.modulation.read().clone(),
            learning: p.modulation_live.learning(),
            live: &p.modulation_live,
        };
        toggle(ui, &p.bypass, setter);
        section(ui, "Fluid", true, |ui| {
            slider(ui, &p.viscosity, &cx);
            slider(ui, &p.dye_diffusion, &cx);
            slider(ui, &p.velocity_dissipation, &cx);
            slider(ui, &p.dye_dissipation, &cx);
            slider(ui, &p.vorticity, &cx);
            slider(ui, &p.pressure_iterations, &cx);
            slider(ui, &p.speed, &cx);
        });
        let liquid = p.settings().fluid.is_liquid();
        if liquid {
            // The particle fluid's own knobs, only while it is the fluid.
            section(ui, "Liquid", true, |ui| {
                let l = &p.liquid;
                slider(ui, &l.gravity, &cx);
                slider(ui, &l.tilt, &cx);
                slider(ui, &l.sway, &cx);
                slider(ui, &l.stiffness, &cx);
                slider(ui, &l.near, &cx);
                slider(ui, &l.viscosity, &cx);
                slider(ui, &l.bounce, &cx);
                slider(ui, &l.budget, &cx);
                if p.settings().fluid == FluidChoice::Liquid3d {
                    // The 3D liquid's camera (also: drag to turn it, the wheel to zoom).
                    slider(ui, &l.orbit, &cx);
                    slider(ui, &l.height, &cx);
                    slider(ui, &l.distance, &cx);
                    slider(ui, &l.floaters, &cx);
                } else {
                    choice(ui, &l.style, setter, cols);
                }
            });
        }
        section(ui, "Notes", true, |ui| {
            choice(ui, &p.mapping_mode, setter, cols);
            channel(
                ui,
                &p.drum_channel,
                setter,
                cols,
                "General MIDI drums: this channel's notes play as a kit (kick, snare, hats, \
                 toms), not as pitches",
            );
            slider(ui, &p.splat_radius, &cx);
            slider(ui, &p.splat_force, &cx);
            slider(ui, &p.dye_amount, &cx);
            label(ui, "", cols);
            toggle(ui, &p.beat_pulse, setter);
            ui.end_row();
        });
        section(ui, "Audio", false, |ui| {
            slider(ui, &p.audio_reactivity, &cx);
            slider(ui, &p.envelope_attack, &cx);
            slider(ui, &p.envelope_release, &cx);
            slider(ui, &p.low_amount, &cx);
            slider(ui, &p.mid_amount, &cx);
            slider(ui, &p.high_amount, &cx);
            slider(ui, &p.chroma_amount, &cx);
        });
        // NOTE: before Look, so the panel's end (scrolled to) stays as it was.
        obstacles_section(ui, shared, setter, painter, cols);
        // Heat and buoyancy (collapsed: off until Buoyancy or Weight is raised).
        section(ui, "Heat", false, |ui| {
            slider(ui, &p.heat.buoyancy, &cx);
            slider(ui, &p.heat.weight, &cx);
            slider(ui, &p.heat.cooling, &cx);
            slider(ui, &p.heat.ambient, &cx);
            slider(ui, &p.heat.lift_angle, &cx);
        });
        // Particles (collapsed: off until Particles is raised).
        section(ui, "Particles", false, |ui| {
            slider(ui, &p.particles.amount, &cx);
            slider(ui, &p.particles.life, &cx);
            slider(ui, &p.particles.glow, &cx);
        });
        // Streamlines (collapsed: off until shown).
        section(ui, "Streamlines", false, |ui| {
            let s = &p.streamlines;
            choice(ui, &s.mode, setter, cols);
            slider(ui, &s.density, &cx);
            slider(ui, &s.length, &cx);
            slider(ui, &s.steps, &cx);
        });
        // Modulation (collapsed): above Look, so neither the rows above nor the panel's end
        // (scrolled to) move.
        egui::CollapsingHeader::new(RichText::new("Modulation").strong())
            .default_open(false)
            .show(ui, |ui| {
                ui.spacing_mut().indent = 0.0;
                modulation::section(ui, p, cx.index, cols.label + GAP + cols.widget);
            });
        section(ui, "Look", true, |ui| {
            choice(ui, &p.color_mode, setter, cols);
            choice(ui, &p.tone_mode, setter, cols);
            slider(ui, &p.brightness, &cx);
            slider(ui, &p.saturation, &cx);
            slider(ui, &p.hue_shift, &cx);
            // Adaptive dye: how the picture keeps its contrast in dense music.
            slider(ui, &p.adaptive_dye, &cx);
            // The filmic tone's effects.
            let e = &p.effects;
            slider(ui, &e.bloom, &cx);
            slider(ui, &e.bloom_threshold, &cx);
            slider(ui, &e.bloom_knee, &cx);
            slider(ui, &e.bloom_radius, &cx);
            slider(ui, &e.rays, &cx);
            slider(ui, &e.shading, &cx);
            slider(ui, &e.light_angle, &cx);
            slider(ui, &e.palette, &cx);
            slider(ui, &e.vibrance, &cx);
            slider(ui, &e.bg_hue, &cx);
            slider(ui, &e.bg_saturation, &cx);
            slider(ui, &e.bg_brightness, &cx);
        });
        settings_section(ui, shared, &mut self.output, cols);
        egui::CollapsingHeader::new(RichText::new("Mouse and keys").strong())
            .default_open(false)
            .show(ui, |ui| {
                let (r, g, b) = {
                    let c = crate::fluid::hsv_to_rgb(painter.hue(), 0.9, 1.0);
                    (c[0], c[1], c[2])
                };
                let (paint, pulls) = if liquid {
                    (
                        "Shift + left-drag: pour liquid (next colour:",
                        "Left-drag: pull the liquid; right-drag: push it away",
                    )
                } else {
                    (
                        "Left-drag: paint dye and push (next colour:",
                        "Right-drag: pull the fluid; Shift + right-drag: push it away",
                    )
                };
                ui.horizontal_wrapped(|ui| {
                    ui.label(paint);
                    let (rect, _) =
                        ui.allocate_exact_size(egui::vec2(12.0, 12.0), egui::Sense::hover());
                    ui.painter()
                        .rect_filled(rect, 2.0, egui::Rgba::from_rgb(r, g, b));
                    ui.label(")");
                });
                ui.label(pulls);
                ui.label("Wheel: brush size");
                ui.label(
                    "Obstacles: Draw or Erase, then left-drag on the fluid (the wheel sizes \
                     that brush); Off paints dye again",
                );
                ui.label(
                    "P pause · Space random splats · R reset · F hide this panel · O output \
                     window",
                );
            });
    }
}
