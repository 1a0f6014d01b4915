// vorticity.wgsl: vorticity confinement (Fedkiw, Stam and Jensen 2001). Cell force
// f = cell * (N x w) with N the normalised gradient of |w|; faces receive dt * eps * scale
// times the mean of their two cells' forces. Walls are untouched. Mirrors cpu/vorticity.rs.

@group(0) @binding(0) var<uniform> P: GridUniforms;
@group(0) @binding(1) var<storage, read> curl: array<f32>;
@group(0) @binding(2) var<storage, read_write> fx: array<f32>;
@group(0) @binding(3) var<storage, read_write> fy: array<f32>;
@group(0) @binding(4) var<storage, read_write> u: array<f32>;
@group(0) @binding(5) var<storage, read_write> v: array<f32>;

@compute @workgroup_size(WG, WG)
fn confine_force(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    let w = P.w;
    let h = P.h;
    if (i >= w || j >= h) {
        return;
    }
    let jd = select(j - 1u, 0u, j == 0u);
    let ju = min(j + 1u, h - 1u);
    let il = select(i - 1u, 0u, i == 0u);
    let ir = min(i + 1u, w - 1u);
    var gx = 0.0;
    if (ir > il) {
        gx = (abs(curl[j * w + ir]) - abs(curl[j * w + il])) / f32(ir - il);
    }
    var gy_scale = 0.0;
    if (ju > jd) {
        gy_scale = 1.0 / f32(ju - jd);
    }
    let gy = (abs(curl[ju * w + i]) - abs(curl[jd * w + i])) * gy_scale;
    let len2 = fma(gx, gx, gy * gy);
    var inv = 0.0;
    if (len2 > 1.0e-30) {
        inv = 1.0 / sqrt(len2);
    }
    let om = curl[j * w + i] * P.cell;
    fx[j * w + i] = gy * inv * om;
    fy[j * w + i] = -(gx * inv) * om;
}

@compute @workgroup_size(WG, WG)
fn confine_u(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i == 0u || i >= P.w || j >= P.h) {
        return;
    }
    let f = 0.5 * (fx[j * P.w + i - 1u] + fx[j * P.w + i]);
    let idx = j * (P.w + 1u) + i;
    u[idx] = limit(fma(P.vort_k, f, u[idx]), -MAX_SPEED, MAX_SPEED);
}

@compute @workgroup_size(WG, WG)
fn confine_v(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i >= P.w || j == 0u || j >= P.h) {
        return;
    }
    let f = 0.5 * (fy[(j - 1u) * P.w + i] + fy[j * P.w + i]);
    let idx = j * P.w + i;
    v[idx] = limit(fma(P.vort_k, f, v[idx]), -MAX_SPEED, MAX_SPEED);
}
