// particle_box.wgsl: the 2D box as the particle step's container (sim/particles/step.rs,
// `Walls`): nothing beyond its walls, which the integrate stage bounces. Composed after
// particle_step.wgsl in two dimensions (gpu/shaders.rs); the box's obstacles collide after
// the step (sph_solids.wgsl).

fn container_density(p: vecD, acc: vec2<f32>) -> vec2<f32> {
    return acc;
}

fn container_force(p: vecD, d: vec2<f32>, q: vec2<f32>, v: vecD, acc: vecD) -> vecD {
    return acc;
}

fn container_keep_out(p: ptr<function, vecD>, v: ptr<function, vecD>) {}
