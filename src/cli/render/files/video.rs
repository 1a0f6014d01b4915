//! Video through ffmpeg: raw RGBA frames piped into ffmpeg, which encodes H.264 or VP9 and
//! muxes the audio in.

use super::*;

mod feeder;
#[cfg(all(test, target_os = "linux"))]
mod tests;

use feeder::{Feeder, FeederEnd};

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

/// How long ffmpeg may go without taking a frame, growing its file or (on Linux) using CPU
/// time before the render calls it stalled, stops it and says so. A slow encoder (8K at
/// `best`) always shows one of the three within a second or two; a stalled one (stopped, or
/// waiting for something that never comes) shows none.
pub const ENCODER_PATIENCE: Duration = Duration::from_secs(30);
/// How often a wait for ffmpeg looks at it, at the stop requests and at the clock.
const POLL: Duration = Duration::from_millis(20);
/// How long, after ffmpeg has exited, its stderr may stay open (held by a process it started)
/// before the render stops reading it.
const STDERR_GRACE: Duration = Duration::from_secs(2);

/// Pipes frames into ffmpeg, which writes a hidden temporary file beside the output; renamed
/// into place when ffmpeg succeeds and the file reads as a whole video with every frame.
///
/// Every wait for ffmpeg (for room in its queue, for its input to drain, for it to exit) looks
/// at it every [`POLL`]: one that makes no progress for the output's patience
/// ([`ENCODER_PATIENCE`]) is killed (with every process it started) and reported, and so is one
/// still finishing when another stop is requested (a second Ctrl-C). A stop requested while
/// the renderer waits for room leaves that frame out and lets the render end.
pub(super) struct VideoWriter {
    path: PathBuf,
    container: &'static str,
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
    /// Frames the feeder has written into ffmpeg's input so far (its progress).
    fed: Arc<AtomicU64>,
    stderr: Option<JoinHandle<StderrTail>>,
    /// The error after ffmpeg died, repeated by later calls.
    failed: Option<FfmpegFailure>,
    stops: StopRequests,
    patience: Duration,
}

/// Why a wait for ffmpeg ended before what it waited for came.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Halt {
    /// A stop was requested (past those the wait allowed).
    Interrupted,
    /// ffmpeg made no progress for the writer's patience.
    Stalled,
}

/// Whether ffmpeg is getting anywhere: what it has shown of progress last, and since when.
struct Watchdog {
    patience: Duration,
    seen: Progress,
    since: Instant,
}

/// What ffmpeg has done so far: frames taken, bytes of its file, CPU time (Linux, in ticks).
type Progress = (u64, u64, u64);

impl Watchdog {
    fn new(patience: Duration, now: Progress) -> Self {
        Self {
            patience,
            seen: now,
            since: Instant::now(),
        }
    }

    /// Whether ffmpeg has shown no progress for the patience, given what it shows `now`.
    fn stalled(&mut self, now: Progress) -> bool {
        if now != self.seen {
            self.seen = now;
            self.since = Instant::now();
        }
        self.since.elapsed() >= self.patience
    }
}

/// The CPU time (user and system, its own and its waited-for children's, in clock ticks) of
/// process `pid`, from `/proc/PID/stat`; 0 where that cannot be read (other systems).
fn cpu_ticks(pid: u32) -> u64 {
    #[cfg(target_os = "linux")]
    if let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The command's name (in parentheses) may hold spaces: count fields after it. The
        // fields after it start at the 3rd (state); utime, stime, cutime, cstime are the
        // 14th to 17th.
        if let Some((_, rest)) = stat.rsplit_once(')') {
            return rest
                .split_whitespace()
                .skip(11)
                .take(4)
                .filter_map(|f| f.parse::<u64>().ok())
                .sum();
        }
    }
    let _ = pid;
    0
}

/// Kill `child` and every process it started (unix: its process group, which it leads: it
/// was started with `process_group(0)`), so that nothing it left holds its pipes open.
pub(super) fn kill_tree(child: &mut Child) {
    #[cfg(unix)]
    if let Ok(group) = libc::pid_t::try_from(child.id()) {
        // SAFETY: kill(2) on the process group the child leads; it has not been waited for
        // yet (callers kill before they reap), so its id is still its own.
        unsafe { libc::kill(-group, libc::SIGKILL) };
    }
    let _ = child.kill();
}

/// ffmpeg's stderr as a writer reports it: the last few lines, and whether any line said the
/// output failed (ffmpeg 5.1 exits 0 after "Error writing trailer").
#[derive(Debug, Default)]
pub(super) struct StderrTail {
    pub lines: VecDeque<String>,
    pub said_failed: bool,
}

impl StderrTail {
    /// The lines as one phrase.
    fn text(&self) -> String {
        if self.lines.is_empty() {
            "it printed no error".to_string()
        } else {
            self.lines.iter().cloned().collect::<Vec<_>>().join("; ")
        }
    }
}

/// Whether a line of ffmpeg's says that what it wrote is broken, whatever its exit status.
pub(super) fn says_output_failed(line: &str) -> bool {
    let line = line.to_ascii_lowercase();
    [
        "no space left on device",
        "error writing trailer",
        "input/output error",
        "disk quota exceeded",
        "file too large",
        "error muxing",
        "conversion failed",
    ]
    .iter()
    .any(|p| line.contains(p))
}

/// The codec's arguments for `container` and its name, once the size and the audio are ones a
/// video can take.
fn checked(
    opts: &OutputOptions,
    container: &str,
) -> Result<(CodecArgs, &'static str), RenderError> {
    let path = opts.path.clone();
    let Some(codec) = codec_args(container, opts.quality) else {
        return Err(UsageError::UnknownContainer {
            path,
            container: container.to_owned(),
        }
        .into());
    };
    let container = if container == "mp4" { "mp4" } else { "webm" };
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
    Ok((codec, container))
}

/// Generated audio (the demo's) in a temporary WAV file for ffmpeg to mux in.
fn generated_audio(opts: &OutputOptions) -> Result<Option<tempfile::NamedTempFile>, RenderError> {
    let Some(AudioOut::Generated { bytes, .. }) = &opts.audio else {
        return Ok(None);
    };
    tempfile::Builder::new()
        .prefix("dyeflow-audio-")
        .suffix(".wav")
        .tempfile()
        .and_then(|mut f| f.write_all(bytes).and(f.flush()).map(|()| f))
        .map(Some)
        .map_err(RenderError::TempAudio)
}

/// The ffmpeg command that encodes yuv420p frames from its standard input (and `audio`) into
/// `part`, in a process group of its own, at the lowest priority.
fn ffmpeg(opts: &OutputOptions, codec: &CodecArgs, audio: Option<&Path>, part: &Path) -> Command {
    let mut command = Command::new(&opts.ffmpeg);
    command.args(["-hide_banner", "-loglevel", "error", "-y"]);
    // Frames come as yuv420p, converted by the feeder (see `yuv.rs`).
    command.args(["-f", "rawvideo", "-pix_fmt", "yuv420p"]);
    command
        .arg("-s")
        .arg(format!("{}x{}", opts.width, opts.height));
    command.arg("-r").arg(opts.fps.to_string());
    command.args(["-i", "pipe:0"]);
    if let Some(audio) = audio {
        let start = opts.audio_start_s;
        if start > 0.0 {
            command.arg("-ss").arg(format!("{start:.3}"));
        } else if start < 0.0 {
            command.arg("-itsoffset").arg(format!("{:.3}", -start));
        }
        command.arg("-i").arg(audio);
        // The video decides the length: audio that ends sooner (or is started past its end)
        // is padded with silence, longer audio is cut.
        command.args(["-map", "0:v", "-map", "1:a", "-af", "apad", "-shortest"]);
    }
    command.args(&codec.video);
    if audio.is_some() {
        command.args(codec.audio);
    }
    // The matrix the frames were converted with (BT.601, limited range), so players do not
    // guess (they take untagged high-definition video for BT.709).
    command.args(["-colorspace", "smpte170m", "-color_range", "tv"]);
    command.args(&codec.format);
    command.arg(part);
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    in_a_group_of_its_own(&mut command);
    // ffmpeg encodes on the time the simulation leaves, as the PNG encoders do (see
    // `yield_to_the_simulation`).
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: runs in the child between fork and exec, where only async-signal-safe calls
        // are allowed: setpriority is a plain system call, and it allocates nothing.
        unsafe {
            command.pre_exec(|| {
                libc::setpriority(libc::PRIO_PROCESS, 0, 19);
                Ok(())
            });
        }
    }
    command
}

impl VideoWriter {
    pub(super) fn open(opts: &OutputOptions, container: &str) -> Result<Self, RenderError> {
        let path = opts.path.clone();
        let (codec, container) = checked(opts, container)?;
        let mut made = create_parent(&path)?;
        // Fail here, with a plain message, if the file cannot be created; ffmpeg overwrites it.
        let (part, audio_file) = match temp_beside(&path).and_then(|part| {
            let audio = generated_audio(opts)?;
            Ok((part, audio))
        }) {
            Ok(files) => files,
            Err(e) => {
                made.remove_empty();
                return Err(e);
            }
        };
        let audio: Option<PathBuf> = match (&opts.audio, &audio_file) {
            (Some(AudioOut::File(p)), _) => Some(p.clone()),
            (_, Some(f)) => Some(f.path().to_path_buf()),
            _ => None,
        };
        let mut child = match ffmpeg(opts, &codec, audio.as_deref(), part.path()).spawn() {
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
        let fed = Arc::new(AtomicU64::new(0));
        let feeder = match child
            .stdin
            .take()
            .map(|s| Feeder::start(s, size, Arc::clone(&fed)))
            .transpose()
        {
            Ok(feeder) => feeder,
            Err(e) => {
                kill_tree(&mut child);
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
            container,
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
            fed,
            stderr,
            failed: None,
            stops: opts.stops.clone(),
            patience: opts.encoder_patience,
        })
    }

    /// What ffmpeg has shown of progress so far.
    fn progress(&self) -> Progress {
        let bytes = self.part.as_ref().map_or(0, |part| file_size(part.path()));
        let cpu = self.child.as_ref().map_or(0, |c| cpu_ticks(c.id()));
        (self.fed.load(Ordering::Relaxed), bytes, cpu)
    }

    /// Polls `ready` every [`POLL`] (or as often as it waits itself) until it gives a value,
    /// more stops than `allowed_stops` are requested, or ffmpeg stalls.
    fn wait_on<T>(
        &mut self,
        allowed_stops: usize,
        mut ready: impl FnMut(&mut Self) -> Option<T>,
    ) -> Result<T, Halt> {
        let mut dog = Watchdog::new(self.patience, self.progress());
        loop {
            if let Some(value) = ready(self) {
                return Ok(value);
            }
            if self.stops.count() > allowed_stops {
                return Err(Halt::Interrupted);
            }
            if dog.stalled(self.progress()) {
                return Err(Halt::Stalled);
            }
        }
    }

    /// Closes ffmpeg's input once the frames queued are in it, and waits for ffmpeg to exit
    /// (see [`VideoWriter::wait_on`]; after a halt ffmpeg is killed). Returns what the feeder
    /// said when it ended (the frames it wrote, the error that stopped it), ffmpeg's exit
    /// status, and its stderr.
    fn close_and_wait(
        &mut self,
        allowed_stops: usize,
    ) -> (Result<(Option<ExitStatus>, FeederEnd), Halt>, StderrTail) {
        let waited = self.close_input(allowed_stops).and_then(|fed| {
            self.wait_on(allowed_stops, |w| {
                let status = match w.child.as_mut().map(Child::try_wait) {
                    None => Some(None),
                    Some(Ok(Some(status))) => Some(Some(status)),
                    Some(Ok(None)) => None,
                    Some(Err(_)) => Some(None),
                };
                if status.is_none() {
                    thread::sleep(POLL);
                }
                status
            })
            .map(|status| (status, fed))
        });
        if waited.is_err() {
            self.kill();
        }
        self.child = None;
        (waited, self.stderr_tail())
    }

    /// Kill ffmpeg (and what it started) and reap it; the feeder then ends on a broken pipe.
    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            kill_tree(&mut child);
            let _ = child.wait();
        }
        if let Some(feeder) = self.feeder.take() {
            drop(feeder.frames);
            // With ffmpeg gone its write fails at once; a thread stuck anyway is left behind
            // rather than waited for.
            if wait_until(Instant::now() + STDERR_GRACE, || {
                feeder.thread.is_finished()
            }) {
                let _ = feeder.thread.join();
            }
        }
    }

    /// ffmpeg's stderr once it has exited (what it printed within [`STDERR_GRACE`] if a
    /// process it started still holds the pipe).
    fn stderr_tail(&mut self) -> StderrTail {
        match self.stderr.take() {
            Some(thread) if wait_until(Instant::now() + STDERR_GRACE, || thread.is_finished()) => {
                thread.join().unwrap_or_default()
            }
            _ => StderrTail::default(),
        }
    }
}

/// Waits (sleeping [`POLL`] at a time) until `done` or the deadline; whether `done`.
fn wait_until(deadline: Instant, mut done: impl FnMut() -> bool) -> bool {
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        thread::sleep(POLL);
    }
}

/// Start `command` in a process group of its own: Ctrl-C in the terminal goes to the whole
/// foreground process group, and the render, which stops cleanly and closes ffmpeg's input
/// itself, decides what ffmpeg gets; and the group can be killed as one (see [`kill_tree`]).
pub(super) fn in_a_group_of_its_own(command: &mut Command) {
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
}

/// Reads ffmpeg's stderr to the end, keeping the last few non-empty lines and whether one
/// said the output failed.
pub(super) fn stderr_tail(stderr: impl io::Read) -> StderrTail {
    let mut reader = BufReader::new(stderr);
    let mut tail = StderrTail::default();
    let mut line = Vec::new();
    loop {
        line.clear();
        // A line is at most 64 KiB: a process that prints without newlines cannot grow it.
        match io::Read::take(&mut reader, 64 << 10).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let text = String::from_utf8_lossy(&line).trim().to_string();
                if text.is_empty() {
                    continue;
                }
                tail.said_failed |= says_output_failed(&text);
                tail.lines.push_back(text);
                if tail.lines.len() > STDERR_LINES {
                    tail.lines.pop_front();
                }
            }
        }
    }
    tail
}

impl VideoWriter {
    /// Close ffmpeg's input once the queued frames are in it (or the feeder stopped): what
    /// the feeder said (`(frames so far, None)` if it was closed before).
    fn close_input(&mut self, allowed_stops: usize) -> Result<FeederEnd, Halt> {
        let Some(feeder) = self.feeder.take() else {
            return Ok((self.fed.load(Ordering::Relaxed), None));
        };
        drop(feeder.frames);
        let thread = feeder.thread;
        let ended = self.wait_on(allowed_stops, |_| {
            let done = thread.is_finished();
            if !done {
                thread::sleep(POLL);
            }
            done.then_some(())
        });
        match ended {
            Ok(()) => Ok(thread.join().unwrap_or((0, None))),
            Err(halt) => {
                // Killing ffmpeg breaks the feeder's pipe, which ends it.
                self.kill();
                let _ = wait_until(Instant::now() + STDERR_GRACE, || thread.is_finished());
                Err(halt)
            }
        }
    }

    /// ffmpeg stopped taking frames (the feeder has ended) or stalled: wait for ffmpeg (a
    /// while), keep and return the failure.
    fn stopped(&mut self, halt: Option<Halt>) -> RenderError {
        // ffmpeg that stopped taking frames gets its patience to exit and say why (another
        // stop requested meanwhile kills it).
        let (waited, tail) = match halt {
            Some(halt) => {
                self.kill();
                (Err(halt), self.stderr_tail())
            }
            None => self.close_and_wait(self.stops.count()),
        };
        let failure = match waited {
            Err(Halt::Interrupted) => FfmpegFailure::Interrupted {
                path: self.path.clone(),
            },
            Err(Halt::Stalled) => FfmpegFailure::Stalled {
                path: self.path.clone(),
                frames: self.fed.load(Ordering::Relaxed),
                patience_s: self.patience.as_secs_f64(),
                stderr: tail.text(),
            },
            Ok((status, (written, error))) => FfmpegFailure::Stopped {
                path: self.path.clone(),
                frames: written,
                pipe: Arc::new(error.unwrap_or_else(|| io::ErrorKind::BrokenPipe.into())),
                status,
                stderr: tail.text(),
            },
        };
        self.abandon();
        self.failed = Some(failure.clone());
        failure.into()
    }

    /// A buffer for the renderer's next frame: one the feeder is done with, a new one while
    /// fewer than the queue holds are out, else the next the feeder gives back (waiting for
    /// ffmpeg, see [`VideoWriter::wait_on`]). `Ok(None)` when a stop was requested while it
    /// waited.
    fn spare(&mut self) -> Result<Option<Vec<u8>>, RenderError> {
        let taken = self.wait_on(0, |w| match w.feeder.as_mut() {
            None => Some(None),
            Some(feeder) => match feeder.buffers.take_within(POLL) {
                Taken::Buffer(b) => Some(Some(b)),
                Taken::Gone => Some(None),
                Taken::Later => None,
            },
        });
        match taken {
            Ok(Some(buffer)) => Ok(Some(buffer)),
            // The feeder ended: ffmpeg stopped taking frames.
            Ok(None) => Err(self.stopped(None)),
            Err(Halt::Interrupted) => Ok(None),
            Err(Halt::Stalled) => Err(self.stopped(Some(Halt::Stalled))),
        }
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
            return Err(self.stopped(None));
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

    /// The finished file, checked: it must read as a whole video of every frame written (and
    /// audio when there is audio), whatever ffmpeg's exit status said.
    fn verify(&self, tail: &StderrTail) -> Result<(), FfmpegFailure> {
        let incomplete = |why: String| FfmpegFailure::Incomplete {
            path: self.path.clone(),
            why,
            stderr: tail.text(),
        };
        if tail.said_failed {
            return Err(incomplete("its write failed".into()));
        }
        let Some(part) = &self.part else {
            return Err(incomplete("its temporary file is gone".into()));
        };
        let contents = super::verify::contents(part.path(), self.container).map_err(incomplete)?;
        if contents.video_frames != self.frames {
            return Err(incomplete(format!(
                "it holds {} of the {} frames",
                contents.video_frames, self.frames
            )));
        }
        if self.with_audio && contents.audio_packets == 0 {
            return Err(incomplete("it holds no audio".into()));
        }
        Ok(())
    }
}

impl FrameWriter for VideoWriter {
    fn write(&mut self, rgba: &[u8]) -> Result<(), RenderError> {
        self.check(rgba)?;
        let Some(mut buffer) = self.spare()? else {
            // A stop was requested while ffmpeg was behind: this frame is left out.
            return Ok(());
        };
        buffer.clear();
        buffer.extend_from_slice(rgba);
        self.send(buffer)
    }

    fn write_swap(&mut self, rgba: &mut Vec<u8>) -> Result<(), RenderError> {
        self.check(rgba)?;
        let Some(mut next) = self.spare()? else {
            return Ok(());
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
            self.kill();
            self.abandon();
            return Ok(None);
        }
        // The queued frames go in, then ffmpeg's input is closed and ffmpeg finishes the
        // file: a stop requested from now on (a second Ctrl-C) abandons it.
        let allowed = self.stops.count();
        let (waited, tail) = self.close_and_wait(allowed);
        let (status, (written, error)) = match waited {
            Ok(done) => done,
            Err(halt) => return Err(self.stopped(Some(halt))),
        };
        if let Some(error) = error {
            self.abandon();
            let failure = FfmpegFailure::Stopped {
                path: self.path.clone(),
                frames: written,
                pipe: Arc::new(error),
                status,
                stderr: tail.text(),
            };
            return Err(failure.into());
        }
        if !status.is_some_and(|s| s.success()) {
            self.abandon();
            return Err(FfmpegFailure::Failed {
                path: self.path.clone(),
                status,
                stderr: tail.text(),
            }
            .into());
        }
        if let Err(failure) = self.verify(&tail) {
            self.abandon();
            return Err(failure.into());
        }
        if let Some(part) = self.part.take() {
            persist_beside(part, &self.path)?;
        }
        let seconds = self.frames as f64 / f64::from(self.fps);
        Ok(Some(format!(
            "{}, {} frame{} at {} fps ({seconds:.1} s){}, {}",
            self.path.display(),
            self.frames,
            if self.frames == 1 { "" } else { "s" },
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
        // Abandoned without `finish` (or after a failure): stop ffmpeg, leave nothing behind.
        self.kill();
        if self.part.is_some() {
            self.abandon();
        }
    }
}
