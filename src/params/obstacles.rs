//! The project's obstacles (state version 7): a persisted field holding the built-in layout
//! last picked and the mask as drawn, with a serial that moves on every change, so the
//! simulation thread notices a change (a state load included) with one atomic load.
//!
//! Who writes it: the editor (layout selector, Clear), the host's main thread (state loads,
//! through [`PersistentField`]), and the simulation thread (the brush's strokes, written back
//! when they settle). The audio thread never touches it.

use crate::fluid::mask::{Layout, Mask};
use nice_plug::params::persist::PersistentField;
use parking_lot::RwLock;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};

/// Key of the persisted obstacles field.
pub const OBSTACLES_KEY: &str = "obstacles";

/// The obstacles a project holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ObstacleSettings {
    /// The built-in layout last picked (the editor's selector shows it).
    pub layout: Layout,
    /// The mask as drawn on top of it ([`Mask::encode`] text, at the grid it was drawn on);
    /// empty: exactly the layout, at whatever resolution the fluid runs.
    pub mask: String,
}

impl ObstacleSettings {
    /// A layout with nothing drawn on it.
    pub fn layout(layout: Layout) -> Self {
        Self {
            layout,
            mask: String::new(),
        }
    }

    /// The solid cells these settings describe on a `width x height` grid: the drawn mask
    /// resampled, else the layout rasterised; `None` when nothing is solid. A mask that
    /// cannot be read counts as not drawn (the layout).
    pub fn mask_at(&self, width: usize, height: usize) -> Option<Mask> {
        let mask = match self.drawn() {
            Some(drawn) => drawn.resampled(width, height),
            None => Mask::layout(self.layout, width, height),
        };
        (!mask.is_empty()).then_some(mask)
    }

    /// The drawn mask, if there is one and it reads.
    pub fn drawn(&self) -> Option<Mask> {
        if self.mask.trim().is_empty() {
            return None;
        }
        Mask::decode(&self.mask).ok()
    }

    /// The same settings with a mask that does not read dropped (with a warning), so a
    /// damaged project opens with its layout.
    pub fn sanitized(&self) -> Self {
        if self.mask.trim().is_empty() {
            return Self::layout(self.layout);
        }
        match Mask::decode(&self.mask) {
            Ok(_) => self.clone(),
            Err(e) => {
                nice_plug::nice_warn!("Dropping the saved obstacle drawing: {e}");
                Self::layout(self.layout)
            }
        }
    }
}

/// State version 10: a drawn mask on a grid of another aspect is fitted into it, keeping its
/// shape; before, it was stretched to the grid. An older state's drawing is therefore redrawn
/// at the project's own grid (its settings' [`super::Settings::sim_grid`], where the plugin
/// showed it) as it showed there, stretched, so the project looks as it did; one of the grid's
/// shape (the usual case: a drawing is written back at the grid it was drawn on) is unchanged.
pub(super) fn migrate_to_v10(state: &mut nice_plug::plugin::PluginState) {
    let Some(mut obstacles) = state
        .fields
        .get(OBSTACLES_KEY)
        .and_then(|json| serde_json::from_str::<ObstacleSettings>(json).ok())
    else {
        return;
    };
    let Some(drawn) = obstacles.drawn() else {
        return;
    };
    let settings =
        super::parse_lenient::<super::Settings>(state.fields.get(super::SETTINGS_KEY)).sanitized();
    let (w, h) = settings.sim_grid();
    if drawn.fills(w, h) {
        return;
    }
    obstacles.mask = drawn.stretched(w, h).encode();
    state.fields.insert(
        OBSTACLES_KEY.to_owned(),
        serde_json::to_string(&obstacles).expect("plain struct serialises"),
    );
}

/// The persisted obstacles and their change serial.
#[derive(Debug, Default)]
pub struct ObstacleField {
    value: RwLock<ObstacleSettings>,
    /// Moves on every [`ObstacleField::set`] (an atomic: the simulation thread polls it every
    /// turn without taking the lock).
    serial: AtomicU64,
}

impl ObstacleField {
    /// The current settings and the serial they were set with.
    pub fn get(&self) -> (ObstacleSettings, u64) {
        let value = self.value.read();
        (value.clone(), self.serial.load(Ordering::Acquire))
    }

    /// The serial of the current settings (changes whenever they do).
    pub fn serial(&self) -> u64 {
        self.serial.load(Ordering::Acquire)
    }

    /// Replace the settings; the new serial.
    pub fn set(&self, settings: ObstacleSettings) -> u64 {
        let mut value = self.value.write();
        *value = settings;
        self.serial.fetch_add(1, Ordering::AcqRel) + 1
    }

    /// Replace the settings only if no one else changed them since serial `seen`; the new
    /// serial, or `None` (nothing changed) when someone did.
    pub fn set_if(&self, seen: u64, settings: ObstacleSettings) -> Option<u64> {
        let mut value = self.value.write();
        if self.serial.load(Ordering::Acquire) != seen {
            return None;
        }
        *value = settings;
        Some(self.serial.fetch_add(1, Ordering::AcqRel) + 1)
    }
}

impl<'a> PersistentField<'a, ObstacleSettings> for ObstacleField {
    fn set(&self, new_value: ObstacleSettings) {
        ObstacleField::set(self, new_value);
    }

    fn map<F, R>(&self, f: F) -> R
    where
        F: Fn(&ObstacleSettings) -> R,
    {
        f(&self.value.read())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_layout_is_its_mask_at_any_size_and_a_drawing_is_resampled() {
        let pillars = ObstacleSettings::layout(Layout::Pillars);
        assert_eq!(
            pillars.mask_at(96, 54),
            Some(Mask::layout(Layout::Pillars, 96, 54))
        );
        assert_eq!(ObstacleSettings::default().mask_at(96, 54), None);
        let mut drawn = Mask::empty(32, 18);
        drawn.paint_disc([0.5, 0.5], 0.2, true);
        let s = ObstacleSettings {
            layout: Layout::Pillars,
            mask: drawn.encode(),
        };
        assert_eq!(s.mask_at(64, 36), Some(drawn.resampled(64, 36)));
        // An unreadable drawing falls back to the layout.
        let broken = ObstacleSettings {
            layout: Layout::Disc,
            mask: "32 18 7".into(),
        };
        assert_eq!(
            broken.mask_at(32, 18),
            Some(Mask::layout(Layout::Disc, 32, 18))
        );
        assert_eq!(broken.sanitized(), ObstacleSettings::layout(Layout::Disc));
        assert_eq!(s.sanitized(), s);
    }

    #[test]
    fn the_serial_moves_on_every_change_and_guards_write_backs() {
        let f = ObstacleField::default();
        let (_, first) = f.get();
        let second = f.set(ObstacleSettings::layout(Layout::Ring));
        assert_ne!(first, second);
        assert_eq!(f.get(), (ObstacleSettings::layout(Layout::Ring), second));
        // A write-back from an older serial loses to the newer change.
        assert_eq!(f.set_if(first, ObstacleSettings::default()), None);
        assert_eq!(f.get().0.layout, Layout::Ring);
        let third = f.set_if(second, ObstacleSettings::default()).unwrap();
        assert_eq!(f.serial(), third);
        // A state load goes through the persistent field and moves the serial too.
        PersistentField::set(&f, ObstacleSettings::layout(Layout::Maze));
        assert_ne!(f.serial(), third);
        assert_eq!(f.map(|s| s.layout), Layout::Maze);
    }
}
