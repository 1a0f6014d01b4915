//! A render marker is untrusted input: whatever count it claims, a re-render works from what
//! the directory holds, in time bounded by its files, and never keeps a copy of itself.
//! (The frames' round trips and the user's files are in `files/tests.rs`.)

use super::*;

fn options(dir: &Path, stops: &StopRequests) -> OutputOptions {
    OutputOptions {
        path: dir.to_owned(),
        width: 4,
        height: 4,
        fps: 10,
        audio: None,
        audio_start_s: 0.0,
        max_frames: None,
        quality: Quality::Good,
        threads: 1,
        stops: stops.clone(),
        encoder_patience: ENCODER_PATIENCE,
        ffmpeg: PathBuf::from("ffmpeg"),
    }
}

/// Render `frames` frames of `grey` into `dir`.
fn render(dir: &Path, frames: u64, grey: u8) -> Result<Option<String>, RenderError> {
    let mut opts = options(dir, &StopRequests::default());
    opts.max_frames = Some(frames);
    let mut writer = PngWriter::open(&opts)?;
    for _ in 0..frames {
        writer.write(&[grey; 64])?;
    }
    Box::new(writer).finish()
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn marker(dir: &Path) -> Marker {
    serde_json::from_slice(&fs::read(dir.join(RENDER_MARKER)).unwrap()).unwrap()
}

fn write_marker(dir: &Path, json: &str) {
    fs::write(dir.join(RENDER_MARKER), json).unwrap();
}

/// Markers that claim a trillion frames, or the most a count can be, with three frames (or
/// none) on disk: a re-render of two frames replaces and removes what is there, marks the
/// directory with what it holds, and leaves no staging copy, at once (it lists the directory;
/// before, it looked for each claimed frame, which took hours, and the largest count
/// overflowed into a false error that kept a staging copy on every try).
#[test]
fn a_marker_claiming_more_frames_than_there_are() {
    let scratch = tempfile::tempdir().unwrap();
    for (i, claimed) in [1_000_000_000_000u64, u64::MAX, 3_456_000]
        .into_iter()
        .enumerate()
    {
        for on_disk in [3u64, 0] {
            let dir = scratch.path().join(format!("r{i}-{on_disk}"));
            render(&dir, on_disk.max(1), 9).unwrap();
            if on_disk == 0 {
                fs::remove_file(dir.join(frame_name(1))).unwrap();
            }
            write_marker(
                &dir,
                &format!(r#"{{"dyeflow-render":1,"frames":{claimed},"audio":null}}"#),
            );
            let started = Instant::now();
            for _ in 0..2 {
                render(&dir, 2, 7).unwrap();
            }
            assert!(started.elapsed() < Duration::from_secs(10), "{claimed}");
            assert_eq!(
                names(&dir),
                [RENDER_MARKER, "frame_000001.png", "frame_000002.png"],
                "{claimed}, {on_disk}"
            );
            assert_eq!(marker(&dir).frames, 2);
        }
    }
}

/// What a marker must be to be read: a small regular file, in the format, whose audio file is
/// a plain name in the directory. Anything else is refused, and nothing changes.
#[test]
fn a_marker_that_is_not_one_is_refused() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("frames");
    render(&dir, 1, 3).unwrap();
    let big = format!(
        r#"{{"dyeflow-render":1,"frames":1,"audio":null,"pad":"{}"}}"#,
        "x".repeat(MAX_MARKER_BYTES as usize)
    );
    for bad in [
        big.as_str(),
        r#"{"dyeflow-render":1,"frames":1,"audio":"../outside.wav"}"#,
        r#"{"dyeflow-render":1,"frames":1,"audio":"/etc/passwd"}"#,
        r#"{"dyeflow-render":1,"frames":1,"audio":""}"#,
        r#"{"dyeflow-render":2,"frames":1,"audio":null}"#,
        r#"{"dyeflow-render":1,"frames":-1,"audio":null}"#,
    ] {
        write_marker(&dir, bad);
        let e = render(&dir, 1, 5).unwrap_err();
        assert!(
            matches!(e, RenderError::Usage(UsageError::BadRenderMarker { .. })),
            "{bad:.80}: {e}"
        );
        assert_eq!(names(&dir), [RENDER_MARKER, "frame_000001.png"]);
    }
    // A marker that is a directory is no marker either.
    fs::remove_file(dir.join(RENDER_MARKER)).unwrap();
    fs::create_dir(dir.join(RENDER_MARKER)).unwrap();
    assert!(render(&dir, 1, 5).is_err());
}

/// A stop requested while an earlier render's frames past the new one's are removed ends the
/// removal; the directory is left as such a stop leaves it (the new frames in place, the
/// earlier ones past them, the marker naming them all), and the next render removes them.
#[test]
fn a_stop_during_the_clean_up_leaves_a_marked_directory() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("frames");
    render(&dir, 40, 9).unwrap();
    let past = frames_past(&dir, 2, 40).unwrap();
    assert_eq!(past.len(), 38);
    assert_eq!(past[0], dir.join(frame_name(3)));
    // The removal asks before each file.
    let asked = std::cell::Cell::new(0);
    let removed_all = remove_all(&past, || {
        asked.set(asked.get() + 1);
        asked.get() > 5
    })
    .unwrap();
    assert!(!removed_all);
    assert_eq!(names(&dir).len(), 41 - 5);
    // A stop requested before `finish` does not stop it: it counts from `finish` on.
    let stops = StopRequests::default();
    let mut opts = options(&dir, &stops);
    opts.max_frames = Some(2);
    let mut writer = PngWriter::open(&opts).unwrap();
    for _ in 0..2 {
        writer.write(&[1; 64]).unwrap();
    }
    stops.request();
    Box::new(writer).finish().unwrap();
    assert_eq!(
        names(&dir),
        [RENDER_MARKER, "frame_000001.png", "frame_000002.png"]
    );
    assert_eq!(marker(&dir).frames, 2);
    assert_eq!(decode_grey(&dir.join(frame_name(2))), 1);
}

fn decode_grey(path: &Path) -> u8 {
    let decoder = ::png::Decoder::new(std::io::BufReader::new(File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    reader.next_frame(&mut buf).unwrap();
    buf[0]
}
