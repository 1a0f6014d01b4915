//! Tests of every writer.

use super::gif::*;
use super::png::*;
use super::*;
use std::sync::atomic::AtomicUsize;

/// A unique scratch directory under the temp dir, removed on drop.
pub(super) struct Scratch(pub(super) PathBuf);

impl Scratch {
    pub(super) fn new(name: &str) -> Self {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("dyeflow-output-{}-{n}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

pub(super) fn options(path: PathBuf, width: u32, height: u32, fps: u32) -> OutputOptions {
    OutputOptions {
        path,
        width,
        height,
        fps,
        audio: None,
        audio_start_s: 0.0,
        max_frames: None,
        quality: Quality::Good,
        threads: 0,
        stops: StopRequests::default(),
        encoder_patience: ENCODER_PATIENCE,
        ffmpeg: PathBuf::from("ffmpeg"),
    }
}

/// A solid RGBA frame.
pub(super) fn solid(width: u32, height: u32, rgb: [u8; 3]) -> Vec<u8> {
    [rgb[0], rgb[1], rgb[2], 255].repeat(width as usize * height as usize)
}

/// A frame with a distinct colour per pixel, varying with `t`.
pub(super) fn pattern(width: u32, height: u32, t: u32) -> Vec<u8> {
    let mut rgba = Vec::with_capacity(width as usize * height as usize * 4);
    for y in 0..height {
        for x in 0..width {
            rgba.extend_from_slice(&[
                (x * 7 + t) as u8,
                (y * 13 + t * 3) as u8,
                (x * y + t * 5) as u8,
                255,
            ]);
        }
    }
    rgba
}

/// A smooth, fluid-like frame with a little noise, for the benchmark.
pub(super) fn fluid_like(width: u32, height: u32, t: f32) -> Vec<u8> {
    let mut rgba = Vec::with_capacity(width as usize * height as usize * 4);
    let mut seed = 0x9e37_79b9_u32;
    for y in 0..height {
        for x in 0..width {
            let (u, v) = (x as f32 / width as f32, y as f32 / height as f32);
            let swirl = (u * 9.0 + (v * 7.0 + t).sin() * 2.0).sin()
                * (v * 5.0 - (u * 4.0 - t).cos() * 1.5).cos();
            let dye = 0.5 + 0.5 * swirl;
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            let noise = (seed % 5) as f32 - 2.0;
            let c = |k: f32| ((dye * k).fract() * 255.0 + noise).clamp(0.0, 255.0) as u8;
            rgba.extend_from_slice(&[c(1.0), c(0.7 + 0.2 * u), c(0.35 + 0.3 * v), 255]);
        }
    }
    rgba
}

/// No temporary (`.part`) file or directory is left in `dir`.
fn assert_no_part_files(dir: &Path) {
    let names = file_names(dir);
    assert!(
        !names.iter().any(|n| n.ends_with(".part")),
        "temporary files left: {names:?}"
    );
}

pub(super) fn file_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn decode_png(path: &Path) -> (u32, u32, ::png::ColorType, Vec<u8>) {
    let file = BufReader::new(File::open(path).unwrap());
    let mut reader = ::png::Decoder::new(file).read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    (info.width, info.height, info.color_type, buf)
}

/// Decodes a GIF into (delay, RGBA pixels) per frame.
pub(super) fn decode_gif(path: &Path) -> (u16, u16, Vec<(u16, Vec<u8>)>) {
    let mut decode = ::gif::DecodeOptions::new();
    decode.set_color_output(::gif::ColorOutput::RGBA);
    let mut decoder = decode
        .read_info(BufReader::new(File::open(path).unwrap()))
        .unwrap();
    assert_eq!(decoder.repeat(), ::gif::Repeat::Infinite);
    let (width, height) = (decoder.width(), decoder.height());
    let mut frames = Vec::new();
    while let Some(frame) = decoder.read_next_frame().unwrap() {
        frames.push((frame.delay, frame.buffer.to_vec()));
    }
    (width, height, frames)
}

#[test]
fn kind_for_table() {
    let scratch = Scratch::new("kind");
    let existing = scratch.0.join("frames.gif");
    fs::create_dir_all(&existing).unwrap();
    let video = |container| Ok(OutputKind::Video { container });
    let table: [(&Path, Result<OutputKind, ()>); 11] = [
        (Path::new("out.gif"), Ok(OutputKind::Gif)),
        (Path::new("dir/Out.GIF"), Ok(OutputKind::Gif)),
        (Path::new("out.mp4"), video("mp4")),
        (Path::new("a/b.MP4"), video("mp4")),
        (Path::new("out.webm"), video("webm")),
        (Path::new("frames"), Ok(OutputKind::PngSequence)),
        (Path::new("out/frames"), Ok(OutputKind::PngSequence)),
        (Path::new("out.gif/"), Ok(OutputKind::PngSequence)),
        (&existing, Ok(OutputKind::PngSequence)),
        (Path::new("out.avi"), Err(())),
        (Path::new("frame.png"), Err(())),
    ];
    for (path, expected) in table {
        let got = kind_for(path);
        match (got, expected) {
            (Ok(got), Ok(expected)) => assert_eq!(got, expected, "{}", path.display()),
            (Err(RenderError::Usage(usage)), Err(())) => {
                let message = usage.to_string();
                let ext = path.extension().unwrap().to_string_lossy();
                assert!(message.contains(&format!("unknown output type '.{ext}'")));
                assert!(message.contains("use a directory (PNG frames), .gif, .mp4 or .webm"));
            }
            (got, expected) => panic!("{}: {got:?}, expected {expected:?}", path.display()),
        }
    }
    assert!(matches!(
        kind_for(Path::new("")),
        Err(RenderError::Usage(UsageError::EmptyOutputPath))
    ));
}

#[test]
fn png_sequence_round_trips() {
    let scratch = Scratch::new("png");
    let dir = scratch.0.join("nested/frames");
    let (w, h) = (7, 5);
    let frames = [pattern(w, h, 0), pattern(w, h, 1), solid(w, h, [1, 2, 3])];
    let mut writer = open(&OutputKind::PngSequence, &options(dir.clone(), w, h, 30)).unwrap();
    for frame in &frames {
        writer.write(frame).unwrap();
    }
    assert_eq!(writer.frames_written(), 3);
    let summary = writer.finish().unwrap().expect("frames were written");
    println!("{summary}");
    assert!(summary.starts_with("3 PNG frames in "), "{summary}");
    assert!(
        summary.contains("frame_000001.png … frame_000003.png"),
        "{summary}"
    );
    assert_eq!(
        file_names(&dir),
        [
            RENDER_MARKER,
            "frame_000001.png",
            "frame_000002.png",
            "frame_000003.png"
        ]
    );
    for (i, frame) in frames.iter().enumerate() {
        let (dw, dh, color, rgb) = decode_png(&dir.join(frame_name(i as u64 + 1)));
        assert_eq!((dw, dh, color), (w, h, ::png::ColorType::Rgb));
        let expected: Vec<u8> = frame
            .chunks_exact(4)
            .flat_map(|p| [p[0], p[1], p[2]])
            .collect();
        assert_eq!(rgb, expected, "frame {}", i + 1);
    }
}

/// Writes `frames` solid frames of `grey` into `dir` as PNG frames.
fn render_frames(dir: &Path, frames: u8, grey: u8) -> Result<Option<String>, RenderError> {
    let mut opts = options(dir.to_owned(), 4, 4, 60);
    opts.max_frames = Some(frames.into());
    let mut writer = open(&OutputKind::PngSequence, &opts)?;
    for _ in 0..frames {
        writer.write(&solid(4, 4, [grey; 3]))?;
    }
    writer.finish()
}

/// A directory of the user's files is never a render's, however they are named: it is
/// refused, and nothing in it changes.
#[test]
fn png_frames_never_go_into_a_folder_of_the_users_files() {
    let scratch = Scratch::new("theirs");
    let user = scratch.0.join("user");
    fs::create_dir(&user).unwrap();
    let theirs = [
        "frame_000001.png",
        "frame_000050.png",
        "frame_0000001.png",
        "frame_000009.png.part",
        "notes.txt",
    ];
    for name in theirs {
        fs::write(user.join(name), b"theirs").unwrap();
    }
    let e = render_frames(&user, 2, 9).unwrap_err();
    assert!(
        matches!(e, RenderError::Usage(UsageError::NotARender { .. })),
        "{e}"
    );
    let text = e.to_string();
    assert!(text.contains("frame_0000001.png and 4 more"), "{text}");
    let mut want: Vec<String> = theirs.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(file_names(&user), want);
    for name in theirs {
        assert_eq!(fs::read(user.join(name)).unwrap(), b"theirs", "{name}");
    }
}

/// A render's own directory is re-rendered: its frames replaced, those past the new render's
/// removed, and nothing else touched, the user's files named like frames included (a
/// canonical frame name it did not write is refused).
#[test]
fn png_frames_replace_only_files_a_render_wrote() {
    let scratch = Scratch::new("stale");
    // A render's directory, with the user's files added since.
    let dir = scratch.0.join("render");
    render_frames(&dir, 3, 1).unwrap();
    for name in [
        "frame_1234567.png",
        "frame_0000004.png",
        "frame_abc.png",
        "frame_000009.png.part",
        "notes.txt",
    ] {
        fs::write(dir.join(name), b"theirs").unwrap();
    }
    fs::create_dir(dir.join("frame_.png")).unwrap();
    render_frames(&dir, 2, 8).unwrap();
    assert_eq!(
        file_names(&dir),
        [
            RENDER_MARKER,
            "frame_.png",
            "frame_0000004.png",
            "frame_000001.png",
            "frame_000002.png",
            "frame_000009.png.part",
            "frame_1234567.png",
            "frame_abc.png",
            "notes.txt"
        ]
    );
    assert_eq!(decode_png(&dir.join("frame_000002.png")).3, [8; 48]);
    assert_eq!(fs::read(dir.join("frame_1234567.png")).unwrap(), b"theirs");

    // A frame name the render did not write: refused, nothing changes (without a known
    // length, any frame's name is).
    fs::write(dir.join("frame_000003.png"), b"theirs").unwrap();
    let mut opts = options(dir.clone(), 4, 4, 60);
    opts.max_frames = None;
    let e = open(&OutputKind::PngSequence, &opts)
        .err()
        .expect("refused");
    assert!(e.to_string().contains("frame_000003.png"), "{e}");
    let before = file_names(&dir);
    let e = render_frames(&dir, 5, 7).unwrap_err().to_string();
    assert!(
        e.contains("frame_000003.png") && e.contains("wrote 2 frames"),
        "{e}"
    );
    assert_eq!(file_names(&dir), before);
    assert_eq!(fs::read(dir.join("frame_000003.png")).unwrap(), b"theirs");
    assert_eq!(decode_png(&dir.join("frame_000002.png")).3, [8; 48]);
    // A damaged marker: refused.
    fs::remove_file(dir.join("frame_000003.png")).unwrap();
    fs::write(dir.join(RENDER_MARKER), b"{").unwrap();
    let e = render_frames(&dir, 1, 7).unwrap_err().to_string();
    assert!(e.contains("render marker does not read"), "{e}");
    // An empty directory (or one holding only a killed render's staging directory) is fine.
    let empty = scratch.0.join("empty");
    fs::create_dir_all(empty.join(".dyeflow-render-abc123.part")).unwrap();
    render_frames(&empty, 1, 5).unwrap();
}

#[test]
fn png_errors_from_encoder_threads_surface() {
    let scratch = Scratch::new("pngfail");
    let dir = scratch.0.join("frames");
    let mut writer = open(&OutputKind::PngSequence, &options(dir.clone(), 8, 8, 30)).unwrap();
    // Pull the directory out from under the encoders.
    fs::remove_dir_all(&dir).unwrap();
    fs::write(&dir, b"now a file").unwrap();
    let frame = solid(8, 8, [1, 2, 3]);
    let mut error = None;
    for _ in 0..50 {
        if let Err(e) = writer.write(&frame) {
            error = Some(e);
            break;
        }
    }
    let error = match error {
        Some(error) => error,
        None => writer.finish().unwrap_err(),
    };
    println!("{error}");
    assert!(
        matches!(&error, RenderError::Output { problem, .. } if problem.contains("could not write frame_0")),
        "{error}"
    );
}

/// An early error in `PngWriter::open` (here: the demo's audio cannot be written into the
/// staging directory) removes the directories it made, and only those.
#[test]
fn failed_png_open_removes_only_the_directories_it_made() {
    let scratch = Scratch::new("pngundo");
    let mut opts = options(scratch.0.join("new").join("frames"), 4, 4, 30);
    opts.audio = Some(AudioOut::Generated {
        name: "no-such-dir/demo.wav",
        bytes: vec![1, 2, 3],
    });
    let result = open(&OutputKind::PngSequence, &opts);
    assert!(
        matches!(result, Err(RenderError::Output { .. })),
        "{:?}",
        result.err()
    );
    assert_eq!(file_names(&scratch.0), Vec::<String>::new());

    // A directory that was there before stays, empty as it was.
    let existing = scratch.0.join("existing");
    fs::create_dir(&existing).unwrap();
    opts.path = existing.clone();
    assert!(open(&OutputKind::PngSequence, &opts).is_err());
    assert!(existing.is_dir());
    assert_eq!(file_names(&existing), Vec::<String>::new());
}

#[test]
fn encoders_bound_the_frames_in_flight_and_survive_a_panic() {
    let mut encoders = Encoders::<u64>::new("dyeflow-test", 2).unwrap();
    // Jobs that wait for a go: `buffer` hands out FRAMES_IN_FLIGHT buffers, then waits.
    let (go, gate) = mpsc::channel::<()>();
    let gate = Arc::new(Mutex::new(gate));
    let (done, finished) = mpsc::channel::<u8>();
    for i in 0..FRAMES_IN_FLIGHT as u8 {
        let mut buffer = encoders.buffer();
        buffer.push(i);
        let (gate, done) = (Arc::clone(&gate), done.clone());
        encoders.spawn(buffer, move |count, rgba| {
            let _ = gate.lock().recv();
            *count += 1;
            let _ = done.send(rgba[0]);
        });
    }
    let encoders = Arc::new(Mutex::new(encoders));
    let waiting = {
        let encoders = Arc::clone(&encoders);
        thread::spawn(move || encoders.lock().buffer())
    };
    thread::sleep(Duration::from_millis(100));
    assert!(
        !waiting.is_finished(),
        "a buffer was handed out past the bound"
    );
    go.send(()).unwrap();
    let buffer = waiting.join().unwrap();
    assert_eq!(buffer.len(), 1, "a used buffer comes back");
    for _ in 1..FRAMES_IN_FLIGHT {
        go.send(()).unwrap();
    }
    let mut encoders = Arc::into_inner(encoders).unwrap().into_inner();
    assert!(encoders.wait());
    let mut seen: Vec<u8> = finished.try_iter().collect();
    seen.sort_unstable();
    assert_eq!(seen, (0..FRAMES_IN_FLIGHT as u8).collect::<Vec<_>>());

    // A job that panics: its buffer comes back, `wait` says so, and later jobs still run.
    encoders.spawn(buffer, |_, _| panic!("an encoder failed"));
    for _ in 0..3 * FRAMES_IN_FLIGHT {
        let buffer = encoders.buffer();
        let done = done.clone();
        encoders.spawn(buffer, move |_, _| {
            let _ = done.send(1);
        });
    }
    assert!(!encoders.wait());
    assert_eq!(finished.try_iter().count(), 3 * FRAMES_IN_FLIGHT);
}

#[test]
fn writers_dropped_without_finish_leave_nothing_behind() {
    let scratch = Scratch::new("dropped");
    // An earlier render's output stays as it was.
    let frames = scratch.0.join("frames");
    fs::create_dir_all(&frames).unwrap();
    fs::write(frames.join("frame_000001.png"), b"earlier").unwrap();
    let marker = br#"{"dyeflow-render": 1, "frames": 1, "audio": null}"#;
    fs::write(frames.join(RENDER_MARKER), marker).unwrap();
    fs::write(scratch.0.join("earlier.gif"), b"earlier").unwrap();
    let (w, h) = (64, 48);
    for (kind, path) in [
        (OutputKind::PngSequence, frames.clone()),
        (OutputKind::PngSequence, scratch.0.join("new/deeper/frames")),
        (OutputKind::Gif, scratch.0.join("earlier.gif")),
        (OutputKind::Gif, scratch.0.join("sub/new.gif")),
    ] {
        let mut writer = open(&kind, &options(path.clone(), w, h, 30)).unwrap();
        for t in 0..3 * FRAMES_IN_FLIGHT as u32 {
            writer.write(&pattern(w, h, t)).unwrap();
        }
        drop(writer);
        assert_no_part_files(&scratch.0);
    }
    assert_eq!(file_names(&scratch.0), ["earlier.gif", "frames"]);
    assert_eq!(file_names(&frames), [RENDER_MARKER, "frame_000001.png"]);
    assert_eq!(fs::read(frames.join(RENDER_MARKER)).unwrap(), marker);
    assert_eq!(
        fs::read(frames.join("frame_000001.png")).unwrap(),
        b"earlier"
    );
    assert_eq!(fs::read(scratch.0.join("earlier.gif")).unwrap(), b"earlier");
}

#[test]
fn unwritable_outputs_are_output_errors() {
    let scratch = Scratch::new("unwritable");
    let blocker = scratch.0.join("blocker");
    fs::write(&blocker, b"a regular file").unwrap();
    for (kind, path) in [
        (OutputKind::PngSequence, blocker.join("frames")),
        (OutputKind::PngSequence, blocker.clone()),
        (OutputKind::Gif, blocker.join("sub/out.gif")),
        (
            OutputKind::Video { container: "mp4" },
            blocker.join("out.mp4"),
        ),
    ] {
        match open(&kind, &options(path.clone(), 8, 8, 30)) {
            Err(e @ RenderError::Output { .. }) => println!("{e}"),
            Err(e) => panic!("{}: {e}", path.display()),
            Ok(_) => panic!("{}: opened", path.display()),
        }
    }
}

#[test]
fn bad_frames_and_sizes_are_errors() {
    let scratch = Scratch::new("bad");
    let mut writer = open(
        &OutputKind::PngSequence,
        &options(scratch.0.join("f"), 4, 4, 30),
    )
    .unwrap();
    assert!(matches!(
        writer.write(&[0; 10]),
        Err(RenderError::Output { .. })
    ));
    writer.finish().unwrap();
    let mut writer = open(
        &OutputKind::Gif,
        &options(scratch.0.join("a.gif"), 4, 4, 30),
    )
    .unwrap();
    assert!(writer.write(&[0; 65]).is_err());
    drop(writer);
    assert!(!scratch.0.join("a.gif").exists());
    assert_no_part_files(&scratch.0);
    for (kind, w, h, fps) in [
        (OutputKind::PngSequence, 0, 4, 30),
        (OutputKind::Gif, 4, 4, 0),
        (OutputKind::Gif, 70000, 4, 30),
        (OutputKind::Video { container: "mp4" }, 5, 4, 30),
        (OutputKind::Video { container: "webm" }, 4, 7, 30),
    ] {
        let result = open(&kind, &options(scratch.0.join("x"), w, h, fps));
        assert!(
            matches!(result, Err(RenderError::Usage(_))),
            "{kind:?} {w}x{h}@{fps}"
        );
    }
    let Err(RenderError::Usage(usage @ UsageError::OddVideoSize { .. })) = open(
        &OutputKind::Video { container: "mp4" },
        &options(scratch.0.join("x.mp4"), 5, 4, 30),
    ) else {
        panic!("odd width accepted");
    };
    let message = usage.to_string();
    assert!(message.contains("even"), "{message}");
}

#[test]
fn video_or_a_helpful_tool_error() {
    let scratch = Scratch::new("video");
    let path = scratch.0.join("tiny.mp4");
    let result = open(
        &OutputKind::Video { container: "mp4" },
        &options(path.clone(), 64, 48, 30),
    );
    if ffmpeg_available() {
        let mut writer = result.unwrap();
        for t in 0..10 {
            writer.write(&pattern(64, 48, t)).unwrap();
        }
        let summary = writer.finish().unwrap().expect("frames were written");
        println!("{summary}");
        assert!(summary.contains("10 frames at 30 fps"), "{summary}");
        assert!(file_size(&path) > 0);
        assert_eq!(file_names(&scratch.0), ["tiny.mp4"]);

        // With audio, in both containers.
        let audio = scratch.0.join("tone.wav");
        let spec = hound::WavSpec {
            channels: 2,
            sample_rate: 48_000,
            bits_per_sample: 16,
            sample_format: hound::SampleFormat::Int,
        };
        let mut wav = hound::WavWriter::create(&audio, spec).unwrap();
        for n in 0..48_000 {
            let v = ((n as f32 * 0.05).sin() * 8000.0) as i16;
            wav.write_sample(v).unwrap();
            wav.write_sample(v).unwrap();
        }
        wav.finalize().unwrap();
        for (container, start) in [("mp4", 0.25), ("webm", -0.1)] {
            let path = scratch.0.join(format!("voiced.{container}"));
            let mut opts = options(path.clone(), 64, 48, 30);
            opts.audio = Some(AudioOut::File(audio.clone()));
            opts.audio_start_s = start;
            let mut writer = open(&OutputKind::Video { container }, &opts).unwrap();
            for t in 0..15 {
                writer.write(&pattern(64, 48, t)).unwrap();
            }
            let summary = writer.finish().unwrap().expect("frames were written");
            println!("{summary}");
            assert!(
                summary.ends_with('B') && summary.contains("with audio"),
                "{summary}"
            );
            assert!(file_size(&path) > 0);
            assert_no_part_files(&scratch.0);
        }
    } else {
        let Err(error @ RenderError::FfmpegMissing { .. }) = result else {
            panic!("expected ffmpeg to be missing");
        };
        let message = error.to_string();
        assert!(
            message.contains("ffmpeg") && message.contains("--out"),
            "{message}"
        );
        assert!(message.contains("tiny.mp4"), "{message}");
        assert_eq!(file_names(&scratch.0), Vec::<String>::new());
    }
}

/// Every quality of both containers writes a video whose decoded colours are the frames'
/// (flat blocks of saturated colours and a grey, within the codecs' loss), tagged with the
/// matrix they were converted with; frames handed over by `write_swap` too.
#[test]
fn video_keeps_the_colours_at_every_quality() {
    if !ffmpeg_available() {
        eprintln!("ffmpeg is not installed: video_or_a_helpful_tool_error covers that");
        return;
    }
    let scratch = Scratch::new("video-quality");
    let (w, h) = (64u32, 48u32);
    let colours: [[u8; 3]; 4] = [[220, 40, 30], [30, 200, 60], [40, 60, 230], [128, 128, 128]];
    let mut frame = Vec::new();
    for y in 0..h {
        for x in 0..w {
            let c = colours[usize::from(y >= h / 2) * 2 + usize::from(x >= w / 2)];
            frame.extend_from_slice(&[c[0], c[1], c[2], 255]);
        }
    }
    for container in ["mp4", "webm"] {
        for quality in [Quality::Draft, Quality::Good, Quality::Best] {
            let path = scratch.0.join(format!("{quality:?}.{container}"));
            let mut opts = options(path.clone(), w, h, 30);
            opts.quality = quality;
            let mut writer = open(&OutputKind::Video { container }, &opts).unwrap();
            let mut buffer = Vec::new();
            for _ in 0..8 {
                buffer.clone_from(&frame);
                writer.write_swap(&mut buffer).unwrap();
                buffer.fill(0);
            }
            writer.finish().unwrap().expect("frames were written");
            let probe = Command::new("ffprobe")
                .args([
                    "-v",
                    "error",
                    "-show_entries",
                    "stream=color_space",
                    "-of",
                    "csv=p=0",
                ])
                .arg(&path)
                .output()
                .unwrap();
            let tag = String::from_utf8_lossy(&probe.stdout);
            assert_eq!(tag.trim(), "smpte170m", "{}", path.display());
            let decoded = Command::new("ffmpeg")
                .args(["-v", "error", "-i"])
                .arg(&path)
                .args(["-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
                .output()
                .unwrap();
            let rgb = decoded.stdout;
            assert_eq!(rgb.len(), (w * h * 3) as usize, "{}", path.display());
            for (i, c) in colours.iter().enumerate() {
                // The middle of the block, away from its edges' chroma blending.
                let (x, y) = (
                    (i % 2) as u32 * w / 2 + w / 4,
                    (i / 2) as u32 * h / 2 + h / 4,
                );
                let at = ((y * w + x) * 3) as usize;
                for k in 0..3 {
                    let (got, want) = (i32::from(rgb[at + k]), i32::from(c[k]));
                    assert!(
                        (got - want).abs() <= 6,
                        "{}: block {i} channel {k}: {got} for {want}",
                        path.display()
                    );
                }
            }
        }
    }
}

#[test]
fn ffmpeg_failures_are_tool_errors() {
    if !ffmpeg_available() {
        return;
    }
    let scratch = Scratch::new("videofail");
    // A WAV that is not one: ffmpeg exits at once and the next write must say why.
    let audio = scratch.0.join("bad.wav");
    fs::write(&audio, b"not a wav file at all").unwrap();
    let mut opts = options(scratch.0.join("bad.webm"), 64, 48, 30);
    opts.audio = Some(AudioOut::File(audio));
    let mut writer = open(&OutputKind::Video { container: "webm" }, &opts).unwrap();
    let frame = pattern(64, 48, 0);
    let mut error = None;
    for _ in 0..2000 {
        if let Err(e) = writer.write(&frame) {
            error = Some(e);
            break;
        }
    }
    let error = error.unwrap_or_else(|| writer.finish().unwrap_err());
    println!("{error}");
    assert!(
        matches!(&error, RenderError::Ffmpeg(_)) && error.to_string().contains("ffmpeg"),
        "{error}"
    );
    assert!(!scratch.0.join("bad.webm").exists());
    assert_no_part_files(&scratch.0);
}

#[test]
fn command_hint() {
    assert_eq!(
        ffmpeg_command_hint(Path::new("out/frames"), 60, None),
        "ffmpeg -framerate 60 -start_number 1 -i out/frames/frame_%06d.png -c:v libx264 \
         -pix_fmt yuv420p -crf 18 out/frames.mp4"
    );
    assert_eq!(
        ffmpeg_command_hint(Path::new("my frames/"), 30, Some(Path::new("song's.wav"))),
        "ffmpeg -framerate 30 -start_number 1 -i 'my frames/frame_%06d.png' -i \
         'song'\\''s.wav' -c:v libx264 -pix_fmt yuv420p -crf 18 -c:a aac -b:a 192k -af apad \
         -shortest 'my frames.mp4'"
    );
}

/// The median of `runs` timings of `f`, in milliseconds.
/// Wall ms per frame to write `frames`, `runs` times over, through a real writer.
fn writer_ms(kind: &OutputKind, opts: &OutputOptions, frames: &[Vec<u8>], runs: usize) -> f64 {
    let mut writer = open(kind, opts).unwrap();
    let start = Instant::now();
    for i in 0..runs * frames.len() {
        writer.write(&frames[i % frames.len()]).unwrap();
    }
    writer.finish().unwrap();
    start.elapsed().as_secs_f64() * 1e3 / (runs * frames.len()) as f64
}

fn median_ms(runs: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[runs / 2]
}

/// Frames handed over by `write_swap` (more than the buffers in flight, so buffers come back
/// used) are written as they were, whatever the renderer then draws into the buffer it got
/// back.
#[test]
fn png_write_swap_keeps_each_frame() {
    let scratch = Scratch::new("png-swap");
    let dir = scratch.0.join("frames");
    let (w, h) = (9, 4);
    let frames: Vec<Vec<u8>> = (0..FRAMES_IN_FLIGHT as u32 * 3)
        .map(|t| pattern(w, h, t))
        .collect();
    let mut writer = open(&OutputKind::PngSequence, &options(dir.clone(), w, h, 30)).unwrap();
    let mut buffer = Vec::new();
    for frame in &frames {
        buffer.clone_from(frame);
        writer.write_swap(&mut buffer).unwrap();
        assert_eq!(buffer.len(), frame.len());
        // The next frame is drawn into it while this one is encoded.
        buffer.fill(0xa5);
    }
    writer.finish().unwrap().expect("frames were written");
    for (i, frame) in frames.iter().enumerate() {
        let (_, _, _, rgb) = decode_png(&dir.join(frame_name(i as u64 + 1)));
        let expected: Vec<u8> = frame
            .chunks_exact(4)
            .flat_map(|p| [p[0], p[1], p[2]])
            .collect();
        assert_eq!(rgb, expected, "frame {}", i + 1);
    }
}

/// The word-wise alpha drop equals dropping every fourth byte, for every pixel count around
/// its four-pixel blocks.
#[test]
fn rgba_to_rgb_drops_only_the_alpha() {
    let mut rgb = vec![7; 5];
    for pixels in 0..40usize {
        let rgba: Vec<u8> = (0..pixels * 4).map(|i| (i * 37 + 11) as u8).collect();
        rgba_to_rgb(&rgba, &mut rgb);
        let want: Vec<u8> = rgba.chunks_exact(4).flat_map(|p| p[..3].to_vec()).collect();
        assert_eq!(rgb, want, "{pixels} pixels");
    }
}

/// `cargo test --release --lib cli::render::files::tests::encode_speed -- --ignored --nocapture`
/// (this and [`encode_speed_gif`]).
#[test]
#[ignore = "benchmark"]
fn encode_speed_png() {
    const RUNS: usize = 15;
    let scratch = Scratch::new("bench");

    let (w, h) = (1280, 720);
    let frames: Vec<Vec<u8>> = (0..4).map(|t| fluid_like(w, h, t as f32 * 0.3)).collect();
    let (mut rgb, mut out) = (Vec::new(), Vec::new());
    for (label, filter) in [
        ("NoFilter", ::png::Filter::NoFilter),
        ("Sub", ::png::Filter::Sub),
        ("Up", ::png::Filter::Up),
        ("Paeth", ::png::Filter::Paeth),
        ("Adaptive", ::png::Filter::Adaptive),
    ] {
        let mut i = 0;
        let ms = median_ms(RUNS, || {
            i += 1;
            encode_png(&frames[i % 4], w, h, filter, &mut rgb, &mut out).unwrap();
        });
        let kb = out.len() as f64 / 1e3;
        println!("PNG 1280x720, Fast + {label}: {ms:.2} ms/frame, {kb:.0} kB");
    }
    let ms = writer_ms(
        &OutputKind::PngSequence,
        &options(scratch.0.join("png"), w, h, 60),
        &frames,
        RUNS,
    );
    println!(
        "PNG 1280x720 through the writer ({DEFAULT_ENCODER_THREADS} threads, to disk): {ms:.2} ms/frame"
    );
}

/// The GIF's quantisers (quantette's, the gif crate's NeuQuant for comparison) and writer.
#[test]
#[ignore = "benchmark"]
fn encode_speed_gif() {
    const RUNS: usize = 15;
    let scratch = Scratch::new("bench-gif");
    let (w, h) = (640, 360);
    let frames: Vec<Vec<u8>> = (0..4).map(|t| fluid_like(w, h, t as f32 * 0.3)).collect();
    let mut quantiser = Quantiser::default();
    let mut indices = Vec::new();
    let mut i = 0;
    let ms = median_ms(RUNS, || {
        i += 1;
        quantiser.quantise(&frames[i % 4], w, h, &mut indices);
    });
    let error = frames
        .iter()
        .map(|f| {
            let palette = quantiser.quantise(f, w, h, &mut indices).unwrap();
            quantise_error(f, &indices, &palette)
        })
        .sum::<f64>()
        / 4.0;
    println!("GIF 640x360, quantette quantise: {ms:.2} ms/frame, error {error:.2} levels");
    let mut kb = 0.0;
    let ms = median_ms(RUNS, || {
        i += 1;
        let frame = quantise_gif(&mut quantiser, &frames[i % 4], w as u16, h as u16, 2).unwrap();
        kb = frame.buffer.len() as f64 / 1e3;
    });
    println!("GIF 640x360, quantette quantise + LZW: {ms:.2} ms/frame, {kb:.0} kB");
    for speed in [10, 30] {
        let neuquant = |rgba: &[u8]| {
            let mut rgba = rgba.to_vec();
            ::gif::Frame::from_rgba_speed(w as u16, h as u16, &mut rgba, speed)
        };
        let ms = median_ms(RUNS.min(7), || {
            i += 1;
            neuquant(&frames[i % 4]);
        });
        let error = frames
            .iter()
            .map(|f| {
                let frame = neuquant(f);
                quantise_error(f, &frame.buffer, frame.palette.as_deref().unwrap())
            })
            .sum::<f64>()
            / 4.0;
        println!(
            "GIF 640x360, gif crate NeuQuant speed {speed} (for comparison): {ms:.2} ms/frame, \
             error {error:.2} levels"
        );
    }
    let ms = writer_ms(
        &OutputKind::Gif,
        &options(scratch.0.join("a.gif"), w, h, 30),
        &frames,
        RUNS,
    );
    println!(
        "GIF 640x360 through the writer ({DEFAULT_ENCODER_THREADS} threads, to disk): {ms:.2} ms/frame"
    );
}

/// The mean absolute error per channel of a quantised frame.
pub(super) fn quantise_error(rgba: &[u8], indices: &[u8], palette: &[u8]) -> f64 {
    let total: u64 = rgba
        .chunks_exact(4)
        .zip(indices)
        .map(|(pixel, &i)| {
            (0..3)
                .map(|c| u64::from(palette[usize::from(i) * 3 + c].abs_diff(pixel[c])))
                .sum::<u64>()
        })
        .sum();
    total as f64 / (indices.len() * 3) as f64
}
