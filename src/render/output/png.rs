//! PNG frames: `frame_000001.png`, … in a directory, encoded on background threads.

use super::*;

/// Encoder threads for PNG frames. Two keep up with a 60 fps 720p render on most machines
/// (see the `encode_speed` benchmark) without taking many cores from the simulation.
pub(super) const PNG_THREADS: usize = 2;
/// The PNG row filter. Paeth: on the demo's dithered 1280x720 frames (fdeflate,
/// `Compression::Fast`, 2026-11-23) it encodes in 8.7-9.2 ms, 1.2-1.5 ms faster than choosing
/// the filter per row (`Adaptive`), for files 0.1-2 % larger (about 1 MB); `Up` is 0.3-0.4 ms
/// faster still but up to 11 % larger. (Before the dither, on smooth frames, `Adaptive` was
/// 20 % smaller than `Up`.) See the `encode_speed` benchmark.
pub(super) const PNG_FILTER: ::png::Filter = ::png::Filter::Paeth;

/// The file name of frame `index` (1-based).
pub(super) fn frame_name(index: u64) -> String {
    format!("frame_{index:06}.png")
}

/// Whether a file name is a frame (or a frame's `.part`) this writer would produce:
/// `frame_` + digits + `.png` or `.png.part`.
pub(super) fn is_frame_file(name: &str) -> bool {
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
pub(super) fn encode_png(
    rgba: &[u8],
    width: u32,
    height: u32,
    filter: ::png::Filter,
    rgb: &mut Vec<u8>,
    out: &mut Vec<u8>,
) -> Result<(), ::png::EncodingError> {
    rgb.clear();
    rgb.reserve(rgba.len() / 4 * 3);
    for pixel in rgba.chunks_exact(4) {
        rgb.extend_from_slice(&pixel[..3]);
    }
    out.clear();
    let mut encoder = ::png::Encoder::new(&mut *out, width, height);
    encoder.set_color(::png::ColorType::Rgb);
    encoder.set_depth(::png::BitDepth::Eight);
    encoder.set_compression(::png::Compression::Fast);
    encoder.set_filter(filter);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(rgb)?;
    writer.finish()
}

/// Per-thread buffers of a PNG encoder thread.
#[derive(Default)]
pub(super) struct PngScratch {
    rgb: Vec<u8>,
    png: Vec<u8>,
}

/// State shared with the PNG encoder threads.
#[derive(Default)]
pub(super) struct PngShared {
    failure: Failure,
    frames_on_disk: AtomicU64,
    bytes: AtomicU64,
}

/// Writes `frame_000001.png`, … into a hidden staging directory inside the output directory,
/// and moves them into place when finished.
pub(super) struct PngWriter {
    dir: PathBuf,
    width: u32,
    height: u32,
    frames: u64,
    encoders: Encoders<PngScratch>,
    shared: Arc<PngShared>,
    /// `.dyeflow-render-XXXXXX.part/` inside `dir`: removed with everything in it when the
    /// writer is dropped.
    staging: Option<tempfile::TempDir>,
    /// The staging directory's path, for the encoder threads.
    staged: Arc<Path>,
    /// The generated audio file that goes with the frames, if any, and whether it is staged
    /// (a file of the same contents already in place needs no writing).
    sidecar: Option<&'static str>,
    sidecar_staged: bool,
    /// Directories `open` made, removed again if nothing is written.
    made: MadeDirs,
}

impl PngWriter {
    pub(super) fn open(opts: &OutputOptions) -> Result<Self, RenderError> {
        let dir = opts.path.clone();
        // A generated audio file never replaces a different file of the user's; the same
        // file (from an earlier render of the demo) needs no writing.
        let mut sidecar_name = None;
        let sidecar = match &opts.audio {
            Some(AudioOut::Generated { name, bytes }) => {
                let target = dir.join(name);
                sidecar_name = Some(*name);
                match fs::read(&target) {
                    Ok(existing) if existing == *bytes => None,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => Some((*name, bytes)),
                    _ if target.exists() => {
                        return Err(UsageError::WouldOverwrite { path: target }.into());
                    }
                    _ => Some((*name, bytes)),
                }
            }
            _ => None,
        };
        let mut made = create_dir(&dir, &dir)?;
        // On an error the staging directory is dropped (removed) first, then what `made` made.
        let (staging, encoders) = made.undo_on_error(|| {
            let staging = tempfile::Builder::new()
                .prefix(".dyeflow-render-")
                .suffix(".part")
                .tempdir_in(&dir)
                .map_err(|e| {
                    RenderError::output(
                        &dir,
                        format!("could not create a directory for the new frames in it: {e}"),
                    )
                })?;
            if let Some((name, bytes)) = sidecar {
                let path = staging.path().join(name);
                fs::write(&path, bytes)
                    .map_err(|e| RenderError::output(&path, format!("could not write it: {e}")))?;
            }
            let encoders = Encoders::new("dyeflow-png", PNG_THREADS).map_err(|e| {
                RenderError::EncoderThreads {
                    path: dir.clone(),
                    source: Box::new(e),
                }
            })?;
            Ok((staging, encoders))
        })?;
        Ok(Self {
            dir,
            width: opts.width,
            height: opts.height,
            frames: 0,
            encoders,
            shared: Arc::new(PngShared::default()),
            staged: staging.path().into(),
            staging: Some(staging),
            sidecar: sidecar_name,
            sidecar_staged: sidecar.is_some(),
            made,
        })
    }

    /// Move the staged frames (and audio) into the output directory, in place of an earlier
    /// render's frames.
    fn commit(&mut self) -> Result<(), RenderError> {
        let Some(staging) = self.staging.take() else {
            return Ok(());
        };
        let names = (1..=self.frames).map(frame_name).chain(
            self.sidecar
                .filter(|_| self.sidecar_staged)
                .map(str::to_owned),
        );
        for name in names {
            let (from, to) = (staging.path().join(&name), self.dir.join(&name));
            if let Err(e) = keep_mode(&from, &to).and_then(|()| fs::rename(&from, &to)) {
                // Keep what is not moved yet, and say where it is.
                let kept = staging.keep();
                return Err(RenderError::output(
                    &to,
                    format!(
                        "could not move it into place ({e}); the rest of the new render is in {}",
                        kept.display()
                    ),
                ));
            }
        }
        drop(staging);
        // After the new frames replaced the old ones of their names (keeping their modes).
        remove_stale_frames(&self.dir, self.frames)
    }
}

/// Removes `frame_<digits>.png` and `.png.part` files left by an earlier render, except the
/// first `written` frames (this render's).
pub(super) fn remove_stale_frames(dir: &Path, written: u64) -> Result<(), RenderError> {
    let is_new = |name: &str| {
        name.strip_prefix("frame_")
            .and_then(|rest| rest.strip_suffix(".png"))
            .and_then(|digits| digits.parse::<u64>().ok())
            .is_some_and(|k| (1..=written).contains(&k) && frame_name(k) == name)
    };
    let entries = fs::read_dir(dir)
        .map_err(|e| RenderError::output(dir, format!("could not list the directory: {e}")))?;
    for entry in entries {
        let entry = entry
            .map_err(|e| RenderError::output(dir, format!("could not list the directory: {e}")))?;
        let name = entry.file_name();
        let is_file = entry.file_type().is_ok_and(|t| t.is_file());
        if is_file
            && name
                .to_str()
                .is_some_and(|n| is_frame_file(n) && !is_new(n))
        {
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

/// Encodes and writes frame `index` (1-based) on an encoder thread.
pub(super) fn png_job(
    dir: &Path,
    (width, height): (u32, u32),
    shared: &PngShared,
    scratch: &mut PngScratch,
    index: u64,
    rgba: &[u8],
) {
    let path = dir.join(frame_name(index));
    if shared.failure.is_set() {
        return;
    }
    let encoded = panic::catch_unwind(AssertUnwindSafe(|| {
        encode_png(
            rgba,
            width,
            height,
            PNG_FILTER,
            &mut scratch.rgb,
            &mut scratch.png,
        )
    }));
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
    // The staging directory is private to this render: no partial name is needed.
    match fs::write(&path, &scratch.png) {
        Ok(()) => {
            shared
                .bytes
                .fetch_add(scratch.png.len() as u64, Ordering::Relaxed);
            shared.frames_on_disk.fetch_add(1, Ordering::Relaxed);
        }
        Err(e) => {
            let _ = fs::remove_file(&path);
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
        // Waits while the encoders are behind.
        let mut buffer = self.encoders.buffer();
        buffer.clear();
        buffer.extend_from_slice(rgba);
        let index = self.frames + 1;
        let size = (self.width, self.height);
        let shared = Arc::clone(&self.shared);
        // The staging directory lives until the encoders have ended (see `Drop`).
        let dir = Arc::clone(&self.staged);
        self.encoders.spawn(buffer, move |scratch, rgba| {
            png_job(&dir, size, &shared, scratch, index, rgba);
        });
        self.frames += 1;
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<Option<String>, RenderError> {
        let clean = self.encoders.wait();
        if let Some(error) = self.shared.failure.error() {
            return Err(error);
        }
        if self.frames == 0 {
            // Nothing to show: the earlier output stays as it was (dropping the writer removes
            // the staging directory and any directory it made).
            return Ok(None);
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
        self.commit()?;
        self.made = MadeDirs::default();
        let dir = dir_display(&self.dir);
        let bytes = human_size(self.shared.bytes.load(Ordering::Relaxed));
        let audio = self
            .sidecar
            .map_or_else(String::new, |name| format!(", and {name}"));
        Ok(Some(match self.frames {
            1 => format!("1 PNG frame in {dir} ({}, {bytes}{audio})", frame_name(1)),
            n => format!(
                "{n} PNG frames in {dir} ({} … {}, {bytes}{audio})",
                frame_name(1),
                frame_name(n)
            ),
        }))
    }

    fn frames_written(&self) -> u64 {
        self.frames
    }
}

impl Drop for PngWriter {
    fn drop(&mut self) {
        // Abandoned (an error, or nothing to write): the encoders stop, the staging directory
        // goes with everything in it, and so do the directories `open` made.
        self.encoders.wait();
        self.staging = None;
        self.made.remove_empty();
    }
}
