// bloom.wgsl: the light above a threshold spread wide through a mip chain (linear RGB, rows
// top first; edges clamp). bloom_prefilter: the frame's light, 2x2 averages of sane light
// (finite, capped at MAX_LIGHT), soft-thresholded into level 0 (half the frame). bloom_down:
// level k to k + 1 with [1 3 3 1] / 8 per axis. bloom_up: up_k = (1 - s) down_k +
// s tent(up_k+1) (a bilinear sample blurred by a 3x3 tent). bloom_glow: bloom * up_0 plus
// the sunrays sampled up to level 0. Mirrors cpu/bloom.rs.

// Sizes of one dispatch: the level read and the level written.
struct Mip {
    src_w: u32,
    src_h: u32,
    dst_w: u32,
    dst_h: u32,
}

@group(0) @binding(0) var<uniform> Q: Picture;
@group(0) @binding(1) var<uniform> M: Mip;
@group(0) @binding(2) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> aux: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> dst: array<vec4<f32>>;

// cpu::bloom::BLOOM_MAX_LIGHT.
const MAX_LIGHT: f32 = 256.0;

fn sane(c: vec3<f32>) -> vec3<f32> {
    return min(max(c, vec3<f32>(0.0)), vec3<f32>(MAX_LIGHT));
}

// cpu::bloom::soft_threshold.
fn soft_threshold(c: vec3<f32>, threshold: f32, knee: f32) -> vec3<f32> {
    let m = max(max(c.r, c.g), c.b);
    var soft = min(max(m - threshold + knee, 0.0), 2.0 * knee);
    soft = soft * soft / (4.0 * knee + 1.0e-5);
    let k = max(soft, m - threshold) / max(m, 1.0e-5);
    return c * k;
}

@compute @workgroup_size(WG, WG)
fn bloom_prefilter(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= M.dst_w || id.y >= M.dst_h) {
        return;
    }
    let w = M.src_w;
    let x0 = 2u * id.x;
    let x1 = min(x0 + 1u, w - 1u);
    let y0 = 2u * id.y;
    let y1 = min(y0 + 1u, M.src_h - 1u);
    let a = sane(src[y0 * w + x0].rgb) + sane(src[y0 * w + x1].rgb);
    let b = sane(src[y1 * w + x0].rgb) + sane(src[y1 * w + x1].rgb);
    let c = (a + b) * 0.25;
    let knee = Q.threshold * Q.knee;
    dst[id.y * M.dst_w + id.x] = vec4<f32>(soft_threshold(c, Q.threshold, knee), 0.0);
}

fn down_weight(t: u32) -> f32 {
    return select(0.375, 0.125, t == 0u || t == 3u);
}

fn clamp_index(x: i32, n: u32) -> u32 {
    return u32(clamp(x, 0, i32(n) - 1));
}

@compute @workgroup_size(WG, WG)
fn bloom_down(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= M.dst_w || id.y >= M.dst_h) {
        return;
    }
    var acc = vec3<f32>(0.0);
    for (var ty = 0u; ty < 4u; ty++) {
        let y = clamp_index(2 * i32(id.y) - 1 + i32(ty), M.src_h);
        for (var tx = 0u; tx < 4u; tx++) {
            let x = clamp_index(2 * i32(id.x) - 1 + i32(tx), M.src_w);
            let wt = down_weight(ty) * down_weight(tx);
            acc = fma(vec3<f32>(wt), src[y * M.src_w + x].rgb, acc);
        }
    }
    dst[id.y * M.dst_w + id.x] = vec4<f32>(acc, 0.0);
}

// cpu::bloom::tent_taps: four texels and weights of a tent-blurred bilinear sample.
struct Tent {
    i: array<u32, 4>,
    w: array<f32, 4>,
}

fn tent_taps(p: u32, out_n: u32, src_n: u32) -> Tent {
    let t = tap(p, out_n, src_n);
    let g = 1.0 - t.f;
    var r: Tent;
    for (var k = 0u; k < 4u; k++) {
        r.i[k] = clamp_index(i32(t.i0) + i32(k) - 1, src_n);
    }
    r.w[0] = 0.25 * g;
    r.w[1] = fma(0.5, g, 0.25 * t.f);
    r.w[2] = fma(0.25, g, 0.5 * t.f);
    r.w[3] = 0.25 * t.f;
    return r;
}

// src: the coarser level's up (its down at the coarsest); aux: this level's down.
@compute @workgroup_size(WG, WG)
fn bloom_up(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= M.dst_w || id.y >= M.dst_h) {
        return;
    }
    let tx = tent_taps(id.x, M.dst_w, M.src_w);
    let ty = tent_taps(id.y, M.dst_h, M.src_h);
    var acc = vec3<f32>(0.0);
    for (var a = 0u; a < 4u; a++) {
        for (var b = 0u; b < 4u; b++) {
            let wt = ty.w[a] * tx.w[b];
            acc = fma(vec3<f32>(wt), src[ty.i[a] * M.src_w + tx.i[b]].rgb, acc);
        }
    }
    let i = id.y * M.dst_w + id.x;
    let d = aux[i].rgb;
    dst[i] = vec4<f32>(fma(vec3<f32>(Q.spread), acc - d, d), 0.0);
}

// src: the sunrays (M.src_*); aux: level 0's up (or down when it is the only level); dst:
// the glow, level 0's size.
@compute @workgroup_size(WG, WG)
fn bloom_glow(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= M.dst_w || id.y >= M.dst_h) {
        return;
    }
    let i = id.y * M.dst_w + id.x;
    var g = select(vec3<f32>(0.0), aux[i].rgb * Q.bloom, Q.bloom > 0.0);
    if (Q.rays > 0.0) {
        let tx = tap(id.x, M.dst_w, M.src_w);
        let ty = tap(id.y, M.dst_h, M.src_h);
        let w = M.src_w;
        let a = src[ty.i0 * w + tx.i0].rgb;
        let b = src[ty.i0 * w + tx.i1].rgb;
        let c = src[ty.i1 * w + tx.i0].rgb;
        let d = src[ty.i1 * w + tx.i1].rgb;
        let top = fma(vec3<f32>(tx.f), b - a, a);
        let bottom = fma(vec3<f32>(tx.f), d - c, c);
        let v = fma(vec3<f32>(ty.f), bottom - top, top);
        g = fma(vec3<f32>(Q.rays), v, g);
    }
    dst[i] = vec4<f32>(g, 0.0);
}
