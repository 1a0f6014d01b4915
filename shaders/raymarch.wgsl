// raymarch.wgsl: the 3D liquid's picture, as the CPU's ray march (display/cpu/raymarch.rs and
// raymarch/shadow.rs) does, on the GPU, step for step: the same surface search (empty bricks
// skipped, SURFACE_STEP voxels, three bisections and a line), the same refraction, reflection,
// absorption and glow, floor, sky, glass and balls. Units: world m, y up; rays in the tank's
// frame in voxels. The volume is M.dims voxels (x fastest), density (1: the bulk) and dye
// (weighted by the density); samples are trilinear, clamped to the volume.
//   bricks: one thread per brick: the largest density over its voxels and one voxel round
//     (the CPU's Volume::finish).
//   shadow: one thread per texel of the floor's shadow map: the liquid's optical depth towards
//     the sun (and the balls', as dense liquid).
//   march: one thread per pixel of the light (M.light_w x M.light_h, rows bottom first): the
//     light the camera's ray brings back, RGBA (alpha 0), into the field the picture reads.
// Every loop is bounded (MAX_STEPS), so a ray that does not progress ends.

struct March {
    eye: vec4<f32>,      // the camera's eye (xyz), world m; w: tan(half the vertical fov)
    right: vec4<f32>,    // the camera's basis (unit); right.w: a pixel's angle, radians
    up: vec4<f32>,
    forward: vec4<f32>,
    axis_x: vec4<f32>,   // the tank's axes in the world (columns); axis_x.w: the voxel, m
    axis_y: vec4<f32>,
    axis_z: vec4<f32>,
    corner: vec4<f32>,   // the tank's corner (0, 0, 0) in the world
    sun: vec4<f32>,      // towards the sun (unit, world)
    sun_local: vec4<f32>, // the same in the tank's frame
    box_: vec4<f32>,     // the box the rays march through, voxels
    shadow: vec4<f32>,   // the shadow map's corner (x, z), texel (m), 1 when there is one
    dims: vec4<u32>,     // voxels per axis; w: balls
    bricks: vec4<u32>,   // bricks per axis
    sizes: vec4<u32>,    // the light's width and height, the shadow map's texels across and deep
}

// A ball in the tank: centre and radius in voxels, colour (liquid3d_splat.wgsl's MarchBall).
struct Ball {
    centre: vec4<f32>,
    colour: vec4<f32>,
}

@group(0) @binding(0) var<uniform> M: March;
@group(0) @binding(1) var<storage, read> density: array<f32>;
@group(0) @binding(2) var<storage, read> dye: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> brick_max: array<f32>;
@group(0) @binding(4) var<storage, read_write> depth: array<f32>;
@group(0) @binding(5) var<storage, read> balls: array<Ball>;
@group(0) @binding(6) var<storage, read_write> light: array<vec4<f32>>;

// Threads per workgroup of the 1D passes (display::gpu::raymarch::MARCH_SW); the march runs
// 8 x 8 pixels a workgroup.
const MARCH_SW: u32 = 64u;
// display/volume.rs and display/cpu/raymarch.rs.
const BRICK: u32 = 4u;
const SURFACE: f32 = 0.5;
const SURFACE_STEP: f32 = 1.0;
const INSIDE_STEP: f32 = 3.0;
const BISECTIONS: u32 = 3u;
const IOR: f32 = 1.33;
const WATER: vec3<f32> = vec3<f32>(0.45, 0.12, 0.06);
const DYE: f32 = 2.2;
const SCATTER: f32 = 1.5;
const GLOW: f32 = 0.7;
const SUN: vec3<f32> = vec3<f32>(1.3, 1.22, 1.1);
const AMBIENT: f32 = 0.15;
const HORIZON: vec3<f32> = vec3<f32>(0.05, 0.055, 0.075);
const ZENITH: vec3<f32> = vec3<f32>(0.006, 0.008, 0.02);
const TILE: f32 = 0.3;
const ALBEDO_LIGHT: f32 = 0.2;
const ALBEDO_DARK: f32 = 0.07;
const FOG: f32 = 14.0;
const GLASS: f32 = 0.9;
const EDGE: f32 = 0.35;
const EDGE_PIXELS: f32 = 1.5;
const SHADOW: f32 = 1.6;
const SHADOW_STEP: f32 = 1.5;
const SHADOW_EMPTY: f32 = 0.05;
const BALL_SHADOW: f32 = 3.0;
// Most steps of any loop along a ray (the longest diagonal of the largest volume, 512 voxels a
// side, is 887 voxels: a step at least a voxel or a brick, so this is never reached).
const MAX_STEPS: u32 = 4096u;
const INF: f32 = 3.0e38;

fn voxel() -> f32 {
    return M.axis_x.w;
}

fn to_local(p: vec3<f32>) -> vec3<f32> {
    let d = p - M.corner.xyz;
    return vec3<f32>(dot(d, M.axis_x.xyz), dot(d, M.axis_y.xyz), dot(d, M.axis_z.xyz));
}

fn dir_to_local(d: vec3<f32>) -> vec3<f32> {
    return vec3<f32>(dot(d, M.axis_x.xyz), dot(d, M.axis_y.xyz), dot(d, M.axis_z.xyz));
}

fn dir_to_world(d: vec3<f32>) -> vec3<f32> {
    return M.axis_x.xyz * d.x + M.axis_y.xyz * d.y + M.axis_z.xyz * d.z;
}

fn to_world(p: vec3<f32>) -> vec3<f32> {
    return M.corner.xyz + dir_to_world(p);
}

fn normalize_or(a: vec3<f32>, fallback: vec3<f32>) -> vec3<f32> {
    let l = sqrt(dot(a, a));
    if (l > 1e-20 && l < INF) {
        return a / l;
    }
    return fallback;
}

fn pow5(x: f32) -> f32 {
    let x2 = x * x;
    return x2 * x2 * x;
}

fn pow256(x: f32) -> f32 {
    var y = x;
    for (var i = 0u; i < 8u; i++) {
        y *= y;
    }
    return y;
}

fn vidx(x: u32, y: u32, z: u32) -> u32 {
    return (z * M.dims.y + y) * M.dims.x + x;
}

// The corners and weights of a trilinear sample at voxel point q.
struct Corners {
    a: vec3<u32>,
    b: vec3<u32>,
    f: vec3<f32>,
}

fn corners(q: vec3<f32>) -> Corners {
    let top = vec3<f32>(M.dims.xyz - vec3<u32>(1u));
    let u = clamp(q - vec3<f32>(0.5), vec3<f32>(0.0), top);
    let i = min(vec3<u32>(u), M.dims.xyz - vec3<u32>(1u));
    return Corners(i, min(i + vec3<u32>(1u), M.dims.xyz - vec3<u32>(1u)), u - vec3<f32>(i));
}

fn density_at(q: vec3<f32>) -> f32 {
    let t = corners(q);
    let r00 = mix(density[vidx(t.a.x, t.a.y, t.a.z)], density[vidx(t.b.x, t.a.y, t.a.z)], t.f.x);
    let r10 = mix(density[vidx(t.a.x, t.b.y, t.a.z)], density[vidx(t.b.x, t.b.y, t.a.z)], t.f.x);
    let r01 = mix(density[vidx(t.a.x, t.a.y, t.b.z)], density[vidx(t.b.x, t.a.y, t.b.z)], t.f.x);
    let r11 = mix(density[vidx(t.a.x, t.b.y, t.b.z)], density[vidx(t.b.x, t.b.y, t.b.z)], t.f.x);
    return mix(mix(r00, r10, t.f.y), mix(r01, r11, t.f.y), t.f.z);
}

// The density (w) and the dye (rgb) at q.
fn sample_at(q: vec3<f32>) -> vec4<f32> {
    let t = corners(q);
    var s = vec4<f32>(0.0);
    for (var k = 0u; k < 8u; k++) {
        let x = select(t.a.x, t.b.x, (k & 1u) != 0u);
        let y = select(t.a.y, t.b.y, (k & 2u) != 0u);
        let z = select(t.a.z, t.b.z, (k & 4u) != 0u);
        let wx = select(1.0 - t.f.x, t.f.x, (k & 1u) != 0u);
        let wy = select(1.0 - t.f.y, t.f.y, (k & 2u) != 0u);
        let wz = select(1.0 - t.f.z, t.f.z, (k & 4u) != 0u);
        let i = vidx(x, y, z);
        s += vec4<f32>(dye[i].xyz, density[i]) * (wx * wy * wz);
    }
    return s;
}

fn brick_at(q: vec3<f32>) -> f32 {
    let b = vec3<u32>(max(q, vec3<f32>(0.0))) / BRICK;
    if (any(b >= M.bricks.xyz)) {
        return 0.0;
    }
    return brick_max[(b.z * M.bricks.y + b.y) * M.bricks.x + b.x];
}

fn inverse(d: vec3<f32>) -> vec3<f32> {
    return select(vec3<f32>(INF), vec3<f32>(1.0) / d, abs(d) > vec3<f32>(1e-12));
}

// Where a ray of inverse direction inv at t (point q) leaves the brick holding q (a little
// past it).
fn brick_exit(inv: vec3<f32>, q: vec3<f32>, t: f32) -> f32 {
    var exit = INF;
    for (var c = 0u; c < 3u; c++) {
        let k = inv[c];
        if (abs(k) < INF) {
            let b = floor(max(q[c], 0.0) / f32(BRICK));
            let face = (b + select(0.0, 1.0, k > 0.0)) * f32(BRICK);
            exit = min(exit, (face - q[c]) * k);
        }
    }
    return t + max(exit, 0.0) + 1e-3;
}

// Where a ray enters and leaves the box [0, dims] (x, y), the axis of the face it enters by
// (z; 3: none), w: 1 when it meets the box.
fn slab(o: vec3<f32>, d: vec3<f32>, dims: vec3<f32>) -> vec4<f32> {
    var t0 = 0.0;
    var t1 = INF;
    var axis = 3.0;
    for (var c = 0u; c < 3u; c++) {
        if (abs(d[c]) < 1e-12) {
            if (o[c] < 0.0 || o[c] > dims[c]) {
                return vec4<f32>(0.0);
            }
            continue;
        }
        let a = (0.0 - o[c]) / d[c];
        let b = (dims[c] - o[c]) / d[c];
        let near = min(a, b);
        let far = max(a, b);
        if (near > t0) {
            t0 = near;
            axis = f32(c);
        }
        t1 = min(t1, far);
    }
    if (t0 < t1 && t1 < INF) {
        return vec4<f32>(t0, t1, axis, 1.0);
    }
    return vec4<f32>(0.0);
}

fn reflect_about(d: vec3<f32>, n: vec3<f32>) -> vec3<f32> {
    return d - n * (2.0 * dot(d, n));
}

// d bent through a surface of normal n (facing against d) at index ratio eta; w: 0 past the
// critical angle.
fn refract_through(d: vec3<f32>, n: vec3<f32>, eta: f32) -> vec4<f32> {
    let cos_i = -dot(d, n);
    let k = 1.0 - eta * eta * (1.0 - cos_i * cos_i);
    if (k < 0.0) {
        return vec4<f32>(0.0);
    }
    return vec4<f32>(d * eta + n * (eta * cos_i - sqrt(k)), 1.0);
}

fn fresnel(c: f32) -> f32 {
    let r = (1.0 - IOR) / (1.0 + IOR);
    let r0 = r * r;
    return r0 + (1.0 - r0) * pow5(1.0 - clamp(c, 0.0, 1.0));
}

// The share of each colour let through `mass` m of bulk liquid holding `d` (Beer-Lambert).
fn transmittance(mass: f32, d: vec3<f32>) -> vec3<f32> {
    return exp(-(mass * WATER + DYE * max(vec3<f32>(mass) - d, vec3<f32>(0.0))));
}

fn filtered_checker(x: f32, z: f32, w_in: f32) -> f32 {
    let w = max(w_in, 1e-4);
    let tx = 2.0 * (tri_wave(x - 0.5 * w) - tri_wave(x + 0.5 * w)) / w;
    let tz = 2.0 * (tri_wave(z - 0.5 * w) - tri_wave(z + 0.5 * w)) / w;
    return 0.5 - 0.5 * tx * tz;
}

fn tri_wave(v: f32) -> f32 {
    return abs(v * 0.5 - floor(v * 0.5) - 0.5);
}

// The floor's light left by the liquid at world point (x, 0, z).
fn shadow_at(x: f32, z: f32) -> f32 {
    let nx = M.sizes.z;
    let nz = M.sizes.w;
    if (M.shadow.w == 0.0 || nx == 0u) {
        return 1.0;
    }
    let u0 = (x - M.shadow.x) / M.shadow.z - 0.5;
    let v0 = (z - M.shadow.y) / M.shadow.z - 0.5;
    if (!(u0 > -1.0 && v0 > -1.0 && u0 < f32(nx) && v0 < f32(nz))) {
        return 1.0;
    }
    let u = clamp(u0, 0.0, f32(nx - 1u));
    let v = clamp(v0, 0.0, f32(nz - 1u));
    let i = u32(u);
    let j = u32(v);
    let i1 = min(i + 1u, nx - 1u);
    let j1 = min(j + 1u, nz - 1u);
    let fu = u - f32(i);
    let fv = v - f32(j);
    let a = mix(depth[j * nx + i], depth[j * nx + i1], fu);
    let b = mix(depth[j1 * nx + i], depth[j1 * nx + i1], fu);
    return exp(-mix(a, b, fv) * SHADOW);
}

fn sky(d: vec3<f32>) -> vec3<f32> {
    let up = sqrt(clamp(d.y, 0.0, 1.0));
    let s = max(dot(d, M.sun.xyz), 0.0);
    let s8 = (s * s) * (s * s);
    let disc = s8 * s8 * 0.25 + pow256(s) * 0.6 + pow256(pow256(s)) * 4.0;
    return HORIZON * (1.0 - up) + ZENITH * up + SUN * disc;
}

fn backdrop(o: vec3<f32>, d: vec3<f32>) -> vec3<f32> {
    if (d.y < -1e-5 && o.y >= -1e-3) {
        let t = max(-o.y / d.y, 0.0);
        let p = o + d * t;
        let footprint = M.right.w * t / max(-d.y, 0.05);
        let l = filtered_checker(p.x / TILE, p.z / TILE, footprint / TILE);
        let albedo = ALBEDO_DARK + (ALBEDO_LIGHT - ALBEDO_DARK) * l;
        let sun = max(M.sun.y, 0.0) * shadow_at(p.x, p.z);
        let lit = albedo * (SUN * sun + vec3<f32>(AMBIENT));
        let fade = exp(-t / FOG);
        return sky(vec3<f32>(d.x, 0.0, d.z)) * (1.0 - fade) + lit * fade;
    }
    return sky(d);
}

// The first ball the ray (o, d; voxels) meets between t0 and t1: x the place, y the ball (-1:
// none).
fn ball_hit(o: vec3<f32>, d: vec3<f32>, t0: f32, t1: f32) -> vec2<f32> {
    var best = vec2<f32>(INF, -1.0);
    for (var i = 0u; i < M.dims.w; i++) {
        let b = balls[i].centre;
        if (!(b.w > 0.0) || any(abs(b.xyz) > vec3<f32>(1e30))) {
            continue;
        }
        let oc = o - b.xyz;
        let half = dot(oc, d);
        let c = dot(oc, oc) - b.w * b.w;
        let disc = half * half - c;
        if (c <= 0.0 || disc < 0.0) {
            continue;
        }
        let t = -half - sqrt(disc);
        if (t >= t0 && t <= t1 && t < best.x) {
            best = vec2<f32>(t, f32(i));
        }
    }
    return best;
}

// The light of ball i at voxel point q, seen along world direction d.
fn ball_light(q: vec3<f32>, i: u32, d: vec3<f32>) -> vec3<f32> {
    let b = balls[i];
    let n = dir_to_world(normalize_or(q - b.centre.xyz, vec3<f32>(0.0, 1.0, 0.0)));
    let hit = to_world(q * voxel());
    let sun = max(dot(n, M.sun.xyz), 0.0);
    let sky_light = 0.5 + 0.5 * n.y;
    let diffuse = b.colour.xyz * (SUN * (sun * 0.8) + vec3<f32>(AMBIENT * 2.0 * sky_light));
    let mirror = reflect_about(d, n);
    let f = 0.04 + 0.96 * pow5(1.0 - clamp(-dot(d, n), 0.0, 1.0));
    let spec = pow256(max(dot(mirror, M.sun.xyz), 0.0));
    let reflected = backdrop(hit, mirror) + SUN * (spec * 2.0);
    return diffuse * (1.0 - f) + reflected * f;
}

// Where the density along the ray crosses SURFACE between lo and hi (each with its density).
fn crossing(o: vec3<f32>, d: vec3<f32>, lo_in: vec2<f32>, hi_in: vec2<f32>) -> f32 {
    var lo = lo_in;
    var hi = hi_in;
    let liquid_hi = hi.y >= SURFACE;
    for (var k = 0u; k < BISECTIONS; k++) {
        let mid = 0.5 * (lo.x + hi.x);
        let dm = density_at(o + d * mid);
        if ((dm >= SURFACE) == liquid_hi) {
            hi = vec2<f32>(mid, dm);
        } else {
            lo = vec2<f32>(mid, dm);
        }
    }
    let span = hi.y - lo.y;
    var f = 1.0;
    if (abs(span) > 1e-9) {
        f = clamp((SURFACE - lo.y) / span, 0.0, 1.0);
    }
    return lo.x + (hi.x - lo.x) * f;
}

fn normal_at(q: vec3<f32>) -> vec3<f32> {
    let g = vec3<f32>(
        density_at(q - vec3<f32>(1.0, 0.0, 0.0)) - density_at(q + vec3<f32>(1.0, 0.0, 0.0)),
        density_at(q - vec3<f32>(0.0, 1.0, 0.0)) - density_at(q + vec3<f32>(0.0, 1.0, 0.0)),
        density_at(q - vec3<f32>(0.0, 0.0, 1.0)) - density_at(q + vec3<f32>(0.0, 0.0, 1.0)),
    );
    return normalize_or(g, vec3<f32>(0.0, 1.0, 0.0));
}

// A surface hit: t (w < 0: none) and the normal (xyz).
fn surface(o: vec3<f32>, d: vec3<f32>, t0: f32, t1: f32, axis: u32) -> vec4<f32> {
    if (t0 > 0.0 && axis < 3u && density_at(o + d * t0) >= SURFACE) {
        var n = vec3<f32>(0.0);
        n[axis] = -sign(d[axis]);
        return vec4<f32>(n, t0);
    }
    let inv = inverse(d);
    var t = t0;
    var below = t0;
    var last = 0.0;
    for (var k = 0u; k < MAX_STEPS && t < t1; k++) {
        let q = o + d * t;
        if (brick_at(q) < SURFACE) {
            t = brick_exit(inv, q, t);
            below = t;
            last = 0.0;
            continue;
        }
        let dq = density_at(q);
        if (dq >= SURFACE) {
            let hit = crossing(o, d, vec2<f32>(below, last), vec2<f32>(t, dq));
            return vec4<f32>(normal_at(o + d * hit), hit);
        }
        last = dq;
        below = t;
        t += SURFACE_STEP;
    }
    return vec4<f32>(0.0, 0.0, 0.0, -1.0);
}

// The light from inside the liquid along the ray from q (voxels, on the surface) in d: what
// lies behind, absorbed, and the light scattered.
fn through(o: vec3<f32>, d: vec3<f32>) -> vec3<f32> {
    let s = slab(o, d, M.box_.xyz);
    var far = select(0.0, s.y, s.w > 0.0);
    let hit = ball_hit(o, d, 0.0, far);
    if (hit.y >= 0.0) {
        far = hit.x;
    }
    var mass = 0.0;
    var carried = vec3<f32>(0.0);
    var start = 0.0;
    var last = 0.0;
    var inside = SURFACE;
    var exit = o + d * far;
    var dir = d;
    var on_ball = hit.y;
    for (var k = 0u; k < MAX_STEPS; k++) {
        if (start >= far) {
            break;
        }
        let len = min(INSIDE_STEP, far - start);
        let mid = start + 0.5 * len;
        let smp = sample_at(o + d * mid);
        if (smp.w < SURFACE) {
            let hi = crossing(o, d, vec2<f32>(last, inside), vec2<f32>(mid, smp.w));
            let part = max(hi - start, 0.0);
            mass += inside * part;
            carried += smp.xyz * (part * inside / max(smp.w, 1e-6));
            let p = o + d * hi;
            let n = normal_at(p);
            let out = refract_through(d, -n, IOR);
            dir = select(reflect_about(d, n), out.xyz, out.w > 0.0);
            exit = p;
            on_ball = -1.0;
            break;
        }
        mass += smp.w * len;
        carried += smp.xyz * len;
        last = mid;
        inside = smp.w;
        start += len;
    }
    mass *= voxel();
    carried *= voxel();
    let world = to_world(exit * voxel());
    let along = normalize_or(dir_to_world(dir), vec3<f32>(0.0, -1.0, 0.0));
    var behind: vec3<f32>;
    if (on_ball >= 0.0) {
        behind = ball_light(exit, u32(on_ball), along);
    } else {
        behind = backdrop(world, along);
    }
    var mean = vec3<f32>(1.0);
    if (mass > 1e-6) {
        mean = carried / mass;
    }
    let top = max(mean.x, max(mean.y, mean.z));
    let low = min(mean.x, min(mean.y, mean.z));
    var saturation = 0.0;
    if (top > 1e-6) {
        saturation = (top - low) / top;
    }
    let glow = (1.0 - exp(-SCATTER * mass)) * GLOW * (0.1 + 0.9 * saturation);
    let sun_light = max(M.sun.y, 0.0) + AMBIENT;
    let passed = transmittance(mass, carried);
    return behind * passed + clamp(mean, vec3<f32>(0.0), vec3<f32>(1.0)) * SUN * (glow * sun_light);
}

fn liquid_light(o: vec3<f32>, d: vec3<f32>, t: f32, n: vec3<f32>) -> vec3<f32> {
    let q = o + d * t;
    let hit = to_world(q * voxel());
    let f = fresnel(clamp(-dot(d, n), 0.0, 1.0));
    let mirror = dir_to_world(reflect_about(d, n));
    let spec = pow256(max(dot(mirror, M.sun.xyz), 0.0));
    let reflected = backdrop(hit, mirror) + SUN * (spec * 3.0);
    let bent = refract_through(d, n, 1.0 / IOR);
    if (bent.w == 0.0) {
        return reflected;
    }
    return reflected * f + through(q, bent.xyz) * (1.0 - f);
}

// How much of a tank edge the ray passes within a pixel of, 0..1.
fn edge(o: vec3<f32>, d: vec3<f32>, t0: f32, t1: f32) -> f32 {
    var best = 0.0;
    for (var k = 0u; k < 2u; k++) {
        let t = select(t0, t1, k == 1u);
        let q = o + d * t;
        let g = abs(min(q, M.box_.xyz - q));
        // The middle of the three distances to a face.
        let second = max(min(g.x, g.y), min(max(g.x, g.y), g.z));
        let to_eye = M.eye.xyz - to_world(q * voxel());
        let width = max(sqrt(dot(to_eye, to_eye)) * M.right.w / voxel(), 1e-6);
        best = max(best, clamp(1.0 - second / (EDGE_PIXELS * width), 0.0, 1.0));
    }
    return best;
}

fn shade(eye: vec3<f32>, d: vec3<f32>) -> vec3<f32> {
    let o = to_local(eye) / voxel();
    let dl = dir_to_local(d);
    let s = slab(o, dl, M.box_.xyz);
    if (s.w == 0.0) {
        return backdrop(eye, d);
    }
    let t0 = s.x;
    let t1 = s.y;
    let glass_edge = edge(o, dl, t0, t1) * EDGE;
    let hit = ball_hit(o, dl, t0, t1);
    let surf = surface(o, dl, t0, select(t1, hit.x, hit.y >= 0.0), u32(s.z));
    var c: vec3<f32>;
    if (surf.w >= 0.0) {
        c = liquid_light(o, dl, surf.w, surf.xyz);
    } else if (hit.y >= 0.0) {
        c = ball_light(o + dl * hit.x, u32(hit.y), d);
    } else {
        c = backdrop(to_world((o + dl * t1) * voxel()), d);
    }
    return c * GLASS + vec3<f32>(glass_edge);
}

@compute @workgroup_size(8, 8)
fn march(@builtin(global_invocation_id) gid: vec3<u32>) {
    let w = M.sizes.x;
    let h = M.sizes.y;
    if (gid.x >= w || gid.y >= h) {
        return;
    }
    let half = M.eye.w;
    let v = ((f32(gid.y) + 0.5) / f32(h) * 2.0 - 1.0) * half;
    let u = ((f32(gid.x) + 0.5) / f32(w) * 2.0 - 1.0) * half * f32(w) / f32(h);
    let d = normalize_or(M.forward.xyz + M.right.xyz * u + M.up.xyz * v, M.forward.xyz);
    var c = vec3<f32>(0.0);
    if (all(M.dims.xyz > vec3<u32>(0u))) {
        c = shade(M.eye.xyz, d);
    }
    // Not a number or negative: black, as on the CPU.
    c = select(vec3<f32>(0.0), max(c, vec3<f32>(0.0)), (c == c) & (c < vec3<f32>(INF)));
    light[gid.y * w + gid.x] = vec4<f32>(c, 0.0);
}

@compute @workgroup_size(MARCH_SW)
fn bricks(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.y * (nwg.x * MARCH_SW) + gid.x;
    let nb = M.bricks.xyz;
    if (i >= nb.x * nb.y * nb.z) {
        return;
    }
    let b = vec3<u32>(i % nb.x, (i / nb.x) % nb.y, i / (nb.x * nb.y));
    let lo = max(b * BRICK, vec3<u32>(1u)) - vec3<u32>(1u);
    let hi = min((b + vec3<u32>(1u)) * BRICK + vec3<u32>(1u), M.dims.xyz);
    var most = 0.0;
    for (var z = lo.z; z < hi.z; z++) {
        for (var y = lo.y; y < hi.y; y++) {
            for (var x = lo.x; x < hi.x; x++) {
                most = max(most, density[vidx(x, y, z)]);
            }
        }
    }
    brick_max[i] = most;
}

@compute @workgroup_size(MARCH_SW)
fn shadow(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.y * (nwg.x * MARCH_SW) + gid.x;
    let nx = M.sizes.z;
    if (M.shadow.w == 0.0 || i >= nx * M.sizes.w) {
        return;
    }
    let texel = M.shadow.z;
    let p = vec3<f32>(
        M.shadow.x + (f32(i % nx) + 0.5) * texel,
        0.0,
        M.shadow.y + (f32(i / nx) + 0.5) * texel,
    );
    let o = to_local(p) / voxel();
    let d = M.sun_local.xyz;
    let s = slab(o, d, M.box_.xyz);
    var sum = 0.0;
    if (s.w > 0.0) {
        for (var k = 0u; k < M.dims.w; k++) {
            let b = balls[k].centre;
            if (!(b.w > 0.0) || any(abs(b.xyz) > vec3<f32>(1e30))) {
                continue;
            }
            let oc = o - b.xyz;
            let half = dot(oc, d);
            let disc = half * half - (dot(oc, oc) - b.w * b.w);
            if (disc > 0.0 && -half > 0.0) {
                sum += 2.0 * sqrt(disc) * BALL_SHADOW;
            }
        }
        let inv = inverse(d);
        var t = s.x + 0.5 * SHADOW_STEP;
        for (var k = 0u; k < MAX_STEPS && t < s.y; k++) {
            let q = o + d * t;
            if (brick_at(q) < SHADOW_EMPTY) {
                t = brick_exit(inv, q, t);
                continue;
            }
            sum += density_at(q) * SHADOW_STEP;
            t += SHADOW_STEP;
        }
    }
    depth[i] = sum * voxel();
}
