// sunrays.wgsl: light scattered from bright dye along rays from the frame's centre: each
// texel of a small bloom level sums SAMPLES bilinear samples of the thresholded light on the
// way to the centre, each DECAY times the one before, over DENSITY of the way; divided by
// SAMPLES. Linear RGB, rows top first, edges clamp. Mirrors cpu/sunrays.rs.

struct Mip {
    src_w: u32,
    src_h: u32,
    dst_w: u32,
    dst_h: u32,
}

@group(0) @binding(0) var<uniform> M: Mip;
@group(0) @binding(1) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> dst: array<vec4<f32>>;

// cpu::sunrays::{RAYS_SAMPLES, RAYS_DENSITY, RAYS_DECAY}.
const SAMPLES: u32 = 16u;
const DENSITY: f32 = 0.65;
const DECAY: f32 = 0.94;

fn sample(x_in: f32, y_in: f32) -> vec3<f32> {
    let w = M.src_w;
    let x = limit(x_in, 0.0, f32(w - 1u));
    let y = limit(y_in, 0.0, f32(M.src_h - 1u));
    let i0 = u32(x);
    let j0 = u32(y);
    let i1 = min(i0 + 1u, w - 1u);
    let j1 = min(j0 + 1u, M.src_h - 1u);
    let fx = x - f32(i0);
    let fy = y - f32(j0);
    let a = src[j0 * w + i0].rgb;
    let b = src[j0 * w + i1].rgb;
    let c = src[j1 * w + i0].rgb;
    let d = src[j1 * w + i1].rgb;
    let top = fma(vec3<f32>(fx), b - a, a);
    let bottom = fma(vec3<f32>(fx), d - c, c);
    return fma(vec3<f32>(fy), bottom - top, top);
}

@compute @workgroup_size(WG, WG)
fn sunrays(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= M.dst_w || id.y >= M.dst_h) {
        return;
    }
    let step = DENSITY / f32(SAMPLES);
    var v = (f32(id.y) + 0.5) / f32(M.dst_h);
    let dv = (v - 0.5) * step;
    var u = (f32(id.x) + 0.5) / f32(M.dst_w);
    let du = (u - 0.5) * step;
    var weight = 1.0;
    var acc = vec3<f32>(0.0);
    for (var s = 0u; s < SAMPLES; s++) {
        u -= du;
        v -= dv;
        let c = sample(fma(u, f32(M.src_w), -0.5), fma(v, f32(M.src_h), -0.5));
        acc = fma(vec3<f32>(weight), c, acc);
        weight *= DECAY;
    }
    dst[id.y * M.dst_w + id.x] = vec4<f32>(acc * (1.0 / f32(SAMPLES)), 0.0);
}
