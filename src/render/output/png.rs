//! PNG frames: `frame_000001.png`, … in a directory, encoded on background threads.

use super::*;

/// Encoder threads for PNG frames. Two keep up with a 60 fps 720p render on most machines
/// (see the `encode_speed` benchmark) without taking many cores from the simulation.
pub(super) const PNG_THREADS: usize = 2;
/// The PNG row filter. With fdeflate (`Compression::Fast`), choosing the filter per row costs
/// about 1.5 ms more per 720p frame than `Up` or `Sub` alone and gives the smallest files (on
/// smooth frames 20% smaller than `Up`); `NoFilter` is faster still but more than twice the size.
/// See the `encode_speed` benchmark.
pub(super) const PNG_FILTER: ::png::Filter = ::png::Filter::Adaptive;

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

/// A frame for an encoder thread.
pub(super) struct PngJob {
    index: u64,
    rgba: Vec<u8>,
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

/// Writes `frame_000001.png`, … into a directory.
pub(super) struct PngWriter {
    dir: PathBuf,
    width: u32,
    height: u32,
    frames: u64,
    pool: Option<Pool<PngJob>>,
    free: Receiver<Vec<u8>>,
    shared: Arc<PngShared>,
}

impl PngWriter {
    pub(super) fn open(opts: &OutputOptions) -> Result<Self, RenderError> {
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
pub(super) fn remove_stale_frames(dir: &Path) -> Result<(), RenderError> {
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
pub(super) fn png_job(
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
