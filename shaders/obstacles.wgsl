// obstacles.wgsl: the boundary rules of solid obstacles that are not part of another pass
// (cpu/obstacles.rs). No flow through a solid face: the velocity of every listed closed face
// is set to 0 (free slip, as at the canvas walls: only the component through the face is held).
// No dye inside solids: every listed solid dye cell is cleared. And the pressure right-hand
// side b = -D, made mean-free in every connected fluid region (an enclosed pocket is its own
// region; the constant per region is the null space of the Neumann problem) and 0 in cells
// with no open face. Lists are built once per mask on the CPU; they run as 1D dispatches
// folded into 2D (at most 65535 workgroups per axis; common.wgsl's list_item).

// The region label of a cell with no open face (cpu Regions: u32::MAX).
const NO_REGION: u32 = 0xffffffffu;

struct Solids {
    // Lengths of the closed-face lists (u, v) and of the solid dye cell list.
    closed_u: u32,
    closed_v: u32,
    solid_dye: u32,
    // Connected fluid regions, chunks of their member list, and cells of the grid.
    regions: u32,
    chunks: u32,
    cells: u32,
    _p0: u32,
    _p1: u32,
}

@group(0) @binding(0) var<uniform> S: Solids;
@group(0) @binding(1) var<storage, read> list_u: array<u32>;
@group(0) @binding(2) var<storage, read> list_v: array<u32>;
@group(0) @binding(3) var<storage, read_write> u: array<f32>;
@group(0) @binding(4) var<storage, read_write> v: array<f32>;
@group(0) @binding(5) var<storage, read> list_dye: array<u32>;
@group(0) @binding(6) var<storage, read_write> dye: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read> d: array<f32>;
@group(0) @binding(8) var<storage, read_write> b: array<f32>;
// The fluid cells grouped by region (natural order within each).
@group(0) @binding(9) var<storage, read> members: array<u32>;
// Per chunk: its range [x, y) of `members`, all in one region.
@group(0) @binding(10) var<storage, read> chunks: array<vec2<u32>>;
@group(0) @binding(11) var<storage, read_write> partials: array<f32>;
// Per region: its chunks [x, y) and its cell count z.
@group(0) @binding(12) var<storage, read> regions: array<vec4<u32>>;
@group(0) @binding(13) var<storage, read_write> means: array<f32>;
// Per cell: its region, or NO_REGION.
@group(0) @binding(14) var<storage, read> label: array<u32>;

// u = 0 on the listed closed u faces, then v = 0 on the closed v faces (cpu close_faces).
@compute @workgroup_size(LW)
fn close_faces(@builtin(global_invocation_id) gid: vec3<u32>,
               @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = list_item(gid, nwg);
    if (k < S.closed_u) {
        u[list_u[k]] = 0.0;
    } else if (k - S.closed_u < S.closed_v) {
        v[list_v[k - S.closed_u]] = 0.0;
    }
}

// Dye = 0 in the listed solid dye cells (cpu clear_solid_dye).
@compute @workgroup_size(LW)
fn clear_solid_dye(@builtin(global_invocation_id) gid: vec3<u32>,
                   @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = list_item(gid, nwg);
    if (k < S.solid_dye) {
        dye[list_dye[k]] = vec4(0.0);
    }
}

var<workgroup> acc: array<f32, LW>;

// The sum of b = -D over each chunk of a region's cells (one workgroup per chunk, a fixed
// tree order), into partials.
@compute @workgroup_size(LW)
fn region_partial(@builtin(local_invocation_id) lid3: vec3<u32>,
                  @builtin(workgroup_id) wid: vec3<u32>,
                  @builtin(num_workgroups) nwg: vec3<u32>) {
    let chunk = wid.y * nwg.x + wid.x;
    let lid = lid3.x;
    if (chunk >= S.chunks) {
        return;
    }
    let range = chunks[chunk];
    var s = 0.0;
    for (var k = range.x + lid; k < range.y; k += LW) {
        s += -d[members[k]];
    }
    acc[lid] = s;
    for (var half = LW / 2u; half > 0u; half = half / 2u) {
        workgroupBarrier();
        if (lid < half) {
            acc[lid] = acc[lid] + acc[lid + half];
        }
    }
    if (lid == 0u) {
        partials[chunk] = acc[0];
    }
}

// Each region's mean of b, from its chunks' sums in order.
@compute @workgroup_size(LW)
fn region_mean(@builtin(global_invocation_id) gid: vec3<u32>,
               @builtin(num_workgroups) nwg: vec3<u32>) {
    let r = list_item(gid, nwg);
    if (r >= S.regions) {
        return;
    }
    let region = regions[r];
    var s = 0.0;
    for (var k = region.x; k < region.y; k++) {
        s += partials[k];
    }
    means[r] = s / f32(region.z);
}

// b = -D minus its region's mean; 0 in cells with no open face (cpu Obstacles::set_rhs).
@compute @workgroup_size(LW)
fn set_rhs(@builtin(global_invocation_id) gid: vec3<u32>,
           @builtin(num_workgroups) nwg: vec3<u32>) {
    let c = list_item(gid, nwg);
    if (c >= S.cells) {
        return;
    }
    let l = label[c];
    var x = 0.0;
    if (l != NO_REGION) {
        x = -d[c] - means[l];
    }
    b[c] = x;
}
