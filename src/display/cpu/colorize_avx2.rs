//! AVX2 + FMA version of the plain dye row (`colorize::dye_row` without a saturation change
//! or hue shift): eight pixels at a time, each block's eight texels loaded once per plane and
//! the two taps of every pixel picked with lane permutes.
//!
//! The compiler does not vectorise the portable kernel's indexed loads (it would need
//! gathers, which LLVM avoids on current x86 targets), so that loop runs one pixel at a time.
//! The arithmetic here is the portable kernel's, in the same order (a fused `t (b - a) + a`,
//! then the exposure), so both give the same bits (a test compares them).

use super::Windows;
use std::arch::x86_64::*;

/// Whether the CPU has AVX2 and FMA (cached by std after the first call).
#[inline]
pub(super) fn available() -> bool {
    is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
}

/// Every block of `w`: `out[p][x] = lerp(rows[p][lo], rows[p][hi], f[x]) * brightness`.
///
/// # Safety
/// AVX2 and FMA must be available; every row must hold at least `w.end` texels, and `f` and
/// every plane of `out` at least `w.pixels()` values.
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn dye_rows(
    rows: [&[f32]; 3],
    w: &Windows,
    f: &[f32],
    brightness: f32,
    out: [&mut [f32]; 3],
) {
    let gain = _mm256_set1_ps(brightness);
    let [o0, o1, o2] = out;
    let outs = [o0.as_mut_ptr(), o1.as_mut_ptr(), o2.as_mut_ptr()];
    for (b, &base) in w.base.iter().enumerate() {
        let x = 8 * b;
        // SAFETY: `lo`, `hi` and `f` hold 8 values per block (`Windows::new`, the caller's
        // contract for `f`); each window `base..base + 8` lies in every row (`end`); the
        // planes hold `w.pixels()` values.
        unsafe {
            let lo = _mm256_loadu_si256(w.lo.as_ptr().add(x).cast());
            let hi = _mm256_loadu_si256(w.hi.as_ptr().add(x).cast());
            let t = _mm256_loadu_ps(f.as_ptr().add(x));
            for (row, out) in rows.iter().zip(outs) {
                let texels = _mm256_loadu_ps(row.as_ptr().add(base as usize));
                let a = _mm256_permutevar8x32_ps(texels, lo);
                let b = _mm256_permutevar8x32_ps(texels, hi);
                let v = _mm256_fmadd_ps(t, _mm256_sub_ps(b, a), a);
                _mm256_storeu_ps(out.add(x), _mm256_mul_ps(v, gain));
            }
        }
    }
}
