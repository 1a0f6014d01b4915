//! The C library's maths, the same on every platform: the transcendental functions the
//! simulation, the mapping, the audio analysis and the picture use, from the `libm` crate (a
//! Rust port of musl's libm) rather than the platform's C library, whose last bits differ
//! between glibc, macOS and Windows. A difference in the last bit of one `exp` grows through
//! the flow into a different video (48 % of the pixels of a Windows render differed by frame
//! 30), so a render or a bounce capture would not replay the same on another system.
//!
//! Call them as methods with a `p` in front (`x.pexp()` for `x.exp()`), on `f32` and `f64`.
//! `tests/it/layout.rs` fails on a platform call (`.exp(`, `.sin(`, ...) outside the editor's and
//! the output window's code. `sqrt`, `mul_add`, `abs`, `floor` and the like are exact and stay.

/// `x.floor()`, to the bit (the sign of zero included), without a call: x86-64's baseline
/// (SSE2) has no rounding instruction, so `f32::floor` is a call into the C library there; the
/// 3D liquid's ray march calls it a few times per ray (5 % of the picture's time, 2026-11-28).
#[inline]
pub fn floor32(x: f32) -> f32 {
    // From 2^23 up every f32 is a whole number; NaN and the infinities stay themselves.
    if x.is_nan() || x.abs() >= 8_388_608.0 {
        return x;
    }
    let t = (x as i32 as f32).copysign(x);
    if t > x { t - 1.0 } else { t }
}

/// Portable transcendental functions (see the module).
pub trait Portable: Sized {
    fn pexp(self) -> Self;
    fn pln(self) -> Self;
    fn plog2(self) -> Self;
    fn plog10(self) -> Self;
    fn psin(self) -> Self;
    fn pcos(self) -> Self;
    fn ptan(self) -> Self;
    /// `(sin, cos)`.
    fn psin_cos(self) -> (Self, Self);
    fn ppowf(self, n: Self) -> Self;
    fn phypot(self, other: Self) -> Self;
}

impl Portable for f32 {
    #[inline]
    fn pexp(self) -> Self {
        libm::expf(self)
    }
    #[inline]
    fn pln(self) -> Self {
        libm::logf(self)
    }
    #[inline]
    fn plog2(self) -> Self {
        libm::log2f(self)
    }
    #[inline]
    fn plog10(self) -> Self {
        libm::log10f(self)
    }
    #[inline]
    fn psin(self) -> Self {
        libm::sinf(self)
    }
    #[inline]
    fn pcos(self) -> Self {
        libm::cosf(self)
    }
    #[inline]
    fn ptan(self) -> Self {
        libm::tanf(self)
    }
    #[inline]
    fn psin_cos(self) -> (Self, Self) {
        libm::sincosf(self)
    }
    #[inline]
    fn ppowf(self, n: Self) -> Self {
        libm::powf(self, n)
    }
    #[inline]
    fn phypot(self, other: Self) -> Self {
        libm::hypotf(self, other)
    }
}

impl Portable for f64 {
    #[inline]
    fn pexp(self) -> Self {
        libm::exp(self)
    }
    #[inline]
    fn pln(self) -> Self {
        libm::log(self)
    }
    #[inline]
    fn plog2(self) -> Self {
        libm::log2(self)
    }
    #[inline]
    fn plog10(self) -> Self {
        libm::log10(self)
    }
    #[inline]
    fn psin(self) -> Self {
        libm::sin(self)
    }
    #[inline]
    fn pcos(self) -> Self {
        libm::cos(self)
    }
    #[inline]
    fn ptan(self) -> Self {
        libm::tan(self)
    }
    #[inline]
    fn psin_cos(self) -> (Self, Self) {
        libm::sincos(self)
    }
    #[inline]
    fn ppowf(self, n: Self) -> Self {
        libm::pow(self, n)
    }
    #[inline]
    fn phypot(self, other: Self) -> Self {
        libm::hypot(self, other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor32_is_floor_to_the_bit() {
        let mut values = vec![
            0.0f32,
            -0.0,
            0.5,
            -0.5,
            1.0,
            -1.0,
            -1.5,
            8_388_607.5,
            -8_388_607.5,
            8_388_608.0,
            1e30,
            -1e30,
            f32::MIN_POSITIVE,
            -f32::MIN_POSITIVE,
            f32::INFINITY,
            f32::NEG_INFINITY,
        ];
        values.extend((-3000..3000).map(|i| i as f32 * 0.37));
        values.extend((0..200).map(|i| f32::from_bits(0x4b00_0000 - i)));
        values.extend((0..200).map(|i| -f32::from_bits(0x4b00_0000 - i)));
        for x in values {
            assert_eq!(floor32(x).to_bits(), x.floor().to_bits(), "{x}");
        }
        assert!(floor32(f32::NAN).is_nan());
    }

    /// The portable functions agree with the platform's to a few units in the last place
    /// (they are other implementations of the same functions), and give libm's known answers.
    #[test]
    fn the_portable_functions_are_the_functions() {
        let close32 = |a: f32, b: f32| (a - b).abs() <= 4.0 * f32::EPSILON * a.abs().max(1.0);
        let close64 = |a: f64, b: f64| (a - b).abs() <= 4.0 * f64::EPSILON * a.abs().max(1.0);
        for i in -200..200 {
            let x = i as f32 * 0.173;
            assert!(close32(x.pexp(), x.exp()) || x.exp() > 1e30, "exp {x}");
            assert!(close32(x.psin(), x.sin()), "sin {x}");
            assert!(close32(x.pcos(), x.cos()), "cos {x}");
            assert_eq!(x.psin_cos(), (x.psin(), x.pcos()), "sin_cos {x}");
            assert!(close32(x.phypot(1.5), x.hypot(1.5)), "hypot {x}");
            let y = f64::from(x);
            assert!(
                close64(y.psin(), y.sin()) && close64(y.pcos(), y.cos()),
                "{y}"
            );
            assert!(close64(y.pexp(), y.exp()) || y.exp() > 1e30, "exp {y}");
            if x > 0.0 {
                assert!(
                    close32(x.pln(), x.ln()) && close32(x.plog10(), x.log10()),
                    "{x}"
                );
                assert!(close32(x.plog2(), x.log2()), "log2 {x}");
                assert!(close32(x.ppowf(2.4), x.powf(2.4)), "powf {x}");
                assert!(close64(y.ppowf(0.7), y.powf(0.7)), "pow {y}");
            }
        }
        assert_eq!(0.0f32.pexp(), 1.0);
        assert_eq!(1.0f32.pln(), 0.0);
        assert_eq!(100.0f32.plog10(), 2.0);
        assert_eq!(3.0f32.phypot(4.0), 5.0);
        assert!(f32::NAN.pexp().is_nan() && (-1.0f32).pln().is_nan());
        assert!((0.25f32.ptan() - 0.25f32.tan()).abs() < 1e-6);
    }
}
