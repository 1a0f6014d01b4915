// dissipate.wgsl: exponential decay x *= exp(-rate dt) (the factor is computed on the CPU,
// exact for any dt, so decay is frame-rate independent), then the speed and dye limits.
// Wall faces are 0 and stay 0. Mirrors cpu/dissipate.rs and the decay fused into
// cpu/advect.rs.

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read_write> u: array<f32>;
@group(0) @binding(2) var<storage, read_write> v: array<f32>;
@group(0) @binding(3) var<storage, read_write> dye: array<vec4<f32>>;

@compute @workgroup_size(WG, WG)
fn dissipate_velocity(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    // One thread per u face of a (w + 1) x h grid and per v face of a w x (h + 1) grid.
    if (i <= P.w && j < P.h) {
        let k = j * (P.w + 1u) + i;
        u[k] = limit(u[k] * P.vel_decay, -MAX_SPEED, MAX_SPEED);
    }
    if (i < P.w && j <= P.h) {
        let k = j * P.w + i;
        v[k] = limit(v[k] * P.vel_decay, -MAX_SPEED, MAX_SPEED);
    }
}

@compute @workgroup_size(WG, WG)
fn dissipate_dye(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= P.dw || id.y >= P.dh) {
        return;
    }
    let k = id.y * P.dw + id.x;
    let c = dye[k] * P.dye_decay;
    dye[k] = vec4(
        min(max(c.r, 0.0), P.max_dye),
        min(max(c.g, 0.0), P.max_dye),
        min(max(c.b, 0.0), P.max_dye),
        0.0,
    );
}
