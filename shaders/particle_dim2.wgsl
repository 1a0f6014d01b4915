// particle_dim2.wgsl: the particle stages' words in two dimensions, composed before each
// particle_<stage>.wgsl (gpu/shaders.rs). `vecD` is a particle's position or velocity as the
// buffers store it: vec2<f32> (8 bytes a particle).

alias vecD = vec2<f32>;

// Components a particle's position has.
const DIM: i32 = 2;

// `v` with its first two components (across, up) replaced by `xy`.
fn with_xy(v: vecD, xy: vec2<f32>) -> vecD {
    return xy;
}

// Squared length and dot product, folded from the first axis as the CPU's (`hash::dist2`).
fn norm2(d: vecD) -> f32 {
    return d.x * d.x + d.y * d.y;
}

fn dotD(a: vecD, b: vecD) -> f32 {
    return a.x * b.x + a.y * b.y;
}

// A 3-vector's first two components (the uniform's vectors are 3-vectors), and back (z = 0).
fn from3(v: vec3<f32>) -> vecD {
    return v.xy;
}

fn to3(v: vecD) -> vec3<f32> {
    return vec3<f32>(v, 0.0);
}
