//! Where rendered frames go: a directory of PNG frames, an animated GIF, or an mp4/webm video
//! encoded by ffmpeg.
//!
//! The renderer hands RGBA8 frames (top row first, `width * height * 4` bytes, alpha 255) to a
//! [`FrameWriter`] in order, then calls [`FrameWriter::finish`], also after Ctrl-C, so that what
//! was rendered so far ends up as a complete file.
//!
//! PNG and GIF encoding runs on a few background threads (a rayon pool of their own) with a
//! bounded number of frames in flight, so the simulation is not held up by compression and a
//! slow disk holds the render back instead of filling memory; errors from those threads (disk
//! full, permissions) come back from the next `write` or from `finish`. Files are written under
//! a `.part` name and renamed when complete, so an interrupted render never leaves a
//! half-written file under the final name.

use std::collections::BTreeMap;
use std::collections::VecDeque;
use std::fs::{self, File};
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::{FfmpegFailure, InputProblem, RenderError, UsageError};

mod gif;
mod paths;
mod png;
#[cfg(test)]
mod tests;
mod verify;
mod video;
mod yuv;

use gif::GifWriter;
use paths::{MadeDirs, create_dir, create_parent, keep_mode, persist_beside, temp_beside};
pub use paths::{refuse_inputs, through_links};
use png::PngWriter;
pub use png::RENDER_MARKER;
pub use video::ENCODER_PATIENCE;
use video::VideoWriter;

/// Where frames go, chosen from the output path by [`kind_for`].
#[derive(Clone, Debug, PartialEq)]
pub enum OutputKind {
    /// A directory of `frame_000001.png`, `frame_000002.png`, … (RGB, 8 bits).
    PngSequence,
    /// An animated, endlessly looping GIF (at most 50 frames per second, see [`open`]).
    Gif,
    /// A video encoded by ffmpeg.
    Video {
        /// The container: `"mp4"` (H.264, AAC audio) or `"webm"` (VP9, Opus audio).
        container: &'static str,
    },
}

/// Chooses the output kind from the path: `.gif` is a GIF, `.mp4` and `.webm` are videos, and a
/// path without an extension, an existing directory or a path ending in `/` is a directory of
/// PNG frames. Extensions are matched without regard to case.
///
/// # Errors
/// [`RenderError::Usage`] for an empty path, `-` (standard output) or any other extension.
pub fn kind_for(path: &Path) -> Result<OutputKind, RenderError> {
    let text = path.as_os_str().to_string_lossy();
    if text.is_empty() {
        return Err(UsageError::EmptyOutputPath.into());
    }
    if text == "-" {
        return Err(UsageError::StandardOutput.into());
    }
    if text.ends_with('/') || text.ends_with(std::path::MAIN_SEPARATOR) || path.is_dir() {
        return Ok(OutputKind::PngSequence);
    }
    let Some(extension) = path.extension() else {
        return Ok(OutputKind::PngSequence);
    };
    let extension = extension.to_string_lossy();
    match extension.to_ascii_lowercase().as_str() {
        "gif" => Ok(OutputKind::Gif),
        "mp4" => Ok(OutputKind::Video { container: "mp4" }),
        "webm" => Ok(OutputKind::Video { container: "webm" }),
        _ => Err(UsageError::UnknownOutputType {
            path: path.to_owned(),
            extension: extension.into_owned(),
        }
        .into()),
    }
}

/// What to write and how big.
#[derive(Clone, Debug, PartialEq)]
pub struct OutputOptions {
    /// The output file, or the directory for a PNG sequence.
    pub path: PathBuf,
    /// Frame width in pixels.
    pub width: u32,
    /// Frame height in pixels.
    pub height: u32,
    /// Frames per second of the render.
    pub fps: u32,
    /// The audio that goes with the frames: muxed into a video; a generated one is also
    /// written next to PNG frames.
    pub audio: Option<AudioOut>,
    /// Seconds into the audio where the video starts (for muxing).
    pub audio_start_s: f64,
    /// The most frames the render will write, when known: PNG frames then check only the
    /// names of those against the files already in the directory (else every frame's name).
    pub max_frames: Option<u64>,
    /// How a video trades encoding time and file size for quality (see [`Quality`]).
    pub quality: Quality,
    /// Encoder threads for PNG frames (GIFs take at least [`DEFAULT_ENCODER_THREADS`]): 0 for
    /// [`DEFAULT_ENCODER_THREADS`]. See [`encoder_threads`] for what a render gives them.
    pub threads: usize,
    /// The stops the user requested (Ctrl-C, SIGTERM, SIGHUP): a wait for ffmpeg ends on one,
    /// and a PNG render stops removing an earlier render's frames.
    pub stops: StopRequests,
    /// How long ffmpeg may make no progress before it is stopped ([`ENCODER_PATIENCE`]).
    pub encoder_patience: Duration,
    /// The ffmpeg to run for a video: `"ffmpeg"`, found on PATH.
    pub ffmpeg: PathBuf,
}

/// The stops a user requested so far (Ctrl-C, SIGTERM, SIGHUP), counted: a signal handler
/// calls [`StopRequests::request`] (an atomic add, safe in a handler), and a wait compares the
/// count with the one it started at, so that the first Ctrl-C ends the render (its output is
/// finished) and a second one abandons what is still being finished. Clones share the count.
#[derive(Clone, Debug, Default)]
pub struct StopRequests(Arc<AtomicUsize>);

/// The same count (a clone's), not an equal number.
impl PartialEq for StopRequests {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl StopRequests {
    /// One more stop requested.
    pub fn request(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    /// Stops requested so far.
    pub fn count(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }
}

/// How a video is encoded: what it costs in time and size for its picture. Lossless PNG frames
/// and GIFs (whose palettes decide their look) are the same at every quality.
///
/// Chosen by measurement on the demo at 1280x720 and 60 fps (2026-11-28, see
/// `docs/src/internals/perf-render.md`): the SSIM of the decoded video against the frames, the
/// file size, and the encoder's CPU time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Quality {
    /// Quick previews: the fastest encoder settings, a visibly softer picture.
    Draft,
    /// The default: the picture of x264's `medium` preset at CRF 18 (the same SSIM) for about
    /// a quarter of its encoding time, in files 1.6 times the size.
    #[default]
    Good,
    /// A finer picture than `good`, in files no larger, for several times its encoding time.
    Best,
}

/// Encoder threads of a writer when its options ask for the default, and the fewest a GIF's
/// palettes get.
pub const DEFAULT_ENCODER_THREADS: usize = 2;

/// Audio that goes with the frames.
#[derive(Clone, Debug, PartialEq)]
pub enum AudioOut {
    /// The user's WAV file: muxed into a video (PNG frames leave it where it is).
    File(PathBuf),
    /// A WAV file's bytes made by the render (the demo's audio): written next to PNG frames
    /// as `name`, and muxed into a video from a temporary file.
    Generated { name: &'static str, bytes: Vec<u8> },
}

/// A frame sink.
pub trait FrameWriter: Send {
    /// Takes the next frame: RGBA8, top row first, exactly `width * height * 4` bytes. Returns
    /// once the frame is queued (PNG, GIF) or handed to ffmpeg (video); an error from an earlier
    /// frame's background encoding is returned here.
    fn write(&mut self, rgba: &[u8]) -> Result<(), RenderError>;

    /// [`FrameWriter::write`] that may take the frame's buffer instead of copying it: `rgba`
    /// then holds another buffer of the same length, whose contents are unspecified (the
    /// renderer draws the next frame into it). Writers that keep frames for their background
    /// threads (PNG) save a copy of every frame on the renderer's thread this way.
    fn write_swap(&mut self, rgba: &mut Vec<u8>) -> Result<(), RenderError> {
        self.write(rgba)
    }

    /// Completes the output (waits for queued frames, writes the GIF trailer, lets ffmpeg
    /// finish), puts it in place of any earlier output, and returns a one-line summary such as
    /// `"240 PNG frames in out/ (frame_000001.png … frame_000240.png, 85.2 MB)"` or `"out.gif,
    /// 120 frames, 2.1 MB"`. With no frames written it writes nothing, leaves an earlier output
    /// as it was, and returns `None`.
    fn finish(self: Box<Self>) -> Result<Option<String>, RenderError>;

    /// The number of frames accepted by [`FrameWriter::write`] so far. For a GIF this counts the
    /// frames skipped to stay at 50 frames per second or below; every accepted frame is on disk
    /// once `finish` has returned `Ok`.
    fn frames_written(&self) -> u64;
}

/// Opens a writer of the given kind.
///
/// Nothing at the output's place changes until [`FrameWriter::finish`]: frames are written
/// under temporary names (in a hidden directory, or a hidden `.part` file, beside the output)
/// and moved into place when the output is complete. An error, or a writer dropped without
/// `finish`, removes them and leaves an earlier output as it was.
///
/// - [`OutputKind::PngSequence`]: creates the directory (and its parents), or takes an empty
///   one or an earlier render's (marked by its [`RENDER_MARKER`], which lists the files that
///   render wrote); any other directory is refused ([`UsageError::NotARender`]), and so is a
///   render's holding a file named as a frame it did not write. When finished, it replaces the
///   earlier render's frames, removes those past its own (a shorter re-render leaves no old
///   frames behind) and marks the directory; no other file is touched. A generated audio file
///   goes next to the frames, but a different file already there under its name that no
///   render wrote is never overwritten: [`RenderError::Usage`] names it.
/// - [`OutputKind::Gif`]: every frame gets its own palette of up to 256 colours. GIF delays are whole
///   hundredths of a second, and browsers show delays under 2/100 s as 10/100 s, so above 50 fps
///   only the first frame in each 2/100 s slot is kept (at 60 fps, 5 of every 6 frames) and the
///   GIF plays at 50 fps; at 50 fps and below every frame is kept and the rounding of the delays
///   is carried over from frame to frame so the long-run rate is exact (30 fps: 3, 4, 3, 3, 4, …).
/// - [`OutputKind::Video`]: runs ffmpeg, muxing in `opts.audio` if given.
///
/// # Errors
/// [`RenderError::Usage`] for a zero size or frame rate, a size a GIF cannot hold, or an odd
/// width or height for a video (yuv420p needs even sizes); [`RenderError::Output`] if the output
/// cannot be created; [`RenderError::Input`] if the audio file for a video does not exist;
/// [`RenderError::FfmpegMissing`] or [`RenderError::FfmpegStart`] if ffmpeg is missing or
/// cannot be started.
pub fn open(kind: &OutputKind, opts: &OutputOptions) -> Result<Box<dyn FrameWriter>, RenderError> {
    if opts.width == 0 || opts.height == 0 {
        return Err(UsageError::EmptySize {
            width: opts.width,
            height: opts.height,
        }
        .into());
    }
    if opts.fps == 0 {
        return Err(UsageError::ZeroFrameRate.into());
    }
    let too_large = || {
        RenderError::from(UsageError::SizeTooLarge {
            width: opts.width,
            height: opts.height,
        })
    };
    (opts.width as usize)
        .checked_mul(opts.height as usize)
        .and_then(|pixels| pixels.checked_mul(4))
        .ok_or_else(too_large)?;
    // A file output that is a symbolic link is written where the link points (the link
    // stays): see [`through_links`].
    let through = OutputOptions {
        path: through_links(&opts.path)?,
        ..opts.clone()
    };
    match kind {
        OutputKind::PngSequence => Ok(Box::new(PngWriter::open(opts)?)),
        OutputKind::Gif => Ok(Box::new(GifWriter::open(&through)?)),
        OutputKind::Video { container } => Ok(Box::new(VideoWriter::open(&through, container)?)),
    }
}

/// Whether ffmpeg is on PATH (runs `ffmpeg -version`, killed if it has not answered within
/// [`ENCODER_PATIENCE`]).
pub fn ffmpeg_available() -> bool {
    let mut command = Command::new("ffmpeg");
    command
        .arg("-version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    video::in_a_group_of_its_own(&mut command);
    let Ok(mut child) = command.spawn() else {
        return false;
    };
    let deadline = Instant::now() + ENCODER_PATIENCE;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status.success(),
            Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(10)),
            _ => {
                video::kill_tree(&mut child);
                let _ = child.wait();
                return false;
            }
        }
    }
}

/// The ffmpeg command line that turns the PNG sequence in `dir` (rendered at `fps`) into an mp4
/// next to it (`out/` → `out.mp4`), with `audio` muxed in if given. Paths are quoted for a POSIX
/// shell where needed.
pub fn ffmpeg_command_hint(dir: &Path, fps: u32, audio: Option<&Path>) -> String {
    let video = match dir.file_name() {
        Some(name) => {
            let mut name = name.to_os_string();
            name.push(".mp4");
            dir.with_file_name(name)
        }
        None => dir.join("render.mp4"),
    };
    let mut command = format!(
        "ffmpeg -framerate {fps} -start_number 1 -i {}",
        shell_quote(&dir.join("frame_%06d.png"))
    );
    if let Some(audio) = audio {
        command.push_str(&format!(" -i {}", shell_quote(audio)));
    }
    command.push_str(" -c:v libx264 -pix_fmt yuv420p -crf 18");
    if audio.is_some() {
        // Silence after the audio's end, so the video keeps its length.
        command.push_str(" -c:a aac -b:a 192k -af apad -shortest");
    }
    command.push_str(&format!(" {}", shell_quote(&video)));
    command
}

/// Quotes a path for a POSIX shell if it holds anything but plainly safe characters.
fn shell_quote(path: &Path) -> String {
    let text = path.to_string_lossy();
    let safe = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./%:=+,@".contains(c));
    if safe {
        text.into_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

// ------------------------------------------------------------------------------------------
// Shared machinery

/// Frames handed to the encoder threads and not finished yet (queued, being encoded, or being
/// written) before `write` waits: this bounds the memory a render takes when the disk or the
/// encoders are slower than the simulation, and a slow disk holds the render back instead.
const FRAMES_IN_FLIGHT: usize = 6;
/// Encoded GIF frames waiting for the file-writing thread before the encoders wait.
const QUEUE_FRAMES: usize = 4;

/// The first error from a background thread, kept until the writer reports it.
#[derive(Default)]
struct Failure(Mutex<Option<(PathBuf, String)>>);

impl Failure {
    /// Records an error unless one is already recorded.
    fn set(&self, path: &Path, problem: impl Into<String>) {
        let mut slot = self.0.lock();
        if slot.is_none() {
            *slot = Some((path.to_owned(), problem.into()));
        }
    }

    fn is_set(&self) -> bool {
        self.0.lock().is_some()
    }

    fn error(&self) -> Option<RenderError> {
        self.0
            .lock()
            .as_ref()
            .map(|(path, problem)| RenderError::output(path, problem.clone()))
    }
}

/// Encoder threads of their own (apart from the simulation's pool), each with its own scratch
/// state `S`, taking jobs in order from one queue, and the frame buffers the jobs work on. At
/// most [`FRAMES_IN_FLIGHT`] buffers are out at a time, and a job gives its buffer back as the
/// very last thing it does, also when it panics, so [`Encoders::wait`] returning means every
/// job has ended. Dropping it waits too, then ends the threads.
///
/// Plain threads that block on the queue, not a rayon pool: an idle rayon worker spins and
/// yields for a while before it sleeps, and on a machine with as many solver threads as cores
/// those spins took the cores the solver's own threads were waiting for (see
/// `docs/src/internals/perf-render.md`).
struct Encoders<S> {
    /// The queue of jobs; `None` once the threads are told to end.
    jobs: Option<Sender<Job<S>>>,
    threads: Vec<JoinHandle<()>>,
    /// The frame buffers: at most [`frames_in_flight`] out with the jobs.
    buffers: BufferPool,
    /// The sender the jobs give their buffers back with.
    recycle: Sender<Vec<u8>>,
    /// Set when a job panicked past its own handling.
    panicked: Arc<AtomicBool>,
}

/// Lower the calling thread's priority to the least (nice 19, Linux): an encoder thread then
/// runs on the time the simulation's threads leave (their waits at barriers and between
/// frames) instead of taking turns with them, which kept the solver's threads waiting for each
/// other (2026-11-28, see `docs/src/internals/perf-render.md`). Elsewhere a no-op.
pub(super) fn yield_to_the_simulation() {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority on the calling thread (who 0 is the calling thread under Linux's
    // threads); a refusal leaves the priority as it was.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, 19);
    }
}

/// A job for an encoder thread: runs with that thread's scratch state.
type Job<S> = Box<dyn FnOnce(&mut S) + Send>;

/// Frame buffers lent to a background thread, which gives them back through a channel: at
/// most `most` out at a time. The PNG and GIF encoders' and the video feeder's.
pub(super) struct BufferPool {
    free: Receiver<Vec<u8>>,
    /// Buffers lent and not taken back from `free` yet.
    lent: usize,
    most: usize,
}

impl BufferPool {
    /// A pool of at most `most` lent buffers, which come back through `free`.
    pub(super) fn new(free: Receiver<Vec<u8>>, most: usize) -> Self {
        Self {
            free,
            lent: 0,
            most,
        }
    }

    /// A buffer for the next frame: one given back when there is one, a new (empty) one while
    /// fewer than `most` are out, else the next one given back (waiting for it). `None` when
    /// it would wait for one that can no longer come back (every sender gone).
    pub(super) fn take(&mut self) -> Option<Vec<u8>> {
        loop {
            match self.take_within(Duration::from_secs(3600)) {
                Taken::Buffer(buffer) => return Some(buffer),
                Taken::Gone => return None,
                Taken::Later => {}
            }
        }
    }

    /// [`BufferPool::take`], waiting at most `wait` for a buffer to come back.
    pub(super) fn take_within(&mut self, wait: Duration) -> Taken {
        let back = if self.lent >= self.most {
            match self.free.recv_timeout(wait) {
                Ok(buffer) => Some(buffer),
                Err(mpsc::RecvTimeoutError::Timeout) => return Taken::Later,
                Err(mpsc::RecvTimeoutError::Disconnected) => return Taken::Gone,
            }
        } else {
            self.free.try_recv().ok()
        };
        if back.is_some() {
            self.lent -= 1;
        }
        Taken::Buffer(back.unwrap_or_default())
    }

    /// One more buffer is lent.
    pub(super) fn lend(&mut self) {
        self.lent += 1;
    }

    /// Wait until every lent buffer is back (or can no longer come back).
    fn wait(&mut self) {
        while self.lent > 0 && self.free.recv().is_ok() {
            self.lent -= 1;
        }
    }
}

/// What [`BufferPool::take_within`] got.
pub(super) enum Taken {
    /// A buffer for the next frame.
    Buffer(Vec<u8>),
    /// None came back in time.
    Later,
    /// None can come back (every sender gone).
    Gone,
}

/// A frame buffer lent to a job: given back when dropped, whatever way the job ends.
struct Lent {
    rgba: Vec<u8>,
    recycle: Sender<Vec<u8>>,
}

impl Drop for Lent {
    fn drop(&mut self) {
        let _ = self.recycle.send(std::mem::take(&mut self.rgba));
    }
}

/// The PNG encoder threads for a render on `cores` cores whose simulation keeps `busy` threads
/// busy (the CPU solver's threads, or 1 for the thread that drives a GPU): the cores it leaves,
/// at least one. They block while idle. On two cores with a CPU solver of two threads one
/// encoder keeps up (a 720p frame takes it about 7 ms); a second one encoding beside it only
/// took turns on the cores with the solver's threads, which then waited for each other at
/// their barriers (2026-11-28: 4 % slower).
pub fn encoder_threads(cores: usize, busy: usize) -> usize {
    cores.saturating_sub(busy).max(1)
}

/// Frames out with the encoders before the renderer waits, for `threads` encoder threads: one
/// being encoded by each, and [`FRAMES_IN_FLIGHT`] at least.
fn frames_in_flight(threads: usize) -> usize {
    (threads + 2).max(FRAMES_IN_FLIGHT)
}

impl<S: Default + Send + 'static> Encoders<S> {
    /// Starts `threads` encoder threads (0: [`DEFAULT_ENCODER_THREADS`]) named `name-0`,
    /// `name-1`, …
    fn new(name: &'static str, threads: usize) -> io::Result<Self> {
        let threads = if threads == 0 {
            DEFAULT_ENCODER_THREADS
        } else {
            threads
        };
        let (jobs, queue) = mpsc::channel::<Job<S>>();
        let queue = Arc::new(Mutex::new(queue));
        let panicked = Arc::new(AtomicBool::new(false));
        let mut started = Vec::new();
        for index in 0..threads {
            let queue = Arc::clone(&queue);
            let panicked = Arc::clone(&panicked);
            let thread = thread::Builder::new()
                .name(format!("{name}-{index}"))
                .spawn(move || {
                    yield_to_the_simulation();
                    let mut state = S::default();
                    loop {
                        // The lock is held only while waiting for the next job, so jobs start
                        // in order and run side by side.
                        let job = queue.lock().recv();
                        let Ok(job) = job else { break };
                        if panic::catch_unwind(AssertUnwindSafe(|| job(&mut state))).is_err() {
                            state = S::default();
                            panicked.store(true, Ordering::Relaxed);
                        }
                    }
                });
            match thread {
                Ok(thread) => started.push(thread),
                Err(e) => {
                    // End the threads started so far before reporting.
                    drop(jobs);
                    for thread in started {
                        let _ = thread.join();
                    }
                    return Err(e);
                }
            }
        }
        let (recycle, free) = mpsc::channel();
        Ok(Self {
            jobs: Some(jobs),
            threads: started,
            buffers: BufferPool::new(free, frames_in_flight(threads)),
            recycle,
            panicked,
        })
    }

    /// A buffer for the next frame: a used one when there is one, and waits for one while
    /// [`frames_in_flight`] are out.
    fn buffer(&mut self) -> Vec<u8> {
        // Never `None`: `self.recycle` keeps the channel open.
        self.buffers.take().unwrap_or_default()
    }

    /// Runs `job` on an encoder thread with that thread's scratch state and the frame in `rgba`
    /// (from [`Encoders::buffer`]); jobs start in the order of the calls. A panic in `job` resets
    /// the scratch state and makes [`Encoders::wait`] return false.
    fn spawn(&mut self, rgba: Vec<u8>, job: impl FnOnce(&mut S, &[u8]) + Send + 'static) {
        let lent = Lent {
            rgba,
            recycle: self.recycle.clone(),
        };
        self.buffers.lend();
        let panicked = Arc::clone(&self.panicked);
        let job: Job<S> = Box::new(move |state| {
            let lent = lent;
            // Say so before the buffer goes back: `wait` returns once every buffer is back.
            if let Err(panic) = panic::catch_unwind(AssertUnwindSafe(|| job(state, &lent.rgba))) {
                panicked.store(true, Ordering::Relaxed);
                panic::resume_unwind(panic);
            }
        });
        let sent = self.jobs.as_ref().map(|jobs| jobs.send(job));
        if !matches!(sent, Some(Ok(()))) {
            // No thread to run it (they all ended): the job, and its buffer, came back
            // dropped; count it as failed.
            self.panicked.store(true, Ordering::Relaxed);
        }
    }
}

impl<S> Encoders<S> {
    /// Waits until every job has ended. Returns false if one of them panicked.
    fn wait(&mut self) -> bool {
        self.buffers.wait();
        !self.panicked.load(Ordering::Relaxed)
    }
}

impl<S> Drop for Encoders<S> {
    fn drop(&mut self) {
        self.wait();
        self.jobs = None;
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

/// Checks a frame's length.
fn check_frame(path: &Path, rgba: &[u8], width: u32, height: u32) -> Result<(), RenderError> {
    let expected = width as usize * height as usize * 4;
    if rgba.len() == expected {
        Ok(())
    } else {
        Err(RenderError::output(
            path,
            format!(
                "a frame of {} bytes was passed, but {width}x{height} RGBA takes {expected}",
                rgba.len()
            ),
        ))
    }
}

/// A byte count for people: "850 bytes", "12.3 kB", "2.1 MB", "1.4 GB".
fn human_size(bytes: u64) -> String {
    let b = bytes as f64;
    if bytes < 1000 {
        format!("{bytes} bytes")
    } else if b < 1e6 {
        format!("{:.1} kB", b / 1e3)
    } else if b < 1e9 {
        format!("{:.1} MB", b / 1e6)
    } else {
        format!("{:.1} GB", b / 1e9)
    }
}

/// The size of a file, or 0 if it cannot be read.
fn file_size(path: &Path) -> u64 {
    fs::metadata(path).map_or(0, |m| m.len())
}

/// A directory for display, ending in a separator.
fn dir_display(dir: &Path) -> String {
    let text = dir.display().to_string();
    if text.ends_with('/') || text.ends_with(std::path::MAIN_SEPARATOR) {
        text
    } else {
        format!("{text}{}", std::path::MAIN_SEPARATOR)
    }
}
