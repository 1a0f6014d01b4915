//! `dyeflow render`: notes show up where and when they should, CPU renders are identical run
//! to run (and thread count to thread count), clicks in a WAV make onset bursts on time, an
//! interrupted render keeps its frames, and every kind of bad input gets one clear sentence
//! and exit code 2.

use crate::common;

use common::xvfb::{Image, hue_distance, hue_value};
use dyeflow::cli::render::{self, RenderOptions};
use dyeflow::params::BackendChoice;
use midly::Format;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("render-tests")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A type-1 MIDI file at 120 bpm with notes at (start s, length s, key).
fn midi_file(notes: &[(f64, f64, u8)]) -> Vec<u8> {
    common::midi::midi_file(Format::Parallel, notes)
}

/// A small, fast CPU render into `dir` (PNG frames).
fn small(dir: &Path, fps: u32, seconds: f64) -> RenderOptions {
    RenderOptions {
        out: dir.join("frames"),
        width: 320,
        height: 180,
        fps,
        seconds: Some(seconds),
        backend: BackendChoice::Cpu,
        sim: Some(128),
        dye: Some(2),
        progress: false,
        ..RenderOptions::default()
    }
}

fn frame(dir: &Path, index: usize) -> Image {
    let path = dir
        .join("frames")
        .join(format!("frame_{:06}.png", index + 1));
    Image::decode_png(&std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

/// Circle mapping (fixed places): C4, E4 and G4 at 0.5, 1.0 and 1.5 s. Each appears, in its
/// hue, at its place on the circle in the first frame after its time, and not in the frame
/// before.
#[test]
fn notes_show_at_their_places_hues_and_times() {
    let dir = scratch("notes");
    let mid = dir.join("notes.mid");
    std::fs::write(
        &mid,
        midi_file(&[(0.5, 0.3, 60), (1.0, 0.3, 64), (1.5, 0.3, 67)]),
    )
    .unwrap();
    let preset = dir.join("circle.json");
    std::fs::write(
        &preset,
        r#"{"params": {"mapping": "circle", "dye_diss": 1.0}}"#,
    )
    .unwrap();
    let fps = 20;
    let opts = RenderOptions {
        midi: Some(mid),
        preset: Some(preset),
        ..small(&dir, fps, 2.0)
    };
    let summary = render::render(&opts, &AtomicBool::new(false)).unwrap();
    assert_eq!(summary.frames, 40);
    assert!(!summary.interrupted);

    // Canvas 16:9, 1 tall, centre (8/9, 0.5); octave 5 sits 0.06 + 5 * 0.04 = 0.26 from it;
    // C at the top, 30 degrees clockwise per semitone (E 120, G 210).
    let aspect = 16.0f32 / 9.0;
    let place = |semitones: f32| {
        let a = (90.0 - 30.0 * semitones).to_radians();
        let (x, y) = (aspect / 2.0 + 0.26 * a.cos(), 0.5 + 0.26 * a.sin());
        ((x / aspect * 320.0) as u32, ((1.0 - y) * 180.0) as u32)
    };
    for (time, semitones, hue) in [(0.5, 0.0, 0.0), (1.0, 4.0, 120.0), (1.5, 7.0, 210.0)] {
        let (x, y) = place(semitones);
        let k = (time * f64::from(fps)).round() as usize;
        let (_, before) = hue_value(frame(&dir, k - 1).brightest_near(x, y, 3));
        assert!(
            before < 0.1,
            "dye at ({x}, {y}) in frame {} before its note: {before}",
            k - 1
        );
        let (h, v) = hue_value(frame(&dir, k + 1).brightest_near(x, y, 4));
        assert!(
            v > 0.3 && hue_distance(h, hue) < 20.0,
            "frame {}: at ({x}, {y}) hue {h} value {v}, expected hue {hue}",
            k + 1
        );
    }
}

fn frame_hashes(dir: &Path) -> Vec<u64> {
    use std::hash::{Hash, Hasher};
    let mut files: Vec<_> = std::fs::read_dir(dir.join("frames"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "png"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| {
            let image = Image::decode_png(&std::fs::read(p).unwrap());
            let mut h = std::collections::hash_map::DefaultHasher::new();
            image.rgba.hash(&mut h);
            h.finish()
        })
        .collect()
}

/// The same MIDI and audio rendered twice on the CPU, with 1 and with 2 threads: the same
/// pixels in every frame.
#[test]
fn cpu_renders_are_identical() {
    let hashes: Vec<Vec<u64>> = [1, 2]
        .iter()
        .map(|&threads| {
            let dir = scratch(&format!("determinism-{threads}"));
            let mid = dir.join("song.mid");
            std::fs::write(
                &mid,
                midi_file(&[(0.1, 0.5, 48), (0.3, 0.6, 67), (0.6, 0.4, 72)]),
            )
            .unwrap();
            let wav = dir.join("clicks.wav");
            write_clicks(&wav, &[0.2, 0.7], 1.2);
            let opts = RenderOptions {
                midi: Some(mid),
                audio: Some(wav),
                cpu_threads: threads,
                ..small(&dir, 30, 1.2)
            };
            render::render(&opts, &AtomicBool::new(false)).unwrap();
            frame_hashes(&dir)
        })
        .collect();
    assert_eq!(hashes[0].len(), 36);
    assert_eq!(hashes[0], hashes[1], "frames differ between runs");
    assert!(
        hashes[0].windows(2).any(|w| w[0] != w[1]),
        "every frame is the same: nothing moved"
    );
}

/// A mono 48 kHz WAV of silence with a short full-scale click at each time.
fn write_clicks(path: &Path, times: &[f64], seconds: f64) {
    let rate = 48_000u32;
    let mut samples = vec![0i16; (seconds * f64::from(rate)) as usize];
    for &t in times {
        let at = (t * f64::from(rate)) as usize;
        for (i, s) in samples[at..at + 96].iter_mut().enumerate() {
            // A 2 ms decaying 2 kHz burst.
            let x =
                (i as f32 / 48.0 * std::f32::consts::TAU * 2.0).sin() * (-(i as f32) / 30.0).exp();
            *s = (x * 30_000.0) as i16;
        }
    }
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: rate,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut w = hound::WavWriter::create(path, spec).unwrap();
    for s in samples {
        w.write_sample(s).unwrap();
    }
    w.finalize().unwrap();
}

/// Total brightness of a frame.
fn brightness(image: &Image) -> f64 {
    image
        .rgba
        .chunks_exact(4)
        .map(|p| f64::from(p[0].max(p[1]).max(p[2])))
        .sum()
}

/// Audio alone: clicks at 0.50, 1.23 and 1.91 s each make an onset burst, seen as a jump in
/// the picture's brightness in the frame that follows the click (within one frame), and
/// nowhere else.
#[test]
fn clicks_make_onset_bursts_on_time() {
    let dir = scratch("clicks");
    let wav = dir.join("clicks.wav");
    let clicks = [0.5, 1.23, 1.91];
    write_clicks(&wav, &clicks, 2.5);
    let fps = 30;
    let opts = RenderOptions {
        audio: Some(wav),
        ..small(&dir, fps, 2.5)
    };
    render::render(&opts, &AtomicBool::new(false)).unwrap();
    let light: Vec<f64> = (0..75).map(|k| brightness(&frame(&dir, k))).collect();
    // A burst: the brightness grows by more than a third of its largest single-frame growth.
    let rises: Vec<f64> = light.windows(2).map(|w| w[1] - w[0]).collect();
    let biggest = rises.iter().copied().fold(0.0, f64::max);
    assert!(biggest > 0.0, "nothing ever lit up");
    let bursts: Vec<usize> = rises
        .iter()
        .enumerate()
        .filter(|&(k, &r)| r > biggest / 3.0 && (k == 0 || rises[k - 1] <= biggest / 3.0))
        .map(|(k, _)| k + 1)
        .collect();
    let expected: Vec<f64> = clicks.iter().map(|t| t * f64::from(fps)).collect();
    eprintln!("bursts in frames {bursts:?}, clicks at frames {expected:?}");
    assert_eq!(
        bursts.len(),
        clicks.len(),
        "bursts in frames {bursts:?}, clicks at frames {expected:?}"
    );
    for (&b, &e) in bursts.iter().zip(&expected) {
        assert!(
            (b as f64 - e).abs() <= 1.0 + 1e-9 || (b as f64 - e.ceil()).abs() < 1e-9,
            "burst in frame {b}, click at frame {e:.2}"
        );
    }
}

fn dyeflow(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_dyeflow"))
        .arg("render")
        .args(args)
        .output()
        .expect("run dyeflow");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Every bad input: one sentence on standard error naming the file and the problem, exit
/// code 2, no panic, and no output written.
#[test]
fn bad_input_gets_one_clear_sentence_and_exit_code_2() {
    let dir = scratch("bad");
    let good_mid = midi_file(&[(0.1, 0.2, 60)]);
    let write = |name: &str, bytes: &[u8]| {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        p.to_string_lossy().into_owned()
    };
    let truncated = write("truncated.mid", &good_mid[..good_mid.len() - 7]);
    let garbage = write("garbage.mid", b"this is not a midi file at all");
    let wav_as_mid = {
        let p = dir.join("clicks-really.mid");
        write_clicks(&p, &[0.1], 0.3);
        p.to_string_lossy().into_owned()
    };
    let mid_as_wav = write("song-really.wav", &good_mid);
    let six = {
        let p = dir.join("six.wav");
        let spec = hound::WavSpec {
            channels: 6,
            sample_rate: 48_000,
            bits_per_sample: 16,
            sample_format: hound::SampleFormat::Int,
        };
        let mut w = hound::WavWriter::create(&p, spec).unwrap();
        for _ in 0..600 {
            w.write_sample(0i16).unwrap();
        }
        w.finalize().unwrap();
        p.to_string_lossy().into_owned()
    };
    let bad_preset = write("bad.json", br#"{"params": {"visc": "thick"}}"#);
    let not_png = write("walls.png", b"GIF89a, not a PNG");
    let missing_png = dir.join("walls-missing.png").to_string_lossy().into_owned();
    let missing = dir.join("missing.mid").to_string_lossy().into_owned();
    let a_dir = dir.to_string_lossy().into_owned();
    let out = dir.join("out").to_string_lossy().into_owned();
    let ok_mid = write("ok.mid", &good_mid);
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--midi", &missing], "file not found"),
        (vec!["--midi", &a_dir], "directory"),
        (vec!["--midi", &truncated], "truncated"),
        (vec!["--midi", &garbage], "not a MIDI file"),
        (vec!["--midi", &wav_as_mid], "not a MIDI file"),
        (vec!["--audio", &mid_as_wav], "not a WAV file"),
        (vec!["--audio", &six], "6 channels"),
        (vec!["--preset", &bad_preset], "visc"),
        (vec!["--size", "100000x720"], "7680"),
        (vec!["--size", "12x12"], "16 to 7680"),
        (vec!["--size", "wide"], "WIDTHxHEIGHT"),
        (vec!["--fps", "0"], "1 to 240"),
        (vec!["--fps", "100000"], "1 to 240"),
        (vec!["--seconds", "-3"], "--seconds"),
        (vec!["--seconds", "1e9"], "--seconds"),
        (vec!["--seconds", "NaN"], "--seconds"),
        (vec!["--sim", "300"], "128, 256, 512, 1024, 2048"),
        (vec!["--dye", "3"], "1, 2, 4"),
        (vec!["--start", "500"], "past the end"),
        (
            vec!["--obstacles", "spiral"],
            "spiral: no such file or obstacle layout; the layouts are none, disc, pillars",
        ),
        (
            vec!["--obstacles", &not_png],
            "not a PNG image Dyeflow reads",
        ),
        (vec!["--obstacles", &missing_png], "file not found"),
    ];
    for (args, needle) in cases {
        let mut all = args.clone();
        all.extend(["--out", &out, "--backend", "cpu", "--quiet"]);
        if !args.iter().any(|a| *a == "--midi" || *a == "--audio") {
            all.extend(["--midi", &ok_mid]);
        }
        let (code, _, err) = dyeflow(&all);
        assert_eq!(code, 2, "{args:?}: exit {code}, stderr: {err}");
        assert!(
            err.contains(needle),
            "{args:?}: {err:?} does not say {needle:?}"
        );
        assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
        // One sentence; argument errors from the parser may add its "try --help" line.
        let first = err.trim().lines().next().unwrap_or_default();
        assert!(
            first.contains(needle),
            "{args:?}: the first line does not say it: {err}"
        );
        assert!(err.trim().lines().count() <= 3, "{args:?}: too much: {err}");
        for path in args.iter().filter(|a| a.contains(&*a_dir) && **a != a_dir) {
            let name = Path::new(path)
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            assert!(
                err.contains(&name),
                "{args:?}: the message does not name the file: {err}"
            );
        }
        assert!(!Path::new(&out).exists(), "{args:?} left output behind");
    }
}

/// Ctrl-C (SIGINT) stops a long render: exit code 130, every frame written so far is a whole
/// PNG in the output directory, and no temporary file or directory is left.
#[cfg(unix)]
#[test]
fn an_interrupted_render_keeps_its_frames() {
    let dir = scratch("interrupt");
    let out = dir.join("frames");
    let mut child = Command::new(env!("CARGO_BIN_EXE_dyeflow"))
        .args([
            "render",
            "--backend",
            "cpu",
            "--size",
            "320x180",
            "--sim",
            "128",
            "--fps",
            "30",
        ])
        .args(["--seconds", "600", "--quiet", "--out"])
        .arg(&out)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Frames are written into a hidden staging directory inside `out` until the render ends.
    let frames_so_far = || -> usize {
        std::fs::read_dir(&out).map_or(0, |d| {
            d.filter_map(Result::ok)
                .filter(|e| e.path().is_dir())
                .map(|e| {
                    std::fs::read_dir(e.path()).map_or(0, |f| {
                        f.filter_map(Result::ok)
                            .filter(|f| f.file_name().to_string_lossy().starts_with("frame_"))
                            .count()
                    })
                })
                .sum()
        })
    };
    let start = std::time::Instant::now();
    while frames_so_far() < 20 {
        assert!(start.elapsed().as_secs() < 60, "no frames after a minute");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // SAFETY: sending a signal to our own child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "exit status {status}");
    let mut frames = 0;
    for entry in std::fs::read_dir(&out).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            !name.ends_with(".part"),
            "a half-written frame or the staging directory was left: {name}"
        );
        if name.starts_with("frame_") {
            let image = Image::decode_png(&std::fs::read(&path).unwrap());
            assert_eq!((image.width, image.height), (320, 180));
            frames += 1;
        }
    }
    assert!((20..18_000).contains(&frames), "{frames} frames");
}

/// The same render on the GPU (lavapipe in CI) stays close to the CPU's: the solvers agree
/// within the parity tests' tolerances step by step, so the pictures differ by a few levels.
#[test]
fn gpu_render_stays_close_to_the_cpu_render() {
    if common::gpu_context().is_none() {
        return;
    }
    let pictures: Vec<Vec<Image>> = [BackendChoice::Cpu, BackendChoice::Gpu]
        .iter()
        .map(|&backend| {
            let dir = scratch(&format!("parity-{backend:?}"));
            let mid = dir.join("song.mid");
            std::fs::write(
                &mid,
                midi_file(&[(0.05, 1.0, 48), (0.2, 1.2, 67), (0.4, 1.0, 72)]),
            )
            .unwrap();
            let opts = RenderOptions {
                midi: Some(mid),
                backend,
                ..small(&dir, 20, 2.0)
            };
            let s = render::render(&opts, &AtomicBool::new(false)).unwrap();
            assert!(s.backend.starts_with(if backend == BackendChoice::Gpu {
                "gpu"
            } else {
                "cpu"
            }));
            (0..40).map(|k| frame(&dir, k)).collect()
        })
        .collect();
    for (k, (cpu, gpu)) in pictures[0].iter().zip(&pictures[1]).enumerate() {
        let diff: f64 = cpu
            .rgba
            .iter()
            .zip(&gpu.rgba)
            .map(|(&a, &b)| f64::from(a.abs_diff(b)))
            .sum::<f64>()
            / cpu.rgba.len() as f64;
        let max = cpu
            .rgba
            .iter()
            .zip(&gpu.rgba)
            .map(|(&a, &b)| a.abs_diff(b))
            .max()
            .unwrap();
        eprintln!("frame {k}: mean difference {diff:.3} levels, max {max}");
        assert!(
            diff < 1.0,
            "frame {k}: the GPU picture differs by {diff:.2} levels on average"
        );
        assert!(max <= 32, "frame {k}: a pixel differs by {max} levels");
    }
    assert!(
        brightness(&pictures[0][39]) > 0.0,
        "the CPU render is black"
    );
}

/// `--stats` measures the frames the render wrote: the last three quarters of them, with the
/// figures computed here from the PNG files agreeing; without `--stats` there are none. The
/// command line prints them.
#[test]
fn stats_measure_the_frames_written() {
    let dir = scratch("stats");
    let opts = RenderOptions {
        stats: true,
        ..small(&dir, 10, 2.0)
    };
    let summary = render::render(&opts, &AtomicBool::new(false)).unwrap();
    assert_eq!(summary.frames, 20);
    let p = summary.picture.expect("stats asked for");
    assert_eq!(p.frames, 15, "frames 6-20 of 20");

    let (mut luma, mut lit, mut pixels) = (0.0f64, 0u64, 0u64);
    for index in 5..20 {
        for px in frame(&dir, index).rgba.chunks_exact(4) {
            let y =
                0.2126 * f64::from(px[0]) + 0.7152 * f64::from(px[1]) + 0.0722 * f64::from(px[2]);
            luma += y;
            lit += u64::from(y > 25.0);
            pixels += 1;
        }
    }
    assert!(lit > 0, "the demo lights something in 2 s");
    assert!((p.mean_luma() - luma / pixels as f64).abs() < 1e-6);
    assert!((p.coverage() - lit as f64 / pixels as f64).abs() < 1e-9);
    assert!(p.lit_saturation() > 0.0 && p.lit_saturation() <= 1.0);

    let plain = render::render(&small(&dir, 10, 0.5), &AtomicBool::new(false)).unwrap();
    assert!(plain.picture.is_none());

    let out = dir.join("cli");
    let (code, stdout, stderr) = dyeflow(&[
        "--out",
        out.to_str().unwrap(),
        "--size",
        "160x90",
        "--fps",
        "8",
        "--seconds",
        "1",
        "--backend",
        "cpu",
        "--sim",
        "128",
        "--quiet",
        "--stats",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("Picture (6 of 8 frames, the last three quarters): mean luma"),
        "{stdout}"
    );
}

/// The colour of the frame's pixel at canvas point `p` (16:9, 1 tall, y up).
fn colour_at(image: &Image, p: [f32; 2]) -> [u8; 3] {
    let aspect = image.width as f32 / image.height as f32;
    let x = ((p[0] / aspect * image.width as f32) as usize).min(image.width as usize - 1);
    let y = (((1.0 - p[1]) * image.height as f32) as usize).min(image.height as usize - 1);
    let i = (y * image.width as usize + x) * 4;
    [image.rgba[i], image.rgba[i + 1], image.rgba[i + 2]]
}

/// `--obstacles` by name and by PNG, and the pillar channel's notes, show in the frames:
/// the pillars of the layout, a wall where the image is white, and a pillar exactly while
/// its note is held.
#[test]
fn obstacles_show_in_the_render() {
    use dyeflow::fluid::OBSTACLE_FILL_RGB8 as FILL;
    let dir = scratch("obstacles");
    let mid = dir.join("one.mid");
    // Middle C on channel 1 from 0.5 s to 1.5 s.
    std::fs::write(&mid, midi_file(&[(0.5, 1.0, 60)])).unwrap();
    let aspect = 16.0f32 / 9.0;

    // The Pillars layout: five discs on the middle line, at sixths of the width.
    let opts = RenderOptions {
        midi: Some(mid.clone()),
        obstacles: Some("pillars".into()),
        ..small(&dir, 10, 0.3)
    };
    render::render(&opts, &AtomicBool::new(false)).unwrap();
    // From the first frame on (before any step).
    for f in [frame(&dir, 0), frame(&dir, 2)] {
        for k in 1..=5 {
            assert_eq!(
                colour_at(&f, [aspect * k as f32 / 6.0, 0.5]),
                FILL,
                "pillar {k}"
            );
        }
        assert_ne!(colour_at(&f, [aspect / 12.0, 0.5]), FILL);
    }

    // A PNG: a white bar across the top third of a black image, any size.
    let (w, h) = (64u32, 30u32);
    let mut grey = vec![0u8; (w * h) as usize];
    for y in 0..10 {
        for x in 8..56 {
            grey[(y * w + x) as usize] = 255;
        }
    }
    let png_path = dir.join("bar.png");
    {
        let mut bytes = Vec::new();
        let mut e = png::Encoder::new(&mut bytes, w, h);
        e.set_color(png::ColorType::Grayscale);
        e.set_depth(png::BitDepth::Eight);
        let mut writer = e.write_header().unwrap();
        writer.write_image_data(&grey).unwrap();
        writer.finish().unwrap();
        std::fs::write(&png_path, bytes).unwrap();
    }
    let opts = RenderOptions {
        midi: Some(mid.clone()),
        obstacles: Some(png_path),
        ..small(&dir, 10, 0.3)
    };
    render::render(&opts, &AtomicBool::new(false)).unwrap();
    for f in [frame(&dir, 0), frame(&dir, 2)] {
        assert_eq!(colour_at(&f, [aspect / 2.0, 0.85]), FILL, "the bar");
        assert_ne!(colour_at(&f, [aspect / 2.0, 0.4]), FILL, "below the bar");
        assert_ne!(colour_at(&f, [0.05, 0.85]), FILL, "left of the bar");
    }

    // Notes on channel 1 as the pillar channel: middle C stands a pillar from 0.5 s to
    // 1.5 s, in the middle of the canvas (the pillar range is C2 to C6).
    let preset = dir.join("pillars.json");
    std::fs::write(
        &preset,
        r#"{"params": {"pillar_ch": 1}, "fields": {"state-version": "7"}}"#,
    )
    .unwrap();
    let opts = RenderOptions {
        midi: Some(mid),
        preset: Some(preset),
        ..small(&dir, 10, 2.0)
    };
    render::render(&opts, &AtomicBool::new(false)).unwrap();
    let centre = dyeflow::mapping::Pillar::for_key(60, 100.0 / 127.0, aspect).centre;
    assert_ne!(colour_at(&frame(&dir, 3), centre), FILL, "before the note");
    assert_eq!(
        colour_at(&frame(&dir, 10), centre),
        FILL,
        "while it is held"
    );
    assert_ne!(colour_at(&frame(&dir, 18), centre), FILL, "after it");
}

/// The bounding box of the pixels of `colour` in an image: (width, height) in pixels.
fn extent_of(image: &Image, colour: [u8; 3]) -> (u32, u32) {
    let (mut x0, mut y0, mut x1, mut y1) = (u32::MAX, u32::MAX, 0, 0);
    for y in 0..image.height {
        for x in 0..image.width {
            let i = ((y * image.width + x) * 4) as usize;
            if image.rgba[i..i + 3] == colour {
                (x0, y0, x1, y1) = (x0.min(x), y0.min(y), x1.max(x), y1.max(y));
            }
        }
    }
    assert!(x1 >= x0, "no pixel of {colour:?}");
    (x1 + 1 - x0, y1 + 1 - y0)
}

/// A circle stays a circle: in a square PNG given to `--obstacles`, and drawn in a preset's
/// saved mask, at 320x180 and at 180x320 (they used to be stretched to the frame: a 130x73
/// ellipse at 320x180).
#[test]
fn obstacle_images_and_saved_masks_keep_their_shape() {
    use dyeflow::fluid::OBSTACLE_FILL_RGB8 as FILL;
    let dir = scratch("obstacle-shapes");
    let side = 64u32;
    let disc = |x: u32, y: u32| (x as f32 + 0.5 - 32.0).hypot(y as f32 + 0.5 - 32.0) <= 24.0;
    let grey: Vec<u8> = (0..side * side)
        .map(|k| if disc(k % side, k / side) { 255 } else { 0 })
        .collect();
    let png_path = dir.join("circle.png");
    {
        let mut bytes = Vec::new();
        let mut e = png::Encoder::new(&mut bytes, side, side);
        e.set_color(png::ColorType::Grayscale);
        e.set_depth(png::BitDepth::Eight);
        let mut writer = e.write_header().unwrap();
        writer.write_image_data(&grey).unwrap();
        writer.finish().unwrap();
        std::fs::write(&png_path, bytes).unwrap();
    }
    let mut drawn = dyeflow::sim::obstacles::Mask::empty(64, 64);
    drawn.paint_disc([0.5, 0.5], 24.0 / 64.0, true);
    let preset = dir.join("circle.json");
    std::fs::write(
        &preset,
        serde_json::json!({
            "params": {},
            "fields": {
                "state-version": dyeflow::params::STATE_VERSION.to_string(),
                "obstacles": {"layout": "none", "mask": drawn.encode()},
            }
        })
        .to_string(),
    )
    .unwrap();
    for (width, height) in [(320, 180), (180, 320)] {
        for (obstacles, preset) in [(Some(png_path.clone()), None), (None, Some(preset.clone()))] {
            let opts = RenderOptions {
                width,
                height,
                obstacles,
                preset,
                ..small(&dir, 10, 0.1)
            };
            render::render(&opts, &AtomicBool::new(false)).unwrap();
            let (w, h) = extent_of(&frame(&dir, 0), FILL);
            let across = width.min(height) * 48 / 64;
            assert!(
                w.abs_diff(h) <= 4 && w.abs_diff(across) <= 6,
                "{width}x{height}: a {w}x{h} shape, not a circle {across} across"
            );
        }
    }
}

/// `--streamlines alone` draws the flow's lines on black, in the speed ramp's colours, with
/// the obstacles over them; `overlay` draws them over the dye picture; the Currents preset
/// turns them on; without them the frame is the dye's.
#[test]
fn streamlines_show_in_the_render() {
    use dyeflow::fluid::{OBSTACLE_FILL_RGB8 as FILL, StreamlineMode};
    let dir = scratch("streamlines");
    let mid = dir.join("chord.mid");
    std::fs::write(
        &mid,
        midi_file(&[(0.0, 1.0, 60), (0.1, 1.0, 64), (0.2, 1.0, 67)]),
    )
    .unwrap();
    let run = |streamlines: Option<StreamlineMode>, preset: Option<&str>| {
        let opts = RenderOptions {
            midi: Some(mid.clone()),
            obstacles: Some("pillars".into()),
            streamlines,
            preset: preset.map(Into::into),
            ..small(&dir, 10, 1.0)
        };
        render::render(&opts, &AtomicBool::new(false)).unwrap();
        frame(&dir, 8)
    };
    let pixels = |f: &Image| {
        f.rgba
            .chunks(4)
            .map(|p| [p[0], p[1], p[2]])
            .collect::<Vec<_>>()
    };
    let alone = pixels(&run(Some(StreamlineMode::Alone), None));
    let black = alone.iter().filter(|p| **p == [0, 0, 0]).count();
    let solid = alone.iter().filter(|p| **p == FILL).count();
    let lit = alone.len() - black - solid;
    // The lines: some, thin (most of the frame stays black), coloured (the ramp has no grey).
    assert!(
        lit > 500 && black > alone.len() / 2,
        "{lit} lit, {black} black"
    );
    assert!(solid > 100, "the pillars over the lines: {solid}");
    // Saturated: the ramp's stops are all far from grey, and blending them with black keeps
    // their chroma over their value (only the pillars' anti-aliased rims mix in grey).
    let bright = |p: &&[u8; 3]| **p != FILL && *p.iter().max().unwrap() >= 48;
    let (n, coloured) = alone.iter().filter(bright).fold((0, 0), |(n, c), p| {
        let (hi, lo) = (
            p.iter().max().map_or(0, |&x| u32::from(x)),
            p.iter().min().map_or(0, |&x| u32::from(x)),
        );
        (n + 1, c + usize::from(2 * (hi - lo) >= hi))
    });
    assert!(n > 200 && coloured * 10 > n * 9, "{coloured} of {n}");

    let off = pixels(&run(None, None));
    let overlay = pixels(&run(Some(StreamlineMode::Overlay), None));
    let changed = off.iter().zip(&overlay).filter(|(a, b)| a != b).count();
    assert!(changed > 500, "the lines over the dye: {changed}");
    // Where the lines are not, the overlay is the picture.
    let kept = off
        .iter()
        .zip(&overlay)
        .zip(&alone)
        .filter(|((a, b), l)| **l == [0, 0, 0] && a == b)
        .count();
    assert!(kept * 100 >= black * 99, "{kept} of {black}");
    let currents = pixels(&run(None, Some("Currents")));
    let currents_off = pixels(&run(Some(StreamlineMode::Off), Some("Currents")));
    assert_ne!(currents, currents_off, "Currents draws lines");
}

/// `--model sph`: the notes become a liquid that falls and pools at the bottom of the frame
/// (the grid fluid's dye rises instead), lit in the notes' colours.
#[test]
fn the_particle_fluid_renders_a_pool() {
    use dyeflow::params::FluidChoice;
    let dir = scratch("particles-model");
    let mid = dir.join("chord.mid");
    std::fs::write(
        &mid,
        midi_file(&[
            (0.0, 1.5, 48),
            (0.0, 1.5, 60),
            (0.1, 1.5, 64),
            (0.2, 1.5, 67),
        ]),
    )
    .unwrap();
    let run = |fluid: FluidChoice| {
        let opts = RenderOptions {
            midi: Some(mid.clone()),
            fluid: Some(fluid),
            ..small(&dir, 10, 3.0)
        };
        render::render(&opts, &AtomicBool::new(false)).unwrap();
        frame(&dir, 29)
    };
    let halves = |f: &Image| {
        let (w, h) = (f.width as usize, f.height as usize);
        let lit = |rows: std::ops::Range<usize>| {
            rows.flat_map(|y| (0..w).map(move |x| (y * w + x) * 4))
                .filter(|&i| f.rgba[i..i + 3].iter().any(|&c| c > 60))
                .count()
        };
        (lit(0..h / 2), lit(h / 2..h))
    };
    let (top, bottom) = halves(&run(FluidChoice::Particles));
    eprintln!("particles: lit {top} in the top half, {bottom} in the bottom half");
    assert!(bottom > 5000, "a pool: {bottom}");
    assert!(bottom > 3 * top, "it fell: {top} above, {bottom} below");
    let (gtop, gbottom) = halves(&run(FluidChoice::Grid));
    eprintln!("grid: lit {gtop} in the top half, {gbottom} in the bottom half");
    assert!(
        gtop * 3 > gbottom,
        "the grid's dye does not pool: {gtop} {gbottom}"
    );
}

/// Luma (Rec. 709 on the 8-bit values) of every pixel.
fn lumas(img: &Image) -> Vec<f32> {
    img.rgba
        .chunks_exact(4)
        .map(|p| 0.2126 * f32::from(p[0]) + 0.7152 * f32::from(p[1]) + 0.0722 * f32::from(p[2]))
        .collect()
}

/// A dense burst (200 notes in 2 s over five octaves) fills the frame; a note played half a
/// second after it must still show as a distinct bright region: the pixels it brightens (by
/// 40 levels or more between the frame before it and the frame 0.15 s after) cover at least
/// 0.2 % of the frame and are on average 60 levels brighter than the frame's median. With
/// adaptive dye (the default) it does (81 levels, 2026-11-28); the same render with adaptive
/// dye off, printed for comparison, falls short (47 levels over a median of 139). The fresh
/// dye keeps more of its colour too: the saturation of its pixels is 0.45 against 0.39 (the
/// old dye's around it: 0.48 and 0.43; the filmic tone whitens the brightest dye).
#[test]
fn a_note_after_a_dense_burst_still_stands_out() {
    let dir = scratch("burst");
    let mid = dir.join("burst.mid");
    let mut notes: Vec<(f64, f64, u8)> = (0..200)
        .map(|i| (0.01 * f64::from(i), 0.3, 36 + ((i * 7) % 60) as u8))
        .collect();
    notes.push((2.5, 0.3, 72));
    std::fs::write(&mid, midi_file(&notes)).unwrap();
    let fps = 20;
    let measure = |adaptive: f32| {
        let sub = dir.join(format!("adaptive-{adaptive}"));
        std::fs::create_dir_all(&sub).unwrap();
        let preset = sub.join("preset.json");
        std::fs::write(
            &preset,
            format!(
                r#"{{"params": {{"adapt_dye": {adaptive}}}, "fields": {{"state-version": "{}"}}}}"#,
                dyeflow::params::STATE_VERSION
            ),
        )
        .unwrap();
        let opts = RenderOptions {
            midi: Some(mid.clone()),
            preset: Some(preset),
            ..small(&sub, fps, 2.8)
        };
        render::render(&opts, &AtomicBool::new(false)).unwrap();
        // The frame just before the late note (2.45 s) and 0.15 s after it.
        let before = lumas(&frame(&sub, (2.45 * f64::from(fps)) as usize - 1));
        let after_frame = frame(&sub, (2.65 * f64::from(fps)) as usize - 1);
        let after = lumas(&after_frame);
        let mut sorted = after.clone();
        sorted.sort_by(f32::total_cmp);
        let median = sorted[sorted.len() / 2];
        let lit: Vec<f32> = before
            .iter()
            .zip(&after)
            .filter(|(b, a)| **a - **b >= 40.0)
            .map(|(_, a)| *a)
            .collect();
        let share = lit.len() as f32 / after.len() as f32;
        let mean = lit.iter().sum::<f32>() / lit.len().max(1) as f32;
        let covered = after.iter().filter(|&&l| l > 25.0).count() as f32 / after.len() as f32;
        // Saturation, (max - min) / max, of the fresh note's pixels and of the old dye's
        // (the other lit pixels).
        let saturation = |px: &[u8]| {
            let (hi, lo) = (px[..3].iter().max().unwrap(), px[..3].iter().min().unwrap());
            f32::from(hi - lo) / f32::from((*hi).max(1))
        };
        let (mut fresh, mut old) = ((0.0, 0), (0.0, 0));
        for ((px, b), a) in after_frame.rgba.chunks_exact(4).zip(&before).zip(&after) {
            let into = if a - b >= 40.0 {
                &mut fresh
            } else if *a > 25.0 {
                &mut old
            } else {
                continue;
            };
            into.0 += saturation(px);
            into.1 += 1;
        }
        let (fresh, old) = (fresh.0 / fresh.1.max(1) as f32, old.0 / old.1.max(1) as f32);
        eprintln!(
            "adaptive {adaptive}: the note brightens {:.2} % of the frame to a mean luma of \
             {mean:.1}, the frame's median {median:.1}, {:.1} % of it lit; saturation of the \
             fresh dye {fresh:.2}, of the old {old:.2}",
            100.0 * share,
            100.0 * covered
        );
        (share, mean - median, fresh)
    };
    let (share, lift, fresh) = measure(1.0);
    let (share_off, lift_off, fresh_off) = measure(0.0);
    assert!(share >= 0.002, "the note's region: {share}");
    assert!(lift >= 60.0, "the note stands {lift} above the median");
    assert!(
        share * lift > share_off * lift_off,
        "adaptive dye helps the note stand out: {share} x {lift} against {share_off} x {lift_off}"
    );
    // Its colour too: less of a wash under it, so the fresh dye keeps more of its hue.
    assert!(
        fresh > fresh_off + 0.02,
        "the fresh dye's saturation: {fresh} against {fresh_off} without"
    );
}

/// A preset with an LFO on the hue renders the same frames every run (the LFO follows the
/// music's time), and other frames than the same preset without the route.
#[test]
fn an_lfo_in_a_preset_renders_the_same_every_run() {
    let dir = scratch("lfo");
    let mid = dir.join("notes.mid");
    std::fs::write(&mid, midi_file(&[(0.1, 1.0, 60), (0.4, 1.0, 67)])).unwrap();
    let version = dyeflow::params::STATE_VERSION;
    let route = r#"{\"source\": \"lfo1\", \"target\": \"hue\", \"depth\": 0.5}"#;
    let lfo = r#"{\"shape\": \"triangle\", \"sync\": false, \"hz\": 1.5}"#;
    let render_with = |name: &str, routes: &str| {
        let sub = dir.join(name);
        std::fs::create_dir_all(&sub).unwrap();
        let preset = sub.join("preset.json");
        std::fs::write(
            &preset,
            format!(
                r#"{{"params": {{}}, "fields": {{"state-version": "{version}", "modulation": "{{\"lfos\": [{lfo}], \"routes\": [{routes}]}}"}}}}"#
            ),
        )
        .unwrap();
        let opts = RenderOptions {
            midi: Some(mid.clone()),
            preset: Some(preset),
            ..small(&sub, 20, 1.5)
        };
        render::render(&opts, &AtomicBool::new(false)).unwrap();
        (0..30).map(|i| frame(&sub, i).rgba).collect::<Vec<_>>()
    };
    let a = render_with("a", route);
    let b = render_with("b", route);
    let plain = render_with("plain", "");
    assert!(a == b, "the same frames every run");
    let differ = a.iter().zip(&plain).filter(|(x, y)| x != y).count();
    assert!(
        differ >= 20,
        "{differ} of 30 frames differ from the render without the LFO"
    );
}
