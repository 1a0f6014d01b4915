//! The GIF writer and its quantiser: exact palettes, determinism, the frame delays, a round
//! trip through a decoder.

use super::super::tests::{
    Scratch, decode_gif, file_names, fluid_like, options, quantise_error, solid,
};
use super::*;

#[test]
fn quantiser_is_exact_up_to_256_colours_and_close_beyond() {
    let mut quantiser = Quantiser::default();
    let mut indices = Vec::new();
    // 256 colours, scattered: exact.
    let few: Vec<u8> = (0..64 * 64u32)
        .flat_map(|i| {
            let k = (i * 37 % 256) as u8;
            [k, k.wrapping_mul(3), 255 - k, 255]
        })
        .collect();
    let palette = quantiser.quantise(&few, 64, 64, &mut indices).unwrap();
    assert_eq!(palette.len(), 256 * 3);
    assert_eq!(quantise_error(&few, &indices, &palette), 0.0);
    // Smooth, fluid-like frames: within a couple of levels.
    for t in 0..3 {
        let frame = fluid_like(160, 90, t as f32);
        let palette = quantiser.quantise(&frame, 160, 90, &mut indices).unwrap();
        assert!(palette.len() <= 256 * 3);
        assert_eq!(indices.len(), 160 * 90);
        assert!(indices.iter().all(|&i| usize::from(i) * 3 < palette.len()));
        let error = quantise_error(&frame, &indices, &palette);
        assert!(error < 3.0, "error {error}");
    }
    // Noise: every index valid, no panic.
    let mut seed = 1u32;
    let noise: Vec<u8> = (0..128 * 128)
        .flat_map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            let [r, g, b, _] = seed.to_le_bytes();
            [r, g, b, 255]
        })
        .collect();
    let palette = quantiser.quantise(&noise, 128, 128, &mut indices).unwrap();
    assert!(palette.len() <= 256 * 3 && palette.len() > 200 * 3);
    assert!(indices.iter().all(|&i| usize::from(i) * 3 < palette.len()));
    assert!(quantise_error(&noise, &indices, &palette) < 16.0);
    // A size that does not match: no palette.
    assert!(quantiser.quantise(&noise, 100, 100, &mut indices).is_none());
}

#[test]
fn quantiser_is_deterministic_and_keeps_no_state_between_frames() {
    let frames: Vec<Vec<u8>> = (0..3).map(|t| fluid_like(96, 54, t as f32)).collect();
    let mut reused = Quantiser::default();
    let mut indices = Vec::new();
    for frame in frames.iter().chain(frames.iter().rev()) {
        let palette = reused.quantise(frame, 96, 54, &mut indices).unwrap();
        let mut fresh_indices = Vec::new();
        let fresh = Quantiser::default()
            .quantise(frame, 96, 54, &mut fresh_indices)
            .unwrap();
        assert_eq!((&palette, &indices), (&fresh, &fresh_indices));
    }
}

/// Saturated colours close to one curve through the colour space (the density-hue look): the
/// palette still gets all 256 entries (quantette's default Oklab histogram gives it 209 here).
#[test]
fn quantiser_spends_the_palette_on_saturated_ramps() {
    let (w, h) = (256u32, 64u32);
    let frame: Vec<u8> = (0..h)
        .flat_map(|y| {
            (0..w).flat_map(move |x| {
                // A hue ramp at full saturation, a little darker downwards.
                let t = x as f32 / w as f32 * 6.0;
                let v = 1.0 - y as f32 / h as f32 * 0.1;
                let c = |k: f32| {
                    let d = ((t + k) % 6.0 - 3.0).abs();
                    ((d - 1.0).clamp(0.0, 1.0) * v * 255.0).round() as u8
                };
                [c(0.0), c(4.0), c(2.0), 255]
            })
        })
        .collect();
    let mut indices = Vec::new();
    let palette = Quantiser::default()
        .quantise(&frame, w, h, &mut indices)
        .unwrap();
    let mut used = [false; 256];
    for &i in &indices {
        used[usize::from(i)] = true;
    }
    let used = used.iter().filter(|&&u| u).count();
    assert!(used >= 250, "{used} palette entries used");
    let error = quantise_error(&frame, &indices, &palette);
    assert!(error < 4.0, "error {error}");
}

#[test]
fn gif_delays_keep_the_long_run_rate() {
    let delays =
        |fps: u32, n: u64| -> Vec<Option<u16>> { (0..n).map(|i| gif_delay(i, fps)).collect() };
    assert_eq!(delays(25, 3), [Some(4); 3]);
    assert_eq!(delays(50, 3), [Some(2); 3]);
    assert_eq!(delays(30, 6), [3, 4, 3, 3, 4, 3].map(Some));
    assert_eq!(delays(1, 2), [Some(100); 2]);
    // 60 fps: 5 of every 6 frames kept, each for 2/100 s.
    let sixty = delays(60, 12);
    assert_eq!(
        sixty,
        [
            Some(2),
            None,
            Some(2),
            Some(2),
            Some(2),
            Some(2),
            Some(2),
            None,
            Some(2),
            Some(2),
            Some(2),
            Some(2)
        ]
    );
    for fps in [
        1, 7, 12, 24, 25, 29, 30, 40, 48, 50, 59, 60, 90, 120, 144, 240,
    ] {
        // One second of frames lasts one second (within one slot above 50 fps).
        let total: u64 = delays(fps, u64::from(fps) * 10)
            .into_iter()
            .flatten()
            .map(u64::from)
            .sum();
        assert!((998..=1000).contains(&total), "{fps} fps: {total}");
        if fps <= 50 {
            assert_eq!(total, 1000, "{fps} fps");
        }
        assert!(
            delays(fps, 500).into_iter().flatten().all(|d| d >= 2),
            "{fps} fps"
        );
    }
}

#[test]
fn gif_round_trips() {
    let scratch = Scratch::new("gif");
    let path = scratch.0.join("sub/out.gif");
    let (w, h) = (32, 24);
    let colours = [[255, 0, 0], [12, 200, 99], [0, 0, 0], [250, 250, 250]];
    let mut writer = open(&OutputKind::Gif, &options(path.clone(), w, h, 25)).unwrap();
    for c in colours {
        writer.write(&solid(w, h, c)).unwrap();
    }
    // A smooth gradient of 768 colours, like dye.
    let gradient: Vec<u8> = (0..h)
        .flat_map(|y| {
            (0..w).flat_map(move |x| [(x * 8) as u8, (y * 10) as u8, ((x + y) * 4) as u8, 255])
        })
        .collect();
    writer.write(&gradient).unwrap();
    assert_eq!(writer.frames_written(), 5);
    let summary = writer.finish().unwrap().expect("frames were written");
    println!("{summary}");
    assert!(summary.contains("out.gif, 5 frames, "), "{summary}");
    assert_eq!(file_names(&scratch.0.join("sub")), ["out.gif"]);

    let (dw, dh, frames) = decode_gif(&path);
    assert_eq!((u32::from(dw), u32::from(dh)), (w, h));
    assert_eq!(frames.len(), 5);
    for (i, c) in colours.iter().enumerate() {
        assert_eq!(frames[i].0, 4);
        assert_eq!(frames[i].1, solid(w, h, *c), "frame {i}");
    }
    // More than 256 colours: quantised, within a few levels on average.
    let error: u64 = frames[4]
        .1
        .iter()
        .zip(&gradient)
        .map(|(&a, &b)| u64::from(a.abs_diff(b)))
        .sum();
    let mean = error as f64 / gradient.len() as f64;
    assert!(mean < 3.0, "mean error {mean}");
}

#[test]
fn gif_at_60_fps_keeps_at_most_50() {
    let scratch = Scratch::new("gif60");
    let path = scratch.0.join("fast.gif");
    let mut writer = open(&OutputKind::Gif, &options(path.clone(), 8, 8, 60)).unwrap();
    for i in 0..12u8 {
        writer.write(&solid(8, 8, [i * 20, 0, 0])).unwrap();
    }
    assert_eq!(writer.frames_written(), 12);
    let summary = writer.finish().unwrap().expect("frames were written");
    println!("{summary}");
    assert!(
        summary.contains("10 frames at 50 fps (of 12 rendered at 60 fps"),
        "{summary}"
    );
    let (_, _, frames) = decode_gif(&path);
    let kept: Vec<u8> = [0, 2, 3, 4, 5, 6, 8, 9, 10, 11].map(|i| i * 20).to_vec();
    assert_eq!(frames.len(), kept.len());
    for ((delay, pixels), red) in frames.iter().zip(kept) {
        assert_eq!(*delay, 2);
        assert_eq!(pixels[..4], [red, 0, 0, 255]);
    }
}
