// streamlines.wgsl: PixelFlow's streamlines drawn over the finished frame, two passes
// (display::streamlines has the model; a model traces the lines first, as the grid fluid's
// streamline_trace.wgsl does).
//   draw_streamlines: one thread per segment covers the pixels near it (boxes around pieces of
//     at most PIECE_PX) with the largest code (opacity << 16 | speed) by atomicMax, so the
//     result does not depend on the order and equals the CPU's.
//   composite_streamlines: one thread per pixel blends the ramp's colour at its speed over the
//     frame by its opacity (alone: over black, every pixel written).
// Mirrors display/cpu/streamlines.rs operation for operation. Positions are in canvas units
// (x right in [0, aspect], y up in [0, 1]); pixels x right, y down, centres at
// (i + 0.5, j + 0.5).

@group(0) @binding(0) var<uniform> S: Stream;
@group(0) @binding(1) var<storage, read> verts: array<vec2<f32>>;
// A code per frame pixel, rows top first.
@group(0) @binding(2) var<storage, read_write> cover: array<atomic<u32>>;
// RGBA8 packed little-endian, rows top first.
@group(0) @binding(3) var<storage, read_write> frame: array<u32>;

// Threads per workgroup (1D passes).
const SW: u32 = 256u;
// display::streamlines::{TAIL_ALPHA, FADE_SPEED, HALF_SPEED, ALPHA_LEVELS, SPEED_LEVELS,
// PIECE_PX, RAMP}.
const TAIL_ALPHA: f32 = 0.25;
const FADE_SPEED: f32 = 0.02;
const HALF_SPEED: f32 = 0.3;
const ALPHA_LEVELS: f32 = 4095.0;
const SPEED_LEVELS: f32 = 4095.0;
const PIECE_PX: f32 = 4.0;
const RAMP = array<vec3<f32>, 5>(
    vec3(48.0, 64.0, 200.0),
    vec3(24.0, 170.0, 240.0),
    vec3(70.0, 235.0, 140.0),
    vec3(250.0, 200.0, 40.0),
    vec3(240.0, 60.0, 40.0),
);

fn item(id: vec3<u32>, groups: vec3<u32>) -> u32 {
    return id.x + id.y * groups.x * SW;
}

fn to_pixels(p: vec2<f32>) -> vec2<f32> {
    return vec2(p.x * S.sx, (1.0 - p.y) * S.sy);
}

// The square of the distance from p to the segment a..b.
fn distance2(p: vec2<f32>, a: vec2<f32>, b: vec2<f32>) -> f32 {
    let ex = b.x - a.x;
    let ey = b.y - a.y;
    let px = p.x - a.x;
    let py = p.y - a.y;
    let len2 = fma(ex, ex, ey * ey);
    var t = 0.0;
    if (len2 > 0.0) {
        t = clamp(fma(px, ex, py * ey) / len2, 0.0, 1.0);
    }
    let qx = fma(t, -ex, px);
    let qy = fma(t, -ey, py);
    return fma(qx, qx, qy * qy);
}

fn code(alpha: f32, t: f32) -> u32 {
    let a = u32(clamp(alpha, 0.0, 1.0) * ALPHA_LEVELS + 0.5);
    if (a == 0u) {
        return 0u;
    }
    let s = u32(clamp(t, 0.0, 1.0) * SPEED_LEVELS + 0.5);
    return (a << 16u) | s;
}

// Pixels whose centres lie within `reach` of [lo, hi] on an axis of n: first and end.
fn span(lo: f32, hi: f32, reach: f32, n: u32) -> vec2<u32> {
    let i0 = u32(max(ceil(lo - reach - 0.5), 0.0));
    let i1 = max(min(floor(hi + reach - 0.5), f32(n) - 1.0), -1.0);
    return vec2(i0, u32(i1 + 1.0));
}

@compute @workgroup_size(SW)
fn draw_streamlines(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) g: vec3<u32>) {
    let seg = item(id, g);
    if (seg >= S.cols * S.rows * S.steps) {
        return;
    }
    let s = seg / S.steps;
    let k = seg % S.steps;
    let at = s * (S.steps + 1u) + k;
    let ca = verts[at];
    let cb = verts[at + 1u];
    let dx = cb.x - ca.x;
    let dy = cb.y - ca.y;
    let speed = sqrt(fma(dx, dx, dy * dy)) / S.dt;
    let f = f32(k + 1u) / f32(S.steps);
    let alpha = fma(f, 1.0 - TAIL_ALPHA, TAIL_ALPHA) * min(speed / FADE_SPEED, 1.0);
    if (!(alpha > 0.0)) {
        return;
    }
    let t = speed / (speed + HALF_SPEED);
    let a = to_pixels(ca);
    let b = to_pixels(cb);
    let reach = S.half + 0.5;
    let ex = b.x - a.x;
    let ey = b.y - a.y;
    let len = sqrt(fma(ex, ex, ey * ey));
    let pieces = u32(max(ceil(len / PIECE_PX), 1.0));
    for (var p = 0u; p < pieces; p++) {
        let s0 = f32(p) / f32(pieces);
        let s1 = f32(p + 1u) / f32(pieces);
        let x0 = fma(s0, ex, a.x);
        let x1 = fma(s1, ex, a.x);
        let y0 = fma(s0, ey, a.y);
        let y1 = fma(s1, ey, a.y);
        let ci = span(min(x0, x1), max(x0, x1), reach, S.out_w);
        let cj = span(min(y0, y1), max(y0, y1), reach, S.out_h);
        for (var j = cj.x; j < cj.y; j++) {
            for (var i = ci.x; i < ci.y; i++) {
                let centre = vec2(f32(i) + 0.5, f32(j) + 0.5);
                let d2 = distance2(centre, a, b);
                if (d2 < reach * reach) {
                    let cov = clamp(S.half + 0.5 - sqrt(d2), 0.0, 1.0);
                    let c = code(alpha * cov, t);
                    if (c != 0u) {
                        atomicMax(&cover[j * S.out_w + i], c);
                    }
                }
            }
        }
    }
}

fn ramp(t: f32) -> vec3<f32> {
    let x = clamp(t, 0.0, 1.0) * 4.0;
    let i = min(u32(x), 3u);
    let f = x - f32(i);
    let a = RAMP[i];
    let b = RAMP[i + 1u];
    return vec3(fma(f, b.x - a.x, a.x), fma(f, b.y - a.y, a.y), fma(f, b.z - a.z, a.z));
}

@compute @workgroup_size(WG, WG)
fn composite_streamlines(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= S.out_w || id.y >= S.out_h) {
        return;
    }
    let at = id.y * S.out_w + id.x;
    let c = atomicLoad(&cover[at]);
    if (c == 0u && S.alone == 0u) {
        return;
    }
    var p = frame[at];
    if (S.alone != 0u) {
        p = 0xff000000u;
    }
    if (c != 0u) {
        let alpha = f32(c >> 16u) / ALPHA_LEVELS;
        p = blend_rgb8(p, ramp(f32(c & 0xffffu) / SPEED_LEVELS), alpha);
    }
    frame[at] = p;
}
