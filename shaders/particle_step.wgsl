// particle_step.wgsl: the particle core's step (sim/particles/step.rs, `Particles::step_in`),
// operation for operation, in either dimension (after particle_dim2.wgsl or
// particle_dim3.wgsl, with the dimension's container, particle_box.wgsl or
// particle_tank.wgsl, after it: gpu/shaders.rs). One entry point per stage:
//   predict: gravity, where each particle will be, its cell's key (counted for the sort);
//   (then the sort, cell_sort.wgsl, and the gather into sorted order, particle_reorder.wgsl;)
//   densities: density and near density at the predicted positions (each particle counts
//     itself), of the first S.max_neighbours neighbours in reach, in the order of the cells
//     around it, and the container's share;
//   forces: pressure, near pressure, viscosity and bulk viscosity with those neighbours, each
//     pair's terms symmetric in the pair, and the container's push: the new velocities into
//     svel;
//   integrate: the move, the container's bodies, the walls' bounce and slip, then the drag; a
//     particle with a non-finite place or velocity goes to the centre, at rest.

@group(0) @binding(0) var<uniform> S: ParticleStep;
@group(0) @binding(1) var<storage, read_write> pos: array<vecD>;
@group(0) @binding(2) var<storage, read_write> vel: array<vecD>;
@group(0) @binding(3) var<storage, read_write> pred: array<vecD>;
@group(0) @binding(4) var<storage, read_write> svel: array<vecD>;
@group(0) @binding(5) var<storage, read> start: array<u32>;
@group(0) @binding(6) var<storage, read_write> density: array<vec2<f32>>;
@group(0) @binding(7) var<storage, read_write> keys: array<u32>;
@group(0) @binding(8) var<storage, read_write> counts: array<atomic<u32>>;

// The cell of point p, clamped to the grid (particles::hash::Grid::cell_of).
fn cell_of(p: vecD) -> vec3<u32> {
    let top = vec3<f32>(f32(S.nx - 1u), f32(S.ny - 1u), f32(S.nz - 1u));
    return vec3<u32>(clamp(to3(p) * S.inv_cell, vec3<f32>(0.0), top));
}

@compute @workgroup_size(256)
fn predict(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= S.n {
        return;
    }
    let v = vel[i] + from3(S.gravity) * S.dt;
    vel[i] = v;
    let p = pos[i] + v * S.look;
    pred[i] = p;
    let c = cell_of(p);
    let key = (c.z * S.ny + c.y) * S.nx + c.x;
    keys[i] = key;
    atomicAdd(&counts[key], 1u);
}

// The runs of cells (consecutive along x) around point p: first sorted index and end, up to 9
// (3 in 2D).
struct Around {
    lo: array<u32, 9>,
    hi: array<u32, 9>,
    runs: u32,
}

fn around(p: vecD) -> Around {
    let c = cell_of(p);
    let i0 = select(c.x - 1u, 0u, c.x == 0u);
    let i1 = min(c.x + 1u, S.nx - 1u);
    let j0 = select(c.y - 1u, 0u, c.y == 0u);
    let j1 = min(c.y + 1u, S.ny - 1u);
    let k0 = select(c.z - 1u, 0u, c.z == 0u);
    let k1 = min(c.z + 1u, S.nz - 1u);
    var a: Around;
    a.runs = 0u;
    for (var kk = k0; kk <= k1; kk++) {
        for (var jj = j0; jj <= j1; jj++) {
            let row = (kk * S.ny + jj) * S.nx;
            a.lo[a.runs] = start[row + i0];
            a.hi[a.runs] = start[row + i1 + 1u];
            a.runs += 1u;
        }
    }
    return a;
}

@compute @workgroup_size(256)
fn densities(@builtin(global_invocation_id) gid: vec3<u32>) {
    let me = gid.x;
    if me >= S.n {
        return;
    }
    let p = pred[me];
    let h2 = S.h * S.h;
    var acc = vec2<f32>(0.0);
    var found = 0u;
    let a = around(p);
    for (var r = 0u; r < a.runs && found < S.max_neighbours; r++) {
        for (var k = a.lo[r]; k < a.hi[r]; k++) {
            let r2 = norm2(pred[k] - p);
            if r2 < h2 {
                let v = max(S.h - sqrt(r2), 0.0);
                let v2 = v * v;
                acc = vec2<f32>(acc.x + v2 * S.spiky2, acc.y + v2 * v * S.spiky3);
                if k != me {
                    found += 1u;
                    if found == S.max_neighbours {
                        break;
                    }
                }
            }
        }
    }
    density[me] = container_density(p, acc);
}

fn pressures(d: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(S.pressure * (d.x - S.target_density), S.near_pressure * d.y);
}

@compute @workgroup_size(256)
fn forces(@builtin(global_invocation_id) gid: vec3<u32>) {
    let me = gid.x;
    if me >= S.n {
        return;
    }
    let pa = pred[me];
    let da = density[me];
    let qa = pressures(da);
    let va = vel[me];
    let ia = 1.0 / max(da.x, 1e-6);
    let h2 = S.h * S.h;
    var acc = vecD(0.0);
    var found = 0u;
    let a = around(pa);
    for (var run = 0u; run < a.runs && found < S.max_neighbours; run++) {
        for (var k = a.lo[run]; k < a.hi[run]; k++) {
            let d = pred[k] - pa;
            let r2 = norm2(d);
            if k == me || !(r2 < h2) {
                continue;
            }
            let r = sqrt(r2);
            let db = density[k];
            let qb = pressures(db);
            let vb = vel[k];
            let ib = 1.0 / max(db.x, 1e-6);
            // Coincident particles: the lower index goes down, the other up.
            var along = from3(select(vec3<f32>(0.0, -1.0, 0.0), vec3<f32>(0.0, 1.0, 0.0), me < k));
            var inv_len = 1.0;
            if r > 0.0 {
                along = d;
                inv_len = 1.0 / r;
            }
            let v = S.h - r;
            let s2 = -v * S.spiky2_slope;
            let s3 = -v * v * S.spiky3_slope;
            // (Pa/da / db + Pb/db / da) / 2, and the mean near pressure over the mean near
            // density times the mean density.
            let t0 = 0.5 * (qa.x * ia * ib + qb.x * ib * ia);
            let t1 = 0.5 * (qa.y + qb.y) / max(0.25 * (da.y + db.y) * (da.x + db.x), 1e-12);
            let push = (s2 * t0 + s3 * t1) * inv_len;
            let w6 = h2 - r * r;
            let poly = w6 * w6 * w6 * S.poly6;
            let rel = vb - va;
            let along_rel = dotD(rel, along) * (inv_len * inv_len);
            let k1 = push + along_rel * poly * S.bulk_viscosity;
            let k2 = poly * S.viscosity;
            acc += along * k1 + rel * k2;
            found += 1u;
            if found == S.max_neighbours {
                break;
            }
        }
    }
    svel[me] = va + container_force(pa, da, qa, va, acc) * S.dt;
}

fn finite(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u;
}

@compute @workgroup_size(256)
fn integrate(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if i >= S.n {
        return;
    }
    var v = svel[i];
    var p = pos[i] + v * S.dt;
    container_keep_out(&p, &v);
    let top = from3(S.size);
    var touched = false;
    for (var c = 0; c < DIM; c++) {
        if !finite(p[c]) || !finite(v[c]) {
            pos[i] = 0.5 * top;
            vel[i] = vecD(0.0);
            return;
        }
        if p[c] < 0.0 {
            p[c] = 0.0;
            v[c] = abs(v[c]) * S.bounce;
            touched = true;
        } else if p[c] > top[c] {
            p[c] = top[c];
            v[c] = -abs(v[c]) * S.bounce;
            touched = true;
        }
    }
    if touched {
        for (var c = 0; c < DIM; c++) {
            if p[c] > 0.0 && p[c] < top[c] {
                v[c] *= S.slip;
            }
        }
    }
    pos[i] = p;
    vel[i] = v * S.keep;
}
