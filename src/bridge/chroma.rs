//! Pitch classes of the input ("chroma"): which of the 12 notes C, C#, ... B sound, and how
//! strongly, so the audio alone can colour the fluid the way MIDI notes of those classes do.
//!
//! Two pure, deterministic parts (the same samples give the same weights, bit for bit):
//!
//! - [`Decimator`] runs on the audio thread: an 8th-order Butterworth low-pass (four biquads)
//!   at 0.4 of the reduced rate, then every [`decimation`]-th sample: about
//!   [`TARGET_RATE_HZ`], plenty for pitches up to [`MAX_HZ`], a quarter of the work.
//! - [`ChromaAnalyzer`] is fed the decimated samples and returns 12 weights every [`HOP`]
//!   samples (46 ms at 11 kHz): a Hann-windowed [`FRAME`]-point FFT (0.37 s: enough to tell
//!   the semitones of the bass apart), spectral peaks from [`MIN_HZ`] to [`MAX_HZ`] placed by
//!   parabolic interpolation, each adding its magnitude to the class of its nearest semitone
//!   (weighted down as it lies between two). The classes are normalised to the strongest, the
//!   weaker ones below [`CLASS_FLOOR`] of it dropped, and all of it scaled by how tonal the
//!   frame is (noise spreads over every class: its strongest class barely stands out) and how
//!   loud ([`SILENCE_DBFS`] to [`FULL_DBFS`]), so silence and drums alone give nothing.
//!
//! The plugin runs the analyzer on its own thread, fed through a lock-free queue
//! (`engine::chroma`); the offline renderer runs it inline in the bridge at exact sample
//! positions, so renders stay reproducible. Allocation happens in `new` only.

use super::bands::{Biquad, Response};
use crate::kernels::portable::Portable;
use realfft::num_complex::Complex;
use realfft::{RealFftPlanner, RealToComplex};
use std::sync::Arc;

/// What the audio thread sends the chroma thread: the decimated input, one sample a slot.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tap {
    /// The stream (re)starts (activation, a new sample rate, the host's reset): its rate, Hz,
    /// and the audio time of its first sample, seconds.
    Start { rate: f32, time_s: f64 },
    /// The next sample at that rate.
    Sample(f32),
}

/// The rate the decimator aims for.
pub const TARGET_RATE_HZ: f32 = 11_025.0;
/// Analysis frame, samples at the reduced rate (0.37 s at 11 kHz: bins 2.7 Hz apart, finer
/// than the 3.3 Hz between A1 and A#1).
pub const FRAME: usize = 4096;
/// Weights come out every this many reduced-rate samples (46 ms at 11 kHz).
pub const HOP: usize = 512;
/// Lowest pitch analysed (just below G1).
pub const MIN_HZ: f32 = 48.0;
/// Highest pitch analysed (C8 is 4186 Hz).
pub const MAX_HZ: f32 = 4_200.0;
/// Spectral peaks this far below the frame's strongest are ignored (noise, window leakage).
pub const PEAK_RANGE_DB: f32 = 50.0;
/// Classes weaker than this fraction of the strongest are dropped; the rest are rescaled from
/// it to 1.
pub const CLASS_FLOOR: f32 = 0.2;
/// Frames quieter than this (RMS) give nothing.
pub const SILENCE_DBFS: f32 = -60.0;
/// Frames at least this loud get their full weight.
pub const FULL_DBFS: f32 = -30.0;
/// Tonality: the strongest class over the mean class, below which a frame counts as noise
/// (weight 0) and above which as tonal (weight 1). White noise gives about 1.5; one note with
/// its harmonics 4 to 8; a triad about 3.
pub const NOISE_CONTRAST: f32 = 1.6;
/// See [`NOISE_CONTRAST`].
pub const TONAL_CONTRAST: f32 = 2.6;

/// The decimation factor for `sample_rate`: the reduced rate comes nearest
/// [`TARGET_RATE_HZ`].
pub fn decimation(sample_rate: f32) -> usize {
    let fs = if sample_rate.is_finite() {
        sample_rate
    } else {
        48_000.0
    };
    ((fs / TARGET_RATE_HZ).round() as usize).clamp(1, 64)
}

/// Anti-alias filter and sample dropper: full rate in, about [`TARGET_RATE_HZ`] out.
#[derive(Clone, Copy, Debug)]
pub struct Decimator {
    filters: [Biquad; 4],
    factor: usize,
    phase: usize,
    rate: f32,
}

impl Decimator {
    /// A decimator at rest for `sample_rate`.
    pub fn new(sample_rate: f32) -> Self {
        let fs = if sample_rate.is_finite() {
            sample_rate.clamp(1_000.0, 1_000_000.0)
        } else {
            48_000.0
        };
        let factor = decimation(fs);
        let rate = fs / factor as f32;
        // Butterworth 8th order as four sections: Q = 1 / (2 cos((2k - 1) pi / 16)).
        let q = [0.509_795_6, 0.601_344_9, 0.899_976_2, 2.562_915_4];
        let cutoff = 0.4 * rate;
        Self {
            filters: q.map(|q| Biquad::new(Response::LowPass, fs, cutoff, q)),
            factor,
            phase: 0,
            rate,
        }
    }

    /// The reduced rate, Hz.
    pub fn rate(&self) -> f32 {
        self.rate
    }

    /// Feed one full-rate sample; returns a reduced-rate sample every `factor` calls.
    /// Non-finite input counts as 0; huge input is clamped.
    #[inline]
    pub fn next(&mut self, x: f32) -> Option<f32> {
        let mut y = if x.is_finite() {
            f64::from(x.clamp(-super::bands::INPUT_LIMIT, super::bands::INPUT_LIMIT))
        } else {
            0.0
        };
        for f in &mut self.filters {
            y = f.next(y);
        }
        self.phase += 1;
        if self.phase >= self.factor {
            self.phase = 0;
            Some(y as f32)
        } else {
            None
        }
    }

    /// Back to rest.
    pub fn reset(&mut self) {
        self.filters.iter_mut().for_each(Biquad::reset);
        self.phase = 0;
    }

    /// Whether its filters rest exactly (zero state): silence then comes out as zeros.
    pub fn at_rest(&self) -> bool {
        self.filters.iter().all(|f| f.state() == [0.0; 2])
    }

    /// Full-rate samples until (and with) the next reduced-rate one.
    pub fn until_output(&self) -> usize {
        self.factor - self.phase
    }

    /// Take `samples` of silence at rest (at most [`Decimator::until_output`]) as
    /// [`Decimator::next`] would, without filtering: whether the last gives a reduced-rate
    /// sample (0).
    pub fn skip_silence(&mut self, samples: usize) -> bool {
        debug_assert!(self.at_rest() && samples <= self.until_output());
        self.phase += samples;
        if self.phase >= self.factor {
            self.phase = 0;
            true
        } else {
            false
        }
    }
}

/// The chroma analysis of a reduced-rate signal. See the module's notes.
pub struct ChromaAnalyzer {
    rate: f32,
    /// The last [`FRAME`] samples, circular, oldest at `pos`.
    history: Vec<f32>,
    pos: usize,
    until_hop: usize,
    window: Vec<f32>,
    /// Mean of the window's square: the level of a windowed frame is its mean square over
    /// this.
    window_power: f32,
    input: Vec<f32>,
    spectrum: Vec<Complex<f32>>,
    scratch: Vec<Complex<f32>>,
    magnitude: Vec<f32>,
    fft: Arc<dyn RealToComplex<f32>>,
}

impl std::fmt::Debug for ChromaAnalyzer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChromaAnalyzer")
            .field("rate", &self.rate)
            .finish_non_exhaustive()
    }
}

impl ChromaAnalyzer {
    /// An analyzer of a signal at `rate` Hz (the [`Decimator`]'s), at rest: all allocation
    /// happens here.
    pub fn new(rate: f32) -> Self {
        let rate = if rate.is_finite() {
            rate.clamp(1_000.0, 200_000.0)
        } else {
            TARGET_RATE_HZ
        };
        let fft = RealFftPlanner::<f32>::new().plan_fft_forward(FRAME);
        let window: Vec<f32> = (0..FRAME)
            .map(|i| {
                let s = (std::f32::consts::PI * i as f32 / FRAME as f32).psin();
                s * s
            })
            .collect();
        let window_power = window.iter().map(|w| w * w).sum::<f32>() / FRAME as f32;
        Self {
            rate,
            history: vec![0.0; FRAME],
            pos: 0,
            until_hop: HOP,
            window,
            window_power,
            input: fft.make_input_vec(),
            spectrum: fft.make_output_vec(),
            scratch: fft.make_scratch_vec(),
            magnitude: vec![0.0; FRAME / 2 + 1],
            fft,
        }
    }

    /// The rate it analyses, Hz.
    pub fn rate(&self) -> f32 {
        self.rate
    }

    /// Feed one sample; every [`HOP`] samples, returns the 12 class weights (C first), each 0
    /// to 1. Never allocates.
    #[inline]
    pub fn push(&mut self, x: f32) -> Option<[f32; 12]> {
        self.history[self.pos] = if x.is_finite() {
            x.clamp(-super::bands::INPUT_LIMIT, super::bands::INPUT_LIMIT)
        } else {
            0.0
        };
        self.pos = (self.pos + 1) % FRAME;
        self.until_hop -= 1;
        if self.until_hop > 0 {
            return None;
        }
        self.until_hop = HOP;
        Some(self.analyse())
    }

    /// Analyse a signal at another rate from now on (the bins' frequencies follow), at rest.
    /// Never allocates.
    pub fn set_rate(&mut self, rate: f32) {
        if rate.is_finite() {
            self.rate = rate.clamp(1_000.0, 200_000.0);
        }
        self.reset();
    }

    /// Back to rest: the history forgotten.
    pub fn reset(&mut self) {
        self.history.fill(0.0);
        self.pos = 0;
        self.until_hop = HOP;
    }

    fn analyse(&mut self) -> [f32; 12] {
        let (old, new) = self.history.split_at(self.pos);
        let mut square = 0.0f64;
        for ((x, w), slot) in new.iter().chain(old).zip(&self.window).zip(&mut self.input) {
            *slot = x * w;
            square += f64::from(*slot) * f64::from(*slot);
        }
        let mean_square = square as f32 / FRAME as f32 / self.window_power;
        let level_db = 10.0 * mean_square.max(1e-30).plog10();
        let loud = ((level_db - SILENCE_DBFS) / (FULL_DBFS - SILENCE_DBFS)).clamp(0.0, 1.0);
        if loud <= 0.0 {
            return [0.0; 12];
        }
        if self
            .fft
            .process_with_scratch(&mut self.input, &mut self.spectrum, &mut self.scratch)
            .is_err()
        {
            return [0.0; 12];
        }
        for (m, c) in self.magnitude.iter_mut().zip(&self.spectrum) {
            *m = c.norm();
        }
        let bin_hz = self.rate / FRAME as f32;
        let first = ((MIN_HZ / bin_hz) as usize).max(1);
        let last = ((MAX_HZ / bin_hz) as usize).min(self.magnitude.len() - 2);
        let strongest = self.magnitude[first..=last]
            .iter()
            .fold(0.0f32, |m, &v| m.max(v));
        let threshold = strongest * 10f32.ppowf(-PEAK_RANGE_DB / 20.0);
        let mut classes = [0.0f32; 12];
        for k in first..=last {
            let (a, b, c) = (
                self.magnitude[k - 1],
                self.magnitude[k],
                self.magnitude[k + 1],
            );
            if !(b > a && b >= c && b > threshold) {
                continue;
            }
            // Parabolic interpolation of the peak on log magnitude.
            let (la, lb, lc) = (a.max(1e-30).pln(), b.pln(), c.max(1e-30).pln());
            let den = la - 2.0 * lb + lc;
            let delta = if den < 0.0 {
                (0.5 * (la - lc) / den).clamp(-0.5, 0.5)
            } else {
                0.0
            };
            let hz = (k as f32 + delta) * bin_hz;
            let midi = 69.0 + 12.0 * (hz / 440.0).plog2();
            let nearest = midi.round();
            let off = (std::f32::consts::PI * (midi - nearest)).pcos();
            classes[(nearest as i32).rem_euclid(12) as usize] += b * off * off;
        }
        let top = classes.iter().fold(0.0f32, |m, &v| m.max(v));
        if top <= 0.0 {
            return [0.0; 12];
        }
        let mean = classes.iter().sum::<f32>() / 12.0;
        let tonal =
            ((top / mean - NOISE_CONTRAST) / (TONAL_CONTRAST - NOISE_CONTRAST)).clamp(0.0, 1.0);
        classes
            .map(|c| ((c / top - CLASS_FLOOR) / (1.0 - CLASS_FLOOR)).clamp(0.0, 1.0) * tonal * loud)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The weights of the last hop of `seconds` of `signal(t)` at `fs`, through the decimator
    /// and the analyzer, as the bridge runs them.
    fn last_weights(fs: f32, seconds: f32, signal: impl Fn(f32) -> f32) -> [f32; 12] {
        let mut d = Decimator::new(fs);
        let mut a = ChromaAnalyzer::new(d.rate());
        let mut last = None;
        for n in 0..(fs * seconds) as usize {
            if let Some(w) = d.next(signal(n as f32 / fs)).and_then(|x| a.push(x)) {
                last = Some(w);
            }
        }
        last.expect("at least one hop")
    }

    /// Classes by weight, strongest first.
    fn ranked(w: &[f32; 12]) -> Vec<usize> {
        let mut order: Vec<usize> = (0..12).collect();
        order.sort_by(|&a, &b| w[b].total_cmp(&w[a]));
        order
    }

    fn sine(hz: f32, t: f32) -> f32 {
        (std::f32::consts::TAU * hz * t).sin()
    }

    /// After a loud passage, silence brings the decimator's filters to exact rest (each
    /// section's state used to cycle around 1e-25 forever when one half was flushed alone),
    /// never through subnormals.
    #[test]
    fn the_decimator_comes_to_rest() {
        for fs in [44_100.0, 48_000.0, 96_000.0] {
            let mut d = Decimator::new(fs);
            for i in 0..48_000 {
                d.next(if i % 3 == 0 { 0.9 } else { -0.7 });
            }
            let mut rested = None;
            for i in 0..fs as usize {
                d.next(0.0);
                let states = d.filters.iter().flat_map(|f| f.state());
                assert!(states.clone().all(|s| s == 0.0 || s.is_normal()));
                if d.at_rest() {
                    rested = Some(i);
                    break;
                }
            }
            assert!(rested.is_some(), "{fs} Hz: no rest within a second");
        }
    }

    #[test]
    fn a_c_major_triad_gives_c_e_and_g() {
        for fs in [44_100.0f32, 48_000.0, 96_000.0] {
            let w = last_weights(fs, 1.0, |t| {
                0.2 * (sine(261.63, t) + sine(329.63, t) + sine(392.0, t))
            });
            let mut top = ranked(&w)[..3].to_vec();
            top.sort();
            assert_eq!(top, vec![0, 4, 7], "{fs} Hz: {w:?}");
            assert!(w[0] > 0.5 && w[4] > 0.5 && w[7] > 0.5, "{w:?}");
        }
        // A piano-like triad an octave lower, with harmonics at 1/k: still C, E, G on top.
        let w = last_weights(48_000.0, 1.0, |t| {
            [130.81f32, 164.81, 196.0]
                .iter()
                .map(|f| {
                    (1..6)
                        .map(|k| 0.1 / k as f32 * sine(f * k as f32, t))
                        .sum::<f32>()
                })
                .sum()
        });
        let mut top = ranked(&w)[..3].to_vec();
        top.sort();
        assert_eq!(top, vec![0, 4, 7], "{w:?}");
    }

    #[test]
    fn a_440_hz_sine_gives_a_alone() {
        let w = last_weights(48_000.0, 1.0, |t| 0.5 * sine(440.0, t));
        assert_eq!(ranked(&w)[0], 9, "{w:?}");
        assert!(w[9] > 0.99, "{w:?}");
        let others = w.iter().enumerate().filter(|&(c, _)| c != 9);
        assert!(others.clone().all(|(_, &v)| v < 0.05), "{w:?}");
        // A1 (55 Hz) and A7 (3520 Hz) too.
        for hz in [55.0f32, 3_520.0] {
            let w = last_weights(44_100.0, 1.0, |t| 0.5 * sine(hz, t));
            assert_eq!(ranked(&w)[0], 9, "{hz} Hz: {w:?}");
        }
    }

    #[test]
    fn silence_noise_and_garbage_give_nothing() {
        assert_eq!(last_weights(48_000.0, 1.0, |_| 0.0), [0.0; 12]);
        // Under -60 dBFS: nothing.
        assert_eq!(
            last_weights(48_000.0, 1.0, |t| 0.0005 * sine(440.0, t)),
            [0.0; 12]
        );
        // White noise (seeded): no class stands out, at any hop.
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::SmallRng::seed_from_u64(3);
        let mut d = Decimator::new(48_000.0);
        let mut a = ChromaAnalyzer::new(d.rate());
        for n in 0..96_000 {
            let x = rng.random_range(-0.5f32..0.5);
            if let Some(w) = d.next(x).and_then(|x| a.push(x))
                && n > 20_000
            {
                assert!(w.iter().all(|&v| v < 0.25), "noise: {w:?}");
            }
        }
        let mut a = ChromaAnalyzer::new(11_025.0);
        for n in 0..20 * HOP {
            let x = [f32::NAN, f32::INFINITY, 1.0e30][n % 3];
            if let Some(w) = a.push(x) {
                assert!(w.iter().all(|v| v.is_finite() && (0.0..=1.0).contains(v)));
            }
        }
    }

    #[test]
    fn the_decimator_lands_near_11_khz() {
        for (fs, factor) in [
            (22_050.0f32, 2),
            (44_100.0, 4),
            (48_000.0, 4),
            (96_000.0, 9),
        ] {
            let d = Decimator::new(fs);
            assert_eq!(decimation(fs), factor);
            assert!(
                (10_000.0..12_500.0).contains(&d.rate()),
                "{fs}: {}",
                d.rate()
            );
        }
    }
}
