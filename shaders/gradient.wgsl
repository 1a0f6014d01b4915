// gradient.wgsl: gradient subtraction u_face -= q_right - q_left on interior faces, with q
// centred on its mean first (as the CPU's natural copy). Wall faces are never written, so
// nothing flows through the walls. Limited to MAX_SPEED (binds only on hostile input).
// Mirrors cpu/gradient.rs.

struct Grad {
    // Reduction slot holding the sum of q; mean = sum / count.
    slot: u32,
    // Cells of q (w h). The same layout as `Mean` in divergence.wgsl.
    count: u32,
    _p0: u32,
    _p1: u32,
}

@group(0) @binding(0) var<uniform> P: GridUniforms;
@group(0) @binding(1) var<uniform> G: Grad;
@group(0) @binding(2) var<storage, read> q: array<f32>;
@group(0) @binding(3) var<storage, read> sums: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> u: array<f32>;
@group(0) @binding(5) var<storage, read_write> v: array<f32>;
@group(0) @binding(6) var<storage, read_write> q_centred: array<f32>;

fn mean() -> f32 {
    return sums[G.slot].x / f32(G.count);
}

@compute @workgroup_size(WG, WG)
fn subtract_gradient_centre(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= P.w || id.y >= P.h) {
        return;
    }
    let c = id.y * P.w + id.x;
    q_centred[c] = q[c] - mean();
}

@compute @workgroup_size(WG, WG)
fn subtract_gradient_u(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i == 0u || i >= P.w || j >= P.h) {
        return;
    }
    let c = j * P.w + i;
    let idx = j * (P.w + 1u) + i;
    u[idx] = limit(u[idx] - (q_centred[c] - q_centred[c - 1u]), -MAX_SPEED, MAX_SPEED);
}

@compute @workgroup_size(WG, WG)
fn subtract_gradient_v(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i >= P.w || j == 0u || j >= P.h) {
        return;
    }
    let idx = j * P.w + i;
    v[idx] = limit(v[idx] - (q_centred[idx] - q_centred[idx - P.w]), -MAX_SPEED, MAX_SPEED);
}
