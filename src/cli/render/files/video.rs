//! Video through ffmpeg: raw RGBA frames piped into ffmpeg, which encodes H.264 or VP9 and
//! muxes the audio in.

use super::*;

/// How many of ffmpeg's last stderr lines an error quotes.
pub(super) const STDERR_LINES: usize = 6;

/// ffmpeg's arguments for a video: see [`codec_args`].
pub(super) struct CodecArgs {
    /// The video codec and its speed.
    pub video: Vec<&'static str>,
    /// The audio codec (used when there is audio).
    pub audio: &'static [&'static str],
    /// The rate control and the container.
    pub format: Vec<&'static str>,
}

/// ffmpeg's arguments for a container at a quality: the video codec's, the audio codec's, and
/// the rate control's and container's; `None` for a container Dyeflow does not write.
///
/// H.264 (measured on the demo at 1280x720, 60 fps, 2026-11-28: SSIM of the decoded video
/// against the frames, size, x264's CPU time; see `docs/src/internals/perf-render.md`):
/// `medium` at CRF 18 (before 2026-11-28 the only setting) gave SSIM 0.9909 in 7.3 MB for 45 s
/// of CPU time; `superfast` at CRF 18 the same SSIM (0.9909) in 11.9 MB for 12.5 s, the default
/// ([`Quality::Good`]); `medium` at CRF 16 SSIM 0.9918 in 9.3 MB for 45 s ([`Quality::Best`]);
/// `ultrafast` at CRF 23 for drafts (SSIM 0.9801, 10.2 MB, 7.3 s).
///
/// VP9 (the first 300 frames of the same): CRF 32 at libvpx's default speed (before
/// 2026-11-28 the only setting) gave SSIM 0.9897 in 0.75 MB for 36 s of CPU time; realtime at
/// speed 8 and CRF 28 SSIM 0.9901 in 1.54 MB for 3.8 s ([`Quality::Good`]); good at speed 3
/// and CRF 26 SSIM 0.9905 in 1.15 MB for 22 s ([`Quality::Best`]); realtime at CRF 32 SSIM
/// 0.9887 in 1.24 MB for 3.4 s (drafts).
pub(super) fn codec_args(container: &str, quality: Quality) -> Option<CodecArgs> {
    let (video, audio, format): (&[&str], &[&str], &[&str]) = match container {
        "mp4" => (
            &["-c:v", "libx264", "-pix_fmt", "yuv420p"],
            &["-c:a", "aac", "-b:a", "192k"],
            &["-movflags", "+faststart", "-f", "mp4"],
        ),
        "webm" => (
            &[
                "-c:v",
                "libvpx-vp9",
                "-pix_fmt",
                "yuv420p",
                "-b:v",
                "0",
                "-row-mt",
                "1",
            ],
            &["-c:a", "libopus"],
            &["-f", "webm"],
        ),
        _ => return None,
    };
    let (speed, crf): (&[&str], &str) = match (container, quality) {
        ("mp4", Quality::Draft) => (&["-preset", "ultrafast"], "23"),
        ("mp4", Quality::Good) => (&["-preset", "superfast"], "18"),
        ("mp4", Quality::Best) => (&["-preset", "medium"], "16"),
        (_, Quality::Draft) => (&["-deadline", "realtime", "-cpu-used", "8"], "32"),
        (_, Quality::Good) => (&["-deadline", "realtime", "-cpu-used", "8"], "28"),
        (_, Quality::Best) => (&["-deadline", "good", "-cpu-used", "3"], "26"),
    };
    Some(CodecArgs {
        video: [video, speed].concat(),
        audio,
        format: [&["-crf", crf][..], format].concat(),
    })
}

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
    /// The thread that writes the frames into ffmpeg's input; `None` once it is closed.
    feeder: Option<Feeder>,
    stderr: Option<JoinHandle<VecDeque<String>>>,
    /// The error after ffmpeg died, repeated by later calls.
    failed: Option<FfmpegFailure>,
}

impl VideoWriter {
    pub(super) fn open(opts: &OutputOptions, container: &str) -> Result<Self, RenderError> {
        let path = opts.path.clone();
        let Some(codec) = codec_args(container, opts.quality) else {
            return Err(UsageError::UnknownContainer {
                path,
                container: container.to_owned(),
            }
            .into());
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
        // Frames come as yuv420p, converted by the feeder (see `yuv.rs`).
        command.args(["-f", "rawvideo", "-pix_fmt", "yuv420p"]);
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
        command.args(&codec.video);
        if audio.is_some() {
            command.args(codec.audio);
        }
        // The matrix the frames were converted with (BT.601, limited range), so players do
        // not guess (they take untagged high-definition video for BT.709).
        command.args(["-colorspace", "smpte170m", "-color_range", "tv"]);
        command.args(&codec.format);
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
        // ffmpeg encodes on the time the simulation leaves, as the PNG encoders do (see
        // `yield_to_the_simulation`).
        #[cfg(target_os = "linux")]
        {
            use std::os::unix::process::CommandExt;
            // SAFETY: runs in the child between fork and exec, where only async-signal-safe
            // calls are allowed: setpriority is a plain system call, and it allocates nothing.
            unsafe {
                command.pre_exec(|| {
                    libc::setpriority(libc::PRIO_PROCESS, 0, 19);
                    Ok(())
                });
            }
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
        let size = (opts.width as usize, opts.height as usize);
        let feeder = match child
            .stdin
            .take()
            .map(|s| Feeder::start(s, size))
            .transpose()
        {
            Ok(feeder) => feeder,
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                made.remove_empty();
                return Err(RenderError::EncoderThreads {
                    path,
                    source: Box::new(e),
                });
            }
        };
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
            feeder,
            stderr,
            failed: None,
        })
    }

    /// Closes ffmpeg's input and waits for it (killing it after `patience`, if given). Returns
    /// its exit status (if known) and its last stderr lines.
    fn wait(&mut self, patience: Option<Duration>) -> (Option<ExitStatus>, String) {
        self.close_input();
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

/// Frames waiting for ffmpeg's input beside the one being written into it, at most: the
/// renderer draws the next frames while ffmpeg takes the last (it reads between its own work).
const PIPE_QUEUE: usize = 8;
/// Bytes of RGBA frames the queue holds at most (fewer frames of large sizes: three of 4K, one
/// of 8K), and at least one frame.
const PIPE_QUEUE_BYTES: usize = 100 << 20;
/// The pipe's buffer asked for (Linux's default limit for a process without privileges): a
/// 720p frame goes through in two writes instead of twenty-two of the default 64 KiB.
#[cfg(target_os = "linux")]
const PIPE_BYTES: i32 = 1 << 20;

/// A thread that converts frames to yuv420p and writes them into ffmpeg's input, and the
/// buffers it gives back.
struct Feeder {
    frames: SyncSender<Vec<u8>>,
    /// The frame buffers out with the feeder: the queue's and the one being written.
    buffers: BufferPool,
    /// Ends when `frames` is closed (or a write fails), closing ffmpeg's input: the frames it
    /// wrote, and the error that stopped it.
    thread: JoinHandle<(u64, Option<io::Error>)>,
}

impl Feeder {
    /// Feed `width x height` frames to `stdin` as yuv420p.
    fn start(mut stdin: ChildStdin, (width, height): (usize, usize)) -> io::Result<Self> {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            // SAFETY: F_SETPIPE_SZ on the pipe's own descriptor, which `stdin` keeps open; a
            // refusal (a lower limit) only leaves the default size.
            unsafe { libc::fcntl(stdin.as_raw_fd(), libc::F_SETPIPE_SZ, PIPE_BYTES) };
        }
        let depth = (PIPE_QUEUE_BYTES / (width * height * 4).max(1)).clamp(1, PIPE_QUEUE);
        let (frames, queue) = mpsc::sync_channel::<Vec<u8>>(depth);
        let (back, free) = mpsc::channel();
        let thread = thread::Builder::new()
            .name("dyeflow-ffmpeg-in".into())
            .spawn(move || {
                yield_to_the_simulation();
                let mut written = 0;
                let mut yuv = Vec::new();
                for frame in queue {
                    super::yuv::rgba_to_yuv420(&frame, width, height, &mut yuv);
                    if let Err(e) = stdin.write_all(&yuv) {
                        return (written, Some(e));
                    }
                    written += 1;
                    let _ = back.send(frame);
                }
                (written, None)
            })?;
        Ok(Self {
            frames,
            buffers: BufferPool::new(free, depth + 1),
            thread,
        })
    }
}

impl VideoWriter {
    /// Close ffmpeg's input once the queued frames are in it (or the feeder stopped): the
    /// frames written, and the error that stopped the feeder; `None` if it was closed before.
    fn close_input(&mut self) -> Option<(u64, Option<io::Error>)> {
        let feeder = self.feeder.take()?;
        drop(feeder.frames);
        Some(feeder.thread.join().unwrap_or((0, None)))
    }

    /// ffmpeg stopped taking frames (the feeder has ended): wait for ffmpeg (a while), keep and
    /// return the failure.
    fn stopped(&mut self) -> RenderError {
        let fed = self.close_input();
        self.stopped_with(fed)
    }

    /// [`VideoWriter::stopped`] with what the feeder said when it was closed.
    fn stopped_with(&mut self, fed: Option<(u64, Option<io::Error>)>) -> RenderError {
        let (written, error) = fed.unwrap_or((self.frames, None));
        let (status, tail) = self.wait(Some(Duration::from_secs(5)));
        let failure = FfmpegFailure::Stopped {
            path: self.path.clone(),
            frames: written,
            pipe: Arc::new(error.unwrap_or_else(|| io::ErrorKind::BrokenPipe.into())),
            status,
            stderr: tail,
        };
        self.abandon();
        self.failed = Some(failure.clone());
        failure.into()
    }

    /// A buffer for the renderer's next frame: one the feeder is done with, a new one while
    /// fewer than the queue holds are out, else the next the feeder gives back (waiting for
    /// ffmpeg). `None` when the feeder stopped.
    fn spare(&mut self) -> Option<Vec<u8>> {
        self.feeder.as_mut()?.buffers.take()
    }

    /// Queue `frame` for ffmpeg.
    fn send(&mut self, frame: Vec<u8>) -> Result<(), RenderError> {
        let sent = match &mut self.feeder {
            Some(feeder) => {
                feeder.buffers.lend();
                feeder.frames.send(frame).is_ok()
            }
            None => false,
        };
        if !sent {
            return Err(self.stopped());
        }
        self.frames += 1;
        Ok(())
    }

    /// The checks before a frame is taken: an earlier failure, and the frame's size.
    fn check(&self, rgba: &[u8]) -> Result<(), RenderError> {
        if let Some(failed) = &self.failed {
            return Err(failed.clone().into());
        }
        check_frame(&self.path, rgba, self.width, self.height)
    }
}

impl FrameWriter for VideoWriter {
    fn write(&mut self, rgba: &[u8]) -> Result<(), RenderError> {
        self.check(rgba)?;
        let Some(mut buffer) = self.spare() else {
            return Err(self.stopped());
        };
        buffer.clear();
        buffer.extend_from_slice(rgba);
        self.send(buffer)
    }

    fn write_swap(&mut self, rgba: &mut Vec<u8>) -> Result<(), RenderError> {
        self.check(rgba)?;
        let Some(mut next) = self.spare() else {
            return Err(self.stopped());
        };
        next.resize(rgba.len(), 0);
        let frame = std::mem::replace(rgba, next);
        self.send(frame)
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
        // The queued frames go in, then ffmpeg's input is closed.
        if let Some((written, Some(error))) = self.close_input() {
            return Err(self.stopped_with(Some((written, Some(error)))));
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
