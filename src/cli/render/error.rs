//! The typed problems a [`RenderError`](super::RenderError) carries: what is wrong with an input
//! file, which argument is out of range, how ffmpeg failed.

use std::io;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::sync::Arc;

use super::midi::MidiError;
use super::wav::WavError;
use super::{MAX_SECONDS, MAX_THREADS_PER_CORE, number_text};
use crate::params::{DYE_SCALES, SIM_RESOLUTIONS_CELLS};
use crate::preset::PresetError;

/// What is wrong with an input file (the error names the file itself).
#[derive(Debug, thiserror::Error)]
pub enum InputProblem {
    /// The file does not exist.
    #[error("file not found")]
    NotFound,
    /// The file may not be read.
    #[error("permission denied")]
    PermissionDenied,
    /// Another I/O error while opening or reading it.
    #[error(transparent)]
    Io(io::Error),
    /// The path is a directory.
    #[error("is a directory, not a file")]
    Directory,
    /// The path is a FIFO, a device or a socket.
    #[error("{}", crate::preset::NotARegularFile)]
    NotARegularFile,
    /// The file has no bytes.
    #[error("empty file")]
    Empty,
    /// The file is larger than its kind allows.
    #[error("file too large (at most {max_mib} MiB)")]
    TooLarge {
        /// The limit, MiB.
        max_mib: u64,
    },
    /// The audio file for a video does not exist.
    #[error("the audio file was not found")]
    AudioNotFound,
    /// Not a WAV file Dyeflow reads.
    #[error(transparent)]
    Wav(#[from] WavError),
    /// Not a MIDI file Dyeflow reads.
    #[error(transparent)]
    Midi(#[from] MidiError),
    /// Not a preset Dyeflow reads.
    #[error(transparent)]
    Preset(#[from] PresetError),
    /// Not a capture Dyeflow reads (truncated, damaged, another format, a newer version).
    #[error(transparent)]
    Capture(#[from] crate::capture::file::CaptureError),
    /// `--preset` names neither a file nor a factory preset.
    #[error("no such preset file or factory preset; the factory presets are {names}")]
    NoSuchPreset {
        /// The factory presets' names, comma-separated.
        names: String,
    },
    /// `--obstacles` names neither a file nor a built-in layout.
    #[error("no such file or obstacle layout; the layouts are {names}")]
    NoSuchLayout {
        /// The layouts' names, comma-separated.
        names: String,
    },
    /// The `--obstacles` file is not a PNG image that decodes.
    #[error("not a PNG image Dyeflow reads ({0})")]
    NotPng(String),
    /// An image with more pixels than Dyeflow decodes.
    #[error(
        "the image is {width}x{height} pixels; an obstacle image may have at most {max} \
         (e.g. 4096x4096): scale it down"
    )]
    ImageTooLarge {
        /// Pixels, from the file's header.
        width: u32,
        /// Pixels, from the file's header.
        height: u32,
        /// The most pixels allowed.
        max: u64,
    },
    /// A capture whose records and stop all fall on its first sample.
    #[error(
        "it holds nothing to render: it is 0 s long (its records and its stop are at its \
         start); give --seconds to render its starting state that long"
    )]
    NothingToRender,
    /// A MIDI file longer than a render may be, with no `--seconds` to cut it.
    #[error(
        "the last event is at {}, and a render is at most {}; give --seconds (and --start) to \
         render a part of it",
        super::duration_text(*last_s),
        super::duration_text(MAX_SECONDS)
    )]
    MusicTooLong {
        /// The time of the last event, seconds.
        last_s: f64,
    },
}

impl From<io::Error> for InputProblem {
    /// "file not found", "permission denied", or the error itself.
    fn from(e: io::Error) -> Self {
        match e.kind() {
            io::ErrorKind::NotFound => Self::NotFound,
            io::ErrorKind::PermissionDenied => Self::PermissionDenied,
            io::ErrorKind::IsADirectory => Self::Directory,
            _ if e
                .get_ref()
                .is_some_and(|inner| inner.is::<crate::preset::NotARegularFile>()) =>
            {
                Self::NotARegularFile
            }
            _ => Self::Io(e),
        }
    }
}

/// An argument out of range or inconsistent with another, or an output the arguments cannot
/// make. Each message names the offending value.
#[derive(Debug, thiserror::Error)]
pub enum UsageError {
    /// A number outside its range.
    #[error("{what} {value} is out of range; use {lo} to {hi}")]
    OutOfRange {
        /// The option, e.g. "--fps".
        what: &'static str,
        /// The value given.
        value: String,
        /// The smallest value allowed.
        lo: String,
        /// The largest value allowed.
        hi: String,
    },
    /// `--seconds` not finite, not positive, or longer than [`MAX_SECONDS`].
    #[error(
        "--seconds {} is out of range; use more than 0 and at most {max}",
        number_text(*seconds),
        max = MAX_SECONDS
    )]
    Seconds {
        /// The value given.
        seconds: f64,
    },
    /// `--start` not finite, negative, or later than [`MAX_SECONDS`].
    #[error(
        "--start {} is out of range; use 0 to {max}",
        number_text(*start_s),
        max = MAX_SECONDS
    )]
    Start {
        /// The value given, seconds.
        start_s: f64,
    },
    /// `--start` at or after the end of the music (or capture), without `--seconds`.
    #[error(
        "--start {} is past the end of the {what} ({length_s:.2} s)",
        number_text(*start_s)
    )]
    StartPastEnd {
        /// The value given, seconds.
        start_s: f64,
        /// The music's length, seconds.
        length_s: f64,
        /// "music" or "capture".
        what: &'static str,
    },
    /// `--sim` not one of [`SIM_RESOLUTIONS_CELLS`].
    #[error(
        "--sim {0} is not a simulation resolution; use one of {all:?}",
        all = SIM_RESOLUTIONS_CELLS
    )]
    SimResolution(u32),
    /// `--dye` not one of [`DYE_SCALES`].
    #[error("--dye {0} is not a dye refinement; use one of {all:?}", all = DYE_SCALES)]
    DyeScale(u32),
    /// `--threads` above this machine's limit.
    #[error(
        "--threads {threads} is out of range; use 1 to {max} ({per_core} per core), or 0 for \
         one per core",
        per_core = MAX_THREADS_PER_CORE
    )]
    Threads {
        /// The value given.
        threads: usize,
        /// The most this machine accepts.
        max: usize,
    },
    /// `--size` with more pixels than 8K.
    #[error("--size {width}x{height} has more pixels than 8K (7680x4320)")]
    MorePixelsThan8k {
        /// Pixels.
        width: u32,
        /// Pixels.
        height: u32,
    },
    /// `--capture` with `--midi`.
    #[error("--capture replays what the plugin recorded: it takes no --midi")]
    CaptureWithMidi,
    /// An empty `--out`.
    #[error("the output path is empty")]
    EmptyOutputPath,
    /// `--out -`: a render writes files (a video is finished by seeking back into it).
    #[error(
        "--out - would be standard output, but Dyeflow writes files (an MP4 or WebM is \
         finished by going back into it); name a file, such as --out video.mp4, or a directory"
    )]
    StandardOutput,
    /// The output would write over one of the run's inputs.
    #[error(
        "{}: the render would write over the {option} file {} (the same file, by any name or \
         link); Dyeflow never writes over an input, so give another --out",
        output.display(),
        input.display()
    )]
    OutputIsInput {
        /// The output the user gave.
        output: PathBuf,
        /// The option that named the input (`--audio`, `--midi`, ...).
        option: &'static str,
        /// The input, as the user named it.
        input: PathBuf,
    },
    /// An output extension Dyeflow does not write.
    #[error(
        "{}: unknown output type '.{extension}'; use a directory (PNG frames), .gif, .mp4 or \
         .webm",
        path.display()
    )]
    UnknownOutputType {
        /// The output path.
        path: PathBuf,
        /// Its extension, as given.
        extension: String,
    },
    /// A video container other than mp4 or webm.
    #[error("{}: unknown video container '{container}'; use mp4 or webm", path.display())]
    UnknownContainer {
        /// The output path.
        path: PathBuf,
        /// The container asked for.
        container: String,
    },
    /// A zero width or height.
    #[error("the output size {width}x{height} is empty")]
    EmptySize {
        /// Pixels.
        width: u32,
        /// Pixels.
        height: u32,
    },
    /// A frame rate of 0.
    #[error("the frame rate must be at least 1 frame per second")]
    ZeroFrameRate,
    /// A frame too large to address in memory.
    #[error("the output size {width}x{height} is too large")]
    SizeTooLarge {
        /// Pixels.
        width: u32,
        /// Pixels.
        height: u32,
    },
    /// A GIF side over 65535 pixels.
    #[error(
        "{}: a GIF can be at most 65535x65535 pixels, not {width}x{height}",
        path.display()
    )]
    GifTooLarge {
        /// The output path.
        path: PathBuf,
        /// Pixels.
        width: u32,
        /// Pixels.
        height: u32,
    },
    /// An odd width or height for a video (yuv420p needs even sizes).
    #[error(
        "{}: a video needs an even width and height (yuv420p), not {width}x{height}",
        path.display()
    )]
    OddVideoSize {
        /// The output path.
        path: PathBuf,
        /// Pixels.
        width: u32,
        /// Pixels.
        height: u32,
    },
    /// PNG frames into a directory that holds files and is not a render's.
    #[error(
        "{}: it holds {first}{} and is not a Dyeflow render; Dyeflow writes PNG frames only \
         into a new or empty directory or one of its own renders, and never overwrites or \
         deletes files it did not write (give another --out)",
        path.display(),
        if *more > 0 { format!(" and {more} more") } else { String::new() }
    )]
    NotARender {
        /// The output directory.
        path: PathBuf,
        /// The first of its entries, by name.
        first: String,
        /// How many more there are.
        more: usize,
    },
    /// A render's directory holds a file named as a frame that render did not write.
    #[error(
        "{}: the earlier render there wrote {frames} frames, not this file; Dyeflow does not \
         overwrite it (move it, or give another --out)",
        path.display()
    )]
    NotItsFrame {
        /// The file.
        path: PathBuf,
        /// Frames the earlier render wrote.
        frames: u64,
    },
    /// A render's marker that does not read.
    #[error(
        "{}: this render marker does not read, so Dyeflow cannot tell which files there are \
         its own (remove the marker if the directory holds only frames, or give another --out)",
        path.display()
    )]
    BadRenderMarker {
        /// The marker.
        path: PathBuf,
    },
    /// A PNG render's generated audio would replace a different file of the user's.
    #[error(
        "{}: a file of that name is already there and is not this render's audio; Dyeflow does \
         not overwrite it (render into another directory with --out, or move the file)",
        path.display()
    )]
    WouldOverwrite {
        /// The file that is already there.
        path: PathBuf,
    },
}

/// How ffmpeg failed while writing a video. Cloneable: a writer repeats it on every later call.
#[derive(Clone, Debug, thiserror::Error)]
pub enum FfmpegFailure {
    /// Writing a frame to ffmpeg's input failed: it exited or closed its input.
    #[error(
        "ffmpeg stopped taking frames after {frames} frames while writing {} ({pipe}; {}): \
         {stderr}",
        path.display(),
        describe_status(*status)
    )]
    Stopped {
        /// The video being written.
        path: PathBuf,
        /// Frames ffmpeg took.
        frames: u64,
        /// The error writing the next frame.
        #[source]
        pipe: Arc<io::Error>,
        /// ffmpeg's exit status, if it could be waited for.
        status: Option<ExitStatus>,
        /// The last lines ffmpeg printed, joined with "; ".
        stderr: String,
    },
    /// ffmpeg exited with an error after its input was closed.
    #[error(
        "ffmpeg failed to write {} ({}): {stderr}",
        path.display(),
        describe_status(*status)
    )]
    Failed {
        /// The video being written.
        path: PathBuf,
        /// ffmpeg's exit status, if it could be waited for.
        status: Option<ExitStatus>,
        /// The last lines ffmpeg printed, joined with "; ".
        stderr: String,
    },
    /// ffmpeg exited as if it had succeeded, but what it wrote is not a whole video (ffmpeg
    /// 5.1 exits 0 after "Error writing trailer: No space left on device").
    #[error(
        "ffmpeg did not finish {} ({why}), so it was not written and a file there before is \
         unchanged; ffmpeg said: {stderr}",
        path.display()
    )]
    Incomplete {
        /// The video being written.
        path: PathBuf,
        /// What is wrong with the file ffmpeg wrote.
        why: String,
        /// The last lines ffmpeg printed, joined with "; ".
        stderr: String,
    },
    /// ffmpeg made no progress for the writer's patience and was stopped.
    #[error(
        "ffmpeg stalled while writing {} (after {frames} frames it took no frame, wrote \
         nothing and used no CPU time for {patience_s:.0} s) and was stopped, so the video was \
         not written and a file there before is unchanged; ffmpeg said: {stderr}",
        path.display()
    )]
    Stalled {
        /// The video being written.
        path: PathBuf,
        /// Frames ffmpeg took.
        frames: u64,
        /// How long it made no progress, seconds.
        patience_s: f64,
        /// The last lines ffmpeg printed, joined with "; ".
        stderr: String,
    },
    /// A stop was requested (a second Ctrl-C) while ffmpeg was finishing the video.
    #[error(
        "stopped while ffmpeg was finishing {}, so it was not written and a file there before \
         is unchanged",
        path.display()
    )]
    Interrupted {
        /// The video being written.
        path: PathBuf,
    },
}

/// Describes an exit status for an error message.
fn describe_status(status: Option<ExitStatus>) -> String {
    status.map_or_else(|| "it could not be waited for".into(), |s| s.to_string())
}
