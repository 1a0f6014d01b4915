//! Colorize: turn the dye (or the velocity) into an RGBA8 picture of any size, HSV-coloured.
//!
//! The colours are light in linear RGB, exposed by the brightness knob. The filmic tone mode
//! hands that light to the tone pass (`display.rs`: tone curve, sRGB, dither); the legacy
//! mode tones each channel with `1 - e^-x` here and writes it as is.
//!
//! - Dye colour: the dye's own RGB, exposed, then hue-shifted and saturated.
//! - Density hue: the hue cycles with the dye's total density, as in Stam's demo.
//! - Velocity hue: hue from the flow's direction, value from its speed.
//!
//! Output rows run top to bottom; the simulation's row 0 is the bottom.
//!
//! Why this file is long: over 800 lines, a quarter of them its tests: the row kernels of every
//! colour mode, in both tones, share the taps and the per-pixel colour maths, so the pass stays
//! in one file (its AVX2 twin of the plain dye row sits beside it, `colorize_avx2.rs`).

use crate::fluid::{
    ColorMode, DENSITY_HUE_TURNS, Look, ToneMode, VELOCITY_VALUE_SCALE, hsv_to_rgb, rgb_to_hsv,
};
use crate::kernels::math::{atan2_turns, bilerp, lerp, map3, tonemap};
use rayon::prelude::*;

#[cfg(target_arch = "x86_64")]
#[path = "colorize_avx2.rs"]
mod wide;

/// What the colorize pass reads.
pub struct Source<'a> {
    /// Simulation width and height.
    pub w: usize,
    pub h: usize,
    pub u: &'a [f32],
    pub v: &'a [f32],
    /// Dye grid size and planes.
    pub dw: usize,
    pub dh: usize,
    pub dye: [&'a [f32]; 3],
    /// The temperature, `w x h` (empty: cold everywhere).
    pub heat: &'a [f32],
    /// The particles' light at the picture's size, three fixed-point units a pixel
    /// ([`crate::display::LIGHT_UNITS`]), interleaved, rows top first; `None`: none.
    pub particles: Option<&'a [u32]>,
}

impl<'a> Source<'a> {
    /// Dye alone, `w x h` (a particle fluid's light): no flow (`still`, resized to hold the
    /// zero velocities), no heat, no particles.
    pub fn dye(w: usize, h: usize, still: &'a mut Vec<f32>, dye: [&'a [f32]; 3]) -> Self {
        still.clear();
        still.resize((w + 1) * (h + 1), 0.0);
        let still: &'a [f32] = still;
        Self {
            w,
            h,
            u: &still[..(w + 1) * h],
            v: &still[..w * (h + 1)],
            dw: w,
            dh: h,
            dye,
            heat: &[],
            particles: None,
        }
    }
}

kernel! {
/// Add a row of particle light (fixed-point units, three a pixel) to a row of light.
fn add_particle_row(planes: Planes, row: &[u32]) {
    let scale = 1.0 / crate::display::LIGHT_UNITS;
    let [r, g, b] = planes;
    for (x, px) in row.chunks_exact(3).enumerate().take(r.len().min(g.len()).min(b.len())) {
        r[x] = (px[0] as f32).mul_add(scale, r[x]);
        g[x] = (px[1] as f32).mul_add(scale, g[x]);
        b[x] = (px[2] as f32).mul_add(scale, b[x]);
    }
}
}

kernel! {
/// Add a row of particle light to a row of legacy pixels: the legacy tone `1 - e^-x` of the
/// pixel's light plus the particles' is `1 - (1 - tone) e^-p`.
fn add_particle_row_legacy(pixels: &mut [u32], row: &[u32]) {
    let scale = 1.0 / crate::display::LIGHT_UNITS;
    for (px, p) in pixels.iter_mut().zip(row.chunks_exact(3)) {
        let (pr, pg, pb) = (p[0], p[1], p[2]);
        if (pr | pg | pb) == 0 {
            continue;
        }
        let c = *px;
        let mix = |shift: u32, p: u32| {
            let base = ((c >> shift) & 0xff) as f32 * (1.0 / 255.0);
            1.0 - (1.0 - base) * crate::kernels::math::exp(-(p as f32) * scale)
        };
        *px = pack([mix(0, pr), mix(8, pg), mix(16, pb)]);
    }
}
}

impl Source<'_> {
    /// Row `py` (top first) of the particles' light, `width` pixels, if any.
    fn particle_row(&self, py: usize, width: usize) -> Option<&[u32]> {
        let light = self.particles?;
        light.get(3 * py * width..3 * (py + 1) * width)
    }
}

/// Bilinear taps along one axis: for each output pixel, the two source indices and weight.
fn taps(out_n: usize, src_n: usize, flip: bool) -> Vec<(usize, usize, f32)> {
    (0..out_n)
        .map(|p| {
            let p = if flip { out_n - 1 - p } else { p };
            let x = ((p as f32 + 0.5) * src_n as f32 / out_n as f32 - 0.5)
                .max(0.0)
                .min((src_n - 1) as f32);
            let i0 = x as usize;
            (i0, (i0 + 1).min(src_n - 1), x - i0 as f32)
        })
        .collect()
}

/// Horizontal taps as separate arrays (the row kernels vectorise over them).
struct RowTaps {
    i0: Vec<u32>,
    i1: Vec<u32>,
    f: Vec<f32>,
    /// The leading blocks of eight pixels whose taps all lie in the eight texels from the
    /// block's first tap (upscaling: every block): [`Windows`]. Read by the AVX2 kernel only
    /// (its layout is tested everywhere).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    windows: Windows,
}

impl RowTaps {
    fn new(out_n: usize, src_n: usize) -> Self {
        let t = taps(out_n, src_n, false);
        let i0: Vec<u32> = t.iter().map(|t| t.0 as u32).collect();
        let i1: Vec<u32> = t.iter().map(|t| t.1 as u32).collect();
        Self {
            windows: Windows::new(&i0, &i1, src_n),
            i0,
            i1,
            f: t.iter().map(|t| t.2).collect(),
        }
    }
}

/// Blocks of eight pixels that read a window of eight texels: pixel `8b + k` lerps texels
/// `base[b] + lo[8b + k]` and `base[b] + hi[8b + k]`, with `base[b] + 8 <= src_n`. The AVX2
/// row loads each window once and picks the taps with lane permutes instead of gathers
/// (`colorize_avx2.rs`); the blocks stop at the first that does not fit (downscaling, the
/// right edge), where the scalar kernel takes over.
#[derive(Default)]
struct Windows {
    base: Vec<u32>,
    lo: Vec<u32>,
    hi: Vec<u32>,
    /// The largest `base + 8`: the texels the windows read.
    end: usize,
}

impl Windows {
    fn new(i0: &[u32], i1: &[u32], src_n: usize) -> Self {
        let mut w = Self::default();
        for (a, b) in i0.chunks_exact(8).zip(i1.chunks_exact(8)) {
            let base = a[0];
            let fits =
                base as usize + 8 <= src_n && a.iter().chain(b).all(|&i| i >= base && i - base < 8);
            if !fits {
                break;
            }
            w.base.push(base);
            w.end = w.end.max(base as usize + 8);
            w.lo.extend(a.iter().map(|&i| i - base));
            w.hi.extend(b.iter().map(|&i| i - base));
        }
        w
    }

    /// Pixels the blocks cover.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    fn pixels(&self) -> usize {
        8 * self.base.len()
    }
}

/// An 8-bit channel (round to nearest, clamped; NaN gives 0).
#[inline(always)]
#[allow(clippy::manual_clamp)] // clamp would keep NaN; max-then-min maps it to 0
fn to_u8(x: f32) -> u32 {
    // `max` first maps NaN to 0.
    let y = (x * 255.0 + 0.5).max(0.0).min(255.0);
    // SAFETY: y is finite and in [0, 255]. (A plain `as` would add a NaN and range fix-up per
    // element that keeps the loops from vectorising.)
    unsafe { y.to_int_unchecked::<i32>() as u32 }
}

/// An opaque RGBA8 pixel as its little-endian `u32`.
#[inline(always)]
fn pack(rgb: [f32; 3]) -> u32 {
    to_u8(rgb[0]) | to_u8(rgb[1]) << 8 | to_u8(rgb[2]) << 16 | 0xff00_0000
}

kernel! { avx512:
/// Vertical pass: `out[i] = lerp(bottom[i], top[i], f)`.
pub(super) fn lerp_rows(bottom: &[f32], top: &[f32], f: f32, out: &mut [f32]) {
    for ((o, &b), &t) in out.iter_mut().zip(bottom).zip(top) {
        *o = lerp(b, t, f);
    }
}
}

/// Bilinear sample of `row` between `row[a]` and `row[b]`.
///
/// # Safety
/// `a` and `b` must be in bounds.
#[inline(always)]
unsafe fn sample(row: &[f32], a: usize, b: usize, t: f32) -> f32 {
    // SAFETY: the caller checked the indices.
    unsafe { lerp(*row.get_unchecked(a), *row.get_unchecked(b), t) }
}

/// Panics unless every tap lies inside rows of `len` (checked once per row, so the pixel
/// loops can gather without bounds checks and vectorise).
fn check_taps(i0: &[u32], i1: &[u32], f: &[f32], out: usize, rows: &[&[f32]; 3]) -> usize {
    let len = rows.iter().map(|r| r.len()).min().unwrap_or(0);
    let n = out.min(i0.len()).min(i1.len()).min(f.len());
    // A max reduction (vectorised), not `all` with an early exit: that scalar scan was a
    // third of the dye row kernel's time.
    let max = |t: &[u32]| t.iter().fold(0u32, |m, &i| m.max(i));
    assert!(
        n == 0 || (max(&i0[..n]).max(max(&i1[..n])) as usize) < len,
        "colorize taps out of range"
    );
    n
}

/// The legacy tone (`1 - e^-x`, already in 0..1) or none (the filmic mode's linear light,
/// toned later by the tone pass).
#[inline(always)]
fn tone<const LEGACY: bool>(x: f32) -> f32 {
    if LEGACY { tonemap(x) } else { x }
}

/// Three output planes of one row.
pub(super) type Planes<'a> = [&'a mut [f32]; 3];

/// Where a row kernel writes its pixels: packed RGBA8 straight away (the legacy tone, whose
/// values are final), or three planes of linear light for the tone pass (filmic). Writing
/// the legacy pixels packed keeps its loops as they were before the tone pass existed: one
/// pass, vectorised, with no planes to fill and read back.
trait RowOut {
    /// Pixels it holds.
    fn len(&self) -> usize;
    /// Write `rgb` at `px`.
    ///
    /// # Safety
    /// `px` must be below [`RowOut::len`].
    unsafe fn put(&mut self, px: usize, rgb: [f32; 3]);
}

impl RowOut for &mut [u32] {
    #[inline(always)]
    fn len(&self) -> usize {
        <[u32]>::len(self)
    }

    #[inline(always)]
    unsafe fn put(&mut self, px: usize, rgb: [f32; 3]) {
        // SAFETY: the caller checked px against len.
        unsafe { *self.get_unchecked_mut(px) = pack(rgb) };
    }
}

impl RowOut for Planes<'_> {
    #[inline(always)]
    fn len(&self) -> usize {
        self.iter().map(|p| p.len()).min().unwrap_or(0)
    }

    #[inline(always)]
    unsafe fn put(&mut self, px: usize, rgb: [f32; 3]) {
        // SAFETY: the caller checked px against len, the shortest plane's length.
        unsafe {
            *self[0].get_unchecked_mut(px) = rgb[0];
            *self[1].get_unchecked_mut(px) = rgb[1];
            *self[2].get_unchecked_mut(px) = rgb[2];
        }
    }
}

/// Horizontal pass of the dye colour mode: resample the three vertically interpolated rows
/// and expose (legacy: and tone). Without a saturation change or hue shift the loop is
/// branch-free and vectorises (gathers).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn dye_row<const LEGACY: bool>(
    rows: [&[f32]; 3],
    i0: &[u32],
    i1: &[u32],
    f: &[f32],
    brightness: f32,
    saturation: f32,
    shift: f32,
    mut out: impl RowOut,
) {
    let n = check_taps(i0, i1, f, out.len(), &rows);
    let [r0, r1, r2] = rows;
    if saturation == 1.0 && shift == 0.0 {
        for px in 0..n {
            let (a, b, t) = (i0[px] as usize, i1[px] as usize, f[px]);
            // SAFETY: check_taps.
            let c = unsafe {
                [
                    sample(r0, a, b, t),
                    sample(r1, a, b, t),
                    sample(r2, a, b, t),
                ]
            };
            // SAFETY: px < n <= every plane's length.
            unsafe { out.put(px, map3(c, |x| tone::<LEGACY>(x * brightness))) };
        }
    } else {
        for px in 0..n {
            let (a, b, t) = (i0[px] as usize, i1[px] as usize, f[px]);
            // SAFETY: check_taps.
            let c = unsafe {
                [
                    sample(r0, a, b, t),
                    sample(r1, a, b, t),
                    sample(r2, a, b, t),
                ]
            };
            let [h, s, v] = rgb_to_hsv(map3(c, |x| tone::<LEGACY>(x * brightness)));
            // SAFETY: px < n <= every plane's length.
            unsafe { out.put(px, hsv_to_rgb(h + shift, s * saturation, v)) };
        }
    }
}

/// Horizontal pass of the density-hue mode.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn density_row<const LEGACY: bool>(
    rows: [&[f32]; 3],
    i0: &[u32],
    i1: &[u32],
    f: &[f32],
    brightness: f32,
    saturation: f32,
    shift: f32,
    mut out: impl RowOut,
) {
    let n = check_taps(i0, i1, f, out.len(), &rows);
    let [r0, r1, r2] = rows;
    for px in 0..n {
        let (a, b, t) = (i0[px] as usize, i1[px] as usize, f[px]);
        // SAFETY: check_taps.
        let d = unsafe { (sample(r0, a, b, t) + sample(r1, a, b, t)) + sample(r2, a, b, t) };
        let hue = d.mul_add(DENSITY_HUE_TURNS, shift);
        let rgb = hsv_to_rgb(hue, saturation, tone::<LEGACY>(d * brightness));
        // SAFETY: px < n <= every plane's length.
        unsafe { out.put(px, rgb) };
    }
}

/// One row of the velocity-hue mode (row `py` of `height`, top first).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn velocity_row<const LEGACY: bool>(
    src: &Source,
    py: usize,
    width: usize,
    height: usize,
    brightness: f32,
    saturation: f32,
    shift: f32,
    mut out: impl RowOut,
) {
    let n = out.len().min(width);
    let y = (height as f32 - py as f32 - 0.5) * src.h as f32 / height as f32;
    for px in 0..n {
        // Pixel centre in simulation cells.
        let x = (px as f32 + 0.5) * src.w as f32 / width as f32;
        let u = bilerp(src.u, src.w + 1, src.h, x, y - 0.5);
        let v = bilerp(src.v, src.w, src.h + 1, x - 0.5, y);
        // sqrt is correctly rounded everywhere; libm's hypot is not.
        let speed = u.mul_add(u, v * v).sqrt();
        let value = tone::<LEGACY>(speed * VELOCITY_VALUE_SCALE * brightness);
        let rgb = hsv_to_rgb(atan2_turns(v, u) + shift, saturation, value);
        // SAFETY: px < n <= every plane's length.
        unsafe { out.put(px, rgb) };
    }
}

/// Hue (turns) of barely warm fluid's colour (dark red) and how far it runs towards yellow as
/// the fluid heats, in the Temperature colour mode.
pub const FIRE_HUE_TURNS: f32 = 0.14;
/// How fast the fire's colour whitens as it heats (its saturation falls as `e^(-T k)`).
pub const FIRE_WHITENING: f32 = 0.35;
/// Exposure of a unit of temperature in the Temperature mode.
pub const FIRE_EXPOSURE: f32 = 2.0;
/// Hue of fluid colder than 0 (blue).
pub const COLD_HUE_TURNS: f32 = 0.62;

/// The Temperature mode's colour (hue in turns before the shift, saturation before the
/// saturation knob, and the exposure before the tone) of temperature `t` times the
/// brightness: a fire palette, or blue for cold.
#[inline(always)]
pub fn fire(t: f32) -> (f32, f32, f32) {
    let t = if t.is_finite() { t } else { 0.0 };
    if t >= 0.0 {
        let hue = FIRE_HUE_TURNS * (1.0 - crate::kernels::math::exp(-t));
        (
            hue,
            crate::kernels::math::exp(-t * FIRE_WHITENING),
            t * FIRE_EXPOSURE,
        )
    } else {
        (COLD_HUE_TURNS, 1.0, -t * FIRE_EXPOSURE)
    }
}

/// One row of the Temperature mode: the temperature sampled bilinearly at each pixel's centre
/// through [`fire`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn temperature_row<const LEGACY: bool>(
    src: &Source,
    py: usize,
    width: usize,
    height: usize,
    brightness: f32,
    saturation: f32,
    shift: f32,
    mut out: impl RowOut,
) {
    let n = out.len().min(width);
    let y = (height as f32 - py as f32 - 0.5) * src.h as f32 / height as f32;
    let has_heat = src.heat.len() >= src.w * src.h && src.w > 0 && src.h > 0;
    for px in 0..n {
        // Pixel centre in simulation cells; the temperature sits at cell centres.
        let x = (px as f32 + 0.5) * src.w as f32 / width as f32;
        let t = if has_heat {
            bilerp(src.heat, src.w, src.h, x - 0.5, y - 0.5)
        } else {
            0.0
        };
        let (hue, sat, exposure) = fire(t * brightness);
        let rgb = hsv_to_rgb(hue + shift, sat * saturation, tone::<LEGACY>(exposure));
        // SAFETY: px < n <= every plane's length.
        unsafe { out.put(px, rgb) };
    }
}

kernel! {
#[allow(clippy::too_many_arguments)]
fn temperature_row_light(src: &Source, py: usize, width: usize, height: usize, brightness: f32, saturation: f32, shift: f32, out: Planes) {
    temperature_row::<false>(src, py, width, height, brightness, saturation, shift, out);
}
}
kernel! {
#[allow(clippy::too_many_arguments)]
fn temperature_row_legacy(src: &Source, py: usize, width: usize, height: usize, brightness: f32, saturation: f32, shift: f32, out: &mut [u32]) {
    temperature_row::<true>(src, py, width, height, brightness, saturation, shift, out);
}
}

// The row kernels for each tone: the target features (AVX2, FMA) of a multiversioned function
// reach only what is inlined into it, and multiversion does not carry const generics, so each
// instance gets its own wrapper (without FMA, `mul_add` is a slow libm call).
kernel! {
#[allow(clippy::too_many_arguments)]
fn dye_row_legacy(rows: [&[f32]; 3], i0: &[u32], i1: &[u32], f: &[f32], brightness: f32, saturation: f32, shift: f32, out: &mut [u32]) {
    dye_row::<true>(rows, i0, i1, f, brightness, saturation, shift, out);
}
}
kernel! {
#[allow(clippy::too_many_arguments)]
fn dye_row_light(rows: [&[f32]; 3], i0: &[u32], i1: &[u32], f: &[f32], brightness: f32, saturation: f32, shift: f32, out: Planes) {
    dye_row::<false>(rows, i0, i1, f, brightness, saturation, shift, out);
}
}
kernel! {
#[allow(clippy::too_many_arguments)]
fn density_row_legacy(rows: [&[f32]; 3], i0: &[u32], i1: &[u32], f: &[f32], brightness: f32, saturation: f32, shift: f32, out: &mut [u32]) {
    density_row::<true>(rows, i0, i1, f, brightness, saturation, shift, out);
}
}
kernel! {
#[allow(clippy::too_many_arguments)]
fn density_row_light(rows: [&[f32]; 3], i0: &[u32], i1: &[u32], f: &[f32], brightness: f32, saturation: f32, shift: f32, out: Planes) {
    density_row::<false>(rows, i0, i1, f, brightness, saturation, shift, out);
}
}
kernel! {
#[allow(clippy::too_many_arguments)]
fn velocity_row_legacy(src: &Source, py: usize, width: usize, height: usize, brightness: f32, saturation: f32, shift: f32, out: &mut [u32]) {
    velocity_row::<true>(src, py, width, height, brightness, saturation, shift, out);
}
}
kernel! {
#[allow(clippy::too_many_arguments)]
fn velocity_row_light(src: &Source, py: usize, width: usize, height: usize, brightness: f32, saturation: f32, shift: f32, out: Planes) {
    velocity_row::<false>(src, py, width, height, brightness, saturation, shift, out);
}
}

/// Per-thread scratch: three interpolated dye rows, three rows of light (legacy: of display
/// values) and a row of packed pixels.
struct Scratch {
    rows: [Vec<f32>; 3],
    light: [Vec<f32>; 3],
    pixels: Vec<u32>,
}

/// The colour knobs, sanitised: exposure, saturation (0..1) and hue shift in turns.
#[derive(Clone, Copy)]
pub(super) struct Knobs {
    brightness: f32,
    saturation: f32,
    shift: f32,
}

impl Knobs {
    pub(super) fn new(look: &Look) -> Self {
        Self {
            brightness: if look.brightness.is_finite() {
                look.brightness.max(0.0)
            } else {
                1.0
            },
            saturation: if look.saturation.is_finite() {
                look.saturation.clamp(0.0, 1.0)
            } else {
                1.0
            },
            shift: if look.hue_shift.is_finite() {
                look.hue_shift / 360.0
            } else {
                0.0
            },
        }
    }
}

/// The leading blocks of a plain dye row (no saturation change or hue shift) through the
/// AVX2 window kernel when the CPU has it; returns the first pixel it did not write and the
/// planes from there on, for the portable kernel to finish (the bits are the same).
fn dye_row_light_windows<'a>(
    rows: [&[f32]; 3],
    taps: &RowTaps,
    brightness: f32,
    saturation: f32,
    shift: f32,
    planes: Planes<'a>,
) -> (usize, Planes<'a>) {
    #[cfg(target_arch = "x86_64")]
    if saturation == 1.0 && shift == 0.0 && wide::available() {
        let w = &taps.windows;
        let n = w.pixels();
        let fits = planes.iter().all(|p| p.len() >= n)
            && rows.iter().all(|r| r.len() >= w.end)
            && taps.f.len() >= n;
        if fits {
            let [p0, p1, p2] = planes;
            let (a0, b0) = p0.split_at_mut(n);
            let (a1, b1) = p1.split_at_mut(n);
            let (a2, b2) = p2.split_at_mut(n);
            // SAFETY: AVX2 and FMA were detected; every window lies in the rows (each base + 8
            // is at most `end`, checked above), the planes and the weights hold `n` values.
            unsafe { wide::dye_rows(rows, w, &taps.f[..n], brightness, [a0, a1, a2]) };
            return (n, [b0, b1, b2]);
        }
    }
    // (Unused off x86_64.)
    let _ = (rows, taps, brightness, saturation, shift);
    (0, planes)
}

/// The resampling taps of a `width x height` picture of `src`'s dye.
pub(super) struct Resample {
    xs: RowTaps,
    ys: Vec<(usize, usize, f32)>,
}

impl Resample {
    pub(super) fn new(src: &Source, width: usize, height: usize) -> Self {
        Self {
            xs: RowTaps::new(width, src.dw),
            ys: taps(height, src.dh, true),
        }
    }
}

/// One row (`py`, top first) of linear light (the filmic tone's) into `planes`; `rows` is
/// scratch of three dye rows.
#[allow(clippy::too_many_arguments)]
pub(super) fn light_row(
    src: &Source,
    look: &Look,
    k: Knobs,
    taps: &Resample,
    (width, height): (usize, usize),
    py: usize,
    rows: &mut [Vec<f32>; 3],
    out: Planes,
) {
    let Knobs {
        brightness,
        saturation,
        shift,
    } = k;
    let [o0, o1, o2] = out;
    let planes = [&mut *o0, &mut *o1, &mut *o2];
    match look.color_mode {
        ColorMode::Dye | ColorMode::DensityHue => {
            let dw = src.dw;
            let (j0, j1, fy) = taps.ys[py];
            for (plane, r) in src.dye.iter().zip(rows.iter_mut()) {
                let bottom = &plane[j0 * dw..(j0 + 1) * dw];
                let top = &plane[j1 * dw..(j1 + 1) * dw];
                lerp_rows(bottom, top, fy, r);
            }
            let rows = [&rows[0][..], &rows[1][..], &rows[2][..]];
            let (i0, i1, f) = (&taps.xs.i0[..], &taps.xs.i1[..], &taps.xs.f[..]);
            if look.color_mode == ColorMode::Dye {
                let (start, planes) =
                    dye_row_light_windows(rows, &taps.xs, brightness, saturation, shift, planes);
                let (i0, i1, f) = (&i0[start..], &i1[start..], &f[start..]);
                dye_row_light(rows, i0, i1, f, brightness, saturation, shift, planes);
            } else {
                density_row_light(rows, i0, i1, f, brightness, saturation, shift, planes);
            }
        }
        ColorMode::VelocityHue => velocity_row_light(
            src, py, width, height, brightness, saturation, shift, planes,
        ),
        ColorMode::Temperature => temperature_row_light(
            src, py, width, height, brightness, saturation, shift, planes,
        ),
    }
    if let Some(row) = src.particle_row(py, width) {
        add_particle_row([o0, o1, o2], row);
    }
}

/// Render `src` with `look` into `out` (`width * height * 4` bytes, RGBA, top row first).
///
/// Rows run in parallel. Each output row interpolates its two dye rows vertically once (so
/// upscaling costs one lerp per source cell, not per pixel), then resamples horizontally and
/// exposes into three planes of light in a vectorised kernel. The legacy tone mode tones them
/// there (`1 - e^-x`) and packs them; the filmic mode hands the linear light to the display
/// pass ([`super::display`]), row by row. (With effects, [`super::picture`] keeps the whole
/// frame's light instead, since bloom and rays need all of it.)
pub fn colorize(src: &Source, look: &Look, width: usize, height: usize, out: &mut [u8]) {
    assert_eq!(out.len(), width * height * 4, "frame buffer size");
    if width == 0 || height == 0 {
        return;
    }
    let k = Knobs::new(look);
    let Knobs {
        brightness,
        saturation,
        shift,
    } = k;
    let legacy = look.tone == ToneMode::Legacy;
    let resample = Resample::new(src, width, height);
    let (xs, ys) = (&resample.xs, &resample.ys);
    let dw = src.dw;
    out.par_chunks_mut(width * 4)
        .with_min_len(crate::kernels::band::min_rows(width * 4))
        .enumerate()
        .for_each_init(
            || Scratch {
                rows: std::array::from_fn(|_| vec![0.0; dw]),
                light: std::array::from_fn(|_| vec![0.0; width]),
                pixels: vec![0; width],
            },
            |scratch, (py, row)| {
                let Scratch {
                    rows,
                    light,
                    pixels,
                } = scratch;
                crate::kernels::band::with_pixels(row, pixels, |pixels| {
                    let [l0, l1, l2] = light;
                    if legacy {
                        match look.color_mode {
                            ColorMode::Dye | ColorMode::DensityHue => {
                                let (j0, j1, fy) = ys[py];
                                for (plane, r) in src.dye.iter().zip(rows.iter_mut()) {
                                    let bottom = &plane[j0 * dw..(j0 + 1) * dw];
                                    let top = &plane[j1 * dw..(j1 + 1) * dw];
                                    lerp_rows(bottom, top, fy, r);
                                }
                                let rows = [&rows[0][..], &rows[1][..], &rows[2][..]];
                                let (i0, i1, f) = (&xs.i0[..], &xs.i1[..], &xs.f[..]);
                                if look.color_mode == ColorMode::Dye {
                                    dye_row_legacy(
                                        rows, i0, i1, f, brightness, saturation, shift, pixels,
                                    );
                                } else {
                                    density_row_legacy(
                                        rows, i0, i1, f, brightness, saturation, shift, pixels,
                                    );
                                }
                            }
                            ColorMode::VelocityHue => velocity_row_legacy(
                                src, py, width, height, brightness, saturation, shift, pixels,
                            ),
                            ColorMode::Temperature => temperature_row_legacy(
                                src, py, width, height, brightness, saturation, shift, pixels,
                            ),
                        }
                        if let Some(row) = src.particle_row(py, width) {
                            add_particle_row_legacy(pixels, row);
                        }
                    } else {
                        let planes = [&mut l0[..], &mut l1[..], &mut l2[..]];
                        light_row(src, look, k, &resample, (width, height), py, rows, planes);
                        let light = [&l0[..], &l1[..], &l2[..]];
                        super::tone::tone_row(light, py, pixels);
                    }
                });
            },
        );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fire palette: no heat is black; as it heats the colour runs from red towards
    /// yellow (hue up to 0.14 turns) and whitens (saturation down), brighter all the way;
    /// cold is blue; broken values are no heat.
    #[test]
    fn the_fire_palette_runs_red_to_yellow_to_white() {
        assert_eq!(fire(0.0), (0.0, 1.0, 0.0));
        let mut last = fire(0.0);
        for k in 1..=40 {
            let f = fire(k as f32 * 0.25);
            assert!(
                f.0 > last.0 && f.0 < FIRE_HUE_TURNS,
                "hue {f:?} after {last:?}"
            );
            assert!(f.1 < last.1 && f.1 > 0.0, "saturation {f:?} after {last:?}");
            assert!(f.2 > last.2, "exposure {f:?} after {last:?}");
            last = f;
        }
        // At 1 unit: hue 0.14 (1 - 1/e) = 0.0885 (orange-red), saturation e^-0.35 = 0.705.
        let (hue, sat, exposure) = fire(1.0);
        approx::assert_relative_eq!(hue, 0.0885, max_relative = 1e-3);
        approx::assert_relative_eq!(sat, 0.7047, max_relative = 1e-3);
        approx::assert_relative_eq!(exposure, FIRE_EXPOSURE);
        assert_eq!(fire(-0.5), (COLD_HUE_TURNS, 1.0, 0.5 * FIRE_EXPOSURE));
        for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            assert_eq!(fire(bad), fire(0.0));
        }
    }

    /// The window kernel's blocks and the portable kernel give the same bits, upscaling (all
    /// blocks), at the same size, downscaling (no block) and with ragged ends.
    #[test]
    fn window_rows_match_the_portable_kernel() {
        let mut seed = 12345u32;
        let mut noise = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1u32 << 24) as f32 * 3.0
        };
        let mut wide_blocks = 0;
        for (out_n, src_n) in [
            (1280, 910),
            (1280, 256),
            (37, 9),
            (64, 64),
            (640, 910),
            (8, 8),
            (9, 1),
            (7, 3),
        ] {
            let rows: Vec<Vec<f32>> = (0..3)
                .map(|_| (0..src_n).map(|_| noise()).collect())
                .collect();
            let rows = [&rows[0][..], &rows[1][..], &rows[2][..]];
            let taps = RowTaps::new(out_n, src_n);
            let mut want: [Vec<f32>; 3] = std::array::from_fn(|_| vec![0.0; out_n]);
            let [w0, w1, w2] = &mut want;
            let (i0, i1, f) = (&taps.i0[..], &taps.i1[..], &taps.f[..]);
            dye_row_light(rows, i0, i1, f, 1.7, 1.0, 0.0, [w0, w1, w2]);
            let mut got: [Vec<f32>; 3] = std::array::from_fn(|_| vec![0.0; out_n]);
            let [g0, g1, g2] = &mut got;
            let (start, planes) = dye_row_light_windows(rows, &taps, 1.7, 1.0, 0.0, [g0, g1, g2]);
            dye_row_light(
                rows,
                &i0[start..],
                &i1[start..],
                &f[start..],
                1.7,
                1.0,
                0.0,
                planes,
            );
            wide_blocks += start / 8;
            for p in 0..3 {
                for x in 0..out_n {
                    assert_eq!(
                        got[p][x].to_bits(),
                        want[p][x].to_bits(),
                        "{out_n}/{src_n} plane {p} pixel {x}"
                    );
                }
            }
            if 6 * out_n >= 7 * src_n && out_n >= 16 {
                // Upscaling by 7/6 or more (eight pixels then span at most seven texels): the
                // blocks reach the pixels of the last eight texels.
                assert!(
                    taps.windows.pixels() + 8 * out_n.div_ceil(src_n) + 8 >= out_n,
                    "{out_n}/{src_n}: {}",
                    taps.windows.pixels()
                );
            }
        }
        #[cfg(target_arch = "x86_64")]
        if wide::available() {
            assert!(
                wide_blocks > 100,
                "the window kernel ran on {wide_blocks} blocks"
            );
        }
    }

    fn look(mode: ColorMode) -> Look {
        Look {
            color_mode: mode,
            tone: ToneMode::Legacy,
            ..Look::default()
        }
    }

    fn filmic(mode: ColorMode) -> Look {
        Look {
            color_mode: mode,
            ..Look::default()
        }
    }

    /// A 1x1 picture of a 1x1 dye grid holding `rgb`, in the filmic look.
    fn filmic_pixel(rgb: [f32; 3]) -> [u8; 3] {
        let src = Source {
            w: 1,
            h: 1,
            u: &[0.0; 2],
            v: &[0.0; 2],
            dw: 1,
            dh: 1,
            dye: [&[rgb[0]], &[rgb[1]], &[rgb[2]]],
            heat: &[],
            particles: None,
        };
        let mut out = vec![0; 4];
        colorize(&src, &filmic(ColorMode::Dye), 1, 1, &mut out);
        assert_eq!(out[3], 255);
        [out[0], out[1], out[2]]
    }

    #[test]
    fn dye_mode_known_answer_and_flip() {
        // 1x2 dye grid: bottom cell red 1, top cell empty. A 1x2 picture shows the top row
        // first: black, then red 1 - e^-1 = 0.632 -> 161.
        let zeros = [0.0; 2];
        let red = [1.0, 0.0];
        let src = Source {
            w: 1,
            h: 2,
            u: &[0.0; 4],
            v: &[0.0; 3],
            dw: 1,
            dh: 2,
            dye: [&red, &zeros, &zeros],
            heat: &[],
            particles: None,
        };
        let mut out = vec![0; 8];
        colorize(&src, &look(ColorMode::Dye), 1, 2, &mut out);
        assert_eq!(out, vec![0, 0, 0, 255, 161, 0, 0, 255]);
    }

    #[test]
    fn filmic_known_answers() {
        // Pixel (0, 0) has dither 0, so the values round down. No dye: black.
        assert_eq!(filmic_pixel([0.0; 3]), [0, 0, 0]);
        // Dye 1 of red: the curve gives 0.8038, sRGB 0.9082, 255 * 0.9082 = 231.6 (legacy
        // showed the same dye as 161: 1 - e^-1, unencoded).
        assert_eq!(filmic_pixel([1.0, 0.0, 0.0]), [231, 0, 0]);
        // Grey 0.18: 0.2669 -> 0.5535 -> 141.1.
        assert_eq!(filmic_pixel([0.18; 3]), [141, 141, 141]);
        // Far past white: white, never above.
        assert_eq!(filmic_pixel([50.0; 3]), [255, 255, 255]);
    }

    /// Red and green dye mixed half and half (the middle of where two notes' colours meet)
    /// render yellow, bright and saturated: hue 60 degrees, as light adds. The legacy look
    /// turned the same mix into a dull olive, (100, 100, 0).
    #[test]
    fn red_and_green_make_yellow_not_brown() {
        for amount in [0.25, 0.5, 1.0, 4.0] {
            let [r, g, b] = filmic_pixel([amount, amount, 0.0]);
            let [h, s, v] = rgb_to_hsv([r, g, b].map(|c| f32::from(c) / 255.0));
            assert!(
                (h * 360.0 - 60.0).abs() < 2.0,
                "{amount}: hue {}",
                h * 360.0
            );
            assert!(s > 0.95, "{amount}: saturation {s}");
            // Half and half (0.5 each) reads at 0.80, where legacy gave 0.39.
            assert!(v > 0.6 || amount < 0.5, "{amount}: value {v}");
        }
        let src = Source {
            w: 1,
            h: 1,
            u: &[0.0; 2],
            v: &[0.0; 2],
            dw: 1,
            dh: 1,
            dye: [&[0.5], &[0.5], &[0.0]],
            heat: &[],
            particles: None,
        };
        let mut out = vec![0; 4];
        colorize(&src, &look(ColorMode::Dye), 1, 1, &mut out);
        assert_eq!(out, [100, 100, 0, 255]);
    }

    #[test]
    fn velocity_mode_hue_follows_direction() {
        // Uniform flow to the right (hue 0, red) on a 2x1 grid: interior face only.
        let src = Source {
            w: 2,
            h: 1,
            u: &[0.0, 1.0, 0.0],
            v: &[0.0; 4],
            dw: 2,
            dh: 1,
            dye: [&[0.0; 2], &[0.0; 2], &[0.0; 2]],
            heat: &[],
            particles: None,
        };
        let mut out = vec![0; 2 * 4];
        colorize(&src, &look(ColorMode::VelocityHue), 2, 1, &mut out);
        assert!(out[0] > 0 && out[1] == 0 && out[2] == 0, "{out:?}");
    }
}
