// particle_dim2.wgsl: the particle stages' words in two dimensions, composed before each
// particle_<stage>.wgsl (gpu/shaders.rs). `vecD` is a particle's position or velocity as the
// buffers store it: vec2<f32> (8 bytes a particle).

alias vecD = vec2<f32>;

// `v` with its first two components (across, up) replaced by `xy`.
fn with_xy(v: vecD, xy: vec2<f32>) -> vecD {
    return xy;
}
