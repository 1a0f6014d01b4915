//! The video writer against ffmpegs that misbehave: stand-ins that stall (before or after
//! taking every frame, with a process of their own holding the pipes) or exit 0 having written
//! a broken file. Each ends in bounded time with an error, killed where it stalled, and an
//! earlier video at the output stays as it was. (The real ffmpeg's round trips are in
//! `files/tests.rs`.)

use super::*;
use std::os::unix::fs::PermissionsExt;

/// A stand-in ffmpeg running `script` (a POSIX shell script; `$last` is the output path).
fn fake_ffmpeg(dir: &Path, name: &str, script: &str) -> PathBuf {
    let path = dir.join(name);
    fs::write(
        &path,
        format!("#!/bin/sh\nfor last; do :; done\n{script}\n"),
    )
    .unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// Options for a 320x180 MP4 at `path` through `ffmpeg`, patient for `patience`.
fn options(path: &Path, ffmpeg: &Path, patience: Duration) -> OutputOptions {
    OutputOptions {
        path: path.to_owned(),
        width: 320,
        height: 180,
        fps: 30,
        audio: None,
        audio_start_s: 0.0,
        max_frames: None,
        quality: Quality::Draft,
        threads: 0,
        stops: StopRequests::default(),
        encoder_patience: patience,
        ffmpeg: ffmpeg.to_owned(),
    }
}

fn frame() -> Vec<u8> {
    vec![90; 320 * 180 * 4]
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Whether process `pid` is gone (or a zombie nobody will see again).
fn gone(pid: u32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |s| {
        s.rsplit_once(") ").is_some_and(|(_, r)| r.starts_with('Z'))
    })
}

/// Pids of the processes whose command line holds `needle`.
fn pids_running(needle: &str) -> Vec<u32> {
    fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle))
                && !gone(*pid)
        })
        .collect()
}

/// An ffmpeg that never reads its input (a shell waiting on a child that holds the pipes):
/// the write that finds the queue full waits at most the patience, then ffmpeg and its child
/// are killed and the error says it stalled; nothing is left and the earlier file stays.
#[test]
fn an_ffmpeg_that_never_reads_is_killed_after_its_patience() {
    let dir = tempfile::tempdir().unwrap();
    // The child's command line holds a marker, so the test can look for it afterwards.
    let marker = format!("dyeflow-stall-{}", std::process::id());
    let ffmpeg = fake_ffmpeg(
        dir.path(),
        "ffmpeg",
        &format!("sh -c 'sleep 1000; : {marker}' & wait"),
    );
    let out = dir.path().join("out.mp4");
    fs::write(&out, b"the earlier video").unwrap();
    let mut writer =
        VideoWriter::open(&options(&out, &ffmpeg, Duration::from_secs(1)), "mp4").unwrap();
    let started = Instant::now();
    let mut error = None;
    for _ in 0..200 {
        if let Err(e) = writer.write(&frame()) {
            error = Some(e);
            break;
        }
    }
    let error = error.expect("a stalled ffmpeg fails a write");
    let waited = started.elapsed();
    assert!(
        matches!(error, RenderError::Ffmpeg(FfmpegFailure::Stalled { .. })),
        "{error}"
    );
    let text = error.to_string();
    assert!(
        text.contains("stalled") && text.contains("out.mp4"),
        "{text}"
    );
    assert!(waited < Duration::from_secs(20), "{waited:?}");
    // Later calls repeat it; finishing reports it and writes nothing.
    assert!(writer.write(&frame()).is_err());
    assert!(Box::new(writer).finish().is_err());
    assert_eq!(fs::read(&out).unwrap(), b"the earlier video");
    assert_eq!(names(dir.path()), ["ffmpeg", "out.mp4"]);
    // Its child went with it.
    assert_eq!(pids_running(&marker), Vec::<u32>::new());
}

/// An ffmpeg that takes every frame and then stalls: `finish` waits the patience, kills it.
#[test]
fn an_ffmpeg_that_stalls_at_the_end_is_killed_after_its_patience() {
    let dir = tempfile::tempdir().unwrap();
    let ffmpeg = fake_ffmpeg(dir.path(), "ffmpeg", "cat > /dev/null\nsleep 1000");
    let out = dir.path().join("out.mp4");
    let mut writer =
        VideoWriter::open(&options(&out, &ffmpeg, Duration::from_secs(1)), "mp4").unwrap();
    for _ in 0..5 {
        writer.write(&frame()).unwrap();
    }
    let started = Instant::now();
    let error = Box::new(writer).finish().unwrap_err();
    assert!(
        matches!(
            error,
            RenderError::Ffmpeg(FfmpegFailure::Stalled { frames: 5, .. })
        ),
        "{error}"
    );
    assert!(started.elapsed() < Duration::from_secs(20));
    assert!(!out.exists());
    assert_eq!(names(dir.path()), ["ffmpeg"]);
}

/// A stop requested while the renderer waits for a stalled ffmpeg lets the render end (that
/// frame is left out); another one while the video is finished abandons it at once.
#[test]
fn stops_end_the_waits_for_ffmpeg() {
    let dir = tempfile::tempdir().unwrap();
    let ffmpeg = fake_ffmpeg(dir.path(), "ffmpeg", "exec sleep 1000");
    let out = dir.path().join("out.mp4");
    fs::write(&out, b"the earlier video").unwrap();
    // Patient for longer than the test may take: only the stops end the waits.
    let opts = options(&out, &ffmpeg, Duration::from_secs(600));
    let stops = opts.stops.clone();
    let mut writer = VideoWriter::open(&opts, "mp4").unwrap();
    let requester = {
        let stops = stops.clone();
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(500));
            stops.request();
        })
    };
    let started = Instant::now();
    // Writes fill the queue, then one waits for ffmpeg until the stop comes and gives up its
    // frame.
    loop {
        let taken = writer.frames_written();
        writer.write(&frame()).unwrap();
        if writer.frames_written() == taken {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "never waited");
    }
    requester.join().unwrap();
    assert_eq!(stops.count(), 1);
    assert!(started.elapsed() >= Duration::from_millis(500));
    let second = {
        let stops = stops.clone();
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(500));
            stops.request();
        })
    };
    let error = Box::new(writer).finish().unwrap_err();
    second.join().unwrap();
    assert!(
        matches!(
            error,
            RenderError::Ffmpeg(FfmpegFailure::Interrupted { .. })
        ),
        "{error}"
    );
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(fs::read(&out).unwrap(), b"the earlier video");
    assert_eq!(names(dir.path()), ["ffmpeg", "out.mp4"]);
}

/// ffmpeg's exit status is not trusted alone: an exit 0 with an empty file, a file that is
/// not a whole video, one short of frames, or a whole one after a line saying the write
/// failed (ffmpeg 5.1 on a full disk) is an error, and the earlier file stays.
#[test]
fn an_exit_0_with_a_broken_video_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole.mp4");
    fs::write(&whole, super::super::verify::tests::mp4_of(5, 0)).unwrap();
    let short = dir.path().join("short.mp4");
    fs::write(&short, super::super::verify::tests::mp4_of(3, 0)).unwrap();
    let cases = [
        ("cat > /dev/null\n: > \"$last\"", "the file is empty"),
        (
            "cat > /dev/null\nprintf 'not a video at all' > \"$last\"",
            "claims more bytes",
        ),
        (
            &format!("cat > /dev/null\ncat '{}' > \"$last\"", short.display()),
            "holds 3 of the 5 frames",
        ),
        (
            &format!(
                "cat > /dev/null\ncat '{}' > \"$last\"\necho '[out#0/mp4 @ 0x5] Error writing \
                 trailer: No space left on device' >&2",
                whole.display()
            ),
            "No space left on device",
        ),
    ];
    let out = dir.path().join("out.mp4");
    fs::write(&out, b"the earlier video").unwrap();
    for (i, (script, why)) in cases.iter().enumerate() {
        let ffmpeg = fake_ffmpeg(dir.path(), &format!("ffmpeg{i}"), script);
        let mut writer =
            VideoWriter::open(&options(&out, &ffmpeg, ENCODER_PATIENCE), "mp4").unwrap();
        for _ in 0..5 {
            writer.write(&frame()).unwrap();
        }
        let error = Box::new(writer).finish().unwrap_err();
        assert!(
            matches!(error, RenderError::Ffmpeg(FfmpegFailure::Incomplete { .. })),
            "{i}: {error}"
        );
        let text = error.to_string();
        assert!(
            text.contains(why) && text.contains("unchanged"),
            "{i}: {text}"
        );
        assert_eq!(fs::read(&out).unwrap(), b"the earlier video", "{i}");
    }
    // The whole one, without the line, is written.
    let ffmpeg = fake_ffmpeg(
        dir.path(),
        "ffmpeg-good",
        &format!("cat > /dev/null\ncat '{}' > \"$last\"", whole.display()),
    );
    let mut writer = VideoWriter::open(&options(&out, &ffmpeg, ENCODER_PATIENCE), "mp4").unwrap();
    for _ in 0..5 {
        writer.write(&frame()).unwrap();
    }
    let summary = Box::new(writer).finish().unwrap().unwrap();
    assert!(summary.contains("5 frames"), "{summary}");
    assert_eq!(fs::read(&out).unwrap(), fs::read(&whole).unwrap());
}
