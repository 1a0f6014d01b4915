//! AVX2 + FMA versions of the advection rows: eight samples at a time, their corners fetched
//! with loads and lane permutes where they lie close together, with gathers elsewhere.
//!
//! Every operation mirrors the scalar kernel's, in the same order (a multiply then a subtract
//! where the scalar code has `a - k * v`, a fused multiply-add where it has `mul_add`, the same
//! clamps), so both paths give bit-identical results and a test compares them exactly. Each
//! function returns the first column it did not handle; the scalar kernel finishes the row.
//!
//! Why this file is long: each AVX2 kernel mirrors a scalar kernel of `advect.rs` operation for
//! operation, and about 220 of the lines are the tests that compare the two bit for bit.

use super::{Flow, Sampler};
use crate::sim::MAX_SPEED;
use std::arch::x86_64::*;

/// Tests set this to compare the vector paths with the scalar ones. The two are
/// bit-identical, so flipping it never changes a result, only the speed.
#[cfg(test)]
pub static FORCE_SCALAR: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether the CPU has AVX2 and FMA (cached by std after the first call).
#[inline]
pub fn available() -> bool {
    #[cfg(test)]
    if FORCE_SCALAR.load(std::sync::atomic::Ordering::Relaxed) {
        return false;
    }
    is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
}

/// A sampler's constants in vector registers.
#[derive(Clone, Copy)]
struct Wide<'a> {
    f: &'a [f32],
    nx: __m256i,
    xmax: __m256,
    ymax: __m256,
    ilast: __m256i,
    jlast: __m256i,
    row: i32,
}

impl<'a> Wide<'a> {
    /// # Safety
    /// AVX2 must be available; the sampler must be at least 2 x 2 (`wide_ok`).
    #[inline(always)]
    unsafe fn new(s: &Sampler<'a>) -> Self {
        // SAFETY: AVX2 is available (this function's contract); the intrinsics only build
        // registers.
        unsafe {
            Self {
                f: s.f,
                nx: _mm256_set1_epi32(s.nx as i32),
                xmax: _mm256_set1_ps(s.xmax),
                ymax: _mm256_set1_ps(s.ymax),
                ilast: _mm256_set1_epi32(s.ilast),
                jlast: _mm256_set1_epi32(s.jlast),
                row: s.nx as i32,
            }
        }
    }

    /// Corner indices and weights of eight samples, as `Sampler::taps`.
    #[inline(always)]
    unsafe fn taps(&self, x: __m256, y: __m256) -> Taps8 {
        // SAFETY: AVX2 is available (contract); arithmetic on registers only, no memory access.
        unsafe {
            let zero = _mm256_setzero_ps();
            let x = _mm256_min_ps(_mm256_max_ps(x, zero), self.xmax);
            let y = _mm256_min_ps(_mm256_max_ps(y, zero), self.ymax);
            let i0 = _mm256_min_epi32(_mm256_cvttps_epi32(x), self.ilast);
            let j0 = _mm256_min_epi32(_mm256_cvttps_epi32(y), self.jlast);
            let fx = _mm256_sub_ps(x, _mm256_cvtepi32_ps(i0));
            let fy = _mm256_sub_ps(y, _mm256_cvtepi32_ps(j0));
            let k = _mm256_add_epi32(_mm256_mullo_epi32(j0, self.nx), i0);
            Taps8 { k, fx, fy }
        }
    }

    /// Bilinear interpolation of `f` (a field of this shape) at the taps, as
    /// `Sampler::gather`, the corners from [`Wide::gather_pairs`]. (A "row window" path over
    /// 16 columns, tried on an earlier dev machine's Xeon, was no faster there and was
    /// dropped; on the Zen 4 VM of 2026-11-27, whose gathers are slower, the 8-float window of
    /// `gather_pairs` took the 512² step from 3.3-3.8 to 2.5 ms.)
    #[inline(always)]
    unsafe fn gather(&self, f: &[f32], t: &Taps8) -> __m256 {
        // SAFETY: AVX2 and FMA are available (contract); `gather_pairs` reads only inside `f`
        // (below).
        unsafe {
            let (a, b, c, d) = self.gather_pairs(f, t.k);
            let bottom = _mm256_fmadd_ps(t.fx, _mm256_sub_ps(b, a), a);
            let top = _mm256_fmadd_ps(t.fx, _mm256_sub_ps(d, c), c);
            _mm256_fmadd_ps(t.fy, _mm256_sub_ps(top, bottom), bottom)
        }
    }

    /// The four corners `f[k]`, `f[k + 1]`, `f[k + row]`, `f[k + row + 1]` of eight samples.
    ///
    /// When every lane's corner lies in the eight floats from lane 0's (as when eight
    /// neighbouring cells depart from neighbouring places), four plain loads and lane permutes
    /// fetch them; otherwise each horizontal pair is gathered as one 64-bit element. Both read
    /// the same floats, so the result is the same either way. Gathers are slow on some CPUs
    /// (on the Zen 4 dev VM a dye grid twice the simulation's resolution spent 58 % of its
    /// step in its gathering advection, 2026-11-27). Over the bench's scene the window serves
    /// 96 % of the samples at 256² with dye at twice the resolution and 93.5 % at 512²; one
    /// of 16 floats would serve 1 % more (counted with a throwaway probe, 2026-11-27).
    #[inline(always)]
    unsafe fn gather_pairs(&self, f: &[f32], k: __m256i) -> (__m256, __m256, __m256, __m256) {
        // SAFETY: AVX2 is available (contract). The window path reads `f[k0..k0 + row + 9]`,
        // checked against `f.len()` first (`k0 >= 0`: `taps` clamps every corner into the
        // field), and picks lanes `k - k0` in 0..=7 of each 8-float load.
        unsafe {
            let k0 = _mm256_cvtsi256_si32(k);
            let d = _mm256_sub_epi32(k, _mm256_set1_epi32(k0));
            let seven = _mm256_set1_epi32(7);
            let inside = _mm256_cmpeq_epi32(_mm256_max_epu32(d, seven), seven);
            if _mm256_movemask_epi8(inside) == -1 && (k0 + self.row + 9) as usize <= f.len() {
                let at = |o: i32| _mm256_loadu_ps(f.as_ptr().add((k0 + o) as usize));
                let pick = |v: __m256| _mm256_permutevar8x32_ps(v, d);
                return (
                    pick(at(0)),
                    pick(at(1)),
                    pick(at(self.row)),
                    pick(at(self.row + 1)),
                );
            }
        }
        // SAFETY: AVX2 is available (contract). `k` comes from `taps`, which clamps each sample
        // to the field (NaN to 0) and its corner to at most (ilast, jlast) = (nx - 2, ny - 2),
        // so both 64-bit reads, at `k` and `k + row`, cover floats `k..=k + 1` and `k + nx..=k
        // + nx + 1`, all inside `f` (`nx * ny` floats, the sampler's shape, at least 2 x 2).
        unsafe {
            let p = f.as_ptr() as *const i64;
            let (klo, khi) = (_mm256_castsi256_si128(k), _mm256_extracti128_si256::<1>(k));
            // Offsets are in floats; the 64-bit gather scales them by 4 bytes.
            let row = _mm_set1_epi32(self.row);
            let pairs = |idx: __m128i| _mm256_castsi256_ps(_mm256_i32gather_epi64::<4>(p, idx));
            let (b0, b1) = (pairs(klo), pairs(khi));
            let (t0, t1) = (
                pairs(_mm_add_epi32(klo, row)),
                pairs(_mm_add_epi32(khi, row)),
            );
            // [a0 b0 a1 b1 | a2 b2 a3 b3] and [a4 b4 a5 b5 | a6 b6 a7 b7] -> a and b in order.
            let split = |x: __m256, y: __m256| {
                let a = _mm256_shuffle_ps::<0b10_00_10_00>(x, y); // a0 a1 a4 a5 | a2 a3 a6 a7
                let b = _mm256_shuffle_ps::<0b11_01_11_01>(x, y);
                let fix = |v: __m256| {
                    _mm256_castpd_ps(_mm256_permute4x64_pd::<0b11_01_10_00>(_mm256_castps_pd(v)))
                };
                (fix(a), fix(b))
            };
            let (a, b) = split(b0, b1);
            let (c, d) = split(t0, t1);
            (a, b, c, d)
        }
    }

    #[inline(always)]
    unsafe fn at(&self, x: __m256, y: __m256) -> __m256 {
        // SAFETY: AVX2 and FMA are available (contract); `self.f` has the sampler's shape, as
        // `gather` needs.
        unsafe {
            let t = self.taps(x, y);
            self.gather(self.f, &t)
        }
    }
}

/// Eight samples' corner indices and weights.
struct Taps8 {
    k: __m256i,
    fx: __m256,
    fy: __m256,
}

/// `Flow` in vector registers.
#[derive(Clone, Copy)]
struct WideFlow<'a> {
    u: Wide<'a>,
    v: Wide<'a>,
    half: __m256,
}

impl<'a> WideFlow<'a> {
    #[inline(always)]
    unsafe fn new(f: &Flow<'a>) -> Self {
        // SAFETY: AVX2 is available (contract); the samplers are `wide_ok` (contract), as
        // `Wide::new` needs.
        unsafe {
            Self {
                u: Wide::new(&f.u),
                v: Wide::new(&f.v),
                half: _mm256_set1_ps(0.5),
            }
        }
    }

    /// As `Flow::depart`: `x - k * v(x - (k / 2) * v0)`.
    #[inline(always)]
    unsafe fn depart(
        &self,
        x: __m256,
        y: __m256,
        vx: __m256,
        vy: __m256,
        k: __m256,
    ) -> (__m256, __m256) {
        // SAFETY: AVX2 and FMA are available (contract); arithmetic and in-bounds gathers only
        // (`Wide::at`).
        unsafe {
            let h = _mm256_mul_ps(self.half, k);
            let mx = _mm256_sub_ps(x, _mm256_mul_ps(h, vx));
            let my = _mm256_sub_ps(y, _mm256_mul_ps(h, vy));
            let ux = self.u.at(_mm256_add_ps(mx, self.half), my);
            let uy = self.v.at(mx, _mm256_add_ps(my, self.half));
            (
                _mm256_sub_ps(x, _mm256_mul_ps(k, ux)),
                _mm256_sub_ps(y, _mm256_mul_ps(k, uy)),
            )
        }
    }
}

impl WideFlow<'_> {
    /// The departure points of the eight cell centres `i..i + 8` of row `y` (cells of the
    /// simulation's resolution): their velocity is the mean of their opposite faces (`urow`
    /// the row's u faces, `vb` and `vt` the v faces below and above), traced as `depart`.
    ///
    /// # Safety
    /// AVX2 and FMA must be available; `urow` must hold `i + 9` values, `vb` and `vt` `i + 8`.
    #[inline(always)]
    unsafe fn depart_centres(
        &self,
        urow: &[f32],
        vb: &[f32],
        vt: &[f32],
        i: usize,
        y: __m256,
        k: __m256,
    ) -> (__m256, __m256) {
        debug_assert!(urow.len() > i + 8 && vb.len() >= i + 8 && vt.len() >= i + 8);
        // SAFETY: AVX2 and FMA are available and the rows hold the values read (contract);
        // `depart` gathers inside its samplers.
        unsafe {
            let vx = _mm256_mul_ps(
                self.half,
                _mm256_add_ps(
                    _mm256_loadu_ps(urow.as_ptr().add(i)),
                    _mm256_loadu_ps(urow.as_ptr().add(i + 1)),
                ),
            );
            let vy = _mm256_mul_ps(
                self.half,
                _mm256_add_ps(
                    _mm256_loadu_ps(vb.as_ptr().add(i)),
                    _mm256_loadu_ps(vt.as_ptr().add(i)),
                ),
            );
            self.depart(iota(i), y, vx, vy, k)
        }
    }
}

/// `[base, base + 1, ..., base + 7]` as floats.
#[inline(always)]
unsafe fn iota(base: usize) -> __m256 {
    // SAFETY: AVX2 is available (contract); registers only.
    unsafe {
        _mm256_add_ps(
            _mm256_set1_ps(base as f32),
            _mm256_setr_ps(0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0),
        )
    }
}

/// Eight `u` faces at a time from column 1; see the scalar `advect_u_row`.
///
/// # Safety
/// The CPU must support AVX2 and FMA; both flow samplers must be `wide_ok`; the slices must
/// have the scalar kernel's shapes.
#[target_feature(enable = "avx2,fma")]
#[allow(clippy::too_many_arguments)]
pub unsafe fn advect_u_row(
    flow: Flow,
    urow: &[f32],
    vb: &[f32],
    vt: &[f32],
    out: &mut [f32],
    j: usize,
    k: f32,
    decay: f32,
) -> usize {
    let w = out.len() - 1;
    assert!(urow.len() > w && vb.len() >= w && vt.len() >= w);
    // SAFETY: AVX2 is enabled on this function; the flow samplers are `wide_ok` (caller's
    // contract).
    let wf = unsafe { WideFlow::new(&flow) };
    let (kv, dv, y) = (
        _mm256_set1_ps(k),
        _mm256_set1_ps(decay),
        _mm256_set1_ps(j as f32),
    );
    let quarter = _mm256_set1_ps(0.25);
    let (lo, hi) = (_mm256_set1_ps(-MAX_SPEED), _mm256_set1_ps(MAX_SPEED));
    let mut i = 1;
    while i + 8 <= w {
        // SAFETY: Loads and stores of 8 floats at `i..i + 8` (and `i - 1..i + 7`) with `1 <= i`
        // and `i + 8 <= w`: inside `urow` (len > w), `vb` and `vt` (len >= w) and `out` (len w
        // + 1), as asserted above.
        unsafe {
            let vx = _mm256_loadu_ps(urow.as_ptr().add(i));
            let sb = _mm256_add_ps(
                _mm256_loadu_ps(vb.as_ptr().add(i - 1)),
                _mm256_loadu_ps(vb.as_ptr().add(i)),
            );
            let st = _mm256_add_ps(
                _mm256_loadu_ps(vt.as_ptr().add(i - 1)),
                _mm256_loadu_ps(vt.as_ptr().add(i)),
            );
            let vy = _mm256_mul_ps(quarter, _mm256_add_ps(sb, st));
            let bx = _mm256_sub_ps(iota(i), _mm256_mul_ps(kv, vx));
            let by = _mm256_sub_ps(y, _mm256_mul_ps(kv, vy));
            let value = _mm256_mul_ps(wf.u.at(bx, by), dv);
            _mm256_storeu_ps(
                out.as_mut_ptr().add(i),
                _mm256_min_ps(_mm256_max_ps(value, lo), hi),
            );
        }
        i += 8;
    }
    i
}

/// Eight `v` faces at a time from column 0; see the scalar `advect_v_row`.
///
/// # Safety
/// As [`advect_u_row`].
#[target_feature(enable = "avx2,fma")]
#[allow(clippy::too_many_arguments)]
pub unsafe fn advect_v_row(
    flow: Flow,
    vrow: &[f32],
    ub: &[f32],
    ut: &[f32],
    out: &mut [f32],
    j: usize,
    k: f32,
    decay: f32,
) -> usize {
    let w = out.len();
    assert!(vrow.len() >= w && ub.len() > w && ut.len() > w);
    // SAFETY: AVX2 is enabled on this function; the flow samplers are `wide_ok` (caller's
    // contract).
    let wf = unsafe { WideFlow::new(&flow) };
    let (kv, dv) = (_mm256_set1_ps(k), _mm256_set1_ps(decay));
    let y = _mm256_set1_ps(j as f32);
    let quarter = _mm256_set1_ps(0.25);
    let (lo, hi) = (_mm256_set1_ps(-MAX_SPEED), _mm256_set1_ps(MAX_SPEED));
    let mut i = 0;
    while i + 8 <= w {
        // SAFETY: Loads and stores of 8 floats at `i..i + 8` (and `i + 1..i + 9` of `ub`, `ut`)
        // with `i + 8 <= w`: inside `vrow` and `out` (len >= w) and `ub`, `ut` (len > w), as
        // asserted above.
        unsafe {
            let sb = _mm256_add_ps(
                _mm256_loadu_ps(ub.as_ptr().add(i)),
                _mm256_loadu_ps(ub.as_ptr().add(i + 1)),
            );
            let st = _mm256_add_ps(
                _mm256_loadu_ps(ut.as_ptr().add(i)),
                _mm256_loadu_ps(ut.as_ptr().add(i + 1)),
            );
            let vx = _mm256_mul_ps(quarter, _mm256_add_ps(sb, st));
            let vy = _mm256_loadu_ps(vrow.as_ptr().add(i));
            let bx = _mm256_sub_ps(iota(i), _mm256_mul_ps(kv, vx));
            let by = _mm256_sub_ps(y, _mm256_mul_ps(kv, vy));
            let value = _mm256_mul_ps(wf.v.at(bx, by), dv);
            _mm256_storeu_ps(
                out.as_mut_ptr().add(i),
                _mm256_min_ps(_mm256_max_ps(value, lo), hi),
            );
        }
        i += 8;
    }
    i
}

/// Eight dye cells at a time, dye at the simulation's resolution; see `advect_dye_row_1`.
///
/// # Safety
/// As [`advect_u_row`], and the dye sampler must be `wide_ok` with `planes` of its shape.
#[target_feature(enable = "avx2,fma")]
#[allow(clippy::too_many_arguments)]
pub unsafe fn advect_dye_row_1(
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
    carried: Option<(&[f32], &mut [f32], f32, f32)>,
) -> usize {
    let [or, og, ob] = out;
    let w = or.len();
    assert!(og.len() == w && ob.len() == w && urow.len() > w && vb.len() >= w && vt.len() >= w);
    // The carried field: a plane of the dye's shape (its gathers stay inside it) and a row.
    let mut carried = carried.map(|(plane, row, decay, max)| {
        let cells = dye.nx * (dye.ymax as usize + 1);
        assert!(plane.len() >= cells && row.len() == w);
        (
            plane,
            row,
            _mm256_set1_ps(decay),
            _mm256_set1_ps(-max),
            _mm256_set1_ps(max),
        )
    });
    // SAFETY: AVX2 is enabled on this function; the flow samplers are `wide_ok` (caller's
    // contract).
    let wf = unsafe { WideFlow::new(&flow) };
    // SAFETY: AVX2 is enabled on this function; the dye sampler is `wide_ok` (caller's
    // contract).
    let wd = unsafe { Wide::new(&dye) };
    let (kv, dv, y) = (
        _mm256_set1_ps(k),
        _mm256_set1_ps(decay),
        _mm256_set1_ps(j as f32),
    );
    let (zero, top) = (_mm256_setzero_ps(), _mm256_set1_ps(max));
    let mut i = 0;
    while i + 8 <= w {
        // SAFETY: Loads and stores of 8 floats at `i..i + 9` with `i + 8 <= w`: inside the
        // output rows (len w) and `urow` (len > w), `vb`, `vt` (len >= w), as asserted above;
        // gathers stay inside their samplers (`Wide::at`).
        unsafe {
            let (bx, by) = wf.depart_centres(urow, vb, vt, i, y, kv);
            let t = wd.taps(bx, by);
            for (plane, o) in [
                (planes[0], &mut *or),
                (planes[1], &mut *og),
                (planes[2], &mut *ob),
            ] {
                let value = _mm256_mul_ps(wd.gather(plane, &t), dv);
                _mm256_storeu_ps(
                    o.as_mut_ptr().add(i),
                    _mm256_min_ps(_mm256_max_ps(value, zero), top),
                );
            }
            if let Some((plane, row, decay, low, high)) = carried.as_mut() {
                let value = _mm256_mul_ps(wd.gather(plane, &t), *decay);
                _mm256_storeu_ps(
                    row.as_mut_ptr().add(i),
                    _mm256_min_ps(_mm256_max_ps(value, *low), *high),
                );
            }
        }
        i += 8;
    }
    i
}

/// Eight cells at a time of a scalar field at the simulation's resolution (the temperature,
/// no solids), limited to +-`max`; see the scalar `advect_scalar_row`.
///
/// # Safety
/// As [`advect_u_row`], and the field's sampler must be `wide_ok`.
#[target_feature(enable = "avx2,fma")]
#[allow(clippy::too_many_arguments)]
pub unsafe fn advect_scalar_row(
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
) -> usize {
    let w = out.len();
    assert!(urow.len() > w && vb.len() >= w && vt.len() >= w);
    // SAFETY: AVX2 is enabled on this function; the samplers are `wide_ok` (caller's
    // contract).
    let (wf, wt) = unsafe { (WideFlow::new(&flow), Wide::new(&field)) };
    let (kv, dv, y) = (
        _mm256_set1_ps(k),
        _mm256_set1_ps(decay),
        _mm256_set1_ps(j as f32),
    );
    let (bottom, top) = (_mm256_set1_ps(-max), _mm256_set1_ps(max));
    let mut i = 0;
    while i + 8 <= w {
        // SAFETY: Loads and stores of 8 floats at `i..i + 9` with `i + 8 <= w`: inside `out`
        // (len w), `urow` (len > w), `vb` and `vt` (len >= w), as asserted above; gathers stay
        // inside their samplers (`Wide::at`).
        unsafe {
            let (bx, by) = wf.depart_centres(urow, vb, vt, i, y, kv);
            let t = wt.taps(bx, by);
            let value = _mm256_mul_ps(wt.gather(field.f, &t), dv);
            _mm256_storeu_ps(
                out.as_mut_ptr().add(i),
                _mm256_min_ps(_mm256_max_ps(value, bottom), top),
            );
        }
        i += 8;
    }
    i
}

/// Eight cells at a time of a dye grid `scale` times finer; see the scalar `advect_dye_row`.
///
/// # Safety
/// As [`advect_dye_row_1`].
#[target_feature(enable = "avx2,fma")]
#[allow(clippy::too_many_arguments)]
pub unsafe fn advect_dye_row(
    flow: Flow,
    scale: usize,
    dye: Sampler,
    planes: [&[f32]; 3],
    out: [&mut [f32]; 3],
    j: usize,
    k: f32,
    decay: f32,
    max: f32,
) -> usize {
    let [or, og, ob] = out;
    let w = or.len();
    assert!(og.len() == w && ob.len() == w);
    // SAFETY: AVX2 is enabled on this function; the flow samplers are `wide_ok` (caller's
    // contract).
    let wf = unsafe { WideFlow::new(&flow) };
    // SAFETY: AVX2 is enabled on this function; the dye sampler is `wide_ok` (caller's
    // contract).
    let wd = unsafe { Wide::new(&dye) };
    let inv_s = _mm256_set1_ps(1.0 / scale as f32);
    let s = _mm256_set1_ps(scale as f32);
    let (kv, dv) = (_mm256_set1_ps(k), _mm256_set1_ps(decay));
    let (zero, top, half) = (_mm256_setzero_ps(), _mm256_set1_ps(max), wf.half);
    let minus_half = _mm256_set1_ps(-0.5);
    let y = _mm256_set1_ps((j as f32 + 0.5).mul_add(1.0 / scale as f32, -0.5));
    let mut i = 0;
    while i + 8 <= w {
        // SAFETY: Loads and stores inside the rows whose lengths are asserted above (the loop
        // keeps `i + 8 <= w`); gathers stay inside their samplers (`Wide::at`).
        unsafe {
            let x = _mm256_fmadd_ps(_mm256_add_ps(iota(i), half), inv_s, minus_half);
            let vx = wf.u.at(_mm256_add_ps(x, half), y);
            let vy = wf.v.at(x, _mm256_add_ps(y, half));
            let (bx, by) = wf.depart(x, y, vx, vy, kv);
            let tx = _mm256_fmadd_ps(_mm256_add_ps(bx, half), s, minus_half);
            let ty = _mm256_fmadd_ps(_mm256_add_ps(by, half), s, minus_half);
            let t = wd.taps(tx, ty);
            for (plane, o) in [
                (planes[0], &mut *or),
                (planes[1], &mut *og),
                (planes[2], &mut *ob),
            ] {
                let value = _mm256_mul_ps(wd.gather(plane, &t), dv);
                _mm256_storeu_ps(
                    o.as_mut_ptr().add(i),
                    _mm256_min_ps(_mm256_max_ps(value, zero), top),
                );
            }
        }
        i += 8;
    }
    i
}

/// The midpoint moves of eight particles at canvas positions `x`, `y` (in place): `p + dt
/// v(p + dt/2 v(p))`, the velocity sampled as `Flow::at(p n - 0.5)` with `n` cells per canvas
/// height: `cpu::particles`'s move, before the bounce, bit for bit.
///
/// # Safety
/// The CPU must support AVX2 and FMA; both flow samplers must be `wide_ok`.
#[target_feature(enable = "avx2,fma")]
pub unsafe fn particle_moves(flow: &Flow, n: f32, dt: f32, x: &mut [f32; 8], y: &mut [f32; 8]) {
    // SAFETY: AVX2 and FMA are available and the samplers are `wide_ok` (contract); the loads
    // and stores are of eight floats from and to eight-float arrays; `Wide::at` gathers inside
    // its field.
    unsafe {
        let wf = WideFlow::new(flow);
        let (nv, half) = (_mm256_set1_ps(n), wf.half);
        let (hdt, dtv) = (_mm256_set1_ps(0.5 * dt), _mm256_set1_ps(dt));
        let (px, py) = (_mm256_loadu_ps(x.as_ptr()), _mm256_loadu_ps(y.as_ptr()));
        // The velocity at p: centre space p n - 0.5, u half a cell right, v half a cell up.
        let cx = _mm256_sub_ps(_mm256_mul_ps(px, nv), half);
        let cy = _mm256_sub_ps(_mm256_mul_ps(py, nv), half);
        let vx = wf.u.at(_mm256_add_ps(cx, half), cy);
        let vy = wf.v.at(cx, _mm256_add_ps(cy, half));
        let mx = _mm256_add_ps(px, _mm256_mul_ps(hdt, vx));
        let my = _mm256_add_ps(py, _mm256_mul_ps(hdt, vy));
        let cx = _mm256_sub_ps(_mm256_mul_ps(mx, nv), half);
        let cy = _mm256_sub_ps(_mm256_mul_ps(my, nv), half);
        let wx = wf.u.at(_mm256_add_ps(cx, half), cy);
        let wy = wf.v.at(cx, _mm256_add_ps(cy, half));
        _mm256_storeu_ps(x.as_mut_ptr(), _mm256_fmadd_ps(dtv, wx, px));
        _mm256_storeu_ps(y.as_mut_ptr(), _mm256_fmadd_ps(dtv, wy, py));
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Grid, advect_dye, advect_velocity};

    fn field(n: usize, seed: u32) -> Vec<f32> {
        (0..n)
            .map(|i| {
                let x = (i as u32).wrapping_mul(2_654_435_761).wrapping_add(seed);
                (x >> 8) as f32 / (1u32 << 24) as f32 - 0.5
            })
            .collect()
    }

    /// Both ways of fetching eight samples' corners give `f[k]`, `f[k + 1]`, `f[k + row]` and
    /// `f[k + row + 1]`: the window (every corner within seven floats after lane 0's), and the
    /// gathers (a lane before lane 0's, a span of eight, the field's last row, where the
    /// window's loads would pass its end).
    #[test]
    fn corners_by_window_and_by_gathers_agree() {
        if !super::available() {
            return;
        }
        let (nx, ny) = (23usize, 9usize);
        let f = field(nx * ny, 11);
        let s = super::super::Sampler::new(&f, nx, ny);
        let last = (nx * (ny - 2) + nx - 2) as i32;
        // The window: the first two and the fourth from the end; the gathers: the rest (the
        // last: the window's loads would end 4 floats past the field).
        let cases: [[i32; 8]; 7] = [
            [30, 31, 31, 32, 33, 34, 36, 37],
            [30, 30, 30, 30, 30, 30, 30, 30],
            [40, 39, 41, 42, 43, 44, 45, 46],
            [30, 31, 32, 33, 34, 35, 36, 38],
            [50, 44, 3, 160, 51, 52, 53, 54],
            [
                last - 7,
                last - 6,
                last - 5,
                last - 4,
                last - 3,
                last - 2,
                last - 1,
                last,
            ],
            [last - 3, last - 2, last - 1, last, last, last, last, last],
        ];
        for k in cases {
            // SAFETY: AVX2 is available (checked above); every index is a valid corner.
            let got = unsafe {
                let w = super::Wide::new(&s);
                let idx = std::arch::x86_64::_mm256_loadu_si256(k.as_ptr().cast());
                let (a, b, c, d) = w.gather_pairs(&f, idx);
                let out = |v| {
                    let mut o = [0.0f32; 8];
                    std::arch::x86_64::_mm256_storeu_ps(o.as_mut_ptr(), v);
                    o
                };
                [out(a), out(b), out(c), out(d)]
            };
            for (lane, &k) in k.iter().enumerate() {
                let k = k as usize;
                let want = [f[k], f[k + 1], f[k + nx], f[k + nx + 1]];
                for (corner, w) in want.iter().enumerate() {
                    assert_eq!(
                        got[corner][lane].to_bits(),
                        w.to_bits(),
                        "{k:?} lane {lane}"
                    );
                }
            }
        }
    }

    /// The particles' vector move gives exactly the scalar rule's positions, for points all
    /// over the canvas, off it and NaN.
    #[test]
    fn particle_moves_match_scalar_bit_for_bit() {
        if !super::available() {
            return;
        }
        let g = Grid { w: 37, h: 21 };
        let u: Vec<f32> = field((g.w + 1) * g.h, 1).iter().map(|x| x * 3.0).collect();
        let v: Vec<f32> = field(g.w * (g.h + 1), 2).iter().map(|x| x * 3.0).collect();
        let flow = super::super::Flow::new(g, &u, &v);
        let (n, dt) = (g.h as f32, 0.05f32);
        let aspect = g.w as f32 / n;
        let mut points: Vec<[f32; 2]> = (0..200)
            .map(|k| {
                let r = field(2, k as u32 + 10);
                [
                    (r[0] + 0.5) * (aspect + 0.2) - 0.1,
                    (r[1] + 0.5) * 1.2 - 0.1,
                ]
            })
            .collect();
        points[7] = [f32::NAN, 0.5];
        points[8] = [0.0, 1.0];
        for block in points.chunks_exact(8) {
            let mut x: [f32; 8] = std::array::from_fn(|k| block[k][0]);
            let mut y: [f32; 8] = std::array::from_fn(|k| block[k][1]);
            // SAFETY: AVX2 and FMA are available (checked above); the grid is 37 x 21.
            unsafe { super::particle_moves(&flow, n, dt, &mut x, &mut y) };
            for (k, p) in block.iter().enumerate() {
                let vel = |p: [f32; 2]| flow.at(p[0] * n - 0.5, p[1] * n - 0.5);
                let half = 0.5 * dt;
                let (vx, vy) = vel(*p);
                let (mx, my) = vel([p[0] + half * vx, p[1] + half * vy]);
                let want = [dt.mul_add(mx, p[0]), dt.mul_add(my, p[1])];
                assert_eq!(
                    [x[k].to_bits(), y[k].to_bits()],
                    want.map(f32::to_bits),
                    "{p:?}"
                );
            }
        }
    }

    /// The vector paths must give exactly the scalar results: run the public passes with and
    /// without them and compare bits.
    #[test]
    fn simd_matches_scalar_bit_for_bit() {
        if !super::available() {
            eprintln!("no AVX2+FMA here: nothing to compare");
            return;
        }
        let g = Grid { w: 37, h: 21 };
        let u: Vec<f32> = field((g.w + 1) * g.h, 1).iter().map(|x| x * 3.0).collect();
        let v: Vec<f32> = field(g.w * (g.h + 1), 2).iter().map(|x| x * 3.0).collect();
        let dye = [
            field(g.w * g.h, 3),
            field(g.w * g.h, 4),
            field(g.w * g.h, 5),
        ];
        let bits = |x: &[f32]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        let run = |force_scalar: bool| {
            super::FORCE_SCALAR.store(force_scalar, std::sync::atomic::Ordering::Relaxed);
            let (mut uo, mut vo) = (vec![0.0; u.len()], vec![0.0; v.len()]);
            advect_velocity(g, &u, &v, &mut uo, &mut vo, 0.05, 0.99);
            let mut d = [
                vec![0.0; g.w * g.h],
                vec![0.0; g.w * g.h],
                vec![0.0; g.w * g.h],
            ];
            let [a, b, c] = &mut d;
            advect_dye(
                g,
                1,
                &u,
                &v,
                [&dye[0], &dye[1], &dye[2]],
                [a, b, c],
                0.05,
                0.98,
                10.0,
                None,
            );
            let n = g.w * g.h * 9;
            let fine = [field(n, 6), field(n, 7), field(n, 8)];
            let mut d3 = [vec![0.0; n], vec![0.0; n], vec![0.0; n]];
            let [a, b, c] = &mut d3;
            advect_dye(
                g,
                3,
                &u,
                &v,
                [&fine[0], &fine[1], &fine[2]],
                [a, b, c],
                0.05,
                0.98,
                10.0,
                None,
            );
            // The temperature: signed values, some past the limit of 4.
            let heat: Vec<f32> = field(g.w * g.h, 9).iter().map(|x| x * 12.0).collect();
            let mut t = vec![0.0; g.w * g.h];
            super::super::advect_scalar(g, &u, &v, &heat, &mut t, None, 0.05, 0.97, 4.0);
            // Carried with the dye, on the dye's traces: the same bits as on its own.
            let mut d1 = [
                vec![0.0; g.w * g.h],
                vec![0.0; g.w * g.h],
                vec![0.0; g.w * g.h],
            ];
            let mut t1 = vec![0.0; g.w * g.h];
            let carried = super::super::Carried {
                src: &heat,
                out: &mut t1,
                decay: 0.97,
                max: 4.0,
            };
            let [a, b, c] = &mut d1;
            let dye_in = [&dye[0][..], &dye[1][..], &dye[2][..]];
            advect_dye(
                g,
                1,
                &u,
                &v,
                dye_in,
                [a, b, c],
                0.05,
                0.98,
                10.0,
                Some(carried),
            );
            assert_eq!(bits(&t1), bits(&t), "carried (scalar path: {force_scalar})");
            assert_eq!(d1, d, "the dye with a field carried");
            super::FORCE_SCALAR.store(false, std::sync::atomic::Ordering::Relaxed);
            let mut all = d.to_vec();
            all.extend(d3);
            all.push(t);
            (uo, vo, all)
        };
        let (us, vs, ds) = run(true);
        let (uv, vv, dv) = run(false);
        assert_eq!(bits(&us), bits(&uv));
        assert_eq!(bits(&vs), bits(&vv));
        for c in 0..7 {
            assert_eq!(
                bits(&ds[c]),
                bits(&dv[c]),
                "dye plane {c} (6: the temperature)"
            );
        }
        assert!(ds[6].contains(&-4.0) && ds[6].contains(&4.0));
    }
}
