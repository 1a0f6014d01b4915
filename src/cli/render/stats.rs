//! Figures of the picture a render made (`dyeflow render --stats`): how bright, how full and
//! how colourful it is, so a change to the look can be judged by numbers as well as by eye.
//!
//! Luma is Rec. 709's `Y' = 0.2126 R' + 0.7152 G' + 0.0722 B'` on the 8-bit (sRGB-encoded)
//! values, 0-255, as a video would measure it. Saturation is HSV's `(max - min) / max`.

/// Luma above which a pixel counts as lit (coverage; the saturation figure looks at these).
pub const LIT_LUMA: f64 = 25.0;
/// Luma above which a pixel counts as bright (half of full scale).
pub const BRIGHT_LUMA: f64 = 127.5;

/// Sums over the frames seen so far.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PictureStats {
    /// Frames added.
    pub frames: u64,
    pixels: u64,
    luma_sum: f64,
    luma_squares: f64,
    dark: u64,
    bright: u64,
    clipped: u64,
    lit: u64,
    lit_saturation_sum: f64,
}

impl PictureStats {
    /// Add one RGBA8 frame (alpha is ignored).
    pub fn add_frame(&mut self, rgba: &[u8]) {
        for px in rgba.chunks_exact(4) {
            let (r, g, b) = (f64::from(px[0]), f64::from(px[1]), f64::from(px[2]));
            let luma = 0.2126 * r + 0.7152 * g + 0.0722 * b;
            self.luma_sum += luma;
            self.luma_squares += luma * luma;
            if luma < LIT_LUMA {
                self.dark += 1;
            }
            if luma > BRIGHT_LUMA {
                self.bright += 1;
            }
            if px[0] == 255 && px[1] == 255 && px[2] == 255 {
                self.clipped += 1;
            }
            if luma > LIT_LUMA {
                self.lit += 1;
                let max = r.max(g).max(b);
                let min = r.min(g).min(b);
                self.lit_saturation_sum += (max - min) / max;
            }
        }
        self.pixels += (rgba.len() / 4) as u64;
        self.frames += 1;
    }

    fn share(&self, count: u64) -> f64 {
        if self.pixels == 0 {
            0.0
        } else {
            count as f64 / self.pixels as f64
        }
    }

    /// Mean luma, 0-255.
    pub fn mean_luma(&self) -> f64 {
        if self.pixels == 0 {
            0.0
        } else {
            self.luma_sum / self.pixels as f64
        }
    }

    /// The standard deviation of the luma over every pixel of every frame added, 0-255: how
    /// much contrast the picture has.
    pub fn luma_deviation(&self) -> f64 {
        if self.pixels == 0 {
            return 0.0;
        }
        let n = self.pixels as f64;
        let mean = self.luma_sum / n;
        (self.luma_squares / n - mean * mean).max(0.0).sqrt()
    }

    /// Share of dark pixels (luma below [`LIT_LUMA`]), 0-1.
    pub fn dark(&self) -> f64 {
        self.share(self.dark)
    }

    /// Share of pixels brighter than half (luma above [`BRIGHT_LUMA`]), 0-1.
    pub fn bright(&self) -> f64 {
        self.share(self.bright)
    }

    /// Share of pixels fully clipped to white, 0-1.
    pub fn clipped(&self) -> f64 {
        self.share(self.clipped)
    }

    /// Share of lit pixels (luma above [`LIT_LUMA`]), 0-1.
    pub fn coverage(&self) -> f64 {
        self.share(self.lit)
    }

    /// Mean saturation of the lit pixels, 0-1 (0 when none is lit).
    pub fn lit_saturation(&self) -> f64 {
        if self.lit == 0 {
            0.0
        } else {
            self.lit_saturation_sum / self.lit as f64
        }
    }

    /// The figures as one line: "mean luma 9.7 · deviation 12.0 · ...".
    pub fn line(&self) -> String {
        format!(
            "mean luma {:.1} of 255 · deviation {:.1} · darker than {LIT_LUMA} {:.1} % · \
             brighter than half {:.1} % · clipped white {:.1} % · coverage (luma > {LIT_LUMA}) \
             {:.1} % · saturation of lit pixels {:.2}",
            self.mean_luma(),
            self.luma_deviation(),
            100.0 * self.dark(),
            100.0 * self.bright(),
            100.0 * self.clipped(),
            100.0 * self.coverage(),
            self.lit_saturation(),
        )
    }
}

/// Whether frame `index` (from 0) of `total` is measured: the last three quarters, so the
/// figures describe the music playing rather than the fluid filling up from black.
pub fn measured(index: u64, total: u64) -> bool {
    index >= total / 4
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(pixels: &[[u8; 3]]) -> Vec<u8> {
        pixels
            .iter()
            .flat_map(|&[r, g, b]| [r, g, b, 255])
            .collect()
    }

    /// Four pixels: black, white, pure red, mid grey.
    /// Luma: 0, 255, 0.2126 * 255 = 54.2, 128. Mean (0 + 255 + 54.213 + 128) / 4 = 109.30.
    /// Bright (> 127.5): white and grey, 2 of 4. Clipped: white, 1 of 4. Lit (> 25): white,
    /// red, grey, 3 of 4, saturations 0, 1, 0: mean 1/3.
    #[test]
    fn known_answer() {
        let mut s = PictureStats::default();
        s.add_frame(&frame(&[
            [0, 0, 0],
            [255, 255, 255],
            [255, 0, 0],
            [128, 128, 128],
        ]));
        assert!((s.mean_luma() - 109.303).abs() < 1e-3, "{}", s.mean_luma());
        assert_eq!(s.bright(), 0.5);
        assert_eq!(s.clipped(), 0.25);
        assert_eq!(s.coverage(), 0.75);
        assert!((s.lit_saturation() - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(s.frames, 1);
        // Dark (< 25): black, 1 of 4. Deviation: sqrt(mean of squares - mean²), the squares
        // 0, 65025, 2939.05, 16384: mean 21087.01, less 109.303² = 11947.20: sqrt(9139.81)
        // = 95.60.
        assert_eq!(s.dark(), 0.25);
        assert!(
            (s.luma_deviation() - 95.60).abs() < 0.01,
            "{}",
            s.luma_deviation()
        );
    }

    /// Frames add up: a black frame halves the mean luma and the shares of a white one.
    #[test]
    fn frames_accumulate() {
        let mut s = PictureStats::default();
        s.add_frame(&frame(&[[255, 255, 255]; 4]));
        s.add_frame(&frame(&[[0, 0, 0]; 4]));
        assert!((s.mean_luma() - 127.5).abs() < 1e-9);
        assert_eq!(s.coverage(), 0.5);
        assert_eq!(s.clipped(), 0.5);
        assert_eq!(s.frames, 2);
    }

    #[test]
    fn nothing_measured_is_all_zeros() {
        let s = PictureStats::default();
        assert_eq!(
            (s.mean_luma(), s.coverage(), s.lit_saturation()),
            (0.0, 0.0, 0.0)
        );
        assert!(s.line().contains("mean luma 0.0"));
    }

    #[test]
    fn the_last_three_quarters_are_measured() {
        assert_eq!((0..8).filter(|&i| measured(i, 8)).count(), 6);
        assert!(!measured(1, 8) && measured(2, 8));
        // A single frame is measured.
        assert!(measured(0, 1));
    }
}
