// particle_dim3.wgsl: the particle stages' words in three dimensions, composed before each
// particle_<stage>.wgsl (gpu/shaders.rs). `vecD` is a particle's position or velocity as the
// buffers store it: vec4<f32>, x across, y up, z into the tank, w unused and 0 (16 bytes a
// particle, the stride a vec3 would have in a storage array anyway).

alias vecD = vec4<f32>;

// Components a particle's position has.
const DIM: i32 = 3;

// `v` with its first two components (across, up) replaced by `xy`.
fn with_xy(v: vecD, xy: vec2<f32>) -> vecD {
    return vec4<f32>(xy, v.z, v.w);
}

// Squared length and dot product, folded from the first axis as the CPU's (`hash::dist2`).
fn norm2(d: vecD) -> f32 {
    return d.x * d.x + d.y * d.y + d.z * d.z;
}

fn dotD(a: vecD, b: vecD) -> f32 {
    return a.x * b.x + a.y * b.y + a.z * b.z;
}

// A 3-vector as a particle's (w = 0), and back.
fn from3(v: vec3<f32>) -> vecD {
    return vec4<f32>(v, 0.0);
}

fn to3(v: vecD) -> vec3<f32> {
    return v.xyz;
}
