// splat.wgsl: add dye and momentum with Gaussian (or block) footprints, or pull towards a point.
// Mirrors cpu/splat.rs: splats are sanitised and converted to cell units on the CPU
// (CellSplat), then applied here in order, each element accumulating them one by one.
// Units: positions and radii in simulation cells, force in canvas/s, dye per channel.
// Boundary: wall faces are never written; results are limited to MAX_SPEED / max_dye.

struct Splat {
    x: f32,
    y: f32,
    r: f32,
    reach: f32,
    dr: f32,
    dg: f32,
    db: f32,
    fx: f32,
    fy: f32,
    shape: u32,
    heat: f32,
    _p1: u32,
}

@group(0) @binding(0) var<uniform> P: GridUniforms;
@group(0) @binding(1) var<storage, read> splats: array<Splat>;
@group(0) @binding(2) var<storage, read_write> u: array<f32>;
@group(0) @binding(3) var<storage, read_write> v: array<f32>;
@group(0) @binding(4) var<storage, read_write> dye: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> heat: array<f32>;
@group(0) @binding(6) var<storage, read> solid: array<u32>;

// Shapes: 0 Gaussian, 1 block, 2 radial (Gaussian weight; the force pulls towards the centre).
// The weight is the product of two axis weights within the cut-off, as on the CPU (which
// computes the x factors once per step: `CellSplat::weight`).
fn axis_weight(s: Splat, d: f32) -> f32 {
    if (s.shape != 1u) {
        return exp_det(-(d * d) / (s.r * s.r));
    }
    return select(0.0, 1.0, abs(d) <= s.r);
}

fn weight(s: Splat, dx: f32, dy: f32) -> f32 {
    if (s.shape != 1u && fma(dx, dx, dy * dy) > s.reach * s.reach) {
        return 0.0;
    }
    return axis_weight(s, dx) * axis_weight(s, dy);
}

@compute @workgroup_size(WG, WG)
fn splat_u(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i == 0u || i >= P.w || j >= P.h) {
        return;
    }
    let y = f32(j) + 0.5;
    let idx = j * (P.w + 1u) + i;
    var x = u[idx];
    for (var n = 0u; n < P.splat_count; n++) {
        let s = splats[n];
        let dx = f32(i) - s.x;
        if (s.fx != 0.0 && abs(y - s.y) <= s.reach && abs(dx) <= s.reach) {
            let w = weight(s, dx, y - s.y);
            let add = select(s.fx * w, -s.fx * (dx / s.r) * w, s.shape == 2u);
            x = clamp(x + add, -MAX_SPEED, MAX_SPEED);
        }
    }
    u[idx] = x;
}

@compute @workgroup_size(WG, WG)
fn splat_v(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i >= P.w || j == 0u || j >= P.h) {
        return;
    }
    let y = f32(j);
    let idx = j * P.w + i;
    var x = v[idx];
    for (var n = 0u; n < P.splat_count; n++) {
        let s = splats[n];
        let dx = f32(i) + 0.5 - s.x;
        if (s.fy != 0.0 && abs(y - s.y) <= s.reach && abs(dx) <= s.reach) {
            let dy = y - s.y;
            let w = weight(s, dx, dy);
            let add = select(s.fy * w, -s.fy * (dy / s.r) * w, s.shape == 2u);
            x = clamp(x + add, -MAX_SPEED, MAX_SPEED);
        }
    }
    v[idx] = x;
}

@compute @workgroup_size(WG, WG)
fn splat_dye(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i >= P.dw || j >= P.dh) {
        return;
    }
    let inv = 1.0 / f32(P.dye_scale);
    let y = (f32(j) + 0.5) * inv;
    let x = (f32(i) + 0.5) * inv;
    let idx = j * P.dw + i;
    var c = dye[idx];
    for (var n = 0u; n < P.splat_count; n++) {
        let s = splats[n];
        if ((s.dr != 0.0 || s.dg != 0.0 || s.db != 0.0) && abs(y - s.y) <= s.reach
            && abs(x - s.x) <= s.reach) {
            let wgt = weight(s, x - s.x, y - s.y);
            if (wgt != 0.0) {
                c.r = min(fma(s.dr, wgt, c.r), P.max_dye);
                c.g = min(fma(s.dg, wgt, c.g), P.max_dye);
                c.b = min(fma(s.db, wgt, c.b), P.max_dye);
            }
        }
    }
    dye[idx] = c;
}

// The temperature of each simulation cell (centre at (i + 1/2, j + 1/2) cells); a solid cell
// stays at 0 (cpu splat_heat, then the solids cleared).
@compute @workgroup_size(WG, WG)
fn splat_heat(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i >= P.w || j >= P.h) {
        return;
    }
    let idx = j * P.w + i;
    if (solid[idx] != 0u) {
        heat[idx] = 0.0;
        return;
    }
    let x = f32(i) + 0.5;
    let y = f32(j) + 0.5;
    var t = heat[idx];
    for (var n = 0u; n < P.splat_count; n++) {
        let s = splats[n];
        if (s.heat != 0.0 && abs(y - s.y) <= s.reach && abs(x - s.x) <= s.reach) {
            t = clamp(fma(s.heat, weight(s, x - s.x, y - s.y), t), -MAX_HEAT, MAX_HEAT);
        }
    }
    heat[idx] = t;
}
