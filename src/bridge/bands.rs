//! Three bands of the input: low, mid and high, split by a Linkwitz-Riley crossover.
//!
//! Each split is 4th-order Linkwitz-Riley (LR4): two cascaded 2nd-order Butterworth sections
//! (RBJ biquads, Q = 1/sqrt 2) for the low-pass side and two for the high-pass side. Their sum
//! is a 2nd-order all-pass at the crossover, so the bands add up flat in magnitude. The split at
//! [`LOW_MID_HZ`] gives the low band and "the rest"; the rest is split at [`MID_HIGH_HZ`] into
//! mid and high. The low band goes through the all-pass of that second split too, so all three
//! bands carry the same phase shift and `low + mid + high` is an all-pass of the input (flat
//! within float rounding). Each band falls 24 dB per octave outside its range and sits 6 dB
//! down at a crossover.
//!
//! The filters run in `f64` (a 200 Hz section at 192 kHz has poles within 1e-3 of the unit
//! circle, where `f32` state adds audible noise) and flush state below [`FLUSH`] to zero, so a
//! decaying tail never crawls through subnormal numbers. Non-finite input counts as silence and
//! huge input is clamped, so the state stays finite whatever comes in.

use crate::kernels::portable::Portable;

/// Crossover between the low and mid bands.
pub const LOW_MID_HZ: f32 = 200.0;
/// Crossover between the mid and high bands.
pub const MID_HIGH_HZ: f32 = 2_000.0;
/// Filter state below this magnitude is flushed to zero (about -500 dBFS: far below anything
/// audible, far above the subnormal range).
pub const FLUSH: f64 = 1.0e-25;
/// Input beyond this magnitude is clamped (as the envelope follower does).
pub const INPUT_LIMIT: f32 = 1.0e4;

/// The bands, lowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Band {
    /// Below [`LOW_MID_HZ`]: kick, bass.
    Low,
    /// Between the crossovers: voices, guitars, snare body, most chords.
    Mid,
    /// Above [`MID_HIGH_HZ`]: cymbals, hi-hats, air.
    High,
}

impl Band {
    /// All three, lowest first (the order of every `[_; 3]` indexed by band).
    pub const ALL: [Band; 3] = [Band::Low, Band::Mid, Band::High];

    /// Index into a `[_; 3]`.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// A biquad in transposed direct form II, coefficients normalised by a0.
#[derive(Clone, Copy, Debug, Default)]
pub struct Biquad {
    b: [f64; 3],
    a: [f64; 2],
    s: [f64; 2],
}

/// Which RBJ response a [`Biquad`] has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Response {
    LowPass,
    HighPass,
    AllPass,
}

impl Biquad {
    /// The RBJ cookbook section `response` at `hz` with quality `q` for `sample_rate`. The
    /// frequency is kept below 0.45 of the sample rate so a low rate still gets a stable filter.
    pub fn new(response: Response, sample_rate: f32, hz: f32, q: f64) -> Self {
        let fs = f64::from(sample_rate.max(1.0));
        let f = f64::from(hz).clamp(1.0, 0.45 * fs);
        let w0 = std::f64::consts::TAU * f / fs;
        let (sin, cos) = w0.psin_cos();
        let alpha = sin / (2.0 * q);
        let b = match response {
            Response::LowPass => [(1.0 - cos) / 2.0, 1.0 - cos, (1.0 - cos) / 2.0],
            Response::HighPass => [(1.0 + cos) / 2.0, -(1.0 + cos), (1.0 + cos) / 2.0],
            Response::AllPass => [1.0 - alpha, -2.0 * cos, 1.0 + alpha],
        };
        let a0 = 1.0 + alpha;
        Self {
            b: [b[0] / a0, b[1] / a0, b[2] / a0],
            a: [-2.0 * cos / a0, (1.0 - alpha) / a0],
            s: [0.0; 2],
        }
    }

    /// Filter one sample.
    #[inline]
    pub fn next(&mut self, x: f64) -> f64 {
        let y = self.b[0] * x + self.s[0];
        let s0 = self.b[1] * x - self.a[0] * y + self.s[1];
        let s1 = self.b[2] * x - self.a[1] * y;
        // Flushed together: flushing one alone lets the other grow back (with an `a[0]` past
        // 1 in magnitude, a state of 1e-25 then cycles forever instead of coming to rest).
        self.s = if s0.abs() < FLUSH && s1.abs() < FLUSH {
            [0.0; 2]
        } else {
            [s0, s1]
        };
        y
    }

    /// Back to rest.
    pub fn reset(&mut self) {
        self.s = [0.0; 2];
    }

    /// The state (for the tests' subnormal check).
    pub fn state(&self) -> [f64; 2] {
        self.s
    }
}

/// Butterworth quality of a 2nd-order section; two in cascade make a Linkwitz-Riley 4th order.
const BUTTERWORTH_Q: f64 = std::f64::consts::FRAC_1_SQRT_2;

/// Two cascaded Butterworth sections: one side of an LR4 split.
#[derive(Clone, Copy, Debug, Default)]
struct Lr4([Biquad; 2]);

impl Lr4 {
    fn new(response: Response, sample_rate: f32, hz: f32) -> Self {
        let s = Biquad::new(response, sample_rate, hz, BUTTERWORTH_Q);
        Self([s, s])
    }

    #[inline]
    fn next(&mut self, x: f64) -> f64 {
        let y = self.0[0].next(x);
        self.0[1].next(y)
    }

    fn reset(&mut self) {
        self.0.iter_mut().for_each(Biquad::reset);
    }
}

/// The three-band LR4 crossover of one (mono) signal.
#[derive(Clone, Copy, Debug)]
pub struct Crossover {
    low: Lr4,
    rest: Lr4,
    mid: Lr4,
    high: Lr4,
    /// The second split's all-pass on the low band: keeps the bands' sum flat.
    low_phase: Biquad,
}

impl Crossover {
    /// A crossover at rest for `sample_rate`, split at [`LOW_MID_HZ`] and [`MID_HIGH_HZ`].
    pub fn new(sample_rate: f32) -> Self {
        Self {
            low: Lr4::new(Response::LowPass, sample_rate, LOW_MID_HZ),
            rest: Lr4::new(Response::HighPass, sample_rate, LOW_MID_HZ),
            mid: Lr4::new(Response::LowPass, sample_rate, MID_HIGH_HZ),
            high: Lr4::new(Response::HighPass, sample_rate, MID_HIGH_HZ),
            low_phase: Biquad::new(Response::AllPass, sample_rate, MID_HIGH_HZ, BUTTERWORTH_Q),
        }
    }

    /// Split one sample into low, mid and high. Non-finite input counts as 0; huge input is
    /// clamped to ±[`INPUT_LIMIT`].
    #[inline]
    pub fn split(&mut self, x: f32) -> [f32; 3] {
        let x = if x.is_finite() {
            f64::from(x.clamp(-INPUT_LIMIT, INPUT_LIMIT))
        } else {
            0.0
        };
        let low = self.low_phase.next(self.low.next(x));
        let rest = self.rest.next(x);
        let mid = self.mid.next(rest);
        let high = self.high.next(rest);
        [low as f32, mid as f32, high as f32]
    }

    /// Back to rest.
    pub fn reset(&mut self) {
        for s in [&mut self.low, &mut self.rest, &mut self.mid, &mut self.high] {
            s.reset();
        }
        self.low_phase.reset();
    }

    /// Every filter state value (for the tests' subnormal check).
    pub fn states(&self) -> impl Iterator<Item = f64> + '_ {
        [&self.low, &self.rest, &self.mid, &self.high]
            .into_iter()
            .flat_map(|s| s.0.iter())
            .chain(std::iter::once(&self.low_phase))
            .flat_map(|b| b.state())
    }

    /// Whether every filter rests exactly (zero state), so that silence splits into zeros and
    /// leaves it as it is.
    pub fn at_rest(&self) -> bool {
        self.states().all(|s| s == 0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Impulse responses of the three bands, `n` samples.
    fn impulse_responses(fs: f32, n: usize) -> [Vec<f64>; 3] {
        let mut x = Crossover::new(fs);
        let mut out = [vec![0.0; n], vec![0.0; n], vec![0.0; n]];
        for i in 0..n {
            let y = x.split(if i == 0 { 1.0 } else { 0.0 });
            for (band, v) in out.iter_mut().zip(y) {
                band[i] = f64::from(v);
            }
        }
        out
    }

    /// Magnitude in dB of the response `h` at `hz` (its DFT there).
    fn gain_db(h: &[f64], fs: f32, hz: f64) -> f64 {
        let w = std::f64::consts::TAU * hz / f64::from(fs);
        let (mut re, mut im) = (0.0, 0.0);
        for (n, v) in h.iter().enumerate() {
            let (s, c) = (w * n as f64).sin_cos();
            re += v * c;
            im -= v * s;
        }
        10.0 * (re * re + im * im).log10()
    }

    /// 40 frequencies from 20 Hz to 0.4 fs, evenly spaced in octaves.
    fn sweep(fs: f32) -> impl Iterator<Item = f64> {
        let top = 0.4 * f64::from(fs);
        (0..40).map(move |k| 20.0 * (top / 20.0).powf(f64::from(k) / 39.0))
    }

    #[test]
    fn the_bands_sum_flat_within_a_tenth_of_a_db() {
        for fs in [22_050.0f32, 44_100.0, 48_000.0, 96_000.0, 192_000.0] {
            // Long enough for the 200 Hz sections' tails to die out (they ring for ~10 ms).
            let h = impl_responses_sum(fs, (fs * 0.5) as usize);
            for hz in sweep(fs) {
                let g = gain_db(&h, fs, hz);
                assert!(g.abs() < 0.1, "{fs} Hz: the sum is {g:.3} dB at {hz:.0} Hz");
            }
        }
    }

    fn impl_responses_sum(fs: f32, n: usize) -> Vec<f64> {
        let [l, m, h] = impulse_responses(fs, n);
        (0..n).map(|i| l[i] + m[i] + h[i]).collect()
    }

    #[test]
    fn each_band_passes_its_range_and_rejects_the_others_by_24_db_per_octave() {
        // LR4 magnitude: 1 / (1 + r^4) for a low-pass at r times its crossover (r^4 / (1 + r^4)
        // for a high-pass): -6.02 dB at the crossover, -48.2 dB two octaves out. The bilinear
        // transform squeezes the top of the range, so the highs are checked well below Nyquist.
        let fs = 48_000.0;
        let [low, mid, high] = impulse_responses(fs, 24_000);
        let expect = |h: &[f64], hz: f64, lo: f64, hi: f64, what: &str| {
            let g = gain_db(h, fs, hz);
            assert!(
                (lo..=hi).contains(&g),
                "{what} at {hz} Hz: {g:.2} dB, expected {lo} to {hi}"
            );
        };
        // In band: within 0.5 dB of unity.
        expect(&low, 40.0, -0.5, 0.1, "low");
        expect(&mid, 632.0, -0.5, 0.1, "mid");
        expect(&high, 10_000.0, -0.5, 0.1, "high");
        // At the crossovers: 6 dB down, both sides.
        expect(&low, 200.0, -6.4, -5.7, "low");
        expect(&mid, 200.0, -6.4, -5.7, "mid");
        expect(&mid, 2_000.0, -6.4, -5.7, "mid");
        expect(&high, 2_000.0, -6.4, -5.7, "high");
        // Two octaves out: 48 dB down (at least 44), and more further out.
        expect(&low, 800.0, -200.0, -44.0, "low");
        expect(&low, 8_000.0, -400.0, -100.0, "low");
        expect(&mid, 50.0, -200.0, -44.0, "mid");
        expect(&mid, 8_000.0, -200.0, -44.0, "mid");
        expect(&high, 500.0, -200.0, -44.0, "high");
        expect(&high, 50.0, -400.0, -100.0, "high");
        // One octave out: 24 dB down (LR4: 20 log10(1 / 17) = -24.6 dB).
        expect(&low, 400.0, -26.0, -23.0, "low");
        expect(&high, 1_000.0, -26.0, -23.0, "high");
    }

    #[test]
    fn garbage_in_finite_out_and_no_subnormal_state() {
        let mut x = Crossover::new(48_000.0);
        for v in [
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            1.0e30,
            -3.0e38,
            1.0e-40,
        ] {
            for _ in 0..100 {
                let y = x.split(v);
                assert!(y.iter().all(|b| b.is_finite()), "{v}: {y:?}");
            }
        }
        // A loud burst, then a long silence: the state decays to exact zeros, never through
        // subnormals.
        for i in 0..4_800 {
            x.split(if i % 2 == 0 { 1.0 } else { -1.0 });
        }
        for _ in 0..480_000 {
            x.split(0.0);
            assert!(
                x.states().all(|s| s == 0.0 || s.is_normal()),
                "subnormal state"
            );
        }
        assert!(x.states().all(|s| s == 0.0), "the state came to rest");
        assert_eq!(x.split(0.0), [0.0; 3]);
    }
}
