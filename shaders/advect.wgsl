// advect.wgsl: semi-Lagrangian advection with bilinear interpolation (Stam). Velocity faces
// trace back with Euler steps, dye cells with the midpoint rule (second order: Euler traces
// spiral outwards in rotating flow and lose dye). Dissipation is fused as on the CPU: each
// transported value is multiplied by exp(-rate dt) (vel_decay, dye_decay: computed on the CPU,
// exact for any dt, so decay is frame-rate independent), then limited to MAX_SPEED (velocity)
// or [0, max_dye] (dye). Wall faces are written 0.
// Coordinates: cell (i, j)'s centre at (i, j); u samples at (i - 1/2, j), v samples at
// (i, j - 1/2); a velocity moves v * k cells (k = dt * h). Traced points clamp to the canvas.
// Mirrors cpu/advect.rs.
// With obstacles, `advect_dye_near_solids` then takes the fluid dye cells near solids again
// (those a trace of this step's length can carry to a solid corner, nearest first) and gives
// each the bilinear mean of only the fluid corners, renormalised, so that no dye is sampled
// from inside a solid (cpu advect_dye_near_solids).

@group(0) @binding(0) var<uniform> P: GridUniforms;
@group(0) @binding(1) var<storage, read> u: array<f32>;
@group(0) @binding(2) var<storage, read> v: array<f32>;
@group(0) @binding(3) var<storage, read_write> u_out: array<f32>;
@group(0) @binding(4) var<storage, read_write> v_out: array<f32>;
@group(0) @binding(5) var<storage, read> dye: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> dye_out: array<vec4<f32>>;
// With obstacles: the fluid dye cells near solids, nearest first; near_ends[d]: how many lie
// within d dye cells (chessboard) of a solid; the solid flag of each simulation cell; the
// reduction results holding this step's largest |u| and |v|.
@group(0) @binding(7) var<storage, read> near: array<u32>;
@group(0) @binding(8) var<storage, read> near_ends: array<u32>;
@group(0) @binding(9) var<storage, read> solid: array<u32>;
@group(0) @binding(10) var<storage, read> sums: array<vec4<f32>>;
// The temperature (w x h), read and written; `solid` then holds every cell's flag (all 0
// without obstacles).
@group(0) @binding(11) var<storage, read> heat: array<f32>;
@group(0) @binding(12) var<storage, read_write> heat_out: array<f32>;

// Result slots of the largest |u| and |v| (gpu reduce::slot::SPEED_U, SPEED_V).
const SLOT_SPEED_U: u32 = 12u;
const SLOT_SPEED_V: u32 = 13u;
// The farthest a listed cell lies from a solid (cpu NearSolids::MAX_CELLS).
const NEAR_MAX_CELLS: u32 = 64u;

fn sample_u(x: f32, y: f32) -> f32 {
    let t = taps(P.w + 1u, P.h, x, y);
    return blend4(u[t.k], u[t.k + t.dx], u[t.k + t.dy], u[t.k + t.dy + t.dx], t);
}

fn sample_v(x: f32, y: f32) -> f32 {
    let t = taps(P.w, P.h + 1u, x, y);
    return blend4(v[t.k], v[t.k + t.dx], v[t.k + t.dy], v[t.k + t.dy + t.dx], t);
}

// Velocity at centre-space point (x, y).
fn flow(x: f32, y: f32) -> vec2<f32> {
    return vec2(sample_u(x + 0.5, y), sample_v(x, y + 0.5));
}

// Midpoint-rule departure point of (x, y) with local velocity v0.
fn depart(x: f32, y: f32, v0: vec2<f32>) -> vec2<f32> {
    let h = 0.5 * P.k;
    let m = flow(x - h * v0.x, y - h * v0.y);
    return vec2(x - P.k * m.x, y - P.k * m.y);
}

@compute @workgroup_size(WG, WG)
fn advect_u(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    let w = P.w;
    if (i > w || j >= P.h) {
        return;
    }
    let idx = j * (w + 1u) + i;
    if (i == 0u || i == w) {
        u_out[idx] = 0.0;
        return;
    }
    let vx = u[idx];
    let vy = 0.25 * ((v[j * w + i - 1u] + v[j * w + i]) + (v[(j + 1u) * w + i - 1u] + v[(j + 1u) * w + i]));
    // In u's own index space the face is at (i, j).
    let value = sample_u(f32(i) - P.k * vx, f32(j) - P.k * vy) * P.vel_decay;
    u_out[idx] = limit(value, -MAX_SPEED, MAX_SPEED);
}

@compute @workgroup_size(WG, WG)
fn advect_v(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    let w = P.w;
    if (i >= w || j > P.h) {
        return;
    }
    let idx = j * w + i;
    if (j == 0u || j == P.h) {
        v_out[idx] = 0.0;
        return;
    }
    let ub = (j - 1u) * (w + 1u);
    let ut = j * (w + 1u);
    let vx = 0.25 * ((u[ub + i] + u[ub + i + 1u]) + (u[ut + i] + u[ut + i + 1u]));
    let vy = v[idx];
    let value = sample_v(f32(i) - P.k * vx, f32(j) - P.k * vy) * P.vel_decay;
    v_out[idx] = limit(value, -MAX_SPEED, MAX_SPEED);
}

// The bilinear taps of the departure point of dye cell (i, j).
fn dye_taps(i: u32, j: u32) -> Taps {
    var back: vec2<f32>;
    var tx: f32;
    var ty: f32;
    if (P.dye_scale == 1u) {
        // Cell centre: the mean of opposite faces.
        let w = P.w;
        let vx = 0.5 * (u[j * (w + 1u) + i] + u[j * (w + 1u) + i + 1u]);
        let vy = 0.5 * (v[j * w + i] + v[(j + 1u) * w + i]);
        back = depart(f32(i), f32(j), vec2(vx, vy));
        tx = back.x;
        ty = back.y;
    } else {
        let inv_s = 1.0 / f32(P.dye_scale);
        let s = f32(P.dye_scale);
        let x = fma(f32(i) + 0.5, inv_s, -0.5);
        let y = fma(f32(j) + 0.5, inv_s, -0.5);
        back = depart(x, y, flow(x, y));
        tx = fma(back.x + 0.5, s, -0.5);
        ty = fma(back.y + 0.5, s, -0.5);
    }
    return taps(P.dw, P.dh, tx, ty);
}

fn limit_dye(x: vec4<f32>) -> vec4<f32> {
    return vec4(
        min(max(x.r, 0.0), P.max_dye),
        min(max(x.g, 0.0), P.max_dye),
        min(max(x.b, 0.0), P.max_dye),
        0.0,
    );
}

@compute @workgroup_size(WG, WG)
fn advect_dye(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i >= P.dw || j >= P.dh) {
        return;
    }
    let t = dye_taps(i, j);
    let a = dye[t.k];
    let b = dye[t.k + t.dx];
    let c = dye[t.k + t.dy];
    let d = dye[t.k + t.dy + t.dx];
    let fx = vec4(t.fx);
    let bottom = fma(fx, b - a, a);
    let top = fma(fx, d - c, c);
    let x = fma(vec4(t.fy), top - bottom, bottom) * P.dye_decay;
    dye_out[j * P.dw + i] = limit_dye(x);
}

// Whether dye cell k lies in a solid simulation cell.
fn dye_solid(k: u32) -> bool {
    let cell = (k / P.dw) / P.dye_scale * P.w + (k % P.dw) / P.dye_scale;
    return solid[cell] != 0u;
}

// A bilinear corner's dye and weight, added unless it is solid: (sum rgb, weight).
fn corner(acc: vec4<f32>, k: u32, wgt: f32) -> vec4<f32> {
    if (dye_solid(k)) {
        return acc;
    }
    let x = dye[k];
    return vec4(fma(wgt, x.r, acc.r), fma(wgt, x.g, acc.g), fma(wgt, x.b, acc.b), acc.w + wgt);
}

// The listed cells that a trace of this step's length (the largest face speed times dt, in
// dye cells) can carry to a solid corner, again: the mean of the fluid corners only,
// renormalised; a trace that ends among solid corners keeps the cell's own dye.
@compute @workgroup_size(LW)
fn advect_dye_near_solids(@builtin(global_invocation_id) gid: vec3<u32>,
                          @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = list_item(gid, nwg);
    let speed = max(sums[SLOT_SPEED_U].z, sums[SLOT_SPEED_V].z);
    let reach = speed * P.dt * f32(P.h) * f32(P.dye_scale);
    var within = NEAR_MAX_CELLS;
    // (NaN and infinity fail the test: every listed cell.)
    if (reach <= 1.0e30) {
        within = min(u32(ceil(min(max(reach, 0.0), f32(NEAR_MAX_CELLS)))) + 1u, NEAR_MAX_CELLS);
    }
    if (n >= near_ends[within]) {
        return;
    }
    let c = near[n];
    let t = dye_taps(c % P.dw, c / P.dw);
    var acc = vec4(0.0);
    acc = corner(acc, t.k, (1.0 - t.fx) * (1.0 - t.fy));
    acc = corner(acc, t.k + t.dx, t.fx * (1.0 - t.fy));
    acc = corner(acc, t.k + t.dy, (1.0 - t.fx) * t.fy);
    acc = corner(acc, t.k + t.dy + t.dx, t.fx * t.fy);
    var x: vec4<f32>;
    if (acc.w > 1.0e-6) {
        x = vec4(acc.rgb / acc.w * P.dye_decay, 0.0);
    } else {
        x = dye[c] * P.dye_decay;
    }
    dye_out[c] = limit_dye(x);
}

// A temperature corner's value and weight, added unless it is solid: (sum, weight).
fn heat_corner(acc: vec2<f32>, k: u32, wgt: f32) -> vec2<f32> {
    if (solid[k] != 0u) {
        return acc;
    }
    return vec2(fma(wgt, heat[k], acc.x), acc.y + wgt);
}

// The temperature of simulation cell (i, j): traced back as the dye at the simulation's
// resolution, times heat_decay, limited to +-MAX_HEAT. Solid cells hold 0; a trace takes the
// mean of only its fluid corners, renormalised, and one among solid corners only keeps the
// cell's own temperature (cpu advect_scalar).
@compute @workgroup_size(WG, WG)
fn advect_heat(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    let w = P.w;
    if (i >= w || j >= P.h) {
        return;
    }
    let idx = j * w + i;
    if (solid[idx] != 0u) {
        heat_out[idx] = 0.0;
        return;
    }
    let vx = 0.5 * (u[j * (w + 1u) + i] + u[j * (w + 1u) + i + 1u]);
    let vy = 0.5 * (v[j * w + i] + v[(j + 1u) * w + i]);
    let back = depart(f32(i), f32(j), vec2(vx, vy));
    let t = taps(w, P.h, back.x, back.y);
    let k = array<u32, 4>(t.k, t.k + t.dx, t.k + t.dy, t.k + t.dy + t.dx);
    var value: f32;
    if (solid[k[0]] + solid[k[1]] + solid[k[2]] + solid[k[3]] == 0u) {
        value = blend4(heat[k[0]], heat[k[1]], heat[k[2]], heat[k[3]], t);
    } else {
        var acc = vec2(0.0);
        acc = heat_corner(acc, k[0], (1.0 - t.fx) * (1.0 - t.fy));
        acc = heat_corner(acc, k[1], t.fx * (1.0 - t.fy));
        acc = heat_corner(acc, k[2], (1.0 - t.fx) * t.fy);
        acc = heat_corner(acc, k[3], t.fx * t.fy);
        value = select(heat[idx], acc.x / acc.y, acc.y > 1.0e-6);
    }
    heat_out[idx] = min(max(value * P.heat_decay, -MAX_HEAT), MAX_HEAT);
}
