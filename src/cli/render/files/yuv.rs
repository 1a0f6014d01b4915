//! RGBA frames as planar YUV 4:2:0 (`yuv420p`) for ffmpeg: BT.601 in the limited range, the
//! matrix ffmpeg itself converts RGB with by default, so a video looks as it did when ffmpeg
//! converted the frames (and the stream says which matrix it is, see `video.rs`).
//!
//! Converted here, on the thread that feeds ffmpeg, instead of in ffmpeg: its converter took
//! about 3 ms of CPU time a 1280x720 frame on the dev VM, and the pipe carried 2.7 times the
//! bytes (measured 2026-11-28, see `docs/src/internals/perf-render.md`).

/// Fixed-point weights (scaled by 2^16) of R, G and B for luma, limited range (16-235).
const Y: [i32; 3] = [16829, 33039, 6416];
/// The same for Cb and Cr (16-240), each centred on 128.
const CB: [i32; 3] = [-9714, -19070, 28784];
const CR: [i32; 3] = [28784, -24103, -4681];

/// The bytes of a `width x height` frame in yuv420p: a full luma plane and two quarter chroma
/// planes (the sizes ffmpeg expects of even frames; a video's frames are even, see `video.rs`).
pub(super) fn frame_len(width: usize, height: usize) -> usize {
    width * height + 2 * (width / 2) * (height / 2)
}

/// Convert `rgba` (`width x height`, both even) into `out` as yuv420p: the Y plane, then Cb,
/// then Cr. Each chroma sample is the average of its 2x2 pixels' colour.
pub(super) fn rgba_to_yuv420(rgba: &[u8], width: usize, height: usize, out: &mut Vec<u8>) {
    debug_assert!(width.is_multiple_of(2) && height.is_multiple_of(2));
    out.clear();
    out.resize(frame_len(width, height), 0);
    let (luma, chroma) = out.split_at_mut(width * height);
    let (cb, cr) = chroma.split_at_mut((width / 2) * (height / 2));
    let half = width / 2;
    for (j, pair) in rgba.chunks_exact(8 * width).enumerate() {
        let (top, bottom) = pair.split_at(4 * width);
        luma_row(top, &mut luma[2 * j * width..(2 * j + 1) * width]);
        luma_row(bottom, &mut luma[(2 * j + 1) * width..(2 * j + 2) * width]);
        chroma_row(
            top,
            bottom,
            &mut cb[j * half..(j + 1) * half],
            &mut cr[j * half..(j + 1) * half],
        );
    }
}

kernel! {
    /// One row of luma.
    fn luma_row(rgba: &[u8], y: &mut [u8]) {
        for (p, out) in rgba.chunks_exact(4).zip(y.iter_mut()) {
            let (r, g, b) = (i32::from(p[0]), i32::from(p[1]), i32::from(p[2]));
            // 16 plus the weighted sum, rounded; at most 235.
            *out = ((Y[0] * r + Y[1] * g + Y[2] * b + (16 << 16) + (1 << 15)) >> 16) as u8;
        }
    }
}

kernel! {
    /// One row of Cb and Cr from two rows of pixels: each from the sum of a 2x2 block.
    fn chroma_row(top: &[u8], bottom: &[u8], cb: &mut [u8], cr: &mut [u8]) {
        let blocks = top.chunks_exact(8).zip(bottom.chunks_exact(8));
        for ((t, b), (u, v)) in blocks.zip(cb.iter_mut().zip(cr.iter_mut())) {
            let sum = |c: usize| {
                i32::from(t[c]) + i32::from(t[c + 4]) + i32::from(b[c]) + i32::from(b[c + 4])
            };
            let (r, g, bl) = (sum(0), sum(1), sum(2));
            // Sums of four: two more bits of fraction to shift out. 128 plus the weighted
            // mean, rounded; within 16-240.
            let round = (128 << 18) + (1 << 17);
            *u = ((CB[0] * r + CB[1] * g + CB[2] * bl + round) >> 18) as u8;
            *v = ((CR[0] * r + CR[1] * g + CR[2] * bl + round) >> 18) as u8;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// BT.601 limited range in floating point, for a pixel (or a block's mean colour).
    fn reference(r: f64, g: f64, b: f64) -> [f64; 3] {
        let y = 16.0 + (65.481 * r + 128.553 * g + 24.966 * b) / 255.0;
        let cb = 128.0 + (-37.797 * r - 74.203 * g + 112.0 * b) / 255.0;
        let cr = 128.0 + (112.0 * r - 93.786 * g - 18.214 * b) / 255.0;
        [y, cb, cr]
    }

    #[test]
    fn matches_bt601_limited_range_within_rounding() {
        let (w, h) = (6, 4);
        let mut rgba = Vec::new();
        for i in 0..w * h {
            rgba.extend_from_slice(&[
                (i * 53 % 256) as u8,
                (i * 97 % 256) as u8,
                (i * 31) as u8,
                255,
            ]);
        }
        // Black, white and the primaries' extremes land on the range's ends.
        rgba[..16].copy_from_slice(&[
            0, 0, 0, 255, 255, 255, 255, 255, 255, 0, 0, 255, 0, 0, 255, 255,
        ]);
        let mut out = vec![1; 3];
        rgba_to_yuv420(&rgba, w, h, &mut out);
        assert_eq!(out.len(), frame_len(w, h));
        assert_eq!(out[0], 16, "black");
        assert_eq!(out[1], 235, "white");
        let px = |x: usize, y: usize, c: usize| f64::from(rgba[(y * w + x) * 4 + c]);
        for y in 0..h {
            for x in 0..w {
                let want = reference(px(x, y, 0), px(x, y, 1), px(x, y, 2))[0];
                let got = f64::from(out[y * w + x]);
                assert!((got - want).abs() <= 0.51, "Y at {x},{y}: {got} for {want}");
            }
        }
        let (hw, hh) = (w / 2, h / 2);
        for j in 0..hh {
            for i in 0..hw {
                let mean = |c: usize| {
                    (px(2 * i, 2 * j, c)
                        + px(2 * i + 1, 2 * j, c)
                        + px(2 * i, 2 * j + 1, c)
                        + px(2 * i + 1, 2 * j + 1, c))
                        / 4.0
                };
                let want = reference(mean(0), mean(1), mean(2));
                let cb = f64::from(out[w * h + j * hw + i]);
                let cr = f64::from(out[w * h + hw * hh + j * hw + i]);
                assert!(
                    (cb - want[1]).abs() <= 0.51,
                    "Cb at {i},{j}: {cb} for {}",
                    want[1]
                );
                assert!(
                    (cr - want[2]).abs() <= 0.51,
                    "Cr at {i},{j}: {cr} for {}",
                    want[2]
                );
            }
        }
    }

    /// Every colour stays within the limited range (no wrap-around of the bytes).
    #[test]
    fn extremes_stay_in_range() {
        let mut out = Vec::new();
        for rgb in [
            [255, 0, 0],
            [0, 255, 0],
            [0, 0, 255],
            [255, 255, 0],
            [0, 255, 255],
            [255, 0, 255],
        ] {
            let rgba: Vec<u8> = [rgb[0], rgb[1], rgb[2], 255].repeat(4);
            rgba_to_yuv420(&rgba, 2, 2, &mut out);
            assert!(
                out[..4].iter().all(|&y| (16..=235).contains(&y)),
                "{rgb:?}: {out:?}"
            );
            assert!(
                out[4..].iter().all(|&c| (16..=240).contains(&c)),
                "{rgb:?}: {out:?}"
            );
        }
    }
}
