// particle_tank.wgsl: the 3D tank as the particle step's container (sim/liquid3d/mod.rs,
// `Tank`), composed after particle_step.wgsl in three dimensions (gpu/shaders.rs): the walls
// as the liquid going on beyond them at the target density (their share of the densities, and
// their push, never a pull), and the floaters (balls, sim/liquid3d/floaters.rs) the particles
// meet as the walls, push and grip, and pay back; `floaters` moves them after the forces,
// `floaters_keep` gives them the drag after the particles met them in the move.

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
    return balls[i].pos.xyz + balls[i].vel.xyz * S.look;
}

// A wall at distance d: the shares of the density and near density kernels beyond it and
// their slopes (liquid3d::Kernels::wall); zero beyond reach.
fn wall(gap: f32) -> vec4<f32> {
    let h = S.h;
    if !(gap < h) {
        return vec4<f32>(0.0);
    }
    let d = max(gap, 0.0);
    let x = h - d;
    let x2 = x * x;
    let h5 = S.h5;
    return vec4<f32>(
        x2 * x2 * (3.0 * d + 2.0 * h) / (4.0 * h5),
        x2 * x2 * x * (2.0 * d + h) / (2.0 * h5 * h),
        5.0 * x2 * x * (3.0 * d + h) / (4.0 * h5),
        3.0 * x2 * x2 * (4.0 * d + h) / (2.0 * h5 * h),
    );
}

// The walls' and the balls' share of the densities at p.
fn container_density(p4: vecD, acc_in: vec2<f32>) -> vec2<f32> {
    let p = p4.xyz;
    var acc = acc_in;
    for (var c = 0; c < 3; c++) {
        let w0 = wall(p[c]);
        let w1 = wall(S.size[c] - p[c]);
        acc = vec2<f32>(acc.x + S.target_density * w0.x, acc.y + S.target_density * w0.y);
        acc = vec2<f32>(acc.x + S.target_density * w1.x, acc.y + S.target_density * w1.y);
    }
    var f = vec2<f32>(0.0);
    for (var i = 0u; i < S.floaters; i++) {
        let w = wall(contact(p, ahead(i), balls[i].pos.w).gap);
        f = vec2<f32>(f.x + S.target_density * w.x, f.y + S.target_density * w.y);
    }
    return vec2<f32>(acc.x + f.x, acc.y + f.y);
}

// The walls push (the pressure of the liquid beyond them, and its near pressure); the balls
// push and grip too (liquid3d::floaters::Push), and get it all back through `pushes`.
fn container_force(p4: vecD, da: vec2<f32>, qa: vec2<f32>, v4: vecD, acc_in: vecD) -> vecD {
    let pa = p4.xyz;
    let va = v4.xyz;
    var acc = acc_in.xyz;
    let inv = 1.0 / max(da.x, 1e-12);
    for (var c = 0; c < 3; c++) {
        let g0 = wall(pa[c]);
        let g1 = wall(S.size[c] - pa[c]);
        let p0 = max(qa.x, 0.0) * inv * g0.z + S.near_pressure * S.target_density * inv * g0.w;
        let p1 = max(qa.x, 0.0) * inv * g1.z + S.near_pressure * S.target_density * inv * g1.w;
        acc[c] += p0;
        acc[c] -= p1;
    }
    let pressure = max(qa.x, 0.0) * inv;
    let near = S.near_pressure * S.target_density * inv;
    for (var i = 0u; i < S.floaters; i++) {
        let k = contact(pa, ahead(i), balls[i].pos.w);
        if !(k.gap < S.h) {
            continue;
        }
        let w = wall(k.gap);
        let push = pressure * w.z + near * w.w;
        let grip = S.grip * 2.0 * w.x;
        let a = k.n * push + (balls[i].vel.xyz - va) * grip;
        acc = vec3<f32>(acc.x + a.x, acc.y + a.y, acc.z + a.z);
        for (var c = 0u; c < 3u; c++) {
            let back = clamp(-a[c] * FLOAT_SCALE, -PUSH_MAX, PUSH_MAX);
            atomicAdd(&pushes[4u * i + c], i32(round(back)));
        }
    }
    return vec4<f32>(acc, 0.0);
}

// Put back on the surface of a ball it ended inside, its speed into the ball taken away
// (liquid3d::floaters::keep_out).
fn container_keep_out(p4: ptr<function, vecD>, v4: ptr<function, vecD>) {
    var p = (*p4).xyz;
    var v = (*v4).xyz;
    for (var b = 0u; b < S.floaters; b++) {
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
    *p4 = vec4<f32>(p, 0.0);
    *v4 = vec4<f32>(v, 0.0);
}

// The balls moved by what the particles paid back and by gravity, off the walls and each
// other (liquid3d::floaters::advance, one thread for them all, in order); the sums cleared.
@compute @workgroup_size(1)
fn floaters() {
    let n = S.floaters;
    for (var i = 0u; i < n; i++) {
        var b = balls[i];
        let radius = b.pos.w;
        let m = max(S.ball_mass * radius * radius * radius, 1e-3);
        var f = vec3<f32>(0.0);
        for (var c = 0u; c < 3u; c++) {
            f[c] = f32(atomicLoad(&pushes[4u * i + c])) / FLOAT_SCALE;
            atomicStore(&pushes[4u * i + c], 0);
        }
        var v = b.vel.xyz + (f / m + S.gravity) * S.dt;
        var p = b.pos.xyz + v * S.dt;
        var broken = false;
        for (var c = 0; c < 3; c++) {
            if !finite(p[c]) || !finite(v[c]) {
                broken = true;
            }
        }
        if broken {
            p = 0.5 * S.size;
            v = vec3<f32>(0.0);
        } else {
            for (var c = 0; c < 3; c++) {
                let lo = min(radius, 0.5 * S.size[c]);
                let hi = max(S.size[c] - radius, 0.5 * S.size[c]);
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
    for (var i = 0u; i < S.floaters; i++) {
        balls[i].vel = vec4<f32>(balls[i].vel.xyz * S.keep, balls[i].vel.w);
    }
}
