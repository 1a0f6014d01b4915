// particles.wgsl: PixelFlow's particles, one thread per slot (sim/grid/particles.rs has the model).
//   advect_particles: each living particle moves by the midpoint rule through the staggered
//     velocity (p' = p + dt v(p + dt/2 v(p)), bilinear from the faces), bounces off the walls
//     (mirrored) and the solid cells (mirrored off the face it entered through, or held back
//     along that axis), and ages by dt. Mirrors cpu/particles.rs (`advect`).
//   draw_particles: each living particle adds its light (colour x glow x fade) to the 2x2
//     pixels around it, in fixed-point units with atomics (the sum does not depend on the
//     order, so it equals the CPU's), by display/points.rs's footprint and units. Mirrors
//     cpu/particles.rs (`draw`).
//   cull_particles: a living particle inside a solid cell (new obstacles) ends.
// Positions are in canvas units (x right in [0, w/h], y up in [0, 1]).

struct Particle {
    pos: vec2<f32>,
    age: f32,
    life: f32,
    color: vec3<f32>,
    pad: f32,
}

@group(0) @binding(0) var<uniform> P: GridUniforms;
@group(0) @binding(1) var<storage, read> u: array<f32>;
@group(0) @binding(2) var<storage, read> v: array<f32>;
@group(0) @binding(3) var<storage, read> solid: array<u32>;
@group(0) @binding(4) var<storage, read_write> particles: array<Particle>;
// out_w x out_h pixels of three fixed-point units (r, g, b), rows top first.
@group(0) @binding(5) var<storage, read_write> plight: array<atomic<u32>>;

// Threads per workgroup (1D).
const PW: u32 = 256u;
// sim::grid::particles::{FADE_IN, POINT_LIGHT} and display::LIGHT_UNITS.
const FADE_IN_INV: f32 = 10.0;
const LIGHT_UNITS: f32 = 256.0;
const POINT_LIGHT: f32 = 4.0;

fn slot(id: vec3<u32>, groups: vec3<u32>) -> u32 {
    return id.x + id.y * groups.x * PW;
}

fn sample_u(x: f32, y: f32) -> f32 {
    let t = taps(P.w + 1u, P.h, x, y);
    return blend4(u[t.k], u[t.k + t.dx], u[t.k + t.dy], u[t.k + t.dy + t.dx], t);
}

fn sample_v(x: f32, y: f32) -> f32 {
    let t = taps(P.w, P.h + 1u, x, y);
    return blend4(v[t.k], v[t.k + t.dx], v[t.k + t.dy], v[t.k + t.dy + t.dx], t);
}

// Velocity at canvas point p.
fn velocity(p: vec2<f32>) -> vec2<f32> {
    let n = f32(P.h);
    let x = p.x * n - 0.5;
    let y = p.y * n - 0.5;
    return vec2(sample_u(x + 0.5, y), sample_v(x, y + 0.5));
}

fn aspect() -> f32 {
    return f32(P.w) / f32(P.h);
}

fn is_solid(x: f32, y: f32) -> bool {
    let n = f32(P.h);
    let i = min(u32(x * n), P.w - 1u);
    let j = min(u32(y * n), P.h - 1u);
    return solid[j * P.w + i] != 0u;
}

fn mirror(x: f32, mx: f32) -> f32 {
    var y = x;
    if (x < 0.0) {
        y = -x;
    } else if (x > mx) {
        y = 2.0 * mx - x;
    }
    return clamp(y, 0.0, mx);
}

// The face of the cell containing `to` that a move from `from` entered through.
fn face(from_: f32, to: f32) -> f32 {
    let n = f32(P.h);
    let cell = floor(to * n);
    return select((cell + 1.0) / n, cell / n, to > from_);
}

fn bounce(old: vec2<f32>, new_: vec2<f32>) -> vec2<f32> {
    // NaN or infinite: stay.
    if (!(abs(new_.x) <= 3.4e38 && abs(new_.y) <= 3.4e38)) {
        return old;
    }
    let a = aspect();
    var x = mirror(new_.x, a);
    var y = mirror(new_.y, 1.0);
    if (is_solid(x, old.y)) {
        let m = clamp(2.0 * face(old.x, x) - x, 0.0, a);
        x = select(m, old.x, is_solid(m, old.y));
    }
    if (is_solid(x, y)) {
        let m = clamp(2.0 * face(old.y, y) - y, 0.0, 1.0);
        y = select(m, old.y, is_solid(x, m));
    }
    return vec2(x, y);
}

@compute @workgroup_size(PW)
fn advect_particles(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) g: vec3<u32>) {
    let k = slot(id, g);
    if (k >= arrayLength(&particles)) {
        return;
    }
    var p = particles[k];
    if (!(p.age < p.life)) {
        return;
    }
    let v0 = velocity(p.pos);
    let half = 0.5 * P.dt;
    let mid = vec2(p.pos.x + half * v0.x, p.pos.y + half * v0.y);
    let m = velocity(mid);
    let moved = vec2(fma(P.dt, m.x, p.pos.x), fma(P.dt, m.y, p.pos.y));
    p.pos = bounce(p.pos, moved);
    p.age = p.age + P.dt;
    particles[k] = p;
}

@compute @workgroup_size(PW)
fn cull_particles(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) g: vec3<u32>) {
    let k = slot(id, g);
    if (k >= arrayLength(&particles)) {
        return;
    }
    let p = particles[k];
    if (p.age < p.life && is_solid(p.pos.x, p.pos.y)) {
        particles[k].life = 0.0;
    }
}

fn fade(age: f32, life: f32) -> f32 {
    if (!(age < life)) {
        return 0.0;
    }
    let t = age / life;
    return min(t * FADE_IN_INV, 1.0) * (1.0 - t);
}

fn add_light(i: i32, j: i32, wt: f32, light: vec3<f32>) {
    let width = P.out_w;
    let height = P.out_h;
    if (i < 0 || j < 0 || u32(i) >= width || u32(j) >= height || !(wt > 0.0)) {
        return;
    }
    let idx = 3u * (u32(j) * width + u32(i));
    atomicAdd(&plight[idx], u32(light.x * wt * LIGHT_UNITS + 0.5));
    atomicAdd(&plight[idx + 1u], u32(light.y * wt * LIGHT_UNITS + 0.5));
    atomicAdd(&plight[idx + 2u], u32(light.z * wt * LIGHT_UNITS + 0.5));
}

@compute @workgroup_size(PW)
fn draw_particles(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) g: vec3<u32>) {
    let k = slot(id, g);
    if (k >= arrayLength(&particles)) {
        return;
    }
    let p = particles[k];
    if (!(p.age < p.life)) {
        return;
    }
    let kk = P.glow * POINT_LIGHT * fade(p.age, p.life);
    let light = vec3(kk * p.color.x, kk * p.color.y, kk * p.color.z);
    let sx = f32(P.out_w) / max(aspect(), 1e-6);
    let sy = f32(P.out_h);
    let x = p.pos.x * sx - 0.5;
    let y = (1.0 - p.pos.y) * sy - 0.5;
    let x0 = floor(x);
    let y0 = floor(y);
    let fx = x - x0;
    let fy = y - y0;
    let i = i32(x0);
    let j = i32(y0);
    add_light(i, j, (1.0 - fx) * (1.0 - fy), light);
    add_light(i + 1, j, fx * (1.0 - fy), light);
    add_light(i, j + 1, (1.0 - fx) * fy, light);
    add_light(i + 1, j + 1, fx * fy, light);
}
