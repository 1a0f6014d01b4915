//! Mouse painting and keys, as in the original stable-fluids demo.
//!
//! - Left-drag: dye and a push along the drag, at the drag's speed; each stroke takes the next
//!   hue (golden-ratio steps around the wheel, so strokes never repeat a colour soon). With
//!   the obstacle brush on (the panel's Draw or Erase), it draws or erases solid walls along
//!   the drag instead (a click stamps one disc).
//! - Right-drag: pulls the fluid towards the cursor; with Shift it pushes it away.
//! - With the particle fluid (a liquid), as in the source: left-drag pulls the particles
//!   towards the cursor, right-drag pushes them away, and Shift + left-drag pours liquid in
//!   the stroke's colour.
//! - Wheel: brush radius (the obstacle brush's while it is on).
//! - Keys: P pauses, Space fires random splats, R resets, F hides the panel.

use super::EditorShared;
use super::view::Canvas;
use crate::bridge::events::{Brush, SimEvent, TimedEvent};
use crate::fluid::{Splat, SplatShape, hsv_to_rgb};
use crate::params::{BRUSH_RADIUS_RANGE, FluidChoice};
use egui::{self, Color32, PointerButton, Sense, Stroke};
use nice_plug::prelude::ParamSetter;
use nice_plug_egui::{Key as HostKey, KeyCapture};

/// Dye a left-drag adds per event (times the colour).
pub const STROKE_DYE: f32 = 1.5;
/// Particles each stroke splat (one per frame of a drag) emits, as a share of a note's (the
/// Particles knob): a drag at 60 frames a second trails about six notes' worth a second.
pub const STROKE_PARTICLES: f32 = 0.1;
/// Push per unit of drag speed: a drag at 1 canvas height per second adds that velocity.
pub const STROKE_FORCE_GAIN: f32 = 0.4;
/// Drag speeds above this (canvas heights per second) count as this.
pub const STROKE_MAX_SPEED: f32 = 8.0;
/// Pull of a right-drag (the liquid's left-drag), canvas heights per second squared at the
/// strongest point.
pub const PULL_ACCEL: f32 = 12.0;
/// The pull's reach in brush radii.
pub const PULL_RADIUS_BRUSHES: f32 = 3.0;
/// Random splats fired by Space.
pub const RANDOM_SPLATS: usize = 8;
/// Golden-ratio hue step between strokes.
const HUE_STEP: f32 = 0.618_034;

/// The keys the editor takes from the host while no text field has focus: its own shortcuts
/// only, so the DAW keeps the rest (including its own Space when the editor is not focused).
pub fn key_capture(typing: bool) -> KeyCapture {
    if typing {
        return KeyCapture::CaptureAll;
    }
    let keys = ["p", "P", " ", "r", "R", "f", "F", "o", "O"];
    KeyCapture::CaptureKeys(
        keys.iter()
            .map(|k| HostKey::Character((*k).into()))
            .collect(),
    )
}

/// What a left-drag on the canvas does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BrushMode {
    /// Paints dye (the obstacle brush is off).
    #[default]
    Off,
    /// Draws solid walls.
    Draw,
    /// Erases walls (the cells become fluid).
    Erase,
}

impl BrushMode {
    /// Every mode, in the panel's order.
    pub const ALL: [BrushMode; 3] = [BrushMode::Off, BrushMode::Draw, BrushMode::Erase];

    /// Its name on the panel.
    pub fn name(self) -> &'static str {
        match self {
            BrushMode::Off => "Off",
            BrushMode::Draw => "Draw",
            BrushMode::Erase => "Erase",
        }
    }
}

/// Mouse and key state of one editor window.
pub struct Painter {
    hue: f32,
    rng: u64,
    /// What a left-drag does (the panel sets it; a new window starts with dye).
    pub mode: BrushMode,
    /// Where the obstacle brush's drag was last (its strokes join up), canvas units.
    last: Option<[f32; 2]>,
    /// A left-drag turning the 3D liquid's camera is under way (its gesture is open).
    orbiting: bool,
}

/// Degrees the 3D liquid's camera turns per point the mouse moves.
const ORBIT_DEGREES_PER_POINT: f32 = 0.4;
/// The camera's distance changes by `exp(-scroll * ZOOM_PER_POINT)` per point of scroll.
const ZOOM_PER_POINT: f32 = 0.003;

impl Default for Painter {
    fn default() -> Self {
        Self {
            mode: BrushMode::Off,
            last: None,
            orbiting: false,
            hue: 0.0,
            // A different burst each session; xorshift needs a non-zero state.
            rng: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64)
                | 1,
        }
    }
}

fn send(shared: &EditorShared, event: SimEvent) {
    // A full queue drops the event (counted); the editor never waits on the simulation. A
    // capture that is on keeps what the fluid got (the mouse drives it as the notes do).
    if shared.events.lock().send(TimedEvent { time_s: 0.0, event }) {
        shared.input_tap.record(&event);
    }
}

impl Painter {
    /// Turn the 3D liquid's camera by this frame's mouse motion while `dragging`, as one
    /// gesture of the orbit and height parameters from the drag's start to its end (so a host
    /// records it as automation).
    fn orbit(
        &mut self,
        ui: &egui::Ui,
        (shared, setter): (&EditorShared, &ParamSetter),
        dragging: bool,
    ) {
        let l = &shared.params.liquid;
        if dragging && !self.orbiting {
            setter.begin_set_parameter(&l.orbit);
            setter.begin_set_parameter(&l.height);
            self.orbiting = true;
        }
        if !dragging {
            if self.orbiting {
                setter.end_set_parameter(&l.orbit);
                setter.end_set_parameter(&l.height);
                self.orbiting = false;
            }
            return;
        }
        let d = ui.input(|i| i.pointer.delta());
        let yaw = l.orbit.value() - d.x * ORBIT_DEGREES_PER_POINT;
        // Round and round: back into -180..180.
        let yaw = yaw - 360.0 * (yaw / 360.0).round();
        setter.set_parameter(&l.orbit, yaw);
        setter.set_parameter(&l.height, l.height.value() + d.y * ORBIT_DEGREES_PER_POINT);
    }

    /// The hue of the current (or next) stroke, in turns.
    pub fn hue(&self) -> f32 {
        self.hue
    }

    fn random(&mut self) -> f32 {
        // xorshift64*: plenty for scattering splats.
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        let x = self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d);
        (x >> 40) as f32 / (1u64 << 24) as f32
    }

    /// Handle this frame's mouse and keys over the canvas; whether the user did anything
    /// (dragged, scrolled, pressed one of the keys).
    pub fn handle(
        &mut self,
        ui: &mut egui::Ui,
        canvas: &Canvas,
        (shared, setter): (&EditorShared, &ParamSetter),
        typing: bool,
    ) -> bool {
        let response = ui.interact(
            canvas.rect,
            ui.scope_id().with("fluid"),
            Sense::click_and_drag(),
        );
        let mut editor = shared.params.editor_settings();
        let brush = editor.brush_radius;
        let dt = ui.input(|i| i.stable_dt).clamp(1e-3, 0.1);
        let mut acted = response.dragged();
        let walls = self.mode != BrushMode::Off;

        if response.drag_started_by(PointerButton::Primary) {
            // A drag starts once the pointer has moved a little: the wall starts where the
            // button went down.
            self.last = ui
                .input(|i| i.pointer.press_origin())
                .filter(|_| walls)
                .map(|p| canvas.to_canvas(p));
            if !walls {
                self.hue = (self.hue + HUE_STEP).fract();
            }
        }
        // The grid: left paints, right pulls (Shift: pushes). The liquid, as in the source:
        // left pulls, right pushes, Shift + left pours. The 3D liquid: left turns the camera
        // round the tank (Ctrl + left pulls), the wheel brings it nearer or further.
        let fluid = shared.params.settings().fluid;
        let liquid = fluid.is_liquid();
        let shift = ui.input(|i| i.modifiers.shift);
        let ctrl = ui.input(|i| i.modifiers.command);
        let camera = fluid == FluidChoice::Liquid3d && !walls;
        let primary = response.dragged_by(PointerButton::Primary);
        let secondary = response.dragged_by(PointerButton::Secondary);
        self.orbit(ui, (shared, setter), camera && primary && !shift && !ctrl);
        let (paint, pull) = if liquid {
            let pull = if primary && !shift && (!camera || ctrl) {
                Some(1.0)
            } else if secondary {
                Some(-1.0)
            } else {
                None
            };
            (primary && shift, pull)
        } else {
            let pull = secondary.then_some(if shift { -1.0 } else { 1.0 });
            (primary, pull)
        };
        if let Some(pos) = response.interact_pointer_pos() {
            let at = canvas.to_canvas(pos);
            let stroke = response.dragged_by(PointerButton::Primary)
                || response.clicked_by(PointerButton::Primary);
            if walls && stroke {
                // From where the drag was last, so a fast drag leaves no gaps (a pointer held
                // still sends nothing more).
                let from = self.last.unwrap_or(at);
                if self.last != Some(at) {
                    send(
                        shared,
                        SimEvent::Brush(Brush {
                            from,
                            to: at,
                            radius: editor.wall_radius,
                            solid: self.mode == BrushMode::Draw,
                        }),
                    );
                }
                self.last = Some(at);
                acted = true;
            } else if paint {
                let d = canvas.delta_to_canvas(ui.input(|i| i.pointer.delta()));
                let (vx, vy) = (d[0] / dt, d[1] / dt);
                let speed = vx.hypot(vy);
                let limit = if speed > STROKE_MAX_SPEED {
                    STROKE_MAX_SPEED / speed
                } else {
                    1.0
                };
                send(
                    shared,
                    SimEvent::Splat(Splat {
                        pos: at,
                        radius: brush,
                        color: hsv_to_rgb(self.hue, 0.9, 1.0),
                        amount: STROKE_DYE,
                        force: [
                            vx * limit * STROKE_FORCE_GAIN,
                            vy * limit * STROKE_FORCE_GAIN,
                        ],
                        shape: SplatShape::Gaussian,
                        heat: 0.0,
                        particles: STROKE_PARTICLES * shared.params.particles.amount.value(),
                        depth: 0.0,
                        drum: Default::default(),
                    }),
                );
            } else if let Some(sign) = pull {
                send(
                    shared,
                    SimEvent::Splat(Splat {
                        pos: at,
                        radius: brush * PULL_RADIUS_BRUSHES,
                        force: [sign * PULL_ACCEL * dt, 0.0],
                        shape: SplatShape::Radial,
                        ..Splat::default()
                    }),
                );
            }
        }

        if !response.dragged() {
            self.last = None;
        }

        if response.hovered() {
            let scroll = ui.input(|i| i.smooth_scroll_delta.y);
            if scroll != 0.0 && camera && !ctrl {
                // Nearer or further (Ctrl + wheel: the brush, as for the 2D fluids).
                acted = true;
                let d = &shared.params.liquid.distance;
                setter.begin_set_parameter(d);
                setter.set_parameter(d, d.value() * (-scroll * ZOOM_PER_POINT).exp());
                setter.end_set_parameter(d);
            } else if scroll != 0.0 {
                acted = true;
                let radius = if walls {
                    &mut editor.wall_radius
                } else {
                    &mut editor.brush_radius
                };
                *radius = (*radius * (scroll * 0.004).exp())
                    .clamp(BRUSH_RADIUS_RANGE.0, BRUSH_RADIUS_RANGE.1);
                shared.params.set_editor_settings(editor.clone());
            }
            if let Some(p) = response.hover_pos() {
                // The brush outline: white for dye, amber to draw walls, red to erase them.
                let (radius, colour) = match self.mode {
                    BrushMode::Off => (editor.brush_radius, Color32::from_white_alpha(90)),
                    BrushMode::Draw => (
                        editor.wall_radius,
                        Color32::from_rgba_unmultiplied(255, 190, 60, 200),
                    ),
                    BrushMode::Erase => (
                        editor.wall_radius,
                        Color32::from_rgba_unmultiplied(255, 80, 80, 200),
                    ),
                };
                let r = canvas.length_to_screen(radius);
                ui.painter().circle_stroke(p, r, Stroke::new(1.0, colour));
            }
        }

        if typing {
            return acted;
        }
        let (pause, splats, reset, panel, output) = ui.input(|i| {
            (
                i.key_pressed(egui::Key::P),
                i.key_pressed(egui::Key::Space),
                i.key_pressed(egui::Key::R),
                i.key_pressed(egui::Key::F),
                i.key_pressed(egui::Key::O),
            )
        });
        if output {
            super::output_window::toggle(shared);
        }
        if pause {
            let engine = &shared.engine;
            engine.set_paused(!engine.paused());
        }
        if splats {
            self.random_splats(shared, canvas.aspect, brush);
        }
        if reset {
            send(shared, SimEvent::Reset);
        }
        if panel {
            let open = !editor.panel_open;
            editor.panel_open = open;
            shared.params.set_editor_settings(editor);
        }
        acted || pause || splats || reset || panel || output
    }

    /// A burst of random coloured splats with random pushes.
    pub fn random_splats(&mut self, shared: &EditorShared, aspect: f32, brush: f32) {
        for _ in 0..RANDOM_SPLATS {
            let pos = [
                aspect * (0.1 + 0.8 * self.random()),
                0.1 + 0.8 * self.random(),
            ];
            let angle = self.random() * std::f32::consts::TAU;
            let speed = 0.5 + 1.5 * self.random();
            let color = hsv_to_rgb(self.random(), 0.9, 1.0);
            send(
                shared,
                SimEvent::Splat(Splat {
                    pos,
                    radius: brush * (1.0 + self.random()),
                    color,
                    amount: 1.0,
                    force: [angle.cos() * speed, angle.sin() * speed],
                    shape: SplatShape::Gaussian,
                    heat: 0.0,
                    // Like a note at full velocity.
                    particles: shared.params.particles.amount.value(),
                    depth: 0.0,
                    drum: Default::default(),
                }),
            );
        }
    }
}
