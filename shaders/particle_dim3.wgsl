// particle_dim3.wgsl: the particle stages' words in three dimensions, composed before each
// particle_<stage>.wgsl (gpu/shaders.rs). `vecD` is a particle's position or velocity as the
// buffers store it: vec4<f32>, x across, y up, z into the tank, w unused (16 bytes a
// particle, the stride a vec3 would have in a storage array anyway).

alias vecD = vec4<f32>;

// `v` with its first two components (across, up) replaced by `xy`.
fn with_xy(v: vecD, xy: vec2<f32>) -> vecD {
    return vec4<f32>(xy, v.z, v.w);
}
