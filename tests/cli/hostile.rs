//! `dyeflow render` against a hostile tester's inputs: files that are not files, images and
//! captures that would take all memory, output folders full of the user's own files, odd
//! modes and versions. Each gets one sentence and exit code 2 (or works), in bounded time and
//! memory, and no file of the user's is touched.

use crate::common;
#[cfg(unix)]
use crate::support::signal;
use crate::support::{dyeflow, small_demo, summary};
use dyeflow::capture::Record;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("hostile-tests")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Run to the end, at most `limit`; (exit code, stdout, stderr).
fn run_within(args: &[&str], limit: Duration) -> (i32, String, String) {
    let mut child = dyeflow()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run dyeflow");
    wait_within(&mut child, limit);
    summary(&child.wait_with_output().unwrap())
}

/// Run to the end (within a minute).
fn run(args: &[&str]) -> (i32, String, String) {
    run_within(args, Duration::from_secs(60))
}

/// Wait for a child, killing it and failing after `limit`.
fn wait_within(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// A capture at `path` (start 0 s, 48 kHz, parameters `visc`): `records`, then the end line
/// with `dropped` records lost and the stop at `stop_s`.
fn write_capture(
    path: &Path,
    records: impl IntoIterator<Item = Record>,
    dropped: u64,
    stop_s: f64,
) {
    use dyeflow::capture::file::{CaptureFile, FORMAT_NAME, FORMAT_VERSION, Header};
    let header = Header {
        format: FORMAT_NAME.into(),
        version: FORMAT_VERSION,
        plugin_version: "test".into(),
        sample_rate: 48_000.0,
        start_s: 0.0,
        params: vec!["visc".into()],
        state: serde_json::json!({"params": {}}),
        cause: None,
    };
    let _ = std::fs::remove_file(path);
    let mut file = CaptureFile::create(path, &header).unwrap();
    for r in records {
        file.write(&r).unwrap();
    }
    file.finish(dropped, stop_s).unwrap();
}

/// A note-on at `time_s`.
fn note_on(time_s: f64, key: u8) -> Record {
    use dyeflow::bridge::events::{NoteId, SimEvent, TimedEvent};
    Record::Event(TimedEvent {
        time_s,
        event: SimEvent::NoteOn {
            note: NoteId {
                key,
                channel: 0,
                voice: -1,
            },
            velocity: 0.8,
        },
    })
}

/// Make a FIFO at `path`.
#[cfg(unix)]
fn mkfifo(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid, NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

/// A FIFO given as any input is refused at once (its open would wait for a writer forever),
/// with one sentence naming it and exit code 2.
#[cfg(unix)]
#[test]
fn a_fifo_as_any_input_is_refused_at_once() {
    let dir = scratch("fifo");
    let fifo = dir.join("pipe.wav");
    mkfifo(&fifo);
    let fifo_s = text(&fifo);
    let out = text(&dir.join("out"));
    for option in ["--audio", "--midi", "--capture", "--preset", "--obstacles"] {
        let started = Instant::now();
        let (code, _, err) = run_within(
            &small_demo(&out, &[option, &fifo_s, "--seconds", "0.2"]),
            Duration::from_secs(20),
        );
        assert_eq!(code, 2, "{option}: {err}");
        assert!(
            err.contains(&fifo_s) && err.contains("not a regular file"),
            "{option}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{option}: {err}");
        assert!(started.elapsed() < Duration::from_secs(10), "{option}");
    }
    assert!(!dir.join("out").exists(), "nothing written");
    // And the capture's audio, which is only muxed, too.
    let capture = dir.join("c.dyeflow-capture");
    write_capture(&capture, [note_on(0.1, 60)], 0, 1.0);
    let (code, _, err) = run_within(
        &small_demo(&out, &["--capture", &text(&capture), "--audio", &fifo_s]),
        Duration::from_secs(20),
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not a regular file"), "{err}");
}

/// A 20000x20000 obstacle image (a few hundred kB of PNG) is refused from its header with one
/// sentence and exit code 2, in little memory (it used to take 1.9 GB grey, 3.1 GB RGBA).
#[cfg(target_os = "linux")]
#[test]
fn a_huge_obstacle_image_is_refused_in_little_memory() {
    use std::io::Write;
    let dir = scratch("huge-png");
    let path = dir.join("huge.png");
    let side = 20_000u32;
    {
        let file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        let mut e = png::Encoder::new(file, side, side);
        e.set_color(png::ColorType::Grayscale);
        e.set_depth(png::BitDepth::Eight);
        e.set_compression(png::Compression::Fastest);
        let mut writer = e.write_header().unwrap();
        let mut rows = writer.stream_writer().unwrap();
        let row = vec![0u8; side as usize];
        for _ in 0..side {
            rows.write_all(&row).unwrap();
        }
        rows.finish().unwrap();
    }
    let size = std::fs::metadata(&path).unwrap().len();
    assert!(size < 4 << 20, "a small file: {size} bytes");
    let out = text(&dir.join("out"));
    let (code, err, rss) = common::run_measuring_rss(dyeflow().args(small_demo(
        &out,
        &["--obstacles", &text(&path), "--seconds", "0.2"],
    )));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("20000x20000 pixels") && err.contains("at most"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(rss < 150 << 20, "peak memory {} MB", rss >> 20);
    assert!(!dir.join("out").exists());
}

/// The mode of a file.
#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Outputs are made with the umask's mode, as `File::create` makes files (0666 less the
/// umask; tempfile's 0600 before), and a re-render keeps the mode the user gave the file.
#[cfg(unix)]
#[test]
fn outputs_get_the_umasks_mode_and_keep_their_own() {
    use std::os::unix::process::CommandExt;
    let dir = scratch("modes");
    let with_umask = |args: &[&str], umask: libc::mode_t| {
        let mut command = dyeflow();
        command.args(args);
        // SAFETY: umask is async-signal-safe; the child calls it between fork and exec.
        unsafe {
            command.pre_exec(move || {
                libc::umask(umask);
                Ok(())
            })
        };
        let out = command.output().unwrap();
        let (code, _, err) = summary(&out);
        assert_eq!(code, 0, "{args:?}: {err}");
    };
    let mut outputs = vec![dir.join("a.gif")];
    if dyeflow::cli::render::files::ffmpeg_available() {
        outputs.push(dir.join("a.mp4"));
    } else {
        eprintln!("SKIPPED the mp4: no ffmpeg");
    }
    for out in &outputs {
        let out_s = text(out);
        with_umask(&small_demo(&out_s, &["--seconds", "0.2"]), 0o022);
        assert_eq!(mode(out), 0o644, "{out_s}");
        with_umask(&small_demo(&out_s, &["--seconds", "0.2"]), 0o002);
        assert_eq!(
            mode(out),
            0o644,
            "{out_s}: a re-render keeps the file's mode"
        );
        set_mode(out, 0o640);
        with_umask(&small_demo(&out_s, &["--seconds", "0.2"]), 0o022);
        assert_eq!(
            mode(out),
            0o640,
            "{out_s}: a re-render keeps the file's mode"
        );
    }
    // PNG frames: new ones with the umask's mode, replaced ones keep theirs.
    let frames = dir.join("frames");
    let frames_s = text(&frames);
    with_umask(&small_demo(&frames_s, &["--seconds", "0.2"]), 0o027);
    assert_eq!(mode(&frames.join("frame_000001.png")), 0o640);
    set_mode(&frames.join("frame_000002.png"), 0o600);
    with_umask(&small_demo(&frames_s, &["--seconds", "0.3"]), 0o022);
    assert_eq!(mode(&frames.join("frame_000001.png")), 0o640);
    assert_eq!(mode(&frames.join("frame_000002.png")), 0o600);
    assert_eq!(mode(&frames.join("frame_000003.png")), 0o644);
}

/// `--out` into a folder of the user's own files is refused, whatever they are named
/// (`frame_000050.png`, `frame_0000001.png`...), and nothing in it changes; into a render's
/// own folder it replaces only what that render wrote, and refuses where it would overwrite
/// a file the user added under a frame's name.
#[test]
fn a_render_never_touches_files_it_did_not_write() {
    let dir = scratch("out-dir");
    let user = dir.join("photos");
    std::fs::create_dir(&user).unwrap();
    let theirs = [
        "frame_000050.png",
        "frame_0000001.png",
        "frame_000002.png",
        "a.txt",
    ];
    for name in theirs {
        std::fs::write(user.join(name), name).unwrap();
    }
    let (code, _, err) = run(&small_demo(&text(&user), &["--seconds", "0.2"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("is not a Dyeflow render"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let mut names: Vec<String> = std::fs::read_dir(&user)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "a.txt",
            "frame_0000001.png",
            "frame_000002.png",
            "frame_000050.png"
        ]
    );
    for name in theirs {
        assert_eq!(std::fs::read_to_string(user.join(name)).unwrap(), name);
    }

    // A render's folder: the user adds a file under a later frame's name.
    let frames = dir.join("frames");
    let (code, _, err) = run(&small_demo(&text(&frames), &["--seconds", "0.3"]));
    assert_eq!(code, 0, "{err}");
    std::fs::write(frames.join("frame_000005.png"), "mine").unwrap();
    let (code, _, err) = run(&small_demo(&text(&frames), &["--seconds", "1"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("frame_000005.png"), "{err}");
    assert_eq!(
        std::fs::read_to_string(frames.join("frame_000005.png")).unwrap(),
        "mine"
    );
    // A shorter re-render replaces its own frames and leaves the user's file.
    let (code, _, err) = run(&small_demo(&text(&frames), &["--seconds", "0.2"]));
    assert_eq!(code, 0, "{err}");
    assert!(frames.join("frame_000002.png").exists());
    assert!(
        !frames.join("frame_000003.png").exists(),
        "a stale frame of its own stays"
    );
    assert_eq!(
        std::fs::read_to_string(frames.join("frame_000005.png")).unwrap(),
        "mine"
    );
}

/// A capture of `records` note-ons, one every millisecond from 0.1 s, at `path`; its end line
/// holds `dropped` records lost.
#[cfg(unix)]
fn long_capture(path: &Path, records: usize, dropped: u64) {
    // Streamed into the file: this process's memory would count in its child's peak (Linux
    // keeps the largest resident size across fork and exec).
    let notes = (0..records).map(|k| note_on(0.1 + k as f64 * 0.001, 40 + (k % 40) as u8));
    write_capture(path, notes, dropped, 0.1 + records as f64 * 0.001);
}

/// A large capture whose checksum is wrong is refused without holding its records (it took
/// 1.1 GB for 541 MB before: every record in memory, then the check); and Ctrl-C while one is
/// read stops at once, writing no frame.
#[cfg(target_os = "linux")]
#[test]
fn captures_are_checked_and_stopped_as_they_stream() {
    let dir = scratch("big-capture");
    let path = dir.join("big.dyeflow-capture");
    let records = 1_500_000;
    long_capture(&path, records, 0);
    let size = std::fs::metadata(&path).unwrap().len();
    eprintln!("capture: {records} records, {} MB", size >> 20);

    // The checksum damaged: the last digit of the end line's CRC.
    let damaged = dir.join("damaged.dyeflow-capture");
    {
        // Patched in place: the test's own memory would count in the child's peak too.
        use std::io::{Read, Seek, SeekFrom, Write};
        std::fs::copy(&path, &damaged).unwrap();
        let mut f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&damaged)
            .unwrap();
        // `..."crc32":NNN}}` and a newline: the last digit.
        f.seek(SeekFrom::End(-4)).unwrap();
        let mut digit = [0u8];
        f.read_exact(&mut digit).unwrap();
        assert!(digit[0].is_ascii_digit());
        f.seek(SeekFrom::End(-4)).unwrap();
        f.write_all(if digit[0] == b'1' { b"2" } else { b"1" })
            .unwrap();
    }
    let out = text(&dir.join("frames"));
    let (code, err, rss) = common::run_measuring_rss(dyeflow().args(small_demo(
        &out,
        &["--capture", &text(&damaged), "--seconds", "0.2"],
    )));
    eprintln!("peak RSS {} MB", rss >> 20);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("checksum does not match"), "{err}");
    let record_bytes = (records * std::mem::size_of::<Record>()) as u64;
    assert!(
        rss < 60 << 20 && rss < record_bytes / 2,
        "peak memory {} MB for {} MB of records",
        rss >> 20,
        record_bytes >> 20
    );

    // Ctrl-C while it is read: exit 130 within half a second, no frame, nothing left.
    let mut child = dyeflow()
        .args(small_demo(
            &out,
            &["--capture", &text(&path), "--seconds", "0.2"],
        ))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        child.try_wait().unwrap().is_none(),
        "it read the capture too fast to stop"
    );
    let sent = Instant::now();
    signal(&child, libc::SIGINT);
    let status = wait_within(&mut child, Duration::from_secs(10));
    let took = sent.elapsed();
    let (_, stdout, _) = summary(&child.wait_with_output().unwrap());
    assert_eq!(status.code(), Some(130), "{stdout}");
    assert!(stdout.contains("nothing was written"), "{stdout}");
    assert!(
        took < Duration::from_millis(500),
        "stopped {took:?} after the signal"
    );
    assert!(!dir.join("frames").exists(), "a frame was written");
}

/// A capture longer than a render may be is refused without --seconds, with the MIDI path's
/// message (it used to start 144 000 frames); with --seconds it renders. Its records lost while
/// recording are told as what they are.
#[test]
fn a_capture_longer_than_a_render_needs_seconds() {
    let dir = scratch("long-capture");
    let path = dir.join("long.dyeflow-capture");
    write_capture(
        &path,
        [note_on(0.1, 60), note_on(5.0 * 3600.0, 62)],
        3,
        5.0 * 3600.0,
    );
    let out = text(&dir.join("frames"));
    let (code, _, err) = run(&small_demo(&out, &["--capture", &text(&path)]));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(
            "the last event is at 5.0 hours, and a render is at most 4.0 hours; give --seconds"
        ),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(!dir.join("frames").exists());
    let (code, stdout, err) = run(&small_demo(
        &out,
        &["--capture", &text(&path), "--seconds", "0.2"],
    ));
    assert_eq!(code, 0, "{err}");
    assert!(
        stdout.contains("could not keep 3 records while capturing"),
        "{stdout}"
    );
    assert!(!stdout.contains("65 536"), "{stdout}");
}

/// A preset's state version that is no version is refused with one sentence (it loaded as
/// version 1); a newer one than this Dyeflow knows renders with a note.
#[test]
fn a_presets_state_version_is_read_or_refused() {
    let dir = scratch("versions");
    let out = text(&dir.join("frames"));
    let preset = |name: &str, version: &str| {
        let path = dir.join(name);
        std::fs::write(
            &path,
            format!(r#"{{"params": {{}}, "fields": {{"state-version": "{version}"}}}}"#),
        )
        .unwrap();
        text(&path)
    };
    let bad = preset("bad.json", "-1e99");
    let (code, _, err) = run(&small_demo(&out, &["--preset", &bad, "--seconds", "0.2"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("\"state-version\" is -1e99"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let newer = preset("newer.json", "999");
    let (code, stdout, err) = run(&small_demo(&out, &["--preset", &newer, "--seconds", "0.2"]));
    assert_eq!(code, 0, "{err}");
    assert!(
        stdout.contains(&format!(
            "Note: {newer}: made by a newer Dyeflow: its state version is 999"
        )),
        "{stdout}"
    );
}

/// Messages say what is wrong with the value given: a capture 0 s long (or starting at 1e300
/// s) is the file's problem, not "--start 0 is past the end"; a start past a capture's end
/// prints the start given.
#[test]
fn capture_lengths_and_starts_are_told_as_they_are() {
    let dir = scratch("capture-lengths");
    let out = text(&dir.join("frames"));
    let empty = dir.join("empty.dyeflow-capture");
    write_capture(&empty, [], 0, 0.0);
    let (code, _, err) = run(&small_demo(&out, &["--capture", &text(&empty)]));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("it holds nothing to render: it is 0 s long"),
        "{err}"
    );
    assert!(!err.contains("--start 0"), "{err}");
    let far = dir.join("far.dyeflow-capture");
    let mut text_of = std::fs::read_to_string({
        write_capture(&far, [note_on(0.5, 60)], 0, 1.0);
        &far
    })
    .unwrap();
    text_of = text_of.replacen("\"start_s\":0.0", "\"start_s\":1e300", 1);
    std::fs::write(&far, text_of).unwrap();
    let (code, _, err) = run(&small_demo(&out, &["--capture", &text(&far)]));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("its start time, 1e300 s, is past any audio time"),
        "{err}"
    );
    let short = dir.join("short.dyeflow-capture");
    write_capture(&short, [note_on(0.5, 60)], 0, 1.0);
    let (code, _, err) = run(&small_demo(
        &out,
        &["--capture", &text(&short), "--start", "7"],
    ));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--start 7 is past the end of the capture (1.00 s)"),
        "{err}"
    );
}

/// With a bad --preset or --obstacles the demo's banner does not come first: the error is the
/// one line on standard error. A good render still shows it.
#[test]
fn bad_input_is_one_sentence_before_any_banner() {
    let dir = scratch("banner");
    let out = text(&dir.join("frames"));
    let bad = dir.join("bad.json");
    std::fs::write(&bad, "{not json").unwrap();
    let bad = text(&bad);
    let base = [
        "render",
        "--backend",
        "cpu",
        "--size",
        "64x36",
        "--fps",
        "10",
        "--sim",
        "128",
        "--seconds",
        "0.2",
        "--out",
        &out,
    ];
    for extra in [["--preset", bad.as_str()], ["--obstacles", "spiral"]] {
        let args: Vec<&str> = base.iter().copied().chain(extra).collect();
        let (code, _, err) = run(&args);
        assert_eq!(code, 2, "{extra:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{extra:?}: {err}");
        assert!(err.starts_with("dyeflow render: "), "{extra:?}: {err}");
    }
    let (code, _, err) = run(&base);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("Rendering the"), "{err}");
}
