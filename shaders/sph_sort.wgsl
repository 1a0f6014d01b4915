// sph_sort.wgsl: the particle fluid's neighbour search (sim/sph/neighbours.rs): each
// particle's key (its grid cell at the predicted position), the particles sorted by key, and
// the start table (the particles of cell c are sorted indices start[c]..start[c + 1]).
//
// Two sorts, both giving the CPU's order exactly (sorted by key, by index within a key):
// - counting: count each cell's particles (atomics), an exclusive scan of the counts is the
//   start table, each particle takes the next slot of its cell (atomics: in any order), then
//   `settle` puts each cell's particles in index order (a particle's rank in its cell is the
//   number of smaller indices there; cells of more than SETTLE_MAX keep their order of arrival,
//   which holds the same neighbours);
// - bitonic: (key, index) pairs, padded to a power of two, sorted by a bitonic merge network
//   (stages of half-width 256 and less in workgroup memory, wider ones one dispatch each), and
//   the start table read off the sorted keys.

const SW: u32 = 256u;          // threads per workgroup; mirrored by sph::gpu::SW
const SETTLE_MAX: u32 = 512u;  // mirrored by sph::gpu::SETTLE_MAX

struct Stage {
    k: u32,  // the merge's block length
    j: u32,  // the compare distance
    _p0: u32,
    _p1: u32,
}

@group(0) @binding(0) var<uniform> S: Sph;
@group(0) @binding(1) var<storage, read> pred: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read_write> keys: array<u32>;
@group(0) @binding(3) var<storage, read_write> counts: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> start: array<u32>;
@group(0) @binding(5) var<storage, read_write> sums: array<u32>;
@group(0) @binding(6) var<storage, read_write> fill: array<atomic<u32>>;
@group(0) @binding(7) var<storage, read_write> arrival: array<u32>;
@group(0) @binding(8) var<storage, read_write> order: array<u32>;
@group(0) @binding(9) var<storage, read_write> pairs: array<vec2<u32>>;
@group(0) @binding(10) var<uniform> T: Stage;
@group(0) @binding(11) var<storage, read> plain_counts: array<u32>;

// Each particle's key; with the counting sort, its cell's count.
@compute @workgroup_size(256)
fn key_count(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= S.n {
        return;
    }
    let c = sph_cell(pred[i], S);
    let key = c.y * S.cols + c.x;
    keys[i] = key;
    atomicAdd(&counts[key], 1u);
}

// Each particle's key and its (key, index) pair; the padding sorts last.
@compute @workgroup_size(256)
fn key_pairs(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= S.padded {
        return;
    }
    if i >= S.n {
        pairs[i] = vec2<u32>(0xffffffffu, i);
        return;
    }
    let c = sph_cell(pred[i], S);
    let key = c.y * S.cols + c.x;
    keys[i] = key;
    pairs[i] = vec2<u32>(key, i);
}

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
    if i < S.cells {
        x = plain_counts[i];
    }
    let inclusive = block_scan(t, x);
    if i < S.cells {
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
    let blocks = (S.cells + SW - 1u) / SW;
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
    if i < S.cells {
        let s = start[i] + sums[i / SW];
        start[i] = s;
        atomicStore(&fill[i], s);
    }
    if i == 0u {
        start[S.cells] = S.n;
    }
}

// Each particle into the next free slot of its cell (in any order).
@compute @workgroup_size(256)
fn scatter(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= S.n {
        return;
    }
    let slot = atomicAdd(&fill[keys[i]], 1u);
    arrival[slot] = i;
}

// Each cell's particles in index order.
@compute @workgroup_size(256)
fn settle(@builtin(global_invocation_id) gid: vec3<u32>) {
    let k = gid.x;
    if k >= S.n {
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

// Whether pair a sorts after pair b.
fn after(a: vec2<u32>, b: vec2<u32>) -> bool {
    return a.x > b.x || (a.x == b.x && a.y > b.y);
}

var<workgroup> local_pairs: array<vec2<u32>, 512>;

// The compare-exchanges of half-width j..1 of merge stage k on the workgroup's 512 pairs.
fn local_merge(base: u32, t: u32, k: u32, j_from: u32) {
    for (var j = j_from; j > 0u; j = j >> 1u) {
        workgroupBarrier();
        let i = 2u * j * (t / j) + (t % j);
        let l = i + j;
        let up = ((base + i) & k) == 0u;
        let a = local_pairs[i];
        let b = local_pairs[l];
        if after(a, b) == up {
            local_pairs[i] = b;
            local_pairs[l] = a;
        }
    }
    workgroupBarrier();
}

// Every merge stage of length 2..512 within each block of 512 pairs.
@compute @workgroup_size(256)
fn bitonic_blocks(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let t = lid.x;
    let base = wid.x * 512u;
    local_pairs[t] = pairs[base + t];
    local_pairs[t + 256u] = pairs[base + t + 256u];
    for (var k = 2u; k <= 512u; k = k << 1u) {
        local_merge(base, t, k, k >> 1u);
    }
    pairs[base + t] = local_pairs[t];
    pairs[base + t + 256u] = local_pairs[t + 256u];
}

// The compare-exchanges of half-width 256..1 of merge stage T.k, within blocks of 512.
@compute @workgroup_size(256)
fn bitonic_local(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
) {
    let t = lid.x;
    let base = wid.x * 512u;
    local_pairs[t] = pairs[base + t];
    local_pairs[t + 256u] = pairs[base + t + 256u];
    local_merge(base, t, T.k, 256u);
    pairs[base + t] = local_pairs[t];
    pairs[base + t + 256u] = local_pairs[t + 256u];
}

// One compare-exchange of half-width T.j (at least 512) of merge stage T.k per thread.
@compute @workgroup_size(256)
fn bitonic_global(@builtin(global_invocation_id) gid: vec3<u32>) {
    let t = gid.x;
    if t >= S.padded / 2u {
        return;
    }
    let j = T.j;
    let i = 2u * j * (t / j) + (t % j);
    let l = i + j;
    let up = (i & T.k) == 0u;
    let a = pairs[i];
    let b = pairs[l];
    if after(a, b) == up {
        pairs[i] = b;
        pairs[l] = a;
    }
}

// The order and the start table from the sorted pairs: thread k (0..=n) writes the starts of
// the cells after the previous pair's key up to its own.
@compute @workgroup_size(256)
fn pair_starts(@builtin(global_invocation_id) gid: vec3<u32>) {
    let k = gid.x;
    if k > S.n {
        return;
    }
    var lo = 0u;
    if k > 0u {
        lo = pairs[k - 1u].x + 1u;
    }
    var hi = S.cells;
    if k < S.n {
        let p = pairs[k];
        order[k] = p.y;
        hi = p.x;
    }
    for (var c = lo; c <= hi; c++) {
        start[c] = k;
    }
}
