// liquid3d_splat.wgsl: the 3D liquid's particles into the picture's volume, as the CPU's
// `splat` (sim/liquid3d/splat.rs) does, on the GPU. Units: particles in m (the tank's frame);
// the volume is S.nx x S.ny x S.nz voxels of 1 / S.inv_voxel m, x fastest, then y, then z; the
// density reads 1 in the bulk at rest. Voxel indices are clamped to the volume (a particle past
// its edge lands in the edge voxels, as on the CPU).
//   splat: one thread per particle shares its mass (S.norm) among the 8 voxels round it (cloud
//     in cell), and its colour weighted by it, into 64-bit fixed-point sums (UNITS a unit; a
//     low word and its carry), so the sums do not depend on the order the particles run in and
//     cannot wrap.
//   resolve: one thread per voxel: the sums as floats into the density and the dye (rgb).
//   smooth_x, smooth_y, smooth_z: one pass of [1, 2, 1] / 4 along an axis, the edge voxels
//     repeated, from the src volume into the dst one (the CPU's `smooth`: two passes per axis;
//     the passes along different axes commute).
//   wall_sums_x, wall_sums_z, wall_scale_x, wall_scale_z: the CPU's `fill_walls` for the side
//     walls across x, then across z: a workgroup per wall sums its layers where the bulk layer
//     holds liquid and writes their scales; then each layer is scaled, in place in dst.
//   floater_balls: one thread per floater: its centre and radius in voxels and its colour, for the ray
//     march (raymarch.wgsl's `Ball`).

struct Splat3d {
    n: u32,          // particles
    nx: u32,         // voxels across, up and deep
    ny: u32,
    nz: u32,
    inside_x: u32,   // whole voxels inside the tank per axis (the walls' extent)
    inside_y: u32,
    inside_z: u32,
    floaters: u32,   // floaters (at most 8)
    inv_voxel: f32,  // voxels per m
    norm: f32,       // a particle's mass in bulk densities of a voxel
    _p0: u32,
    _p1: u32,
    colours: array<vec4<f32>, 8>, // the floaters' colours (rgb)
}

// The step's floater (particle_tank.wgsl's `Ball`): centre and radius, velocity.
struct StepBall {
    pos: vec4<f32>,
    vel: vec4<f32>,
}

// The ray march's ball: centre and radius in voxels, colour.
struct MarchBall {
    centre: vec4<f32>,
    colour: vec4<f32>,
}

@group(0) @binding(0) var<uniform> S: Splat3d;
@group(0) @binding(1) var<storage, read> pos: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> color: array<vec4<f32>>;
// Eight words per voxel: density, red, green, blue, each a low word and its carry.
@group(0) @binding(3) var<storage, read_write> acc: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read> src_d: array<f32>;
@group(0) @binding(5) var<storage, read> src_c: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> dst_d: array<f32>;
@group(0) @binding(7) var<storage, read_write> dst_c: array<vec4<f32>>;
// The walls' scales: side 0's two layers, then side 1's.
@group(0) @binding(8) var<storage, read_write> scales: array<f32>;
@group(0) @binding(9) var<storage, read> step_balls: array<StepBall>;
@group(0) @binding(10) var<storage, read_write> balls: array<MarchBall>;

// Threads per workgroup (sim::liquid3d::gpu::splat::SPLAT_SW).
const SPLAT_SW: u32 = 256u;
// Fixed-point units per unit of density (sim::liquid3d::gpu::splat::UNITS).
const UNITS: f32 = 65536.0;
// The walls' layers and the layer the bulk is measured by (splat.rs).
const WALL_LAYERS: u32 = 2u;
const BULK_LAYER: u32 = 3u;

fn item(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return gid.y * (nwg.x * SPLAT_SW) + gid.x;
}

// Add v (>= 0) to the sum at word k (its carry at k + 1).
fn add_fixed(k: u32, v: f32) {
    let a = u32(max(v, 0.0) * UNITS + 0.5);
    let old = atomicAdd(&acc[k], a);
    if (old > 0xffffffffu - a) {
        atomicAdd(&acc[k + 1u], 1u);
    }
}

fn read_fixed(k: u32) -> f32 {
    let lo = atomicLoad(&acc[k]);
    let hi = atomicLoad(&acc[k + 1u]);
    return f32(hi) * (4294967296.0 / UNITS) + f32(lo) / UNITS;
}

// A coordinate's first voxel along an axis of n and its share of the next (voxel centres at
// i + 0.5; clamped to the volume).
struct VoxelTap {
    i: u32,
    f: f32,
}

fn voxel_tap(x: f32, n: u32) -> VoxelTap {
    let u = clamp(x * S.inv_voxel - 0.5, 0.0, f32(n - 1u));
    let i = min(u32(u), n - 1u);
    return VoxelTap(i, u - f32(i));
}

@compute @workgroup_size(SPLAT_SW)
fn splat(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = item(gid, nwg);
    if (i >= S.n) {
        return;
    }
    let p = pos[i].xyz;
    // Not a number: no mass anywhere (the CPU's step never leaves one).
    if (any(p != p) || any(abs(p) > vec3<f32>(1e30))) {
        return;
    }
    let c = max(color[i].xyz, vec3<f32>(0.0));
    let tx = voxel_tap(p.x, S.nx);
    let ty = voxel_tap(p.y, S.ny);
    let tz = voxel_tap(p.z, S.nz);
    for (var dz = 0u; dz < 2u; dz++) {
        let z = min(tz.i + dz, S.nz - 1u);
        let wz = select(1.0 - tz.f, tz.f, dz == 1u);
        for (var dy = 0u; dy < 2u; dy++) {
            let y = min(ty.i + dy, S.ny - 1u);
            let wy = select(1.0 - ty.f, ty.f, dy == 1u);
            for (var dx = 0u; dx < 2u; dx++) {
                let x = min(tx.i + dx, S.nx - 1u);
                let wx = select(1.0 - tx.f, tx.f, dx == 1u);
                let w = wx * wy * wz * S.norm;
                let k = (((z * S.ny + y) * S.nx) + x) * 8u;
                add_fixed(k, w);
                add_fixed(k + 2u, c.x * w);
                add_fixed(k + 4u, c.y * w);
                add_fixed(k + 6u, c.z * w);
            }
        }
    }
}

@compute @workgroup_size(SPLAT_SW)
fn resolve(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let v = item(gid, nwg);
    if (v >= S.nx * S.ny * S.nz) {
        return;
    }
    let k = v * 8u;
    dst_d[v] = read_fixed(k);
    dst_c[v] = vec4<f32>(read_fixed(k + 2u), read_fixed(k + 4u), read_fixed(k + 6u), 0.0);
}

// One pass of [1, 2, 1] / 4 at voxel v, whose coordinate along the axis is `at` of `n`, the
// neighbours `stride` apart.
fn smooth_at(v: u32, at: u32, n: u32, stride: u32) {
    let l = select(v - stride, v, at == 0u);
    let r = select(v + stride, v, at + 1u >= n);
    dst_d[v] = 0.25 * (src_d[l] + src_d[r]) + 0.5 * src_d[v];
    dst_c[v] = 0.25 * (src_c[l] + src_c[r]) + 0.5 * src_c[v];
}

@compute @workgroup_size(SPLAT_SW)
fn smooth_x(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let v = item(gid, nwg);
    if (v >= S.nx * S.ny * S.nz) {
        return;
    }
    smooth_at(v, v % S.nx, S.nx, 1u);
}

@compute @workgroup_size(SPLAT_SW)
fn smooth_y(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let v = item(gid, nwg);
    if (v >= S.nx * S.ny * S.nz) {
        return;
    }
    smooth_at(v, (v / S.nx) % S.ny, S.ny, S.nx);
}

@compute @workgroup_size(SPLAT_SW)
fn smooth_z(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let v = item(gid, nwg);
    if (v >= S.nx * S.ny * S.nz) {
        return;
    }
    smooth_at(v, v / (S.nx * S.ny), S.nz, S.nx * S.ny);
}

// The walls across `axis` (0: x, 2: z): layers along it, `n` whole voxels inside the tank;
// lines along the other horizontal axis (`other` of them) and rows up (`depth` inside).
struct Walls {
    n: u32,
    other: u32,
    depth: u32,
}

fn walls(axis: u32) -> Walls {
    if (axis == 0u) {
        return Walls(S.inside_x, S.inside_z, S.inside_y);
    }
    return Walls(S.inside_z, S.inside_x, S.inside_y);
}

// The voxel of layer `k` (counted from `side`'s wall) on `line`, row `y`.
fn wall_voxel(axis: u32, w: Walls, side: u32, k: u32, line: u32, y: u32) -> u32 {
    let layer = select(w.n - 1u - k, k, side == 0u);
    if (axis == 0u) {
        return (line * S.ny + y) * S.nx + layer;
    }
    return (layer * S.ny + y) * S.nx + line;
}

// Each thread's sums: the bulk layer's, then the two wall layers'.
var<workgroup> sums: array<vec3<f32>, SPLAT_SW>;

fn wall_sums(axis: u32, side: u32, t: u32) {
    let w = walls(axis);
    var s = vec3<f32>(0.0);
    if (w.n >= 2u * BULK_LAYER + 2u) {
        let lines = w.other * w.depth;
        for (var j = t; j < lines; j += SPLAT_SW) {
            let line = j / w.depth;
            let y = j % w.depth;
            let bulk = dst_d[wall_voxel(axis, w, side, BULK_LAYER, line, y)];
            if (bulk >= 0.8) {
                s += vec3<f32>(
                    bulk,
                    dst_d[wall_voxel(axis, w, side, 0u, line, y)],
                    dst_d[wall_voxel(axis, w, side, 1u, line, y)],
                );
            }
        }
    }
    sums[t] = s;
    workgroupBarrier();
    for (var half = SPLAT_SW / 2u; half > 0u; half /= 2u) {
        if (t < half) {
            sums[t] += sums[t + half];
        }
        workgroupBarrier();
    }
    if (t == 0u) {
        let total = sums[0];
        for (var k = 0u; k < WALL_LAYERS; k++) {
            let layer = total[k + 1u];
            scales[side * WALL_LAYERS + k] = select(1.0, clamp(total.x / layer, 1.0, 1.6), layer > 0.0);
        }
    }
}

@compute @workgroup_size(SPLAT_SW)
fn wall_sums_x(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    wall_sums(0u, wid.x, lid.x);
}

@compute @workgroup_size(SPLAT_SW)
fn wall_sums_z(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    wall_sums(2u, wid.x, lid.x);
}

// One thread per (line, row) of the walls across `axis`: its voxels of every wall layer on
// both sides scaled (every row up, as on the CPU).
fn wall_scale(axis: u32, j: u32) {
    let w = walls(axis);
    if (w.n < 2u * BULK_LAYER + 2u || j >= w.other * S.ny) {
        return;
    }
    let line = j / S.ny;
    let y = j % S.ny;
    for (var side = 0u; side < 2u; side++) {
        for (var k = 0u; k < WALL_LAYERS; k++) {
            let s = scales[side * WALL_LAYERS + k];
            let v = wall_voxel(axis, w, side, k, line, y);
            dst_d[v] *= s;
            dst_c[v] *= s;
        }
    }
}

@compute @workgroup_size(SPLAT_SW)
fn wall_scale_x(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    wall_scale(0u, item(gid, nwg));
}

@compute @workgroup_size(SPLAT_SW)
fn wall_scale_z(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    wall_scale(2u, item(gid, nwg));
}

@compute @workgroup_size(SPLAT_SW)
fn floater_balls(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= S.floaters) {
        return;
    }
    let b = step_balls[i].pos;
    balls[i] = MarchBall(
        vec4<f32>(b.xyz * S.inv_voxel, b.w * S.inv_voxel),
        vec4<f32>(clamp(S.colours[i].xyz, vec3<f32>(0.0), vec3<f32>(1.0)), 0.0),
    );
}
