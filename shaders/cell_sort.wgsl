// cell_sort.wgsl: particles sorted by cell key on the GPU (sim/cells.rs `sort_by_cell`), for
// the 3D liquid (its `predict` pass writes each particle's key and counts its cell). After it
// `order[k]` is the particle at sorted index k and the particles of cell c are sorted indices
// start[c]..start[c + 1], exactly as the CPU's stable counting sort gives them: an exclusive
// scan of the counts is the start table, each particle takes the next slot of its cell
// (atomics: in any order), then `settle` puts each cell's particles in index order (a
// particle's rank in its cell is the number of smaller indices there; cells of more than
// SETTLE_MAX keep their order of arrival, which holds the same neighbours).

const SW: u32 = 256u;          // threads per workgroup; mirrored by liquid3d::gpu::SW
const SETTLE_MAX: u32 = 512u;  // mirrored by liquid3d::gpu::SETTLE_MAX

struct CellSort {
    n: u32,      // particles
    cells: u32,  // cells (keys are below it)
    _p0: u32,
    _p1: u32,
}

@group(0) @binding(0) var<uniform> C: CellSort;
@group(0) @binding(1) var<storage, read> keys: array<u32>;
@group(0) @binding(2) var<storage, read> counts: array<u32>;
@group(0) @binding(3) var<storage, read_write> start: array<u32>;
@group(0) @binding(4) var<storage, read_write> sums: array<u32>;
@group(0) @binding(5) var<storage, read_write> fill: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read_write> arrival: array<u32>;
@group(0) @binding(7) var<storage, read_write> order: array<u32>;

var<workgroup> block: array<u32, 256>;

// The inclusive sum of `x` over threads 0..=t of the workgroup (Hillis-Steele in `block`).
// Every thread of the workgroup must call it.
fn block_scan(t: u32, x: u32) -> u32 {
    block[t] = x;
    workgroupBarrier();
    for (var d = 1u; d < SW; d = d << 1u) {
        var y = 0u;
        if t >= d {
            y = block[t - d];
        }
        workgroupBarrier();
        block[t] = block[t] + y;
        workgroupBarrier();
    }
    return block[t];
}

// Exclusive scan of each 256 counts into start, and each block's total into sums.
@compute @workgroup_size(256)
fn scan_blocks(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let i = gid.x;
    let t = lid.x;
    var x = 0u;
    if i < C.cells {
        x = counts[i];
    }
    let inclusive = block_scan(t, x);
    if i < C.cells {
        start[i] = inclusive - x;
    }
    if t == SW - 1u {
        sums[wid.x] = inclusive;
    }
}

// Exclusive scan of the block totals in place (one workgroup, each thread a run of them).
@compute @workgroup_size(256)
fn scan_sums(@builtin(local_invocation_id) lid: vec3<u32>) {
    let t = lid.x;
    let blocks = (C.cells + SW - 1u) / SW;
    let run = (blocks + SW - 1u) / SW;
    let lo = min(t * run, blocks);
    let hi = min(lo + run, blocks);
    var total = 0u;
    for (var b = lo; b < hi; b++) {
        total += sums[b];
    }
    var acc = block_scan(t, total) - total;
    for (var b = lo; b < hi; b++) {
        let s = sums[b];
        sums[b] = acc;
        acc += s;
    }
}

// The blocks' offsets added: start is the exclusive scan of the counts, start[cells] = n; each
// cell's next free slot starts at its start.
@compute @workgroup_size(256)
fn scan_add(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i < C.cells {
        let s = start[i] + sums[i / SW];
        start[i] = s;
        atomicStore(&fill[i], s);
    }
    if i == 0u {
        start[C.cells] = C.n;
    }
}

// Each particle into the next free slot of its cell (in any order).
@compute @workgroup_size(256)
fn scatter(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= C.n {
        return;
    }
    let slot = atomicAdd(&fill[keys[i]], 1u);
    arrival[slot] = i;
}

// Each cell's particles in index order.
@compute @workgroup_size(256)
fn settle(@builtin(global_invocation_id) gid: vec3<u32>) {
    let k = gid.x;
    if k >= C.n {
        return;
    }
    let me = arrival[k];
    let c = keys[me];
    let lo = start[c];
    let hi = start[c + 1u];
    if hi - lo > SETTLE_MAX {
        order[k] = me;
        return;
    }
    var rank = 0u;
    for (var j = lo; j < hi; j++) {
        rank += select(0u, 1u, arrival[j] < me);
    }
    order[lo + rank] = me;
}
