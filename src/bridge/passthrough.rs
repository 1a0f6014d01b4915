//! Audio passthrough: Dyeflow is a visualiser, the audio leaves as it came in.
//!
//! The one change made is that subnormal samples (magnitudes below 2^-126, about 1.2e-38, or
//! -758 dBFS) leave as a zero of the same sign. Hosts and validators reject subnormal output,
//! and no converter or ear can tell them from zero. Every other bit pattern, including
//! infinities and NaNs, passes through unchanged.

const EXPONENT_MASK: u32 = 0x7f80_0000;
const MANTISSA_MASK: u32 = 0x007f_ffff;
const SIGN_MASK: u32 = 0x8000_0000;

/// `x` unchanged unless it is subnormal, in which case zero with `x`'s sign.
///
/// Works on the bits, so the result does not depend on the CPU's FTZ/DAZ flags.
#[inline]
pub fn flush_subnormal(x: f32) -> f32 {
    let bits = x.to_bits();
    let subnormal = bits & EXPONENT_MASK == 0 && bits & MANTISSA_MASK != 0;
    // Branch-free so the loop below vectorises.
    let mask = if subnormal { SIGN_MASK } else { u32::MAX };
    f32::from_bits(bits & mask)
}

/// Flush subnormals in every channel, in place. Allocation-free; O(samples).
pub fn flush_subnormals(channels: &mut [&mut [f32]]) {
    for channel in channels.iter_mut() {
        for sample in channel.iter_mut() {
            *sample = flush_subnormal(*sample);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_and_special_values_pass_bit_exact() {
        for x in [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            f32::MIN_POSITIVE,
            -f32::MIN_POSITIVE,
            f32::MAX,
            f32::MIN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::from_bits(0xffc0_1234), // a NaN with a payload
        ] {
            assert_eq!(flush_subnormal(x).to_bits(), x.to_bits(), "{x:e}");
        }
    }

    #[test]
    fn subnormals_become_signed_zero() {
        let tiny = f32::from_bits(1); // smallest positive subnormal
        assert!(tiny.is_subnormal());
        assert_eq!(flush_subnormal(tiny).to_bits(), 0.0f32.to_bits());
        assert_eq!(flush_subnormal(-tiny).to_bits(), (-0.0f32).to_bits());
        let largest = f32::from_bits(MANTISSA_MASK);
        assert!(largest.is_subnormal());
        assert_eq!(flush_subnormal(largest), 0.0);
    }
}
