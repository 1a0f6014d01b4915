//! Video through ffmpeg: raw RGBA frames piped into ffmpeg, which encodes H.264 or VP9 and
//! muxes the audio in.

use super::*;

/// How many of ffmpeg's last stderr lines an error quotes.
pub(super) const STDERR_LINES: usize = 6;

/// Pipes frames into ffmpeg, which writes a hidden temporary file beside the output; renamed
/// into place when ffmpeg succeeds.
pub(super) struct VideoWriter {
    path: PathBuf,
    /// The video being written; removed if dropped before it is persisted.
    part: Option<tempfile::NamedTempFile>,
    /// The generated audio ffmpeg muxes in (the demo's), removed with the writer.
    _audio_file: Option<tempfile::NamedTempFile>,
    /// Directories `open` made, removed again if nothing is written.
    made: MadeDirs,
    width: u32,
    height: u32,
    fps: u32,
    with_audio: bool,
    frames: u64,
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    stderr: Option<JoinHandle<VecDeque<String>>>,
    /// The error after ffmpeg died, repeated by later calls.
    failed: Option<FfmpegFailure>,
}

impl VideoWriter {
    pub(super) fn open(opts: &OutputOptions, container: &str) -> Result<Self, RenderError> {
        let path = opts.path.clone();
        let (video_codec, audio_codec, format_flags): (&[&str], &[&str], &[&str]) = match container
        {
            "mp4" => (
                &[
                    "-c:v", "libx264", "-pix_fmt", "yuv420p", "-preset", "medium",
                ],
                &["-c:a", "aac", "-b:a", "192k"],
                &["-crf", "18", "-movflags", "+faststart", "-f", "mp4"],
            ),
            "webm" => (
                &["-c:v", "libvpx-vp9", "-pix_fmt", "yuv420p", "-b:v", "0"],
                &["-c:a", "libopus"],
                &["-crf", "32", "-row-mt", "1", "-f", "webm"],
            ),
            other => {
                return Err(UsageError::UnknownContainer {
                    path,
                    container: other.to_owned(),
                }
                .into());
            }
        };
        if !opts.width.is_multiple_of(2) || !opts.height.is_multiple_of(2) {
            return Err(UsageError::OddVideoSize {
                path,
                width: opts.width,
                height: opts.height,
            }
            .into());
        }
        if let Some(AudioOut::File(audio)) = &opts.audio
            && !audio.is_file()
        {
            return Err(RenderError::input(audio, InputProblem::AudioNotFound));
        }
        let mut made = create_parent(&path)?;
        // Fail here, with a plain message, if the file cannot be created; ffmpeg overwrites it.
        let part = match temp_beside(&path) {
            Ok(part) => part,
            Err(e) => {
                made.remove_empty();
                return Err(e);
            }
        };
        let audio_file = match &opts.audio {
            Some(AudioOut::Generated { bytes, .. }) => {
                let written = tempfile::Builder::new()
                    .prefix("dyeflow-audio-")
                    .suffix(".wav")
                    .tempfile()
                    .and_then(|mut f| f.write_all(bytes).and(f.flush()).map(|()| f));
                match written {
                    Ok(f) => Some(f),
                    Err(e) => {
                        made.remove_empty();
                        return Err(RenderError::TempAudio(e));
                    }
                }
            }
            _ => None,
        };
        let audio: Option<PathBuf> = match (&opts.audio, &audio_file) {
            (Some(AudioOut::File(p)), _) => Some(p.clone()),
            (_, Some(f)) => Some(f.path().to_path_buf()),
            _ => None,
        };

        let mut command = Command::new("ffmpeg");
        command.args(["-hide_banner", "-loglevel", "error", "-y"]);
        command.args(["-f", "rawvideo", "-pix_fmt", "rgba"]);
        command
            .arg("-s")
            .arg(format!("{}x{}", opts.width, opts.height));
        command.arg("-r").arg(opts.fps.to_string());
        command.args(["-i", "pipe:0"]);
        if let Some(audio) = &audio {
            let start = opts.audio_start_s;
            if start > 0.0 {
                command.arg("-ss").arg(format!("{start:.3}"));
            } else if start < 0.0 {
                command.arg("-itsoffset").arg(format!("{:.3}", -start));
            }
            command.arg("-i").arg(audio);
            // The video decides the length: audio that ends sooner (or is started past its
            // end) is padded with silence, longer audio is cut.
            command.args(["-map", "0:v", "-map", "1:a", "-af", "apad", "-shortest"]);
        }
        command.args(video_codec);
        if audio.is_some() {
            command.args(audio_codec);
        }
        command.args(format_flags);
        command.arg(part.path());
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        // Ctrl-C in the terminal goes to the whole foreground process group; the render stops
        // cleanly and closes ffmpeg's input itself, so ffmpeg must not get the signal too.
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            command.process_group(0);
        }
        #[cfg(windows)]
        {
            use std::os::windows::process::CommandExt;
            const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
            command.creation_flags(CREATE_NEW_PROCESS_GROUP);
        }

        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(e) => {
                made.remove_empty();
                return Err(if e.kind() == io::ErrorKind::NotFound {
                    RenderError::FfmpegMissing { path }
                } else {
                    RenderError::FfmpegStart { path, source: e }
                });
            }
        };
        let stdin = child.stdin.take();
        let stderr = child.stderr.take().and_then(|stderr| {
            thread::Builder::new()
                .name("dyeflow-ffmpeg-stderr".into())
                .spawn(move || stderr_tail(stderr))
                .ok()
        });
        Ok(Self {
            path,
            part: Some(part),
            _audio_file: audio_file,
            made,
            width: opts.width,
            height: opts.height,
            fps: opts.fps,
            with_audio: audio.is_some(),
            frames: 0,
            child: Some(child),
            stdin,
            stderr,
            failed: None,
        })
    }

    /// Closes ffmpeg's input and waits for it (killing it after `patience`, if given). Returns
    /// its exit status (if known) and its last stderr lines.
    fn wait(&mut self, patience: Option<Duration>) -> (Option<ExitStatus>, String) {
        self.stdin = None;
        let status = self.child.take().and_then(|mut child| {
            if let Some(patience) = patience {
                let deadline = Instant::now() + patience;
                while Instant::now() < deadline {
                    match child.try_wait() {
                        Ok(Some(status)) => return Some(status),
                        Ok(None) => thread::sleep(Duration::from_millis(20)),
                        Err(_) => break,
                    }
                }
                let _ = child.kill();
            }
            child.wait().ok()
        });
        let lines = self
            .stderr
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default();
        let tail = if lines.is_empty() {
            "it printed no error".to_string()
        } else {
            lines.into_iter().collect::<Vec<_>>().join("; ")
        };
        (status, tail)
    }
}

/// Reads ffmpeg's stderr to the end, keeping the last few non-empty lines.
pub(super) fn stderr_tail(stderr: impl io::Read) -> VecDeque<String> {
    let mut reader = BufReader::new(stderr);
    let mut lines = VecDeque::with_capacity(STDERR_LINES + 1);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let text = String::from_utf8_lossy(&line).trim().to_string();
                if !text.is_empty() {
                    lines.push_back(text);
                    if lines.len() > STDERR_LINES {
                        lines.pop_front();
                    }
                }
            }
        }
    }
    lines
}

impl FrameWriter for VideoWriter {
    fn write(&mut self, rgba: &[u8]) -> Result<(), RenderError> {
        if let Some(failed) = &self.failed {
            return Err(failed.clone().into());
        }
        check_frame(&self.path, rgba, self.width, self.height)?;
        let result = match &mut self.stdin {
            Some(stdin) => stdin.write_all(rgba),
            None => Err(io::ErrorKind::BrokenPipe.into()),
        };
        if let Err(e) = result {
            let (status, tail) = self.wait(Some(Duration::from_secs(5)));
            let failure = FfmpegFailure::Stopped {
                path: self.path.clone(),
                frames: self.frames,
                pipe: Arc::new(e),
                status,
                stderr: tail,
            };
            self.abandon();
            self.failed = Some(failure.clone());
            return Err(failure.into());
        }
        self.frames += 1;
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<Option<String>, RenderError> {
        if let Some(failed) = self.failed.take() {
            return Err(failed.into());
        }
        if self.frames == 0 {
            // No frames, no video: stop ffmpeg; the earlier file stays as it was.
            if let Some(child) = &mut self.child {
                let _ = child.kill();
            }
            self.wait(None);
            self.abandon();
            return Ok(None);
        }
        let (status, tail) = self.wait(None);
        if !status.is_some_and(|s| s.success()) {
            self.abandon();
            return Err(FfmpegFailure::Failed {
                path: self.path.clone(),
                status,
                stderr: tail,
            }
            .into());
        }
        if let Some(part) = self.part.take() {
            persist_beside(part, &self.path)?;
        }
        let seconds = self.frames as f64 / f64::from(self.fps);
        Ok(Some(format!(
            "{}, {} frames at {} fps ({seconds:.1} s){}, {}",
            self.path.display(),
            self.frames,
            self.fps,
            if self.with_audio { " with audio" } else { "" },
            human_size(file_size(&self.path))
        )))
    }

    fn frames_written(&self) -> u64 {
        self.frames
    }
}

impl VideoWriter {
    /// Remove the temporary file and the directories `open` made.
    fn abandon(&mut self) {
        self.part = None;
        self.made.remove_empty();
    }
}

impl Drop for VideoWriter {
    fn drop(&mut self) {
        if self.child.is_some() {
            // Abandoned without `finish`: stop ffmpeg and leave nothing behind.
            if let Some(child) = &mut self.child {
                let _ = child.kill();
            }
            self.wait(None);
        }
        if self.part.is_some() {
            self.abandon();
        }
    }
}
