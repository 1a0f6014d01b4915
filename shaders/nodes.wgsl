// nodes.wgsl: the coarse multigrid levels around obstacles, as graphs with one node per
// connected piece of fluid in a coarse cell (sim/obstacles/nodes.rs builds them; cpu
// pressure/nodes.rs runs the same arithmetic). Per node: its couplings in CSR form (start,
// nbr, weight) and the inverse of their sum; nodes of red cells come first, then black ones,
// and no coupling joins two nodes of one colour, so red-black Gauss-Seidel runs per colour
// range. Restriction sums the finer residuals of each node's finer nodes; prolongation adds
// four weighted taps per finer node; the coarsest level is solved by a dense matrix (or, with
// very many nodes, made mean-free per region and relaxed in one workgroup). 1D passes folded
// into 2D (common.wgsl's list_item).

struct Nodes {
    // Nodes of this level.
    n: u32,
    // Red nodes (the first `red`).
    red: u32,
    // The first node and the number of nodes relaxed by relax_nodes (one colour).
    first: u32,
    count: u32,
    // Finer nodes (prolongate_nodes_add).
    fine: u32,
    omega: f32,
    // The coarsest level: 1 for the dense solve; the sweeps otherwise.
    direct: u32,
    sweeps: u32,
}

@group(0) @binding(0) var<uniform> N: Nodes;
@group(0) @binding(1) var<storage, read_write> e: array<f32>;
@group(0) @binding(2) var<storage, read_write> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> r: array<f32>;
@group(0) @binding(4) var<storage, read> start: array<u32>;
@group(0) @binding(5) var<storage, read> nbr: array<u32>;
@group(0) @binding(6) var<storage, read> weight: array<f32>;
@group(0) @binding(7) var<storage, read> inv: array<f32>;
// The finer level's residual (restrict_nodes) and unknowns (prolongate_nodes_add).
@group(0) @binding(8) var<storage, read> fine_r: array<f32>;
@group(0) @binding(9) var<storage, read> child_start: array<u32>;
@group(0) @binding(10) var<storage, read> child: array<u32>;
@group(0) @binding(17) var<storage, read> child_weight: array<f32>;
@group(0) @binding(11) var<storage, read_write> fine_e: array<f32>;
@group(0) @binding(12) var<storage, read> tap_node: array<vec4<u32>>;
@group(0) @binding(13) var<storage, read> tap_weight: array<vec4<f32>>;
// The coarsest level: the dense solve (n x n, row-major), or per node (region, its node
// count) and the regions' sums.
@group(0) @binding(14) var<storage, read> solve: array<f32>;
@group(0) @binding(15) var<storage, read> region: array<vec2<u32>>;
@group(0) @binding(16) var<storage, read_write> sums: array<f32>;
// The nodes in the rows near walls, red then black (relax_listed).
@group(0) @binding(18) var<storage, read> listed: array<u32>;

// Gauss-Seidel value of node k (b + sum of couplings x neighbours, over the diagonal).
fn relaxed(k: u32) -> f32 {
    var sum = b[k];
    for (var t = start[k]; t < start[k + 1u]; t++) {
        sum = fma(weight[t], e[nbr[t]], sum);
    }
    return sum * inv[k];
}

// Over-relax node k towards its Gauss-Seidel value.
fn relax_node(k: u32) {
    let old = e[k];
    e[k] = fma(N.omega, relaxed(k) - old, old);
}

// One colour of a red-black sweep (cpu nodes::relax_omega).
@compute @workgroup_size(LW)
fn relax_nodes(@builtin(global_invocation_id) gid: vec3<u32>,
               @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = list_item(gid, nwg);
    if (i >= N.count) {
        return;
    }
    relax_node(N.first + i);
}

// One colour of a red-black sweep of the nodes near walls alone: `count` of `listed` from
// `first` (cpu nodes::relax_omega over the rows near walls).
@compute @workgroup_size(LW)
fn relax_listed(@builtin(global_invocation_id) gid: vec3<u32>,
                @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = list_item(gid, nwg);
    if (i >= N.count) {
        return;
    }
    relax_node(listed[N.first + i]);
}

// r = b - A e (cpu nodes::residual).
@compute @workgroup_size(LW)
fn residual_nodes(@builtin(global_invocation_id) gid: vec3<u32>,
                  @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = list_item(gid, nwg);
    if (k >= N.n) {
        return;
    }
    let c = e[k];
    var flux = 0.0;
    for (var t = start[k]; t < start[k + 1u]; t++) {
        flux = fma(weight[t], c - e[nbr[t]], flux);
    }
    r[k] = b[k] - flux;
}

// b = the weighted sum of each node's finer residuals; e = 0 (cpu nodes::restrict, cycle).
@compute @workgroup_size(LW)
fn restrict_nodes(@builtin(global_invocation_id) gid: vec3<u32>,
                  @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = list_item(gid, nwg);
    if (k >= N.n) {
        return;
    }
    var sum = 0.0;
    for (var t = child_start[k]; t < child_start[k + 1u]; t++) {
        sum = fma(child_weight[t], fine_r[child[t]], sum);
    }
    b[k] = sum;
    e[k] = 0.0;
}

// The finer unknowns += the interpolated correction (cpu nodes::prolongate, then the add).
@compute @workgroup_size(LW)
fn prolongate_nodes_add(@builtin(global_invocation_id) gid: vec3<u32>,
                        @builtin(num_workgroups) nwg: vec3<u32>) {
    let a = list_item(gid, nwg);
    if (a >= N.fine) {
        return;
    }
    let n = tap_node[a];
    let w = tap_weight[a];
    let value = w.x * e[n.x] + w.y * e[n.y] + w.z * e[n.z] + w.w * e[n.w];
    fine_e[a] = fine_e[a] + value;
}

// The coarsest level by its dense solve: e = S b (cpu nodes::solve_coarsest).
@compute @workgroup_size(LW)
fn coarsest_direct(@builtin(global_invocation_id) gid: vec3<u32>,
                   @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = list_item(gid, nwg);
    let n = N.n;
    if (k >= n) {
        return;
    }
    var sum = 0.0;
    for (var m = 0u; m < n; m++) {
        sum = fma(solve[k * n + m], b[m], sum);
    }
    e[k] = sum;
}

// The coarsest level with too many nodes for the dense solve, in one workgroup: b mean-free
// per region, then over-relaxed red-black sweeps from e = 0 (cpu nodes::solve_coarsest).
@compute @workgroup_size(LW)
fn coarsest_sweeps(@builtin(local_invocation_id) lid3: vec3<u32>) {
    let lid = lid3.x;
    let n = N.n;
    if (lid == 0u) {
        for (var k = 0u; k < n; k++) {
            sums[k] = 0.0;
        }
        for (var k = 0u; k < n; k++) {
            let g = region[k].x;
            sums[g] = sums[g] + b[k];
        }
    }
    storageBarrier();
    workgroupBarrier();
    for (var k = lid; k < n; k += LW) {
        let g = region[k];
        b[k] = b[k] - sums[g.x] / f32(g.y);
        e[k] = 0.0;
    }
    storageBarrier();
    workgroupBarrier();
    for (var s = 0u; s < N.sweeps; s++) {
        for (var colour = 0u; colour < 2u; colour++) {
            let first = select(0u, N.red, colour == 1u);
            let last = select(N.red, n, colour == 1u);
            for (var k = first + lid; k < last; k += LW) {
                let old = e[k];
                e[k] = fma(N.omega, relaxed(k) - old, old);
            }
            storageBarrier();
            workgroupBarrier();
        }
    }
}
