//! Particles' serial numbers on the GPU, for the particle models (the 2D liquid's and the 3D
//! liquid's): each particle carries its serial number in its colour's fourth component, its
//! low 23 bits as the mantissa of a number in [1, 2) (a normal number: no GPU flushes it,
//! copies keep it), and a GPU liquid keeps the serial numbers of its particles consecutive
//! (oldest first, the next one to give), so the `k` oldest are the ones whose serial number is
//! less than `k` past the oldest (modulo 2^23, far more than the most particles): no search,
//! no compaction.

/// Serial numbers wrap at this (the mantissa's 23 bits).
pub const SERIAL_MASK: u32 = 0x7f_ffff;

/// The colour's fourth component carrying serial number `serial`.
pub fn serial_to_f32(serial: u64) -> f32 {
    f32::from_bits(0x3f80_0000 | (serial as u32 & SERIAL_MASK))
}

/// The serial number carried by `w`, given that it is at most [`SERIAL_MASK`] before `next`
/// (the next serial number to give).
pub fn serial_from_f32(w: f32, next: u64) -> u64 {
    let back = (next as u32).wrapping_sub(w.to_bits()) & SERIAL_MASK;
    next.wrapping_sub(u64::from(back))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A serial number survives the colour's fourth component (a normal number in [1, 2),
    /// whatever the serial) and comes back whole, across the 2^23 wrap and past 2^32, for
    /// every particle up to the most there can be behind the next number.
    #[test]
    fn serial_numbers_round_trip_through_the_colour() {
        let most = 1u64 << 21;
        for next in [
            1,
            1000,
            1 << 23,
            (1 << 23) + 5,
            u64::from(u32::MAX) + 7,
            1 << 40,
        ] {
            for back in [1, 2, 1000, most] {
                if back > next {
                    continue;
                }
                let s = next - back;
                let w = serial_to_f32(s);
                assert!(w.is_normal() && (1.0..2.0).contains(&w), "{s}: {w}");
                assert_eq!(serial_from_f32(w, next), s, "{s} before {next}");
            }
        }
    }
}
