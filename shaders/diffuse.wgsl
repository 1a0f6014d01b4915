// diffuse.wgsl: one Jacobi iteration of implicit diffusion (1 - a laplacian) x = b, for a
// scalar grid (velocity components) or the vec4 dye. Mirrors cpu/diffuse.rs, including its
// boundary rules: `fixed` 1 holds the first and last columns at 0 (u wall faces), 2 the first
// and last rows (v wall faces); other edges are Neumann (missing neighbours dropped).

struct Diffuse {
    nx: u32,
    ny: u32,
    fixed: u32,
    _pad: u32,
    a: f32,
    _p1: f32,
    _p2: f32,
    _p3: f32,
}

@group(0) @binding(0) var<uniform> D: Diffuse;
@group(0) @binding(1) var<storage, read> x_in: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> x_out: array<f32>;

@group(0) @binding(4) var<storage, read> c_in: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> cb: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> c_out: array<vec4<f32>>;

fn interior(i: u32, j: u32) -> bool {
    return j > 0u && j + 1u < D.ny && D.nx >= 3u && i > 0u && i + 1u < D.nx;
}

@compute @workgroup_size(WG, WG)
fn diffuse_scalar(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    let nx = D.nx;
    let ny = D.ny;
    if (i >= nx || j >= ny) {
        return;
    }
    let c = j * nx + i;
    if ((D.fixed == 2u && (j == 0u || j + 1u == ny)) || (D.fixed == 1u && (i == 0u || i + 1u == nx))) {
        x_out[c] = 0.0;
        return;
    }
    let a = D.a;
    if (interior(i, j)) {
        let s = (x_in[c - 1u] + x_in[c + 1u]) + (x_in[c - nx] + x_in[c + nx]);
        x_out[c] = fma(a, s, b[c]) * (1.0 / fma(a, 4.0, 1.0));
        return;
    }
    var sum = 0.0;
    var n = 0.0;
    if (i > 0u) { sum += x_in[c - 1u]; n += 1.0; }
    if (i + 1u < nx) { sum += x_in[c + 1u]; n += 1.0; }
    if (j > 0u) { sum += x_in[c - nx]; n += 1.0; }
    if (j + 1u < ny) { sum += x_in[c + nx]; n += 1.0; }
    x_out[c] = fma(a, sum, b[c]) / fma(a, n, 1.0);
}

@compute @workgroup_size(WG, WG)
fn diffuse_dye(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    let nx = D.nx;
    let ny = D.ny;
    if (i >= nx || j >= ny) {
        return;
    }
    let c = j * nx + i;
    let a = D.a;
    if (interior(i, j)) {
        let s = (c_in[c - 1u] + c_in[c + 1u]) + (c_in[c - nx] + c_in[c + nx]);
        c_out[c] = fma(vec4(a), s, cb[c]) * (1.0 / fma(a, 4.0, 1.0));
        return;
    }
    var sum = vec4(0.0);
    var n = 0.0;
    if (i > 0u) { sum += c_in[c - 1u]; n += 1.0; }
    if (i + 1u < nx) { sum += c_in[c + 1u]; n += 1.0; }
    if (j > 0u) { sum += c_in[c - nx]; n += 1.0; }
    if (j + 1u < ny) { sum += c_in[c + nx]; n += 1.0; }
    c_out[c] = fma(vec4(a), sum, cb[c]) / fma(a, n, 1.0);
}
