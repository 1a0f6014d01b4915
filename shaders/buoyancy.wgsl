// buoyancy.wgsl: buoyancy and weight (GPU Gems ch. 38's smoke, PixelFlow). Each cell's
// acceleration along the up direction is sigma (T - T_ambient) - kappa d, with T the cell's
// temperature and d its dye density (the mean of the three channels over the cell's dye
// cells); every interior face gains dt times the mean of its two cells' accelerations, times
// the up direction's component along it. Walls are untouched. Mirrors cpu/buoyancy.rs.

@group(0) @binding(0) var<uniform> P: GridUniforms;
@group(0) @binding(1) var<storage, read> heat: array<f32>;
@group(0) @binding(2) var<storage, read> dye: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> lift: array<f32>;
@group(0) @binding(4) var<storage, read_write> u: array<f32>;
@group(0) @binding(5) var<storage, read_write> v: array<f32>;

@compute @workgroup_size(WG, WG)
fn lift_cells(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i >= P.w || j >= P.h) {
        return;
    }
    let s = P.dye_scale;
    var d = 0.0;
    for (var dj = 0u; dj < s; dj++) {
        let row = (j * s + dj) * P.dw + i * s;
        for (var di = 0u; di < s; di++) {
            let c = dye[row + di];
            d += c.r + c.g + c.b;
        }
    }
    let inv = 1.0 / f32(3u * s * s);
    let idx = j * P.w + i;
    lift[idx] = fma(P.sigma, heat[idx] - P.ambient, -P.kappa * (d * inv));
}

@compute @workgroup_size(WG, WG)
fn lift_u(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i == 0u || i >= P.w || j >= P.h) {
        return;
    }
    let a = lift[j * P.w + i - 1u];
    let b = lift[j * P.w + i];
    let idx = j * (P.w + 1u) + i;
    u[idx] = clamp(fma(0.5 * (P.up_x * P.dt), a + b, u[idx]), -MAX_SPEED, MAX_SPEED);
}

@compute @workgroup_size(WG, WG)
fn lift_v(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i >= P.w || j == 0u || j >= P.h) {
        return;
    }
    let a = lift[(j - 1u) * P.w + i];
    let b = lift[j * P.w + i];
    let idx = j * P.w + i;
    v[idx] = clamp(fma(0.5 * (P.up_y * P.dt), a + b, v[idx]), -MAX_SPEED, MAX_SPEED);
}
