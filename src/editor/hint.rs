//! The first-run hint: a line in the middle of the empty canvas saying what to do (play notes,
//! drag to paint, F for the controls). It goes for good once something happens: a note reaches
//! the simulation, or the user drags, scrolls or presses a key in the editor.

use super::view::Canvas;
use egui::{self, Align2, Color32, FontId};

/// The hint's text.
pub const HINT: &str = "Play some notes · drag to paint · F for the controls";
/// The hint over the particle fluid (where a plain drag pulls).
pub const HINT_LIQUID: &str = "Play some notes · Shift + drag to pour · F for the controls";

/// Whether the hint still shows.
pub struct Hint {
    showing: bool,
}

impl Default for Hint {
    fn default() -> Self {
        Self { showing: true }
    }
}

impl Hint {
    /// Whether the hint still shows.
    pub fn showing(&self) -> bool {
        self.showing
    }

    /// Hide the hint for good once the user acted or a note came; whether it still shows.
    fn update(&mut self, acted: bool, notes: u64) -> bool {
        if acted || notes > 0 {
            self.showing = false;
        }
        self.showing
    }

    /// Something happened (`acted`: the user did something; `notes`: note-ons the simulation
    /// has taken): hide the hint for good. Otherwise draw it over `canvas` if `visible`, the
    /// liquid's words if `liquid`.
    pub fn show(
        &mut self,
        ui: &egui::Ui,
        canvas: &Canvas,
        (acted, notes): (bool, u64),
        visible: bool,
        liquid: bool,
    ) {
        if !self.update(acted, notes) || !visible {
            return;
        }
        let rect = canvas.rect;
        let size = (rect.height() * 0.06).clamp(12.0, 20.0);
        let galley = ui.painter().layout(
            if liquid { HINT_LIQUID } else { HINT }.to_owned(),
            FontId::proportional(size),
            Color32::from_gray(215),
            (rect.width() - 32.0).max(40.0),
        );
        let text_rect = Align2::CENTER_CENTER.anchor_size(rect.center(), galley.size());
        let painter = ui.painter();
        painter.rect_filled(
            text_rect.expand2(egui::vec2(12.0, 8.0)),
            8.0,
            Color32::from_black_alpha(160),
        );
        painter.galley(text_rect.min, galley, Color32::from_gray(215));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hint_goes_for_good_at_the_first_note_or_action() {
        let mut h = Hint::default();
        assert!(h.update(false, 0) && h.showing());
        assert!(!h.update(false, 1), "a note");
        assert!(!h.update(false, 0), "for good");
        let mut h = Hint::default();
        assert!(!h.update(true, 0), "a drag or a key");
    }
}
