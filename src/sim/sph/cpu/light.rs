//! The particle fluid's light, drawn from its particles into a field the display pipeline
//! turns into the picture: the Surface look (a smooth kernel two particle spacings wide,
//! normalised so the bulk at its target density shows its colour at about 1) or the Discs
//! look (a soft disc per particle). Bands of rows are drawn in parallel, each taking the
//! particles whose footprint reaches into it, so every cell sums its particles in their order.

use crate::fluid::LiquidStyle;
use crate::kernels::portable::Portable;
use crate::sim::sph::Fluid;
use crate::sim::sph::shared::{Footprint, GRADIENT_SPEED};
use rayon::prelude::*;

/// The light field, rows bottom first.
#[derive(Default)]
pub(crate) struct Light {
    /// Red, green and blue.
    pub planes: [Vec<f32>; 3],
    /// The discs' coverage: its sum and its largest value per cell.
    cover: [Vec<f32>; 2],
}

impl Light {
    /// Splat the particles' light into a `w x h` field: each particle's colour (or its speed's,
    /// with `speed_colours`) as a smooth bump (the surface) or a soft disc.
    pub fn draw(
        &mut self,
        (fluid, target_density): (&Fluid, f32),
        (w, h): (usize, usize),
        style: LiquidStyle,
        speed_colours: bool,
        pool: &rayon::ThreadPool,
    ) {
        for plane in self.planes.iter_mut().chain(&mut self.cover) {
            plane.clear();
            plane.resize(w * h, 0.0);
        }
        let Footprint {
            scale,
            radius,
            reach,
            norm,
        } = Footprint::new(fluid.size()[0], target_density, w, style);
        let colour = |i: usize| {
            if speed_colours {
                let v = fluid.vel[i];
                speed_gradient(v[0].phypot(v[1]) / GRADIENT_SPEED)
            } else {
                fluid.color[i]
            }
        };
        // Where discs overlap their colours mix by coverage and the light is the largest
        // coverage, so a disc is as bright alone as in a crowd.
        // Bands of rows drawn in parallel, each owning its rows of every plane and taking the
        // particles whose footprint reaches into it.
        let bands = (pool.current_num_threads() * 4).clamp(1, h);
        let rows = h.div_ceil(bands);
        let [r, g, b] = &mut self.planes;
        let [sum, top] = &mut self.cover;
        let chunk = rows * w;
        let mut parts: Vec<(usize, [&mut [f32]; 5])> = r
            .chunks_mut(chunk)
            .zip(g.chunks_mut(chunk))
            .zip(b.chunks_mut(chunk))
            .zip(sum.chunks_mut(chunk))
            .zip(top.chunks_mut(chunk))
            .enumerate()
            .map(|(k, ((((r, g), b), s), t))| (k * rows, [r, g, b, s, t]))
            .collect();
        pool.install(|| {
            parts.par_iter_mut().for_each(|(j0, planes)| {
                let band = *j0..*j0 + planes[0].len() / w;
                let [r, g, b, sum, top] = planes;
                for (i, p) in fluid.pos.iter().enumerate() {
                    let y = p[1] * scale;
                    if y + reach < band.start as f32 || y - reach > band.end as f32 {
                        continue;
                    }
                    let c = colour(i);
                    match style {
                        LiquidStyle::Surface => {
                            splat_rows(p, scale, reach, (w, band.clone()), |k, q| {
                                let wgt = q * q * norm;
                                r[k] += c[0] * wgt;
                                g[k] += c[1] * wgt;
                                b[k] += c[2] * wgt;
                            })
                        }
                        LiquidStyle::Discs => {
                            splat_rows(p, scale, reach, (w, band.clone()), |k, q| {
                                // q = 1 - r²/reach²: back to the distance, then a one-cell
                                // ramp.
                                let d = reach * (1.0 - q).max(0.0).sqrt();
                                let a = (radius + 0.5 - d).clamp(0.0, 1.0);
                                if a > 0.0 {
                                    r[k] += c[0] * a;
                                    g[k] += c[1] * a;
                                    b[k] += c[2] * a;
                                    sum[k] += a;
                                    top[k] = top[k].max(a);
                                }
                            })
                        }
                    }
                }
                if style == LiquidStyle::Discs {
                    for k in 0..r.len() {
                        if sum[k] > 0.0 {
                            let f = top[k] / sum[k];
                            r[k] *= f;
                            g[k] *= f;
                            b[k] *= f;
                        }
                    }
                }
            });
        });
    }
}

/// Call `f(cell, q)` for each cell of the rows `rows` of a field `w` wide within `reach`
/// cells of box point `p` (scaled by `scale` cells per box unit), with `q = 1 - r²/reach²`
/// (> 0); `cell` counts from the first of `rows`.
#[inline]
fn splat_rows(
    p: &[f32; 2],
    scale: f32,
    reach: f32,
    (w, rows): (usize, std::ops::Range<usize>),
    mut f: impl FnMut(usize, f32),
) {
    let ri = reach.ceil() as isize;
    let (x, y) = (p[0] * scale, p[1] * scale);
    let (cx, cy) = (x.floor() as isize, y.floor() as isize);
    let inv = 1.0 / (reach * reach);
    let (lo, hi) = (rows.start as isize, rows.end as isize - 1);
    for j in (cy - ri).max(lo)..=(cy + ri).min(hi) {
        let dy = j as f32 + 0.5 - y;
        let row = (j - lo) as usize * w;
        for i in (cx - ri).max(0)..=(cx + ri).min(w as isize - 1) {
            let dx = i as f32 + 0.5 - x;
            let q = 1.0 - (dx * dx + dy * dy) * inv;
            if q > 0.0 {
                f(row + i as usize, q);
            }
        }
    }
}

/// The speed gradient's colours, evenly spaced (`STOPS` in sph_light.wgsl).
pub(crate) const STOPS: [[f32; 3]; 4] = [
    [0.03, 0.15, 0.9],
    [0.1, 0.8, 0.9],
    [1.0, 1.0, 1.0],
    [1.0, 0.15, 0.05],
];

/// The source's speed gradient: deep blue at rest, through cyan and white, to red at `t` = 1.
fn speed_gradient(t: f32) -> [f32; 3] {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        1.0
    } * 3.0;
    let i = (t as usize).min(2);
    let f = t - i as f32;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    [
        a[0] + (b[0] - a[0]) * f,
        a[1] + (b[1] - a[1]) * f,
        a[2] + (b[2] - a[2]) * f,
    ]
}
