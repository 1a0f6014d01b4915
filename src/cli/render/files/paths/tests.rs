//! Output paths: outputs are never inputs (by identity), links are followed to the file they
//! name, temporary names fit whatever name the output has, and broken directories are told
//! as they are.

use super::*;
use std::os::unix::fs::symlink;

fn inputs<'a>(list: &'a [(&'static str, &'a Path)]) -> &'a [(&'static str, &'a Path)] {
    list
}

/// A file output is refused when it is an input by any name: the same path, a hard link, a
/// symbolic link (either way round); PNG frames when the render would write a file in its
/// directory that is an input. Other outputs pass, and so does an output not there yet.
#[test]
fn an_output_that_is_an_input_by_any_name_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let song = d.join("song.mp4");
    fs::write(&song, b"RIFF, a WAV named .mp4").unwrap();
    fs::hard_link(&song, d.join("hard.mp4")).unwrap();
    symlink(&song, d.join("soft.gif")).unwrap();
    symlink("song.mp4", d.join("relative.webm")).unwrap();
    let video = OutputKind::Video { container: "mp4" };
    for (kind, out) in [
        (&video, "song.mp4"),
        (&video, "hard.mp4"),
        (&OutputKind::Gif, "soft.gif"),
        (&OutputKind::Video { container: "webm" }, "relative.webm"),
    ] {
        let e = refuse_inputs(kind, &d.join(out), None, inputs(&[("--audio", &song)])).unwrap_err();
        assert!(
            matches!(
                e,
                RenderError::Usage(UsageError::OutputIsInput {
                    option: "--audio",
                    ..
                })
            ),
            "{out}: {e}"
        );
        assert_eq!(e.exit_code(), 2);
        let text = e.to_string();
        assert!(text.contains(out) && text.contains("--audio"), "{text}");
    }
    // The input given through a link, the output by its own name.
    let e = refuse_inputs(
        &video,
        &song,
        None,
        inputs(&[
            ("--midi", &d.join("x.mid")),
            ("--preset", &d.join("soft.gif")),
        ]),
    )
    .unwrap_err();
    assert!(e.to_string().contains("--preset"), "{e}");
    // Not an input: fine, and so is an output that is not there yet.
    fs::write(d.join("other.mp4"), b"an earlier video").unwrap();
    refuse_inputs(
        &video,
        &d.join("other.mp4"),
        None,
        inputs(&[("--audio", &song)]),
    )
    .unwrap();
    refuse_inputs(
        &video,
        &d.join("new.mp4"),
        None,
        inputs(&[("--audio", &song)]),
    )
    .unwrap();
}

/// PNG frames: an input named as a frame, the marker or the demo's audio in the output
/// directory (reached through a link too) is refused; another file there is not.
#[test]
fn png_frames_are_refused_where_they_would_replace_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let song = d.join("song.wav");
    fs::write(&song, b"RIFF").unwrap();
    let frames = d.join("frames");
    fs::create_dir(&frames).unwrap();
    for name in ["frame_000001.png", RENDER_MARKER, "audio.wav", "notes.mid"] {
        fs::write(frames.join(name), b"the user's").unwrap();
    }
    symlink(&frames, d.join("frames-link")).unwrap();
    for input in [
        frames.join("frame_000001.png"),
        frames.join(RENDER_MARKER),
        frames.join("audio.wav"),
        d.join("frames-link").join("frame_000001.png"),
    ] {
        let e = refuse_inputs(
            &OutputKind::PngSequence,
            &d.join("frames-link"),
            Some("audio.wav"),
            inputs(&[("--midi", &input)]),
        );
        assert!(e.is_err(), "{}", input.display());
    }
    refuse_inputs(
        &OutputKind::PngSequence,
        &frames,
        Some("audio.wav"),
        inputs(&[("--midi", &frames.join("notes.mid")), ("--audio", &song)]),
    )
    .unwrap();
    // Without a generated audio file, one named like it is no clash.
    refuse_inputs(
        &OutputKind::PngSequence,
        &frames,
        None,
        inputs(&[("--audio", &frames.join("audio.wav"))]),
    )
    .unwrap();
}

/// A file output that is a link is written where the link leads (the link stays); a loop of
/// links is an error saying so.
#[test]
fn links_lead_to_the_file_written() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::create_dir(d.join("videos")).unwrap();
    symlink("videos/real.gif", d.join("link.gif")).unwrap();
    symlink(d.join("link.gif"), d.join("link2.gif")).unwrap();
    assert_eq!(
        through_links(&d.join("link2.gif")).unwrap(),
        d.join("videos/real.gif")
    );
    assert_eq!(
        through_links(&d.join("plain.gif")).unwrap(),
        d.join("plain.gif")
    );
    symlink("loop-b.gif", d.join("loop-a.gif")).unwrap();
    symlink("loop-a.gif", d.join("loop-b.gif")).unwrap();
    let e = through_links(&d.join("loop-a.gif"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("loop of symbolic links"), "{e}");

    // A GIF through two links: the real file is written, the links stay links.
    let mut opts = OutputOptions {
        path: d.join("link2.gif"),
        width: 8,
        height: 8,
        fps: 10,
        audio: None,
        audio_start_s: 0.0,
        max_frames: None,
        quality: Quality::Good,
        threads: 0,
        stops: StopRequests::default(),
        encoder_patience: ENCODER_PATIENCE,
        ffmpeg: PathBuf::from("ffmpeg"),
    };
    for _ in 0..2 {
        let mut writer = open(&OutputKind::Gif, &opts).unwrap();
        writer.write(&[200; 8 * 8 * 4]).unwrap();
        let summary = writer.finish().unwrap().unwrap();
        assert!(summary.contains("real.gif"), "{summary}");
    }
    assert!(
        fs::symlink_metadata(d.join("link.gif"))
            .unwrap()
            .is_symlink()
    );
    assert!(
        fs::symlink_metadata(d.join("link2.gif"))
            .unwrap()
            .is_symlink()
    );
    assert!(
        fs::read(d.join("videos/real.gif"))
            .unwrap()
            .starts_with(b"GIF89a")
    );
    opts.path = d.join("loop-a.gif");
    assert!(open(&OutputKind::Gif, &opts).is_err());
}

/// A directory that cannot be reached says why (a loop of links is not "File exists"), and so
/// does a link to a place that does not exist.
#[test]
fn unreachable_directories_say_why() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    symlink("loop", d.join("loop")).unwrap();
    let e = create_dir(&d.join("loop/frames"), &d.join("loop/frames"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("cannot be reached") && e.contains("symbolic links"),
        "{e}"
    );
    assert!(!e.contains("File exists"), "{e}");
    symlink("nowhere", d.join("dangling")).unwrap();
    let e = create_dir(&d.join("dangling/frames"), &d.join("dangling/frames"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("symbolic link to a place that does not exist"),
        "{e}"
    );
    // A plain new directory is made, and said to be.
    let made = create_dir(&d.join("a/b"), &d.join("a/b")).unwrap();
    assert_eq!(made.0, [d.join("a/b"), d.join("a")]);
}

/// Every name the file system takes for the output has a temporary name beside it: names of
/// 255 bytes, of many-byte characters, of one byte.
#[test]
fn temporary_names_fit_every_output_name() {
    let dir = tempfile::tempdir().unwrap();
    let max = name_max(dir.path());
    assert!(max >= 255, "{max}");
    for name in [
        "a".repeat(max - 4) + ".mp4",
        "é".repeat((max - 5) / 2) + ".gif",
        "🌊".repeat((max - 4) / 4) + ".mp4",
        "x".into(),
    ] {
        assert!(name.len() <= max);
        let path = dir.path().join(&name);
        let part = temp_beside(&path).unwrap();
        let part_name = part.path().file_name().unwrap().len();
        assert!(part_name <= max, "{part_name}");
        fs::write(part.path(), b"frames").unwrap();
        persist_beside(part, &path).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"frames");
    }
    assert_eq!(cut_at_char("aé", 2), "a");
    assert_eq!(cut_at_char("aé", 3), "aé");
}
