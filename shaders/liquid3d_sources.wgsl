// liquid3d_sources.wgsl: what reaches the 3D liquid from outside (sim/liquid3d/sources.rs),
// operation for operation. Units: metres and seconds, in the tank's frame. `impulses` puts each
// impulse in turn on every particle's velocity (across and up, through the whole depth): a
// shock adds its force within its reach, fading to 0 there; a pull draws towards its centre
// (negative: pushes away); a slosh adds its force everywhere (the tank jerked). `recycle`
// gives the Q.recycle oldest particles' slots (serial numbers Q.oldest onwards, in colour.w's
// mantissa: gpu/serial.rs) to the first new particles; `append` adds the rest after the Q.n
// particles.

struct Impulse {
    centre: vec2<f32>,
    reach: f32,
    pull: u32,         // 0: a shock along force; 1: a pull of force.x; 2: force everywhere
    force: vec2<f32>,
    _p0: u32,
    _p1: u32,
}

struct Fresh {
    pos: vec4<f32>,
    vel: vec4<f32>,
    color: vec4<f32>,  // w: the serial number's low 23 bits as the mantissa of a number in [1, 2)
}

struct Sources {
    n: u32,            // particles now
    count: u32,        // impulses, or new particles
    recycle: u32,      // new particles that take the oldest particles' slots
    oldest: u32,       // the oldest particle's serial number (low 23 bits)
}

@group(0) @binding(0) var<uniform> Q: Sources;
@group(0) @binding(1) var<storage, read_write> pos: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> vel: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> color: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> impulse: array<Impulse>;
@group(0) @binding(5) var<storage, read> fresh: array<Fresh>;

@compute @workgroup_size(256)
fn impulses(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= Q.n {
        return;
    }
    let p = pos[i];
    var v = vel[i];
    for (var k = 0u; k < Q.count; k++) {
        let m = impulse[k];
        if m.pull == 2u {
            v = vec4<f32>(v.x + m.force.x, v.y + m.force.y, v.z, v.w);
            continue;
        }
        let dx = m.centre.x - p.x;
        let dy = m.centre.y - p.y;
        let r = sqrt(dx * dx + dy * dy);
        if r < m.reach {
            if m.pull == 0u {
                let w = 1.0 - r / m.reach;
                v = vec4<f32>(v.x + m.force.x * w, v.y + m.force.y * w, v.z, v.w);
            } else if r > 1e-6 {
                let w = m.force.x * (1.0 - r / m.reach) / r * 0.1;
                v = vec4<f32>(v.x + dx * w, v.y + dy * w, v.z, v.w);
            }
        }
    }
    vel[i] = v;
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
