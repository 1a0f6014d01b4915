//! The fluid view: the simulation's newest frame, fitted to the window at the canvas aspect
//! (black bars where the shapes differ), uploaded to a texture whenever a new one arrives.

use super::EditorShared;
use crate::params::Settings;
use egui::{self, Color32, Pos2, Rect, TextureHandle, TextureOptions, Vec2};
use std::time::Instant;

/// Where the canvas is on screen, for mapping the mouse.
#[derive(Clone, Copy, Debug)]
pub struct Canvas {
    /// The picture's rectangle, in points.
    pub rect: Rect,
    /// Canvas width over height.
    pub aspect: f32,
}

impl Canvas {
    /// Canvas coordinates (height 1, x right, y up) of a screen point.
    pub fn to_canvas(self, p: Pos2) -> [f32; 2] {
        let h = self.rect.height().max(1.0);
        [(p.x - self.rect.left()) / h, (self.rect.bottom() - p.y) / h]
    }

    /// A screen-space movement in canvas heights (y up).
    pub fn delta_to_canvas(self, d: Vec2) -> [f32; 2] {
        let h = self.rect.height().max(1.0);
        [d.x / h, -d.y / h]
    }

    /// Canvas heights to points.
    pub fn length_to_screen(&self, l: f32) -> f32 {
        l * self.rect.height()
    }
}

/// The largest rectangle of `aspect` centred in `outer`.
pub fn fit(outer: Rect, aspect: f32) -> Rect {
    let aspect = if aspect.is_finite() && aspect > 0.0 {
        aspect
    } else {
        1.0
    };
    let (w, h) = (outer.width(), outer.height());
    let size = if w / h.max(1e-3) > aspect {
        Vec2::new(h * aspect, h)
    } else {
        Vec2::new(w, w / aspect)
    };
    Rect::from_center_size(outer.center(), size)
}

/// The frame size worth asking for: the picture's size in physical pixels, but no finer than
/// the dye grid (the GPU's texture filtering upsamples as well as the CPU would, for free).
pub fn wanted_frame(physical: Vec2, settings: &Settings) -> (usize, usize) {
    crate::frame::frame_for((physical.x, physical.y), settings.dye_grid())
}

/// The view's state.
/// New fluid frames shown by every editor of the process so far (a figure for measurements:
/// `tests/it/editor_speed.rs`).
pub static FRAMES_SHOWN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

pub struct FluidView {
    texture: Option<TextureHandle>,
    serial: u64,
    /// Frames shown per second, measured.
    fps: f32,
    shown: u32,
    since: Instant,
}

impl Default for FluidView {
    fn default() -> Self {
        Self {
            texture: None,
            serial: 0,
            fps: 0.0,
            shown: 0,
            since: Instant::now(),
        }
    }
}

impl FluidView {
    /// New frames shown per second.
    pub fn fps(&self) -> f32 {
        self.fps
    }

    /// Draw the view over the whole window; returns where the canvas is.
    pub fn show(
        &mut self,
        ui: &mut egui::Ui,
        shared: &EditorShared,
        settings: &Settings,
    ) -> Canvas {
        let outer = ui.max_rect();
        let aspect = settings.aspect.ratio();
        let rect = fit(outer, aspect);
        let painter = ui.painter();
        painter.rect_filled(outer, 0.0, Color32::BLACK);

        let ppp = ui.ctx().pixels_per_point();
        let (fw, fh) = wanted_frame(rect.size() * ppp, settings);
        {
            let mut frames = shared.frames.lock();
            frames.request(fw, fh);
            if frames.has_new() {
                let f = frames.latest();
                if f.serial != self.serial && f.width > 0 && f.height > 0 {
                    self.serial = f.serial;
                    let image =
                        egui::ColorImage::from_rgba_unmultiplied([f.width, f.height], &f.pixels);
                    match &mut self.texture {
                        Some(t) => t.set(image, TextureOptions::LINEAR),
                        None => {
                            self.texture = Some(ui.ctx().load_texture(
                                "dyeflow-fluid",
                                image,
                                TextureOptions::LINEAR,
                            ));
                        }
                    }
                    self.shown += 1;
                    FRAMES_SHOWN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            }
        }
        let elapsed = self.since.elapsed().as_secs_f32();
        if elapsed >= 0.5 {
            self.fps = self.shown as f32 / elapsed;
            self.shown = 0;
            self.since = Instant::now();
        }
        if let Some(t) = &self.texture {
            let uv = Rect::from_min_max(Pos2::ZERO, Pos2::new(1.0, 1.0));
            ui.painter().image(t.id(), rect, uv, Color32::WHITE);
        }
        Canvas { rect, aspect }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Aspect;

    #[test]
    fn fit_keeps_the_aspect_and_centres() {
        let outer = Rect::from_min_size(Pos2::ZERO, Vec2::new(1000.0, 500.0));
        let r = fit(outer, 16.0 / 9.0);
        assert!((r.width() / r.height() - 16.0 / 9.0).abs() < 1e-4);
        assert_eq!(r.height(), 500.0);
        assert!((r.center().x - 500.0).abs() < 1e-3);
        let tall = fit(outer, 9.0 / 16.0);
        assert_eq!(tall.height(), 500.0);
        assert!((tall.width() - 281.25).abs() < 1e-3);
    }

    #[test]
    fn canvas_coordinates_round_trip() {
        let c = Canvas {
            rect: Rect::from_min_size(Pos2::new(100.0, 50.0), Vec2::new(320.0, 180.0)),
            aspect: 16.0 / 9.0,
        };
        // Bottom left is the origin, top right (aspect, 1).
        assert_eq!(c.to_canvas(Pos2::new(100.0, 230.0)), [0.0, 0.0]);
        let tr = c.to_canvas(Pos2::new(420.0, 50.0));
        assert!((tr[0] - 16.0 / 9.0).abs() < 1e-5 && (tr[1] - 1.0).abs() < 1e-6);
        assert_eq!(c.delta_to_canvas(Vec2::new(18.0, -9.0)), [0.1, 0.05]);
    }

    #[test]
    fn frames_are_no_finer_than_the_dye() {
        let s = Settings {
            sim_resolution: 256,
            dye_scale: 2,
            aspect: Aspect::Wide,
            ..Settings::default()
        };
        // A 4K view asks for the dye grid (910 x 512), a small one for its own size.
        assert_eq!(wanted_frame(Vec2::new(3840.0, 2160.0), &s), (910, 512));
        assert_eq!(wanted_frame(Vec2::new(455.0, 256.0), &s), (455, 256));
        assert_eq!(wanted_frame(Vec2::new(0.0, 0.0), &s), (16, 16));
    }
}
