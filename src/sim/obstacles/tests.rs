use super::*;

/// Cells of a mask as rows of `#` (solid) and `.`, top row first.
fn picture(m: &Mask) -> Vec<String> {
    (0..m.height())
        .rev()
        .map(|j| {
            (0..m.width())
                .map(|i| if m.is_solid(i, j) { '#' } else { '.' })
                .collect()
        })
        .collect()
}

#[test]
fn empty_masks_are_all_fluid_and_walls_are_closed() {
    let m = Mask::empty(4, 3);
    assert!(m.is_empty());
    assert_eq!(m.solid_count(), 0);
    // Outside the grid counts as solid; the canvas edges are closed faces.
    assert!(m.is_solid(4, 0) && m.is_solid(0, 3));
    for j in 0..3 {
        assert!(!m.u_open(0, j) && !m.u_open(4, j));
        assert!((1..4).all(|i| m.u_open(i, j)));
    }
    for i in 0..4 {
        assert!(!m.v_open(i, 0) && !m.v_open(i, 3));
        assert!((1..3).all(|j| m.v_open(i, j)));
    }
    // Sizes are clamped to what solvers take.
    assert_eq!(Mask::empty(0, 100_000).width(), 1);
    assert_eq!(Mask::empty(0, 100_000).height(), MAX_MASK_EDGE);
}

#[test]
fn a_solid_cell_closes_its_four_faces() {
    let mut m = Mask::empty(3, 3);
    m.set(1, 1, true);
    assert_eq!(m.solid_count(), 1);
    assert!(!m.u_open(1, 1) && !m.u_open(2, 1));
    assert!(!m.v_open(1, 1) && !m.v_open(1, 2));
    // The other inner faces stay open.
    assert!(m.u_open(1, 0) && m.u_open(2, 2) && m.v_open(0, 1) && m.v_open(2, 2));
    // Setting twice counts once; clearing restores.
    m.set(1, 1, true);
    assert_eq!(m.solid_count(), 1);
    m.set(1, 1, false);
    assert!(m.is_empty());
    // Outside the grid is ignored.
    m.set(7, 7, true);
    assert!(m.is_empty());
}

/// Known answer: a disc of radius 0.12 on a 16x9 grid (cell size 1/9, centres at
/// ((i + 0.5) / 9, (j + 0.5) / 9)) centred at (8/9, 0.5): the cells with centres within 0.12,
/// i.e. within 1.08 cells of (8, 4.5) in cell units: (7, 4) and (8, 4), 0.5 away; (7, 5),
/// (8, 3) and the like are 1.12 away, (6, 4) 1.5.
#[test]
fn the_disc_layout_known_cells() {
    let m = Mask::layout(Layout::Disc, 16, 9);
    let solid: Vec<(usize, usize)> = (0..9)
        .flat_map(|j| (0..16).map(move |i| (i, j)))
        .filter(|&(i, j)| m.is_solid(i, j))
        .collect();
    assert_eq!(solid, vec![(7, 4), (8, 4)]);
}

#[test]
fn layouts_look_the_same_at_every_size() {
    for layout in Layout::ALL {
        let fractions: Vec<f32> = [(64, 36), (128, 72), (455, 256), (910, 512)]
            .iter()
            .map(|&(w, h)| Mask::layout(layout, w, h).solid_count() as f32 / (w * h) as f32)
            .collect();
        let finest = *fractions.last().unwrap();
        if layout == Layout::None {
            assert!(fractions.iter().all(|&f| f == 0.0));
            continue;
        }
        assert!(finest > 0.005 && finest < 0.2, "{layout:?}: {finest}");
        // Thin walls alias on coarse grids (a 0.04 wall is one or two cells of 1/36) but never
        // vanish; from 256 cells tall on the area holds within 15 %.
        for f in &fractions {
            assert!(
                *f > 0.5 * finest && *f < 2.0 * finest,
                "{layout:?}: {fractions:?}"
            );
        }
        assert!(
            (fractions[2] - finest).abs() < 0.15 * finest,
            "{layout:?}: {fractions:?}"
        );
    }
}

/// The maze's walls leave a path: from the left edge, flood fill through open faces reaches
/// the right edge, and every wall blocks a straight line across at some height.
#[test]
fn the_maze_is_passable_but_not_straight() {
    let m = Mask::layout(Layout::Maze, 160, 90);
    let (w, h) = (m.width(), m.height());
    let mut seen = vec![false; w * h];
    let mut stack: Vec<(usize, usize)> = (0..h)
        .filter(|&j| !m.is_solid(0, j))
        .map(|j| (0, j))
        .collect();
    while let Some((i, j)) = stack.pop() {
        if std::mem::replace(&mut seen[j * w + i], true) {
            continue;
        }
        if m.u_open(i, j) {
            stack.push((i - 1, j));
        }
        if m.u_open(i + 1, j) {
            stack.push((i + 1, j));
        }
        if m.v_open(i, j) {
            stack.push((i, j - 1));
        }
        if m.v_open(i, j + 1) {
            stack.push((i, j + 1));
        }
    }
    assert!((0..h).any(|j| seen[j * w + w - 1]), "no way through");
    let straight = (0..h).any(|j| (0..w).all(|i| !m.is_solid(i, j)));
    assert!(!straight, "a row crosses the maze without meeting a wall");
}

#[test]
fn the_ring_has_two_openings() {
    let m = Mask::layout(Layout::Ring, 320, 180);
    let row = 90; // the centre row
    let solid_in_row = (0..320).filter(|&i| m.is_solid(i, row)).count();
    assert_eq!(solid_in_row, 0, "the openings are on the horizontal axis");
    // The vertical axis crosses the ring twice.
    let col = 160;
    let runs = (1..180)
        .filter(|&j| m.is_solid(col, j) && !m.is_solid(col, j - 1))
        .count();
    assert_eq!(runs, 2);
}

#[test]
fn images_scale_to_the_grid() {
    // An 8x4 image, top row first: the top-left 4x2 quarter white, the rest black, opaque.
    let (iw, ih) = (8, 4);
    let mut px = vec![0u8; iw * ih * 4];
    for y in 0..ih {
        for x in 0..iw {
            let p = &mut px[(y * iw + x) * 4..][..4];
            let white = x < 4 && y < 2;
            p.copy_from_slice(&if white { [255; 4] } else { [0, 0, 0, 255] });
        }
    }
    let m = Mask::from_rgba(&px, iw, ih, 4, 2).unwrap();
    assert_eq!(picture(&m), ["##..", "...."]);
    // Upscaled: the quarter stays a quarter.
    let m = Mask::from_rgba(&px, iw, ih, 16, 8).unwrap();
    assert_eq!(m.solid_count(), 32);
    assert!(m.is_solid(0, 7) && m.is_solid(7, 4) && !m.is_solid(8, 4) && !m.is_solid(0, 3));
    // With transparency, alpha decides: a black opaque pixel is solid, a white clear one not.
    let mut px = vec![0u8; 2 * 4];
    px[..4].copy_from_slice(&[0, 0, 0, 255]);
    px[4..].copy_from_slice(&[255, 255, 255, 0]);
    let m = Mask::from_rgba(&px, 2, 1, 2, 1).unwrap();
    assert_eq!(picture(&m), ["#."]);
    // Wrong buffer sizes are refused.
    assert!(Mask::from_rgba(&px, 3, 1, 2, 1).is_none());
    assert!(Mask::from_rgba(&[], 0, 0, 2, 1).is_none());
}

#[test]
fn resampling_keeps_shapes_and_is_identity_at_the_same_size() {
    let m = Mask::layout(Layout::Pillars, 227, 128);
    assert_eq!(m.resampled(227, 128), m);
    let up = m.resampled(455, 256);
    let back = up.resampled(227, 128);
    let differ = m
        .cells()
        .iter()
        .zip(back.cells())
        .filter(|(a, b)| a != b)
        .count();
    assert!(
        differ <= m.solid_count() / 10,
        "{differ} of {}",
        m.solid_count()
    );
    let f = |m: &Mask| m.solid_count() as f32 / (m.width() * m.height()) as f32;
    assert!((f(&up) - f(&m)).abs() < 0.1 * f(&m));
}

#[test]
fn the_brush_paints_and_erases_discs() {
    let mut m = Mask::empty(20, 10);
    m.paint_disc([1.0, 0.5], 0.1, true);
    // Radius one cell: the cells within 0.1 of (10, 5) in cell units times 0.1: the four
    // around the point, at 0.71 cells.
    assert_eq!(m.solid_count(), 4);
    assert!(m.is_solid(9, 4) && m.is_solid(10, 5));
    m.paint_disc([1.0, 0.5], 0.1, false);
    assert!(m.is_empty());
    // Out of the canvas, huge, or not finite: never a panic, only what lies inside.
    m.paint_disc([-5.0, 0.5], 0.1, true);
    m.paint_disc([f32::NAN, 0.5], 0.3, true);
    m.paint_disc([1.0, 0.5], f32::INFINITY, true);
    m.paint_disc([1.0, 0.5], -1.0, true);
    assert!(m.is_empty());
    m.paint_disc([1.0, 0.5], 1.0e30, true);
    assert_eq!(m.solid_count(), 200);
}

#[test]
fn encoding_round_trips() {
    let mut m = Mask::empty(4, 2);
    m.set(3, 0, true);
    m.set(0, 1, true);
    assert_eq!(m.encode(), "4 2 3 2 3");
    assert_eq!(Mask::decode(&m.encode()).unwrap(), m);
    for layout in Layout::ALL {
        let m = Mask::layout(layout, 455, 256);
        let text = m.encode();
        assert_eq!(Mask::decode(&text).unwrap(), m, "{layout:?}");
        // Compact: runs, not cells.
        assert!(text.len() < 20_000, "{layout:?}: {} bytes", text.len());
    }
    // All solid starts with an empty fluid run.
    let mut m = Mask::empty(2, 1);
    m.set(0, 0, true);
    m.set(1, 0, true);
    assert_eq!(m.encode(), "2 1 0 2");
    assert_eq!(Mask::decode("2 1 0 2").unwrap(), m);
}

#[test]
fn damaged_text_is_refused_with_a_reason() {
    use MaskError::*;
    assert!(matches!(Mask::decode(""), Err(Malformed(_))));
    assert!(matches!(Mask::decode("4"), Err(Malformed(_))));
    assert!(matches!(Mask::decode("4 2 x"), Err(Malformed(_))));
    assert!(matches!(Mask::decode("4 2 -1"), Err(Malformed(_))));
    assert_eq!(
        Mask::decode("0 2 0"),
        Err(BadSize {
            width: 0,
            height: 2
        })
    );
    assert!(matches!(Mask::decode("9000 2 18000"), Err(BadSize { .. })));
    // A few bytes may not claim more cells than the largest grid (which would take 64 MiB);
    // the largest grid's mask reads.
    let e = Mask::decode("8192 8192 67108864").unwrap_err();
    assert!(e.to_string().contains("at most 16777216"), "{e}");
    assert_eq!(
        Mask::decode("8192 2048 16777216").map(|m| m.width()),
        Ok(8192)
    );
    assert_eq!(
        Mask::decode("4 2 3 2"),
        Err(WrongLength { got: 5, want: 8 })
    );
    assert_eq!(
        Mask::decode("4 2 3 2 9"),
        Err(WrongLength { got: 14, want: 8 })
    );
    // A run that would overflow is caught before allocating.
    let huge = format!("4 2 {} {}", usize::MAX, usize::MAX);
    assert!(matches!(Mask::decode(&huge), Err(WrongLength { .. })));
}

#[test]
fn layouts_are_named_as_saved() {
    for l in Layout::ALL {
        assert_eq!(Layout::from_id(l.id()), Some(l));
        assert_eq!(Layout::from_id(&l.name().to_uppercase()), Some(l));
        assert_eq!(
            serde_json::to_string(&l).unwrap(),
            format!("\"{}\"", l.id())
        );
    }
    assert_eq!(Layout::from_id(" Maze "), Some(Layout::Maze));
    assert_eq!(Layout::from_id("spiral"), None);
}

/// The first coarse level's rows near walls, which get its extra sweeps: every row of the
/// level that holds a solid finer cell, a margin around them, and none of the open rows
/// above and below the pillars; around a wall that crosses the whole grid, every row.
#[test]
fn near_rows_follow_the_walls() {
    use crate::sim::multigrid::plan;
    use nodes::{Hierarchy, NEAR_ROWS_MARGIN};
    let (w, h) = (128, 128);
    let mask = Mask::layout(Layout::Pillars, w, h);
    let hier = Hierarchy::new(&faces::Faces::from_mask(&mask), &plan(w, h)).expect("levels");
    let first = &hier.levels[0];
    let ch = first.graph.h;
    let rows = first.near_rows();
    assert!(rows.windows(2).all(|p| p[0] < p[1]), "{rows:?}");
    let solid_rows: Vec<u32> = (0..h)
        .filter(|&j| (0..w).any(|i| mask.is_solid(i, j)))
        .map(|j| nodes::home(j, h, ch) as u32)
        .collect();
    let (lo, hi) = (solid_rows[0], *solid_rows.last().expect("solid rows"));
    for j in &solid_rows {
        assert!(
            rows.contains(j),
            "coarse row {j} holds a solid cell: {rows:?}"
        );
    }
    for m in 1..=NEAR_ROWS_MARGIN as u32 {
        assert!(
            rows.contains(&(lo - m)) && rows.contains(&(hi + m)),
            "{rows:?}"
        );
    }
    assert!(rows.len() < ch / 2, "{} of {ch} rows: {rows:?}", rows.len());
    assert!(
        !rows.contains(&0) && !rows.contains(&(ch as u32 - 1)),
        "{rows:?}"
    );
    // A wall from top to bottom with a gap: every row is near it.
    let mut wall = Mask::empty(64, 32);
    for j in 4..32 {
        wall.set(31, j, true);
    }
    let hier = Hierarchy::new(&faces::Faces::from_mask(&wall), &plan(64, 32)).expect("levels");
    let first = &hier.levels[0];
    assert_eq!(first.near_rows().len(), first.graph.h);
}

/// The solid cells' bounding box: (width, height, left, bottom) in cells.
fn bounds(m: &Mask) -> (usize, usize, usize, usize) {
    let (mut x0, mut y0, mut x1, mut y1) = (usize::MAX, usize::MAX, 0, 0);
    for j in 0..m.height() {
        for i in 0..m.width() {
            if m.is_solid(i, j) {
                (x0, y0, x1, y1) = (x0.min(i), y0.min(j), x1.max(i), y1.max(j));
            }
        }
    }
    (x1 + 1 - x0, y1 + 1 - y0, x0, y0)
}

/// A circle in a square image, and a square mask's disc, stay circles on a 16:9 grid (and a
/// 9:16 one): fitted and centred, the bands beside them fluid. They used to be stretched into
/// 130x73 ellipses at 320x180.
#[test]
fn images_and_masks_keep_their_shape_on_grids_of_another_aspect() {
    let side = 64;
    let px: Vec<bool> = (0..side * side)
        .map(|k| {
            let (x, y) = ((k % side) as f32 + 0.5, (k / side) as f32 + 0.5);
            (x - 32.0).hypot(y - 32.0) <= 24.0
        })
        .collect();
    let square = Mask::from_pixels(&px, side, side, side, side).unwrap();
    for (w, h) in [(320, 180), (180, 320)] {
        let from_image = Mask::from_pixels(&px, side, side, w, h).unwrap();
        let resampled = square.resampled(w, h);
        for m in [&from_image, &resampled] {
            let (bw, bh, left, bottom) = bounds(m);
            let d = w.min(h) * 48 / 64;
            assert!(bw.abs_diff(bh) <= 1, "{w}x{h}: a {bw}x{bh} ellipse");
            assert!(bw.abs_diff(d) <= 2, "{w}x{h}: {bw} cells across, not {d}");
            // Centred.
            assert!((2 * left + bw).abs_diff(w) <= 2, "{w}x{h}: left {left}");
            assert!(
                (2 * bottom + bh).abs_diff(h) <= 2,
                "{w}x{h}: bottom {bottom}"
            );
        }
        assert!(!square.fills(w, h));
        // The old stretch, for old states (state version 10's migration).
        let (bw, bh, ..) = bounds(&square.stretched(w, h));
        assert!(bw.abs_diff(bh) > 40, "stretched: {bw}x{bh}");
    }
    // A grid of the same shape (to within a cell) is filled, as before.
    let m = Mask::layout(Layout::Pillars, 455, 256);
    for (w, h) in [(228, 128), (227, 128), (910, 512)] {
        assert!(m.fills(w, h), "{w}x{h}");
        assert_eq!(m.resampled(w, h), m.stretched(w, h), "{w}x{h}");
    }
}
