//! The obstacles the fluid runs with: the project's (a built-in layout, or a drawn mask with
//! the brush's strokes on it) and the pillars the pillar channel's notes raise on top.
//!
//! The model gets one mask, composed here at its resolution whenever either part changes
//! (at most once per turn of the simulation thread: a brush stroke or a chord marks the scene
//! stale, and [`Scene::apply`] composes it). Lowering a pillar brings back what was under it.

use crate::bridge::events::Brush;
use crate::mapping::{ObstacleEdit, Pillar};
use crate::params::ObstacleSettings;
use crate::sim::Model;
use crate::sim::obstacles::{Layout, MAX_MASK_EDGE, Mask};

/// The project's own obstacles.
#[derive(Clone, Debug, PartialEq)]
enum Base {
    /// Exactly a built-in layout (rasterised at whatever resolution the model runs).
    Layout,
    /// A drawn mask (at the grid it was drawn on; resampled to the model's).
    Drawn(Mask),
}

/// The obstacles' two parts and what the model last got.
#[derive(Debug)]
pub struct Scene {
    /// The layout last picked (the base when nothing is drawn).
    layout: Layout,
    base: Base,
    /// The standing pillars, by key.
    pillars: [Option<Pillar>; 128],
    /// The model's mask is out of date.
    stale: bool,
    /// The brush changed the base since [`Scene::take_drawn`] last took it.
    drawn: bool,
    /// The serial of the project's settings last taken (`None`: none yet).
    pub(super) seen: Option<u64>,
}

impl Default for Scene {
    fn default() -> Self {
        Self {
            layout: Layout::None,
            base: Base::Layout,
            pillars: [None; 128],
            stale: true,
            drawn: false,
            seen: None,
        }
    }
}

impl Scene {
    /// Take the project's obstacles (serial `serial`): they replace the base, strokes not yet
    /// written back included.
    pub fn set_settings(&mut self, settings: &ObstacleSettings, serial: u64) {
        self.layout = settings.layout;
        self.base = settings.drawn().map_or(Base::Layout, Base::Drawn);
        self.drawn = false;
        self.stale = true;
        self.seen = Some(serial);
    }

    /// A brush stroke on a model of `grid` cells: the base becomes a drawing at that grid (if
    /// it was not one), and the cells within the stroke's radius of its segment turn solid or
    /// fluid. Non-finite strokes change nothing.
    pub fn brush(&mut self, b: &Brush, grid: (usize, usize)) {
        let finite = b.from.iter().chain(&b.to).all(|x| x.is_finite()) && b.radius.is_finite();
        if !finite || b.radius < 0.0 {
            return;
        }
        let (w, h) = (
            grid.0.clamp(1, MAX_MASK_EDGE),
            grid.1.clamp(1, MAX_MASK_EDGE),
        );
        let fits = matches!(&self.base, Base::Drawn(m) if (m.width(), m.height()) == (w, h));
        if !fits {
            self.base = Base::Drawn(match &self.base {
                Base::Drawn(m) => m.resampled(w, h),
                Base::Layout => Mask::layout(self.layout, w, h),
            });
        }
        let Base::Drawn(mask) = &mut self.base else {
            unreachable!("the base was just made a drawing")
        };
        // Discs along the segment, half a radius (and at most a cell) apart, so a fast drag
        // leaves a solid line.
        let radius = b.radius.min(2.0);
        let (dx, dy) = (b.to[0] - b.from[0], b.to[1] - b.from[1]);
        let length = dx.hypot(dy).min(4.0 * MAX_MASK_EDGE as f32);
        let spacing = (0.5 * radius).min(1.0 / h as f32).max(1e-6);
        let steps = (length / spacing).ceil() as usize;
        for k in 0..=steps {
            let t = if steps == 0 {
                0.0
            } else {
                k as f32 / steps as f32
            };
            let p = [b.from[0] + t * dx, b.from[1] + t * dy];
            mask.paint_disc(p, radius, b.solid);
        }
        self.drawn = true;
        self.stale = true;
    }

    /// Apply a pillar edit from the mapping.
    pub fn edit(&mut self, e: &ObstacleEdit) {
        match *e {
            ObstacleEdit::Raise { key, pillar } => {
                self.pillars[usize::from(key & 127)] = Some(pillar)
            }
            ObstacleEdit::Lower { key } => self.pillars[usize::from(key & 127)] = None,
        }
        self.stale = true;
    }

    /// The model was rebuilt (new resolution or backend): compose again at its grid.
    pub fn invalidate(&mut self) {
        self.stale = true;
    }

    /// Whether the model's mask is out of date.
    pub fn stale(&self) -> bool {
        self.stale
    }

    /// The mask for a grid of `w x h` cells: the base and the standing pillars; `None` when
    /// nothing is solid.
    pub fn compose(&self, w: usize, h: usize) -> Option<Mask> {
        let no_pillars = self.pillars.iter().all(Option::is_none);
        if self.base == Base::Layout && self.layout == Layout::None && no_pillars {
            // Nothing at all (every project from before obstacles): no grid-sized work.
            return None;
        }
        let mut mask = match &self.base {
            Base::Layout => Mask::layout(self.layout, w, h),
            Base::Drawn(m) => m.resampled(w, h),
        };
        for p in self.pillars.iter().flatten() {
            mask.paint_disc(p.centre, p.radius, true);
        }
        (!mask.is_empty()).then_some(mask)
    }

    /// Give the model its mask if it is out of date; whether the model's obstacles changed
    /// (none before and none now is no change).
    pub fn apply(&mut self, model: &mut dyn Model) -> bool {
        if !self.stale {
            return false;
        }
        self.stale = false;
        let (w, h) = model.resolution().cells;
        let mask = self.compose(w.max(1), h.max(1));
        if mask.is_none() && model.obstacles().is_none() {
            return false;
        }
        model.set_obstacles(mask.as_ref());
        true
    }

    /// The project's obstacles as drawn, when the brush changed them since the last call (to
    /// write back into the project).
    pub fn take_drawn(&mut self) -> Option<ObstacleSettings> {
        if !std::mem::take(&mut self.drawn) {
            return None;
        }
        Some(ObstacleSettings {
            layout: self.layout,
            mask: match &self.base {
                Base::Drawn(m) => m.encode(),
                Base::Layout => String::new(),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stroke(from: [f32; 2], to: [f32; 2], solid: bool) -> Brush {
        Brush {
            from,
            to,
            radius: 0.05,
            solid,
        }
    }

    #[test]
    fn a_stroke_draws_a_line_on_the_layout_and_erasing_takes_it_off() {
        let mut s = Scene::default();
        s.set_settings(&ObstacleSettings::layout(Layout::Pillars), 1);
        let layout = Mask::layout(Layout::Pillars, 64, 36);
        assert_eq!(s.compose(64, 36), Some(layout.clone()));
        // A fast stroke across the bottom: a solid line with no gaps.
        s.brush(&stroke([0.2, 0.15], [1.5, 0.15], true), (64, 36));
        let m = s.compose(64, 36).unwrap();
        let row = (0.15 * 36.0) as usize;
        let (a, b) = ((0.2 * 36.0) as usize, (1.5 * 36.0) as usize);
        assert!((a..=b).all(|i| m.is_solid(i, row)), "a gap in the line");
        assert!(m.solid_count() > layout.solid_count());
        // The drawing is written back once, with the layout it was drawn on.
        let drawn = s.take_drawn().expect("the brush drew");
        assert_eq!(drawn.layout, Layout::Pillars);
        assert_eq!(drawn.mask_at(64, 36), Some(m.clone()));
        assert!(s.take_drawn().is_none());
        // Erasing the same stroke gives the layout back.
        s.brush(&stroke([0.2, 0.15], [1.5, 0.15], false), (64, 36));
        assert_eq!(s.compose(64, 36), Some(layout));
        // Nonsense strokes change nothing.
        s.brush(&stroke([f32::NAN, 0.0], [1.0, 1.0], true), (64, 36));
        s.brush(
            &Brush {
                radius: f32::INFINITY,
                ..stroke([0.5, 0.5], [0.5, 0.5], true)
            },
            (64, 36),
        );
        assert_eq!(
            s.compose(64, 36),
            Some(Mask::layout(Layout::Pillars, 64, 36))
        );
    }

    #[test]
    fn lowering_a_pillar_gives_back_what_was_under_it() {
        let mut s = Scene::default();
        s.set_settings(&ObstacleSettings::layout(Layout::Disc), 1);
        let disc = Mask::layout(Layout::Disc, 64, 36);
        // A pillar over the disc's edge, and one in the open.
        let over = Pillar {
            centre: [0.95, 0.5],
            radius: 0.06,
        };
        let open = Pillar {
            centre: [0.3, 0.5],
            radius: 0.04,
        };
        s.edit(&ObstacleEdit::Raise {
            key: 60,
            pillar: over,
        });
        s.edit(&ObstacleEdit::Raise {
            key: 40,
            pillar: open,
        });
        let raised = s.compose(64, 36).unwrap();
        assert!(raised.is_solid((0.3 * 36.0) as usize, 18));
        s.edit(&ObstacleEdit::Lower { key: 60 });
        s.edit(&ObstacleEdit::Lower { key: 40 });
        assert_eq!(s.compose(64, 36), Some(disc));
        // No layout and no pillars: no mask at all.
        s.set_settings(&ObstacleSettings::default(), 2);
        assert_eq!(s.compose(64, 36), None);
    }

    /// A drawing made on one grid follows the model to another, resampled; the layout is
    /// rasterised afresh, so it stays crisp.
    #[test]
    fn the_mask_follows_the_models_grid() {
        let mut s = Scene::default();
        s.set_settings(&ObstacleSettings::layout(Layout::Ring), 1);
        assert_eq!(
            s.compose(128, 72),
            Some(Mask::layout(Layout::Ring, 128, 72))
        );
        s.brush(&stroke([0.3, 0.3], [0.3, 0.3], true), (64, 36));
        let drawn = s.compose(64, 36).unwrap();
        assert_eq!(s.compose(128, 72), Some(drawn.resampled(128, 72)));
        // A stroke on the new grid redraws the drawing there.
        s.brush(&stroke([1.2, 0.8], [1.2, 0.8], true), (128, 72));
        assert_eq!(s.compose(128, 72).unwrap().width(), 128);
    }
}
