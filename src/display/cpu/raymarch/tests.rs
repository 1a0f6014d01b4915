//! The ray march against known answers: Snell through a ball of water, Beer-Lambert through
//! pools of two depths, the same light on any thread count.
use super::*;
use crate::display::volume::{Camera, Tank};

/// A cube volume of `n`³ voxels of `voxel` m whose density is `f` of the voxel centre's
/// position (m, tank frame), with dye `dye` times the density.
fn volume(n: usize, voxel: f32, dye: V3, f: impl Fn(V3) -> f32) -> Volume {
    let mut v = Volume::default();
    v.clear([n; 3], voxel);
    for z in 0..n {
        for y in 0..n {
            for x in 0..n {
                let p = [x, y, z].map(|a| (a as f32 + 0.5) * voxel);
                let d = f(p);
                let i = v.index(x, y, z);
                v.density[i] = d;
                v.dye[i] = scale(dye, d);
            }
        }
    }
    v.finish();
    v
}

fn scene(size: f32) -> Scene {
    let tank = Tank::standing([size; 3], 0.0);
    Scene {
        camera: Camera::orbit(tank.centre(), 0.0, 30.0, 3.0, 40.0),
        tank,
        sun: normalize_or([0.3, 1.0, 0.2], [0.0, 1.0, 0.0]),
    }
}

/// Where a ray from `o` along `d` (world) lands on the floor after the liquid: the surface,
/// the crossing, and on in a straight line; and the bulk liquid it crossed (m).
fn landing(vol: &Volume, scene: &Scene, o: V3, d: V3) -> (V3, f32) {
    let shadow = Shadow::default();
    let view = View {
        vol,
        scene,
        balls: &[],
        shadow: &shadow,
        dims: vol.dims.map(|x| x as f32),
        pixel: 1e-3,
    };
    let tank = &scene.tank;
    let ray = Ray {
        origin: scale(tank.to_local(o), 1.0 / vol.voxel),
        dir: tank.dir_to_local(d),
    };
    let (t0, t1, axis) = slab(&ray, view.dims).expect("the ray meets the tank");
    let (t, n) = view
        .surface(&ray, t0, t1, axis)
        .expect("the ray meets the liquid");
    let bent = refract(ray.dir, n, 1.0 / IOR).expect("entering bends");
    let c = view.cross(Ray {
        origin: ray.at(t),
        dir: bent,
    });
    let p = tank.to_world(scale(c.exit, vol.voxel));
    let dir = tank.dir_to_world(c.dir);
    let s = -p[1] / dir[1];
    (add(p, scale(dir, s)), c.mass)
}

/// A ball of water bends a vertical ray twice, by Snell's law at each crossing: the floor
/// point seen through it is where the exact path lands, within half a voxel, and far from
/// where the unbent ray would land.
#[test]
fn a_ball_of_water_refracts_the_floor_by_snell() {
    let (n, voxel) = (64, 0.02);
    let (centre, radius) = ([0.64; 3], 0.32);
    let vol = volume(n, voxel, [1.0; 3], |p| {
        let r = dot(sub(p, centre), sub(p, centre)).sqrt();
        // A ramp four voxels wide through 0.5 at the radius (as smooth as a splatted
        // liquid's surface).
        (0.5 + (radius - r) / (4.0 * voxel)).clamp(0.0, 1.0)
    });
    let scene = scene(n as f32 * voxel);
    // The ball's centre in the world: the tank's bottom centre is the origin.
    let c = [0.0, centre[1], 0.0];
    for b in [0.08f32, 0.16, 0.24] {
        let o = [b, 3.0, 0.0];
        let down = [0.0, -1.0, 0.0];
        let (seen, _) = landing(&vol, &scene, o, down);
        // The exact path.
        let top = [b, c[1] + (radius * radius - b * b).sqrt(), 0.0];
        let n1 = scale(sub(top, c), 1.0 / radius);
        let d1 = refract(down, n1, 1.0 / IOR).unwrap();
        let chord = -2.0 * dot(sub(top, c), d1);
        let bottom = add(top, scale(d1, chord));
        let n2 = scale(sub(bottom, c), 1.0 / radius);
        let d2 = refract(d1, scale(n2, -1.0), IOR).unwrap();
        let want = add(bottom, scale(d2, -bottom[1] / d2[1]));
        let err = (seen[0] - want[0]).hypot(seen[2] - want[2]);
        eprintln!(
            "offset {b}: lands at {:.4}, exactly {:.4}",
            seen[0], want[0]
        );
        assert!(err < 0.5 * voxel, "offset {b}: {seen:?} against {want:?}");
        assert!((want[0] - b).abs() > 0.05, "the ball bends the ray visibly");
    }
}

/// Absorption follows depth: straight down through a pool of red dye, the bulk liquid
/// crossed is the pool's depth (within the surface's smoothing), 20 cm more of it is 20 cm
/// more (to a quarter voxel), and the light let through falls by Beer-Lambert's factor for
/// those 20 cm.
#[test]
fn absorption_follows_depth() {
    let (n, voxel) = (48, 0.02);
    let mut passed = Vec::new();
    let mut masses = Vec::new();
    for depth in [0.2f32, 0.4] {
        let vol = volume(n, voxel, [1.0, 0.0, 0.0], |p| {
            (0.5 + (depth - p[1]) / (2.0 * voxel)).clamp(0.0, 1.0)
        });
        let scene = scene(n as f32 * voxel);
        let (_, mass) = landing(&vol, &scene, [0.05, 2.0, 0.03], [0.0, -1.0, 0.0]);
        assert!(
            (mass - depth).abs() < 1.5 * voxel,
            "crossed {mass} m of a pool {depth} m deep"
        );
        passed.push(transmittance(mass, [mass, 0.0, 0.0]));
        masses.push(mass);
    }
    let more = masses[1] - masses[0];
    assert!(
        (more - 0.2).abs() < 0.25 * voxel,
        "20 cm more crossed {more} m more"
    );
    let [shallow, deep] = [passed[0], passed[1]];
    // Red dye lets red through (water takes a little), and takes green.
    assert!(shallow[0] > 0.85 && shallow[1] < 0.7, "{shallow:?}");
    for c in 0..3 {
        let k = WATER[c] + if c == 0 { 0.0 } else { DYE };
        let want = (-k * 0.2).exp();
        let got = deep[c] / shallow[c];
        assert!(
            (got - want).abs() < 0.02 * want,
            "channel {c}: {got} against {want}"
        );
    }
}

/// The light is finite and does not depend on the thread count; an empty volume shows the
/// floor and the sky (bright below the horizon where the sun lights the floor, dark above).
#[test]
fn the_light_is_the_same_on_any_thread_count() {
    let vol = volume(32, 0.04, [0.2, 0.6, 1.0], |p| {
        (0.5 + (0.4 - p[1]) / 0.08).clamp(0.0, 1.0)
    });
    let scene = scene(32.0 * 0.04);
    let mut frames = Vec::new();
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let mut m = RayMarch::default();
        m.draw(
            &vol,
            (&scene, &[]),
            (96, 54),
            Quality {
                scale: 1.0,
                ..Quality::RENDER
            },
            &pool,
        );
        assert_eq!(m.size, (96, 54));
        assert!(
            m.planes
                .iter()
                .flatten()
                .all(|v| v.is_finite() && *v >= 0.0)
        );
        frames.push(m.planes.clone());
    }
    assert_eq!(frames[0], frames[1]);
    let empty = volume(8, 0.16, [1.0; 3], |_| 0.0);
    let level = Scene {
        camera: Camera::orbit(scene.tank.centre(), 0.0, 0.0, 3.0, 40.0),
        ..scene
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let mut m = RayMarch::default();
    m.draw(
        &empty,
        (&level, &[]),
        (64, 36),
        Quality {
            scale: 1.0,
            ..Quality::RENDER
        },
        &pool,
    );
    let luma = |x: usize, y: usize| {
        let i = y * 64 + x;
        m.planes[0][i] + m.planes[1][i] + m.planes[2][i]
    };
    // Rows bottom first: the floor at the bottom, the sky at the top.
    assert!(
        luma(4, 1) > 3.0 * luma(4, 34),
        "{} {}",
        luma(4, 1),
        luma(4, 34)
    );
}

/// The filtered checker is the checker where the filter is narrow (light and dark squares
/// alternate), and its mean where the filter covers many squares.
#[test]
fn the_floor_checker_is_filtered_by_the_footprint() {
    let sharp = |x: f32, z: f32| filtered_checker(x, z, 1e-3);
    let (a, b) = (sharp(0.25, 0.25), sharp(1.25, 0.25));
    assert!((a - b).abs() > 0.99, "{a} {b}");
    assert!((sharp(1.25, 1.25) - a).abs() < 1e-3);
    for (x, z) in [(0.3, 0.7), (5.1, -2.4), (-7.7, 3.3)] {
        let wide = filtered_checker(x, z, 16.0);
        assert!((wide - 0.5).abs() < 0.05, "{wide}");
    }
}

/// A tilted tank rests on the floor (its lowest corner at 0, none below), whatever the tilt,
/// upside down included; a ray with a broken origin or direction meets nothing.
#[test]
fn a_tilted_tank_rests_on_the_floor_and_broken_rays_meet_nothing() {
    let size = [1.6, 0.9, 0.9];
    for tilt in [0.0f32, 15.0, -40.0, 90.0, 180.0, f32::NAN] {
        let tank = Tank::standing(size, tilt);
        let ys: Vec<f32> = (0..8)
            .map(|k| {
                let p = [k & 1, (k >> 1) & 1, (k >> 2) & 1].map(|b| b as f32);
                tank.to_world([p[0] * size[0], p[1] * size[1], p[2] * size[2]])[1]
            })
            .collect();
        let low = ys.iter().copied().fold(f32::INFINITY, f32::min);
        assert!(low.abs() < 1e-5, "tilt {tilt}: lowest corner at {low}");
    }
    for ray in [
        Ray {
            origin: [f32::NAN, 1.0, 1.0],
            dir: [0.0, -1.0, 0.0],
        },
        Ray {
            origin: [1.0, 5.0, 1.0],
            dir: [f32::NAN, -1.0, 0.0],
        },
    ] {
        assert!(slab(&ray, [10.0; 3]).is_none());
    }
}
