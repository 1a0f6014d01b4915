//! Small numeric kernels shared by the CPU passes of the models and the display. Everything
//! here is deterministic: no platform libm calls in hot paths (their last bits differ between
//! systems), and `mul_add` is exactly rounded whether the CPU has FMA or not, so results are
//! identical on every machine.

/// The brightest of three channels as `maxps` computes it, one instruction per pair where
/// `f32::max` (which passes over NaN) needs three: without NaN, the same answer; with a NaN
/// channel it may be NaN. The display's tone then takes the gain of 0
/// (`crate::fluid::filmic_ratio` maps NaN to 0) and turns the NaN channel itself into 0.
#[inline(always)]
pub fn brightest(c: [f32; 3]) -> f32 {
    let m = if c[0] > c[1] { c[0] } else { c[1] };
    if m > c[2] { m } else { c[2] }
}

/// The dimmest of three channels as `minps` computes it (see [`brightest`]).
#[inline(always)]
pub fn dimmest(c: [f32; 3]) -> f32 {
    let m = if c[0] < c[1] { c[0] } else { c[1] };
    if m < c[2] { m } else { c[2] }
}

/// `x` limited to `[lo, hi]`. Unlike `f32::clamp`, NaN maps to `lo` rather than staying NaN
/// (the same as the vector max-then-min instructions, which the SIMD kernels use), so garbage
/// never spreads through a field.
#[inline(always)]
#[allow(clippy::manual_clamp)]
pub fn limit(x: f32, lo: f32, hi: f32) -> f32 {
    x.max(lo).min(hi)
}

/// `[f(c[0]), f(c[1]), f(c[2])]`, always inlined. `[f32; 3]::map` goes through a generic
/// `try_map` that LLVM may leave outlined, compiled for the baseline target: inside a
/// multiversioned kernel every `mul_add` in `f` then becomes a libm `fmaf` call (a legacy
/// colorize at 1280x720 took 50 ms instead of 2 that way).
#[inline(always)]
pub fn map3(c: [f32; 3], f: impl Fn(f32) -> f32) -> [f32; 3] {
    [f(c[0]), f(c[1]), f(c[2])]
}

/// `[f(0), f(1), f(2)]`, always inlined (see [`map3`]).
#[inline(always)]
pub fn from_fn3(f: impl Fn(usize) -> f32) -> [f32; 3] {
    [f(0), f(1), f(2)]
}

/// An 8-bit value `p` blended towards `c` (in 8-bit units) by `a`, rounded to nearest: the
/// overlays' (obstacles, streamlines) drawing over a finished frame.
#[inline(always)]
pub fn blend8(p: u8, c: f32, a: f32) -> u8 {
    let p = f32::from(p);
    (a.mul_add(c - p, p) + 0.5).clamp(0.0, 255.0) as u8
}

/// `a + t * (b - a)`.
#[inline(always)]
pub fn lerp(a: f32, b: f32, t: f32) -> f32 {
    t.mul_add(b - a, a)
}

/// Bilinear sample of a `nx x ny` row-major grid at index coordinates `(x, y)`. Coordinates are
/// clamped to the grid, so any finite or infinite input gives a value between the grid's
/// extremes; NaN coordinates sample the origin. At the far edge the lower cell index stops one
/// short of the last and the weight reaches 1 (the GPU shaders sample the same way).
#[inline(always)]
pub fn bilerp(f: &[f32], nx: usize, ny: usize, x: f32, y: f32) -> f32 {
    let xmax = (nx - 1) as f32;
    let ymax = (ny - 1) as f32;
    // `max` before `min` maps NaN to 0.
    let x = x.max(0.0).min(xmax);
    let y = y.max(0.0).min(ymax);
    let i0 = (x as usize).min(nx.saturating_sub(2));
    let j0 = (y as usize).min(ny.saturating_sub(2));
    let i1 = (i0 + 1).min(nx - 1);
    let j1 = (j0 + 1).min(ny - 1);
    let fx = x - i0 as f32;
    let fy = y - j0 as f32;
    let r0 = j0 * nx;
    let r1 = j1 * nx;
    let bottom = lerp(f[r0 + i0], f[r0 + i1], fx);
    let top = lerp(f[r1 + i0], f[r1 + i1], fx);
    lerp(bottom, top, fy)
}

/// e^x with a relative error below 3e-7 (2.5 ulp) over [-87, 88], deterministic on every machine.
/// Inputs below -87 give 0, above 88 give 1.6e38; NaN gives 0 (so garbage never spreads).
#[inline(always)]
#[allow(clippy::manual_clamp)] // clamp would keep NaN; max-then-min maps it to -87
pub fn exp(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    // Branch-free (the result is selected at the end), so loops over it vectorise.
    let input = x;
    let x = x.max(-87.0).min(88.0);
    // Ties to even, as WGSL's round(), so the GPU shaders can match.
    let n = (x * LOG2E).round_ties_even();
    let r = n.mul_add(-LN2_LO, n.mul_add(-LN2_HI, x));
    // exp(r) on |r| <= ln2 / 2: degree-6 Taylor polynomial (truncation error < 1.2e-8).
    let p = r.mul_add(1.0 / 720.0, 1.0 / 120.0);
    let p = r.mul_add(p, 1.0 / 24.0);
    let p = r.mul_add(p, 1.0 / 6.0);
    let p = r.mul_add(p, 0.5);
    let p = r.mul_add(p, 1.0);
    let p = r.mul_add(p, 1.0);
    // Scale by 2^n through the exponent bits (n in [-126, 127] here).
    // SAFETY: x was clamped to [-87, 88] (NaN to -87), so n is an integer in [-126, 127].
    // (A plain `as` adds a NaN and range fix-up that keeps loops from vectorising.)
    let n_int = unsafe { n.to_int_unchecked::<i32>() };
    let scale = f32::from_bits(((n_int + 127) as u32) << 23);
    // NaN fails the comparison too.
    if input >= -87.0 { p * scale } else { 0.0 }
}

/// atan2(y, x) / (2 pi), in [-0.5, 0.5]: the angle as a fraction of a turn. Absolute error
/// below 1e-5 turns (0.004 degrees), deterministic. Returns 0 for (0, 0).
#[inline(always)]
pub fn atan2_turns(y: f32, x: f32) -> f32 {
    let ax = x.abs();
    let ay = y.abs();
    let (lo, hi) = if ax < ay { (ax, ay) } else { (ay, ax) };
    if hi == 0.0 || !hi.is_finite() && !lo.is_finite() {
        return 0.0;
    }
    let t = lo / hi; // in [0, 1]
    // atan(t) on [0, 1]: odd minimax polynomial of degree 11 (error < 1e-5 rad).
    let t2 = t * t;
    let p = t2.mul_add(-0.011_721_2, 0.052_653_32);
    let p = t2.mul_add(p, -0.116_432_87);
    let p = t2.mul_add(p, 0.193_543_46);
    let p = t2.mul_add(p, -0.332_623_47);
    let p = t2.mul_add(p, 0.999_977_26);
    let mut a = p * t; // radians in [0, pi/4]
    if ax < ay {
        a = std::f32::consts::FRAC_PI_2 - a;
    }
    if x < 0.0 {
        a = std::f32::consts::PI - a;
    }
    if y < 0.0 {
        a = -a;
    }
    a * (0.5 / std::f32::consts::PI)
}

/// Soft exposure: 1 - e^-x, mapping [0, inf) onto [0, 1) with slope 1 at 0.
#[inline(always)]
pub fn tonemap(x: f32) -> f32 {
    1.0 - exp(-x.max(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_matches_std_closely() {
        let mut worst = 0.0f64;
        let mut x = -87.0f32;
        while x < 88.0 {
            let want = f64::from(x).exp();
            let got = f64::from(exp(x));
            worst = worst.max(((got - want) / want).abs());
            x += 0.0137;
        }
        assert!(worst < 3e-7, "worst relative error {worst:e}");
        assert_eq!(exp(-1000.0), 0.0);
        assert!(exp(1000.0).is_finite());
        assert_eq!(exp(f32::NAN), 0.0);
        assert_eq!(exp(0.0), 1.0);
    }

    #[test]
    fn atan2_turns_matches_std() {
        let mut worst = 0.0f32;
        for i in 0..3600 {
            let a = i as f32 / 3600.0 * std::f32::consts::TAU;
            for r in [1e-3f32, 1.0, 1e4] {
                let (y, x) = (a.sin() * r, a.cos() * r);
                let want = y.atan2(x) / std::f32::consts::TAU;
                let got = atan2_turns(y, x);
                let mut d = (got - want).abs();
                d = d.min((d - 1.0).abs());
                worst = worst.max(d);
            }
        }
        assert!(worst < 1e-5, "worst error {worst} turns");
        assert_eq!(atan2_turns(0.0, 0.0), 0.0);
        assert!(atan2_turns(f32::NAN, 1.0).is_nan() || atan2_turns(f32::NAN, 1.0) == 0.0);
    }

    #[test]
    fn bilerp_known_answers_and_clamps() {
        // 2x2 grid: [0 1; 2 3] (row 0 = [0, 1]).
        let f = [0.0, 1.0, 2.0, 3.0];
        // Centre: mean of all four = 1.5.
        assert_eq!(bilerp(&f, 2, 2, 0.5, 0.5), 1.5);
        // On the right edge half-way up: (1 + 3) / 2 = 2.
        assert_eq!(bilerp(&f, 2, 2, 1.0, 0.5), 2.0);
        // Far outside clamps to the corner.
        assert_eq!(bilerp(&f, 2, 2, 1e30, -1e30), 1.0);
        assert_eq!(bilerp(&f, 2, 2, f32::NAN, f32::NAN), 0.0);
        // Degenerate 1x1 grid.
        assert_eq!(bilerp(&[7.0], 1, 1, 0.3, 0.9), 7.0);
    }
}
