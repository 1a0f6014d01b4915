// reduce.wgsl: sum, sum of squares and largest magnitude of a field (or the dot products
// b.Aq and Aq.Aq for the warm-start scaling), in two stages: each workgroup folds a strided
// share of the field into one partial, then one workgroup folds the partials into a result
// slot. Fixed tree order: the same result on every run of the same GPU. Results are vec4:
// (sum, sum of squares, max |x|, 0), or (b.Aq, Aq.Aq, scale, 0) for dots.

const RW: u32 = 256u;

struct Reduce {
    n: u32,
    groups: u32,
    slot: u32,
    mode: u32,
}

@group(0) @binding(0) var<uniform> R: Reduce;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> y: array<f32>;
@group(0) @binding(3) var<storage, read_write> partials: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> results: array<vec4<f32>>;

var<workgroup> acc: array<vec4<f32>, RW>;

fn fold(a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    return vec4(a.x + b.x, a.y + b.y, max(a.z, b.z), 0.0);
}

fn tree(lid: u32) {
    for (var s = RW / 2u; s > 0u; s = s / 2u) {
        workgroupBarrier();
        if (lid < s) {
            acc[lid] = fold(acc[lid], acc[lid + s]);
        }
    }
    workgroupBarrier();
}

@compute @workgroup_size(RW)
fn reduce_norms(@builtin(local_invocation_id) lid3: vec3<u32>,
                 @builtin(workgroup_id) gid3: vec3<u32>) {
    let lid = lid3.x;
    var a = vec4(0.0);
    for (var k = gid3.x * RW + lid; k < R.n; k += R.groups * RW) {
        let v = x[k];
        a = fold(a, vec4(v, v * v, abs(v), 0.0));
    }
    acc[lid] = a;
    tree(lid);
    if (lid == 0u) {
        partials[gid3.x] = acc[0];
    }
}

// x holds b (= -D after the mean fix), y holds -Aq (a residual with b = 0).
@compute @workgroup_size(RW)
fn reduce_dots(@builtin(local_invocation_id) lid3: vec3<u32>,
                @builtin(workgroup_id) gid3: vec3<u32>) {
    let lid = lid3.x;
    var a = vec4(0.0);
    for (var k = gid3.x * RW + lid; k < R.n; k += R.groups * RW) {
        let neg_aq = y[k];
        a = fold(a, vec4(-x[k] * neg_aq, neg_aq * neg_aq, 0.0, 0.0));
    }
    acc[lid] = a;
    tree(lid);
    if (lid == 0u) {
        partials[gid3.x] = acc[0];
    }
}

@compute @workgroup_size(RW)
fn reduce_finish(@builtin(local_invocation_id) lid3: vec3<u32>) {
    let lid = lid3.x;
    var a = vec4(0.0);
    for (var k = lid; k < R.groups; k += RW) {
        a = fold(a, partials[k]);
    }
    acc[lid] = a;
    tree(lid);
    if (lid == 0u) {
        var r = acc[0];
        if (R.mode == 1u) {
            // Warm-start scale: argmin over s >= 0 of |b - s A q|.
            var s = 0.0;
            if (r.y > 0.0) {
                s = max(r.x / r.y, 0.0);
            }
            r.z = s;
        }
        results[R.slot] = r;
    }
}
