//! `dyeflow render` and `bench` used as a hostile (or just unlucky) user would: nothing of the
//! user's is ever overwritten or lost, a failed or stopped re-render keeps the previous output,
//! no input or signal makes it panic, hang or leak a temporary file, memory does not grow with
//! the input, and every bad input gets one sentence and exit code 2.
//!
//! Tests that need ffmpeg skip without it, unless `DYEFLOW_REQUIRE_FFMPEG=1` (as `.ci/run`
//! sets after installing it).

use crate::common;
#[cfg(unix)]
use crate::support::signal;
use crate::support::{dyeflow, small_demo, summary};

use common::xvfb::Image;
use dyeflow::cli::render::{self, RenderOptions};
use dyeflow::params::BackendChoice;
use midly::Format;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The file that marks a directory as a render's (what the render wrote there).
const MARKER: &str = ".dyeflow-render.json";

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("cli-tests")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Run to the end; (exit code, stdout, stderr).
pub(crate) fn run(args: &[&str]) -> (i32, String, String) {
    let out = dyeflow().args(args).output().expect("run dyeflow");
    summary(&out)
}

/// Names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut n: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    n.sort();
    n
}

/// The contents of every file in `dir`, by name.
#[cfg(unix)]
fn contents(dir: &Path) -> Vec<(String, Vec<u8>)> {
    names(dir)
        .into_iter()
        .map(|n| {
            let bytes = std::fs::read(dir.join(&n)).unwrap_or_default();
            (n, bytes)
        })
        .collect()
}

fn no_temporaries(dir: &Path) {
    let left: Vec<String> = names(dir)
        .into_iter()
        .filter(|n| n.ends_with(".part") || n.starts_with(".dyeflow") && n != MARKER)
        .collect();
    assert!(left.is_empty(), "temporary files left in {dir:?}: {left:?}");
}

/// A type-0 MIDI file at 120 bpm with notes at (start s, length s, key).
fn midi_file(notes: &[(f64, f64, u8)]) -> Vec<u8> {
    common::midi::midi_file(Format::SingleTrack, notes)
}

/// A 48 kHz 16-bit WAV of `seconds` of a quiet tone.
fn tone_wav(path: &Path, seconds: f64, channels: u16) {
    let spec = hound::WavSpec {
        channels,
        sample_rate: 48_000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut w = hound::WavWriter::create(path, spec).unwrap();
    for n in 0..(seconds * 48_000.0) as usize {
        let x = ((n as f64 * 0.05).sin() * 6000.0) as i16;
        for _ in 0..channels {
            w.write_sample(x).unwrap();
        }
    }
    w.finalize().unwrap();
}

/// Start `dyeflow args` with its output discarded.
#[cfg(unix)]
fn spawn_quiet(args: &[&str]) -> Child {
    dyeflow()
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Wait for a child, failing after `limit`.
fn wait_within(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn ffmpeg_or_skip() -> bool {
    if dyeflow::cli::render::files::ffmpeg_available() {
        return true;
    }
    assert!(
        std::env::var("DYEFLOW_REQUIRE_FFMPEG").as_deref() != Ok("1"),
        "DYEFLOW_REQUIRE_FFMPEG=1 but ffmpeg is not on PATH"
    );
    eprintln!("SKIPPED: no ffmpeg; set DYEFLOW_REQUIRE_FFMPEG=1 to fail instead");
    false
}

/// Where the video and the audio stream of a media file end, in seconds (from ffprobe: the
/// last packet's time, plus its duration where the container gives one).
fn stream_ends(path: &Path) -> (f64, f64) {
    let out = Command::new("ffprobe")
        .args([
            "-v",
            "error",
            "-show_entries",
            "packet=stream_index,pts_time,duration_time",
        ])
        .args(["-of", "csv=p=0"])
        .arg(path)
        .output()
        .expect("ffprobe");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut ends = [0.0f64; 2];
    for line in text.lines() {
        let f: Vec<&str> = line.split(',').collect();
        let (Some(Ok(i)), Some(Ok(t))) = (
            f.first().map(|x| x.parse::<usize>()),
            f.get(1).map(|x| x.parse::<f64>()),
        ) else {
            continue;
        };
        let d = f.get(2).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
        if i < 2 {
            ends[i] = ends[i].max(t + d);
        }
    }
    (ends[0], ends[1])
}

// ---------------------------------------------------------------------------------------
// Data loss

/// The demo writes its audio next to its frames, but never over a user's file of that name;
/// rendering the demo again into the same directory works (the file is the demo's own).
#[test]
fn the_demo_never_overwrites_a_users_audio_wav() {
    let dir = scratch("precious");
    let d = dir.join("d");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("audio.wav"), b"precious\n").unwrap();
    let out = d.to_string_lossy().into_owned();
    let (code, _, err) = run(&small_demo(&out, &["--seconds", "0.2"]));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("audio.wav") && err.contains("overwrite"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert_eq!(std::fs::read(d.join("audio.wav")).unwrap(), b"precious\n");
    assert_eq!(names(&d), ["audio.wav"], "something was written");

    // Into a fresh directory, twice: the second render finds its own audio and goes on.
    let fresh = dir.join("fresh").to_string_lossy().into_owned();
    for _ in 0..2 {
        let (code, out_text, err) = run(&small_demo(&fresh, &["--seconds", "0.2"]));
        assert_eq!(code, 0, "{err}");
        assert!(out_text.contains("and audio.wav"), "{out_text}");
    }
    assert_eq!(
        names(Path::new(&fresh)),
        [MARKER, "audio.wav", "frame_000001.png", "frame_000002.png"]
    );
    // `--out .` is a directory like any other.
    let (code, _, err) = dyeflow()
        .args(small_demo(".", &["--seconds", "0.2"]))
        .current_dir(&d)
        .output()
        .map(|o| summary(&o))
        .unwrap();
    assert_eq!(code, 2, "{err}");
    assert_eq!(std::fs::read(d.join("audio.wav")).unwrap(), b"precious\n");
}

/// A re-render that is interrupted before its first frame leaves the previous render exactly as
/// it was, for PNG frames and for a GIF, and never reports an empty result as written; one that
/// completes replaces it (no stale frames).
#[cfg(unix)]
#[test]
fn a_stopped_rerender_keeps_the_previous_output() {
    let dir = scratch("rerender");
    let mid = dir.join("song.mid");
    std::fs::write(&mid, midi_file(&[(0.2, 1.0, 60), (9.5, 1.0, 67)])).unwrap();
    let mid = mid.to_string_lossy().into_owned();
    for out in [dir.join("frames"), dir.join("clip.gif")] {
        let out_s = out.to_string_lossy().into_owned();
        let first = ["--midi", &mid, "--seconds", "0.5"];
        let (code, _, err) = run(&small_demo(&out_s, &first));
        assert_eq!(code, 0, "{err}");
        let before = if out.is_dir() {
            contents(&out)
        } else {
            vec![(String::new(), std::fs::read(&out).unwrap())]
        };
        assert!(!before.is_empty());

        // A slow pre-roll (sim 1024, 8 s) stopped after a moment: nothing is written.
        let mut args = small_demo(&out_s, &["--midi", &mid, "--start", "9", "--seconds", "2"]);
        args[8] = "1024";
        let mut child = dyeflow()
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(800));
        signal(&child, libc::SIGINT);
        let status = wait_within(&mut child, Duration::from_secs(10));
        let mut text = String::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(status.code(), Some(130), "{text}");
        assert!(text.contains("nothing was written"), "{text}");
        assert!(!text.contains("Wrote"), "{text}");
        let after = if out.is_dir() {
            contents(&out)
        } else {
            vec![(String::new(), std::fs::read(&out).unwrap())]
        };
        assert!(before == after, "{out_s}: the previous output changed");
        no_temporaries(&dir);
        if out.is_dir() {
            no_temporaries(&out);
        }
    }

    // A shorter re-render that completes replaces the frames: no stale ones stay.
    let frames = dir.join("frames");
    let out_s = frames.to_string_lossy().into_owned();
    let (code, _, err) = run(&small_demo(&out_s, &["--midi", &mid, "--seconds", "0.2"]));
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        names(&frames),
        [MARKER, "frame_000001.png", "frame_000002.png"]
    );
}

/// A video with audio shorter than the render (the usual case: MIDI plus a 2 s tail) has the
/// render's length, with silence after the audio, for mp4 and webm, also when the render starts
/// past the audio's end.
#[test]
fn video_audio_shorter_than_the_render_is_padded() {
    if !ffmpeg_or_skip() {
        return;
    }
    let dir = scratch("shortaudio");
    let mid = dir.join("a.mid");
    std::fs::write(&mid, midi_file(&[(0.1, 0.5, 60), (4.0, 0.5, 64)])).unwrap();
    let wav = dir.join("b.wav");
    tone_wav(&wav, 1.0, 2);
    let (mid, wav) = (
        mid.to_string_lossy().into_owned(),
        wav.to_string_lossy().into_owned(),
    );
    for (name, start) in [("v.mp4", "0"), ("v.webm", "0"), ("late.mp4", "2.5")] {
        let out = dir.join(name);
        let out_s = out.to_string_lossy().into_owned();
        let (code, text, err) = run(&[
            "render",
            "--backend",
            "cpu",
            "--size",
            "96x54",
            "--fps",
            "20",
            "--sim",
            "128",
            "--midi",
            &mid,
            "--audio",
            &wav,
            "--seconds",
            "3",
            "--start",
            start,
            "--quiet",
            "--out",
            &out_s,
        ]);
        assert_eq!(code, 0, "{name}: {err}");
        assert!(text.contains("60 frames"), "{name}: {text}");
        let (video, audio) = stream_ends(&out);
        eprintln!("{name}: video ends at {video:.3} s, audio at {audio:.3} s");
        assert!(
            (2.9..3.1).contains(&video),
            "{name}: video ends at {video} s"
        );
        assert!(
            (2.85..3.15).contains(&audio),
            "{name}: audio ends at {audio} s"
        );
        no_temporaries(&dir);
    }
}

// ---------------------------------------------------------------------------------------
// Panics

/// `--threads` is bounded, and a thread pool the system refuses is an error, not a panic.
#[cfg(unix)]
#[test]
fn threads_are_bounded_and_refused_threads_are_an_error() {
    let dir = scratch("threads");
    let out = dir.join("o").to_string_lossy().into_owned();
    let too_many = (render::max_threads() + 1).to_string();
    for args in [
        small_demo(&out, &["--threads", &too_many, "--seconds", "0.1"]),
        vec![
            "bench",
            "--size",
            "32",
            "--steps",
            "1",
            "--threads",
            "99999999",
        ],
    ] {
        let start = Instant::now();
        let (code, _, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.contains("--threads") && err.contains("out of range"),
            "{err}"
        );
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{args:?} took long"
        );
    }
    assert!(!Path::new(&out).exists());

    // Under a process limit: as root, run as nobody (root ignores RLIMIT_NPROC).
    let shared = dir.join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::set_permissions(&shared, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let out = shared.join("o").to_string_lossy().into_owned();
    let mut command = dyeflow();
    command.args(small_demo(&out, &["--threads", "8", "--seconds", "0.2"]));
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        use std::os::unix::process::CommandExt;
        command.pre_exec(|| {
            if libc::getuid() == 0 {
                libc::setgid(65534);
                libc::setuid(65534);
            }
            let limit = libc::rlimit {
                rlim_cur: 3,
                rlim_max: 3,
            };
            libc::setrlimit(libc::RLIMIT_NPROC, &limit);
            Ok(())
        });
    }
    let (code, _, err) = summary(&command.output().unwrap());
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("thread") && !err.contains("panicked"), "{err}");
    assert!(
        !Path::new(&out).exists(),
        "a failed render left its output directory"
    );
}

/// A reader that goes away (`| head -1`) is not a panic: bench stops quietly, a render
/// finishes its output.
#[test]
fn a_closed_stdout_is_not_a_panic() {
    let mut child = dyeflow()
        .args([
            "bench", "--size", "32", "--steps", "3", "--iters", "1,2,3,4",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 8];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let status = wait_within(&mut child, Duration::from_secs(60));
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(!err.contains("panicked"), "{err}");

    let dir = scratch("closed-stdout");
    let out = dir.join("frames");
    let out_s = out.to_string_lossy().into_owned();
    let mut child = dyeflow()
        .args(small_demo(&out_s, &["--seconds", "0.3"]))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let status = wait_within(&mut child, Duration::from_secs(60));
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // Three frames, the demo's audio and the render's marker.
    assert_eq!(names(&out).len(), 5, "{:?}", names(&out));
}

// ---------------------------------------------------------------------------------------
// Signals and resources

/// Ctrl-C during a long pre-roll stops within half a second (plus a debug build's step).
#[cfg(unix)]
#[test]
fn ctrl_c_during_the_pre_roll_stops_at_once() {
    let dir = scratch("preroll");
    let out = dir.join("frames").to_string_lossy().into_owned();
    let mut args = small_demo(&out, &["--start", "9", "--seconds", "3"]);
    // A 512-row simulation: its 8 s pre-roll outlasts the wait below many times over, and a
    // step is short enough that the stop (checked between steps) comes well within the bound
    // even on two loaded cores (at 1024 rows, a debug step under load took over a second).
    args[8] = "512";
    for sig in [libc::SIGINT, libc::SIGINT] {
        let mut child = spawn_quiet(&args);
        std::thread::sleep(Duration::from_millis(1000));
        let sent = Instant::now();
        signal(&child, sig);
        let status = wait_within(&mut child, Duration::from_secs(10));
        let took = sent.elapsed();
        eprintln!("stopped {took:?} after the signal");
        assert_eq!(status.code(), Some(130));
        assert!(took < Duration::from_millis(1500), "took {took:?}");
    }
    assert!(!Path::new(&out).exists());
}

/// SIGTERM and SIGHUP stop a render as Ctrl-C does: a valid GIF of the frames so far, no
/// `.part` file, exit code 128 + the signal; the demo's temporary audio for a video is removed
/// on every path, errors included.
#[cfg(unix)]
#[test]
fn sigterm_and_sighup_clean_up_like_ctrl_c() {
    let dir = scratch("signals");
    for (sig, code) in [(libc::SIGTERM, 143), (libc::SIGHUP, 129)] {
        let out = dir.join(format!("s{sig}.gif"));
        let out_s = out.to_string_lossy().into_owned();
        let mut args = small_demo(&out_s, &["--seconds", "600"]);
        args[4] = "160x90";
        let mut child = spawn_quiet(&args);
        std::thread::sleep(Duration::from_millis(2500));
        signal(&child, sig);
        let status = wait_within(&mut child, Duration::from_secs(10));
        assert_eq!(status.code(), Some(code), "signal {sig}");
        no_temporaries(&dir);
        let mut decoder = gif::DecodeOptions::new()
            .read_info(std::fs::File::open(&out).unwrap())
            .unwrap();
        let mut frames = 0;
        while decoder.read_next_frame().unwrap().is_some() {
            frames += 1;
        }
        assert!(frames > 0, "an empty GIF");
    }

    // The demo as a video, through an ffmpeg that fails: the temporary audio goes too.
    let tmp = dir.join("tmp");
    let bin = dir.join("bin");
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::create_dir_all(&bin).unwrap();
    let fake = bin.join("ffmpeg");
    std::fs::write(&fake, "#!/bin/sh\necho 'fake ffmpeg: no' >&2\nexit 1\n").unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = dir.join("demo.mp4").to_string_lossy().into_owned();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut args = small_demo(&out, &["--seconds", "1"]);
    args[4] = "64x36";
    let output = dyeflow()
        .args(&args)
        .env("TMPDIR", &tmp)
        .env("PATH", path)
        .output()
        .unwrap();
    let (code, _, err) = summary(&output);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("ffmpeg"), "{err}");
    assert_eq!(names(&tmp), Vec::<String>::new(), "temporary files left");
    no_temporaries(&dir);
}

/// WAV memory follows the render, not the file: a 4-hour stereo WAV (a sparse file, so it
/// costs no disk) rendered for a second from its middle stays far under 100 MB.
#[cfg(target_os = "linux")]
#[test]
fn a_long_wav_is_streamed() {
    let dir = scratch("longwav");
    let path = dir.join("long.wav");
    let (rate, channels, hours) = (48_000u32, 2u16, 4u32);
    let frames = u64::from(rate) * 3600 * u64::from(hours) - 1;
    let data = frames * u64::from(channels) * 2;
    let spec = hound::WavSpec {
        channels,
        sample_rate: rate,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    // A valid header for `frames` frames, then the data as a hole in the file.
    let mut header = Vec::new();
    {
        let mut w = hound::WavWriter::new(std::io::Cursor::new(&mut header), spec).unwrap();
        w.write_sample(0i16).unwrap();
        w.write_sample(0i16).unwrap();
        w.finalize().unwrap();
    }
    let header_len = header.len() as u64 - 4;
    header.truncate(header_len as usize);
    let riff = (header_len - 8 + data) as u32;
    header[4..8].copy_from_slice(&riff.to_le_bytes());
    let at = header.len() - 4;
    header[at..].copy_from_slice(&(data as u32).to_le_bytes());
    std::fs::write(&path, &header).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(header_len + data)
        .unwrap();
    let out = dir.join("frames");
    let (code, err, rss) = common::run_measuring_rss(
        dyeflow()
            .args([
                "render",
                "--backend",
                "cpu",
                "--size",
                "64x36",
                "--sim",
                "128",
            ])
            .args([
                "--fps",
                "10",
                "--quiet",
                "--seconds",
                "1",
                "--start",
                "7200",
            ])
            .arg("--audio")
            .arg(&path)
            .arg("--out")
            .arg(&out),
    );
    eprintln!("peak RSS {:.1} MB", rss as f64 / 1e6);
    assert_eq!(code, 0, "{err}");
    assert!(rss < 100_000_000, "peak RSS {rss} bytes");
    // Ten frames and the render's marker.
    assert_eq!(names(&out).len(), 11);
}

/// A MIDI file whose last event is past 4 hours is refused (without --seconds), not turned
/// quietly into a 4-hour render.
#[test]
fn a_midi_longer_than_a_render_may_be_is_refused() {
    let dir = scratch("longmidi");
    let mid = dir.join("long.mid");
    std::fs::write(&mid, midi_file(&[(0.0, 1.0, 60), (4.5 * 3600.0, 1.0, 62)])).unwrap();
    let out = dir.join("frames").to_string_lossy().into_owned();
    let mid_s = mid.to_string_lossy().into_owned();
    let (code, _, err) = run(&small_demo(&out, &["--midi", &mid_s]));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("long.mid") && err.contains("4.5 hours") && err.contains("--seconds"),
        "{err}"
    );
    assert!(!Path::new(&out).exists());
    // With --seconds, a part of it renders.
    let (code, _, err) = run(&small_demo(&out, &["--midi", &mid_s, "--seconds", "0.3"]));
    assert_eq!(code, 0, "{err}");
}

/// With standard error not a terminal, progress comes as a line every few seconds.
#[test]
fn progress_without_a_terminal_prints_lines() {
    let dir = scratch("progress");
    let out = dir.join("frames").to_string_lossy().into_owned();
    let mut args = small_demo(&out, &["--seconds", "17"]);
    args.retain(|a| *a != "--quiet");
    args[4] = "320x180";
    let out = dyeflow().args(&args).output().unwrap();
    let (code, _, err) = summary(&out);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.contains(" frames (")).collect();
    eprintln!("{err}");
    assert!(!lines.is_empty(), "no progress lines: {err}");
    // "dyeflow render: 12/170 frames (7 %), 11.8 fps (1.18x real time), 13 s left": the
    // speed against real time is the frame rate over the video's (10 fps).
    let line = lines[0];
    let number_before = |end: &str| -> f64 {
        let head = &line[..line
            .find(end)
            .unwrap_or_else(|| panic!("no '{end}': {line}"))];
        head.rsplit([' ', '(']).next().unwrap().parse().unwrap()
    };
    let fps = number_before(" fps (");
    let real = number_before("x real time");
    assert!(
        (real - fps / 10.0).abs() <= 0.01 + 0.01 * real,
        "{fps} fps at 10 fps is not {real}x real time: {line}"
    );
    assert!(line.ends_with(" left"), "{line}");
}

// ---------------------------------------------------------------------------------------
// Corrupt or odd input

/// Corrupt MIDI, presets out of range, and small things a user types: one sentence, exit 2,
/// no output; and what must work does.
#[test]
fn odd_input_gets_one_sentence_and_exit_2() {
    let dir = scratch("odd");
    let write = |name: &str, bytes: &[u8]| {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        p.to_string_lossy().into_owned()
    };
    let hand_made = |track: &[u8]| {
        let mut bytes = b"MThd\0\0\0\x06\0\0\0\x01\0\x60MTrk".to_vec();
        bytes.extend_from_slice(&(track.len() as u32).to_be_bytes());
        bytes.extend_from_slice(track);
        bytes
    };
    let note = [0x00, 0x90, 60, 100, 0x60, 0x80, 60, 0];
    let long_meta = write(
        "long-meta.mid",
        &hand_made(&[&[0x00, 0xFF, 0x01, 0x40, b'h'][..], &note].concat()),
    );
    let long_sysex = write(
        "long-sysex.mid",
        &hand_made(&[&[0x00, 0xF0, 0x7F, 0x01][..], &note].concat()),
    );
    let short_tempo = write(
        "short-tempo.mid",
        &hand_made(&[&[0x00, 0xFF, 0x51, 0x02, 0x07, 0xA1][..], &note].concat()),
    );
    let zero_tempo = write(
        "zero-tempo.mid",
        &hand_made(&[&[0x00, 0xFF, 0x51, 0x03, 0, 0, 0][..], &note].concat()),
    );
    let settings = |json: &str| format!(r#"{{"params": {{}}, "fields": {{"settings": {json}}}}}"#);
    let big_sim = write(
        "big-sim.json",
        settings(r#"{"sim_resolution": 99999}"#).as_bytes(),
    );
    let big_dye = write("big-dye.json", settings(r#"{"dye_scale": 99}"#).as_bytes());
    let big_rate = write(
        "big-rate.json",
        settings(r#"{"sim_rate_hz": 100000}"#).as_bytes(),
    );
    let typed = write("typed.json", settings(r#"{"aspect": 7}"#).as_bytes());
    let iters = write("iters.json", br#"{"params": {"p_iters": 1000000000000}}"#);
    let ok_mid = write("ok.mid", &midi_file(&[(0.1, 0.2, 60)]));
    let out = dir.join("out").to_string_lossy().into_owned();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--midi", &long_meta], "past the end of the track"),
        (vec!["--midi", &long_sysex], "past the end of the track"),
        (vec!["--midi", &short_tempo], "2 data bytes"),
        (vec!["--midi", &zero_tempo], "tempo of 0"),
        (
            vec!["--preset", &big_sim],
            "'sim_resolution' is 99999; use one of 128",
        ),
        (
            vec!["--preset", &big_dye],
            "'dye_scale' is 99; use one of 1, 2, 4",
        ),
        (
            vec!["--preset", &big_rate],
            "'sim_rate_hz' is 100000; use one of 30",
        ),
        (vec!["--preset", &typed], "'aspect' is 7; use one of 1:1"),
        (
            vec!["--preset", &iters],
            "'p_iters' is 1000000000000, outside its range 2 to 200",
        ),
        (vec!["--fps", "-1"], "out of range; use 1 to 240"),
        (vec!["--fps", "2.5"], "whole number"),
        (vec!["--size", "-64x36"], "-64 pixels is out of range"),
        (vec!["--seconds", "-inf"], "--seconds -inf is out of range"),
        (vec!["--seconds", "-3"], "--seconds -3 is out of range"),
        (vec!["--start", "1e300"], "--start 1e300 is out of range"),
        (vec!["--start", "-5"], "--start -5 is out of range"),
    ];
    for (args, needle) in cases {
        let mut all = vec!["render"];
        all.extend(&args);
        all.extend(["--out", &out, "--backend", "cpu", "--quiet"]);
        if !args.contains(&"--midi") {
            all.extend(["--midi", &ok_mid]);
        }
        let (code, _, err) = run(&all);
        assert_eq!(code, 2, "{args:?}: exit {code}, stderr: {err}");
        let first = err.trim().lines().next().unwrap_or_default();
        assert!(
            first.contains(needle),
            "{args:?}: {err:?} does not say {needle:?}"
        );
        assert!(first.len() < 300, "{args:?}: a long message: {first}");
        assert!(err.trim().lines().count() <= 3, "{args:?}: too much: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(!Path::new(&out).exists(), "{args:?} left output behind");
    }

    // A preset saved by an editor that adds a byte order mark works.
    let bom = write("bom.json", b"\xEF\xBB\xBF{\"params\": {\"visc\": 12.0}}");
    let out2 = dir.join("bom").to_string_lossy().into_owned();
    let (code, text, err) = run(&small_demo(
        &out2,
        &["--midi", &ok_mid, "--preset", &bom, "--seconds", "0.2"],
    ));
    assert_eq!(code, 0, "{err}");
    // The summary counts the loading and pre-roll.
    assert!(text.contains("loading and pre-roll"), "{text}");

    // Help: --audio names every WAV encoding read; render's first line is a sentence.
    let (_, help, _) = run(&["render", "--help"]);
    assert!(help.contains("8/16/24/32-bit integer"), "{help}");
    let first = help.lines().next().unwrap_or_default();
    assert!(first.ends_with('.'), "the first line is cut: {first}");
    // The command listing shows that sentence whole (clap drops its full stop).
    let (_, help, _) = run(&["--help"]);
    let line = help
        .lines()
        .find(|l| l.trim_start().starts_with("render"))
        .unwrap();
    assert!(
        line.trim_end().ends_with("offline and deterministically"),
        "{line}"
    );
}

/// Probing for a GPU without XDG_RUNTIME_DIR prints no driver noise.
#[test]
fn no_driver_noise_without_a_runtime_dir() {
    let dir = scratch("xdg");
    let out = dir.join("frames").to_string_lossy().into_owned();
    let mut args = small_demo(&out, &["--seconds", "0.1"]);
    args[2] = "auto";
    let output = dyeflow()
        .args(&args)
        .env_remove("XDG_RUNTIME_DIR")
        .output()
        .unwrap();
    let (code, _, err) = summary(&output);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("XDG_RUNTIME_DIR"), "{err}");
}

/// Extreme aspect ratios keep square cells: the grid has the picture's shape.
#[test]
fn extreme_aspect_ratios_are_not_stretched() {
    for (w, h, sim) in [
        (7680, 16, 2048),
        (16, 7680, 2048),
        (1280, 720, 256),
        (7680, 4320, 128),
        (4000, 16, 128),
    ] {
        let (gw, gh) = render::grid_for(w, h, sim);
        let picture = f64::from(w) / f64::from(h);
        let grid = gw as f64 / gh as f64;
        assert!(
            (grid / picture - 1.0).abs() < 0.01,
            "{w}x{h} at {sim}: grid {gw}x{gh}, {grid:.3} against {picture:.3}"
        );
        assert!((8..=8192).contains(&gw) && (8..=8192).contains(&gh));
    }
    // And a render at the most extreme shape runs, on that grid.
    let dir = scratch("aspect");
    let opts = RenderOptions {
        midi: None,
        out: dir.join("frames"),
        width: 7680,
        height: 16,
        fps: 10,
        seconds: Some(0.2),
        backend: BackendChoice::Cpu,
        sim: Some(2048),
        dye: Some(1),
        progress: false,
        ..RenderOptions::default()
    };
    let s = render::render(&opts, &std::sync::atomic::AtomicBool::new(false)).unwrap();
    assert_eq!(s.grid, render::grid_for(7680, 16, 2048));
    let frame = Image::decode_png(&std::fs::read(dir.join("frames/frame_000002.png")).unwrap());
    assert_eq!((frame.width, frame.height), (7680, 16));
}

/// A capture that cannot be replayed (truncated, damaged, not a capture, missing) and
/// `--capture` with `--midi` stop with one sentence and exit code 2, writing nothing.
#[test]
fn bad_captures_are_refused_with_exit_code_2() {
    let dir = scratch("captures");
    let out = dir.join("o").to_string_lossy().into_owned();
    let header = r#"{"format":"dyeflow-capture","version":1,"plugin_version":"x","sample_rate":48000.0,"start_s":0.0,"params":["visc"],"state":{}}"#;
    let cases: [(&str, String, &str); 4] = [
        ("truncated", format!("{header}\n"), "truncated"),
        (
            "damaged",
            format!(
                "{header}\n{{\"param\":{{\"t\":0.5,\"i\":0,\"v\":2.0}}}}\n{{\"end\":{{\"records\":1,\"dropped\":0,\"limited\":false,\"crc32\":12345}}}}\n"
            ),
            "checksum does not match",
        ),
        (
            "other",
            "{\"hello\":1}\n".to_owned(),
            "not a Dyeflow capture",
        ),
        (
            "newer",
            header.replace("\"version\":1", "\"version\":7") + "\n",
            "format version 7",
        ),
    ];
    for (name, text, says) in cases {
        let path = dir.join(format!("{name}.dyeflow-capture"));
        std::fs::write(&path, text).unwrap();
        let p = path.to_string_lossy().into_owned();
        let (code, _, err) = run(&["render", "--capture", &p, "--out", &out, "--quiet"]);
        assert_eq!(code, 2, "{name}: {err}");
        assert!(err.contains(says) && err.contains(&p), "{name}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{name}: one sentence: {err}");
    }
    let missing = dir
        .join("none.dyeflow-capture")
        .to_string_lossy()
        .into_owned();
    let (code, _, err) = run(&["render", "--capture", &missing, "--out", &out]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not found"), "{err}");
    let midi = dir.join("m.mid");
    std::fs::write(&midi, midi_file(&[(0.0, 0.5, 60)])).unwrap();
    let (code, _, err) = run(&[
        "render",
        "--capture",
        &missing,
        "--midi",
        &midi.to_string_lossy(),
        "--out",
        &out,
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--capture") && err.contains("--midi"), "{err}");
    assert!(!Path::new(&out).exists(), "nothing written");
}
