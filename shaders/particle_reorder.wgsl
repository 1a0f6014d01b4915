// particle_reorder.wgsl: the particles gathered into sorted order, the end of the step's sort
// stage once cell_sort.wgsl (or the 2D bitonic sort) gave `order` (the CPU's reorder in
// `Particles::predict_and_sort`, sim/particles/state.rs): positions, velocities and predicted
// positions into their sorted copies in one pass, colours (with the serial numbers) into
// theirs in another (a pass binds at most 8 storage buffers); the driver copies them back.
// Composed after particle_dim2.wgsl or particle_dim3.wgsl (gpu/shaders.rs).

struct CellSort {
    n: u32,      // particles
    cells: u32,  // cells (the sort's; unused here)
    _p0: u32,
    _p1: u32,
}

@group(0) @binding(0) var<uniform> C: CellSort;
@group(0) @binding(1) var<storage, read> order: array<u32>;
@group(0) @binding(2) var<storage, read> pos: array<vecD>;
@group(0) @binding(3) var<storage, read> vel: array<vecD>;
@group(0) @binding(4) var<storage, read> pred: array<vecD>;
@group(0) @binding(5) var<storage, read> color: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> spos: array<vecD>;
@group(0) @binding(7) var<storage, read_write> svel: array<vecD>;
@group(0) @binding(8) var<storage, read_write> spred: array<vecD>;
@group(0) @binding(9) var<storage, read_write> scolor: array<vec4<f32>>;

@compute @workgroup_size(256)
fn reorder_motion(@builtin(global_invocation_id) gid: vec3<u32>) {
    let k = gid.x;
    if k >= C.n {
        return;
    }
    let o = order[k];
    spos[k] = pos[o];
    svel[k] = vel[o];
    spred[k] = pred[o];
}

@compute @workgroup_size(256)
fn reorder_color(@builtin(global_invocation_id) gid: vec3<u32>) {
    let k = gid.x;
    if k >= C.n {
        return;
    }
    scolor[k] = color[order[k]];
}
