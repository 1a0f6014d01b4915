//! The 3D liquid in its tank: the target density of a lattice, a dam break that settles.

use super::*;

/// A block of `n` particles `spacing` apart from `corner`, jittered a little (a seeded
/// generator), at rest or with small random velocities.
fn block(liquid: &mut Liquid, corner: [f32; 3], n: [usize; 3], spacing: f32, speed: f32) {
    let mut seed = 12_345u32;
    let mut next = || {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (seed >> 8) as f32 / (1u32 << 24) as f32 - 0.5
    };
    for i in 0..n[0] {
        for j in 0..n[1] {
            for k in 0..n[2] {
                let p = [
                    corner[0] + (i as f32 + 0.5 + 0.2 * next()) * spacing,
                    corner[1] + (j as f32 + 0.5 + 0.2 * next()) * spacing,
                    corner[2] + (k as f32 + 0.5 + 0.2 * next()) * spacing,
                ];
                let v = [speed * next(), speed * next(), speed * next()];
                assert!(liquid.add(p, v, [1.0; 3]));
            }
        }
    }
}

/// A cubic lattice 6 cm apart has the default target density inside: the target means
/// "particles 6 cm apart" (the kernel sum on a lattice, self included, is 1.098 times 1/0.06³).
#[test]
fn a_lattice_at_rest_is_at_the_target_density() {
    let knobs = Knobs::default();
    let spacing = 0.06;
    let mut liquid = Liquid::new([1.0, 1.0, 1.0]);
    let n = (1.0 / spacing) as usize;
    block(&mut liquid, [0.0; 3], [n, n, n], spacing, 0.0);
    let knobs = Knobs {
        gravity: [0.0; 3],
        ..knobs
    };
    liquid.step(&knobs, 1e-6);
    // Particles well inside (two radii from every wall).
    let inside: Vec<f32> = liquid
        .pos
        .iter()
        .zip(&liquid.density)
        .filter(|(p, _)| {
            p.iter()
                .all(|&x| x > 2.0 * knobs.radius && x < 1.0 - 2.0 * knobs.radius)
        })
        .map(|(_, d)| d[0])
        .collect();
    assert!(inside.len() > 100, "{}", inside.len());
    let mean = inside.iter().sum::<f32>() / inside.len() as f32;
    let error = (mean - knobs.target_density) / knobs.target_density;
    eprintln!(
        "lattice density {mean} against {}: {error:+.4}",
        knobs.target_density
    );
    assert!(error.abs() < 0.005, "{error}");
    let neighbours = liquid.neighbours_mean(knobs.radius);
    assert!((20.0..40.0).contains(&neighbours), "{neighbours}");
}

/// The 3D dam break: a block of liquid against one end of the tank falls and spreads. After 5
/// simulated seconds the median particle's density is within 3 % of the target, the kinetic
/// energy is under 1 % of the potential energy released, every particle is in the tank and
/// none was lost.
#[test]
fn a_dam_break_settles() {
    let knobs = Knobs::default();
    let size = [0.9, 1.0, 0.48];
    let mut liquid = Liquid::new(size);
    block(&mut liquid, [0.0; 3], [8, 14, 8], 0.06, 0.0);
    let count = liquid.len();
    let start_energy = liquid.potential_energy(knobs.gravity);
    let steps = (5.0 / SUBSTEP_S) as usize;
    for _ in 0..steps {
        liquid.step(&knobs, SUBSTEP_S);
    }
    assert_eq!(liquid.len(), count);
    assert!(
        liquid
            .pos
            .iter()
            .all(|p| (0..3).all(|c| p[c] >= 0.0 && p[c] <= size[c])),
        "a particle left the tank"
    );
    let released = start_energy - liquid.potential_energy(knobs.gravity);
    let kinetic = liquid.kinetic_energy();
    let error = liquid.density_error(knobs.target_density);
    let top = liquid.pos.iter().map(|p| p[1]).fold(0.0f32, f32::max);
    eprintln!(
        "{count} particles: density error {error:+.4}, kinetic {kinetic:.4} J of {released:.2} J \
         released, surface at {top:.3} m"
    );
    assert!(released > 0.0);
    assert!(
        error.abs() < 0.03,
        "median density {error:+.4} from the target"
    );
    assert!(
        kinetic < 0.01 * released,
        "kinetic {kinetic} of {released} released"
    );
    // It spread over the floor and kept its volume: 896 particles 6 cm apart over 0.9 x 0.48 m
    // make a pool 0.45 m deep (the top particles a little below the surface).
    assert!((0.40..0.50).contains(&top), "surface at {top}");
    // Nothing sticks to the walls: the walls push and never pull, so no layer of particles
    // lies on them (without the walls' terms a tenth of the particles lay on the floor).
    let on_walls = liquid
        .pos
        .iter()
        .filter(|p| (0..3).any(|c| p[c] < 0.005 || p[c] > size[c] - 0.005))
        .count();
    assert!(
        on_walls * 100 < count,
        "{on_walls} of {count} particles on the walls"
    );
    // With DYEFLOW_DUMP=DIR, the settled pool seen from the side (the docs' picture of it).
    if let Ok(dir) = std::env::var("DYEFLOW_DUMP") {
        side_view(&liquid, &format!("{dir}/liquid3d_side.png"));
    }
}

/// A side view of `liquid` as a PNG at `path`: the particles seen along z, each a dot 3
/// pixels wide (2.5 mm pixels, brighter where more lie behind each other), the tank's walls in
/// grey.
fn side_view(liquid: &Liquid, path: &str) {
    const PX: f32 = 0.0025;
    let size = liquid.size();
    let (w, h) = ((size[0] / PX) as usize + 3, (size[1] / PX) as usize + 3);
    let mut count = vec![0u32; w * h];
    for p in &liquid.pos {
        let (x, y) = ((p[0] / PX) as usize + 1, (p[1] / PX) as usize + 1);
        for dy in 0..3 {
            for dx in 0..3 {
                let (x, y) = ((x + dx).min(w - 1), (y + dy).min(h - 1));
                count[(h - 1 - y) * w + x] += 1;
            }
        }
    }
    let mut rgb: Vec<u8> = count
        .iter()
        .flat_map(|&c| {
            let v = (c as f32 / 3.0).min(1.0);
            [
                (10.0 + 150.0 * v) as u8,
                (14.0 + 200.0 * v) as u8,
                (24.0 + 231.0 * v) as u8,
            ]
        })
        .collect();
    let mut grey = |x: usize, y: usize| {
        rgb[(y * w + x) * 3..(y * w + x) * 3 + 3].copy_from_slice(&[150; 3]);
    };
    for y in 0..h {
        grey(0, y);
        grey(w - 1, y);
    }
    for x in 0..w {
        grey(x, h - 1);
    }
    let file = std::fs::File::create(path).expect("a file for the side view");
    let mut e = png::Encoder::new(file, w as u32, h as u32);
    e.set_color(png::ColorType::Rgb);
    e.write_header()
        .and_then(|mut w| w.write_image_data(&rgb))
        .expect("the side view written");
}
