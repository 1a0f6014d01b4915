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
    // Sweeps for the coarsest solve; red-black sweeps per dispatch for smooth.
    sweeps: u32,
    // The coarse level's rows in residual_restrict.
    ch: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
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

// The relaxed value of cell (i, j) of a w x h level with operator (cx, cy) from its
// neighbours' values (those outside the grid are ignored), its own and its right-hand side
// (cpu relax_row: the interior and the edge forms).
fn relax_op(i: u32, j: u32, w: u32, h: u32, cx: f32, cy: f32, left: f32, right: f32, dn: f32,
    up: f32, centre: f32, rhs: f32) -> f32 {
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

// relax_op on this pass's level (L) with its right-hand side b.
fn relaxed(i: u32, j: u32, left: f32, right: f32, dn: f32, up: f32, centre: f32) -> f32 {
    return relax_op(i, j, L.w, L.h, L.cx, L.cy, left, right, dn, up, centre, b[j * L.w + i]);
}

// The residual b - A e of cell (i, j) of a w x h level with operator (cx, cy), from its value
// e, its neighbours' (those outside the grid are ignored) and its right-hand side
// (cpu residual_row).
fn residual_op(i: u32, j: u32, w: u32, h: u32, cx: f32, cy: f32, e: f32, left: f32, right: f32,
    dn: f32, up: f32, rhs: f32) -> f32 {
    if (j > 0u && j + 1u < h && w >= 3u && i > 0u && i + 1u < w) {
        let two_c = e + e;
        let lap_x = two_c - (left + right);
        let lap_y = two_c - (dn + up);
        return rhs - fma(cx, lap_x, cy * lap_y);
    }
    var acc = rhs;
    if (i > 0u) { acc -= cx * (e - left); }
    if (i + 1u < w) { acc -= cx * (e - right); }
    if (j > 0u) { acc -= cy * (e - dn); }
    if (j + 1u < h) { acc -= cy * (e - up); }
    return acc;
}

// residual_op of cell (i, j) of this pass's level (L) from q_in and b.
fn residual_at(i: u32, j: u32) -> f32 {
    let w = L.w;
    let c = j * w + i;
    let left = q_in[select(c, c - 1u, i > 0u)];
    let right = q_in[select(c, c + 1u, i + 1u < w)];
    let dn = q_in[select(c, c - w, j > 0u)];
    let up = q_in[select(c, c + w, j + 1u < L.h)];
    return residual_op(i, j, w, L.h, L.cx, L.cy, q_in[c], left, right, dn, up, b[c]);
}

// q_in and b at cell k of a block `side` cells wide whose first cell is (x0, y0); zeros
// outside the grid.
fn block_cell(k: u32, side: u32, x0: i32, y0: i32) -> vec2<f32> {
    let x = x0 + i32(k % side);
    let y = y0 + i32(k / side);
    if (x < 0 || y < 0 || u32(x) >= L.w || u32(y) >= L.h) {
        return vec2(0.0);
    }
    let c = u32(y) * L.w + u32(x);
    return vec2(q_in[c], b[c]);
}

// Jacobi blocks: each workgroup loads a (ST + 2 JH)² block of q_in and b, runs L.sweeps (1 or
// JH = 2) Jacobi iterations on it in workgroup memory, from jq into jn and back, each on the
// cells at least one more cell from the block's edge, and writes its central ST² cells to q:
// the values L.sweeps one-iteration passes give.
const JH: u32 = 2u;
const JR: u32 = ST + 2u * JH;
var<workgroup> jq: array<f32, JR * JR>;
var<workgroup> jn: array<f32, JR * JR>;
var<workgroup> jb: array<f32, JR * JR>;

@compute @workgroup_size(WG, WG)
fn jacobi_block(@builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32) {
    let w = L.w;
    let h = L.h;
    let x0 = i32(wg.x * ST) - i32(JH);
    let y0 = i32(wg.y * ST) - i32(JH);
    for (var k = lid; k < JR * JR; k += WG * WG) {
        let qb = block_cell(k, JR, x0, y0);
        jq[k] = qb.x;
        jn[k] = qb.x;
        jb[k] = qb.y;
    }
    workgroupBarrier();
    let iterations = min(max(L.sweeps, 1u), JH);
    for (var it = 0u; it < iterations; it++) {
        // The cells at least it + 1 from the block's edge: jq into jn, then jn into jq.
        let lo = it + 1u;
        let span = JR - 2u * lo;
        for (var n = lid; n < span * span; n += WG * WG) {
            let lx = lo + n % span;
            let ly = lo + n / span;
            let x = x0 + i32(lx);
            let y = y0 + i32(ly);
            if (x < 0 || y < 0 || u32(x) >= w || u32(y) >= h) {
                continue;
            }
            let k = ly * JR + lx;
            if (it == 0u) {
                jn[k] = relax_op(u32(x), u32(y), w, h, L.cx, L.cy, jq[k - 1u], jq[k + 1u],
                    jq[k - JR], jq[k + JR], jq[k], jb[k]);
            } else {
                jq[k] = relax_op(u32(x), u32(y), w, h, L.cx, L.cy, jn[k - 1u], jn[k + 1u],
                    jn[k - JR], jn[k + JR], jn[k], jb[k]);
            }
        }
        workgroupBarrier();
    }
    let two = iterations == 2u;
    for (var k = lid; k < ST * ST; k += WG * WG) {
        let i = wg.x * ST + k % ST;
        let j = wg.y * ST + k / ST;
        if (i < w && j < h) {
            let t = (k / ST + JH) * JR + k % ST + JH;
            q[j * w + i] = select(jn[t], jq[t], two);
        }
    }
}

// r = b - A q (natural layout; cpu residual_row).
@compute @workgroup_size(WG, WG)
fn residual(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= L.w || id.y >= L.h) {
        return;
    }
    r[id.y * L.w + id.x] = residual_at(id.x, id.y);
}

// ---- The V-cycle's plain levels in few dispatches ----
// Red-black sweeps are blocked in tiles (several colour passes per dispatch), the residual is
// fused with both restrictions, both prolongations are one pass, and the small levels' whole
// V-cycle runs in one workgroup (v_cycle_tail). Each computes what one pass per colour, per
// residual and per axis computed, operation for operation (cpu pressure/multigrid.rs).

// Smoothing blocks: each workgroup loads a (ST + 2 SH)² block of q_in and b into workgroup
// memory, relaxes it colour pass after colour pass, and writes its central ST² cells to q.
// A colour pass leaves wrong values one cell deeper from the block's edge (its outer ring
// never changes, so the ring inside reads stale neighbours from the second pass on): SH
// cells of halo cover SH colour passes, SMOOTH_MAX sweeps.
const ST: u32 = 32u;
const SH: u32 = 4u;
const SR: u32 = ST + 2u * SH;
const SMOOTH_MAX: u32 = SH / 2u;
var<workgroup> sq: array<f32, SR * SR>;
var<workgroup> sb: array<f32, SR * SR>;

// q = L.sweeps (at most SMOOTH_MAX) red-black Gauss-Seidel sweeps of q_in, out of place: the
// values rb_sor's 2 L.sweeps colour passes in place give. Colour 0 ((i + j) even) first.
@compute @workgroup_size(WG, WG)
fn rb_smooth(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let w = L.w;
    let h = L.h;
    // The block's first cell, SH before the tile (even: so the colour of a block cell is the
    // parity of its block coordinates).
    let x0 = i32(wg.x * ST) - i32(SH);
    let y0 = i32(wg.y * ST) - i32(SH);
    for (var k = lid; k < SR * SR; k += WG * WG) {
        let qb = block_cell(k, SR, x0, y0);
        sq[k] = qb.x;
        sb[k] = qb.y;
    }
    workgroupBarrier();
    let half = SR / 2u;
    for (var p = 0u; p < 2u * min(L.sweeps, SMOOTH_MAX); p++) {
        let colour = p & 1u;
        for (var n = lid; n < half * SR; n += WG * WG) {
            let ly = n / half;
            let lx = 2u * (n % half) + ((ly + colour) & 1u);
            let x = x0 + i32(lx);
            let y = y0 + i32(ly);
            // The outer ring keeps its values; cells outside the grid are not relaxed.
            if (lx == 0u || ly == 0u || lx + 1u == SR || ly + 1u == SR || x < 0 || y < 0
                || u32(x) >= w || u32(y) >= h) {
                continue;
            }
            let k = ly * SR + lx;
            let old = sq[k];
            let gs = relax_op(u32(x), u32(y), w, h, L.cx, L.cy, sq[k - 1u], sq[k + 1u],
                sq[k - SR], sq[k + SR], old, sb[k]);
            sq[k] = fma(L.omega, gs - old, old);
        }
        workgroupBarrier();
    }
    for (var k = lid; k < ST * ST; k += WG * WG) {
        let i = wg.x * ST + k % ST;
        let j = wg.y * ST + k / ST;
        if (i < w && j < h) {
            q[j * w + i] = sq[(k / ST + SH) * SR + k % ST + SH];
        }
    }
}

// The residual of this level (L.w x L.h, operator L.cx, L.cy; unknowns q_in, right-hand side
// b) restricted to the next coarser level (L.cw x L.ch) in one pass, into its right-hand side
// r, and its correction q cleared: restrict_x's three columns of each of restrict_y's three
// rows, each residual computed where it is read. rtap_first and rtap_frac hold the x taps (L.cw
// of them), then the y taps.
@compute @workgroup_size(WG, WG)
fn residual_restrict(@builtin(global_invocation_id) id: vec3<u32>) {
    let ci = id.x;
    let cj = id.y;
    if (ci >= L.cw || cj >= L.ch) {
        return;
    }
    let fx = rtap_frac[ci];
    let fy = rtap_frac[L.cw + cj];
    let xf = rtap_first[ci];
    let yf = rtap_first[L.cw + cj];
    let last_x = L.w - 1u;
    let last_y = L.h - 1u;
    let xa = min(xf, last_x);
    let xb = min(xf + 1u, last_x);
    let xc = min(xf + 2u, last_x);
    var rows: array<f32, 3>;
    for (var t = 0u; t < 3u; t++) {
        let j = min(yf + t, last_y);
        rows[t] = fma(fx.x, residual_at(xa, j), fma(fx.y, residual_at(xb, j),
            fx.z * residual_at(xc, j)));
    }
    let c = cj * L.cw + ci;
    r[c] = fma(fy.x, rows[0], fma(fy.y, rows[1], fy.z * rows[2]));
    q[c] = 0.0;
}

// q (this level, L.w x L.h) += the coarser level's correction q_in (L.cw columns),
// interpolated along x on the two coarse rows around each row, then along y (prolongate_x and
// prolongate_y_add in one pass). ptap holds the x taps (L.w of them), then the y taps.
@compute @workgroup_size(WG, WG)
fn prolongate_add(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    let j = id.y;
    if (i >= L.w || j >= L.h) {
        return;
    }
    let tx = ptap[i];
    let ty = ptap[L.w + j];
    let wx = bitcast<f32>(tx.z);
    let lo = ty.x * L.cw;
    let hi = ty.y * L.cw;
    let a = lerp(q_in[lo + tx.x], q_in[lo + tx.y], wx);
    let bb = lerp(q_in[hi + tx.x], q_in[hi + tx.y], wx);
    let c = j * L.w + i;
    q[c] = q[c] + lerp(a, bb, bitcast<f32>(ty.z));
}

// The coarsest level: one workgroup loads the level (at most COARSE_MAX cells) into
// workgroup memory (te and tb, below), makes the right-hand side mean-free, and runs L.sweeps
// over-relaxed red-black sweeps from zero (or, when L.cw is 1, from q: a grid too small to
// have coarse levels keeps its warm start). The `_faces` solve uses cq and cb.
const COARSE_MAX: u32 = 1024u;
var<workgroup> cq: array<f32, COARSE_MAX>;
var<workgroup> cb: array<f32, COARSE_MAX>;
var<workgroup> partial: array<f32, 256>;

// The sum over the workgroup (256 invocations) of each one's s: a tree in `partial`, the
// same for every invocation.
fn workgroup_sum(s: f32, lid: u32) -> f32 {
    partial[lid] = s;
    for (var k = 128u; k > 0u; k = k / 2u) {
        workgroupBarrier();
        if (lid < k) {
            partial[lid] = partial[lid] + partial[lid + k];
        }
    }
    workgroupBarrier();
    return partial[0];
}

// The coarsest solve of a w x h level (operator cx, cy) in te and tb from `off`: its
// right-hand side made mean-free, then `sweeps` red-black sweeps over-relaxed by omega from
// te's values (cpu: remove_mean, then rb_sor_op).
fn coarsest_solve(off: u32, w: u32, h: u32, cx: f32, cy: f32, sweeps: u32, omega: f32,
    lid: u32) {
    let n = w * h;
    var s = 0.0;
    for (var c = lid; c < n; c += 256u) {
        s += tb[off + c];
    }
    let mean = workgroup_sum(s, lid) / f32(n);
    for (var c = lid; c < n; c += 256u) {
        tb[off + c] = tb[off + c] - mean;
    }
    workgroupBarrier();
    for (var sweep = 0u; sweep < sweeps; sweep++) {
        for (var colour = 0u; colour < 2u; colour++) {
            for (var c = lid; c < n; c += 256u) {
                let i = c % w;
                let j = c / w;
                if (((i + j) & 1u) != colour) {
                    continue;
                }
                let k = off + c;
                var sum = 0.0;
                var nn = 0.0;
                if (i >= 1u) { sum = fma(cx, te[k - 1u], sum); nn += cx; }
                if (i + 1u < w) { sum = fma(cx, te[k + 1u], sum); nn += cx; }
                if (j > 0u) { sum = fma(cy, te[k - w], sum); nn += cy; }
                if (j + 1u < h) { sum = fma(cy, te[k + w], sum); nn += cy; }
                let old = te[k];
                var gs = old;
                if (nn > 0.0) {
                    gs = (sum + tb[k]) / nn;
                }
                te[k] = fma(omega, gs - old, old);
            }
            workgroupBarrier();
        }
    }
}

@compute @workgroup_size(256)
fn rb_sor_coarsest(@builtin(local_invocation_id) lid3: vec3<u32>) {
    let lid = lid3.x;
    let n = L.w * L.h;
    for (var c = lid; c < n; c += 256u) {
        tb[c] = b[c];
        te[c] = select(0.0, q[c], L.cw == 1u);
    }
    workgroupBarrier();
    coarsest_solve(0u, L.w, L.h, L.cx, L.cy, L.sweeps, L.omega, lid);
    for (var c = lid; c < n; c += 256u) {
        q[c] = te[c];
    }
}

// ---- The small levels' V-cycle in one workgroup ----
// Levels tail[0] (the first small one: its right-hand side in b, its correction out to q) to
// the coarsest, each level's unknowns and right-hand side in workgroup memory (te and tb, from
// tail[l].off), its correction from zero. The same arithmetic as rb_smooth, residual_restrict,
// prolongate_add and rb_sor_coarsest, one pass after the other with barriers between them.
struct TailLevel {
    w: u32,
    h: u32,
    // This level's cells in te and tb.
    off: u32,
    // Its restriction taps from the finer level in rtap_first and rtap_frac (w x taps, then
    // the y taps), and its prolongation taps to the finer level in ptap (the finer level's
    // width of x taps, then the y taps).
    rt: u32,
    pt: u32,
    cx: f32,
    cy: f32,
    // Sweeps before and after the coarse correction (the coarsest: its over-relaxed solve's
    // sweeps and omega).
    pre: u32,
    post: u32,
    omega: f32,
    _pad0: u32,
    _pad1: u32,
}
@group(0) @binding(13) var<storage, read> tail: array<TailLevel>;
// The tail's cells in all (mirrored by TAIL_MAX_CELLS in Rust).
const TAIL_MAX: u32 = 1792u;
var<workgroup> te: array<f32, TAIL_MAX>;
var<workgroup> tb: array<f32, TAIL_MAX>;

// sweeps red-black sweeps of level lv in te, in place (rb_sor's colour passes).
fn tail_smooth(lv: TailLevel, sweeps: u32, lid: u32) {
    let w = lv.w;
    let h = lv.h;
    let half = (w + 1u) / 2u;
    for (var p = 0u; p < 2u * sweeps; p++) {
        let colour = p & 1u;
        for (var n = lid; n < half * h; n += 256u) {
            let j = n / half;
            let i = 2u * (n % half) + ((j + colour) & 1u);
            if (i >= w) {
                continue;
            }
            let c = lv.off + j * w + i;
            let old = te[c];
            let gs = relax_op(i, j, w, h, lv.cx, lv.cy, te[select(c, c - 1u, i > 0u)],
                te[select(c, c + 1u, i + 1u < w)], te[select(c, c - w, j > 0u)],
                te[select(c, c + w, j + 1u < h)], old, tb[c]);
            te[c] = fma(1.0, gs - old, old);
        }
        workgroupBarrier();
    }
}

// residual_op of cell (i, j) of level lv in te and tb.
fn tail_residual(lv: TailLevel, i: u32, j: u32) -> f32 {
    let w = lv.w;
    let c = lv.off + j * w + i;
    return residual_op(i, j, w, lv.h, lv.cx, lv.cy, te[c], te[select(c, c - 1u, i > 0u)],
        te[select(c, c + 1u, i + 1u < w)], te[select(c, c - w, j > 0u)],
        te[select(c, c + w, j + 1u < lv.h)], tb[c]);
}

@compute @workgroup_size(256)
fn v_cycle_tail(@builtin(local_invocation_id) lid3: vec3<u32>) {
    let lid = lid3.x;
    let levels = arrayLength(&tail);
    let top = tail[0];
    for (var c = lid; c < top.w * top.h; c += 256u) {
        tb[top.off + c] = b[c];
        te[top.off + c] = 0.0;
    }
    workgroupBarrier();
    // Down: smooth, then the residual restricted into the next level (residual_restrict).
    for (var l = 0u; l + 1u < levels; l++) {
        let lv = tail[l];
        let nx = tail[l + 1u];
        tail_smooth(lv, lv.pre, lid);
        let last_x = lv.w - 1u;
        let last_y = lv.h - 1u;
        for (var c = lid; c < nx.w * nx.h; c += 256u) {
            let ci = c % nx.w;
            let cj = c / nx.w;
            let fx = rtap_frac[nx.rt + ci];
            let fy = rtap_frac[nx.rt + nx.w + cj];
            let xf = rtap_first[nx.rt + ci];
            let yf = rtap_first[nx.rt + nx.w + cj];
            let xa = min(xf, last_x);
            let xb = min(xf + 1u, last_x);
            let xc = min(xf + 2u, last_x);
            var rows: array<f32, 3>;
            for (var t = 0u; t < 3u; t++) {
                let j = min(yf + t, last_y);
                rows[t] = fma(fx.x, tail_residual(lv, xa, j), fma(fx.y,
                    tail_residual(lv, xb, j), fx.z * tail_residual(lv, xc, j)));
            }
            tb[nx.off + c] = fma(fy.x, rows[0], fma(fy.y, rows[1], fy.z * rows[2]));
            te[nx.off + c] = 0.0;
        }
        workgroupBarrier();
    }
    // The coarsest level (rb_sor_coarsest from zero).
    let co = tail[levels - 1u];
    coarsest_solve(co.off, co.w, co.h, co.cx, co.cy, co.pre, co.omega, lid);
    // Up: each level's correction from the next (prolongate_add), then smooth.
    for (var l = levels - 1u; l > 0u; l--) {
        let lv = tail[l - 1u];
        let nx = tail[l];
        for (var c = lid; c < lv.w * lv.h; c += 256u) {
            let i = c % lv.w;
            let j = c / lv.w;
            let tx = ptap[nx.pt + i];
            let ty = ptap[nx.pt + lv.w + j];
            let wx = bitcast<f32>(tx.z);
            let lo = nx.off + ty.x * nx.w;
            let hi = nx.off + ty.y * nx.w;
            let a = lerp(te[lo + tx.x], te[lo + tx.y], wx);
            let bb = lerp(te[hi + tx.x], te[hi + tx.y], wx);
            te[lv.off + c] = te[lv.off + c] + lerp(a, bb, bitcast<f32>(ty.z));
        }
        workgroupBarrier();
        tail_smooth(lv, lv.post, lid);
    }
    for (var c = lid; c < top.w * top.h; c += 256u) {
        q[c] = te[top.off + c];
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
