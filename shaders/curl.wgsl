// curl.wgsl: vorticity w = dv/dx - du/dy (1/s) at cell centres, from the cell-centred
// velocities (means of opposite faces) by central differences, one-sided at the walls.
// Mirrors cpu/curl.rs.

@group(0) @binding(0) var<uniform> P: GridUniforms;
@group(0) @binding(1) var<storage, read> u: array<f32>;
@group(0) @binding(2) var<storage, read> v: array<f32>;
@group(0) @binding(3) var<storage, read_write> curl_out: array<f32>;

@compute @workgroup_size(WG, WG)
fn curl(@builtin(global_invocation_id) id: vec3<u32>) {
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
    var dvdx = 0.0;
    if (ir > il) {
        let vr = v[j * w + ir] + v[(j + 1u) * w + ir];
        let vl = v[j * w + il] + v[(j + 1u) * w + il];
        dvdx = 0.5 * (vr - vl) / f32(ir - il);
    }
    var dudy_scale = 0.0;
    if (ju > jd) {
        dudy_scale = 0.5 / f32(ju - jd);
    }
    let uu = u[ju * (w + 1u) + i] + u[ju * (w + 1u) + i + 1u];
    let ud = u[jd * (w + 1u) + i] + u[jd * (w + 1u) + i + 1u];
    let dudy = (uu - ud) * dudy_scale;
    curl_out[j * w + i] = (dvdx - dudy) * f32(h);
}
