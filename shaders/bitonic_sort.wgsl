// bitonic_sort.wgsl: the particle core's second way of sorting the particles by cell (the
// first is the core's counting sort, cell_sort.wgsl): the keys the predict stage wrote
// (particle_step.wgsl), the particles sorted by key, and the start table (the particles of
// cell c are sorted indices start[c]..start[c + 1]), giving the CPU's order exactly (sorted by
// key, by index within a key): (key, index) pairs, padded to a power of two, sorted by a
// bitonic merge network (stages of half-width 256 and less in workgroup memory, wider ones one
// dispatch each), and the start table read off the sorted keys.

struct Stage {
    k: u32,  // the merge's block length
    j: u32,  // the compare distance
    _p0: u32,
    _p1: u32,
}

@group(0) @binding(0) var<uniform> S: ParticleStep;
@group(0) @binding(2) var<storage, read> keys: array<u32>;
@group(0) @binding(4) var<storage, read_write> start: array<u32>;
@group(0) @binding(8) var<storage, read_write> order: array<u32>;
@group(0) @binding(9) var<storage, read_write> pairs: array<vec2<u32>>;
@group(0) @binding(10) var<uniform> T: Stage;

// Each particle's (key, index) pair (the keys are the predict stage's, particle_step.wgsl);
// the padding sorts last.
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
    pairs[i] = vec2<u32>(keys[i], i);
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
