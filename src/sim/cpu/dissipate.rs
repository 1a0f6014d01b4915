//! Dissipation: exponential decay, `x *= exp(-rate * dt)`. The factor is exact for any dt, so
//! decay is frame-rate independent. The CPU solver fuses it into advection (one memory pass
//! less); [`dissipate`] is the standalone pass, used when a step does not advect.

use crate::sim::math::exp;
use rayon::prelude::*;

/// The decay factor for `rate` (1/s) over `dt` seconds, in (0, 1].
#[inline]
pub fn decay_factor(rate: f32, dt: f32) -> f32 {
    exp(-(rate * dt).max(0.0))
}

/// Multiply every value by `factor`.
pub fn dissipate(field: &mut [f32], factor: f32) {
    if factor != 1.0 {
        field.par_iter_mut().for_each(|x| *x *= factor);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decay_is_frame_rate_independent() {
        // Two half steps give the same factor as one full step: e^-0.5 either way.
        let full = decay_factor(3.0, 1.0 / 6.0);
        let half = decay_factor(3.0, 1.0 / 12.0);
        assert!((full - half * half).abs() < 1e-6);
        assert!((full - (-0.5f32).exp()).abs() < 1e-6);
        assert_eq!(decay_factor(0.0, 1.0), 1.0);
    }
}
