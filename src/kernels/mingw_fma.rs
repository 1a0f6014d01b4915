//! A correctly rounded `fmaf` and `fma` for the Windows GNU builds.
//!
//! `f32::mul_add` compiles to the FMA instruction inside the kernels built for it (`kernel!`)
//! and elsewhere to a call of the C library's `fmaf`. glibc's and macOS's are exact (one
//! rounding), mingw-w64's is not: it rounds the product-sum in double precision and again to
//! single, and differs from glibc's in the last bit for some inputs (2 000 000 random triples
//! hash differently under Wine). The flow grows that bit into a different video, so a Windows
//! render would not be the Linux render. These definitions take the place of mingw-w64's in the
//! link (the linker takes a defined symbol before a library's) and compute one rounding, with
//! the FMA instruction when the CPU has it (`libm` detects it) and exactly in software
//! otherwise. The MSVC runtime's `fmaf` is exact and is not replaced. (The plugin's DLL lists
//! the two among its exports, as Rust exports every `no_mangle` function of a `cdylib`:
//! harmless, since Windows resolves each DLL's imports by the DLL's name.)

/// `x * y + z` rounded once (see the module).
// SAFETY: the C symbol `fmaf` (ISO C: float fmaf(float, float, float)), with its signature and
// semantics; nothing else of that name is defined in the program.
#[unsafe(no_mangle)]
pub extern "C" fn fmaf(x: f32, y: f32, z: f32) -> f32 {
    libm::fmaf(x, y, z)
}

/// `x * y + z` rounded once, in double precision (see the module).
// SAFETY: the C symbol `fma` (ISO C: double fma(double, double, double)), with its signature
// and semantics; nothing else of that name is defined in the program.
#[unsafe(no_mangle)]
pub extern "C" fn fma(x: f64, y: f64, z: f64) -> f64 {
    libm::fma(x, y, z)
}
