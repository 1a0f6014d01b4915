//! Kernels: the numeric building blocks that the models and the display both run on the CPU,
//! in a room of their own: the display imports no model, and a model should not import the
//! display for a `lerp`, so what both compute with lives here. It imports nothing of ours
//! (the shared words of [`crate::fluid`] would be the only exception).
//!
//! - [`math`]: small deterministic scalar kernels (interpolation, limits, a portable `exp`,
//!   channel maxima, 8-bit blending), the same bits on every machine;
//! - [`portable`]: the C library's transcendental functions (`exp`, `sin`, `powf`, ...) from
//!   the `libm` crate, the same bits on every platform (`x.pexp()` for `x.exp()`);
//! - [`band`]: row bands for rayon (`min_rows`), band-parallel loops with a spin barrier, and
//!   the packed-pixel row helpers;
//! - `kernel!`: the AVX2 / NEON multiversioning of hot row kernels. A `macro_rules!` macro,
//!   seen by textual scope: `lib.rs` declares this module `#[macro_use]` before the modules
//!   that use it (`display`, `sim`).

pub mod band;
pub mod math;
#[cfg(all(windows, target_env = "gnu"))]
pub mod mingw_fma;
pub mod portable;

/// Compile a hot per-row kernel for AVX2+FMA and NEON as well as the baseline, picking the
/// best at run time. Kernels use `mul_add`, which is exactly rounded with or without hardware
/// FMA, so every version gives bit-identical results; the baseline is only slower.
///
/// `kernel! { avx512: ... }` adds an AVX-512 version first, for kernels that gain from its 32
/// registers (long per-pixel chains whose constants no longer reload from memory each
/// iteration) and do no indexed loads (LLVM turns those into AVX-512 gathers, which are slower
/// than scalar loads on Zen 4: the legacy dye row took 20 % longer). multiversion picks it
/// only on CPUs with Ice Lake's AVX-512 extensions (Zen 4 has them), where it runs at full clock.
macro_rules! kernel {
    (avx512: $($item:tt)*) => {
        #[multiversion::multiversion(targets(
            "x86_64+avx512f+avx512vl+avx512bw+avx512dq+avx2+fma",
            "x86_64+avx2+fma",
            "aarch64+neon"
        ))]
        $($item)*
    };
    ($($item:tt)*) => {
        #[multiversion::multiversion(targets("x86_64+avx2+fma", "aarch64+neon"))]
        $($item)*
    };
}
