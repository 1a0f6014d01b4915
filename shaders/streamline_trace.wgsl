// streamline_trace.wgsl: the streamlines' trace (display::streamlines has the model; the
// picture draws the lines, streamlines.wgsl). trace_streamlines: one thread per seed traces
// its line, `steps` midpoint steps of `dt` seconds through the staggered velocity, stopping
// before a step that would leave the canvas, end in a solid cell, go non-finite or make the
// line longer than MAX_LINE; writes its steps + 1 vertices. Mirrors
// sim/grid/cpu/streamline_trace.rs operation for operation (a driver may fuse a multiply and
// an add the CPU rounds twice; the parity test's tolerance covers it). Positions are in
// canvas units (x right in [0, aspect], y up in [0, 1]).

@group(0) @binding(0) var<uniform> S: Stream;
@group(0) @binding(1) var<storage, read> u: array<f32>;
@group(0) @binding(2) var<storage, read> v: array<f32>;
@group(0) @binding(3) var<storage, read> solid: array<u32>;
@group(0) @binding(4) var<storage, read_write> verts: array<vec2<f32>>;

// Threads per workgroup.
const SW: u32 = 256u;
// display::streamlines::MAX_LINE.
const MAX_LINE: f32 = 0.5;

fn item(id: vec3<u32>, groups: vec3<u32>) -> u32 {
    return id.x + id.y * groups.x * SW;
}

// The velocity samples of particles.wgsl (WGSL has no includes).
fn sample_u(x: f32, y: f32) -> f32 {
    let t = taps(S.w + 1u, S.h, x, y);
    return blend4(u[t.k], u[t.k + t.dx], u[t.k + t.dy], u[t.k + t.dy + t.dx], t);
}

fn sample_v(x: f32, y: f32) -> f32 {
    let t = taps(S.w, S.h + 1u, x, y);
    return blend4(v[t.k], v[t.k + t.dx], v[t.k + t.dy], v[t.k + t.dy + t.dx], t);
}

fn velocity(p: vec2<f32>) -> vec2<f32> {
    let n = f32(S.h);
    let x = p.x * n - 0.5;
    let y = p.y * n - 0.5;
    return vec2(sample_u(x + 0.5, y), sample_v(x, y + 0.5));
}

// sim::grid::particles::solid_at.
fn is_solid(p: vec2<f32>) -> bool {
    let n = f32(S.h);
    let i = min(u32(p.x * n), S.w - 1u);
    let j = min(u32(p.y * n), S.h - 1u);
    return solid[j * S.w + i] != 0u;
}

@compute @workgroup_size(SW)
fn trace_streamlines(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) g: vec3<u32>) {
    let s = item(id, g);
    if (s >= S.cols * S.rows) {
        return;
    }
    let per = S.steps + 1u;
    let i = s % S.cols;
    let j = s / S.cols;
    var p = vec2((f32(i) + 0.5) * S.aspect / f32(S.cols), (f32(j) + 0.5) / f32(S.rows));
    var moving = !is_solid(p);
    var length = 0.0;
    verts[s * per] = p;
    let half = 0.5 * S.dt;
    for (var k = 1u; k < per; k++) {
        if (moving) {
            let v0 = velocity(p);
            let mid = vec2(fma(half, v0.x, p.x), fma(half, v0.y, p.y));
            let m = velocity(mid);
            let q = vec2(fma(S.dt, m.x, p.x), fma(S.dt, m.y, p.y));
            let dx = q.x - p.x;
            let dy = q.y - p.y;
            let longer = length + sqrt(fma(dx, dx, dy * dy));
            // False for NaN too.
            let inside = q.x >= 0.0 && q.x <= S.aspect && q.y >= 0.0 && q.y <= 1.0;
            moving = inside && longer <= MAX_LINE && !is_solid(q);
            if (moving) {
                p = q;
                length = longer;
            }
        }
        verts[s * per + k] = p;
    }
}

