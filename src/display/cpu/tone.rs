//! Tone: the picture's light (linear RGB, any brightness, from colorize) to sRGB-encoded,
//! dithered RGBA8 pixels. The last pass of the filmic tone mode; mirrors shaders/tone.wgsl.
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
//! With effects ([`Fx`], the filmic tone's look), before the tone each pixel's light is
//! shaded by its relief, gets the glow (bloom and sunrays, `bloom.rs`) sampled up from half
//! the frame, is gradient-mapped by a palette and laid over the background.
//!
//! Rows are numbered top first, as in the frame.

use super::bloom::{Rgb, sane};
pub use crate::display::effects::{BG_COVER, Fx, SHADE_ELEVATION_DEG, SHADE_RELIEF};
#[cfg(test)]
use crate::fluid::srgb_encode;
use crate::fluid::{
    FILMIC_MAX_LIGHT, LUMA, PALETTE_HALF_LIGHT, PALETTE_STOPS, dither, filmic_ratio,
};
use crate::kernels::math::{brightest, dimmest, from_fn3, map3};

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

/// `255 * srgb_encode(x)` for `x >= 0` (not NaN), without the clamp at 1: the polynomial
/// increases from 255.0002 at 1 on (its derivative's only real root is at -0.053), up to
/// +inf, so [`channel_8bit`]'s clamp at 255 gives what clamping `x` at 1 would.
#[inline(always)]
fn encode_255_open(x: f32) -> f32 {
    let y = x.sqrt().sqrt();
    let mut p = SRGB_POLY[6];
    for &c in SRGB_POLY[..6].iter().rev() {
        p = p.mul_add(y, c);
    }
    if x <= SRGB_TOE {
        x * (12.92 * 255.0)
    } else {
        p
    }
}

/// `255 * srgb_encode(x)` for x in 0..1 (clamped; NaN gives 0).
#[cfg(test)]
#[allow(clippy::manual_clamp)] // clamp would keep NaN; max-then-min maps it to 0
fn encode_255(x: f32) -> f32 {
    encode_255_open(x.max(0.0)).min(255.0)
}

/// The 8-bit channel of light `x` (toned; NaN and negatives give 0, 1 and above 255) with a
/// dither offset `d` in [0, 1): `floor(255 srgb_encode(x) + d)`, clamped at 255.
///
/// The arithmetic of clamping `x` to 0..1 first, with fewer operations: `encode_255_open` of
/// a non-negative `x` is at least 0 (the toe's line from 0, the polynomial above 10 past it),
/// so the sum needs no clamp at 0; and at 1 and above it is at least 255, so the clamp at 255
/// gives the 255 that clamping `x` at 1 would (a test checks both).
#[inline(always)]
fn channel_8bit(x: f32, d: f32) -> u32 {
    let v = (encode_255_open(x.max(0.0)) + d).min(255.0);
    // SAFETY: v is in [0, 255]: the sum is not NaN (x.max(0.0) maps NaN to 0, and the
    // polynomial of +inf is +inf) and not negative.
    unsafe { v.to_int_unchecked::<i32>() as u32 }
}

kernel! { avx512:
/// One row (`py`, top first) of light planes to packed opaque RGBA8 pixels.
fn tone_row_kernel(light: [&[f32]; 3], py: u32, out: &mut [u32]) {
    let [r, g, b] = light;
    let n = out.len().min(r.len()).min(g.len()).min(b.len());
    for px in 0..n {
        let c = [r[px], g[px], b[px]];
        let k = filmic_ratio(brightest(c));
        let d = dither(px as u32, py);
        let q = |x: f32| channel_8bit(x * k, d);
        out[px] = q(c[0]) | q(c[1]) << 8 | q(c[2]) << 16 | 0xff00_0000;
    }
}
}

/// One row (`py`, top first) of light planes to packed opaque RGBA8 pixels (little-endian).
pub fn tone_row(light: [&[f32]; 3], py: usize, out: &mut [u32]) {
    tone_row_kernel(light, py as u32, out);
}

/// Compressed luminance of sane light: the shading's height field, 0..1.
#[inline(always)]
fn height_of(r: f32, g: f32, b: f32) -> f32 {
    let y = LUMA[0].mul_add(sane(r), LUMA[1].mul_add(sane(g), LUMA[2] * sane(b)));
    y / (1.0 + y)
}

/// Luminance of light.
#[inline(always)]
fn luma(c: Rgb) -> f32 {
    LUMA[0].mul_add(c[0], LUMA[1].mul_add(c[1], LUMA[2] * c[2]))
}

/// The light of one pixel, shaded by the gradient `(gx, gy)` (y up) of the height field.
#[inline(always)]
pub fn shade(c: Rgb, gx: f32, gy: f32, fx: &Fx) -> Rgb {
    let k = shade_gain(gx, gy, fx.relief, fx.light, fx.shade);
    map3(c, |x| x * k)
}

/// The shading's gain on a pixel with height gradient `(gx, gy)`.
#[inline(always)]
fn shade_gain(gx: f32, gy: f32, relief: f32, light: [f32; 3], amount: f32) -> f32 {
    let (nx, ny) = (-gx * relief, -gy * relief);
    let lit = nx.mul_add(light[0], ny.mul_add(light[1], 1.0));
    let diffuse = lit / nx.mul_add(nx, ny.mul_add(ny, 1.0)).sqrt();
    amount.mul_add(diffuse - 1.0, 1.0).max(0.0)
}

/// The palette's colour at luminance `y`, times `y`.
#[inline(always)]
fn palette_at(y: f32, stops: &[Rgb; PALETTE_STOPS]) -> Rgb {
    let t = y / (y + PALETTE_HALF_LIGHT);
    let pos = t * (PALETTE_STOPS - 1) as f32;
    let i = (pos as usize).min(PALETTE_STOPS - 2);
    let f = pos - i as f32;
    let (a, b) = (stops[i], stops[i + 1]);
    from_fn3(|k| f.mul_add(b[k] - a[k], a[k]) * y)
}

/// Palette, vibrance and background on light that has its glow: `Y` times the palette's
/// colour at `Y / (Y + PALETTE_HALF_LIGHT)`, then [`vibrant`], then the background, covered
/// as the light brightens.
#[inline(always)]
pub fn grade(c: Rgb, fx: &Fx) -> Rgb {
    let c = match &fx.stops {
        Some(stops) => palette_at(luma(c), stops),
        None => c,
    };
    let c = if fx.vibrance > 0.0 {
        vibrant(c, fx.vibrance)
    } else {
        c
    };
    over_background(c, fx.background)
}

/// Most chroma gain of vibrance 1 on a grey-ish colour, over 1. Set on renders, 2026-11-23:
/// at 2 a dense song (seven channels and drums mixing all over the frame) stayed pastel
/// (saturation of lit pixels 0.53 at the default vibrance); at 4 it reaches 0.72 and its
/// brown-orange mixes turn orange, while the demo goes from 0.69 to 0.77 with nothing garish.
pub const VIBRANCE_GAIN: f32 = 4.0;

/// Vibrance `v` (0..1) on light `c`: its chroma `c - Y` scaled by `1 + VIBRANCE_GAIN v (1 - s)`,
/// where `s` is its saturation (`(max - min) / max`), so dull colours gain most and pure ones nothing;
/// at most as far as the dimmest channel reaches 0, so hue and luminance `Y` stay as they
/// are and no channel goes negative. Grey (every channel equal) stays grey.
#[inline(always)]
#[allow(clippy::manual_clamp)] // clamp would keep NaN; max-then-min maps it to 0
pub fn vibrant(c: Rgb, v: f32) -> Rgb {
    // Light past the tone curve's cap saturates its channel whatever its value, so capping it
    // there changes no pixel, and keeps the cross products below from overflowing (NaN, or
    // the wrong ratio, from about 1e19 on).
    let c = map3(c, |x| x.max(0.0).min(FILMIC_MAX_LIGHT));
    let y = luma(c);
    // No channel is NaN any more, so `maxps` and `minps` give what `f32::max` and `min` would.
    let (max, min) = (brightest(c), dimmest(c));
    // The wanted gain `1 + g (1 - s)` is `(max + g min) / max`; the dimmest channel reaches
    // 0 at a gain of `y / (y - min)`. The smaller is chosen by cross-multiplying (both
    // denominators are positive), so that a pixel pays for one division, not two.
    let (want_n, want_d) = ((v * VIBRANCE_GAIN).mul_add(min, max), max.max(1.0e-20));
    let (room_n, room_d) = (y, y - min);
    let (n, d) = if min < y && room_n * want_d < want_n * room_d {
        (room_n, room_d)
    } else {
        (want_n, want_d)
    };
    let k = (n / d).max(1.0);
    from_fn3(|i| k.mul_add(c[i] - y, y))
}

/// Light over the background.
#[inline(always)]
fn over_background(c: Rgb, bg: Rgb) -> Rgb {
    let cover = 1.0 / BG_COVER.mul_add(luma(c), 1.0);
    from_fn3(|k| bg[k].mul_add(cover, c[k]))
}

/// What a tone row with effects reads.
pub struct FxRows<'a> {
    /// This row's light.
    pub light: [&'a [f32]; 3],
    /// With shading: the shading's height field ([`heights`]) of this row and of the rows
    /// `step` above and below (clamped to the frame).
    pub heights: Option<[&'a [f32]; 3]>,
    /// The glow of this row, three planes at the glow's width (already interpolated
    /// vertically), and the taps that sample it across the frame, if any.
    pub glow: Option<([&'a [f32]; 3], &'a GlowTaps)>,
}

/// A tone row's scratch: three planes of light and the horizontal height differences.
#[derive(Default)]
pub struct FxScratch {
    c: [Vec<f32>; 3],
    gx: Vec<f32>,
}

kernel! { avx512:
/// The shading's height field of a row of light.
pub fn heights(p: [&[f32]; 3], out: &mut [f32]) {
    for (i, o) in out.iter_mut().enumerate() {
        *o = height_of(p[0][i], p[1][i], p[2][i]);
    }
}
}

/// How a frame's pixels sample a glow row across: each pixel's two texels and the second's
/// weight (bilinear, as [`super::bloom::tap`]), checked against the glow's width once.
pub struct GlowTaps {
    i0: Vec<u32>,
    i1: Vec<u32>,
    f: Vec<f32>,
    /// The glow's width.
    src: usize,
    /// The frame is exactly twice as wide as the glow: every pixel's taps and weights follow
    /// a pattern of two (0.75 and 0.25 between neighbours), computed without gathers.
    double: bool,
}

impl GlowTaps {
    /// The taps of a frame `width` pixels wide over a glow `src` texels wide (at least 1).
    pub fn new(width: usize, src: usize) -> Self {
        let src = src.max(1);
        let taps: Vec<_> = (0..width)
            .map(|px| super::bloom::tap(px, width, src))
            .collect();
        Self {
            i0: taps.iter().map(|t| t.0 as u32).collect(),
            i1: taps.iter().map(|t| t.1 as u32).collect(),
            f: taps.iter().map(|t| t.2).collect(),
            src,
            double: width == 2 * src,
        }
    }

    /// `out[px]`, the glow row `g` (the glow's width) sampled at every pixel.
    fn expand(&self, g: &[f32], out: &mut [f32]) {
        assert!(
            g.len() >= self.src && out.len() >= self.i0.len(),
            "glow row size"
        );
        if self.double {
            expand_double(&g[..self.src], &mut out[..2 * self.src]);
        } else {
            // SAFETY: every tap is below `src` (`tap` clamps), and `g` holds `src` texels.
            unsafe { expand_taps(g, &self.i0, &self.i1, &self.f, out) };
        }
    }
}

kernel! { avx512:
/// `out` (twice as wide as `g`): `g` upsampled 2x with bilinear taps, the same arithmetic as
/// the gathering path: pixel `2i + 1` is 0.25 and pixel `2i + 2` 0.75 of the way from `g[i]`
/// to `g[i + 1]`; the end pixels are the end texels.
fn expand_double(g: &[f32], out: &mut [f32]) {
    let n = g.len();
    if n == 0 || out.len() < 2 * n {
        return;
    }
    out[0] = g[0];
    out[2 * n - 1] = g[n - 1];
    for (o, w) in out[1..2 * n - 1].chunks_exact_mut(2).zip(g.windows(2)) {
        let (a, b) = (w[0], w[1]);
        o[0] = 0.25f32.mul_add(b - a, a);
        o[1] = 0.75f32.mul_add(b - a, a);
    }
}
}

kernel! {
/// `out[x] = lerp(g[i0[x]], g[i1[x]], f[x])`.
///
/// # Safety
/// Every index in `i0` and `i1` must be below `g.len()`.
unsafe fn expand_taps(g: &[f32], i0: &[u32], i1: &[u32], f: &[f32], out: &mut [f32]) {
    let n = out.len().min(i0.len()).min(i1.len()).min(f.len());
    for x in 0..n {
        // SAFETY: the caller's contract.
        let (a, b) = unsafe { (*g.get_unchecked(i0[x] as usize), *g.get_unchecked(i1[x] as usize)) };
        out[x] = f[x].mul_add(b - a, a);
    }
}
}

kernel! { avx512:
/// `c = light * gain + c` (`GLOW`) or `light * gain`, with the shading's gain per pixel from
/// the height differences across (`gx`) and the rows above and below, or 1 without shading.
#[allow(clippy::too_many_arguments)]
fn combine(light: [&[f32]; 3], shade: Option<(&[f32], &[f32], &[f32])>, relief: f32, dir: [f32; 3], amount: f32, glow: bool, c: [&mut [f32]; 3]) {
    let [r, g, b] = light;
    let [c0, c1, c2] = c;
    let n = r.len().min(g.len()).min(b.len()).min(c0.len()).min(c1.len()).min(c2.len());
    match (shade, glow) {
        (Some((gx, above, below)), true) => {
            let n = n.min(gx.len()).min(above.len()).min(below.len());
            for i in 0..n {
                let k = shade_gain(gx[i], above[i] - below[i], relief, dir, amount);
                c0[i] = r[i].mul_add(k, c0[i]);
                c1[i] = g[i].mul_add(k, c1[i]);
                c2[i] = b[i].mul_add(k, c2[i]);
            }
        }
        (Some((gx, above, below)), false) => {
            let n = n.min(gx.len()).min(above.len()).min(below.len());
            for i in 0..n {
                let k = shade_gain(gx[i], above[i] - below[i], relief, dir, amount);
                c0[i] = r[i] * k;
                c1[i] = g[i] * k;
                c2[i] = b[i] * k;
            }
        }
        (None, true) => {
            for i in 0..n {
                c0[i] += r[i];
                c1[i] += g[i];
                c2[i] += b[i];
            }
        }
        (None, false) => {
            c0[..n].copy_from_slice(&r[..n]);
            c1[..n].copy_from_slice(&g[..n]);
            c2[..n].copy_from_slice(&b[..n]);
        }
    }
}
}

kernel! { avx512:
/// Palette (if any), vibrance (if any) and background on a row of light, in place.
fn grade_row(c: [&mut [f32]; 3], stops: Option<&[Rgb; PALETTE_STOPS]>, vibrance: f32, bg: Rgb) {
    let [r, g, b] = c;
    let n = r.len().min(g.len()).min(b.len());
    match (stops, vibrance > 0.0) {
        (Some(stops), true) => {
            for i in 0..n {
                let p = palette_at(luma([r[i], g[i], b[i]]), stops);
                let [x, y, z] = over_background(vibrant(p, vibrance), bg);
                (r[i], g[i], b[i]) = (x, y, z);
            }
        }
        (Some(stops), false) => {
            for i in 0..n {
                let p = palette_at(luma([r[i], g[i], b[i]]), stops);
                let [x, y, z] = over_background(p, bg);
                (r[i], g[i], b[i]) = (x, y, z);
            }
        }
        (None, true) => {
            for i in 0..n {
                let p = vibrant([r[i], g[i], b[i]], vibrance);
                let [x, y, z] = over_background(p, bg);
                (r[i], g[i], b[i]) = (x, y, z);
            }
        }
        (None, false) => {
            for i in 0..n {
                let [x, y, z] = over_background([r[i], g[i], b[i]], bg);
                (r[i], g[i], b[i]) = (x, y, z);
            }
        }
    }
}
}

kernel! { avx512:
/// `out[x] = h[x + k] - h[x - k]`, the indices clamped to the row (a kernel: built for the
/// baseline CPU its loop ran four floats at a time, 2 % of a frame with effects).
fn differences(h: &[f32], k: usize, out: &mut [f32]) {
    let n = h.len().min(out.len());
    let at = |x: usize| h[(x + k).min(n - 1)] - h[x.saturating_sub(k)];
    if n <= 2 * k {
        for (x, o) in out[..n].iter_mut().enumerate() {
            *o = at(x);
        }
        return;
    }
    for x in (0..k).chain(n - k..n) {
        out[x] = at(x);
    }
    for ((o, a), b) in out[k..n - k]
        .iter_mut()
        .zip(&h[2 * k..])
        .zip(&h[..n - 2 * k])
    {
        *o = a - b;
    }
}
}

/// One row (`py`, top first) of light with effects to packed opaque RGBA8 pixels: shading,
/// glow, palette and background, then the plain tone row (tone, encode, dither), in
/// separate loops over the row so that each vectorises.
pub fn tone_fx_row(rows: &FxRows, fx: &Fx, py: usize, scratch: &mut FxScratch, out: &mut [u32]) {
    let n = out
        .len()
        .min(rows.light.iter().map(|p| p.len()).min().unwrap_or(0));
    let FxScratch { c, gx } = scratch;
    for plane in c.iter_mut() {
        plane.resize(n, 0.0);
    }
    let [c0, c1, c2] = c;
    if let Some((glow, taps)) = rows.glow {
        for (plane, g) in [&mut *c0, &mut *c1, &mut *c2].into_iter().zip(glow) {
            taps.expand(g, plane);
        }
    }
    let shade = match rows.heights.filter(|_| fx.shade > 0.0) {
        Some([hm, ha, hb]) => {
            gx.resize(n, 0.0);
            differences(&hm[..n], fx.step, gx);
            Some((&gx[..], &ha[..n], &hb[..n]))
        }
        None => None,
    };
    let light = rows.light.map(|p| &p[..n]);
    let c = [&mut c0[..], &mut c1[..], &mut c2[..]];
    combine(
        light,
        shade,
        fx.relief,
        fx.light,
        fx.shade,
        rows.glow.is_some(),
        c,
    );
    grade_row(
        [&mut c0[..], &mut c1[..], &mut c2[..]],
        fx.stops.as_ref(),
        fx.vibrance,
        fx.background,
    );
    tone_row([&c0[..], &c1[..], &c2[..]], py, &mut out[..n]);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Vibrance keeps hue and luminance, gains most on dull colours, never goes below 0, and
    /// leaves grey, pure colours and black alone.
    #[test]
    fn vibrance_known_answers() {
        let hue = |c: Rgb| crate::fluid::rgb_to_hsv(c)[0];
        let sat = |c: Rgb| crate::fluid::rgb_to_hsv(c)[1];
        // A brown-grey mix: (0.5, 0.4, 0.2). Y = 0.1063 + 0.2861 + 0.0144 = 0.4068; s = 0.6,
        // so vibrance 0.5 wants 1 + 4 * 0.5 * 0.4 = 1.8; the room is 0.4068 / 0.2068 = 1.967.
        assert_eq!(VIBRANCE_GAIN, 4.0);
        let dull = [0.5, 0.4, 0.2];
        let v = vibrant(dull, 0.5);
        approx::assert_relative_eq!(luma(v), luma(dull), max_relative = 1e-5);
        approx::assert_relative_eq!(hue(v), hue(dull), epsilon = 1e-5);
        approx::assert_relative_eq!(v[2], 0.4068 - 1.8 * 0.2068, epsilon = 1e-3);
        assert!(sat(v) > 0.9 && sat(dull) < 0.61, "{} {}", sat(v), sat(dull));
        // Where the room is shorter than the want (vibrance 1 wants 2.6), the dimmest channel
        // stops at 0.
        let v = vibrant(dull, 1.0);
        approx::assert_relative_eq!(v[2], 0.0, epsilon = 1e-5);
        approx::assert_relative_eq!(luma(v), luma(dull), max_relative = 1e-5);
        let pale = [0.9, 0.8, 0.7];
        let v = vibrant(pale, 1.0);
        assert!(v.iter().all(|&x| x >= -1e-6), "{v:?}");
        approx::assert_relative_eq!(luma(v), luma(pale), max_relative = 1e-5);
        // Half the vibrance, less gain.
        assert!(sat(vibrant(dull, 0.25)) < sat(vibrant(dull, 0.5)));
        // Huge light stays finite, grey stays grey, and no channel goes below 0.
        for c in [
            [1e38, 9e37, 8e37],
            [7e37; 3],
            [1e20, 3e19, 1e19],
            [f32::INFINITY, 1.0, 0.0],
        ] {
            let v = vibrant(c, 1.0);
            assert!(v.iter().all(|x| x.is_finite() && *x >= 0.0), "{c:?}: {v:?}");
        }
        let v = vibrant([7e37; 3], 1.0);
        assert!(v[0] == v[1] && v[1] == v[2], "{v:?}");
        for c in [[0.3; 3], [1.0, 0.0, 0.0], [0.0, 0.6, 0.2], [0.0; 3]] {
            let v = vibrant(c, 1.0);
            for k in 0..3 {
                approx::assert_relative_eq!(v[k], c[k], epsilon = 1e-6);
            }
        }
    }

    /// A frame twice as wide as its glow takes the gather-free path, with the same bits as
    /// the taps' gathers.
    #[test]
    fn the_double_glow_row_matches_the_gathers() {
        for src in 1..40 {
            let taps = GlowTaps::new(2 * src, src);
            assert!(taps.double);
            let g: Vec<f32> = (0..src)
                .map(|i| ((i * 37 % 11) as f32).sin() * 3.0)
                .collect();
            let (mut fast, mut slow) = (vec![0.0; 2 * src], vec![0.0; 2 * src]);
            taps.expand(&g, &mut fast);
            // SAFETY: `tap` clamps every index below `src`.
            unsafe { expand_taps(&g, &taps.i0, &taps.i1, &taps.f, &mut slow) };
            assert_eq!(fast, slow, "{src}");
        }
        assert!(!GlowTaps::new(7, 4).double);
    }

    /// A tone row with effects gives, for every combination of them, the bits of the
    /// effects applied one at a time per pixel: the glow sampled across, the shading's
    /// differences clamped at the row's ends, the rows above and below, palette, vibrance,
    /// background, tone, encoding and the dither at the pixel's place.
    #[test]
    fn a_row_with_effects_matches_the_effects_one_by_one() {
        let (n, gw, py) = (53, 27, 5);
        let wave = |seed: f32, scale: f32| -> Vec<f32> {
            (0..n)
                .map(|i| ((i as f32 * 0.37 + seed).sin() * 0.5 + 0.5) * scale)
                .collect()
        };
        let light = [wave(0.1, 3.0), wave(1.3, 1.0), wave(2.9, 0.2)];
        let glow_src = [0.4, 1.1, 2.3].map(|seed| {
            (0..gw)
                .map(|i| (i as f32 * 0.21 + seed).cos().abs())
                .collect::<Vec<f32>>()
        });
        let hts = [wave(0.7, 0.9), wave(3.1, 0.8), wave(4.4, 0.6)];
        let taps = GlowTaps::new(n, gw);
        for bits in 0..16u32 {
            let (shading, glowing, palette, vibrance) =
                (bits & 1 != 0, bits & 2 != 0, bits & 4 != 0, bits & 8 != 0);
            let effects = crate::fluid::Effects {
                shading: if shading { 0.7 } else { 0.0 },
                palette: if palette {
                    crate::fluid::Palette::Sunset
                } else {
                    crate::fluid::Palette::Off
                },
                vibrance: if vibrance { 0.6 } else { 0.0 },
                background: [0.02, 0.01, 0.03],
                ..crate::fluid::Effects::OFF
            };
            let fx = Fx::new(&effects, 720, 256);
            assert!(fx.step > 1, "the test wants a stencil wider than a pixel");
            let glow_rows = [&glow_src[0][..], &glow_src[1][..], &glow_src[2][..]];
            let rows = FxRows {
                light: [&light[0], &light[1], &light[2]],
                heights: shading.then(|| [&hts[0][..], &hts[1][..], &hts[2][..]]),
                glow: glowing.then_some((glow_rows, &taps)),
            };
            let mut got = vec![0u32; n];
            tone_fx_row(&rows, &fx, py, &mut FxScratch::default(), &mut got);
            let mut expanded = [vec![0.0; n], vec![0.0; n], vec![0.0; n]];
            for (plane, g) in expanded.iter_mut().zip(glow_rows) {
                taps.expand(g, plane);
            }
            for x in 0..n {
                let mut c = [light[0][x], light[1][x], light[2][x]];
                let glow = [expanded[0][x], expanded[1][x], expanded[2][x]];
                if shading {
                    let gx = hts[0][(x + fx.step).min(n - 1)] - hts[0][x.saturating_sub(fx.step)];
                    let k = shade_gain(gx, hts[1][x] - hts[2][x], fx.relief, fx.light, fx.shade);
                    c = if glowing {
                        from_fn3(|i| c[i].mul_add(k, glow[i]))
                    } else {
                        map3(c, |v| v * k)
                    };
                } else if glowing {
                    c = from_fn3(|i| c[i] + glow[i]);
                }
                let c = grade(c, &fx);
                let k = filmic_ratio(c[0].max(c[1]).max(c[2]));
                let d = dither(x as u32, py as u32);
                let want = c.iter().enumerate().fold(0xff00_0000, |p, (i, &v)| {
                    p | channel_8bit(v * k, d) << (8 * i)
                });
                assert_eq!(got[x], want, "effects {bits:04b}, pixel {x}");
            }
        }
    }

    fn channel(p: u32, c: usize) -> u8 {
        p.to_le_bytes()[c]
    }

    /// The 8-bit channel without clamps gives the bits of clamping the light to 0..1 first:
    /// 255 at 1 and above (up to +inf), 0 for NaN and negatives, and the same rounding
    /// between, for every dither offset.
    #[test]
    #[allow(clippy::manual_clamp)] // the reference clamps NaN to 0, as max-then-min does
    fn channels_match_the_clamped_light() {
        let clamped = |x: f32, d: f32| {
            let v = if x.is_nan() || x <= 0.0 {
                0.0
            } else if x >= 1.0 {
                255.0
            } else {
                encode_255_open(x)
            };
            (v + d).max(0.0).min(255.0).floor() as u32
        };
        let ds = [0.0, 0.25, 0.5, 0.999_999_9, 1.0 - f32::EPSILON / 2.0];
        for i in 0..=200_000 {
            let x = i as f32 / 100_000.0;
            for d in ds {
                assert_eq!(channel_8bit(x, d), clamped(x, d), "x {x} d {d}");
            }
        }
        for x in [1.000_001, 7.0, 1.0e10, 1.0e30, f32::MAX, f32::INFINITY] {
            for d in ds {
                assert_eq!(channel_8bit(x, d), 255, "x {x} d {d}");
            }
        }
        for x in [f32::NAN, -1.0, -1.0e30, f32::NEG_INFINITY, -0.0] {
            assert_eq!(channel_8bit(x, 0.999), 0, "x {x}");
        }
        assert!(brightest([1.0, 3.0, 2.0]) == 3.0 && brightest([4.0, 3.0, 2.0]) == 4.0);
        assert_eq!(
            filmic_ratio(brightest([f32::NAN, 0.5, f32::NAN])),
            filmic_ratio(0.0)
        );
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
        tone_row([&zero, &zero, &zero], 0, &mut out);
        assert!(out.iter().all(|&p| p == 0xff00_0000), "{out:x?}");
        for v in [100.0, 1.0e20, f32::MAX, f32::INFINITY] {
            let big = [v; 4];
            tone_row([&big, &big, &big], 0, &mut out);
            assert!(out.iter().all(|&p| p == 0xffff_ffff), "light {v}: {out:x?}");
        }
        // Huge light keeps its hue: pure red stays pure red.
        let (red, none) = ([1.0e30f32; 4], [0.0f32; 4]);
        tone_row([&red, &none, &none], 0, &mut out);
        assert!(out.iter().all(|&p| p == 0xff00_00ff), "{out:x?}");
        let grey = [0.18; 4];
        tone_row([&grey, &grey, &grey], 3, &mut out);
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
            tone_row([&light, &light, &light], py, &mut out);
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
