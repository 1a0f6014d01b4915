// sph_step.wgsl: the particle fluid's step (sim/sph/mod.rs, `Fluid::step`), operation for
// operation: gravity and the predicted positions; after the sort (sph_sort.wgsl or
// cell_sort.wgsl) and the reorder by it (particle_reorder.wgsl); densities at the predicted positions; pressure, near pressure and
// viscosity, each pair's push symmetric in the pair; the move and the walls.

@group(0) @binding(0) var<uniform> S: Sph;
@group(0) @binding(1) var<storage, read_write> pos: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read_write> vel: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read_write> pred: array<vec2<f32>>;
@group(0) @binding(4) var<storage, read_write> svel: array<vec2<f32>>;
@group(0) @binding(5) var<storage, read> start: array<u32>;
@group(0) @binding(6) var<storage, read_write> density: array<vec2<f32>>;

// Most neighbours a particle keeps: its first ones in reach, in sorted order (the core's
// particles::MAX_NEIGHBOURS; the force pass reads the same ones).
const MAX_NEIGHBOURS: u32 = 128u;

// Gravity, then where each particle will be.
@compute @workgroup_size(256)
fn predict(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= S.n {
        return;
    }
    let v = vel[i] + vec2<f32>(S.gx, S.gy) * S.dt;
    vel[i] = v;
    pred[i] = pos[i] + v * S.look;
}

// The rows of cells around point p: (first sorted index, end) per row, up to three rows.
struct Around {
    lo: array<u32, 3>,
    hi: array<u32, 3>,
    rows: u32,
}

fn around(p: vec2<f32>) -> Around {
    let c = sph_cell(p, S);
    let i0 = select(c.x - 1u, 0u, c.x == 0u);
    let i1 = min(c.x + 1u, S.cols - 1u);
    let j0 = select(c.y - 1u, 0u, c.y == 0u);
    let j1 = min(c.y + 1u, S.rows - 1u);
    var a: Around;
    a.rows = j1 - j0 + 1u;
    for (var r = 0u; r < a.rows; r++) {
        let row = (j0 + r) * S.cols;
        a.lo[r] = start[row + i0];
        a.hi[r] = start[row + i1 + 1u];
    }
    return a;
}

// Density and near density of a neighbour at distance r (0 at the radius and beyond).
fn densities(r: f32) -> vec2<f32> {
    let v = max(S.cell - r, 0.0);
    return vec2<f32>(v * v * S.spiky2, v * v * v * S.spiky3);
}

// Densities at the predicted positions (each particle counts itself).
@compute @workgroup_size(256)
fn density_pass(@builtin(global_invocation_id) gid: vec3<u32>) {
    let me = gid.x;
    if me >= S.n {
        return;
    }
    let p = pred[me];
    let h2 = S.cell * S.cell;
    // Itself included, at distance 0.
    var acc = vec2<f32>(0.0);
    var found = 0u;
    let a = around(p);
    for (var r = 0u; r < a.rows && found < MAX_NEIGHBOURS; r++) {
        for (var k = a.lo[r]; k < a.hi[r]; k++) {
            let q = pred[k];
            let dx = q.x - p.x;
            let dy = q.y - p.y;
            let r2 = dx * dx + dy * dy;
            if r2 < h2 {
                acc += densities(sqrt(r2));
                if k != me {
                    found += 1u;
                    if found == MAX_NEIGHBOURS {
                        break;
                    }
                }
            }
        }
    }
    density[me] = acc;
}

fn pressures(d: vec2<f32>) -> vec2<f32> {
    return vec2<f32>((d.x - S.target_density) * S.pressure, d.y * S.near_pressure);
}

// Pressure and viscosity, from the velocities after gravity: the new velocities into svel.
// Each pair's terms symmetric in the pair, as the core's force stage (sim/particles/step.rs).
@compute @workgroup_size(256)
fn forces(@builtin(global_invocation_id) gid: vec3<u32>) {
    let me = gid.x;
    if me >= S.n {
        return;
    }
    let pa = pred[me];
    let da = density[me];
    let qa = pressures(da);
    let inva = 1.0 / max(da.x, 1e-6);
    let va = vel[me];
    let h = S.cell;
    let r2max = h * h;
    var acc = vec2<f32>(0.0);
    var found = 0u;
    let a = around(pa);
    for (var r = 0u; r < a.rows && found < MAX_NEIGHBOURS; r++) {
        for (var k = a.lo[r]; k < a.hi[r]; k++) {
            let pb = pred[k];
            let dx = pb.x - pa.x;
            let dy = pb.y - pa.y;
            let d2 = dx * dx + dy * dy;
            if k == me || d2 >= r2max {
                continue;
            }
            let db = density[k];
            let qb = pressures(db);
            let invb = 1.0 / max(db.x, 1e-6);
            let vb = vel[k];
            let dist = sqrt(d2);
            // Coincident particles: the lower index goes down, the other up.
            var along = select(vec2<f32>(0.0, -1.0), vec2<f32>(0.0, 1.0), me < k);
            var inv_len = 1.0;
            if dist > 0.0 {
                along = vec2<f32>(dx, dy);
                inv_len = 1.0 / dist;
            }
            let v = h - dist;
            let s2 = -v * S.spiky2_slope;
            let s3 = -v * v * S.spiky3_slope;
            let t0 = 0.5 * (qa.x * inva * invb + qb.x * invb * inva);
            let t1 = 0.5 * (qa.y + qb.y) / max(0.25 * (da.y + db.y) * (da.x + db.x), 1e-12);
            let push = (s2 * t0 + s3 * t1) * inv_len;
            let w = r2max - dist * dist;
            let visc = w * w * w * S.poly6 * S.viscosity;
            acc += along * push + (vb - va) * visc;
            found += 1u;
            if found == MAX_NEIGHBOURS {
                break;
            }
        }
    }
    svel[me] = va + acc * S.dt;
}

fn finite(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u;
}

// Move, bounce off the walls, then the drag (the core's integrate stage); a particle with a
// non-finite place or velocity goes to the box's centre, at rest.
@compute @workgroup_size(256)
fn move_pass(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= S.n {
        return;
    }
    var p = pos[i];
    var v = svel[i];
    let top = vec2<f32>(S.width, S.height);
    for (var c = 0; c < 2; c++) {
        p[c] += v[c] * S.dt;
    }
    for (var c = 0; c < 2; c++) {
        if !finite(p[c]) || !finite(v[c]) {
            pos[i] = 0.5 * top;
            vel[i] = vec2<f32>(0.0);
            return;
        }
        if p[c] < 0.0 {
            p[c] = 0.0;
            v[c] = abs(v[c]) * S.damping;
        } else if p[c] > top[c] {
            p[c] = top[c];
            v[c] = -abs(v[c]) * S.damping;
        }
    }
    pos[i] = p;
    vel[i] = v * S.keep;
}
