//! Envelope follower: peak and RMS of the input, with attack and release time constants.
//!
//! One-pole smoothing with separate coefficients for rising and falling input:
//! `y += (x - y) * (1 - a)`, `a = exp(-1 / (tau * fs))`, so a step reaches 1 - 1/e (63.2 %) of
//! its way after exactly tau, at any sample rate.
//!
//! The peak follower runs on |x|. The RMS first averages x² through two cascaded one-pole
//! low-passes of [`RMS_WINDOW_MS`] each (a fixed, symmetric window: that is what makes it a
//! mean and not a second peak detector; two poles cut a 50 Hz tone's ripple to about 1 %),
//! then takes the square root and applies the attack and release.

use crate::kernels::portable::Portable;

/// Values below this are flushed to zero: a decaying follower would otherwise crawl through
/// subnormal numbers, which are slow on x86 without flush-to-zero.
const FLOOR: f32 = 1.0e-15;

/// Time constant of each of the two mean-square averaging poles behind the RMS: long enough to
/// smooth a 50 Hz tone's ripple to about 1 %, short enough to follow a beat.
pub const RMS_WINDOW_MS: f32 = 10.0;

/// One-pole attack/release smoother.
#[derive(Clone, Copy, Debug)]
pub struct Follower {
    attack: f32,
    release: f32,
    value: f32,
}

/// `exp(-1 / (tau * fs))` for `tau_ms` milliseconds at `sample_rate` Hz (0 for instant).
pub fn coefficient(sample_rate: f32, tau_ms: f32) -> f32 {
    let samples = f64::from(tau_ms.max(0.0)) * 1e-3 * f64::from(sample_rate.max(1.0));
    if samples <= 0.0 || !samples.is_finite() {
        0.0
    } else {
        (-1.0 / samples).pexp() as f32
    }
}

impl Follower {
    /// A follower at rest.
    pub fn new(sample_rate: f32, attack_ms: f32, release_ms: f32) -> Self {
        Self {
            attack: coefficient(sample_rate, attack_ms),
            release: coefficient(sample_rate, release_ms),
            value: 0.0,
        }
    }

    /// Change the time constants, keeping the current value.
    pub fn set_times(&mut self, sample_rate: f32, attack_ms: f32, release_ms: f32) {
        self.attack = coefficient(sample_rate, attack_ms);
        self.release = coefficient(sample_rate, release_ms);
    }

    /// Feed one sample; returns the new value.
    #[inline]
    pub fn next(&mut self, x: f32) -> f32 {
        let a = if x > self.value {
            self.attack
        } else {
            self.release
        };
        let y = x + a * (self.value - x);
        self.value = if y < FLOOR { 0.0 } else { y };
        self.value
    }

    /// The current value.
    pub fn value(&self) -> f32 {
        self.value
    }

    /// Back to rest.
    pub fn reset(&mut self) {
        self.value = 0.0;
    }
}

/// Peak and RMS followers of one channel.
#[derive(Clone, Copy, Debug)]
pub struct EnvelopeFollower {
    peak: Follower,
    mean_square: [Follower; 2],
    rms: Follower,
}

impl EnvelopeFollower {
    /// A follower at rest.
    pub fn new(sample_rate: f32, attack_ms: f32, release_ms: f32) -> Self {
        Self {
            peak: Follower::new(sample_rate, attack_ms, release_ms),
            mean_square: [Follower::new(sample_rate, RMS_WINDOW_MS, RMS_WINDOW_MS); 2],
            rms: Follower::new(sample_rate, attack_ms, release_ms),
        }
    }

    /// Change the time constants.
    pub fn set_times(&mut self, sample_rate: f32, attack_ms: f32, release_ms: f32) {
        self.peak.set_times(sample_rate, attack_ms, release_ms);
        for pole in &mut self.mean_square {
            pole.set_times(sample_rate, RMS_WINDOW_MS, RMS_WINDOW_MS);
        }
        self.rms.set_times(sample_rate, attack_ms, release_ms);
    }

    /// Feed one sample. Non-finite samples count as silence.
    #[inline]
    pub fn next(&mut self, x: f32) {
        let x = if x.is_finite() {
            x.clamp(-1.0e4, 1.0e4)
        } else {
            0.0
        };
        self.peak.next(x.abs());
        let ms = self.mean_square[0].next(x * x);
        let ms = self.mean_square[1].next(ms);
        self.rms.next(ms.sqrt());
    }

    /// Peak level (linear).
    pub fn peak(&self) -> f32 {
        self.peak.value()
    }

    /// RMS level (linear).
    pub fn rms(&self) -> f32 {
        self.rms.value()
    }

    /// Back to rest.
    pub fn reset(&mut self) {
        self.peak.reset();
        for pole in &mut self.mean_square {
            pole.reset();
        }
        self.rms.reset();
    }

    /// Whether it rests exactly (every value 0), so that silence leaves it as it is.
    pub fn at_rest(&self) -> bool {
        self.peak.value == 0.0
            && self.mean_square.iter().all(|f| f.value == 0.0)
            && self.rms.value == 0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Time in samples (fractional: linear between the two samples around the crossing)
    /// until a follower fed `input` first reaches `target`. Sample n of the output is the
    /// value after n input samples, time n.
    fn samples_to(f: &mut Follower, input: f32, target: f32) -> f64 {
        let mut before = f.value();
        for n in 1..10_000_000u32 {
            let y = f.next(input);
            if (y - target) * (before - target) <= 0.0 {
                let frac = f64::from((target - before) / (y - before));
                return f64::from(n - 1) + frac;
            }
            before = y;
        }
        panic!("never reached {target}");
    }

    #[test]
    fn step_response_matches_the_time_constants_within_5_percent() {
        for fs in [22_050.0f32, 44_100.0, 48_000.0, 96_000.0, 192_000.0] {
            for (attack_ms, release_ms) in [(5.0f32, 200.0f32), (0.5, 50.0), (100.0, 3000.0)] {
                let mut f = Follower::new(fs, attack_ms, release_ms);
                // Rising step 0 -> 1 reaches 1 - 1/e after the attack time.
                let n = samples_to(&mut f, 1.0, 1.0 - (-1.0f32).exp());
                let t_ms = n as f32 / fs * 1e3;
                assert!(
                    (t_ms / attack_ms - 1.0).abs() < 0.05,
                    "attack {attack_ms} ms at {fs}: {t_ms} ms"
                );
                // Settle, then a falling step 1 -> 0 reaches 1/e after the release time.
                for _ in 0..(fs as usize) * 20 {
                    f.next(1.0);
                }
                let n = samples_to(&mut f, 0.0, (-1.0f32).exp());
                let t_ms = n as f32 / fs * 1e3;
                assert!(
                    (t_ms / release_ms - 1.0).abs() < 0.05,
                    "release {release_ms} ms at {fs}: {t_ms} ms"
                );
            }
        }
    }

    #[test]
    fn rms_and_peak_of_sines() {
        // Sines of amplitude 0.8: peak 0.8, RMS 0.8/sqrt(2), at every phase of the last
        // 50 ms once settled (a slow release keeps the peak from sagging between crests).
        let fs = 48_000.0;
        for freq in [50.0f32, 440.0, 5000.0] {
            let mut e = EnvelopeFollower::new(fs, 1.0, 2000.0);
            for n in 0..96_000 {
                e.next(0.8 * (n as f32 * freq * std::f32::consts::TAU / fs).sin());
                if n >= 96_000 - 2400 {
                    assert!((e.peak() - 0.8).abs() < 0.01, "{freq} Hz peak {}", e.peak());
                    let rms = 0.8 * std::f32::consts::FRAC_1_SQRT_2;
                    assert!(
                        (e.rms() / rms - 1.0).abs() < 0.03,
                        "{freq} Hz rms {}",
                        e.rms()
                    );
                }
            }
        }
    }

    #[test]
    fn rms_follows_the_attack_and_release() {
        // A 1 kHz burst: the RMS rises with the attack and falls with the release, on top of
        // the short averaging window.
        let fs = 48_000.0;
        let mut e = EnvelopeFollower::new(fs, 5.0, 200.0);
        let tone = |n: usize| (n as f32 * 1000.0 * std::f32::consts::TAU / fs).sin();
        let mut rms_at = Vec::new();
        for n in 0..48_000 {
            e.next(if n < 24_000 { tone(n) } else { 0.0 });
            rms_at.push(e.rms());
        }
        let full = std::f32::consts::FRAC_1_SQRT_2;
        let first = |from: usize, pred: &dyn Fn(f32) -> bool| {
            (from..rms_at.len()).find(|&n| pred(rms_at[n])).unwrap() - from
        };
        // Rise to 63 %: the 5 ms attack plus the averaging window's lag (about 14 ms).
        let rise_ms = first(0, &|r| r >= full * 0.632) as f32 / 48.0;
        assert!((15.0..25.0).contains(&rise_ms), "rise {rise_ms} ms");
        // Fall to 37 %: the 200 ms release plus the window's lag (about 35 ms: the square root
        // of the two-pole average decays with twice its time constants).
        let fall_ms = first(24_000, &|r| r <= full * 0.368) as f32 / 48.0;
        assert!((225.0..245.0).contains(&fall_ms), "fall {fall_ms} ms");
    }

    #[test]
    fn silence_decays_to_exact_zero_and_garbage_is_ignored() {
        let mut e = EnvelopeFollower::new(48_000.0, 1.0, 10.0);
        e.next(1.0);
        for _ in 0..48_000 {
            e.next(0.0);
        }
        assert_eq!((e.peak(), e.rms()), (0.0, 0.0));
        e.next(f32::NAN);
        e.next(f32::INFINITY);
        assert_eq!(e.peak(), 0.0);
    }
}
