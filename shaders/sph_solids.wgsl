// sph_solids.wgsl: the particles' collisions with the obstacles (sim/sph/solids.rs,
// `Solids::collide`), operation for operation. Units: box units and seconds. The obstacles are
// the grid fluid's solid mask laid over the box (C.w x C.h cells, each C.sx x C.sy); each
// cell knows the nearest fluid cell's centre (`exit`, in cells). A particle that ended the
// step inside a solid goes back out through the face it came in by (or, from inside or past a
// corner, the shortest way out), its speed into the face reflected and kept by S.bounce. A
// move longer than half a cell is checked every half cell.

struct Collide {
    w: u32,     // cells across and up
    h: u32,
    sx: f32,    // a cell's width and height
    sy: f32,
}

@group(0) @binding(0) var<uniform> S: ParticleStep;
@group(0) @binding(1) var<storage, read_write> pos: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read_write> vel: array<vec2<f32>>;
@group(0) @binding(3) var<uniform> C: Collide;
@group(0) @binding(4) var<storage, read> solid: array<u32>;
@group(0) @binding(5) var<storage, read> exit: array<vec2<f32>>;

// The cell holding box point p (clamped into the box).
fn cell_of(p: vec2<f32>) -> u32 {
    let i = u32(clamp(p.x / C.sx, 0.0, f32(C.w - 1u)));
    let j = u32(clamp(p.y / C.sy, 0.0, f32(C.h - 1u)));
    return j * C.w + i;
}

fn inside(p: vec2<f32>) -> bool {
    return solid[cell_of(p)] != 0u;
}

struct Out {
    found: bool,
    at: vec2<f32>,
    n: vec2<f32>,
}

// Where the move from fluid point a to solid point b entered b's cell: a hair outside that
// face and its outward normal; not found when that point is solid too.
fn entry(a: vec2<f32>, b: vec2<f32>) -> Out {
    let c = cell_of(b);
    let cell = vec2<f32>(C.sx, C.sy);
    let lo = vec2<f32>(f32(c % C.w) * C.sx, f32(c / C.w) * C.sy);
    var found = false;
    var best = 0.0;
    var axis = 0u;
    var side = 0.0;
    for (var ax = 0u; ax < 2u; ax++) {
        var edge = 0.0;
        var s = 0.0;
        if a[ax] < lo[ax] {
            edge = lo[ax];
            s = -1.0;
        } else if a[ax] > lo[ax] + cell[ax] {
            edge = lo[ax] + cell[ax];
            s = 1.0;
        } else {
            continue;
        }
        let t = (edge - a[ax]) / (b[ax] - a[ax]);
        if finite(t) && (!found || t > best) {
            found = true;
            best = t;
            axis = ax;
            side = s;
        }
    }
    if !found {
        return Out(false, b, vec2<f32>(0.0));
    }
    let t = clamp(best, 0.0, 1.0);
    var at = vec2<f32>(a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t);
    var edge = lo[axis] + cell[axis];
    if side < 0.0 {
        edge = lo[axis];
    }
    at[axis] = edge + side * 1e-3 * cell[axis];
    var n = vec2<f32>(0.0);
    n[axis] = side;
    return Out(!inside(at), at, n);
}

// The shortest way out of the solid at `at`: a hair past the edge of its cell's nearest fluid
// cell (past a corner that lands in another solid: that cell's centre), and the way out.
fn way_out(at: vec2<f32>) -> Out {
    let c = cell_of(at);
    let ci = f32(c % C.w) + 0.5;
    let cj = f32(c / C.w) + 0.5;
    let e = exit[c];
    let dx = (e.x - ci) * C.sx;
    let dy = (e.y - cj) * C.sy;
    let len = sqrt(dx * dx + dy * dy);
    if !(len > 0.0) {
        return Out(true, at, vec2<f32>(0.0));
    }
    let n = vec2<f32>(dx / len, dy / len);
    let q = vec2<f32>(e.x * C.sx, e.y * C.sy);
    let extent = 0.5 * (abs(n.x) * C.sx + abs(n.y) * C.sy);
    let go = max((q.x - at.x) * n.x + (q.y - at.y) * n.y - extent, 0.0) + 1e-3 * min(C.sx, C.sy);
    let out = vec2<f32>(at.x + n.x * go, at.y + n.y * go);
    if inside(out) {
        return Out(true, q, n);
    }
    return Out(true, out, n);
}

@compute @workgroup_size(256)
fn collide(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= S.n {
        return;
    }
    let p = pos[i];
    var v = vel[i];
    let half = 0.5 * min(C.sx, C.sy);
    let moved = vec2<f32>(v.x * S.dt, v.y * S.dt);
    let start = vec2<f32>(p.x - moved.x, p.y - moved.y);
    let travel = sqrt(moved.x * moved.x + moved.y * moved.y);
    var checks = 1u;
    if travel > half {
        checks = min(u32(ceil(travel / half)), 64u);
    }
    var outside = !inside(start);
    var last = start;
    for (var k = 1u; k <= checks; k++) {
        let t = f32(k) / f32(checks);
        let q = vec2<f32>(start.x + (p.x - start.x) * t, start.y + (p.y - start.y) * t);
        if !inside(q) {
            outside = true;
            last = q;
            continue;
        }
        var out = Out(false, q, vec2<f32>(0.0));
        if outside {
            out = entry(last, q);
        }
        if !out.found {
            out = way_out(q);
        }
        pos[i] = out.at;
        let into = v.x * out.n.x + v.y * out.n.y;
        if into < 0.0 {
            let kk = (1.0 + S.bounce) * into;
            v = vec2<f32>(v.x - kk * out.n.x, v.y - kk * out.n.y);
            vel[i] = v;
        }
        return;
    }
}

fn finite(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u;
}
