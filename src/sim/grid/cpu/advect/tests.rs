use super::*;
use crate::kernels::math::bilerp;

#[test]
fn uniform_flow_moves_dye_by_known_cells() {
    // 4x2 grid, u = 0.125 canvas/s everywhere (walls aside), dt = 1, 2 rows: a point moves
    // 0.25 cells (the midpoint sees the same uniform velocity). Dye cell 2 traces back to
    // 1.75: 0.25 * dye[1] + 0.75 * dye[2].
    let g = Grid { w: 4, h: 2 };
    let u = [0.0, 0.125, 0.125, 0.125, 0.0, 0.0, 0.125, 0.125, 0.125, 0.0];
    let v = [0.0; 12];
    let dye = [0.0, 4.0, 8.0, 0.0, 0.0, 4.0, 8.0, 0.0];
    let mut out = [vec![0.0; 8], vec![0.0; 8], vec![0.0; 8]];
    let [a, b, c] = &mut out;
    advect_dye(
        g,
        1,
        &u,
        &v,
        [&dye, &dye, &dye],
        [a, b, c],
        1.0,
        1.0,
        100.0,
        None,
    );
    assert!(
        (out[0][2] - (0.25 * 4.0 + 0.75 * 8.0)).abs() < 1e-6,
        "{:?}",
        out[0]
    );
    // The same through the finer-grid path (scale 2 -> each dye cell half a sim cell).
    let dye2: Vec<f32> = (0..32).map(|c| ((c % 8) as f32).min(5.0)).collect();
    let mut out2 = [vec![0.0; 32], vec![0.0; 32], vec![0.0; 32]];
    let [a, b, c] = &mut out2;
    advect_dye(
        g,
        2,
        &u,
        &v,
        [&dye2, &dye2, &dye2],
        [a, b, c],
        1.0,
        1.0,
        100.0,
        None,
    );
    // Row 1, dye cell 3 (sim x 1.75, u = 0.125 there): moves 0.25 sim cells = 0.5 dye
    // cells, so it reads dye index 2.5: (2 + 3) / 2.
    assert!((out2[0][8 + 3] - 2.5).abs() < 1e-6, "{:?}", &out2[0][8..16]);
}

#[test]
fn sampler_matches_generic_bilerp() {
    let f: Vec<f32> = (0..35).map(|x| (x * 7 % 11) as f32).collect();
    for (nx, ny) in [(7, 5), (1, 35), (35, 1), (5, 7)] {
        let s = Sampler::new(&f, nx, ny);
        for (x, y) in [
            (0.0, 0.0),
            (6.0, 4.0),
            (3.3, 2.7),
            (-5.0, 9.0),
            (6.5, -1.0),
            (5.99, 3.999),
        ] {
            assert_eq!(s.at(x, y), bilerp(&f, nx, ny, x, y), "{nx}x{ny} ({x}, {y})");
        }
    }
}

/// The temperature mended on the dye's traces near solids (dye scale 1) is bit for bit
/// what its own re-trace gives, in every fluid cell near a solid: traces with no solid
/// corner, with one, and with more.
#[test]
fn heat_on_the_dyes_traces_matches_its_own() {
    let g = Grid { w: 24, h: 16 };
    let (w, h) = (g.w, g.h);
    // A block of solid cells and a swirling flow strong enough to reach into it.
    let solid: Vec<bool> = (0..w * h)
        .map(|c| (9..14).contains(&(c % w)) && (5..10).contains(&(c / w)))
        .collect();
    let u: Vec<f32> = (0..(w + 1) * h)
        .map(|k| (((k * 37) % 23) as f32 / 11.0 - 1.0) * 0.4)
        .collect();
    let v: Vec<f32> = (0..w * (h + 1))
        .map(|k| (((k * 53) % 19) as f32 / 9.0 - 1.0) * 0.4)
        .collect();
    let field = |seed: usize| -> Vec<f32> {
        (0..w * h)
            .map(|c| {
                if solid[c] {
                    0.0
                } else {
                    ((c * seed) % 17) as f32 / 4.0 - 1.0
                }
            })
            .collect()
    };
    let (heat, r, gr, b) = (field(7), field(3), field(5), field(11));
    let near = crate::sim::obstacles::near::NearSolids::new(&solid, w);
    let cells = near.within(4.0);
    assert!(cells.len() > 50, "{} cells near the block", cells.len());
    let (dt, decay, max) = (0.5, 0.9, 1.5);
    let mut own = vec![9.0f32; w * h];
    scalar_near_solids(g, &u, &v, &heat, &mut own, (&solid, cells), dt, decay, max);
    let mut mended = vec![9.0f32; w * h];
    let mut dye_out = [
        vec![0.0f32; w * h],
        vec![0.0f32; w * h],
        vec![0.0f32; w * h],
    ];
    let [o0, o1, o2] = &mut dye_out;
    let carried = NearHeat {
        src: &heat,
        out: &mut mended,
        decay,
        max,
    };
    let dye_in = [&r[..], &gr[..], &b[..]];
    advect_dye_near_solids(
        g,
        1,
        &u,
        &v,
        dye_in,
        [o0, o1, o2],
        cells,
        &solid,
        dt,
        0.95,
        10.0,
        Some(carried),
    );
    let mut kinds = [0usize; 3];
    for &c in cells {
        let c = c as usize;
        assert_eq!(own[c].to_bits(), mended[c].to_bits(), "cell {c}");
        let flow = Flow::new(g, &u, &v);
        let (bx, by) = flow.depart_centre(c % w, c / w, dt * h as f32);
        let sampler = Sampler::new(&heat, w, h);
        let solids = sampler.corners(sampler.taps(bx, by));
        kinds[solids.iter().filter(|&&(k, _)| solid[k]).count().min(2)] += 1;
    }
    assert!(
        kinds.iter().all(|&n| n > 0),
        "corner cases covered: {kinds:?}"
    );
}
