//! Modulation in the editor: the Modulation section (the LFOs, the routes from sources to
//! parameters, the learned CCs), a control's right-click menu (MIDI learn, forget, its
//! routes) and the ring that shows where a modulated control is now.
//!
//! The editor writes the saved modulation (`params.modulation`) and arms MIDI learn
//! (`params.modulation_live`); the simulation thread reads the one, binds the next CC for the
//! other, and publishes each knob's value as modulated, which the rings show.

use crate::engine::modulation::target_params;
use crate::params::DyeflowParams;
use crate::params::modulation::{BEATS, HZ, LFOS, MAX_ROUTES, Modulation, Route, Shape, Source};
use egui::{self, Color32, RichText};
use nice_plug::prelude::{ParamPtr, Params};
use std::collections::HashMap;

/// The ring's colour: warm, apart from the sliders' fill.
const RING: Color32 = Color32::from_rgb(255, 190, 70);
/// Width of a route's source and target boxes, and of its remove button, points.
const SOURCE_BOX: f32 = 72.0;
const REMOVE_BUTTON: f32 = 22.0;
/// Depth a new route starts with.
const NEW_DEPTH: f32 = 0.25;

/// One parameter as the editor knows it.
pub struct Entry {
    pub id: String,
    pub name: String,
    /// Its index among the parameters routes and learned CCs can move, if it is one.
    pub knob: Option<usize>,
}

/// Every parameter by its address, and the knobs in their order (the routes' targets).
pub struct ParamIndex {
    entries: Vec<Entry>,
    by_addr: HashMap<usize, usize>,
    knobs: Vec<usize>,
}

impl ParamIndex {
    pub fn new(params: &DyeflowParams) -> Self {
        let knob_params = target_params(params);
        let mut entries = Vec::new();
        let mut by_addr = HashMap::new();
        let mut knobs = vec![usize::MAX; knob_params.len()];
        for (id, ptr, _) in params.param_map() {
            let (addr, knob) = match ptr {
                ParamPtr::FloatParam(p) => (
                    p as usize,
                    knob_params.iter().position(|k| std::ptr::eq(*k, p)),
                ),
                ParamPtr::IntParam(p) => (p as usize, None),
                ParamPtr::BoolParam(p) => (p as usize, None),
                ParamPtr::EnumParam(p) => (p as usize, None),
            };
            // SAFETY: the pointer comes from `params`, alive for this call.
            let name = unsafe { ptr.name() }.to_owned();
            if let Some(k) = knob {
                knobs[k] = entries.len();
            }
            by_addr.insert(addr, entries.len());
            entries.push(Entry { id, name, knob });
        }
        knobs.retain(|&i| i != usize::MAX);
        Self {
            entries,
            by_addr,
            knobs,
        }
    }

    /// The entry of the parameter `param` (a field of the params this index was made from).
    pub fn of<P>(&self, param: &P) -> Option<&Entry> {
        let addr = param as *const P as usize;
        self.by_addr.get(&addr).map(|&i| &self.entries[i])
    }

    /// The parameters routes can move, in the knobs' order.
    pub fn targets(&self) -> impl Iterator<Item = &Entry> {
        self.knobs.iter().map(|&i| &self.entries[i])
    }

    /// A target's name by its id (the id itself if it is none).
    fn name_of<'a>(&'a self, id: &'a str) -> &'a str {
        self.entries
            .iter()
            .find(|e| e.id == id)
            .map_or(id, |e| e.name.as_str())
    }
}

/// The sliders' visible rects as drawn in the last frame, each with its slider's key.
#[derive(Clone, Default)]
struct SliderRects(Vec<(egui::Rect, egui::Id)>);

fn rects_key() -> egui::Id {
    egui::Id::unique("dyeflow-slider-rects")
}

fn click_key() -> egui::Id {
    egui::Id::unique("dyeflow-slider-right-click")
}

/// Takes the right button's presses over a slider out of egui's input (a slider sets its
/// value on any button's press), and the release that ends such a press (wherever it is),
/// leaving where it was released for that slider to open its menu if it is still over it.
/// Elsewhere the right button passes: a right-drag in the fluid keeps its press and release,
/// even when it ends over a slider.
#[derive(Default)]
struct RightClicks {
    /// The slider a removed press was on, until its release.
    held_on: Option<egui::Id>,
}

impl egui::Plugin for RightClicks {
    fn debug_name(&self) -> &'static str {
        "dyeflow-right-clicks"
    }

    fn input_hook(&mut self, ctx: &egui::Context, input: &mut egui::RawInput) {
        let rects = ctx
            .data(|d| d.get_temp::<SliderRects>(rects_key()))
            .map(|r| r.0)
            .unwrap_or_default();
        let over = |pos: egui::Pos2| rects.iter().find(|(r, _)| r.contains(pos)).map(|&(_, k)| k);
        let mut released = None;
        let held_on = &mut self.held_on;
        input.events.retain(|e| match *e {
            egui::Event::PointerButton {
                pos,
                button: egui::PointerButton::Secondary,
                pressed: true,
                ..
            } => match over(pos) {
                Some(key) => {
                    *held_on = Some(key);
                    false
                }
                None => true,
            },
            egui::Event::PointerButton {
                pos,
                button: egui::PointerButton::Secondary,
                pressed: false,
                ..
            } => match held_on.take() {
                Some(key) => {
                    if over(pos) == Some(key) {
                        released = Some((key, pos));
                    }
                    false
                }
                None => true,
            },
            _ => true,
        });
        if let Some(click) = released {
            ctx.data_mut(|d| d.insert_temp(click_key(), click));
        }
    }
}

/// Install the right-click filter in `ctx` (once), and start this frame's list of sliders.
pub fn begin_frame(ctx: &egui::Context) {
    let marker = egui::Id::unique("dyeflow-right-clicks-installed");
    if ctx.data(|d| d.get_temp::<bool>(marker)).is_none() {
        ctx.add_plugin(RightClicks::default());
        ctx.data_mut(|d| d.insert_temp(marker, true));
    }
    ctx.data_mut(|d| d.insert_temp(rects_key(), SliderRects::default()));
}

/// Register the slider `key` drawn at `rect` (its visible part takes right-clicks from the
/// next frame on), and return where it was right-clicked, if it was.
pub fn right_click(ui: &egui::Ui, key: egui::Id, rect: egui::Rect) -> Option<egui::Pos2> {
    let visible = rect.intersect(ui.clip_rect());
    ui.ctx().data_mut(|d| {
        if visible.is_positive() {
            d.get_temp_mut_or_default::<SliderRects>(rects_key())
                .0
                .push((visible, key));
        }
        match d.get_temp::<(egui::Id, egui::Pos2)>(click_key()) {
            Some((k, pos)) if k == key => {
                d.remove::<(egui::Id, egui::Pos2)>(click_key());
                Some(pos)
            }
            _ => None,
        }
    })
}

/// Where the menu stands: the parameter and the point it opened at.
#[derive(Clone)]
struct MenuAt {
    id: String,
    pos: egui::Pos2,
}

fn menu_key() -> egui::Id {
    egui::Id::unique("dyeflow-param-menu")
}

/// Close the menu and stop waiting for a CC (the panel is hidden: nothing would show it).
pub fn close(ctx: &egui::Context, params: &DyeflowParams) {
    ctx.data_mut(|d| {
        d.remove::<MenuAt>(menu_key());
        d.remove::<(egui::Id, egui::Pos2)>(click_key());
    });
    if params.modulation_live.learning().is_some() {
        params.modulation_live.arm(None);
    }
}

/// Open a control's menu for parameter `id` at `pos`.
pub fn open_menu(ctx: &egui::Context, id: &str, pos: egui::Pos2) {
    let at = MenuAt {
        id: id.to_owned(),
        pos,
    };
    ctx.data_mut(|d| d.insert_temp(menu_key(), at));
}

/// The ring on a control's bar at `value` (normalised): where the modulated value is now.
pub fn ring(ui: &egui::Ui, rect: egui::Rect, value: f32) {
    let x = rect.left() + value.clamp(0.0, 1.0) * rect.width();
    let r = (rect.height() * 0.32).max(3.0);
    let centre = egui::pos2(x, rect.center().y);
    let painter = ui.painter_at(rect.expand(r + 2.0));
    painter.circle_stroke(centre, r, egui::Stroke::new(2.0, RING));
    painter.circle_filled(centre, 1.5, RING);
}

/// A control's label: its name, what it learned, or that it waits for a CC.
pub fn label_text(
    name: &str,
    entry: Option<&Entry>,
    m: &Modulation,
    learning: Option<&str>,
) -> String {
    let Some(e) = entry else {
        return name.to_owned();
    };
    if learning == Some(e.id.as_str()) {
        return format!("{name}: move a CC");
    }
    match m.learned_cc(&e.id) {
        Some(cc) => format!("{name} · CC{cc}"),
        None => name.to_owned(),
    }
}

/// The open menu of a control, if any: MIDI learn (or cancel it), forget the learned CC,
/// add a route from LFO 1, remove its routes. A press outside it closes it.
pub fn show_menu(ctx: &egui::Context, params: &DyeflowParams, index: &ParamIndex) {
    let Some(at) = ctx.data(|d| d.get_temp::<MenuAt>(menu_key())) else {
        return;
    };
    let Some(entry) = index.entries.iter().find(|e| e.id == at.id) else {
        ctx.data_mut(|d| d.remove::<MenuAt>(menu_key()));
        return;
    };
    let live = &params.modulation_live;
    let mut close = false;
    let area = egui::Area::new(egui::Id::unique("dyeflow-param-menu-area"))
        .order(egui::Order::Tooltip)
        .fixed_pos(at.pos)
        .constrain(true)
        .show(ctx, |ui| {
            egui::Frame::popup(ui.style()).show(ui, |ui| {
                ui.set_min_width(180.0);
                ui.label(RichText::new(&entry.name).strong());
                if entry.knob.is_none() {
                    ui.label("MIDI learn and modulation do not move this control");
                    close |= ui.button("Close").clicked();
                    return;
                }
                let m = params.modulation.read().clone();
                if live.learning().as_deref() == Some(entry.id.as_str()) {
                    if ui.button("Waiting for a MIDI CC… (cancel)").clicked() {
                        live.arm(None);
                        close = true;
                    }
                } else if ui
                    .button("MIDI learn")
                    .on_hover_text("Move a controller: its CC moves this control from then on")
                    .clicked()
                {
                    live.arm(Some(&entry.id));
                    close = true;
                }
                if let Some(cc) = m.learned_cc(&entry.id)
                    && ui.button(format!("Forget CC{cc}")).clicked()
                {
                    params.modulation.write().forget(&entry.id);
                    close = true;
                }
                let routes = m.routes_to(&entry.id).count();
                if m.routes.len() < MAX_ROUTES && ui.button("Add a route from LFO 1").clicked() {
                    params.modulation.write().routes.push(Route {
                        source: Source::Lfo(0),
                        target: entry.id.clone(),
                        depth: NEW_DEPTH,
                    });
                    close = true;
                }
                if routes > 0
                    && ui
                        .button(format!(
                            "Remove its route{} ({routes})",
                            if routes == 1 { "" } else { "s" }
                        ))
                        .clicked()
                {
                    params
                        .modulation
                        .write()
                        .routes
                        .retain(|r| r.target != entry.id);
                    close = true;
                }
            });
        });
    let outside = ctx.input(|i| {
        i.pointer.any_pressed()
            && i.pointer
                .interact_pos()
                .is_some_and(|p| !area.response.rect.contains(p))
    });
    if close || outside {
        ctx.data_mut(|d| d.remove::<MenuAt>(menu_key()));
    }
}

/// The sources a route can take, as the menu lists them (a CC's number is set beside it).
fn source_choices() -> Vec<(Source, String)> {
    let mut out: Vec<(Source, String)> = (0..LFOS as u8)
        .map(|i| (Source::Lfo(i), format!("LFO {}", i + 1)))
        .collect();
    out.extend([
        (Source::Level, "Level".to_owned()),
        (Source::Low, "Low".into()),
        (Source::Mid, "Mid".into()),
        (Source::High, "High".into()),
        (Source::Velocity, "Velocity".into()),
        (Source::Notes, "Notes held".into()),
        (Source::Cc(1), "CC".into()),
    ]);
    out
}

fn source_text(s: Source) -> String {
    match s {
        Source::Lfo(i) => format!("LFO {}", i + 1),
        Source::Level => "Level".into(),
        Source::Low => "Low".into(),
        Source::Mid => "Mid".into(),
        Source::High => "High".into(),
        Source::Velocity => "Velocity".into(),
        Source::Notes => "Notes held".into(),
        Source::Cc(n) => format!("CC{n}"),
    }
}

const SHAPES: [(Shape, &str); 5] = [
    (Shape::Sine, "Sine"),
    (Shape::Triangle, "Triangle"),
    (Shape::Saw, "Saw"),
    (Shape::Square, "Square"),
    (Shape::Random, "Random"),
];

/// The Modulation section's contents, `width` points wide: the LFOs, the routes (add,
/// change, remove) and the learned CCs (forget). Changes are written back at once.
pub fn section(ui: &mut egui::Ui, params: &DyeflowParams, index: &ParamIndex, width: f32) {
    let saved = params.modulation.read().clone();
    let mut m = saved.clone();
    ui.label(
        RichText::new("Right-click a control to learn a MIDI CC or add a route")
            .color(Color32::from_gray(190)),
    );
    ui.label(RichText::new("LFOs").strong());
    for (i, lfo) in m.lfos.iter_mut().enumerate() {
        ui.horizontal(|ui| {
            ui.label(format!("{}", i + 1));
            egui::ComboBox::from_id_salt(("dyeflow-lfo-shape", i))
                .width(74.0)
                .selected_text(
                    SHAPES
                        .iter()
                        .find(|(s, _)| *s == lfo.shape)
                        .map_or("?", |(_, t)| t),
                )
                .show_ui(ui, |ui| {
                    for (s, t) in SHAPES {
                        ui.selectable_value(&mut lfo.shape, s, t);
                    }
                });
            ui.checkbox(&mut lfo.sync, "Sync")
                .on_hover_text("A cycle in beats at the host's tempo (120 bpm without one)");
            if lfo.sync {
                ui.add(
                    egui::DragValue::new(&mut lfo.beats)
                        .range(BEATS.0..=BEATS.1)
                        .speed(0.05)
                        .suffix(" beats"),
                );
            } else {
                ui.add(
                    egui::DragValue::new(&mut lfo.hz)
                        .range(HZ.0..=HZ.1)
                        .speed(0.01)
                        .suffix(" Hz"),
                );
            }
            ui.add(
                egui::DragValue::new(&mut lfo.phase)
                    .range(0.0..=1.0)
                    .speed(0.01)
                    .prefix("phase "),
            );
        });
    }
    ui.label(RichText::new("Routes").strong());
    if m.routes.is_empty() {
        ui.label("None: add one, or right-click a control");
    }
    let sources = source_choices();
    let target_box = (width - SOURCE_BOX - REMOVE_BUTTON - 3.0 * 8.0) * 0.5;
    let mut remove = None;
    for (i, r) in m.routes.iter_mut().enumerate() {
        ui.horizontal(|ui| {
            egui::ComboBox::from_id_salt(("dyeflow-route-source", i))
                .width(SOURCE_BOX)
                .selected_text(source_text(r.source))
                .show_ui(ui, |ui| {
                    for (s, t) in &sources {
                        let on = std::mem::discriminant(s) == std::mem::discriminant(&r.source)
                            && (!matches!(s, Source::Lfo(_)) || *s == r.source);
                        if ui.selectable_label(on, t.as_str()).clicked() && !on {
                            r.source = *s;
                        }
                    }
                });
            if let Source::Cc(n) = &mut r.source {
                ui.add(egui::DragValue::new(n).range(0..=127));
            }
            egui::ComboBox::from_id_salt(("dyeflow-route-target", i))
                .width(target_box.max(60.0))
                .selected_text(index.name_of(&r.target).to_owned())
                .show_ui(ui, |ui| {
                    for e in index.targets() {
                        if ui.selectable_label(e.id == r.target, &e.name).clicked() {
                            r.target = e.id.clone();
                        }
                    }
                });
            ui.add(
                egui::DragValue::new(&mut r.depth)
                    .range(-1.0..=1.0)
                    .speed(0.005)
                    .custom_formatter(|v, _| format!("{:+.0} %", v * 100.0))
                    .custom_parser(|t| {
                        t.trim()
                            .trim_end_matches('%')
                            .trim()
                            .parse::<f64>()
                            .ok()
                            .map(|v| v / 100.0)
                    }),
            )
            .on_hover_text(
                "How far the source at its most moves the control: a share of its range",
            );
            if ui
                .add(egui::Button::new("x").min_size(egui::vec2(REMOVE_BUTTON, 0.0)))
                .on_hover_text("Remove this route")
                .clicked()
            {
                remove = Some(i);
            }
        });
    }
    if let Some(i) = remove {
        m.routes.remove(i);
    }
    if m.routes.len() < MAX_ROUTES && ui.button("Add a route").clicked() {
        let target = index
            .targets()
            .next()
            .map_or_else(String::new, |e| e.id.clone());
        m.routes.push(Route {
            source: Source::Lfo(0),
            target,
            depth: NEW_DEPTH,
        });
    }
    ui.label(RichText::new("Learned CCs").strong());
    if m.learned.is_empty() {
        ui.label("None: right-click a control, MIDI learn, move a controller");
    }
    let mut forget = None;
    for l in &m.learned {
        ui.horizontal(|ui| {
            ui.label(format!("CC{} → {}", l.cc, index.name_of(&l.target)));
            if ui.small_button("Forget").clicked() {
                forget = Some(l.target.clone());
            }
        });
    }
    let forgotten = forget;
    if let Some(target) = &forgotten {
        m.forget(target);
    }
    if m != saved {
        // What the simulation thread (a CC just learned) or a state load wrote meanwhile
        // stays: only what this frame changed is laid over it.
        let mut now = params.modulation.write();
        if *now == saved {
            *now = m;
        } else {
            now.lfos = m.lfos;
            if m.routes != saved.routes {
                now.routes = m.routes;
            }
            if let Some(target) = &forgotten {
                now.forget(target);
            }
        }
    }
}
