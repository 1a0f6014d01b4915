//! Semi-Lagrangian advection with bilinear interpolation (Stam): each sample traces the
//! velocity back over `dt` and takes the field's value there. Dissipation is fused in: the
//! traced value is multiplied by the decay factor, saving a memory pass.
//!
//! Dye traces are second order (midpoint rule). Euler traces spiral outwards in rotating flow,
//! and the map they define expands area by `(dt * w)^2` per step: at zero dissipation that
//! lost 16 % of a dye blob in 200 steps of a gentle vortex and 85 % in a lively 64x48 scene;
//! the midpoint trace cut those to 5 % and 36 % (and 4 % at 128x96; measured 2026-11). The
//! velocity's self-advection keeps the Euler trace: the midpoint costs two more bilinear
//! samples per face (+30 % step time at 512²), and the velocity's own numerical damping is
//! dwarfed by the dissipation users set.
//!
//! Coordinates: "centre space" puts cell `(i, j)`'s centre at `(i, j)`. `u` samples sit at
//! `(i - 1/2, j)`, `v` samples at `(i, j - 1/2)`. Velocities are in canvas heights per second,
//! so a velocity moves `v * dt * height` cells. Traced points outside the canvas clamp to it.
//!
//! Why this file is long: the velocity's, the dye's (with the heat carried on the same traces)
//! and the tracers' advection share the samplers and the traces, and the mending next to solids
//! re-runs the same traces.

use crate::kernels::math::{lerp, limit};
use crate::sim::MAX_SPEED;
use rayon::prelude::*;

pub use crate::sim::obstacles::near::NearSolids;

#[cfg(target_arch = "x86_64")]
#[path = "advect_avx2.rs"]
mod simd;

/// Geometry shared by the advection kernels.
#[derive(Clone, Copy)]
pub struct Grid {
    /// Simulation width in cells.
    pub w: usize,
    /// Simulation height in cells.
    pub h: usize,
}

/// Bilinear sampling of a row-major `nx x ny` field in its own index space, clamped to the
/// grid. The lower corner index stops one short of the last row and column and the weight
/// reaches 1 there (the same as [`crate::kernels::math::bilerp`], and as the GPU shaders).
#[derive(Clone, Copy)]
pub(super) struct Sampler<'a> {
    f: &'a [f32],
    nx: usize,
    xmax: f32,
    ymax: f32,
    ilast: i32,
    jlast: i32,
    /// Offset to the right neighbour (0 on a one-column grid).
    dx: usize,
    /// Offset to the upper neighbour (0 on a one-row grid).
    dy: usize,
}

/// Where a bilinear sample reads: the lower-left corner's index and the weights.
#[derive(Clone, Copy)]
struct Taps {
    k: usize,
    fx: f32,
    fy: f32,
}

impl<'a> Sampler<'a> {
    fn new(f: &'a [f32], nx: usize, ny: usize) -> Self {
        assert!(nx >= 1 && ny >= 1 && f.len() >= nx * ny && nx * ny < i32::MAX as usize);
        Self {
            f,
            nx,
            xmax: (nx - 1) as f32,
            ymax: (ny - 1) as f32,
            ilast: nx.saturating_sub(2) as i32,
            jlast: ny.saturating_sub(2) as i32,
            dx: usize::from(nx > 1),
            dy: if ny > 1 { nx } else { 0 },
        }
    }

    /// Whether the vector path can read this field (it always reads four corners).
    #[cfg(target_arch = "x86_64")]
    fn wide_ok(&self) -> bool {
        self.dx == 1 && self.dy == self.nx
    }

    #[inline(always)]
    fn taps(&self, x: f32, y: f32) -> Taps {
        let x = x.max(0.0).min(self.xmax);
        let y = y.max(0.0).min(self.ymax);
        let i0 = (x as i32).min(self.ilast);
        let j0 = (y as i32).min(self.jlast);
        Taps {
            k: j0 as usize * self.nx + i0 as usize,
            fx: x - i0 as f32,
            fy: y - j0 as f32,
        }
    }

    /// Interpolate `f` (a field of this sampler's shape) at `t`.
    #[inline(always)]
    fn gather(&self, f: &[f32], t: Taps) -> f32 {
        let (k, dx, dy) = (t.k, self.dx, self.dy);
        debug_assert!(k + dx + dy < f.len());
        // SAFETY: `taps` clamps the corner to [0, nx - 2] x [0, ny - 2] (or 0 on a one-wide
        // axis, where the offset is 0), so k + dx + dy < nx * ny <= f.len() (asserted in
        // `new` for this field, and by the callers for same-shape fields).
        let (a, b, c, d) = unsafe {
            (
                *f.get_unchecked(k),
                *f.get_unchecked(k + dx),
                *f.get_unchecked(k + dy),
                *f.get_unchecked(k + dy + dx),
            )
        };
        lerp(lerp(a, b, t.fx), lerp(c, d, t.fx), t.fy)
    }

    #[inline(always)]
    fn at(&self, x: f32, y: f32) -> f32 {
        self.gather(self.f, self.taps(x, y))
    }

    /// The four corners `t` reads and their bilinear weights (the near-solid passes weigh
    /// them one by one).
    #[inline(always)]
    fn corners(&self, t: Taps) -> [(usize, f32); 4] {
        [
            (t.k, (1.0 - t.fx) * (1.0 - t.fy)),
            (t.k + self.dx, t.fx * (1.0 - t.fy)),
            (t.k + self.dy, (1.0 - t.fx) * t.fy),
            (t.k + self.dy + self.dx, t.fx * t.fy),
        ]
    }
}

/// The face velocities, sampled anywhere in centre space.
#[derive(Clone, Copy)]
pub(super) struct Flow<'a> {
    u: Sampler<'a>,
    v: Sampler<'a>,
}

impl<'a> Flow<'a> {
    pub(super) fn new(g: Grid, u: &'a [f32], v: &'a [f32]) -> Self {
        Self {
            u: Sampler::new(u, g.w + 1, g.h),
            v: Sampler::new(v, g.w, g.h + 1),
        }
    }

    /// Velocity at centre-space point `(x, y)`.
    #[inline(always)]
    pub(super) fn at(&self, x: f32, y: f32) -> (f32, f32) {
        (self.u.at(x + 0.5, y), self.v.at(x, y + 0.5))
    }

    /// The midpoint-rule departure point of centre-space point `(x, y)` whose velocity is
    /// `(vx, vy)`, for a trace of `k = dt * height` cells per unit velocity.
    #[inline(always)]
    fn depart(&self, x: f32, y: f32, vx: f32, vy: f32, k: f32) -> (f32, f32) {
        let h = 0.5 * k;
        let (mx, my) = self.at(x - h * vx, y - h * vy);
        (x - k * mx, y - k * my)
    }

    /// The departure point of cell centre `(i, j)` at the simulation's resolution, its
    /// velocity the mean of its opposite faces: the trace of [`advect_dye_row_1`] and
    /// [`advect_scalar_row`] (which read the same faces from row slices).
    #[inline(always)]
    fn depart_centre(&self, i: usize, j: usize, k: f32) -> (f32, f32) {
        let (u, v, un, vn) = (self.u.f, self.v.f, self.u.nx, self.v.nx);
        let vx = 0.5 * (u[j * un + i] + u[j * un + i + 1]);
        let vy = 0.5 * (v[j * vn + i] + v[(j + 1) * vn + i]);
        self.depart(i as f32, j as f32, vx, vy, k)
    }

    /// The departure point, in the dye grid's cells, of dye cell `(i, j)` of a grid `scale`
    /// times finer (`scale > 1`): its centre in simulation centre space, the velocity sampled
    /// there, traced, and taken back to the dye grid. The trace of [`advect_dye_row`].
    #[inline(always)]
    fn depart_fine(&self, scale: usize, i: usize, j: usize, k: f32) -> (f32, f32) {
        let (inv_s, s) = (1.0 / scale as f32, scale as f32);
        // Dye cell (i, j) sits at ((i + 1/2) / s - 1/2, ...) in simulation centre space.
        let x = (i as f32 + 0.5).mul_add(inv_s, -0.5);
        let y = (j as f32 + 0.5).mul_add(inv_s, -0.5);
        let (vx, vy) = self.at(x, y);
        let (bx, by) = self.depart(x, y, vx, vy, k);
        ((bx + 0.5).mul_add(s, -0.5), (by + 0.5).mul_add(s, -0.5))
    }
}

/// The particles' vector move over a flow: made only where it runs (AVX2 and FMA, a grid
/// large enough for the vector samplers), checked once.
#[derive(Clone, Copy)]
pub(super) struct WideMoves<'a>(
    // Read by the AVX2 move, on x86-64 only (elsewhere `new` never makes one).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] &'a Flow<'a>,
);

impl<'a> WideMoves<'a> {
    /// `None` where the vector move cannot run.
    #[inline]
    pub(super) fn new(flow: &'a Flow<'a>) -> Option<Self> {
        #[cfg(target_arch = "x86_64")]
        if simd::available() && flow.u.wide_ok() && flow.v.wide_ok() {
            return Some(Self(flow));
        }
        let _ = flow;
        None
    }

    /// The midpoint moves of eight particles (see `advect_avx2::particle_moves`).
    #[inline]
    pub(super) fn moves(self, n: f32, dt: f32, x: &mut [f32; 8], y: &mut [f32; 8]) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `new` made this only with AVX2 and FMA detected and both samplers
        // `wide_ok`.
        unsafe {
            simd::particle_moves(self.0, n, dt, x, y)
        };
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (n, dt, x, y);
    }
}

/// Advect the face velocities by themselves: `u_out`, `v_out` receive the traced values of
/// `u_in`, `v_in` times `decay`, limited to [`MAX_SPEED`]. Wall faces are set to 0. Returns
/// an upper bound of the distance, in cells, that any face traced back (the largest velocity
/// component times `dt * height`).
pub fn advect_velocity(
    g: Grid,
    u_in: &[f32],
    v_in: &[f32],
    u_out: &mut [f32],
    v_out: &mut [f32],
    dt: f32,
    decay: f32,
) -> f32 {
    let k = dt * g.h as f32;
    let (w, h) = (g.w, g.h);
    let flow = Flow::new(g, u_in, v_in);
    let du = u_out
        .par_chunks_mut(w + 1)
        .with_min_len(crate::kernels::band::min_rows(w + 1))
        .enumerate()
        .map(|(j, row)| {
            let urow = &u_in[j * (w + 1)..(j + 1) * (w + 1)];
            let vb = &v_in[j * w..(j + 1) * w];
            let vt = &v_in[(j + 1) * w..(j + 2) * w];
            row[0] = 0.0;
            row[w] = 0.0;
            #[allow(unused_mut)]
            let mut start = 1;
            #[cfg(target_arch = "x86_64")]
            if simd::available() && flow.u.wide_ok() && flow.v.wide_ok() {
                // SAFETY: AVX2 and FMA were detected; the slices have the kernel's shapes.
                start = unsafe { simd::advect_u_row(flow, urow, vb, vt, row, j, k, decay) };
            }
            advect_u_row(flow, urow, vb, vt, row, j, k, decay, start);
            k * super::reduce::row_max_abs(urow)
        })
        .reduce(|| 0.0f32, f32::max);
    let dv = v_out
        .par_chunks_mut(w)
        .with_min_len(crate::kernels::band::min_rows(w))
        .enumerate()
        .map(|(j, row)| {
            if j == 0 || j == h {
                row.fill(0.0);
                return 0.0;
            }
            let ub = &u_in[(j - 1) * (w + 1)..j * (w + 1)];
            let ut = &u_in[j * (w + 1)..(j + 1) * (w + 1)];
            let vrow = &v_in[j * w..(j + 1) * w];
            #[allow(unused_mut)]
            let mut start = 0;
            #[cfg(target_arch = "x86_64")]
            if simd::available() && flow.u.wide_ok() && flow.v.wide_ok() {
                // SAFETY: AVX2 and FMA were detected; the slices have the kernel's shapes.
                start = unsafe { simd::advect_v_row(flow, vrow, ub, ut, row, j, k, decay) };
            }
            advect_v_row(flow, vrow, ub, ut, row, j, k, decay, start);
            k * super::reduce::row_max_abs(vrow)
        })
        .reduce(|| 0.0f32, f32::max);
    du.max(dv)
}

kernel! {
/// One row of `u` faces, from column `start`.
#[allow(clippy::too_many_arguments)]
fn advect_u_row(
    flow: Flow,
    urow: &[f32],
    vb: &[f32],
    vt: &[f32],
    out: &mut [f32],
    j: usize,
    k: f32,
    decay: f32,
    start: usize,
) {
    let w = out.len() - 1;
    let y = j as f32;
    for i in start.max(1)..w {
        // The face's own velocity: u itself and the mean of the four v faces around it.
        let vx = urow[i];
        let vy = 0.25 * ((vb[i - 1] + vb[i]) + (vt[i - 1] + vt[i]));
        // Euler trace from the face; in u's own index space the face is at (i, j).
        let value = flow.u.at(i as f32 - k * vx, y - k * vy) * decay;
        out[i] = limit(value, -MAX_SPEED, MAX_SPEED);
    }
}
}

kernel! {
/// One row of `v` faces, from column `start`.
#[allow(clippy::too_many_arguments)]
fn advect_v_row(
    flow: Flow,
    vrow: &[f32],
    ub: &[f32],
    ut: &[f32],
    out: &mut [f32],
    j: usize,
    k: f32,
    decay: f32,
    start: usize,
) {
    let y = j as f32;
    for i in start..out.len() {
        let vx = 0.25 * ((ub[i] + ub[i + 1]) + (ut[i] + ut[i + 1]));
        let vy = vrow[i];
        // Euler trace from the face; in v's own index space the face is at (i, j).
        let value = flow.v.at(i as f32 - k * vx, y - k * vy) * decay;
        out[i] = limit(value, -MAX_SPEED, MAX_SPEED);
    }
}
}

/// A scalar field at the simulation's resolution carried along with the dye (the
/// temperature): where it comes from, where it goes, its decay and its limit (+-`max`).
pub struct Carried<'a> {
    pub src: &'a [f32],
    pub out: &'a mut [f32],
    pub decay: f32,
    pub max: f32,
}

/// Advect the three dye planes (a grid `scale` times finer than the simulation) through the
/// face velocities, multiplying by `decay` and limiting to [0, `max`]; and `carried`, if
/// any, as [`advect_scalar`] without solids does. With dye at the simulation's resolution
/// the carried field takes the dye's traces (the same departure points, bit for bit), which
/// saves the trace of a pass of its own: most of the temperature's cost.
#[allow(clippy::too_many_arguments)]
pub fn advect_dye(
    g: Grid,
    scale: usize,
    u: &[f32],
    v: &[f32],
    dye_in: [&[f32]; 3],
    dye_out: [&mut [f32]; 3],
    dt: f32,
    decay: f32,
    max: f32,
    carried: Option<Carried>,
) {
    let (dw, dh) = (g.w * scale, g.h * scale);
    let flow = Flow::new(g, u, v);
    let dye = Sampler::new(dye_in[0], dw, dh);
    for plane in dye_in {
        assert!(plane.len() >= dw * dh);
    }
    let k = dt * g.h as f32;
    let carried = match carried {
        Some(c) if scale != 1 => {
            advect_scalar(g, u, v, c.src, c.out, None, dt, c.decay, c.max);
            None
        }
        c => c,
    };
    let field = carried.as_ref().map(|c| {
        assert!(c.src.len() >= g.w * g.h);
        (Sampler::new(c.src, g.w, g.h), c.decay, c.max)
    });
    let row = |j: usize, [r, gr, b]: [&mut [f32]; 3], carried: Option<&mut [f32]>| {
        #[allow(unused_mut)]
        let mut start = 0;
        if scale == 1 {
            let urow = &u[j * (g.w + 1)..(j + 1) * (g.w + 1)];
            let vb = &v[j * g.w..(j + 1) * g.w];
            let vt = &v[(j + 1) * g.w..(j + 2) * g.w];
            // (Taken by the AVX2 kernel, on x86-64 only.)
            #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
            let mut carried = carried.zip(field);
            #[cfg(target_arch = "x86_64")]
            if simd::available() && dye.wide_ok() && flow.u.wide_ok() && flow.v.wide_ok() {
                let also = carried
                    .as_mut()
                    .map(|(out, (f, d, m))| (f.f, &mut **out, *d, *m));
                // SAFETY: AVX2 and FMA were detected; the slices have the kernel's shapes (the
                // carried field is the dye's shape: scale 1).
                start = unsafe {
                    simd::advect_dye_row_1(
                        flow,
                        dye,
                        dye_in,
                        urow,
                        vb,
                        vt,
                        [&mut *r, &mut *gr, &mut *b],
                        j,
                        k,
                        decay,
                        max,
                        also,
                    )
                };
            }
            advect_dye_row_1(
                flow,
                dye,
                dye_in,
                urow,
                vb,
                vt,
                [r, gr, b],
                j,
                k,
                decay,
                max,
                start,
            );
            if let Some((out, (f, d, m))) = carried {
                advect_scalar_row(flow, f, urow, vb, vt, out, j, k, d, m, start);
            }
        } else {
            #[cfg(target_arch = "x86_64")]
            if simd::available() && dye.wide_ok() && flow.u.wide_ok() && flow.v.wide_ok() {
                // SAFETY: AVX2 and FMA were detected; the slices have the kernel's shapes.
                start = unsafe {
                    simd::advect_dye_row(flow, scale, dye, dye_in, [r, gr, b], j, k, decay, max)
                };
            }
            advect_dye_row(
                flow,
                scale,
                dye,
                dye_in,
                [r, gr, b],
                j,
                k,
                decay,
                max,
                start,
            );
        }
    };
    let [r, gr, b] = dye_out;
    let rows = r
        .par_chunks_mut(dw)
        .zip(gr.par_chunks_mut(dw))
        .zip(b.par_chunks_mut(dw));
    match carried {
        Some(c) => rows
            .zip(c.out[..g.w * g.h].par_chunks_mut(g.w))
            .with_min_len(crate::kernels::band::min_rows(dw))
            .enumerate()
            .for_each(|(j, (((r, gr), b), t))| row(j, [r, gr, b], Some(t))),
        None => rows
            .with_min_len(crate::kernels::band::min_rows(dw))
            .enumerate()
            .for_each(|(j, ((r, gr), b))| row(j, [r, gr, b], None)),
    }
}

kernel! {
/// One dye row at the simulation's resolution: the velocity at a cell centre is the mean of
/// the cell's opposite faces.
#[allow(clippy::too_many_arguments)]
fn advect_dye_row_1(
    flow: Flow,
    dye: Sampler,
    planes: [&[f32]; 3],
    urow: &[f32],
    vb: &[f32],
    vt: &[f32],
    out: [&mut [f32]; 3],
    j: usize,
    k: f32,
    decay: f32,
    max: f32,
    start: usize,
) {
    let [or, og, ob] = out;
    let y = j as f32;
    for i in start..or.len() {
        let vx = 0.5 * (urow[i] + urow[i + 1]);
        let vy = 0.5 * (vb[i] + vt[i]);
        let (bx, by) = flow.depart(i as f32, y, vx, vy, k);
        let t = dye.taps(bx, by);
        or[i] = (dye.gather(planes[0], t) * decay).max(0.0).min(max);
        og[i] = (dye.gather(planes[1], t) * decay).max(0.0).min(max);
        ob[i] = (dye.gather(planes[2], t) * decay).max(0.0).min(max);
    }
}
}

kernel! {
/// One row of a finer dye grid: velocities interpolated at each dye cell centre.
#[allow(clippy::too_many_arguments)]
fn advect_dye_row(
    flow: Flow,
    scale: usize,
    dye: Sampler,
    planes: [&[f32]; 3],
    out: [&mut [f32]; 3],
    j: usize,
    k: f32,
    decay: f32,
    max: f32,
    start: usize,
) {
    let [or, og, ob] = out;
    for i in start..or.len() {
        let (bx, by) = flow.depart_fine(scale, i, j, k);
        let t = dye.taps(bx, by);
        or[i] = (dye.gather(planes[0], t) * decay).max(0.0).min(max);
        og[i] = (dye.gather(planes[1], t) * decay).max(0.0).min(max);
        ob[i] = (dye.gather(planes[2], t) * decay).max(0.0).min(max);
    }
}
}

kernel! {
/// One row of a scalar field at the simulation's resolution (the temperature), from column
/// `start`: traced back as [`advect_dye_row_1`] traces the dye, times `decay`, limited to
/// +-`max`.
#[allow(clippy::too_many_arguments)]
fn advect_scalar_row(
    flow: Flow,
    field: Sampler,
    urow: &[f32],
    vb: &[f32],
    vt: &[f32],
    out: &mut [f32],
    j: usize,
    k: f32,
    decay: f32,
    max: f32,
    start: usize,
) {
    let y = j as f32;
    for (i, o) in out.iter_mut().enumerate().skip(start) {
        let vx = 0.5 * (urow[i] + urow[i + 1]);
        let vy = 0.5 * (vb[i] + vt[i]);
        let (bx, by) = flow.depart(i as f32, y, vx, vy, k);
        let value = field.gather(field.f, field.taps(bx, by));
        *o = (value * decay).max(-max).min(max);
    }
}
}

/// A scalar field next to obstacles: the cell `c` traced back as [`advect_scalar_row`] does,
/// taking the bilinear mean of only the fluid corners, their weights renormalised (none
/// solid: the plain mean; all solid: the cell's own value), times `decay`, limited to +-`max`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn scalar_among_fluid(
    g: Grid,
    flow: &Flow,
    field: &Sampler,
    solid: &[bool],
    c: usize,
    k: f32,
    decay: f32,
    max: f32,
) -> f32 {
    let (bx, by) = flow.depart_centre(c % g.w, c / g.w, k);
    let t = field.taps(bx, by);
    let corners = field.corners(t);
    let all_fluid = corners.iter().all(|&(k, _)| !solid[k]);
    let (mut sum, mut weight) = (0.0f32, 0.0f32);
    if !all_fluid {
        for (k, cw) in corners {
            if !solid[k] {
                weight += cw;
                sum = cw.mul_add(field.f[k], sum);
            }
        }
    }
    let plain = || field.gather(field.f, t);
    among_fluid(all_fluid, plain, (sum, weight), field.f[c], decay, max)
}

/// A scalar sampled among fluid corners ([`scalar_among_fluid`]): with every corner fluid
/// the plain bilinear sample (`plain`), else the fluid corners' weighted sum over their
/// weight, or with none (`weight` about 0) the cell's own value; times `decay`, limited to
/// +-`max`.
#[inline(always)]
fn among_fluid(
    all_fluid: bool,
    plain: impl FnOnce() -> f32,
    (sum, weight): (f32, f32),
    own: f32,
    decay: f32,
    max: f32,
) -> f32 {
    let value = if all_fluid {
        plain()
    } else if weight > 1e-6 {
        sum / weight
    } else {
        own
    };
    (value * decay).max(-max).min(max)
}

/// Advect a scalar field of the simulation's resolution (`w x h` cells; the temperature)
/// through the face velocities, multiplying by `decay` and limiting to +-`max`.
///
/// With obstacles, `solids` holds the cells' solid flags and the fluid cells that this step's
/// traces can carry next to a solid ([`NearSolids::within`] the trace length): those are
/// traced again taking only fluid corners ([`scalar_among_fluid`]), as the dye near solids
/// is, and the solid cells end at 0. So nothing is sampled from inside a solid, and the plain
/// pass (vectorised) does the rest.
#[allow(clippy::too_many_arguments)]
pub fn advect_scalar(
    g: Grid,
    u: &[f32],
    v: &[f32],
    src: &[f32],
    out: &mut [f32],
    solids: Option<(&[bool], &[u32])>,
    dt: f32,
    decay: f32,
    max: f32,
) {
    let flow = Flow::new(g, u, v);
    let field = Sampler::new(src, g.w, g.h);
    let k = dt * g.h as f32;
    out[..g.w * g.h]
        .par_chunks_mut(g.w)
        .with_min_len(crate::kernels::band::min_rows(g.w))
        .enumerate()
        .for_each(|(j, row)| {
            let urow = &u[j * (g.w + 1)..(j + 1) * (g.w + 1)];
            let vb = &v[j * g.w..(j + 1) * g.w];
            let vt = &v[(j + 1) * g.w..(j + 2) * g.w];
            #[allow(unused_mut)]
            let mut start = 0;
            #[cfg(target_arch = "x86_64")]
            if simd::available() && field.wide_ok() && flow.u.wide_ok() && flow.v.wide_ok() {
                // SAFETY: AVX2 and FMA were detected; the slices have the kernel's shapes.
                start = unsafe {
                    simd::advect_scalar_row(flow, field, urow, vb, vt, row, j, k, decay, max)
                };
            }
            advect_scalar_row(flow, field, urow, vb, vt, row, j, k, decay, max, start);
        });
    if let Some(solids) = solids {
        scalar_near_solids(g, u, v, src, out, solids, dt, decay, max);
    }
}

/// Cells near solids traced again per parallel task.
const NEAR_CHUNK: usize = 256;

kernel! {
/// [`scalar_among_fluid`] for each of `cells` into `out` (a kernel, so that its multiply-adds
/// are FMA instructions rather than calls to libm's `fmaf`).
#[allow(clippy::too_many_arguments)]
fn scalars_among_fluid(
    g: Grid,
    flow: Flow,
    field: Sampler,
    solid: &[bool],
    cells: &[u32],
    k: f32,
    decay: f32,
    max: f32,
    out: &mut [f32],
) {
    for (o, &c) in out.iter_mut().zip(cells) {
        *o = scalar_among_fluid(g, &flow, &field, solid, c as usize, k, decay, max);
    }
}
}

/// The solids' part of [`advect_scalar`], after its plain pass wrote `out`: the cells
/// `solids.1` next to solids (`solids.0` flags the solid cells) traced again among fluid
/// cells, and the solid cells set to 0.
#[allow(clippy::too_many_arguments)]
pub fn scalar_near_solids(
    g: Grid,
    u: &[f32],
    v: &[f32],
    src: &[f32],
    out: &mut [f32],
    (solid, cells): (&[bool], &[u32]),
    dt: f32,
    decay: f32,
    max: f32,
) {
    let flow = Flow::new(g, u, v);
    let field = Sampler::new(src, g.w, g.h);
    let k = dt * g.h as f32;
    assert!(solid.len() >= g.w * g.h);
    let mut values = vec![0.0f32; cells.len()];
    values
        .par_chunks_mut(NEAR_CHUNK)
        .zip(cells.par_chunks(NEAR_CHUNK))
        .for_each(|(out, cells)| {
            scalars_among_fluid(g, flow, field, solid, cells, k, decay, max, out);
        });
    for (&c, value) in cells.iter().zip(values) {
        out[c as usize] = value;
    }
    super::obstacles::clear_solid_cells(solid, out);
}

/// What [`dye_among_fluid`] reads.
#[derive(Clone, Copy)]
struct NearDye<'a> {
    g: Grid,
    scale: usize,
    flow: Flow<'a>,
    dye: Sampler<'a>,
    dye_in: [&'a [f32]; 3],
    solid: &'a [bool],
    /// The temperature traced along (dye at the simulation's resolution only), its decay and
    /// limit.
    heat: Option<(&'a [f32], f32, f32)>,
}

/// The temperature that [`advect_dye_near_solids`] traces along with the dye when both share
/// the grid (dye scale 1): its field before the step, the plain pass's result to mend, and
/// [`scalar_among_fluid`]'s decay and limit. The solid cells' temperature is left to the
/// caller (`Obstacles::clear_solid_cells`).
pub struct NearHeat<'a> {
    pub src: &'a [f32],
    pub out: &'a mut [f32],
    pub decay: f32,
    pub max: f32,
}

kernel! {
/// The dye of each of `cells` (next to solids) traced again among fluid corners into `out`
/// (see [`advect_dye_near_solids`]; a kernel, so that its multiply-adds are FMA instructions
/// rather than calls to libm's `fmaf`).
fn dye_among_fluid(
    near: NearDye,
    cells: &[u32],
    k: f32,
    decay: f32,
    max: f32,
    out: &mut [[f32; 4]],
) {
    let NearDye { g, scale, flow, dye, dye_in, solid, heat } = near;
    let dw = g.w * scale;
    let heat_in = heat.map_or(dye_in[0], |h| h.0);
    for (o, &c) in out.iter_mut().zip(cells) {
        let (i, j) = (c as usize % dw, c as usize / dw);
        // The plain pass's trace (advect_dye_row_1 / advect_dye_row).
        let (bx, by) = if scale == 1 {
            flow.depart_centre(i, j, k)
        } else {
            flow.depart_fine(scale, i, j, k)
        };
        let t = dye.taps(bx, by);
        let mut sum = [0.0f32; 4];
        let mut weight = 0.0f32;
        let mut all_fluid = true;
        for (ck, cw) in dye.corners(t) {
            if !solid[ck] {
                weight += cw;
                for p in 0..3 {
                    sum[p] = cw.mul_add(dye_in[p][ck], sum[p]);
                }
                sum[3] = cw.mul_add(heat_in[ck], sum[3]);
            } else {
                all_fluid = false;
            }
        }
        let c = c as usize;
        let dyes: [f32; 3] = if weight > 1e-6 {
            std::array::from_fn(|p| (sum[p] / weight * decay).max(0.0).min(max))
        } else {
            std::array::from_fn(|p| (dye_in[p][c] * decay).max(0.0).min(max))
        };
        // The temperature as `scalar_among_fluid` takes it, bit for bit: the plain bilinear
        // sample among fluid corners only.
        let t_out = heat.map_or(0.0, |(_, heat_decay, heat_max)| {
            let plain = || dye.gather(heat_in, t);
            let own = heat_in[c];
            among_fluid(all_fluid, plain, (sum[3], weight), own, heat_decay, heat_max)
        });
        *o = [dyes[0], dyes[1], dyes[2], t_out];
    }
}
}

/// Dye cells next to obstacles, advected again so that no sample is taken from inside a solid.
///
/// The plain pass samples solid dye cells (which hold 0), so dye next to a wall would fade
/// into it. Here each listed cell (fluid, near a solid: see [`NearSolids`]) traces back as the
/// plain pass does and takes the bilinear mean of only the fluid corners, their weights
/// renormalised; a trace that ends among solid corners only keeps the cell's own dye.
/// `solid` flags the dye grid's cells. With `heat` and dye at the simulation's resolution,
/// the same traces mend the temperature as [`scalar_near_solids`] would (the same bits, one
/// trace instead of two); at other dye scales `heat` is ignored.
#[allow(clippy::too_many_arguments)]
pub fn advect_dye_near_solids(
    g: Grid,
    scale: usize,
    u: &[f32],
    v: &[f32],
    dye_in: [&[f32]; 3],
    dye_out: [&mut [f32]; 3],
    cells: &[u32],
    solid: &[bool],
    dt: f32,
    decay: f32,
    max: f32,
    heat: Option<NearHeat>,
) {
    let (dw, dh) = (g.w * scale, g.h * scale);
    let flow = Flow::new(g, u, v);
    let dye = Sampler::new(dye_in[0], dw, dh);
    let k = dt * g.h as f32;
    assert!(solid.len() >= dw * dh);
    let heat = heat.filter(|_| scale == 1);
    if let Some(h) = &heat {
        assert!(h.src.len() >= dw * dh && h.out.len() >= dw * dh);
    }
    let heat_in = heat.as_ref().map(|h| (h.src, h.decay, h.max));
    let mut values = vec![[0.0f32; 4]; cells.len()];
    values
        .par_chunks_mut(NEAR_CHUNK)
        .zip(cells.par_chunks(NEAR_CHUNK))
        .for_each(|(out, cells)| {
            let near = NearDye {
                g,
                scale,
                flow,
                dye,
                dye_in,
                solid,
                heat: heat_in,
            };
            dye_among_fluid(near, cells, k, decay, max, out);
        });
    let [r, gr, b] = dye_out;
    for (&c, &[vr, vg, vb, _]) in cells.iter().zip(&values) {
        let c = c as usize;
        (r[c], gr[c], b[c]) = (vr, vg, vb);
    }
    if let Some(h) = heat {
        for (&c, &[_, _, _, t]) in cells.iter().zip(&values) {
            h.out[c as usize] = t;
        }
    }
}

#[cfg(test)]
mod tests;
