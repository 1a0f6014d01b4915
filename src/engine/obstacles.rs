//! The obstacles the fluid runs with: the project's (a built-in layout, or a drawn mask with
//! the brush's strokes on it) and the pillars the pillar channel's notes raise on top.
//!
//! The model gets one mask, composed here at its resolution whenever either part changes
//! (at most once per turn of the simulation thread: a brush stroke or a chord marks the scene
//! stale, and [`Scene::apply`] composes it). Lowering a pillar brings back what was under it.
//!
//! Brush strokes (the editor's, or a capture's replayed) wait in a queue and are painted when
//! the scene is applied (each step, step of no time or flush: a few times a turn at most), in
//! their order, within a budget of cells each time: a flood of strokes, or strokes to far
//! points, cost a bounded amount of work per step whatever their number (the rest wait; past
//! [`MAX_PENDING_STROKES`] new ones are dropped and counted).

use crate::bridge::events::Brush;
use crate::mapping::{ObstacleEdit, Pillar};
use std::collections::VecDeque;

/// Brush strokes that can wait to be painted: a mouse sends about 60 a second.
pub const MAX_PENDING_STROKES: usize = 1024;
/// Cells the brush may visit each time the scene is applied, in whole grids: a stroke across the
/// whole canvas with the largest brush visits one grid (0.2-0.5 ms at the default 455x256 on one
/// core).
pub const STROKE_GRIDS_PER_TURN: usize = 4;
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
    /// Strokes not painted yet, each with the grid of the model it was drawn on.
    strokes: VecDeque<(Brush, (usize, usize))>,
    /// Strokes dropped on a full queue.
    dropped_strokes: u64,
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
            strokes: VecDeque::new(),
            dropped_strokes: 0,
            seen: None,
        }
    }
}

impl Scene {
    /// Take the project's obstacles (serial `serial`): they replace the base, strokes not yet
    /// written back included.
    pub fn set_settings(&mut self, settings: &ObstacleSettings, serial: u64) {
        // Strokes drawn on the base it replaces go with it.
        self.strokes.clear();
        self.layout = settings.layout;
        self.base = settings.drawn().map_or(Base::Layout, Base::Drawn);
        self.drawn = false;
        self.stale = true;
        self.seen = Some(serial);
    }

    /// A brush stroke on a model of `grid` cells, painted when the scene is next applied (see
    /// [`Scene::paint`]). Non-finite strokes change nothing; past [`MAX_PENDING_STROKES`]
    /// waiting, the stroke is dropped and counted.
    pub fn brush(&mut self, b: &Brush, grid: (usize, usize)) {
        let finite = b.from.iter().chain(&b.to).all(|x| x.is_finite()) && b.radius.is_finite();
        if !finite || b.radius < 0.0 {
            return;
        }
        if self.strokes.len() >= MAX_PENDING_STROKES {
            self.dropped_strokes += 1;
            return;
        }
        self.strokes.push_back((*b, grid));
    }

    /// Strokes dropped on a full queue so far.
    pub fn dropped_strokes(&self) -> u64 {
        self.dropped_strokes
    }

    /// Paint the waiting strokes in their order, until they visit `budget` cells (at least
    /// one stroke): the base becomes a drawing at the stroke's grid (if it was not one), and
    /// the cells within the stroke's radius of its segment turn solid or fluid.
    fn paint(&mut self, budget: usize) {
        let mut spent = 0;
        while let Some(&(b, grid)) = self.strokes.front() {
            let (w, h) = (
                grid.0.clamp(1, MAX_MASK_EDGE),
                grid.1.clamp(1, MAX_MASK_EDGE),
            );
            let fits = matches!(&self.base, Base::Drawn(m) if (m.width(), m.height()) == (w, h));
            let resample = if fits { 0 } else { w * h };
            let mask_cells = |m: &Mask| m.capsule_cells(b.from, b.to, b.radius.min(2.0));
            let cost = resample
                + match &self.base {
                    Base::Drawn(m) if fits => mask_cells(m),
                    _ => w * h,
                };
            if spent > 0 && spent + cost > budget {
                return;
            }
            spent += cost;
            self.strokes.pop_front();
            if !fits {
                self.base = Base::Drawn(match &self.base {
                    Base::Drawn(m) => m.resampled(w, h),
                    Base::Layout => Mask::layout(self.layout, w, h),
                });
            }
            let Base::Drawn(mask) = &mut self.base else {
                unreachable!("the base was just made a drawing")
            };
            mask.paint_capsule(b.from, b.to, b.radius.min(2.0), b.solid);
            self.drawn = true;
            self.stale = true;
        }
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

    /// Paint what strokes the turn's budget allows, and give the model its mask if it is out
    /// of date; whether the model's obstacles changed (none before and none now is no change).
    pub fn apply(&mut self, model: &mut dyn Model) -> bool {
        let (w, h) = model.resolution().cells;
        self.paint(STROKE_GRIDS_PER_TURN * w.max(1) * h.max(1));
        if !self.stale {
            return false;
        }
        self.stale = false;
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

    /// Brush `b` on `grid` and paint it at once (as an applied scene does).
    fn brushed(s: &mut Scene, b: &Brush, grid: (usize, usize)) {
        s.brush(b, grid);
        s.paint(usize::MAX);
    }

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
        brushed(&mut s, &stroke([0.2, 0.15], [1.5, 0.15], true), (64, 36));
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
        brushed(&mut s, &stroke([0.2, 0.15], [1.5, 0.15], false), (64, 36));
        assert_eq!(s.compose(64, 36), Some(layout));
        // Nonsense strokes change nothing.
        brushed(&mut s, &stroke([f32::NAN, 0.0], [1.0, 1.0], true), (64, 36));
        brushed(
            &mut s,
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
        brushed(&mut s, &stroke([0.3, 0.3], [0.3, 0.3], true), (64, 36));
        let drawn = s.compose(64, 36).unwrap();
        assert_eq!(s.compose(128, 72), Some(drawn.resampled(128, 72)));
        // A stroke on the new grid redraws the drawing there.
        brushed(&mut s, &stroke([1.2, 0.8], [1.2, 0.8], true), (128, 72));
        assert_eq!(s.compose(128, 72).unwrap().width(), 128);
    }

    /// A stroke to a point far off the canvas, with a brush far thinner than a cell, visits at
    /// most the grid (it used to step in discs a millionth apart along a segment of thousands of
    /// canvases: minutes); a thin stroke across the canvas still draws an unbroken line.
    #[test]
    fn a_stroke_costs_at_most_the_grid_whatever_its_length() {
        let grid = (64, 36);
        let far = Brush {
            from: [0.5, 0.5],
            to: [1e30, 0.5],
            radius: 1e-9,
            solid: true,
        };
        let mask = Mask::layout(Layout::None, grid.0, grid.1);
        assert!(mask.capsule_cells(far.from, far.to, far.radius) <= grid.0 * grid.1);
        let mut s = Scene::default();
        brushed(
            &mut s,
            &Brush {
                radius: 0.02,
                ..far
            },
            grid,
        );
        let m = s.compose(grid.0, grid.1).unwrap();
        let row = 18;
        // From x = 0.5 canvas heights (column 18) to the right edge.
        assert!(
            (18..64).all(|i| m.is_solid(i, row)),
            "the line reaches the edge"
        );
        assert!(!m.is_solid(15, row), "and starts where the stroke does");
        assert!(!m.is_solid(40, row + 2), "a line as wide as the brush");
    }

    /// A flood of strokes across the whole canvas waits in a bounded queue (the rest dropped
    /// and counted) and is painted a few grids' worth per turn, in order: a stroke drawn and
    /// then erased leaves nothing.
    #[test]
    fn a_flood_of_strokes_is_bounded_per_turn() {
        let grid = (64, 36);
        let cells = grid.0 * grid.1;
        let mut s = Scene::default();
        let wide = |solid| Brush {
            from: [0.0, 0.5],
            to: [1.8, 0.5],
            radius: 2.0,
            solid,
        };
        for k in 0..MAX_PENDING_STROKES + 500 {
            s.brush(&wide(k % 2 == 0), grid);
        }
        assert_eq!(s.dropped_strokes(), 500);
        assert_eq!(s.strokes.len(), MAX_PENDING_STROKES);
        // The first turn also turns the layout into a drawing (a grid's worth).
        s.paint(STROKE_GRIDS_PER_TURN * cells);
        assert_eq!(
            s.strokes.len(),
            MAX_PENDING_STROKES - (STROKE_GRIDS_PER_TURN - 1)
        );
        s.paint(STROKE_GRIDS_PER_TURN * cells);
        assert_eq!(
            s.strokes.len(),
            MAX_PENDING_STROKES - (2 * STROKE_GRIDS_PER_TURN - 1)
        );
        while !s.strokes.is_empty() {
            s.paint(STROKE_GRIDS_PER_TURN * cells);
        }
        // 1024 strokes, the last an erase: nothing solid.
        assert_eq!(s.compose(grid.0, grid.1), None);
        // A new project's obstacles drop the strokes drawn on the old ones.
        s.brush(&wide(true), grid);
        s.set_settings(&ObstacleSettings::default(), 9);
        s.paint(usize::MAX);
        assert_eq!(s.compose(grid.0, grid.1), None);
    }
}
