//! `dyeflow render`'s outputs as a hostile tester (or an unlucky user) meets them: a full disk
//! for every kind of output, an output that is one of the inputs (by any name), an ffmpeg that
//! stalls while a user presses Ctrl-C, links as outputs, and the private runtime directory on
//! every way out. An output replaces the user's earlier file only once it is whole; an input
//! is never written over; every wait ends.
//!
//! Unix only (namespaces, signals, links); the full-disk test mounts small tmpfs disks in a
//! user and mount namespace of its own (`unshare -rm`, util-linux).

#![cfg(unix)]

use crate::common;
use crate::support::{dyeflow, signal, summary};

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const DYEFLOW: &str = env!("CARGO_BIN_EXE_dyeflow");

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("output-tests")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(args: &[&str]) -> (i32, String, String) {
    summary(&dyeflow().args(args).output().unwrap())
}

/// A small, fast CPU render of the demo into `out`, `seconds` long at `size`.
fn demo<'a>(out: &'a str, size: &'a str, seconds: &'a str) -> Vec<&'a str> {
    vec![
        "render",
        "--backend",
        "cpu",
        "--size",
        size,
        "--fps",
        "10",
        "--sim",
        "128",
        "--quiet",
        "--seconds",
        seconds,
        "--out",
        out,
    ]
}

fn text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
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

/// Every file under `path` (itself if a file) with its bytes, by relative name.
fn tree(path: &Path) -> Vec<(String, Vec<u8>)> {
    if path.is_file() {
        return vec![(String::new(), std::fs::read(path).unwrap())];
    }
    names(path)
        .into_iter()
        .map(|n| (n.clone(), std::fs::read(path.join(&n)).unwrap_or_default()))
        .collect()
}

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
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn ffmpeg_or_skip() -> bool {
    let there = Command::new("ffmpeg")
        .arg("-version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        there || std::env::var_os("DYEFLOW_REQUIRE_FFMPEG").is_none(),
        "DYEFLOW_REQUIRE_FFMPEG=1 but ffmpeg is not on PATH"
    );
    there
}

/// A full disk, for every kind of output: a render that does not fit onto a small tmpfs fails
/// with exit 1 and one sentence, prints no "Wrote", keeps the earlier output there byte for
/// byte and leaves no temporary file. (ffmpeg 5.1 exits 0 on a full disk, having written a
/// video without its index.)
#[test]
fn a_full_disk_keeps_the_earlier_output_for_every_kind() {
    if !ffmpeg_or_skip() {
        return;
    }
    let dir = scratch("full-disk");
    let results = dir.join("results");
    std::fs::create_dir(&results).unwrap();
    let kinds = ["frames", "out.gif", "out.mp4", "out.webm"];
    // The earlier outputs: small renders, made here and copied onto each disk.
    let earlier = dir.join("earlier");
    std::fs::create_dir(&earlier).unwrap();
    for kind in kinds {
        let out = text(&earlier.join(kind));
        let (code, _, err) = run(&demo(&out, "64x36", "0.5"));
        assert_eq!(code, 0, "{kind}: {err}");
    }
    // Each disk holds the earlier output and 16 KiB more; the new render (640x360, 3 s) needs
    // far more than that.
    let mut script = String::from("set -u\n");
    for kind in kinds {
        let disk = dir.join(format!("disk-{kind}"));
        std::fs::create_dir(&disk).unwrap();
        let size: u64 = tree(&earlier.join(kind))
            .iter()
            .map(|(_, b)| (b.len() as u64).div_ceil(4096) * 4096 + 4096)
            .sum::<u64>()
            + (16 << 10);
        let out = disk.join(kind);
        let args = demo(&text(&out), "640x360", "3").join(" ");
        let res = results.join(kind).display().to_string();
        script.push_str(&format!(
            "mount -t tmpfs -o size={size} tmpfs '{disk}' || exit 97\n\
             cp -a '{earlier}' '{out}'\n\
             '{DYEFLOW}' {args} > '{res}.out' 2> '{res}.err'; echo $? > '{res}.code'\n\
             cp -a '{out}' '{res}.after'; ls -A '{disk}' > '{res}.ls'\n",
            disk = disk.display(),
            earlier = earlier.join(kind).display(),
            out = out.display(),
        ));
    }
    let status = Command::new("unshare")
        .args(["-rm", "sh", "-c", &script])
        .status()
        .expect("unshare (util-linux) runs");
    assert_eq!(status.code(), Some(0), "no tmpfs in a user namespace here");
    for kind in kinds {
        let read =
            |ext: &str| std::fs::read_to_string(results.join(format!("{kind}.{ext}"))).unwrap();
        let (code, out, err) = (read("code"), read("out"), read("err"));
        assert_eq!(code.trim(), "1", "{kind}: {out} {err}");
        assert!(!out.contains("Wrote"), "{kind}: {out}");
        assert_eq!(err.lines().count(), 1, "{kind}: {err}");
        assert!(err.starts_with("dyeflow render: "), "{kind}: {err}");
        assert!(
            err.contains("No space left on device") || err.contains("not written"),
            "{kind}: {err}"
        );
        assert_eq!(
            tree(&results.join(format!("{kind}.after"))),
            tree(&earlier.join(kind)),
            "{kind}: the earlier output changed"
        );
        assert_eq!(read("ls").trim(), kind, "{kind}: temporary files left");
    }
}

/// An output that is one of the run's inputs, by its name, a hard link or a symbolic link, is
/// refused with exit 2 before anything is written; the input stays as it was.
#[test]
fn an_output_is_never_an_input() {
    let dir = scratch("same-file");
    let wav = dir.join("song.mp4");
    // A WAV named .mp4 (as the tester gave it).
    {
        let spec = hound::WavSpec {
            channels: 1,
            sample_rate: 48_000,
            bits_per_sample: 16,
            sample_format: hound::SampleFormat::Int,
        };
        let mut w = hound::WavWriter::create(&wav, spec).unwrap();
        for n in 0..24_000 {
            w.write_sample(((n as f32 * 0.05).sin() * 3000.0) as i16)
                .unwrap();
        }
        w.finalize().unwrap();
    }
    let midi = dir.join("x.gif");
    std::fs::write(
        &midi,
        common::midi::midi_file(midly::Format::SingleTrack, &[(0.0, 0.3, 60)]),
    )
    .unwrap();
    let preset = dir.join("p.webm");
    std::fs::write(&preset, br#"{"params": {}}"#).unwrap();
    std::fs::hard_link(&wav, dir.join("hard.mp4")).unwrap();
    symlink(&midi, dir.join("soft.gif")).unwrap();
    let before: Vec<_> = [&wav, &midi, &preset]
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    let cases: [(&str, &Path, &str); 5] = [
        ("--audio", &wav, "song.mp4"),
        ("--midi", &midi, "x.gif"),
        ("--preset", &preset, "p.webm"),
        ("--audio", &wav, "hard.mp4"),
        ("--midi", &midi, "soft.gif"),
    ];
    for (option, input, out) in cases {
        let out_path = text(&dir.join(out));
        let mut args = demo(&out_path, "64x36", "0.5");
        args.extend([option, input.to_str().unwrap()]);
        let (code, stdout, err) = run(&args);
        assert_eq!(code, 2, "{option} {out}: {stdout} {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains(option) && err.contains("never writes over an input"),
            "{err}"
        );
    }
    let after: Vec<_> = [&wav, &midi, &preset]
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    assert_eq!(before, after);
    assert!(
        std::fs::symlink_metadata(dir.join("soft.gif"))
            .unwrap()
            .is_symlink()
    );
    let mut left = names(&dir);
    left.retain(|n| n.starts_with('.'));
    assert_eq!(left, Vec::<String>::new(), "temporary files left");
}

/// A stand-in ffmpeg on PATH running `script`.
fn fake_ffmpeg_path(dir: &Path, script: &str) -> String {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fake = bin.join("ffmpeg");
    std::fs::write(&fake, format!("#!/bin/sh\n{script}\n")).unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// An ffmpeg that stalls (never reading, or reading every frame and then hanging) no longer
/// hangs the render beyond Ctrl-C: the first stops the render, the second abandons the video
/// at once (exit 130); the earlier video stays, no temporary file is left, and the stalled
/// processes are gone.
#[test]
fn ctrl_c_ends_a_render_whose_ffmpeg_stalled() {
    let dir = scratch("stalled");
    for (i, script) in ["exec sleep 1001", "cat > /dev/null\nexec sleep 1002"]
        .into_iter()
        .enumerate()
    {
        let path = fake_ffmpeg_path(&dir.join(format!("f{i}")), script);
        let out = dir.join("video.mp4");
        std::fs::write(&out, b"the earlier video").unwrap();
        let out_s = text(&out);
        let mut child = dyeflow()
            .args(demo(&out_s, "640x360", "600"))
            .env("PATH", &path)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(3000));
        signal(&child, libc::SIGINT);
        std::thread::sleep(Duration::from_millis(1500));
        signal(&child, libc::SIGINT);
        let status = wait_within(&mut child, Duration::from_secs(15));
        let mut err = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
        assert_eq!(status.code(), Some(130), "{script}: {err}");
        assert!(err.contains("video.mp4"), "{err}");
        assert_eq!(std::fs::read(&out).unwrap(), b"the earlier video");
        let mut want = vec!["f0", "f1", "video.mp4"];
        if i == 0 {
            want.remove(1);
        }
        assert_eq!(names(&dir), want, "temporary files left");
        let sleeping = Command::new("pgrep")
            .args(["-f", &format!("sleep 100{}", i + 1)])
            .output()
            .unwrap();
        assert!(
            sleeping.stdout.is_empty(),
            "the stalled ffmpeg is still there"
        );
    }
}

/// `dyeflow` without XDG_RUNTIME_DIR makes its private one only to run a command: help, the
/// version and usage errors make none; a render's error and a bench stopped by Ctrl-C remove
/// theirs; and while it exists it is the user's alone (0700).
#[test]
fn the_runtime_directory_is_private_and_never_left_behind() {
    let dir = scratch("runtime");
    let tmp = dir.join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let with_tmp = |args: &[&str]| {
        let out = dyeflow()
            .args(args)
            .env("TMPDIR", &tmp)
            .env_remove("XDG_RUNTIME_DIR")
            .output()
            .unwrap();
        summary(&out).0
    };
    let out = text(&dir.join("frames"));
    for (args, code) in [
        (vec!["--help"], 0),
        (vec!["--version"], 0),
        (vec!["render", "--help"], 0),
        (vec!["render", "--no-such-option"], 2),
        (vec!["render", "--fps", "0"], 2),
        (vec!["render", "--midi", "/no/such.mid", "--out", &out], 2),
        (demo(&out, "64x36", "0.2"), 0),
    ] {
        assert_eq!(with_tmp(&args), code, "{args:?}");
        assert_eq!(names(&tmp), Vec::<String>::new(), "{args:?} left it");
    }
    let mut bench = dyeflow()
        .args(["bench", "--size", "64", "--steps", "1000000"])
        .env("TMPDIR", &tmp)
        .env_remove("XDG_RUNTIME_DIR")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let made = names(&tmp);
    assert_eq!(made.len(), 1, "{made:?}");
    assert!(made[0].starts_with("dyeflow-runtime-"), "{made:?}");
    let mode = std::fs::metadata(tmp.join(&made[0]))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700);
    signal(&bench, libc::SIGINT);
    let status = wait_within(&mut bench, Duration::from_secs(10));
    assert_eq!(status.code(), Some(130));
    assert_eq!(names(&tmp), Vec::<String>::new(), "the bench left it");
}

/// The smaller points: `--out -` is refused (no directory named "-"); a render of one frame
/// says "1 frame"; the help names every factory preset and every fluid.
#[test]
fn small_things_are_said_right() {
    let dir = scratch("small");
    let (code, _, err) = summary(
        &dyeflow()
            .current_dir(&dir)
            .args(demo("-", "64x36", "0.2"))
            .output()
            .unwrap(),
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("standard output"), "{err}");
    assert_eq!(names(&dir), Vec::<String>::new());

    let out = text(&dir.join("one"));
    let (code, said, err) = run(&demo(&out, "64x36", "0.1"));
    assert_eq!(code, 0, "{err}");
    assert!(said.contains("Rendered 1 frame ("), "{said}");

    let (code, help, _) = run(&["render", "--help"]);
    assert_eq!(code, 0);
    for name in dyeflow::preset::FACTORY_PRESETS.iter().map(|p| p.name) {
        assert!(help.contains(name), "--help lacks {name}");
    }
    assert!(
        help.contains("liquid3d") && help.contains("768000 Hz"),
        "{help}"
    );
}
