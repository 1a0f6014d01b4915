// liquid3d_step.wgsl: the 3D liquid's step (sim/liquid3d/mod.rs, `Liquid::step`), operation for
// operation, in the tank's own frame (the box [0, size], metres, seconds): gravity, the
// predicted positions and their cell keys; after the sort (cell_sort.wgsl) and the reorder by
// it (particle_reorder.wgsl); densities at the predicted positions (the walls as the liquid going on
// beyond them at the target density); pressure, near pressure, viscosity and bulk viscosity,
// each pair's terms symmetric in the pair, and the walls' push; the move, the walls' bounce
// and slip, and the drag. A particle keeps its first L.max_neighbours neighbours in reach (in
// the order of the cells around it), as the CPU does.

struct Liquid3d {
    n: u32,               // particles
    nx: u32,              // cells along x, y, z (cells one reach wide)
    ny: u32,
    nz: u32,
    size: vec3<f32>,      // the tank, m
    h: f32,               // the kernels' radius (the reach), m
    gravity: vec3<f32>,   // m/s², in the tank's frame
    inv_cell: f32,        // 1 / cell edge, as the CPU rounds it
    dt: f32,              // s
    look: f32,            // look-ahead of the predicted positions, s
    rho0: f32,            // target density
    stiffness: f32,       // m²/s²
    near_stiffness: f32,
    visc: f32,            // viscosity / rho0
    damp: f32,            // bulk viscosity / rho0
    bounce: f32,          // speed kept off a wall
    slip: f32,            // speed kept along a wall over the step
    keep: f32,            // velocity kept through the drag
    h5: f32,              // h^5 as the CPU rounds it (the walls' integrals)
    poly6: f32,           // the kernels' factors (liquid3d::Kernels)
    spiky2: f32,
    spiky3: f32,
    spiky2_slope: f32,
    spiky3_slope: f32,
    max_neighbours: u32,  // neighbours a particle keeps (liquid3d::MAX_NEIGHBOURS)
    cells: u32,           // nx * ny * nz
    floaters: u32,        // balls floating in it (liquid3d::floaters), at most 8
    grip: f32,            // how hard the liquid grips a ball, per second (viscosity * GRIP)
    ball_mass: f32,       // a ball's mass over its radius cubed, particles per m³
    _p0: u32,
    _p1: u32,
    _p2: u32,
}

// A floating ball: centre and radius, velocity and mass (particles).
struct Ball {
    pos: vec4<f32>,
    vel: vec4<f32>,
}

// The balls' pushes summed in fixed point (atomics), 1/256 m/s² a step: each push is clamped to
// PUSH_MAX (30 000 m/s², far past any real push) so that the about 600 particles round a ball
// can never overflow an i32 (600 x 2e6 < 2^31).
const FLOAT_SCALE: f32 = 256.0;
const PUSH_MAX: f32 = 2e6;
const BALL_BOUNCE: f32 = 0.3;     // mirrored by liquid3d::floaters::BOUNCE

@group(0) @binding(0) var<uniform> L: Liquid3d;
@group(0) @binding(1) var<storage, read_write> pos: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> vel: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> pred: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> svel: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> start: array<u32>;
@group(0) @binding(6) var<storage, read_write> density: array<vec2<f32>>;
@group(0) @binding(7) var<storage, read_write> keys: array<u32>;
@group(0) @binding(8) var<storage, read_write> counts: array<atomic<u32>>;
@group(0) @binding(9) var<storage, read_write> balls: array<Ball>;
@group(0) @binding(10) var<storage, read_write> pushes: array<atomic<i32>>;

// Where point p stands against ball b (centre c): the gap to its surface (negative inside) and
// the unit normal out of it (liquid3d::floaters::contact).
struct Contact {
    gap: f32,
    n: vec3<f32>,
}

fn contact(p: vec3<f32>, c: vec3<f32>, radius: f32) -> Contact {
    let d = p - c;
    let r = sqrt(d.x * d.x + d.y * d.y + d.z * d.z);
    if r > 1e-6 {
        return Contact(r - radius, d / r);
    }
    return Contact(-radius, vec3<f32>(0.0, 1.0, 0.0));
}

// A ball where it is about to be (as the particles' predicted positions).
fn ahead(i: u32) -> vec3<f32> {
    return balls[i].pos.xyz + balls[i].vel.xyz * L.look;
}

// The cell of point p, clamped to the grid (liquid3d::hash::Grid::cell_of).
fn cell_of(p: vec3<f32>) -> vec3<u32> {
    let top = vec3<f32>(f32(L.nx - 1u), f32(L.ny - 1u), f32(L.nz - 1u));
    return vec3<u32>(clamp(p * L.inv_cell, vec3<f32>(0.0), top));
}

// Gravity, where each particle is about to be, and its cell (counted for the sort).
@compute @workgroup_size(256)
fn predict(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= L.n {
        return;
    }
    let v = vel[i].xyz + L.gravity * L.dt;
    vel[i] = vec4<f32>(v, 0.0);
    let p = pos[i].xyz + v * L.look;
    pred[i] = vec4<f32>(p, 0.0);
    let c = cell_of(p);
    let key = (c.z * L.ny + c.y) * L.nx + c.x;
    keys[i] = key;
    atomicAdd(&counts[key], 1u);
}

// The runs of cells (consecutive along x) around point p: first sorted index and end, up to 9.
struct Around {
    lo: array<u32, 9>,
    hi: array<u32, 9>,
    runs: u32,
}

fn around(p: vec3<f32>) -> Around {
    let c = cell_of(p);
    let i0 = select(c.x - 1u, 0u, c.x == 0u);
    let i1 = min(c.x + 1u, L.nx - 1u);
    let j0 = select(c.y - 1u, 0u, c.y == 0u);
    let j1 = min(c.y + 1u, L.ny - 1u);
    let k0 = select(c.z - 1u, 0u, c.z == 0u);
    let k1 = min(c.z + 1u, L.nz - 1u);
    var a: Around;
    a.runs = 0u;
    for (var kk = k0; kk <= k1; kk++) {
        for (var jj = j0; jj <= j1; jj++) {
            let row = (kk * L.ny + jj) * L.nx;
            a.lo[a.runs] = start[row + i0];
            a.hi[a.runs] = start[row + i1 + 1u];
            a.runs += 1u;
        }
    }
    return a;
}

// A wall at distance d: the shares of the density and near density kernels beyond it and
// their slopes (liquid3d::Kernels::wall); zero beyond reach.
fn wall(gap: f32) -> vec4<f32> {
    let h = L.h;
    if !(gap < h) {
        return vec4<f32>(0.0);
    }
    let d = max(gap, 0.0);
    let x = h - d;
    let x2 = x * x;
    let h5 = L.h5;
    return vec4<f32>(
        x2 * x2 * (3.0 * d + 2.0 * h) / (4.0 * h5),
        x2 * x2 * x * (2.0 * d + h) / (2.0 * h5 * h),
        5.0 * x2 * x * (3.0 * d + h) / (4.0 * h5),
        3.0 * x2 * x2 * (4.0 * d + h) / (2.0 * h5 * h),
    );
}

// Densities at the predicted positions (each particle counts itself), the walls' share added.
@compute @workgroup_size(256)
fn density_pass(@builtin(global_invocation_id) gid: vec3<u32>) {
    let me = gid.x;
    if me >= L.n {
        return;
    }
    let p = pred[me].xyz;
    let h2 = L.h * L.h;
    var acc = vec2<f32>(0.0);
    var found = 0u;
    let a = around(p);
    for (var r = 0u; r < a.runs && found < L.max_neighbours; r++) {
        for (var k = a.lo[r]; k < a.hi[r]; k++) {
            let q = pred[k].xyz;
            let dx = q.x - p.x;
            let dy = q.y - p.y;
            let dz = q.z - p.z;
            let r2 = dx * dx + dy * dy + dz * dz;
            if r2 < h2 {
                let v = max(L.h - sqrt(r2), 0.0);
                let v2 = v * v;
                acc = vec2<f32>(acc.x + v2 * L.spiky2, acc.y + v2 * v * L.spiky3);
                if k != me {
                    found += 1u;
                    if found == L.max_neighbours {
                        break;
                    }
                }
            }
        }
    }
    for (var c = 0; c < 3; c++) {
        let w0 = wall(p[c]);
        let w1 = wall(L.size[c] - p[c]);
        acc = vec2<f32>(acc.x + L.rho0 * w0.x, acc.y + L.rho0 * w0.y);
        acc = vec2<f32>(acc.x + L.rho0 * w1.x, acc.y + L.rho0 * w1.y);
    }
    // The balls, as the walls.
    var f = vec2<f32>(0.0);
    for (var i = 0u; i < L.floaters; i++) {
        let w = wall(contact(p, ahead(i), balls[i].pos.w).gap);
        f = vec2<f32>(f.x + L.rho0 * w.x, f.y + L.rho0 * w.y);
    }
    density[me] = vec2<f32>(acc.x + f.x, acc.y + f.y);
}

fn pressures(d: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(L.stiffness * (d.x - L.rho0), L.near_stiffness * d.y);
}

// Pressure, near pressure, viscosity and bulk viscosity with the first neighbours in reach
// (those the density counted), and the walls' push: the new velocities into svel.
@compute @workgroup_size(256)
fn forces(@builtin(global_invocation_id) gid: vec3<u32>) {
    let me = gid.x;
    if me >= L.n {
        return;
    }
    let pa = pred[me].xyz;
    let da = density[me];
    let qa = pressures(da);
    let va = vel[me].xyz;
    let ia = 1.0 / max(da.x, 1e-6);
    let h2 = L.h * L.h;
    var acc = vec3<f32>(0.0);
    var found = 0u;
    let a = around(pa);
    for (var run = 0u; run < a.runs && found < L.max_neighbours; run++) {
        for (var k = a.lo[run]; k < a.hi[run]; k++) {
            let pb = pred[k].xyz;
            let d = pb - pa;
            let r2 = d.x * d.x + d.y * d.y + d.z * d.z;
            if k == me || !(r2 < h2) {
                continue;
            }
            let r = sqrt(r2);
            let db = density[k];
            let qb = pressures(db);
            let vb = vel[k].xyz;
            let ib = 1.0 / max(db.x, 1e-6);
            // Coincident particles: the lower index goes down, the other up.
            var along = select(vec3<f32>(0.0, -1.0, 0.0), vec3<f32>(0.0, 1.0, 0.0), me < k);
            var inv_len = 1.0;
            if r > 0.0 {
                along = d;
                inv_len = 1.0 / r;
            }
            let v = L.h - r;
            let s2 = -v * L.spiky2_slope;
            let s3 = -v * v * L.spiky3_slope;
            // Symmetric in the pair (see sim/liquid3d/mod.rs): (Pa/da / db + Pb/db / da) / 2,
            // and the mean near pressure over the mean near density times the mean density.
            let t0 = 0.5 * (qa.x * ia * ib + qb.x * ib * ia);
            let t1 = 0.5 * (qa.y + qb.y) / max(0.25 * (da.y + db.y) * (da.x + db.x), 1e-12);
            let push = (s2 * t0 + s3 * t1) * inv_len;
            let w6 = h2 - r * r;
            let poly = w6 * w6 * w6 * L.poly6;
            let rel = vb - va;
            let along_rel = (rel.x * along.x + rel.y * along.y + rel.z * along.z) * (inv_len * inv_len);
            let k1 = push + along_rel * poly * L.damp;
            let k2 = poly * L.visc;
            acc += along * k1 + rel * k2;
            found += 1u;
            if found == L.max_neighbours {
                break;
            }
        }
    }
    // The walls push (never pull): the pressure of the liquid beyond them, and its near
    // pressure.
    let inv = 1.0 / max(da.x, 1e-12);
    for (var c = 0; c < 3; c++) {
        let g0 = wall(pa[c]);
        let g1 = wall(L.size[c] - pa[c]);
        let p0 = max(qa.x, 0.0) * inv * g0.z + L.near_stiffness * L.rho0 * inv * g0.w;
        let p1 = max(qa.x, 0.0) * inv * g1.z + L.near_stiffness * L.rho0 * inv * g1.w;
        acc[c] += p0;
        acc[c] -= p1;
    }
    // The balls push and grip too (liquid3d::floaters::Push), and get it all back.
    let pressure = max(qa.x, 0.0) * inv;
    let near = L.near_stiffness * L.rho0 * inv;
    for (var i = 0u; i < L.floaters; i++) {
        let k = contact(pa, ahead(i), balls[i].pos.w);
        if !(k.gap < L.h) {
            continue;
        }
        let w = wall(k.gap);
        let push = pressure * w.z + near * w.w;
        let grip = L.grip * 2.0 * w.x;
        let a = k.n * push + (balls[i].vel.xyz - va) * grip;
        acc = vec3<f32>(acc.x + a.x, acc.y + a.y, acc.z + a.z);
        for (var c = 0u; c < 3u; c++) {
            let back = clamp(-a[c] * FLOAT_SCALE, -PUSH_MAX, PUSH_MAX);
            atomicAdd(&pushes[4u * i + c], i32(round(back)));
        }
    }
    svel[me] = vec4<f32>(va + acc * L.dt, 0.0);
}

fn finite(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u;
}

// The balls moved by what the particles paid back and by gravity, off the walls and each
// other (liquid3d::floaters::advance, one thread for them all, in order); the sums cleared.
@compute @workgroup_size(1)
fn floaters_pass() {
    let n = L.floaters;
    for (var i = 0u; i < n; i++) {
        var b = balls[i];
        let radius = b.pos.w;
        let m = max(L.ball_mass * radius * radius * radius, 1e-3);
        var f = vec3<f32>(0.0);
        for (var c = 0u; c < 3u; c++) {
            f[c] = f32(atomicLoad(&pushes[4u * i + c])) / FLOAT_SCALE;
            atomicStore(&pushes[4u * i + c], 0);
        }
        var v = b.vel.xyz + (f / m + L.gravity) * L.dt;
        var p = b.pos.xyz + v * L.dt;
        var broken = false;
        for (var c = 0; c < 3; c++) {
            if !finite(p[c]) || !finite(v[c]) {
                broken = true;
            }
        }
        if broken {
            p = 0.5 * L.size;
            v = vec3<f32>(0.0);
        } else {
            for (var c = 0; c < 3; c++) {
                let lo = min(radius, 0.5 * L.size[c]);
                let hi = max(L.size[c] - radius, 0.5 * L.size[c]);
                if p[c] < lo {
                    p[c] = lo;
                    v[c] = abs(v[c]) * BALL_BOUNCE;
                } else if p[c] > hi {
                    p[c] = hi;
                    v[c] = -abs(v[c]) * BALL_BOUNCE;
                }
            }
        }
        balls[i].pos = vec4<f32>(p, radius);
        balls[i].vel = vec4<f32>(v, b.vel.w);
    }
    for (var a = 0u; a < n; a++) {
        for (var b = a + 1u; b < n; b++) {
            let fa = balls[a];
            let fb = balls[b];
            let d = fb.pos.xyz - fa.pos.xyz;
            let r = sqrt(d.x * d.x + d.y * d.y + d.z * d.z);
            let overlap = fa.pos.w + fb.pos.w - r;
            if overlap <= 0.0 {
                continue;
            }
            var nn = vec3<f32>(1.0, 0.0, 0.0);
            if r > 1e-6 {
                nn = d / r;
            }
            let dv = fa.vel.xyz - fb.vel.xyz;
            let closing = dv.x * nn.x + dv.y * nn.y + dv.z * nn.z;
            var pa = fa.pos.xyz - 0.5 * overlap * nn;
            var pb = fb.pos.xyz + 0.5 * overlap * nn;
            var va = fa.vel.xyz;
            var vb = fb.vel.xyz;
            if closing > 0.0 {
                let j = 0.5 * (1.0 + BALL_BOUNCE) * closing * nn;
                va -= j;
                vb += j;
            }
            balls[a].pos = vec4<f32>(pa, fa.pos.w);
            balls[b].pos = vec4<f32>(pb, fb.pos.w);
            balls[a].vel = vec4<f32>(va, fa.vel.w);
            balls[b].vel = vec4<f32>(vb, fb.vel.w);
        }
    }
}

// The balls' share of the drag (after the particles have met them as they moved).
@compute @workgroup_size(1)
fn floaters_keep() {
    for (var i = 0u; i < L.floaters; i++) {
        balls[i].vel = vec4<f32>(balls[i].vel.xyz * L.keep, balls[i].vel.w);
    }
}

// Move, out of the balls, bounce off the tank's walls (friction along those it touches), then
// the drag.
@compute @workgroup_size(256)
fn move_pass(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= L.n {
        return;
    }
    var v = svel[i].xyz;
    var p = pos[i].xyz + v * L.dt;
    // Put back on the surface of a ball it ended inside (liquid3d::floaters::keep_out).
    for (var b = 0u; b < L.floaters; b++) {
        let k = contact(p, balls[b].pos.xyz, balls[b].pos.w);
        if k.gap < 0.0 {
            p -= k.n * k.gap;
            let rel = v - balls[b].vel.xyz;
            let into = rel.x * k.n.x + rel.y * k.n.y + rel.z * k.n.z;
            if into < 0.0 {
                v -= k.n * into;
            }
        }
    }
    var touched = false;
    for (var c = 0; c < 3; c++) {
        if !finite(p[c]) || !finite(v[c]) {
            pos[i] = vec4<f32>(0.5 * L.size, 0.0);
            vel[i] = vec4<f32>(0.0);
            return;
        }
        if p[c] < 0.0 {
            p[c] = 0.0;
            v[c] = abs(v[c]) * L.bounce;
            touched = true;
        } else if p[c] > L.size[c] {
            p[c] = L.size[c];
            v[c] = -abs(v[c]) * L.bounce;
            touched = true;
        }
    }
    if touched {
        for (var c = 0; c < 3; c++) {
            if p[c] > 0.0 && p[c] < L.size[c] {
                v[c] *= L.slip;
            }
        }
    }
    pos[i] = vec4<f32>(p, 0.0);
    vel[i] = vec4<f32>(v * L.keep, 0.0);
}
