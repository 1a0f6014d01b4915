// pressure.wgsl: the pressure Poisson solve, sum_n c_n (q_n - q_c) = D (A q = b, b = -D,
// Neumann walls), by Jacobi iterations, red-black Gauss-Seidel colour passes, or multigrid
// V-cycles built from the same relaxation plus residual, restriction and prolongation.
// q is the pre-scaled pressure (velocity units). Mirrors cpu/pressure.rs: the relaxation
// formula (interior and edge forms), the anisotropic coarse operators (cx, cy), the
// area-weighted restriction and bilinear prolongation tables (uploaded from the CPU code), and
// the coarsest level's over-relaxed solve.
// With obstacles (the `_faces` kernels, cpu pressure/faces.rs) each cell couples to its
// neighbours through per-face couplings instead: the level's cx or cy times the face's open
// fraction (0 at a solid face: pure Neumann there, as at the walls), with the inverse of their
// sum per cell (0 for a cell with no open face, whose value the relaxation then sets to 0).
// Only the finest level has such couplings: the coarse levels around obstacles are node
// graphs (nodes.wgsl). On a grid too small for coarse levels the solve (rb_sor_coarsest_faces)
// makes b mean-free per fluid region.

struct Level {
    // This level's size.
    w: u32,
    h: u32,
    // Red-black colour (0: (i + j) even) for rb_sor; the results slot for
    // scale_warm_start.
    colour: u32,
    // The other size in transfers: coarse columns (restrict_x, prolongate_x) or fine rows
    // (restrict_y).
    cw: u32,
    cx: f32,
    cy: f32,
    omega: f32,
    // Sweeps for the coarsest solve.
    sweeps: u32,
}

@group(0) @binding(0) var<uniform> L: Level;
@group(0) @binding(1) var<storage, read> q_in: array<f32>;
@group(0) @binding(2) var<storage, read_write> q: array<f32>;
@group(0) @binding(3) var<storage, read> b: array<f32>;
@group(0) @binding(4) var<storage, read_write> r: array<f32>;
@group(0) @binding(5) var<storage, read> rtap_first: array<u32>;
@group(0) @binding(6) var<storage, read> rtap_frac: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read> ptap: array<vec4<u32>>;
@group(0) @binding(8) var<storage, read> results: array<vec4<f32>>;
// With obstacles: this level's couplings of the vertical faces ((w + 1) x h) and horizontal
// faces (w x (h + 1)), the inverse of each cell's total coupling, and (coarsest level) each
// cell's fluid region and that region's cell count (x = u32::MAX: no region).
@group(0) @binding(9) var<storage, read> face_x: array<f32>;
@group(0) @binding(10) var<storage, read> face_y: array<f32>;
@group(0) @binding(11) var<storage, read> inv_diag: array<f32>;
@group(0) @binding(12) var<storage, read> region: array<vec2<u32>>;

// The relaxed value of cell (i, j) from its neighbours' values (those outside the grid are
// ignored) and its own (cpu relax_row: the interior and the edge forms).
fn relaxed(i: u32, j: u32, left: f32, right: f32, dn: f32, up: f32, centre: f32) -> f32 {
    let w = L.w;
    let h = L.h;
    let cx = L.cx;
    let cy = L.cy;
    let rhs = b[j * w + i];
    if (j > 0u && j + 1u < h && i >= 1u && i + 2u <= w) {
        let sum = fma(cx, left + right, fma(cy, dn + up, rhs));
        return sum * (1.0 / (2.0 * (cx + cy)));
    }
    var sum = 0.0;
    var n = 0.0;
    if (i >= 1u) { sum = fma(cx, left, sum); n += cx; }
    if (i + 1u < w) { sum = fma(cx, right, sum); n += cx; }
    if (j > 0u) { sum = fma(cy, dn, sum); n += cy; }
    if (j + 1u < h) { sum = fma(cy, up, sum); n += cy; }
    if (n > 0.0) {
        return (sum + rhs) / n;
    }
    return centre;
}

// One Jacobi iteration: q = J(q_in).
@compute @workgroup_size(WG, WG)
fn jacobi(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    let w = L.w;
    if (i >= w || j >= L.h) {
        return;
    }
    let c = j * w + i;
    let left = q_in[select(c, c - 1u, i > 0u)];
    let right = q_in[select(c, c + 1u, i + 1u < w)];
    let dn = q_in[select(c, c - w, j > 0u)];
    let up = q_in[select(c, c + w, j + 1u < L.h)];
    q[c] = relaxed(i, j, left, right, dn, up, q_in[c]);
}

// One colour of a red-black Gauss-Seidel/SOR sweep, in place. Thread (x, y) takes cell
// (2x + ((y + colour) & 1), y).
@compute @workgroup_size(WG, WG)
fn rb_sor(@builtin(global_invocation_id) id: vec3<u32>) {
    let j = id.y;
    let i = 2u * id.x + ((j + L.colour) & 1u);
    let w = L.w;
    if (i >= w || j >= L.h) {
        return;
    }
    let c = j * w + i;
    let left = q[select(c, c - 1u, i > 0u)];
    let right = q[select(c, c + 1u, i + 1u < w)];
    let dn = q[select(c, c - w, j > 0u)];
    let up = q[select(c, c + w, j + 1u < L.h)];
    let old = q[c];
    let gs = relaxed(i, j, left, right, dn, up, old);
    q[c] = fma(L.omega, gs - old, old);
}

// r = b - A q (natural layout; cpu residual_row).
@compute @workgroup_size(WG, WG)
fn residual(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    let w = L.w;
    let h = L.h;
    if (i >= w || j >= h) {
        return;
    }
    let c = j * w + i;
    let e = q_in[c];
    if (j > 0u && j + 1u < h && w >= 3u && i > 0u && i + 1u < w) {
        let two_c = e + e;
        let lap_x = two_c - (q_in[c - 1u] + q_in[c + 1u]);
        let lap_y = two_c - (q_in[c - w] + q_in[c + w]);
        r[c] = b[c] - fma(L.cx, lap_x, L.cy * lap_y);
        return;
    }
    var acc = b[c];
    if (i > 0u) { acc -= L.cx * (e - q_in[c - 1u]); }
    if (i + 1u < w) { acc -= L.cx * (e - q_in[c + 1u]); }
    if (j > 0u) { acc -= L.cy * (e - q_in[c - w]); }
    if (j + 1u < h) { acc -= L.cy * (e - q_in[c + w]); }
    r[c] = acc;
}

// Restrict along x: r (this level, w x h) -> q (h rows of cw coarse columns).
@compute @workgroup_size(WG, WG)
fn restrict_x(@builtin(global_invocation_id) id: vec3<u32>) {
    let ci = id.x;
    let j = id.y;
    if (ci >= L.cw || j >= L.h) {
        return;
    }
    let first = rtap_first[ci];
    let f = rtap_frac[ci];
    let row = j * L.w;
    let last = L.w - 1u;
    let a = q_in[row + min(first, last)];
    let bb = q_in[row + min(first + 1u, last)];
    let c = q_in[row + min(first + 2u, last)];
    q[j * L.cw + ci] = fma(f.x, a, fma(f.y, bb, f.z * c));
}

// Restrict along y: q_in (fine rows x cw) -> q (coarse level's right-hand side, cw x h).
// Here L.w is the coarse width, L.h the coarse height, L.cw the number of fine rows.
@compute @workgroup_size(WG, WG)
fn restrict_y(@builtin(global_invocation_id) id: vec3<u32>) {
    let ci = id.x;
    let cj = id.y;
    if (ci >= L.w || cj >= L.h) {
        return;
    }
    let first = rtap_first[cj];
    let f = rtap_frac[cj];
    let last = L.cw - 1u;
    let a = q_in[min(first, last) * L.w + ci];
    let bb = q_in[min(first + 1u, last) * L.w + ci];
    let c = q_in[min(first + 2u, last) * L.w + ci];
    q[cj * L.w + ci] = fma(f.x, a, fma(f.y, bb, f.z * c));
}

// Prolong along x: q_in (coarse, cw x h) -> q (h rows of w fine columns).
@compute @workgroup_size(WG, WG)
fn prolongate_x(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let cj = id.y;
    if (i >= L.w || cj >= L.h) {
        return;
    }
    let t = ptap[i];
    let src = cj * L.cw;
    q[cj * L.w + i] = lerp(q_in[src + t.x], q_in[src + t.y], bitcast<f32>(t.z));
}

// Prolong along y and add: q (fine, w x h) += lerp of rows of q_in (coarse rows x w).
@compute @workgroup_size(WG, WG)
fn prolongate_y_add(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i >= L.w || j >= L.h) {
        return;
    }
    let t = ptap[j];
    let value = lerp(q_in[t.x * L.w + i], q_in[t.y * L.w + i], bitcast<f32>(t.z));
    q[j * L.w + i] = q[j * L.w + i] + value;
}

// The coarsest level: one workgroup loads the level (at most 1024 cells) into workgroup
// memory, makes the right-hand side mean-free, and runs L.sweeps over-relaxed red-black
// sweeps from zero (or, when L.cw is 1, from q: a grid too small to have coarse levels keeps
// its warm start).
const COARSE_MAX: u32 = 1024u;
var<workgroup> cq: array<f32, COARSE_MAX>;
var<workgroup> cb: array<f32, COARSE_MAX>;
var<workgroup> partial: array<f32, 256>;

@compute @workgroup_size(256)
fn rb_sor_coarsest(@builtin(local_invocation_id) lid3: vec3<u32>) {
    let lid = lid3.x;
    let w = L.w;
    let h = L.h;
    let n = w * h;
    var s = 0.0;
    for (var c = lid; c < n; c += 256u) {
        cb[c] = b[c];
        cq[c] = select(0.0, q[c], L.cw == 1u);
        s += b[c];
    }
    partial[lid] = s;
    for (var k = 128u; k > 0u; k = k / 2u) {
        workgroupBarrier();
        if (lid < k) {
            partial[lid] = partial[lid] + partial[lid + k];
        }
    }
    workgroupBarrier();
    let mean = partial[0] / f32(n);
    for (var c = lid; c < n; c += 256u) {
        cb[c] = cb[c] - mean;
    }
    workgroupBarrier();
    for (var sweep = 0u; sweep < L.sweeps; sweep++) {
        for (var colour = 0u; colour < 2u; colour++) {
            for (var c = lid; c < n; c += 256u) {
                let i = c % w;
                let j = c / w;
                if (((i + j) & 1u) != colour) {
                    continue;
                }
                var sum = 0.0;
                var nn = 0.0;
                if (i >= 1u) { sum = fma(L.cx, cq[c - 1u], sum); nn += L.cx; }
                if (i + 1u < w) { sum = fma(L.cx, cq[c + 1u], sum); nn += L.cx; }
                if (j > 0u) { sum = fma(L.cy, cq[c - w], sum); nn += L.cy; }
                if (j + 1u < h) { sum = fma(L.cy, cq[c + w], sum); nn += L.cy; }
                let old = cq[c];
                var gs = old;
                if (nn > 0.0) {
                    gs = (sum + cb[c]) / nn;
                }
                cq[c] = fma(L.omega, gs - old, old);
            }
            workgroupBarrier();
        }
    }
    for (var c = lid; c < n; c += 256u) {
        q[c] = cq[c];
    }
}

// q *= the warm-start scale in results[0].z (see reduce.wgsl, mode 1).
@compute @workgroup_size(WG, WG)
fn scale_warm_start(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i >= L.w || j >= L.h) {
        return;
    }
    q[j * L.w + i] = q[j * L.w + i] * results[L.colour].z;
}

// q = q_in (the last Jacobi iteration back into the warm-start buffer).
@compute @workgroup_size(WG, WG)
fn jacobi_copy(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= L.w || id.y >= L.h) {
        return;
    }
    q[id.y * L.w + id.x] = q_in[id.y * L.w + id.x];
}

// q = 0 (a coarse level's correction before its solve).
@compute @workgroup_size(WG, WG)
fn clear(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= L.w || id.y >= L.h) {
        return;
    }
    q[id.y * L.w + id.x] = 0.0;
}

// ---- With obstacles: per-face couplings (cpu pressure/faces.rs) ----

// The relaxed value of cell c = (i, j) from its neighbours' values through the couplings
// (cpu relax_row_faces; absent neighbours have coupling 0).
fn relaxed_faces(c: u32, i: u32, j: u32, left: f32, right: f32, dn: f32, up: f32, rhs: f32)
    -> f32 {
    let row = j * (L.w + 1u) + i;
    let sum = fma(face_x[row], left, fma(face_x[row + 1u], right,
        fma(face_y[c], dn, fma(face_y[c + L.w], up, rhs))));
    return sum * inv_diag[c];
}

// One Jacobi iteration with couplings: q = J(q_in).
@compute @workgroup_size(WG, WG)
fn jacobi_faces(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    let w = L.w;
    if (i >= w || j >= L.h) {
        return;
    }
    let c = j * w + i;
    let left = q_in[select(c, c - 1u, i > 0u)];
    let right = q_in[select(c, c + 1u, i + 1u < w)];
    let dn = q_in[select(c, c - w, j > 0u)];
    let up = q_in[select(c, c + w, j + 1u < L.h)];
    q[c] = relaxed_faces(c, i, j, left, right, dn, up, b[c]);
}

// One colour of a red-black sweep with couplings, in place (as rb_sor).
@compute @workgroup_size(WG, WG)
fn rb_sor_faces(@builtin(global_invocation_id) id: vec3<u32>) {
    let j = id.y;
    let i = 2u * id.x + ((j + L.colour) & 1u);
    let w = L.w;
    if (i >= w || j >= L.h) {
        return;
    }
    let c = j * w + i;
    let left = q[select(c, c - 1u, i > 0u)];
    let right = q[select(c, c + 1u, i + 1u < w)];
    let dn = q[select(c, c - w, j > 0u)];
    let up = q[select(c, c + w, j + 1u < L.h)];
    let old = q[c];
    let gs = relaxed_faces(c, i, j, left, right, dn, up, b[c]);
    q[c] = fma(L.omega, gs - old, old);
}

// r = b - A q with couplings (cpu residual_row_faces).
@compute @workgroup_size(WG, WG)
fn residual_faces(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    let w = L.w;
    if (i >= w || j >= L.h) {
        return;
    }
    let c = j * w + i;
    let e = q_in[c];
    let left = q_in[select(c, c - 1u, i > 0u)];
    let right = q_in[select(c, c + 1u, i + 1u < w)];
    let dn = q_in[select(c, c - w, j > 0u)];
    let up = q_in[select(c, c + w, j + 1u < L.h)];
    let row = j * (w + 1u) + i;
    let flux = fma(face_x[row], e - left, fma(face_x[row + 1u], e - right,
        fma(face_y[c], e - dn, face_y[c + w] * (e - up))));
    r[c] = b[c] - flux;
}

// The coarsest level with couplings: as rb_sor_coarsest, but b is made mean-free per fluid
// region (summed by one thread in natural order) and 0 outside them, and the sweeps relax
// through the couplings.
var<workgroup> rsum: array<f32, COARSE_MAX>;

@compute @workgroup_size(256)
fn rb_sor_coarsest_faces(@builtin(local_invocation_id) lid3: vec3<u32>) {
    let lid = lid3.x;
    let w = L.w;
    let h = L.h;
    let n = w * h;
    for (var c = lid; c < n; c += 256u) {
        cb[c] = b[c];
        cq[c] = select(0.0, q[c], L.cw == 1u);
        rsum[c] = 0.0;
    }
    workgroupBarrier();
    if (lid == 0u) {
        for (var c = 0u; c < n; c++) {
            let r = region[c].x;
            if (r < n) {
                rsum[r] = rsum[r] + cb[c];
            }
        }
    }
    workgroupBarrier();
    for (var c = lid; c < n; c += 256u) {
        let r = region[c];
        var x = 0.0;
        if (r.x < n) {
            x = cb[c] - rsum[r.x] / f32(r.y);
        }
        cb[c] = x;
    }
    workgroupBarrier();
    for (var sweep = 0u; sweep < L.sweeps; sweep++) {
        for (var colour = 0u; colour < 2u; colour++) {
            for (var c = lid; c < n; c += 256u) {
                let i = c % w;
                let j = c / w;
                if (((i + j) & 1u) != colour) {
                    continue;
                }
                let left = cq[select(c, c - 1u, i > 0u)];
                let right = cq[select(c, c + 1u, i + 1u < w)];
                let dn = cq[select(c, c - w, j > 0u)];
                let up = cq[select(c, c + w, j + 1u < h)];
                let old = cq[c];
                let gs = relaxed_faces(c, i, j, left, right, dn, up, cb[c]);
                cq[c] = fma(L.omega, gs - old, old);
            }
            workgroupBarrier();
        }
    }
    for (var c = lid; c < n; c += 256u) {
        q[c] = cq[c];
    }
}
