// divergence.wgsl: flux divergence of the MAC velocity at cell centres,
// D = (u_right - u_left) + (v_top - v_bottom), in velocity units (h div u). Writes both D
// and the pressure right-hand side b = -D; `divergence_subtract_mean` later makes b mean-free
// (the Neumann walls require it). `compressibility_decide` decides the next projection's extra
// iterations (cpu/divergence.rs `compressibility`). Mirrors cpu/divergence.rs.

struct Mean {
    // Reduction result slot holding the sum to remove.
    slot: u32,
    count: u32,
    _p0: u32,
    _p1: u32,
}

@group(0) @binding(0) var<uniform> P: GridUniforms;
@group(0) @binding(1) var<storage, read> u: array<f32>;
@group(0) @binding(2) var<storage, read> v: array<f32>;
@group(0) @binding(3) var<storage, read_write> d: array<f32>;
@group(0) @binding(4) var<storage, read_write> b: array<f32>;

@group(0) @binding(5) var<uniform> M: Mean;
@group(0) @binding(6) var<storage, read> sums: array<vec4<f32>>;

@compute @workgroup_size(WG, WG)
fn divergence(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i >= P.w || j >= P.h) {
        return;
    }
    let x = (u[j * (P.w + 1u) + i + 1u] - u[j * (P.w + 1u) + i])
        + (v[(j + 1u) * P.w + i] - v[j * P.w + i]);
    d[j * P.w + i] = x;
    b[j * P.w + i] = -x;
}

// b -= mean(b), with mean(D) = sums[slot].x / count, so b + mean(D).
@compute @workgroup_size(WG, WG)
fn divergence_subtract_mean(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i >= P.w || j >= P.h) {
        return;
    }
    let mean = sums[M.slot].x / f32(M.count);
    b[j * P.w + i] = b[j * P.w + i] + mean;
}

// Whether the next projection runs extra iterations (cpu/mod.rs, Stage::Compressibility):
// advection moved the flow more than a cell (reach = k * max |u|, |v|) and left it
// compressible (RMS divergence over RMS face speed above the threshold). The answer is written
// as indirect dispatch arguments: the extra iterations' dispatches run with their full sizes,
// or with zero workgroups.
struct Decide {
    w: u32,
    h: u32,
    // Number of (x, y, z) argument triples.
    count: u32,
    // Result slots: divergence, u, v norms.
    slot_div: u32,
    slot_u: u32,
    slot_v: u32,
    k: f32,
    threshold: f32,
}

@group(0) @binding(7) var<uniform> DC: Decide;
@group(0) @binding(8) var<storage, read> table: array<u32>;
@group(0) @binding(9) var<storage, read_write> args: array<u32>;

@compute @workgroup_size(64)
fn compressibility_decide(@builtin(global_invocation_id) id: vec3<u32>) {
    let n = id.x;
    if (n >= DC.count) {
        return;
    }
    let du = sums[DC.slot_u];
    let dv = sums[DC.slot_v];
    let reach = DC.k * max(du.z, dv.z);
    let div_rms = sqrt(sums[DC.slot_div].y / f32(DC.w * DC.h));
    let flow_rms = sqrt((du.y + dv.y) / f32((DC.w + 1u) * DC.h + DC.w * DC.h));
    var needed = false;
    if (reach > 1.0 && flow_rms > 0.0) {
        needed = div_rms / flow_rms > DC.threshold;
    }
    for (var c = 0u; c < 3u; c++) {
        args[3u * n + c] = select(0u, table[3u * n + c], needed);
    }
}
