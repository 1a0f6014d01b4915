//! Where rendered frames go: a directory of PNG frames, an animated GIF, or an mp4/webm video
//! encoded by ffmpeg.
//!
//! The renderer hands RGBA8 frames (top row first, `width * height * 4` bytes, alpha 255) to a
//! [`FrameWriter`] in order, then calls [`FrameWriter::finish`], also after Ctrl-C, so that what
//! was rendered so far ends up as a complete file.
//!
//! PNG and GIF encoding runs on background threads behind a bounded queue, so the simulation is
//! not held up by compression; errors from those threads (disk full, permissions) come back from
//! the next `write` or from `finish`. Files are written under a `.part` name and renamed when
//! complete, so an interrupted render never leaves a half-written file under the final name.

use std::collections::BTreeMap;
use std::collections::VecDeque;
use std::fs::{self, File};
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::RenderError;

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
/// [`RenderError::Usage`] for an empty path or any other extension.
pub fn kind_for(path: &Path) -> Result<OutputKind, RenderError> {
    let text = path.as_os_str().to_string_lossy();
    if text.is_empty() {
        return Err(RenderError::Usage("the output path is empty".into()));
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
        _ => Err(RenderError::Usage(format!(
            "{}: unknown output type '.{extension}'; use a directory (PNG frames), .gif, .mp4 or \
             .webm",
            path.display()
        ))),
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
    /// WAV to mux into a video (ignored otherwise).
    pub audio: Option<PathBuf>,
    /// Seconds into the audio where the video starts (for muxing; negative delays the audio).
    pub audio_start_s: f64,
}

/// A frame sink.
pub trait FrameWriter: Send {
    /// Takes the next frame: RGBA8, top row first, exactly `width * height * 4` bytes. Returns
    /// once the frame is queued (PNG, GIF) or handed to ffmpeg (video); an error from an earlier
    /// frame's background encoding is returned here.
    fn write(&mut self, rgba: &[u8]) -> Result<(), RenderError>;

    /// Completes the output (waits for queued frames, writes the GIF trailer, lets ffmpeg
    /// finish) and returns a one-line summary such as `"240 PNG frames in out/ (frame_000001.png
    /// … frame_000240.png, 85.2 MB)"` or `"out.gif, 120 frames, 2.1 MB"`.
    fn finish(self: Box<Self>) -> Result<String, RenderError>;

    /// The number of frames accepted by [`FrameWriter::write`] so far. For a GIF this counts the
    /// frames skipped to stay at 50 frames per second or below; every accepted frame is on disk
    /// once `finish` has returned `Ok`.
    fn frames_written(&self) -> u64;
}

/// Opens a writer of the given kind.
///
/// - [`OutputKind::PngSequence`]: creates the directory (and its parents) and removes stale
///   `frame_<digits>.png` (and `.png.part`) files from an earlier render, so a shorter re-render
///   leaves no old frames behind; other files are left alone.
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
/// [`RenderError::Tool`] if ffmpeg is missing or cannot be started.
pub fn open(kind: &OutputKind, opts: &OutputOptions) -> Result<Box<dyn FrameWriter>, RenderError> {
    if opts.width == 0 || opts.height == 0 {
        return Err(RenderError::Usage(format!(
            "the output size {}x{} is empty",
            opts.width, opts.height
        )));
    }
    if opts.fps == 0 {
        return Err(RenderError::Usage(
            "the frame rate must be at least 1 frame per second".into(),
        ));
    }
    let too_large = || {
        RenderError::Usage(format!(
            "the output size {}x{} is too large",
            opts.width, opts.height
        ))
    };
    (opts.width as usize)
        .checked_mul(opts.height as usize)
        .and_then(|pixels| pixels.checked_mul(4))
        .ok_or_else(too_large)?;
    match kind {
        OutputKind::PngSequence => Ok(Box::new(PngWriter::open(opts)?)),
        OutputKind::Gif => Ok(Box::new(GifWriter::open(opts)?)),
        OutputKind::Video { container } => Ok(Box::new(VideoWriter::open(opts, container)?)),
    }
}

/// Whether ffmpeg is on PATH (runs `ffmpeg -version`).
pub fn ffmpeg_available() -> bool {
    Command::new("ffmpeg")
        .arg("-version")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
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
        command.push_str(" -c:a aac -b:a 192k -shortest");
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

/// A few worker threads fed through a bounded queue. Dropping it closes the queue and waits for
/// the workers to finish what was queued.
struct Pool<J> {
    queue: Option<SyncSender<J>>,
    threads: Vec<JoinHandle<()>>,
}

impl<J: Send + 'static> Pool<J> {
    /// Starts `threads` workers, each with its own `S::default()` scratch state, taking jobs
    /// from a queue that holds at most `capacity` jobs.
    fn spawn<S, F>(name: &str, threads: usize, capacity: usize, work: F) -> io::Result<Self>
    where
        S: Default + 'static,
        F: Fn(&mut S, J) + Send + Sync + 'static,
    {
        let (queue, jobs) = mpsc::sync_channel::<J>(capacity);
        let jobs = Arc::new(Mutex::new(jobs));
        let work = Arc::new(work);
        let mut pool = Pool {
            queue: Some(queue),
            threads: Vec::with_capacity(threads),
        };
        for index in 0..threads {
            let jobs = Arc::clone(&jobs);
            let work = Arc::clone(&work);
            let thread = thread::Builder::new()
                .name(format!("{name}-{index}"))
                .spawn(move || {
                    let mut state = S::default();
                    loop {
                        let job = jobs.lock().recv();
                        match job {
                            Ok(job) => work(&mut state, job),
                            Err(_) => break,
                        }
                    }
                })?;
            pool.threads.push(thread);
        }
        Ok(pool)
    }

    /// Queues a job, waiting while the queue is full. Gives the job back if no worker is left.
    fn send(&self, job: J) -> Result<(), J> {
        match &self.queue {
            Some(queue) => queue.send(job).map_err(|error| error.0),
            None => Err(job),
        }
    }
}

impl<J> Pool<J> {
    /// Closes the queue and waits for the workers. Returns false if one of them panicked.
    fn close(&mut self) -> bool {
        self.queue = None;
        let mut clean = true;
        for thread in self.threads.drain(..) {
            clean &= thread.join().is_ok();
        }
        clean
    }
}

impl<J> Drop for Pool<J> {
    fn drop(&mut self) {
        self.close();
    }
}

/// The path with `.part` appended to its file name.
fn part_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(".part");
    PathBuf::from(name)
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

/// Creates a directory and its parents; errors name `path`, the output.
fn create_dir(dir: &Path, path: &Path) -> Result<(), RenderError> {
    let problem = match dir.ancestors().find(|a| a.exists()) {
        Some(existing) if !existing.is_dir() => {
            if existing == path {
                "exists and is not a directory".to_string()
            } else {
                format!("{} exists and is not a directory", existing.display())
            }
        }
        _ => match fs::create_dir_all(dir) {
            Ok(()) => return Ok(()),
            Err(e) => format!("could not create the directory {}: {e}", dir.display()),
        },
    };
    Err(RenderError::output(path, problem))
}

/// Creates the parent directory of an output file.
fn create_parent(path: &Path) -> Result<(), RenderError> {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => create_dir(parent, path),
        _ => Ok(()),
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

// ------------------------------------------------------------------------------------------
// PNG sequence

/// Encoder threads for PNG frames. Two keep up with a 60 fps 720p render on most machines
/// (see the `encode_speed` benchmark) without taking many cores from the simulation.
const PNG_THREADS: usize = 2;
/// Frames queued for the encoders before `write` waits.
const QUEUE_FRAMES: usize = 4;
/// The PNG row filter. With fdeflate (`Compression::Fast`), choosing the filter per row costs
/// about 1.5 ms more per 720p frame than `Up` or `Sub` alone and gives the smallest files (on
/// smooth frames 20% smaller than `Up`); `NoFilter` is faster still but more than twice the size.
/// See the `encode_speed` benchmark.
const PNG_FILTER: png::Filter = png::Filter::Adaptive;

/// The file name of frame `index` (1-based).
fn frame_name(index: u64) -> String {
    format!("frame_{index:06}.png")
}

/// Whether a file name is a frame (or a frame's `.part`) this writer would produce:
/// `frame_` + digits + `.png` or `.png.part`.
fn is_frame_file(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("frame_") else {
        return false;
    };
    let Some(digits) = rest
        .strip_suffix(".png")
        .or_else(|| rest.strip_suffix(".png.part"))
    else {
        return false;
    };
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Encodes one RGBA frame as an RGB PNG into `out`.
fn encode_png(
    rgba: &[u8],
    width: u32,
    height: u32,
    filter: png::Filter,
    rgb: &mut Vec<u8>,
    out: &mut Vec<u8>,
) -> Result<(), png::EncodingError> {
    rgb.clear();
    rgb.reserve(rgba.len() / 4 * 3);
    for pixel in rgba.chunks_exact(4) {
        rgb.extend_from_slice(&pixel[..3]);
    }
    out.clear();
    let mut encoder = png::Encoder::new(&mut *out, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::Fast);
    encoder.set_filter(filter);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(rgb)?;
    writer.finish()
}

/// A frame for an encoder thread.
struct PngJob {
    index: u64,
    rgba: Vec<u8>,
}

/// Per-thread buffers of a PNG encoder thread.
#[derive(Default)]
struct PngScratch {
    rgb: Vec<u8>,
    png: Vec<u8>,
}

/// State shared with the PNG encoder threads.
#[derive(Default)]
struct PngShared {
    failure: Failure,
    frames_on_disk: AtomicU64,
    bytes: AtomicU64,
}

/// Writes `frame_000001.png`, … into a directory.
struct PngWriter {
    dir: PathBuf,
    width: u32,
    height: u32,
    frames: u64,
    pool: Option<Pool<PngJob>>,
    free: Receiver<Vec<u8>>,
    shared: Arc<PngShared>,
}

impl PngWriter {
    fn open(opts: &OutputOptions) -> Result<Self, RenderError> {
        let dir = opts.path.clone();
        create_dir(&dir, &dir)?;
        remove_stale_frames(&dir)?;

        let shared = Arc::new(PngShared::default());
        let (recycle, free) = mpsc::channel::<Vec<u8>>();
        let (width, height) = (opts.width, opts.height);
        let worker_shared = Arc::clone(&shared);
        let worker_dir = dir.clone();
        let work = move |scratch: &mut PngScratch, job: PngJob| {
            png_job(
                &worker_dir,
                width,
                height,
                &worker_shared,
                &recycle,
                scratch,
                job,
            );
        };
        let pool = Pool::spawn("dyeflow-png", PNG_THREADS, QUEUE_FRAMES, work).map_err(|e| {
            RenderError::output(&dir, format!("could not start the encoder threads: {e}"))
        })?;
        Ok(Self {
            dir,
            width,
            height,
            frames: 0,
            pool: Some(pool),
            free,
            shared,
        })
    }

    /// The error to report when the encoder threads are gone.
    fn stopped_error(&self) -> RenderError {
        self.shared.failure.error().unwrap_or_else(|| {
            RenderError::output(&self.dir, "the PNG encoder threads stopped unexpectedly")
        })
    }
}

/// Removes `frame_<digits>.png` and `.png.part` files left by an earlier render.
fn remove_stale_frames(dir: &Path) -> Result<(), RenderError> {
    let entries = fs::read_dir(dir)
        .map_err(|e| RenderError::output(dir, format!("could not list the directory: {e}")))?;
    for entry in entries {
        let entry = entry
            .map_err(|e| RenderError::output(dir, format!("could not list the directory: {e}")))?;
        let name = entry.file_name();
        let is_file = entry.file_type().is_ok_and(|t| t.is_file());
        if is_file && name.to_str().is_some_and(is_frame_file) {
            let path = entry.path();
            fs::remove_file(&path).map_err(|e| {
                RenderError::output(
                    &path,
                    format!("could not remove this frame of an earlier render: {e}"),
                )
            })?;
        }
    }
    Ok(())
}

/// Encodes and writes one PNG frame on an encoder thread.
fn png_job(
    dir: &Path,
    width: u32,
    height: u32,
    shared: &PngShared,
    recycle: &Sender<Vec<u8>>,
    scratch: &mut PngScratch,
    job: PngJob,
) {
    let path = dir.join(frame_name(job.index));
    if shared.failure.is_set() {
        let _ = recycle.send(job.rgba);
        return;
    }
    let encoded = panic::catch_unwind(AssertUnwindSafe(|| {
        encode_png(
            &job.rgba,
            width,
            height,
            PNG_FILTER,
            &mut scratch.rgb,
            &mut scratch.png,
        )
    }));
    let _ = recycle.send(job.rgba);
    match encoded {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            shared
                .failure
                .set(&path, format!("could not encode the frame: {e}"));
            return;
        }
        Err(_) => {
            *scratch = PngScratch::default();
            shared
                .failure
                .set(&path, "the PNG encoder failed (out of memory?)");
            return;
        }
    }
    let part = part_path(&path);
    match fs::write(&part, &scratch.png).and_then(|()| fs::rename(&part, &path)) {
        Ok(()) => {
            shared
                .bytes
                .fetch_add(scratch.png.len() as u64, Ordering::Relaxed);
            shared.frames_on_disk.fetch_add(1, Ordering::Relaxed);
        }
        Err(e) => {
            let _ = fs::remove_file(&part);
            shared
                .failure
                .set(&path, format!("could not write the frame: {e}"));
        }
    }
}

impl FrameWriter for PngWriter {
    fn write(&mut self, rgba: &[u8]) -> Result<(), RenderError> {
        check_frame(&self.dir, rgba, self.width, self.height)?;
        if let Some(error) = self.shared.failure.error() {
            return Err(error);
        }
        let Some(pool) = &self.pool else {
            return Err(self.stopped_error());
        };
        let mut buffer = self.free.try_recv().unwrap_or_default();
        buffer.clear();
        buffer.extend_from_slice(rgba);
        let job = PngJob {
            index: self.frames + 1,
            rgba: buffer,
        };
        if pool.send(job).is_err() {
            return Err(self.stopped_error());
        }
        self.frames += 1;
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<String, RenderError> {
        let clean = self.pool.take().is_none_or(|mut pool| pool.close());
        if let Some(error) = self.shared.failure.error() {
            return Err(error);
        }
        let on_disk = self.shared.frames_on_disk.load(Ordering::Relaxed);
        if !clean || on_disk != self.frames {
            return Err(RenderError::output(
                &self.dir,
                format!(
                    "only {on_disk} of {} frames were written: an encoder thread stopped",
                    self.frames
                ),
            ));
        }
        let dir = dir_display(&self.dir);
        let bytes = human_size(self.shared.bytes.load(Ordering::Relaxed));
        Ok(match self.frames {
            0 => format!("0 PNG frames in {dir}"),
            1 => format!("1 PNG frame in {dir} ({}, {bytes})", frame_name(1)),
            n => format!(
                "{n} PNG frames in {dir} ({} … {}, {bytes})",
                frame_name(1),
                frame_name(n)
            ),
        })
    }

    fn frames_written(&self) -> u64 {
        self.frames
    }
}

// ------------------------------------------------------------------------------------------
// GIF

/// Quantising threads for GIF frames (they are written in order by one more thread).
const GIF_THREADS: usize = 2;
/// The fastest frame rate a GIF plays at reliably.
const GIF_MAX_FPS: u32 = 50;

/// The GIF delay (hundredths of a second) of input frame `index` (0-based) at `fps`, or `None`
/// if the frame is skipped. At 50 fps and below every frame is kept, and the delays are the
/// differences of the rounded frame times, so their sum never drifts. Above 50 fps, a frame is
/// kept only if it is the first one in its 2/100 s slot, and every kept frame shows for 2/100 s.
fn gif_delay(index: u64, fps: u32) -> Option<u16> {
    let fps = u64::from(fps.max(1));
    if fps <= u64::from(GIF_MAX_FPS) {
        // Frame time in hundredths, rounded half up.
        let centis = |n: u64| (200 * n + fps) / (2 * fps);
        Some((centis(index + 1) - centis(index)) as u16)
    } else {
        let slot = |n: u64| n * u64::from(GIF_MAX_FPS) / fps;
        (index == 0 || slot(index) != slot(index - 1)).then_some(2)
    }
}

/// Quantises and LZW-compresses one frame into a GIF frame with its own palette.
fn quantise_gif(
    quantiser: &mut Quantiser,
    rgba: &[u8],
    width: u16,
    height: u16,
    delay: u16,
) -> gif::Frame<'static> {
    let mut indices = Vec::new();
    let palette = quantiser.quantise(rgba, &mut indices);
    let mut frame = gif::Frame::from_palette_pixels(width, height, indices, palette, None);
    frame.delay = delay;
    frame.make_lzw_pre_encoded();
    frame
}

/// Bits per channel of the colour histogram the palette is built from.
const HISTOGRAM_BITS: u32 = 5;
/// Bits per channel of the cache of nearest palette entries.
const NEAREST_BITS: u32 = 6;
/// An empty slot of the nearest-entry cache.
const UNKNOWN: u16 = u16::MAX;
/// Slots of the exact-colour table (twice the most colours it holds).
const EXACT_SLOTS: usize = 512;
/// An empty slot of the exact-colour table (no RGB colour packs to it).
const NO_COLOUR: u32 = u32::MAX;

/// The histogram (or cache) bin of a pixel, keeping the top `bits` of each channel.
fn colour_bin(pixel: &[u8], bits: u32) -> usize {
    let shift = 8 - bits;
    (usize::from(pixel[0] >> shift) << (2 * bits))
        | (usize::from(pixel[1] >> shift) << bits)
        | usize::from(pixel[2] >> shift)
}

/// A histogram bin: the mean colour of its pixels and how many there are.
#[derive(Clone, Copy)]
struct BinColour {
    colour: [f32; 3],
    weight: f32,
}

/// A box of median cut: a range of bins, and the variance along its widest axis.
struct ColourBox {
    start: usize,
    end: usize,
    /// The weighted sum of squared deviations along `axis` (0 for a single bin).
    spread: f64,
    axis: usize,
}

impl ColourBox {
    fn new(bins: &[BinColour], start: usize, end: usize) -> Self {
        let slice = &bins[start..end];
        let (mut spread, mut axis) = (0.0, 0);
        if slice.len() >= 2 {
            let weight: f64 = slice.iter().map(|b| f64::from(b.weight)).sum();
            for a in 0..3 {
                let mean = slice
                    .iter()
                    .map(|b| f64::from(b.colour[a]) * f64::from(b.weight))
                    .sum::<f64>()
                    / weight;
                let sum: f64 = slice
                    .iter()
                    .map(|b| (f64::from(b.colour[a]) - mean).powi(2) * f64::from(b.weight))
                    .sum();
                if sum > spread {
                    (spread, axis) = (sum, a);
                }
            }
        }
        Self {
            start,
            end,
            spread,
            axis,
        }
    }
}

/// Adds a bin to a running sum of (r, g, b) times weight, and weight.
fn add_weighted(sum: &mut [f64; 4], bin: &BinColour) {
    let weight = f64::from(bin.weight);
    for (s, c) in sum.iter_mut().zip(bin.colour) {
        *s += f64::from(c) * weight;
    }
    sum[3] += weight;
}

/// The weighted mean colour of some bins.
fn mean_colour(bins: &[BinColour]) -> [f32; 3] {
    let mut sum = [0.0f64; 4];
    for bin in bins {
        add_weighted(&mut sum, bin);
    }
    [0, 1, 2].map(|a| (sum[a] / sum[3].max(f64::MIN_POSITIVE)) as f32)
}

/// A palette as RGB bytes.
fn palette_bytes(palette: &[[f32; 3]]) -> Vec<u8> {
    palette
        .iter()
        .flat_map(|c| c.map(|v| v.round().clamp(0.0, 255.0) as u8))
        .collect()
}

/// Reduces a frame to at most 256 colours: the frame's own colours if it has no more, otherwise
/// median cut over a 15-bit histogram refined by one round of k-means, with each pixel mapped
/// to the palette entry nearest its 18-bit bin. This is about 20 times faster than the `gif`
/// crate's NeuQuant at speed 10 and about as close (see the `encode_speed` benchmark). One per
/// quantising thread, reused from frame to frame.
#[derive(Default)]
struct Quantiser {
    histogram: Vec<[u32; 4]>,
    bins: Vec<BinColour>,
    boxes: Vec<ColourBox>,
    /// Palette entries as (g, r, b, index), sorted by green.
    by_green: Vec<[i32; 4]>,
    /// The nearest palette entry of each 18-bit bin, or `UNKNOWN`.
    nearest: Vec<u16>,
    /// Open addressing table of packed RGB colours for frames with at most 256 colours.
    exact_keys: Vec<u32>,
    exact_indices: Vec<u8>,
    exact_palette: Vec<u8>,
}

impl Quantiser {
    /// Returns the palette (RGB triples, at most 256) and sets `indices` to one entry per pixel.
    fn quantise(&mut self, rgba: &[u8], indices: &mut Vec<u8>) -> Vec<u8> {
        indices.clear();
        indices.reserve(rgba.len() / 4);
        if self.exact(rgba, indices) {
            return self.exact_palette.clone();
        }
        indices.clear();
        let palette = self.palette(rgba);
        self.set_palette(&palette);
        self.nearest.clear();
        self.nearest.resize(1 << (3 * NEAREST_BITS), UNKNOWN);
        // Search from the centre of each cache bin.
        let half = 1u8 << (7 - NEAREST_BITS);
        let centre = |v: u8| i32::from((v & !(2 * half - 1)) | half);
        for pixel in rgba.chunks_exact(4) {
            let bin = colour_bin(pixel, NEAREST_BITS);
            let mut index = self.nearest[bin];
            if index == UNKNOWN {
                index = u16::from(self.nearest_entry(
                    centre(pixel[0]),
                    centre(pixel[1]),
                    centre(pixel[2]),
                ));
                self.nearest[bin] = index;
            }
            indices.push(index as u8);
        }
        palette
    }

    /// Indexes the frame with its own colours into `exact_palette`, if it has at most 256.
    fn exact(&mut self, rgba: &[u8], indices: &mut Vec<u8>) -> bool {
        self.exact_keys.clear();
        self.exact_keys.resize(EXACT_SLOTS, NO_COLOUR);
        self.exact_indices.clear();
        self.exact_indices.resize(EXACT_SLOTS, 0);
        self.exact_palette.clear();
        let mut last = (NO_COLOUR, 0u8);
        for pixel in rgba.chunks_exact(4) {
            let key = u32::from_le_bytes([pixel[0], pixel[1], pixel[2], 0]);
            if key != last.0 {
                let mut slot = (key.wrapping_mul(0x9e37_79b1) >> 23) as usize % EXACT_SLOTS;
                while self.exact_keys[slot] != key && self.exact_keys[slot] != NO_COLOUR {
                    slot = (slot + 1) % EXACT_SLOTS;
                }
                if self.exact_keys[slot] == NO_COLOUR {
                    let count = self.exact_palette.len() / 3;
                    if count == 256 {
                        return false;
                    }
                    self.exact_keys[slot] = key;
                    self.exact_indices[slot] = count as u8;
                    self.exact_palette.extend_from_slice(&pixel[..3]);
                }
                last = (key, self.exact_indices[slot]);
            }
            indices.push(last.1);
        }
        true
    }

    /// Median cut over a histogram, then one round of k-means.
    fn palette(&mut self, rgba: &[u8]) -> Vec<u8> {
        self.histogram.clear();
        self.histogram.resize(1 << (3 * HISTOGRAM_BITS), [0; 4]);
        for pixel in rgba.chunks_exact(4) {
            let bin = &mut self.histogram[colour_bin(pixel, HISTOGRAM_BITS)];
            for a in 0..3 {
                bin[a] += u32::from(pixel[a]);
            }
            bin[3] += 1;
        }
        self.bins.clear();
        self.bins
            .extend(self.histogram.iter().filter(|h| h[3] > 0).map(|h| {
                let count = h[3] as f32;
                BinColour {
                    colour: [0, 1, 2].map(|a| h[a] as f32 / count),
                    weight: count,
                }
            }));

        // Median cut: split the box with the largest spread at the weighted median of its
        // widest axis, until there are 256 boxes or none can be split.
        self.boxes.clear();
        self.boxes
            .push(ColourBox::new(&self.bins, 0, self.bins.len()));
        while self.boxes.len() < 256 {
            let widest = self
                .boxes
                .iter()
                .enumerate()
                .filter(|(_, b)| b.spread > 0.0)
                .max_by(|a, b| a.1.spread.total_cmp(&b.1.spread))
                .map(|(i, _)| i);
            let Some(i) = widest else { break };
            let ColourBox {
                start, end, axis, ..
            } = self.boxes[i];
            let slice = &mut self.bins[start..end];
            slice.sort_unstable_by(|a, b| a.colour[axis].total_cmp(&b.colour[axis]));
            let half = slice.iter().map(|b| f64::from(b.weight)).sum::<f64>() / 2.0;
            let mut cut = slice.len() - 1;
            let mut below = 0.0;
            for (k, bin) in slice.iter().enumerate() {
                below += f64::from(bin.weight);
                if below >= half {
                    cut = (k + 1).min(slice.len() - 1);
                    break;
                }
            }
            self.boxes[i] = ColourBox::new(&self.bins, start, start + cut);
            self.boxes
                .push(ColourBox::new(&self.bins, start + cut, end));
        }
        let mut palette: Vec<[f32; 3]> = self
            .boxes
            .iter()
            .map(|b| mean_colour(&self.bins[b.start..b.end]))
            .collect();

        // One round of k-means: move each entry to the mean of the bins nearest to it.
        self.set_palette(&palette_bytes(&palette));
        let mut sums = vec![[0.0f64; 4]; palette.len()];
        for bin in &self.bins {
            let [r, g, b] = bin.colour.map(|v| v.round() as i32);
            add_weighted(&mut sums[usize::from(self.nearest_entry(r, g, b))], bin);
        }
        for (entry, sum) in palette.iter_mut().zip(&sums) {
            if sum[3] > 0.0 {
                *entry = [0, 1, 2].map(|a| (sum[a] / sum[3]) as f32);
            }
        }
        palette_bytes(&palette)
    }

    /// Prepares `nearest_entry` for a palette.
    fn set_palette(&mut self, palette: &[u8]) {
        self.by_green.clear();
        self.by_green.extend(
            palette
                .chunks_exact(3)
                .enumerate()
                .map(|(i, c)| [i32::from(c[1]), i32::from(c[0]), i32::from(c[2]), i as i32]),
        );
        self.by_green.sort_unstable();
    }

    /// The index of the palette entry nearest to a colour: searches outwards from its green,
    /// stopping in each direction once green alone is farther than the best match.
    fn nearest_entry(&self, r: i32, g: i32, b: i32) -> u8 {
        let entries = &self.by_green;
        let mut up = entries.partition_point(|e| e[0] < g);
        let mut down = up;
        let (mut best, mut best_index) = (i32::MAX, 0);
        let mut consider = |e: &[i32; 4]| {
            let dg = (e[0] - g) * (e[0] - g);
            if dg >= best {
                return false;
            }
            let d = dg + (e[1] - r) * (e[1] - r) + (e[2] - b) * (e[2] - b);
            if d < best {
                (best, best_index) = (d, e[3]);
            }
            true
        };
        loop {
            let mut searching = false;
            if up < entries.len() {
                if consider(&entries[up]) {
                    up += 1;
                    searching = true;
                } else {
                    up = entries.len();
                }
            }
            if down > 0 {
                if consider(&entries[down - 1]) {
                    down -= 1;
                    searching = true;
                } else {
                    down = 0;
                }
            }
            if !searching {
                return best_index as u8;
            }
        }
    }
}

/// A frame for a quantising thread.
struct GifJob {
    seq: u64,
    delay: u16,
    rgba: Vec<u8>,
}

/// A quantised frame for the file-writing thread; `None` if quantising failed.
type GifResult = (u64, Option<gif::Frame<'static>>);

/// Writes an animated GIF through `<path>.part`.
struct GifWriter {
    path: PathBuf,
    part: PathBuf,
    width: u32,
    height: u32,
    fps: u32,
    /// Frames accepted by `write`.
    frames: u64,
    /// Frames queued for the GIF (not skipped).
    kept: u64,
    pool: Option<Pool<GifJob>>,
    file_thread: Option<JoinHandle<u64>>,
    free: Receiver<Vec<u8>>,
    failure: Arc<Failure>,
    finished: bool,
}

impl GifWriter {
    fn open(opts: &OutputOptions) -> Result<Self, RenderError> {
        let path = opts.path.clone();
        let (Ok(w16), Ok(h16)) = (u16::try_from(opts.width), u16::try_from(opts.height)) else {
            return Err(RenderError::Usage(format!(
                "{}: a GIF can be at most 65535x65535 pixels, not {}x{}",
                path.display(),
                opts.width,
                opts.height
            )));
        };
        create_parent(&path)?;
        let part = part_path(&path);
        let file = File::create(&part)
            .map_err(|e| RenderError::output(&path, format!("could not create the file: {e}")))?;
        let header = gif::Encoder::new(BufWriter::new(file), w16, h16, &[]).and_then(|mut e| {
            e.set_repeat(gif::Repeat::Infinite)?;
            Ok(e)
        });
        let encoder = match header {
            Ok(encoder) => encoder,
            Err(e) => {
                let _ = fs::remove_file(&part);
                return Err(RenderError::output(
                    &path,
                    format!("could not write the GIF header: {e}"),
                ));
            }
        };

        let failure = Arc::new(Failure::default());
        let (results, quantised) = mpsc::sync_channel::<GifResult>(QUEUE_FRAMES);
        let file_failure = Arc::clone(&failure);
        let file_path = path.clone();
        let spawned = thread::Builder::new()
            .name("dyeflow-gif-file".into())
            .spawn(move || gif_file_thread(encoder, &quantised, &file_failure, &file_path));
        let file_thread = match spawned {
            Ok(thread) => thread,
            Err(e) => {
                let _ = fs::remove_file(&part);
                return Err(RenderError::output(
                    &path,
                    format!("could not start the encoder threads: {e}"),
                ));
            }
        };

        let (recycle, free) = mpsc::channel::<Vec<u8>>();
        let worker_failure = Arc::clone(&failure);
        let worker_path = path.clone();
        let work = move |quantiser: &mut Quantiser, job: GifJob| {
            let GifJob { seq, delay, rgba } = job;
            let frame = if worker_failure.is_set() {
                None
            } else {
                let quantised = panic::catch_unwind(AssertUnwindSafe(|| {
                    quantise_gif(quantiser, &rgba, w16, h16, delay)
                }));
                if quantised.is_err() {
                    *quantiser = Quantiser::default();
                    worker_failure.set(&worker_path, "the GIF encoder failed (out of memory?)");
                }
                quantised.ok()
            };
            let _ = recycle.send(rgba);
            let _ = results.send((seq, frame));
        };
        let pool = match Pool::spawn("dyeflow-gif", GIF_THREADS, QUEUE_FRAMES, work) {
            Ok(pool) => pool,
            Err(e) => {
                // The result sender went with the failed pool, so the file thread ends.
                let _ = file_thread.join();
                let _ = fs::remove_file(&part);
                return Err(RenderError::output(
                    &path,
                    format!("could not start the encoder threads: {e}"),
                ));
            }
        };
        Ok(Self {
            path,
            part,
            width: opts.width,
            height: opts.height,
            fps: opts.fps,
            frames: 0,
            kept: 0,
            pool: Some(pool),
            file_thread: Some(file_thread),
            free,
            failure,
            finished: false,
        })
    }

    /// Stops the threads after the queued frames. Returns the frames in the file, or `None` if
    /// a thread died.
    fn stop_threads(&mut self) -> Option<u64> {
        let clean = self.pool.take().is_none_or(|mut pool| pool.close());
        let written = self.file_thread.take().map_or(Some(0), |t| t.join().ok());
        written.filter(|_| clean)
    }

    /// The error to report when the encoder threads are gone.
    fn stopped_error(&self) -> RenderError {
        self.failure.error().unwrap_or_else(|| {
            RenderError::output(&self.path, "the GIF encoder threads stopped unexpectedly")
        })
    }
}

/// Writes quantised frames to the file in order, then the trailer. Returns the frames written.
fn gif_file_thread(
    mut encoder: gif::Encoder<BufWriter<File>>,
    quantised: &Receiver<GifResult>,
    failure: &Failure,
    path: &Path,
) -> u64 {
    let mut pending = BTreeMap::new();
    let mut next = 0;
    let mut written = 0;
    let mut ok = true;
    for (seq, frame) in quantised.iter() {
        pending.insert(seq, frame);
        while let Some(frame) = pending.remove(&next) {
            next += 1;
            match frame {
                Some(frame) if ok => match encoder.write_lzw_pre_encoded_frame(&frame) {
                    Ok(()) => written += 1,
                    Err(e) => {
                        failure.set(path, format!("could not write the GIF: {e}"));
                        ok = false;
                    }
                },
                // Quantising failed (and said so), or writing already failed.
                _ => ok = false,
            }
        }
    }
    if !pending.is_empty() {
        failure.set(path, "a GIF frame went missing: an encoder thread stopped");
    } else if ok {
        let finished = encoder
            .into_inner()
            .map_err(|e| e.to_string())
            .and_then(|mut file| file.flush().map_err(|e| e.to_string()));
        if let Err(e) = finished {
            failure.set(path, format!("could not write the GIF: {e}"));
        }
    }
    written
}

impl FrameWriter for GifWriter {
    fn write(&mut self, rgba: &[u8]) -> Result<(), RenderError> {
        check_frame(&self.path, rgba, self.width, self.height)?;
        if let Some(error) = self.failure.error() {
            return Err(error);
        }
        let Some(pool) = &self.pool else {
            return Err(self.stopped_error());
        };
        let Some(delay) = gif_delay(self.frames, self.fps) else {
            self.frames += 1;
            return Ok(());
        };
        let mut buffer = self.free.try_recv().unwrap_or_default();
        buffer.clear();
        buffer.extend_from_slice(rgba);
        let job = GifJob {
            seq: self.kept,
            delay,
            rgba: buffer,
        };
        if pool.send(job).is_err() {
            return Err(self.stopped_error());
        }
        self.kept += 1;
        self.frames += 1;
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<String, RenderError> {
        self.finished = true;
        let written = self.stop_threads();
        let error = match (self.failure.error(), written) {
            (Some(error), _) => Some(error),
            (None, Some(n)) if n == self.kept => None,
            (None, _) => Some(RenderError::output(
                &self.path,
                "the GIF encoder threads stopped unexpectedly",
            )),
        };
        if let Some(error) = error {
            let _ = fs::remove_file(&self.part);
            return Err(error);
        }
        fs::rename(&self.part, &self.path).map_err(|e| {
            RenderError::output(
                &self.path,
                format!("could not rename {} to it: {e}", self.part.display()),
            )
        })?;
        let size = human_size(file_size(&self.path));
        let path = self.path.display();
        Ok(if self.kept == self.frames {
            let s = if self.kept == 1 { "" } else { "s" };
            format!("{path}, {} frame{s}, {size}", self.kept)
        } else {
            format!(
                "{path}, {} frames at {GIF_MAX_FPS} fps (of {} rendered at {} fps; GIFs play at \
                 most {GIF_MAX_FPS} fps), {size}",
                self.kept, self.frames, self.fps
            )
        })
    }

    fn frames_written(&self) -> u64 {
        self.frames
    }
}

impl Drop for GifWriter {
    fn drop(&mut self) {
        if !self.finished {
            // Abandoned without `finish`: leave nothing behind.
            self.stop_threads();
            let _ = fs::remove_file(&self.part);
        }
    }
}

// ------------------------------------------------------------------------------------------
// Video through ffmpeg

/// How many of ffmpeg's last stderr lines an error quotes.
const STDERR_LINES: usize = 6;

/// Pipes frames into ffmpeg, which writes `<path>.part`; renamed when ffmpeg succeeds.
struct VideoWriter {
    path: PathBuf,
    part: PathBuf,
    width: u32,
    height: u32,
    fps: u32,
    with_audio: bool,
    frames: u64,
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    stderr: Option<JoinHandle<VecDeque<String>>>,
    /// The error after ffmpeg died, repeated by later calls.
    failed: Option<String>,
}

impl VideoWriter {
    fn open(opts: &OutputOptions, container: &str) -> Result<Self, RenderError> {
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
                return Err(RenderError::Usage(format!(
                    "{}: unknown video container '{other}'; use mp4 or webm",
                    path.display()
                )));
            }
        };
        if !opts.width.is_multiple_of(2) || !opts.height.is_multiple_of(2) {
            return Err(RenderError::Usage(format!(
                "{}: a video needs an even width and height (yuv420p), not {}x{}",
                path.display(),
                opts.width,
                opts.height
            )));
        }
        if let Some(audio) = &opts.audio
            && !audio.is_file()
        {
            return Err(RenderError::input(audio, "the audio file was not found"));
        }
        create_parent(&path)?;
        let part = part_path(&path);
        // Fail here, with a plain message, if the file cannot be created; ffmpeg overwrites it.
        File::create(&part)
            .map_err(|e| RenderError::output(&path, format!("could not create the file: {e}")))?;

        let mut command = Command::new("ffmpeg");
        command.args(["-hide_banner", "-loglevel", "error", "-y"]);
        command.args(["-f", "rawvideo", "-pix_fmt", "rgba"]);
        command
            .arg("-s")
            .arg(format!("{}x{}", opts.width, opts.height));
        command.arg("-r").arg(opts.fps.to_string());
        command.args(["-i", "pipe:0"]);
        if let Some(audio) = &opts.audio {
            let start = opts.audio_start_s;
            if start > 0.0 {
                command.arg("-ss").arg(format!("{start:.3}"));
            } else if start < 0.0 {
                command.arg("-itsoffset").arg(format!("{:.3}", -start));
            }
            command.arg("-i").arg(audio);
            command.args(["-map", "0:v", "-map", "1:a", "-shortest"]);
        }
        command.args(video_codec);
        if opts.audio.is_some() {
            command.args(audio_codec);
        }
        command.args(format_flags);
        command.arg(&part);
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
                let _ = fs::remove_file(&part);
                return Err(RenderError::Tool(if e.kind() == io::ErrorKind::NotFound {
                    format!(
                        "ffmpeg was not found on PATH, so {} cannot be written; install ffmpeg \
                         (Debian: apt install ffmpeg) or render PNG frames with --out DIR and \
                         encode them later.",
                        path.display()
                    )
                } else {
                    format!(
                        "ffmpeg could not be started to write {}: {e}",
                        path.display()
                    )
                }));
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
            part,
            width: opts.width,
            height: opts.height,
            fps: opts.fps,
            with_audio: opts.audio.is_some(),
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
fn stderr_tail(stderr: impl io::Read) -> VecDeque<String> {
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

/// Describes an exit status for an error message.
fn describe_status(status: Option<ExitStatus>) -> String {
    status.map_or_else(|| "it could not be waited for".into(), |s| s.to_string())
}

impl FrameWriter for VideoWriter {
    fn write(&mut self, rgba: &[u8]) -> Result<(), RenderError> {
        if let Some(failed) = &self.failed {
            return Err(RenderError::Tool(failed.clone()));
        }
        check_frame(&self.path, rgba, self.width, self.height)?;
        let result = match &mut self.stdin {
            Some(stdin) => stdin.write_all(rgba),
            None => Err(io::ErrorKind::BrokenPipe.into()),
        };
        if let Err(e) = result {
            let (status, tail) = self.wait(Some(Duration::from_secs(5)));
            let message = format!(
                "ffmpeg stopped taking frames after {} frames while writing {} ({e}; {}): {tail}",
                self.frames,
                self.path.display(),
                describe_status(status)
            );
            let _ = fs::remove_file(&self.part);
            self.failed = Some(message.clone());
            return Err(RenderError::Tool(message));
        }
        self.frames += 1;
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<String, RenderError> {
        if let Some(failed) = self.failed.take() {
            return Err(RenderError::Tool(failed));
        }
        let (status, tail) = self.wait(None);
        if !status.is_some_and(|s| s.success()) {
            let _ = fs::remove_file(&self.part);
            return Err(RenderError::Tool(format!(
                "ffmpeg failed to write {} ({}): {tail}",
                self.path.display(),
                describe_status(status)
            )));
        }
        fs::rename(&self.part, &self.path).map_err(|e| {
            RenderError::output(
                &self.path,
                format!("could not rename {} to it: {e}", self.part.display()),
            )
        })?;
        let seconds = self.frames as f64 / f64::from(self.fps);
        Ok(format!(
            "{}, {} frames at {} fps ({seconds:.1} s){}, {}",
            self.path.display(),
            self.frames,
            self.fps,
            if self.with_audio { " with audio" } else { "" },
            human_size(file_size(&self.path))
        ))
    }

    fn frames_written(&self) -> u64 {
        self.frames
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
            let _ = fs::remove_file(&self.part);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// A unique scratch directory under the temp dir, removed on drop.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Self {
            static COUNTER: AtomicUsize = AtomicUsize::new(0);
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let dir = std::env::temp_dir()
                .join(format!("dyeflow-output-{}-{n}-{name}", std::process::id()));
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(&dir).unwrap();
            Self(dir)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn options(path: PathBuf, width: u32, height: u32, fps: u32) -> OutputOptions {
        OutputOptions {
            path,
            width,
            height,
            fps,
            audio: None,
            audio_start_s: 0.0,
        }
    }

    /// A solid RGBA frame.
    fn solid(width: u32, height: u32, rgb: [u8; 3]) -> Vec<u8> {
        [rgb[0], rgb[1], rgb[2], 255].repeat(width as usize * height as usize)
    }

    /// A frame with a distinct colour per pixel, varying with `t`.
    fn pattern(width: u32, height: u32, t: u32) -> Vec<u8> {
        let mut rgba = Vec::with_capacity(width as usize * height as usize * 4);
        for y in 0..height {
            for x in 0..width {
                rgba.extend_from_slice(&[
                    (x * 7 + t) as u8,
                    (y * 13 + t * 3) as u8,
                    (x * y + t * 5) as u8,
                    255,
                ]);
            }
        }
        rgba
    }

    /// A smooth, fluid-like frame with a little noise, for the benchmark.
    fn fluid_like(width: u32, height: u32, t: f32) -> Vec<u8> {
        let mut rgba = Vec::with_capacity(width as usize * height as usize * 4);
        let mut seed = 0x9e37_79b9_u32;
        for y in 0..height {
            for x in 0..width {
                let (u, v) = (x as f32 / width as f32, y as f32 / height as f32);
                let swirl = (u * 9.0 + (v * 7.0 + t).sin() * 2.0).sin()
                    * (v * 5.0 - (u * 4.0 - t).cos() * 1.5).cos();
                let dye = 0.5 + 0.5 * swirl;
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                let noise = (seed % 5) as f32 - 2.0;
                let c = |k: f32| ((dye * k).fract() * 255.0 + noise).clamp(0.0, 255.0) as u8;
                rgba.extend_from_slice(&[c(1.0), c(0.7 + 0.2 * u), c(0.35 + 0.3 * v), 255]);
            }
        }
        rgba
    }

    fn file_names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn decode_png(path: &Path) -> (u32, u32, png::ColorType, Vec<u8>) {
        let file = BufReader::new(File::open(path).unwrap());
        let mut reader = png::Decoder::new(file).read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        buf.truncate(info.buffer_size());
        (info.width, info.height, info.color_type, buf)
    }

    /// Decodes a GIF into (delay, RGBA pixels) per frame.
    fn decode_gif(path: &Path) -> (u16, u16, Vec<(u16, Vec<u8>)>) {
        let mut decode = gif::DecodeOptions::new();
        decode.set_color_output(gif::ColorOutput::RGBA);
        let mut decoder = decode
            .read_info(BufReader::new(File::open(path).unwrap()))
            .unwrap();
        assert_eq!(decoder.repeat(), gif::Repeat::Infinite);
        let (width, height) = (decoder.width(), decoder.height());
        let mut frames = Vec::new();
        while let Some(frame) = decoder.read_next_frame().unwrap() {
            frames.push((frame.delay, frame.buffer.to_vec()));
        }
        (width, height, frames)
    }

    #[test]
    fn kind_for_table() {
        let scratch = Scratch::new("kind");
        let existing = scratch.0.join("frames.gif");
        fs::create_dir_all(&existing).unwrap();
        let video = |container| Ok(OutputKind::Video { container });
        let table: [(&Path, Result<OutputKind, ()>); 11] = [
            (Path::new("out.gif"), Ok(OutputKind::Gif)),
            (Path::new("dir/Out.GIF"), Ok(OutputKind::Gif)),
            (Path::new("out.mp4"), video("mp4")),
            (Path::new("a/b.MP4"), video("mp4")),
            (Path::new("out.webm"), video("webm")),
            (Path::new("frames"), Ok(OutputKind::PngSequence)),
            (Path::new("out/frames"), Ok(OutputKind::PngSequence)),
            (Path::new("out.gif/"), Ok(OutputKind::PngSequence)),
            (&existing, Ok(OutputKind::PngSequence)),
            (Path::new("out.avi"), Err(())),
            (Path::new("frame.png"), Err(())),
        ];
        for (path, expected) in table {
            let got = kind_for(path);
            match (got, expected) {
                (Ok(got), Ok(expected)) => assert_eq!(got, expected, "{}", path.display()),
                (Err(RenderError::Usage(message)), Err(())) => {
                    let ext = path.extension().unwrap().to_string_lossy();
                    assert!(message.contains(&format!("unknown output type '.{ext}'")));
                    assert!(message.contains("use a directory (PNG frames), .gif, .mp4 or .webm"));
                }
                (got, expected) => panic!("{}: {got:?}, expected {expected:?}", path.display()),
            }
        }
        assert!(matches!(
            kind_for(Path::new("")),
            Err(RenderError::Usage(_))
        ));
    }

    #[test]
    fn png_sequence_round_trips() {
        let scratch = Scratch::new("png");
        let dir = scratch.0.join("nested/frames");
        let (w, h) = (7, 5);
        let frames = [pattern(w, h, 0), pattern(w, h, 1), solid(w, h, [1, 2, 3])];
        let mut writer = open(&OutputKind::PngSequence, &options(dir.clone(), w, h, 30)).unwrap();
        for frame in &frames {
            writer.write(frame).unwrap();
        }
        assert_eq!(writer.frames_written(), 3);
        let summary = writer.finish().unwrap();
        println!("{summary}");
        assert!(summary.starts_with("3 PNG frames in "), "{summary}");
        assert!(
            summary.contains("frame_000001.png … frame_000003.png"),
            "{summary}"
        );
        assert_eq!(
            file_names(&dir),
            ["frame_000001.png", "frame_000002.png", "frame_000003.png"]
        );
        for (i, frame) in frames.iter().enumerate() {
            let (dw, dh, color, rgb) = decode_png(&dir.join(frame_name(i as u64 + 1)));
            assert_eq!((dw, dh, color), (w, h, png::ColorType::Rgb));
            let expected: Vec<u8> = frame
                .chunks_exact(4)
                .flat_map(|p| [p[0], p[1], p[2]])
                .collect();
            assert_eq!(rgb, expected, "frame {}", i + 1);
        }
    }

    #[test]
    fn png_sequence_removes_stale_frames_only() {
        let scratch = Scratch::new("stale");
        let dir = &scratch.0;
        for name in [
            "frame_000001.png",
            "frame_000002.png",
            "frame_000003.png",
            "frame_000009.png.part",
            "frame_1234567.png",
            "frame_abc.png",
            "frame_.png",
            "notes.txt",
            "frame_000004.png.bak",
        ] {
            fs::write(dir.join(name), b"old").unwrap();
        }
        fs::create_dir(dir.join("frame_000005.png")).unwrap();
        let mut writer = open(&OutputKind::PngSequence, &options(dir.clone(), 4, 4, 60)).unwrap();
        writer.write(&solid(4, 4, [9, 9, 9])).unwrap();
        writer.write(&solid(4, 4, [8, 8, 8])).unwrap();
        writer.finish().unwrap();
        assert_eq!(
            file_names(dir),
            [
                "frame_.png",
                "frame_000001.png",
                "frame_000002.png",
                "frame_000004.png.bak",
                "frame_000005.png",
                "frame_abc.png",
                "notes.txt"
            ]
        );
        assert_eq!(decode_png(&dir.join("frame_000002.png")).3, [8; 48]);
    }

    #[test]
    fn png_errors_from_encoder_threads_surface() {
        let scratch = Scratch::new("pngfail");
        let dir = scratch.0.join("frames");
        let mut writer = open(&OutputKind::PngSequence, &options(dir.clone(), 8, 8, 30)).unwrap();
        // Pull the directory out from under the encoders.
        fs::remove_dir_all(&dir).unwrap();
        fs::write(&dir, b"now a file").unwrap();
        let frame = solid(8, 8, [1, 2, 3]);
        let mut error = None;
        for _ in 0..50 {
            if let Err(e) = writer.write(&frame) {
                error = Some(e);
                break;
            }
        }
        let error = match error {
            Some(error) => error,
            None => writer.finish().unwrap_err(),
        };
        println!("{error}");
        assert!(
            matches!(&error, RenderError::Output { problem, .. } if problem.contains("could not write the frame")),
            "{error}"
        );
    }

    #[test]
    fn unwritable_outputs_are_output_errors() {
        let scratch = Scratch::new("unwritable");
        let blocker = scratch.0.join("blocker");
        fs::write(&blocker, b"a regular file").unwrap();
        for (kind, path) in [
            (OutputKind::PngSequence, blocker.join("frames")),
            (OutputKind::PngSequence, blocker.clone()),
            (OutputKind::Gif, blocker.join("sub/out.gif")),
            (
                OutputKind::Video { container: "mp4" },
                blocker.join("out.mp4"),
            ),
        ] {
            match open(&kind, &options(path.clone(), 8, 8, 30)) {
                Err(e @ RenderError::Output { .. }) => println!("{e}"),
                Err(e) => panic!("{}: {e}", path.display()),
                Ok(_) => panic!("{}: opened", path.display()),
            }
        }
    }

    #[test]
    fn bad_frames_and_sizes_are_errors() {
        let scratch = Scratch::new("bad");
        let mut writer = open(
            &OutputKind::PngSequence,
            &options(scratch.0.join("f"), 4, 4, 30),
        )
        .unwrap();
        assert!(matches!(
            writer.write(&[0; 10]),
            Err(RenderError::Output { .. })
        ));
        writer.finish().unwrap();
        let mut writer = open(
            &OutputKind::Gif,
            &options(scratch.0.join("a.gif"), 4, 4, 30),
        )
        .unwrap();
        assert!(writer.write(&[0; 65]).is_err());
        drop(writer);
        assert!(!scratch.0.join("a.gif").exists());
        assert!(!scratch.0.join("a.gif.part").exists());
        for (kind, w, h, fps) in [
            (OutputKind::PngSequence, 0, 4, 30),
            (OutputKind::Gif, 4, 4, 0),
            (OutputKind::Gif, 70000, 4, 30),
            (OutputKind::Video { container: "mp4" }, 5, 4, 30),
            (OutputKind::Video { container: "webm" }, 4, 7, 30),
        ] {
            let result = open(&kind, &options(scratch.0.join("x"), w, h, fps));
            assert!(
                matches!(result, Err(RenderError::Usage(_))),
                "{kind:?} {w}x{h}@{fps}"
            );
        }
        let Err(RenderError::Usage(message)) = open(
            &OutputKind::Video { container: "mp4" },
            &options(scratch.0.join("x.mp4"), 5, 4, 30),
        ) else {
            panic!("odd width accepted");
        };
        assert!(message.contains("even"), "{message}");
    }

    #[test]
    fn quantiser_is_exact_up_to_256_colours_and_close_beyond() {
        let mut quantiser = Quantiser::default();
        let mut indices = Vec::new();
        // 256 colours, scattered: exact.
        let few: Vec<u8> = (0..64 * 64u32)
            .flat_map(|i| {
                let k = (i * 37 % 256) as u8;
                [k, k.wrapping_mul(3), 255 - k, 255]
            })
            .collect();
        let palette = quantiser.quantise(&few, &mut indices);
        assert_eq!(palette.len(), 256 * 3);
        assert_eq!(quantise_error(&few, &indices, &palette), 0.0);
        // Smooth, fluid-like frames: within a couple of levels.
        for t in 0..3 {
            let frame = fluid_like(160, 90, t as f32);
            let palette = quantiser.quantise(&frame, &mut indices);
            assert!(palette.len() <= 256 * 3);
            assert_eq!(indices.len(), 160 * 90);
            assert!(indices.iter().all(|&i| usize::from(i) * 3 < palette.len()));
            let error = quantise_error(&frame, &indices, &palette);
            assert!(error < 3.0, "error {error}");
        }
        // Noise: every entry used sensibly, no panic.
        let mut seed = 1u32;
        let noise: Vec<u8> = (0..128 * 128)
            .flat_map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                let [r, g, b, _] = seed.to_le_bytes();
                [r, g, b, 255]
            })
            .collect();
        let palette = quantiser.quantise(&noise, &mut indices);
        assert_eq!(palette.len(), 256 * 3);
        assert!(quantise_error(&noise, &indices, &palette) < 16.0);
    }

    #[test]
    fn gif_delays_keep_the_long_run_rate() {
        let delays =
            |fps: u32, n: u64| -> Vec<Option<u16>> { (0..n).map(|i| gif_delay(i, fps)).collect() };
        assert_eq!(delays(25, 3), [Some(4); 3]);
        assert_eq!(delays(50, 3), [Some(2); 3]);
        assert_eq!(delays(30, 6), [3, 4, 3, 3, 4, 3].map(Some));
        assert_eq!(delays(1, 2), [Some(100); 2]);
        // 60 fps: 5 of every 6 frames kept, each for 2/100 s.
        let sixty = delays(60, 12);
        assert_eq!(
            sixty,
            [
                Some(2),
                None,
                Some(2),
                Some(2),
                Some(2),
                Some(2),
                Some(2),
                None,
                Some(2),
                Some(2),
                Some(2),
                Some(2)
            ]
        );
        for fps in [
            1, 7, 12, 24, 25, 29, 30, 40, 48, 50, 59, 60, 90, 120, 144, 240,
        ] {
            // One second of frames lasts one second (within one slot above 50 fps).
            let total: u64 = delays(fps, u64::from(fps) * 10)
                .into_iter()
                .flatten()
                .map(u64::from)
                .sum();
            assert!((998..=1000).contains(&total), "{fps} fps: {total}");
            if fps <= 50 {
                assert_eq!(total, 1000, "{fps} fps");
            }
            assert!(
                delays(fps, 500).into_iter().flatten().all(|d| d >= 2),
                "{fps} fps"
            );
        }
    }

    #[test]
    fn gif_round_trips() {
        let scratch = Scratch::new("gif");
        let path = scratch.0.join("sub/out.gif");
        let (w, h) = (32, 24);
        let colours = [[255, 0, 0], [12, 200, 99], [0, 0, 0], [250, 250, 250]];
        let mut writer = open(&OutputKind::Gif, &options(path.clone(), w, h, 25)).unwrap();
        for c in colours {
            writer.write(&solid(w, h, c)).unwrap();
        }
        // A smooth gradient of 768 colours, like dye.
        let gradient: Vec<u8> = (0..h)
            .flat_map(|y| {
                (0..w).flat_map(move |x| [(x * 8) as u8, (y * 10) as u8, ((x + y) * 4) as u8, 255])
            })
            .collect();
        writer.write(&gradient).unwrap();
        assert_eq!(writer.frames_written(), 5);
        let summary = writer.finish().unwrap();
        println!("{summary}");
        assert!(summary.contains("out.gif, 5 frames, "), "{summary}");
        assert_eq!(file_names(&scratch.0.join("sub")), ["out.gif"]);

        let (dw, dh, frames) = decode_gif(&path);
        assert_eq!((u32::from(dw), u32::from(dh)), (w, h));
        assert_eq!(frames.len(), 5);
        for (i, c) in colours.iter().enumerate() {
            assert_eq!(frames[i].0, 4);
            assert_eq!(frames[i].1, solid(w, h, *c), "frame {i}");
        }
        // More than 256 colours: quantised, within a few levels on average.
        let error: u64 = frames[4]
            .1
            .iter()
            .zip(&gradient)
            .map(|(&a, &b)| u64::from(a.abs_diff(b)))
            .sum();
        let mean = error as f64 / gradient.len() as f64;
        assert!(mean < 3.0, "mean error {mean}");
    }

    #[test]
    fn gif_at_60_fps_keeps_at_most_50() {
        let scratch = Scratch::new("gif60");
        let path = scratch.0.join("fast.gif");
        let mut writer = open(&OutputKind::Gif, &options(path.clone(), 8, 8, 60)).unwrap();
        for i in 0..12u8 {
            writer.write(&solid(8, 8, [i * 20, 0, 0])).unwrap();
        }
        assert_eq!(writer.frames_written(), 12);
        let summary = writer.finish().unwrap();
        println!("{summary}");
        assert!(
            summary.contains("10 frames at 50 fps (of 12 rendered at 60 fps"),
            "{summary}"
        );
        let (_, _, frames) = decode_gif(&path);
        let kept: Vec<u8> = [0, 2, 3, 4, 5, 6, 8, 9, 10, 11].map(|i| i * 20).to_vec();
        assert_eq!(frames.len(), kept.len());
        for ((delay, pixels), red) in frames.iter().zip(kept) {
            assert_eq!(*delay, 2);
            assert_eq!(pixels[..4], [red, 0, 0, 255]);
        }
    }

    #[test]
    fn video_or_a_helpful_tool_error() {
        let scratch = Scratch::new("video");
        let path = scratch.0.join("tiny.mp4");
        let result = open(
            &OutputKind::Video { container: "mp4" },
            &options(path.clone(), 64, 48, 30),
        );
        if ffmpeg_available() {
            let mut writer = result.unwrap();
            for t in 0..10 {
                writer.write(&pattern(64, 48, t)).unwrap();
            }
            let summary = writer.finish().unwrap();
            println!("{summary}");
            assert!(summary.contains("10 frames at 30 fps"), "{summary}");
            assert!(file_size(&path) > 0);
            assert_eq!(file_names(&scratch.0), ["tiny.mp4"]);

            // With audio, in both containers.
            let audio = scratch.0.join("tone.wav");
            let spec = hound::WavSpec {
                channels: 2,
                sample_rate: 48_000,
                bits_per_sample: 16,
                sample_format: hound::SampleFormat::Int,
            };
            let mut wav = hound::WavWriter::create(&audio, spec).unwrap();
            for n in 0..48_000 {
                let v = ((n as f32 * 0.05).sin() * 8000.0) as i16;
                wav.write_sample(v).unwrap();
                wav.write_sample(v).unwrap();
            }
            wav.finalize().unwrap();
            for (container, start) in [("mp4", 0.25), ("webm", -0.1)] {
                let path = scratch.0.join(format!("voiced.{container}"));
                let mut opts = options(path.clone(), 64, 48, 30);
                opts.audio = Some(audio.clone());
                opts.audio_start_s = start;
                let mut writer = open(&OutputKind::Video { container }, &opts).unwrap();
                for t in 0..15 {
                    writer.write(&pattern(64, 48, t)).unwrap();
                }
                let summary = writer.finish().unwrap();
                println!("{summary}");
                assert!(
                    summary.ends_with('B') && summary.contains("with audio"),
                    "{summary}"
                );
                assert!(file_size(&path) > 0);
                assert!(!part_path(&path).exists());
            }
        } else {
            let Err(RenderError::Tool(message)) = result else {
                panic!("expected a Tool error");
            };
            assert!(
                message.contains("ffmpeg") && message.contains("--out"),
                "{message}"
            );
            assert!(message.contains("tiny.mp4"), "{message}");
            assert_eq!(file_names(&scratch.0), Vec::<String>::new());
        }
    }

    #[test]
    fn ffmpeg_failures_are_tool_errors() {
        if !ffmpeg_available() {
            return;
        }
        let scratch = Scratch::new("videofail");
        // A WAV that is not one: ffmpeg exits at once and the next write must say why.
        let audio = scratch.0.join("bad.wav");
        fs::write(&audio, b"not a wav file at all").unwrap();
        let mut opts = options(scratch.0.join("bad.webm"), 64, 48, 30);
        opts.audio = Some(audio);
        let mut writer = open(&OutputKind::Video { container: "webm" }, &opts).unwrap();
        let frame = pattern(64, 48, 0);
        let mut error = None;
        for _ in 0..2000 {
            if let Err(e) = writer.write(&frame) {
                error = Some(e);
                break;
            }
        }
        let error = error.unwrap_or_else(|| writer.finish().unwrap_err());
        println!("{error}");
        assert!(
            matches!(&error, RenderError::Tool(m) if m.contains("ffmpeg")),
            "{error}"
        );
        assert!(!scratch.0.join("bad.webm").exists());
        assert!(!scratch.0.join("bad.webm.part").exists());
    }

    #[test]
    fn command_hint() {
        assert_eq!(
            ffmpeg_command_hint(Path::new("out/frames"), 60, None),
            "ffmpeg -framerate 60 -start_number 1 -i out/frames/frame_%06d.png -c:v libx264 \
             -pix_fmt yuv420p -crf 18 out/frames.mp4"
        );
        assert_eq!(
            ffmpeg_command_hint(Path::new("my frames/"), 30, Some(Path::new("song's.wav"))),
            "ffmpeg -framerate 30 -start_number 1 -i 'my frames/frame_%06d.png' -i \
             'song'\\''s.wav' -c:v libx264 -pix_fmt yuv420p -crf 18 -c:a aac -b:a 192k -shortest \
             'my frames.mp4'"
        );
    }

    /// The median of `runs` timings of `f`, in milliseconds.
    /// Wall ms per frame to write `frames`, `runs` times over, through a real writer.
    fn writer_ms(kind: &OutputKind, opts: &OutputOptions, frames: &[Vec<u8>], runs: usize) -> f64 {
        let mut writer = open(kind, opts).unwrap();
        let start = Instant::now();
        for i in 0..runs * frames.len() {
            writer.write(&frames[i % frames.len()]).unwrap();
        }
        writer.finish().unwrap();
        start.elapsed().as_secs_f64() * 1e3 / (runs * frames.len()) as f64
    }

    fn median_ms(runs: usize, mut f: impl FnMut()) -> f64 {
        let mut times: Vec<f64> = (0..runs)
            .map(|_| {
                let start = Instant::now();
                f();
                start.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        times.sort_by(f64::total_cmp);
        times[runs / 2]
    }

    /// The mean absolute error per channel of a quantised frame.
    fn quantise_error(rgba: &[u8], indices: &[u8], palette: &[u8]) -> f64 {
        let total: u64 = rgba
            .chunks_exact(4)
            .zip(indices)
            .map(|(pixel, &i)| {
                (0..3)
                    .map(|c| u64::from(palette[usize::from(i) * 3 + c].abs_diff(pixel[c])))
                    .sum::<u64>()
            })
            .sum();
        total as f64 / (indices.len() * 3) as f64
    }

    /// `cargo test --release --lib render::output::tests::encode_speed -- --ignored --nocapture`
    #[test]
    #[ignore = "benchmark"]
    fn encode_speed() {
        const RUNS: usize = 15;
        let scratch = Scratch::new("bench");

        let (w, h) = (1280, 720);
        let frames: Vec<Vec<u8>> = (0..4).map(|t| fluid_like(w, h, t as f32 * 0.3)).collect();
        let (mut rgb, mut out) = (Vec::new(), Vec::new());
        for (label, filter) in [
            ("NoFilter", png::Filter::NoFilter),
            ("Sub", png::Filter::Sub),
            ("Up", png::Filter::Up),
            ("Paeth", png::Filter::Paeth),
            ("Adaptive", png::Filter::Adaptive),
        ] {
            let mut i = 0;
            let ms = median_ms(RUNS, || {
                i += 1;
                encode_png(&frames[i % 4], w, h, filter, &mut rgb, &mut out).unwrap();
            });
            let kb = out.len() as f64 / 1e3;
            println!("PNG 1280x720, Fast + {label}: {ms:.2} ms/frame, {kb:.0} kB");
        }
        let ms = writer_ms(
            &OutputKind::PngSequence,
            &options(scratch.0.join("png"), w, h, 60),
            &frames,
            RUNS,
        );
        println!(
            "PNG 1280x720 through the writer ({PNG_THREADS} threads, to disk): {ms:.2} ms/frame"
        );

        let (w, h) = (640, 360);
        let frames: Vec<Vec<u8>> = (0..4).map(|t| fluid_like(w, h, t as f32 * 0.3)).collect();
        let mut quantiser = Quantiser::default();
        let mut indices = Vec::new();
        let mut i = 0;
        let ms = median_ms(RUNS, || {
            i += 1;
            quantiser.quantise(&frames[i % 4], &mut indices);
        });
        let error = frames
            .iter()
            .map(|f| {
                let palette = quantiser.quantise(f, &mut indices);
                quantise_error(f, &indices, &palette)
            })
            .sum::<f64>()
            / 4.0;
        println!("GIF 640x360, median cut quantise: {ms:.2} ms/frame, error {error:.2} levels");
        let mut kb = 0.0;
        let ms = median_ms(RUNS, || {
            i += 1;
            let frame = quantise_gif(&mut quantiser, &frames[i % 4], w as u16, h as u16, 2);
            kb = frame.buffer.len() as f64 / 1e3;
        });
        println!("GIF 640x360, median cut quantise + LZW: {ms:.2} ms/frame, {kb:.0} kB");
        for speed in [10, 30] {
            let neuquant = |rgba: &[u8]| {
                let mut rgba = rgba.to_vec();
                gif::Frame::from_rgba_speed(w as u16, h as u16, &mut rgba, speed)
            };
            let ms = median_ms(RUNS.min(7), || {
                i += 1;
                neuquant(&frames[i % 4]);
            });
            let error = frames
                .iter()
                .map(|f| {
                    let frame = neuquant(f);
                    quantise_error(f, &frame.buffer, frame.palette.as_deref().unwrap())
                })
                .sum::<f64>()
                / 4.0;
            println!(
                "GIF 640x360, gif crate NeuQuant speed {speed} (for comparison): {ms:.2} ms/frame, \
                 error {error:.2} levels"
            );
        }
        let ms = writer_ms(
            &OutputKind::Gif,
            &options(scratch.0.join("a.gif"), w, h, 30),
            &frames,
            RUNS,
        );
        println!(
            "GIF 640x360 through the writer ({GIF_THREADS} threads, to disk): {ms:.2} ms/frame"
        );
    }
}
