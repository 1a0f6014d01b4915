//! Display: the picture's light (linear RGB, any brightness, from colorize) to sRGB-encoded,
//! dithered RGBA8 pixels. The last pass of the filmic tone mode; mirrors shaders/display.wgsl.
//!
//! Per pixel:
//! 1. tone: every channel times [`filmic_ratio`] of the brightest one, so the curve shapes
//!    brightness and keeps hue and saturation (red and green light give yellow, not brown);
//! 2. encode: the sRGB transfer function, its power segment as a degree-6 polynomial in
//!    `x^(1/4)` (two exact square roots; worst error 0.003 of an 8-bit step next to the exact
//!    curve the GPU evaluates). `powf` per channel would cost about 20 ms a 1280x720 frame,
//!    and a table needs a gather per channel, which x86 compilers turn into scalar loads: 48
//!    per 8 pixels, most of the pass's time;
//! 3. quantise: `floor(255 v + dither(x, y))`, which keeps the mean and breaks the 8-bit
//!    steps of dark gradients into fine noise. The dither depends on the pixel only, so
//!    renders stay reproducible.
//!
//! Rows are numbered top first, as in the frame.

#[cfg(test)]
use crate::fluid::srgb_encode;
use crate::fluid::{dither, filmic_ratio};

/// Where the sRGB curve's linear toe ends.
const SRGB_TOE: f32 = 0.003_130_8;

/// `255 * srgb_encode(x)` on `(SRGB_TOE, 1)`, as a polynomial in `x^(1/4)`, lowest power
/// first: a least-squares fit (numpy, 400 001 points), worst error 0.0026 of an 8-bit step in
/// f32 arithmetic, monotonic.
#[allow(clippy::excessive_precision)] // the fit's figures as printed; f32 rounds them
const SRGB_POLY: [f32; 7] = [
    -1.537_190_723e1,
    3.773_918_152e1,
    3.386_313_171e2,
    -1.952_111_053e2,
    1.398_744_965e2,
    -6.349_701_691e1,
    1.283_523_750e1,
];

/// `255 * srgb_encode(x)` for x in 0..1 (clamped; NaN gives 0).
#[inline(always)]
#[allow(clippy::manual_clamp)] // clamp would keep NaN; max-then-min maps it to 0
fn encode_255(x: f32) -> f32 {
    let x = x.max(0.0).min(1.0);
    let y = x.sqrt().sqrt();
    let mut p = SRGB_POLY[6];
    for &c in SRGB_POLY[..6].iter().rev() {
        p = p.mul_add(y, c);
    }
    if x <= SRGB_TOE {
        x * (12.92 * 255.0)
    } else if x >= 1.0 {
        255.0
    } else {
        p
    }
}

/// An 8-bit channel from `255 v` and a dither offset in [0, 1): rounded down, clamped.
#[inline(always)]
#[allow(clippy::manual_clamp)] // clamp would keep NaN; max-then-min maps it to 0
fn quantise(v255: f32, d: f32) -> u32 {
    let y = (v255 + d).max(0.0).min(255.0);
    // SAFETY: y is finite and in [0, 255].
    unsafe { y.to_int_unchecked::<i32>() as u32 }
}

kernel! {
/// One row (`py`, top first) of light planes to packed opaque RGBA8 pixels.
fn display_row_kernel(light: [&[f32]; 3], py: u32, out: &mut [u32]) {
    let [r, g, b] = light;
    let n = out.len().min(r.len()).min(g.len()).min(b.len());
    for px in 0..n {
        let c = [r[px], g[px], b[px]];
        let k = filmic_ratio(c[0].max(c[1]).max(c[2]));
        let d = dither(px as u32, py);
        let [r8, g8, b8] = c.map(|x| quantise(encode_255(x * k), d));
        out[px] = r8 | g8 << 8 | b8 << 16 | 0xff00_0000;
    }
}
}

/// One row (`py`, top first) of light planes to packed opaque RGBA8 pixels (little-endian).
pub fn display_row(light: [&[f32]; 3], py: usize, out: &mut [u32]) {
    display_row_kernel(light, py as u32, out);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn channel(p: u32, c: usize) -> u8 {
        p.to_le_bytes()[c]
    }

    #[test]
    fn the_fit_matches_the_exact_curve() {
        let mut worst = 0.0f32;
        let mut last = 0.0f32;
        for i in 0..=1_000_000 {
            let x = i as f32 / 1_000_000.0;
            let v = encode_255(x);
            worst = worst.max((v - 255.0 * srgb_encode(x)).abs());
            assert!(v >= last - 1e-4, "not monotonic at {x}: {v} after {last}");
            last = v;
        }
        assert!(worst < 0.005, "worst error {worst} of an 8-bit step");
        assert_eq!(encode_255(f32::NAN), 0.0);
        assert_eq!(encode_255(7.0), 255.0);
        assert_eq!(encode_255(1.0), 255.0);
        assert_eq!(encode_255(0.0), 0.0);
    }

    #[test]
    fn known_pixels() {
        // Black stays black (the dither never lifts 0), white light saturates to white, and
        // light 0.18 (mid-grey) tones to 0.2669 and encodes to 0.5535: 141.1 + dither.
        let zero = [0.0; 4];
        let mut out = [0u32; 4];
        display_row([&zero, &zero, &zero], 0, &mut out);
        assert!(out.iter().all(|&p| p == 0xff00_0000), "{out:x?}");
        for v in [100.0, 1.0e20, f32::MAX, f32::INFINITY] {
            let big = [v; 4];
            display_row([&big, &big, &big], 0, &mut out);
            assert!(out.iter().all(|&p| p == 0xffff_ffff), "light {v}: {out:x?}");
        }
        // Huge light keeps its hue: pure red stays pure red.
        let (red, none) = ([1.0e30f32; 4], [0.0f32; 4]);
        display_row([&red, &none, &none], 0, &mut out);
        assert!(out.iter().all(|&p| p == 0xff00_00ff), "{out:x?}");
        let grey = [0.18; 4];
        display_row([&grey, &grey, &grey], 3, &mut out);
        for p in out {
            assert!((141..=142).contains(&channel(p, 0)), "{p:x}");
        }
    }

    /// A smooth dark ramp (1 to 9 levels over 1024 pixels): rounded plainly, each level would
    /// be a flat band 128 pixels wide; with the dither no run of equal pixels is longer than a
    /// quarter of that (runs next to a whole level are the longest), and the mean of every
    /// 64-pixel stretch stays within a tenth of a level of the ramp's.
    #[test]
    fn dark_ramps_do_not_band() {
        let n = 1024;
        // Light whose display value is i / n * 8 / 255, found by inverting each stage.
        let target: Vec<f32> = (0..n).map(|i| 1.0 + i as f32 / n as f32 * 8.0).collect();
        let light: Vec<f32> = target
            .iter()
            .map(|&t| {
                // Bisect the monotonic chain (tone, then encode) for 255 v = t.
                let (mut lo, mut hi) = (0.0f32, 1.0f32);
                for _ in 0..60 {
                    let mid = 0.5 * (lo + hi);
                    if 255.0 * srgb_encode(mid * filmic_ratio(mid)) < t {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
                0.5 * (lo + hi)
            })
            .collect();
        for py in [0, 1, 17, 300] {
            let mut out = vec![0u32; n];
            display_row([&light, &light, &light], py, &mut out);
            let red: Vec<u8> = out.iter().map(|&p| channel(p, 0)).collect();
            let longest = red.chunk_by(|a, b| a == b).map(<[u8]>::len).max().unwrap();
            assert!(longest <= 32, "row {py}: a flat band {longest} pixels wide");
            for (k, (got, want)) in red.chunks(64).zip(target.chunks(64)).enumerate() {
                let got = got.iter().map(|&v| f32::from(v)).sum::<f32>() / 64.0;
                let want = want.iter().sum::<f32>() / 64.0;
                assert!(
                    (got - want).abs() < 0.1,
                    "row {py} stretch {k}: mean {got}, ramp {want}"
                );
            }
        }
    }
}
