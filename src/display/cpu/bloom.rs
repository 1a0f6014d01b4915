//! Bloom: the light above a threshold, spread wide through a mip chain, added back before
//! the tone curve (Jimenez, "Next generation post processing in Call of Duty", 2014, with a
//! separable filter in place of the 13 bilinear taps, since these passes fetch texels by
//! hand). Mirrors shaders/bloom.wgsl. Linear RGB throughout; rows top first.
//!
//! - prefilter: the frame's light, averaged over 2x2 pixels into level 0 (half the frame,
//!   rounded up) and passed through a soft threshold ([`soft_threshold`]);
//! - down: level k to level k + 1 (half again) with the `[1 3 3 1] / 8` filter per axis, which
//!   keeps the mean (every texel's weights over the coarser level add up to a quarter);
//! - up: from the coarsest level back to level 0, `up_k = (1 - s) down_k + s tent(up_k+1)`,
//!   a bilinear sample of the coarser level blurred by a 3x3 tent (also mean-keeping), so the
//!   glow is a weighted mean of every level, the weights set by the spread `s`;
//! - glow: `bloom * up_0`, plus the sunrays (`super::sunrays`) sampled up to level 0: what the
//!   tone pass samples up to the frame and adds to the light.
//!
//! Edges clamp (a texel past the edge reads the edge texel). Light is made finite and capped
//! at [`BLOOM_MAX_LIGHT`] as it enters (NaN as 0), so a broken pixel cannot poison the glow.
//! The level count follows the frame size, so the glow spans the same share of any frame.
//!
//! Why this file is long: over 800 lines, a third of them its tests: prefilter, down, up and
//! glow are the stages of one mip chain and share its levels and row kernels, so they stay in
//! one file.

use super::sunrays;
pub use crate::display::effects::{
    BLOOM_MAX_LEVELS, BLOOM_MAX_LIGHT, BLOOM_MIN_EDGE_PX, Rgb, level_sizes,
};
use crate::fluid::Effects;
use crate::kernels::math::{brightest, map3};
use rayon::prelude::*;

/// The down filter's weights per axis, for texels `2i - 1 ..= 2i + 2`.
const DOWN_WEIGHTS: [f32; 4] = [0.125, 0.375, 0.375, 0.125];

/// Light made finite and capped: NaN and negatives to 0, +inf to [`BLOOM_MAX_LIGHT`].
#[inline(always)]
#[allow(clippy::manual_clamp)] // clamp would keep NaN; max-then-min maps it to 0
pub fn sane(x: f32) -> f32 {
    x.max(0.0).min(BLOOM_MAX_LIGHT)
}

/// The soft threshold (Unity's, after Karis): light whose brightest channel `m` is below
/// `threshold - knee` gives nothing, above `threshold + knee` it gives `m - threshold`, and in
/// between a quadratic joins the two; the colour keeps its hue. `knee` is absolute; `c` is
/// [`sane`].
#[inline(always)]
pub fn soft_threshold(c: Rgb, threshold: f32, knee: f32) -> Rgb {
    // The light is sane (no NaN), so `maxps` gives what `f32::max` would, in fewer operations.
    let m = brightest(c);
    let soft = (m - threshold + knee).max(0.0).min(2.0 * knee);
    let soft = soft * soft / (4.0 * knee + 1.0e-5);
    let hard = m - threshold;
    let above = if soft > hard { soft } else { hard };
    let k = above / m.max(1.0e-5);
    map3(c, |x| x * k)
}

/// Bilinear taps of pixel `p` of `out_n` over `src_n` texels: the two texels and the weight
/// of the second (centres aligned, clamped at the edges; as colorize's).
#[inline(always)]
pub fn tap(p: usize, out_n: usize, src_n: usize) -> (usize, usize, f32) {
    let x = ((p as f32 + 0.5) * src_n as f32 / out_n as f32 - 0.5)
        .max(0.0)
        .min((src_n - 1) as f32);
    let i0 = x as usize;
    (i0, (i0 + 1).min(src_n - 1), x - i0 as f32)
}

/// One level: its size, what came down (thresholded light, filtered) and what goes up.
#[derive(Default)]
pub struct Level {
    pub w: usize,
    pub h: usize,
    pub down: Vec<Rgb>,
    pub up: Vec<Rgb>,
}

impl Level {
    fn new((w, h): (usize, usize)) -> Self {
        Self {
            w,
            h,
            down: vec![[0.0; 3]; w * h],
            up: vec![[0.0; 3]; w * h],
        }
    }
}

/// The chain's buffers for one frame size, kept between frames.
#[derive(Default)]
pub struct Chain {
    /// The frame size the levels are for.
    pub size: (usize, usize),
    pub levels: Vec<Level>,
    /// The sunrays, at the size of level [`Chain::rays_level`].
    pub rays: Vec<Rgb>,
    /// The sunrays' scratch.
    tracer: sunrays::Rays,
    /// The sunrays sampled across at level 0's columns.
    across: Across,
}

/// The sunrays' rows sampled across at level 0's columns (see `Glow::new`), and those
/// columns' taps, for a level 0 `size.0` wide over rays `size.1` wide.
#[derive(Default)]
struct Across {
    size: (usize, usize),
    xs: Vec<(u32, u32, f32)>,
    rows: Vec<f32>,
}

impl Chain {
    /// Make the levels fit a `w x h` frame.
    pub fn ensure(&mut self, w: usize, h: usize) {
        if self.size == (w, h) && !self.levels.is_empty() {
            return;
        }
        self.size = (w, h);
        self.levels = level_sizes(w, h).into_iter().map(Level::new).collect();
        let r = &self.levels[self.rays_level()];
        self.rays = vec![[0.0; 3]; r.w * r.h];
    }

    /// The level the sunrays are traced on (see [`sunrays::rays_level`]).
    pub fn rays_level(&self) -> usize {
        let sizes: Vec<_> = self.levels.iter().map(|l| (l.w, l.h)).collect();
        sunrays::rays_level(&sizes)
    }

    /// Whether `fx` asks for a glow (bloom or sunrays).
    pub fn glows(fx: &Effects) -> bool {
        fx.bloom > 0.0 || fx.rays > 0.0
    }

    /// The glow (level 0's `up`): bloom and sunrays of `light` (three planes of a `w x h`
    /// frame, rows top first), or `false` when `fx` asks for neither.
    pub fn run(&mut self, light: [&[f32]; 3], w: usize, h: usize, fx: &Effects) -> bool {
        if !Self::glows(fx) {
            return false;
        }
        self.ensure(w, h);
        prefilter(light, w, h, fx, &mut self.levels[0]);
        self.finish(fx);
        true
    }

    /// The rest of [`Chain::run`] once level 0's `down` holds the prefiltered light (see
    /// [`prefilter_rows`]); the chain must have been sized with [`Chain::ensure`].
    pub fn finish(&mut self, fx: &Effects) {
        let r = self.rays_level();
        let deepest = if fx.bloom > 0.0 {
            self.levels.len() - 1
        } else {
            r
        };
        for k in 0..deepest {
            let (fine, coarse) = self.levels.split_at_mut(k + 1);
            down(&fine[k], &mut coarse[0]);
        }
        if fx.rays > 0.0 {
            let l = &self.levels[r];
            self.tracer.trace(&l.down, l.w, l.h, &mut self.rays);
        }
        let size0 = (self.levels[0].w, self.levels[0].h);
        let rays = (fx.rays > 0.0).then(|| {
            let l = &self.levels[r];
            (&self.rays[..], l.w, l.h)
        });
        let glow = Glow::new(fx.bloom, rays, fx.rays, size0, &mut self.across);
        if fx.bloom > 0.0 {
            let last = self.levels.len() - 1;
            let l = &mut self.levels[last];
            l.up.copy_from_slice(&l.down);
            for k in (0..last).rev() {
                let (fine, coarse) = self.levels.split_at_mut(k + 1);
                // Level 0 becomes the glow row by row, while each row is in cache.
                let glow = (k == 0).then_some(&glow);
                up(&coarse[0], &mut fine[k], fx.bloom_radius, glow);
            }
            if last == 0 {
                glow_level(&mut self.levels[0], &glow);
            }
        } else {
            glow_level(&mut self.levels[0], &glow);
        }
    }
}

kernel! { avx512:
/// `out[i] = (sane(a[2i]) + sane(b[2i]) + sane(a[2i + 1]) + sane(b[2i + 1])) / 4`: the
/// prefilter's 2x2 averages of one channel (a last odd column pairs with itself).
fn average_2x2(a: &[f32], b: &[f32], out: &mut [f32]) {
    let w = a.len().min(b.len());
    let pairs = (w / 2).min(out.len());
    for ((o, a), b) in out[..pairs].iter_mut().zip(a.chunks_exact(2)).zip(b.chunks_exact(2)) {
        *o = ((sane(a[0]) + sane(b[0])) + (sane(a[1]) + sane(b[1]))) * 0.25;
    }
    if w % 2 == 1 && pairs < out.len() {
        let s = sane(a[w - 1]) + sane(b[w - 1]);
        out[pairs] = (s + s) * 0.25;
    }
}
}

kernel! { avx512:
/// One row of level 0 from its three planes of 2x2 averages: soft-thresholded.
fn threshold_row(c: [&[f32]; 3], threshold: f32, knee: f32, row: &mut [Rgb]) {
    let [r, g, b] = c;
    for (i, out) in row.iter_mut().enumerate().take(r.len().min(g.len()).min(b.len())) {
        *out = soft_threshold([r[i], g[i], b[i]], threshold, knee);
    }
}
}

/// Scratch of [`prefilter_rows`]: three rows of level 0's width.
pub type PrefilterScratch = [Vec<f32>; 3];

/// One row of level 0 from the frame rows `top` and `bottom` (the same row twice for the last
/// row of a frame with an odd height): 2x2 averages of sane light, soft-thresholded with
/// `fx`'s threshold and knee.
pub fn prefilter_rows(
    top: [&[f32]; 3],
    bottom: [&[f32]; 3],
    fx: &Effects,
    scratch: &mut PrefilterScratch,
    row: &mut [Rgb],
) {
    for ((avg, t), b) in scratch.iter_mut().zip(top).zip(bottom) {
        avg.resize(row.len(), 0.0);
        average_2x2(t, b, avg);
    }
    let knee = fx.bloom_threshold * fx.bloom_knee;
    let c = [&scratch[0][..], &scratch[1][..], &scratch[2][..]];
    threshold_row(c, fx.bloom_threshold, knee, row);
}

/// Level 0 from the frame: 2x2 averages of sane light, soft-thresholded.
fn prefilter(light: [&[f32]; 3], w: usize, h: usize, fx: &Effects, l: &mut Level) {
    let lw = l.w;
    l.down
        .par_chunks_mut(lw)
        .with_min_len(crate::kernels::band::min_rows(w * 2))
        .enumerate()
        .for_each_init(PrefilterScratch::default, |scratch, (j, row)| {
            let (y0, y1) = (2 * j, (2 * j + 1).min(h - 1));
            let top = light.map(|p| &p[y0 * w..(y0 + 1) * w]);
            let bottom = light.map(|p| &p[y1 * w..(y1 + 1) * w]);
            prefilter_rows(top, bottom, fx, scratch, row);
        });
}

kernel! { avx512:
/// `out = sum_t w[t] rows[t]`, element by element: the vertical half of a separable filter
/// (rows of texels as flat floats, so it vectorises).
fn weigh_rows(rows: [&[f32]; 4], w: [f32; 4], out: &mut [f32]) {
    let [a, b, c, d] = rows;
    let n = out.len().min(a.len()).min(b.len()).min(c.len()).min(d.len());
    for i in 0..n {
        out[i] = w[3].mul_add(d[i], w[2].mul_add(c[i], w[1].mul_add(b[i], w[0] * a[i])));
    }
}
}

/// Rows `ys` of a level (`w` texels wide) as flat floats.
fn rows_at(texels: &[Rgb], w: usize, ys: [usize; 4]) -> [&[f32]; 4] {
    ys.map(|y| bytemuck::cast_slice::<Rgb, f32>(&texels[y * w..(y + 1) * w]))
}

kernel! { avx512:
/// One row of the coarser level from the fine rows already weighed vertically (`col`, the
/// fine level's width): `[1 3 3 1] / 8` over texels `2i - 1 ..= 2i + 2`, clamped.
fn down_row(col: &[Rgb], row: &mut [Rgb]) {
    let last = col.len() as isize - 1;
    let texel = |i: usize| {
        let mut acc = [0.0f32; 3];
        for (t, wx) in DOWN_WEIGHTS.into_iter().enumerate() {
            let s = col[(2 * i as isize - 1 + t as isize).clamp(0, last) as usize];
            for c in 0..3 {
                acc[c] = wx.mul_add(s[c], acc[c]);
            }
        }
        acc
    };
    // Texels 1 .. hi read no clamped texel: there the sums run over flat channels with the
    // same operations in the same order, which vectorises.
    let n = row.len();
    let lo = 1.min(n);
    let hi = if col.len() >= 3 { (col.len() - 3) / 2 + 1 } else { 0 }.clamp(lo, n);
    for i in (0..lo).chain(hi..n) {
        row[i] = texel(i);
    }
    let f = bytemuck::cast_slice::<Rgb, f32>(col);
    let out = bytemuck::cast_slice_mut::<Rgb, f32>(&mut row[lo..hi]);
    let w = DOWN_WEIGHTS;
    for (k, o) in out.chunks_exact_mut(3).enumerate() {
        let src = &f[6 * k + 6 * lo - 3..][..12];
        for c in 0..3 {
            let acc = w[0].mul_add(src[c], 0.0);
            let acc = w[1].mul_add(src[3 + c], acc);
            let acc = w[2].mul_add(src[6 + c], acc);
            o[c] = w[3].mul_add(src[9 + c], acc);
        }
    }
}
}

/// `fine.down` to `coarse.down`: `[1 3 3 1] / 8` per axis over texels `2i - 1 ..= 2i + 2`,
/// separably (rows, then columns).
fn down(fine: &Level, coarse: &mut Level) {
    let (fw, fh) = (fine.w, fine.h);
    let cw = coarse.w;
    let clamp = |x: isize, n: usize| x.clamp(0, n as isize - 1) as usize;
    coarse
        .down
        .par_chunks_mut(cw)
        .with_min_len(crate::kernels::band::min_rows(fw * 4))
        .enumerate()
        .for_each_init(
            || vec![[0.0f32; 3]; fw],
            |col, (j, row)| {
                let ys: [usize; 4] =
                    std::array::from_fn(|t| clamp(2 * j as isize - 1 + t as isize, fh));
                let flat = bytemuck::cast_slice_mut::<Rgb, f32>(col);
                weigh_rows(rows_at(&fine.down, fw, ys), DOWN_WEIGHTS, flat);
                down_row(col, row);
            },
        );
}

/// The tent-filtered bilinear taps of fine pixel `p` over `src_n` coarse texels: four texels
/// (clamped) and their weights.
#[inline(always)]
pub fn tent_taps(p: usize, out_n: usize, src_n: usize) -> ([usize; 4], [f32; 4]) {
    let (i0, _, f) = tap(p, out_n, src_n);
    let g = 1.0 - f;
    let at = |d: isize| (i0 as isize + d).clamp(0, src_n as isize - 1) as usize;
    (
        [at(-1), at(0), at(1), at(2)],
        [
            0.25 * g,
            0.5f32.mul_add(g, 0.25 * f),
            0.25f32.mul_add(g, 0.5 * f),
            0.25 * f,
        ],
    )
}

kernel! {
/// One row of `fine.up`, `(1 - s) own + s tent(coarse)`, from the coarse rows already
/// weighed vertically (`col`, the coarse level's width) and each pixel's taps `xs`.
fn up_row(col: &[Rgb], xs: &[([usize; 4], [f32; 4])], own: &[Rgb], s: f32, row: &mut [Rgb]) {
    for ((out, d), (xs, wxs)) in row.iter_mut().zip(own).zip(xs) {
        let mut acc = [0.0f32; 3];
        for (&x, &wx) in xs.iter().zip(wxs) {
            let c = col[x];
            for k in 0..3 {
                acc[k] = wx.mul_add(c[k], acc[k]);
            }
        }
        for k in 0..3 {
            out[k] = s.mul_add(acc[k] - d[k], d[k]);
        }
    }
}
}

kernel! { avx512:
/// The tent filter across a coarse row twice as wide, away from the edges, on flat texel
/// channels `f` (`3 cw` floats): fine pixel `2i` weighs texels `i - 2 ..= i + 1` by `we`,
/// pixel `2i + 1` texels `i - 1 ..= i + 2` by `wo`, for `i` in `2 .. cw - 2`. The same sums in
/// the same order as [`up_row`], as contiguous stencils that vectorise.
fn tent_double(f: &[f32], we: [f32; 4], wo: [f32; 4], even: &mut [f32], odd: &mut [f32]) {
    let n = (f.len() / 3).saturating_sub(4) * 3;
    let (even, odd) = (&mut even[..n], &mut odd[..n]);
    let at = |k: usize| &f[k..k + n];
    let (a, b, c, d, e) = (at(0), at(3), at(6), at(9), at(12));
    for m in 0..n {
        even[m] = we[3].mul_add(d[m], we[2].mul_add(c[m], we[1].mul_add(b[m], we[0] * a[m])));
        odd[m] = wo[3].mul_add(e[m], wo[2].mul_add(d[m], wo[1].mul_add(c[m], wo[0] * b[m])));
    }
}
}

kernel! { avx512:
/// `row = (1 - s) own + s acc` over flat channels, where `acc` is `even[i]` at pixel `2i` and
/// `odd[i]` at pixel `2i + 1` (written channel by channel, so that the interleave vectorises).
fn blend_pairs(even: &[f32], odd: &[f32], own: &[f32], s: f32, row: &mut [f32]) {
    let pairs = row.chunks_exact_mut(6).zip(own.chunks_exact(6));
    for ((r, d), (e, o)) in pairs.zip(even.chunks_exact(3).zip(odd.chunks_exact(3))) {
        for k in 0..3 {
            r[k] = s.mul_add(e[k] - d[k], d[k]);
            r[k + 3] = s.mul_add(o[k] - d[k + 3], d[k + 3]);
        }
    }
}
}

/// Each fine pixel's tent taps across a coarse row, and, when the fine row is exactly twice
/// as wide and the taps follow the pattern of two, the two weight sets of its interior.
struct TentRow {
    xs: Vec<([usize; 4], [f32; 4])>,
    double: Option<([f32; 4], [f32; 4])>,
}

impl TentRow {
    fn new(fw: usize, cw: usize) -> Self {
        let xs: Vec<_> = (0..fw).map(|i| tent_taps(i, fw, cw)).collect();
        let double = (fw == 2 * cw && cw >= 5)
            .then(|| (xs[4].1, xs[5].1))
            .filter(|&(we, wo)| {
                (2..cw - 2).all(|i| {
                    let i = i as isize;
                    let at = |d: isize| std::array::from_fn(|t| (i + d + t as isize) as usize);
                    xs[2 * i as usize] == (at(-2), we) && xs[2 * i as usize + 1] == (at(-1), wo)
                })
            });
        Self { xs, double }
    }

    /// `row = (1 - s) own + s tent(col)`.
    fn apply(
        &self,
        col: &[Rgb],
        own: &[Rgb],
        s: f32,
        scratch: &mut [Vec<f32>; 2],
        row: &mut [Rgb],
    ) {
        let Some((we, wo)) = self.double else {
            return up_row(col, &self.xs, own, s, row);
        };
        let cw = col.len();
        let (lo, hi) = (4, 2 * (cw - 2));
        let [even, odd] = scratch;
        for v in [&mut *even, &mut *odd] {
            v.resize(3 * (cw - 4), 0.0);
        }
        tent_double(bytemuck::cast_slice(col), we, wo, even, odd);
        blend_pairs(
            even,
            odd,
            bytemuck::cast_slice(&own[lo..hi]),
            s,
            bytemuck::cast_slice_mut(&mut row[lo..hi]),
        );
        for r in [0..lo, hi..row.len()] {
            up_row(col, &self.xs[r.clone()], &own[r.clone()], s, &mut row[r]);
        }
    }
}

/// `fine.up = (1 - s) fine.down + s tent(coarse.up)`, separably (rows, then columns).
fn up(coarse: &Level, fine: &mut Level, s: f32, glow: Option<&Glow>) {
    let (cw, ch) = (coarse.w, coarse.h);
    let (fw, fh) = (fine.w, fine.h);
    let tent = TentRow::new(fw, cw);
    let Level { down, up, .. } = fine;
    up.par_chunks_mut(fw)
        .zip(down.par_chunks(fw))
        .with_min_len(crate::kernels::band::min_rows(fw * 4))
        .enumerate()
        .for_each_init(
            || (vec![[0.0f32; 3]; cw], [Vec::new(), Vec::new()]),
            |(col, scratch), (j, (row, own))| {
                let (ys, wys) = tent_taps(j, fh, ch);
                let flat = bytemuck::cast_slice_mut::<Rgb, f32>(col);
                weigh_rows(rows_at(&coarse.up, cw, ys), wys, flat);
                tent.apply(col, own, s, scratch, row);
                if let Some(glow) = glow {
                    glow.row(j, row);
                }
            },
        );
}

kernel! { avx512:
/// A row of level 0 (flat channels) becomes its glow: `bloom * row` (nothing without bloom)
/// plus `amount` times the sunrays, blended between the two rows of them sampled across
/// (`top`, `bottom`, weight `fy` on the second).
fn glow_row(row: &mut [f32], bloom: f32, rays: Option<(&[f32], &[f32], f32)>, amount: f32) {
    match (rays, bloom > 0.0) {
        (Some((top, bottom, fy)), true) => {
            let n = row.len().min(top.len()).min(bottom.len());
            for i in 0..n {
                let (t, b) = (top[i], bottom[i]);
                row[i] = amount.mul_add(fy.mul_add(b - t, t), row[i] * bloom);
            }
        }
        (Some((top, bottom, fy)), false) => {
            let n = row.len().min(top.len()).min(bottom.len());
            for i in 0..n {
                let (t, b) = (top[i], bottom[i]);
                row[i] = amount.mul_add(fy.mul_add(b - t, t), 0.0);
            }
        }
        (None, true) => row.iter_mut().for_each(|x| *x *= bloom),
        (None, false) => row.fill(0.0),
    }
}
}

/// What turns level 0's `up` into the glow: the bloom's intensity and the sunrays.
struct Glow<'a> {
    bloom: f32,
    /// The sunrays' rows sampled across at level 0's columns (`3 w` floats each) and their
    /// count.
    rays: Option<(&'a [f32], usize)>,
    amount: f32,
    /// Level 0's size.
    w: usize,
    h: usize,
}

impl<'a> Glow<'a> {
    /// With `rays` (`texels, rw, rh`), their rows are sampled across into `across` first:
    /// each texel of level 0 then blends two of those rows, as the shader's bilinear sample
    /// does (across, then between the rows).
    fn new(
        bloom: f32,
        rays: Option<(&[Rgb], usize, usize)>,
        amount: f32,
        (w, h): (usize, usize),
        across: &'a mut Across,
    ) -> Self {
        let rays = rays.map(|(texels, rw, rh)| {
            let Across { size, xs, rows } = across;
            if *size != (w, rw) {
                *size = (w, rw);
                *xs = (0..w)
                    .map(|x| {
                        let (i0, i1, f) = tap(x, w, rw);
                        (i0 as u32, i1 as u32, f)
                    })
                    .collect();
            }
            rows.resize(rh * 3 * w, 0.0);
            let xs = &xs[..];
            rows.par_chunks_mut(3 * w)
                .with_min_len(crate::kernels::band::min_rows(3 * w))
                .enumerate()
                .for_each(|(y, row)| sunrays::across_row(&texels[y * rw..][..rw], xs, row));
            let across = &rows[..];
            (across, rh)
        });
        Self {
            bloom,
            rays,
            amount,
            w,
            h,
        }
    }

    /// Row `j` of level 0 (its `up`) to its glow.
    fn row(&self, j: usize, row: &mut [Rgb]) {
        let flat = bytemuck::cast_slice_mut::<Rgb, f32>(row);
        let rays = self.rays.map(|(across, rh)| {
            let (j0, j1, fy) = tap(j, self.h, rh);
            let line = |y: usize| &across[y * 3 * self.w..][..3 * self.w];
            (line(j0), line(j1), fy)
        });
        glow_row(flat, self.bloom, rays, self.amount);
    }
}

/// Level 0's `up` becomes the glow (when no upsampling pass wrote it row by row).
fn glow_level(l0: &mut Level, glow: &Glow) {
    let w = l0.w;
    l0.up
        .par_chunks_mut(w)
        .with_min_len(crate::kernels::band::min_rows(w * 4))
        .enumerate()
        .for_each(|(j, row)| glow.row(j, row));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Upsampling a row twice as wide takes the stencil path, with the same bits as the
    /// per-pixel taps, edges included.
    #[test]
    fn the_double_tent_row_matches_the_taps() {
        for cw in 1..40 {
            let fw = 2 * cw;
            let tent = TentRow::new(fw, cw);
            assert_eq!(tent.double.is_some(), cw >= 5, "{cw}");
            let col: Vec<Rgb> = (0..cw)
                .map(|i| std::array::from_fn(|k| ((i * 7 + k * 3) % 13) as f32 * 0.37))
                .collect();
            let own: Vec<Rgb> = (0..fw).map(|i| [i as f32 * 0.1, 1.0, 0.5]).collect();
            let (mut fast, mut slow) = (vec![[0.0; 3]; fw], vec![[0.0; 3]; fw]);
            tent.apply(&col, &own, 0.7, &mut [Vec::new(), Vec::new()], &mut fast);
            up_row(&col, &tent.xs, &own, 0.7, &mut slow);
            assert_eq!(fast, slow, "{cw}");
        }
        assert!(TentRow::new(9, 5).double.is_none());
    }

    fn fx(bloom: f32, threshold: f32) -> Effects {
        Effects {
            bloom,
            bloom_threshold: threshold,
            bloom_knee: 0.5,
            bloom_radius: 0.7,
            ..Effects::OFF
        }
    }

    /// The glow of a `w x h` frame of grey light `frame(x, y)`, upsampled to the frame.
    fn glow_of(w: usize, h: usize, fx: &Effects, frame: impl Fn(usize, usize) -> f32) -> Vec<f32> {
        let plane: Vec<f32> = (0..w * h).map(|i| frame(i % w, i / w)).collect();
        let mut chain = Chain::default();
        if !chain.run([&plane, &plane, &plane], w, h, fx) {
            return vec![0.0; w * h];
        }
        let l = &chain.levels[0];
        (0..w * h)
            .map(|i| {
                let (x0, x1, fx) = tap(i % w, w, l.w);
                let (y0, y1, fy) = tap(i / w, h, l.h);
                let g = |x: usize, y: usize| l.up[y * l.w + x][1];
                let top = fx.mul_add(g(x1, y0) - g(x0, y0), g(x0, y0));
                let bottom = fx.mul_add(g(x1, y1) - g(x0, y1), g(x0, y1));
                fy.mul_add(bottom - top, top)
            })
            .collect()
    }

    /// The glow is `bloom * up` plus the rays sampled bilinearly as the shader samples them
    /// (across, then between the rows), bit for bit, with and without bloom.
    #[test]
    fn the_glow_is_the_bloom_plus_the_shaders_rays_sample() {
        // Level 0 is 240x135, the rays' level 60x34: each ray texel spans four of level 0.
        let (w, h) = (480, 270);
        let plane: Vec<f32> = (0..w * h)
            .map(|i| {
                let (x, y) = ((i % w) as f32, (i / w) as f32);
                3.0 * (-((x - 330.0).powi(2) + (y - 90.0).powi(2)) / 800.0).exp()
                    + (x * 0.37 + y * 0.11).sin().abs()
            })
            .collect();
        for bloom in [0.0, 0.8] {
            let effects = Effects {
                rays: 0.6,
                ..fx(bloom, 0.5)
            };
            let mut chain = Chain::default();
            assert!(chain.run([&plane, &plane, &plane], w, h, &effects));
            // The same chain without rays and at bloom 1 keeps level 0's `up` as it was before
            // the glow (times 1).
            let mut plain = Chain::default();
            let no_rays = Effects {
                rays: 0.0,
                ..fx(1.0, 0.5)
            };
            plain.run([&plane, &plane, &plane], w, h, &no_rays);
            let (l0, r) = (&chain.levels[0], &chain.levels[chain.rays_level()]);
            let (rw, rh) = (r.w, r.h);
            assert_eq!(l0.w, 4 * rw);
            assert!(
                chain.rays.iter().any(|c| c[0] > 0.0),
                "the rays light something"
            );
            for y in 0..l0.h {
                for x in 0..l0.w {
                    let (i0, i1, fx) = tap(x, l0.w, rw);
                    let (j0, j1, fy) = tap(y, l0.h, rh);
                    let t = |i: usize, j: usize| chain.rays[j * rw + i];
                    let up = plain.levels[0].up[y * l0.w + x];
                    let want: Rgb = std::array::from_fn(|k| {
                        let top = fx.mul_add(t(i1, j0)[k] - t(i0, j0)[k], t(i0, j0)[k]);
                        let bottom = fx.mul_add(t(i1, j1)[k] - t(i0, j1)[k], t(i0, j1)[k]);
                        let v = fy.mul_add(bottom - top, top);
                        let base = if bloom > 0.0 { up[k] * bloom } else { 0.0 };
                        effects.rays.mul_add(v, base)
                    });
                    assert_eq!(l0.up[y * l0.w + x], want, "bloom {bloom} at {x}, {y}");
                }
            }
        }
    }

    /// The coarser row's interior takes the flat loop, with the same bits as the clamped
    /// per-texel sums, edges and odd widths included.
    #[test]
    fn the_down_row_matches_the_clamped_taps() {
        for fw in 1..40usize {
            let col: Vec<Rgb> = (0..fw)
                .map(|i| std::array::from_fn(|k| ((i * 5 + k * 7) % 11) as f32 * 0.29 + 0.01))
                .collect();
            let cw = fw.div_ceil(2);
            let mut row = vec![[0.0f32; 3]; cw];
            down_row(&col, &mut row);
            for (i, got) in row.iter().enumerate() {
                let want: Rgb = std::array::from_fn(|c| {
                    let at =
                        |d: isize| col[(2 * i as isize + d).clamp(0, fw as isize - 1) as usize][c];
                    let acc = DOWN_WEIGHTS[0].mul_add(at(-1), 0.0);
                    let acc = DOWN_WEIGHTS[1].mul_add(at(0), acc);
                    let acc = DOWN_WEIGHTS[2].mul_add(at(1), acc);
                    DOWN_WEIGHTS[3].mul_add(at(2), acc)
                });
                assert_eq!(*got, want, "width {fw}, texel {i}");
            }
        }
    }

    #[test]
    fn level_sizes_halve_down_to_a_few_texels() {
        assert_eq!(level_sizes(1, 1), vec![(1, 1)]);
        assert_eq!(level_sizes(3, 2), vec![(2, 1)]);
        assert_eq!(
            level_sizes(640, 360),
            vec![(320, 180), (160, 90), (80, 45), (40, 23), (20, 12), (10, 6)]
        );
        assert_eq!(level_sizes(1920, 1080).len(), BLOOM_MAX_LEVELS);
    }

    #[test]
    fn the_soft_threshold_known_answers() {
        // Threshold 1, knee 0.5: nothing up to 0.5, (m - 0.5)^2 / 2 up to 1.5, m - 1 above.
        assert_eq!(soft_threshold([0.5, 0.2, 0.0], 1.0, 0.5), [0.0; 3]);
        let [r, g, _] = soft_threshold([1.0, 0.5, 0.0], 1.0, 0.5);
        approx::assert_relative_eq!(r, 0.125, max_relative = 1e-4);
        approx::assert_relative_eq!(g, 0.0625, max_relative = 1e-4);
        let [r, ..] = soft_threshold([3.0, 0.0, 0.0], 1.0, 0.5);
        approx::assert_relative_eq!(r, 2.0, max_relative = 1e-5);
        // A hard threshold (knee 0) and a threshold of 0 (everything blooms, as it is).
        assert_eq!(soft_threshold([0.9, 0.0, 0.0], 1.0, 0.0), [0.0; 3]);
        assert_eq!(soft_threshold([0.25, 0.5, 0.0], 0.0, 0.0), [0.25, 0.5, 0.0]);
    }

    #[test]
    fn below_the_threshold_nothing_blooms() {
        // Light up to threshold (1 - knee) = 0.5 everywhere: the glow is exactly 0.
        let g = glow_of(37, 23, &fx(2.0, 1.0), |x, y| {
            ((x * 7 + y * 3) % 11) as f32 / 20.0
        });
        assert!(g.iter().all(|&v| v == 0.0));
    }

    /// The glow keeps the energy above the threshold: far from the edges its sum over the
    /// frame is `bloom` times the sum of the thresholded light (the filters keep the mean).
    #[test]
    fn the_glow_keeps_the_energy() {
        let (w, h) = (128, 128);
        // A 2x2 block of light 5 at the centre, one texel of level 0: threshold 1 leaves 4 on
        // 4 pixels, 16 in all. (The threshold acts on the 2x2 averages, so a block across
        // texels would lose more.)
        let block = |x: usize, y: usize| {
            if (64..66).contains(&x) && (64..66).contains(&y) {
                5.0
            } else {
                0.0
            }
        };
        let g = glow_of(w, h, &fx(0.5, 1.0), block);
        let sum: f32 = g.iter().sum();
        approx::assert_relative_eq!(sum, 0.5 * 16.0, max_relative = 0.02);
    }

    #[test]
    fn a_bright_spot_spreads_symmetrically() {
        let (w, h) = (64, 48);
        // A 2x2 block (one texel of level 0) centred at (32, 24).
        let block = |x: usize, y: usize| {
            if (31..33).contains(&x) && (23..25).contains(&y) {
                8.0
            } else {
                0.0
            }
        };
        let g = glow_of(w, h, &fx(1.0, 1.0), block);
        let at = |x: usize, y: usize| g[y * w + x];
        for d in 0..12 {
            for e in 0..12 {
                let (a, b) = (at(32 + d, 24 + e), at(31 - d, 23 - e));
                approx::assert_relative_eq!(a, b, max_relative = 1e-4, epsilon = 1e-7);
                approx::assert_relative_eq!(
                    a,
                    at(31 - d, 24 + e),
                    max_relative = 1e-4,
                    epsilon = 1e-7
                );
            }
        }
        // It spreads: lit well past the block, falling off with distance.
        assert!(at(40, 24) > 0.0 && at(40, 24) < at(34, 24) && at(34, 24) < at(32, 24));
        // And a lone pixel mirrored gives the mirrored glow.
        let one = glow_of(w, h, &fx(1.0, 1.0), |x, y| {
            if (x, y) == (20, 10) { 30.0 } else { 0.0 }
        });
        let mirrored = glow_of(w, h, &fx(1.0, 1.0), |x, y| {
            if (x, y) == (w - 21, 10) { 30.0 } else { 0.0 }
        });
        for y in 0..h {
            for x in 0..w {
                approx::assert_relative_eq!(
                    one[y * w + x],
                    mirrored[y * w + w - 1 - x],
                    max_relative = 1e-4,
                    epsilon = 1e-7
                );
            }
        }
    }

    #[test]
    fn broken_light_never_poisons_the_glow() {
        for (w, h) in [(1, 1), (3, 2), (2, 3), (17, 9)] {
            for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, f32::MAX] {
                let fx = Effects {
                    rays: 1.0,
                    ..fx(1.0, 0.5)
                };
                let g = glow_of(w, h, &fx, |x, y| if (x, y) == (0, 0) { bad } else { 1.0 });
                assert!(
                    g.iter().all(|v| v.is_finite() && *v >= 0.0),
                    "{w}x{h} {bad}: {g:?}"
                );
            }
        }
    }
}
