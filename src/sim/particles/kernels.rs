//! The smoothing kernels of Lague's particle fluid, in two and three dimensions: for radius `h`
//! and `v = h - r` (zero at `h` and beyond), density `A v²`, near density `B v³`, their slopes,
//! and viscosity's weight `C (h² - r²)³`, each normalised to integrate to 1 over the disc (2D)
//! or the ball (3D), so a particle's density is about the number of particles per unit area or
//! volume around it (a test integrates them).
//!
//! | | 2D | 3D |
//! |---|---|---|
//! | density `A` | `6 / (pi h^4)` | `15 / (2 pi h^5)` |
//! | near density `B` | `10 / (pi h^5)` | `15 / (pi h^6)` |
//! | slopes | `-12 / (pi h^4) v`, `-30 / (pi h^5) v²` | `-15 / (pi h^5) v`, `-45 / (pi h^6) v²` |
//! | viscosity `C` | `4 / (pi h^8)` | `315 / (64 pi h^9)` |

/// The kernels for radius `h`, as their constant factors (the GPU's uniforms carry them).
#[derive(Clone, Copy, Debug)]
pub struct Kernels<const D: usize> {
    pub h: f32,
    /// `(h - r)²`: density.
    pub spiky2: f32,
    /// `(h - r)³`: near density.
    pub spiky3: f32,
    /// `-(h - r)`: the density's slope.
    pub spiky2_slope: f32,
    /// `-(h - r)²`: the near density's slope.
    pub spiky3_slope: f32,
    /// `(h² - r²)³`: viscosity.
    pub poly6: f32,
}

impl<const D: usize> Kernels<D> {
    pub fn new(h: f32) -> Self {
        const {
            assert!(
                D == 2 || D == 3,
                "particles live in two or three dimensions"
            )
        };
        let pi = std::f32::consts::PI;
        if D == 2 {
            Self {
                h,
                spiky2: 6.0 / (pi * h.powi(4)),
                spiky3: 10.0 / (pi * h.powi(5)),
                spiky2_slope: 12.0 / (pi * h.powi(4)),
                spiky3_slope: 30.0 / (pi * h.powi(5)),
                poly6: 4.0 / (pi * h.powi(8)),
            }
        } else {
            Self {
                h,
                spiky2: 15.0 / (2.0 * pi * h.powi(5)),
                spiky3: 15.0 / (pi * h.powi(6)),
                spiky2_slope: 15.0 / (pi * h.powi(5)),
                spiky3_slope: 45.0 / (pi * h.powi(6)),
                poly6: 315.0 / (64.0 * pi * h.powi(9)),
            }
        }
    }

    /// Density and near density weights at squared distance `r2` (zero at `h` and beyond).
    #[inline]
    pub fn densities(&self, r2: f32) -> [f32; 2] {
        self.densities_at(r2.sqrt())
    }

    /// Density and near density weights at distance `r` (zero at `h` and beyond).
    #[inline]
    pub fn densities_at(&self, r: f32) -> [f32; 2] {
        let v = (self.h - r).max(0.0);
        let v2 = v * v;
        [v2 * self.spiky2, v2 * v * self.spiky3]
    }

    /// The slopes of the two density kernels at distance `r < h` (negative: they fall).
    #[inline]
    pub fn slopes(&self, r: f32) -> [f32; 2] {
        let v = self.h - r;
        [-v * self.spiky2_slope, -v * v * self.spiky3_slope]
    }

    /// Viscosity's weight at squared distance `r2 < h²`.
    #[inline]
    pub fn poly6(&self, r2: f32) -> f32 {
        let v = self.h * self.h - r2;
        v * v * v * self.poly6
    }

    /// `h⁵`.
    #[inline]
    pub fn h5(&self) -> f32 {
        let h2 = self.h * self.h;
        h2 * h2 * self.h
    }
}

impl Kernels<3> {
    /// A flat wall at distance `d < h` (the 3D tank's walls, a floater's surface): the shares
    /// of the density and near density kernels that lie beyond it, and how fast each grows as
    /// the particle nears it (their slopes against `-d`); `None` beyond reach. Closed forms of
    /// the kernels' integrals over the half-space (with `x = h - d`): `x^4 (3d + 2h) / 4h^5`
    /// and `x^5 (2d + h) / 2h^6`, both 1/2 at the wall; slopes `5 x^3 (3d + h) / 4h^5` and
    /// `3 x^4 (4d + h) / 2h^6`.
    #[inline]
    pub fn wall(&self, d: f32) -> Option<[f32; 4]> {
        let h = self.h;
        // NaN is not within reach either.
        if d.is_nan() || d >= h {
            return None;
        }
        let d = d.max(0.0);
        let x = h - d;
        let (x2, h5) = (x * x, self.h5());
        Some([
            x2 * x2 * (3.0 * d + 2.0 * h) / (4.0 * h5),
            x2 * x2 * x * (2.0 * d + h) / (2.0 * h5 * h),
            5.0 * x2 * x * (3.0 * d + h) / (4.0 * h5),
            3.0 * x2 * x2 * (4.0 * d + h) / (2.0 * h5 * h),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each kernel integrates to 1 over its disc or ball (a midpoint sum on a fine lattice),
    /// and the slopes are the density kernels' derivatives.
    fn integrates_to_one<const D: usize>(n: usize) {
        let h = 0.7f32;
        let kern = Kernels::<D>::new(h);
        let cell = 2.0 * h / n as f32;
        let at = |m: usize| -h + (m as f32 + 0.5) * cell;
        let mut sums = [0.0f64; 3];
        for index in 0..n.pow(D as u32) {
            let mut r2 = at(index % n) * at(index % n);
            let mut rest = index / n;
            for _ in 1..D {
                r2 += at(rest % n) * at(rest % n);
                rest /= n;
            }
            let [w2, w3] = kern.densities(r2);
            sums[0] += f64::from(w2);
            sums[1] += f64::from(w3);
            if r2 < h * h {
                sums[2] += f64::from(kern.poly6(r2));
            }
        }
        let volume = f64::from(cell).powi(D as i32);
        for (name, sum) in ["density", "near density", "viscosity"].iter().zip(sums) {
            let integral = sum * volume;
            assert!((integral - 1.0).abs() < 0.01, "{D}D {name}: {integral}");
        }
        // The slopes are the derivatives: a central difference at r = 0.3 h.
        let r = 0.3 * h;
        let e = 1e-3 * h;
        let diff = |f: usize| {
            (kern.densities((r + e) * (r + e))[f] - kern.densities((r - e) * (r - e))[f])
                / (2.0 * e)
        };
        for (f, slope) in kern.slopes(r).into_iter().enumerate() {
            assert!(
                (diff(f) - slope).abs() < 1e-3 * slope.abs(),
                "{D}D slope {f}: {} against {slope}",
                diff(f)
            );
        }
    }

    #[test]
    fn the_kernels_integrate_to_one() {
        integrates_to_one::<2>(1000);
        integrates_to_one::<3>(120);
    }
}
