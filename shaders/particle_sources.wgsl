// particle_sources.wgsl: what reaches the particles from outside (sim/particles/sources.rs),
// operation for operation, in either dimension (after particle_dim2.wgsl or
// particle_dim3.wgsl). `impulses` puts each impulse in turn on every particle's velocity,
// across and up (in 3D through the whole depth): a shock pushes along its force within its
// reach, fading to 0 there; a pull draws towards its centre (negative: pushes away) and calms;
// a slosh pushes everywhere. `recycle` gives the Q.recycle oldest particles' slots (serial
// numbers Q.oldest onwards, in colour.w's mantissa: gpu/serial.rs) to the first new
// particles; `append` adds the rest after the Q.n particles.

struct Impulse {
    centre: vec2<f32>,
    reach: f32,
    pull: u32,         // 0: a shock along force; 1: a pull of force.x with calm; 2: a slosh
    force: vec2<f32>,
    calm: f32,
    _p: u32,
}

struct Fresh {
    pos: vecD,
    vel: vecD,
    color: vec4<f32>,  // w: the serial number's low 23 bits as the mantissa of a number in [1, 2)
}

struct Sources {
    n: u32,            // particles now
    count: u32,        // impulses, or new particles
    recycle: u32,      // new particles that take the oldest particles' slots
    oldest: u32,       // the oldest particle's serial number (low 23 bits)
}

@group(0) @binding(0) var<uniform> Q: Sources;
@group(0) @binding(1) var<storage, read_write> pos: array<vecD>;
@group(0) @binding(2) var<storage, read_write> vel: array<vecD>;
@group(0) @binding(3) var<storage, read_write> color: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> impulse: array<Impulse>;
@group(0) @binding(5) var<storage, read> fresh: array<Fresh>;

@compute @workgroup_size(256)
fn impulses(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= Q.n {
        return;
    }
    let p = pos[i].xy;
    var v = vel[i].xy;
    for (var k = 0u; k < Q.count; k++) {
        let m = impulse[k];
        if m.pull == 2u {
            v = vec2<f32>(v.x + m.force.x, v.y + m.force.y);
        } else if m.pull == 0u {
            let dx = p.x - m.centre.x;
            let dy = p.y - m.centre.y;
            let d = sqrt(dx * dx + dy * dy);
            if d < m.reach {
                let w = 1.0 - d / m.reach;
                v = vec2<f32>(v.x + m.force.x * w, v.y + m.force.y * w);
            }
        } else {
            let dx = m.centre.x - p.x;
            let dy = m.centre.y - p.y;
            let d = sqrt(dx * dx + dy * dy);
            if d < m.reach && d > 0.0 {
                let w = 1.0 - d / m.reach;
                let kk = w * m.force.x / d;
                v = vec2<f32>(v.x + (dx * kk - v.x * w * m.calm), v.y + (dy * kk - v.y * w * m.calm));
            }
        }
    }
    vel[i] = with_xy(vel[i], v);
}

fn put(i: u32, f: Fresh) {
    pos[i] = f.pos;
    vel[i] = f.vel;
    color[i] = f.color;
}

@compute @workgroup_size(256)
fn recycle(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= Q.n {
        return;
    }
    // How many particles are older than this one (serials are consecutive, wrapping at 2^23).
    let older = (bitcast<u32>(color[i].w) - Q.oldest) & 0x7fffffu;
    if older < Q.recycle {
        put(i, fresh[older]);
    }
}

@compute @workgroup_size(256)
fn append(@builtin(global_invocation_id) gid: vec3<u32>) {
    let t = gid.x;
    if t >= Q.count - Q.recycle {
        return;
    }
    put(Q.n + t, fresh[Q.recycle + t]);
}
