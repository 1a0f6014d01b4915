// sph_light.wgsl: the particle fluid's light (sim/sph/light.rs, `Light::draw`), operation for
// operation, into the field the picture reads as its dye. Units: particles in box units; the
// field is L.w x L.h cells, rows bottom first, L.scale cells per box unit. Particles past the
// field's edges light only the cells inside it.
//   light_splat: one thread per particle adds its footprint to five fixed-point planes (red,
//     green, blue, coverage sum, largest coverage; LIGHT_UNITS a unit, with atomics, so the
//     sums do not depend on the order): Surface, the bump (1 - r²/R²)² x L.norm times the
//     particle's colour; Discs, a disc's coverage a (a one-cell ramp at L.radius) times it.
//   light_resolve: one thread per cell writes the field as RGBA (alpha 0): the sums, and for
//     discs the colours scaled by largest over summed coverage, so a disc is as bright alone
//     as in a crowd.

struct LightField {
    n: u32,         // particles
    w: u32,         // cells across and up
    h: u32,
    style: u32,     // 0: surface, 1: discs
    speed: u32,     // 1: coloured by speed (the speed gradient), 0: by their own colour
    scale: f32,     // cells per box unit
    reach: f32,     // cells a particle's light reaches
    radius: f32,    // a disc's radius, cells
    norm: f32,      // the surface bump's weight at its centre
    _p0: u32,
    _p1: u32,
    _p2: u32,
}

@group(0) @binding(0) var<uniform> L: LightField;
@group(0) @binding(1) var<storage, read> pos: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read> vel: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read> color: array<vec4<f32>>;
// Five planes of L.w x L.h fixed-point values: red, green, blue, coverage sum, largest.
@group(0) @binding(4) var<storage, read_write> acc: array<atomic<u32>>;
// The field, RGBA per cell.
@group(0) @binding(5) var<storage, read_write> field: array<vec4<f32>>;

// Threads per workgroup (sph::gpu::SW).
const SW: u32 = 256u;
// Fixed-point units of light per unit (sph::gpu::light::LIGHT_UNITS).
const LIGHT_UNITS: f32 = 16384.0;
// The brightest colour a particle adds, per channel (notes' colours are at most 1): keeps a
// cell's fixed-point sums below 2^32 for up to 65 536 coincident particles (4 x 16 384 units
// each), more than the plugin's budget of 50 000.
const MAX_COLOUR: f32 = 4.0;
// sph::cpu::light::GRADIENT_SPEED: box units per second from blue to red.
const GRADIENT_SPEED: f32 = 8.0;

fn fixed(x: f32) -> u32 {
    return u32(x * LIGHT_UNITS + 0.5);
}

// The speed gradient (sph::cpu::light::STOPS): deep blue at rest, cyan, white, red at t = 1.
fn speed_gradient(t_in: f32) -> vec3<f32> {
    var stops = array<vec3<f32>, 4>(
        vec3(0.03, 0.15, 0.9),
        vec3(0.1, 0.8, 0.9),
        vec3(1.0, 1.0, 1.0),
        vec3(1.0, 0.15, 0.05),
    );
    let t = clamp(t_in, 0.0, 1.0) * 3.0;
    let i = min(u32(t), 2u);
    let f = t - f32(i);
    return stops[i] + (stops[i + 1u] - stops[i]) * f;
}

fn add_light(k: u32, c: vec3<f32>) {
    let plane = L.w * L.h;
    atomicAdd(&acc[k], fixed(c.x));
    atomicAdd(&acc[plane + k], fixed(c.y));
    atomicAdd(&acc[2u * plane + k], fixed(c.z));
}

@compute @workgroup_size(SW)
fn light_splat(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= L.n) {
        return;
    }
    let p = pos[i] * L.scale;
    // Far outside (or not a number): no light in the field.
    if (!(abs(p.x) < 1.0e6 && abs(p.y) < 1.0e6)) {
        return;
    }
    var c: vec3<f32>;
    if (L.speed != 0u) {
        c = speed_gradient(length(vel[i]) / GRADIENT_SPEED);
    } else {
        c = clamp(color[i].xyz, vec3(0.0), vec3(MAX_COLOUR));
    }
    let ri = i32(ceil(L.reach));
    let cx = i32(floor(p.x));
    let cy = i32(floor(p.y));
    let inv = 1.0 / (L.reach * L.reach);
    let plane = L.w * L.h;
    for (var j = max(cy - ri, 0); j <= min(cy + ri, i32(L.h) - 1); j++) {
        let dy = f32(j) + 0.5 - p.y;
        for (var x = max(cx - ri, 0); x <= min(cx + ri, i32(L.w) - 1); x++) {
            let dx = f32(x) + 0.5 - p.x;
            let q = 1.0 - (dx * dx + dy * dy) * inv;
            if (q <= 0.0) {
                continue;
            }
            let k = u32(j) * L.w + u32(x);
            if (L.style == 0u) {
                add_light(k, c * (q * q * L.norm));
            } else {
                // q = 1 - r²/reach²: back to the distance, then a one-cell ramp.
                let d = L.reach * sqrt(max(1.0 - q, 0.0));
                let a = clamp(L.radius + 0.5 - d, 0.0, 1.0);
                if (a > 0.0) {
                    add_light(k, c * a);
                    atomicAdd(&acc[3u * plane + k], fixed(a));
                    atomicMax(&acc[4u * plane + k], fixed(a));
                }
            }
        }
    }
}

@compute @workgroup_size(SW)
fn light_resolve(@builtin(global_invocation_id) id: vec3<u32>) {
    let plane = L.w * L.h;
    let k = id.x;
    if (k >= plane) {
        return;
    }
    var rgb = vec3(
        f32(atomicLoad(&acc[k])),
        f32(atomicLoad(&acc[plane + k])),
        f32(atomicLoad(&acc[2u * plane + k])),
    ) / LIGHT_UNITS;
    if (L.style == 1u) {
        let sum = atomicLoad(&acc[3u * plane + k]);
        if (sum > 0u) {
            rgb *= f32(atomicLoad(&acc[4u * plane + k])) / f32(sum);
        }
    }
    field[k] = vec4(rgb, 0.0);
}
