//! Animated GIF: every frame quantised to its own palette on background threads, written in
//! order by one more.
//!
//! The palettes come from the quantette crate. It replaced a median cut of our own (a 15-bit
//! histogram, one k-means round, nearest entry by 18-bit bin), which was 4 to 7 times faster but
//! further from the frames on every measure below except the file size (and the worst blurred
//! error on density-hue frames), and visibly banded in dark dye.
//! Release build, one thread, 640x360 frames rendered on the CPU, 8 of each look; error in
//! levels per channel, CIEDE2000 per pixel and after a 5x5 box blur of both (what shows as
//! banding), and steps: neighbours within 1 level of each other that come out more than
//! 2 dE00 apart, per 1000:
//!
//! | look | quantiser | ms/frame | error | dE00 | blurred | steps | kB/frame |
//! |---|---|---|---|---|---|---|---|
//! | demo (dye colour) | median cut | 2.1 | 1.13 | 0.79 | 0.48 | 27.6 | 41 |
//! | | quantette, as used | 8.6 | 0.59 | 0.47 | 0.26 | 12.9 | 63 |
//! | density hue | median cut | 1.3 | 0.71 | 0.49 | 0.23 | 23.2 | 132 |
//! | | quantette, as used | 6.7 | 0.64 | 0.30 | 0.09 | 4.7 | 138 |
//!
//! No dithering: Floyd-Steinberg lowers the blurred error further but makes frames 40-75%
//! larger, and its noise crawls from frame to frame.

use quantette::color_space::{oklab_to_srgb8, srgb8_to_oklab};
use quantette::deps::palette::Srgb;
use quantette::kmeans::{Kmeans, KmeansOptions};
use quantette::wu::{BinnerF32x3, WuF32x3};
use quantette::{ImageRef, PaletteSize, dedup};

use super::*;

/// The fastest frame rate a GIF plays at reliably.
pub(super) const GIF_MAX_FPS: u32 = 50;

/// The GIF delay (hundredths of a second) of input frame `index` (0-based) at `fps`, or `None`
/// if the frame is skipped. At 50 fps and below every frame is kept, and the delays are the
/// differences of the rounded frame times, so their sum never drifts. Above 50 fps, a frame is
/// kept only if it is the first one in its 2/100 s slot, and every kept frame shows for 2/100 s.
pub(super) fn gif_delay(index: u64, fps: u32) -> Option<u16> {
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

/// Quantises and LZW-compresses one frame into a GIF frame with its own palette; `None` if the
/// frame could not be quantised.
pub(super) fn quantise_gif(
    quantiser: &mut Quantiser,
    rgba: &[u8],
    width: u16,
    height: u16,
    delay: u16,
) -> Option<::gif::Frame<'static>> {
    let mut indices = Vec::new();
    let palette = quantiser.quantise(rgba, width.into(), height.into(), &mut indices)?;
    let mut frame = ::gif::Frame::from_palette_pixels(width, height, indices, palette, None);
    frame.delay = delay;
    frame.make_lzw_pre_encoded();
    Some(frame)
}

/// Slots of the exact-colour table (twice the most colours it holds).
pub(super) const EXACT_SLOTS: usize = 512;
/// An empty slot of the exact-colour table (no RGB colour packs to it).
pub(super) const NO_COLOUR: u32 = u32::MAX;

/// The histogram of Wu's method in Oklab: lightness in 64 bins, a and b in 32. quantette's
/// default (32x16x16) leaves saturated frames with too few occupied bins: 167 palette entries
/// of 256 on density-hue frames, with visible banding.
type Binner = BinnerF32x3<64, 32, 32>;
/// The share of pixels the k-means pass samples: 0.25 takes 1.5 to 2 times as long for at most
/// 0.01 dE00 less.
const KMEANS_SAMPLING: f32 = 0.1;

/// Reduces a frame to at most 256 colours: the frame's own colours if it has no more, otherwise
/// quantette's palette for it in Oklab (Wu's method over the frame's distinct colours, refined by
/// k-means), each pixel mapped to the nearest entry, without dithering. Deterministic. One per
/// quantising thread, reused from frame to frame.
#[derive(Default)]
pub(super) struct Quantiser {
    pixels: Vec<Srgb<u8>>,
    /// Open addressing table of packed RGB colours for frames with at most 256 colours.
    exact_keys: Vec<u32>,
    exact_indices: Vec<u8>,
    exact_palette: Vec<u8>,
}

impl Quantiser {
    /// Returns the palette (RGB triples, at most 256) and sets `indices` to one entry per pixel;
    /// `None` (and no indices) if `rgba` is not `width` x `height` pixels.
    pub(super) fn quantise(
        &mut self,
        rgba: &[u8],
        width: u32,
        height: u32,
        indices: &mut Vec<u8>,
    ) -> Option<Vec<u8>> {
        indices.clear();
        if self.exact(rgba, indices) {
            return Some(self.exact_palette.clone());
        }
        indices.clear();
        self.pixels.clear();
        self.pixels
            .extend(rgba.chunks_exact(4).map(|p| Srgb::new(p[0], p[1], p[2])));
        let image = ImageRef::new(width, height, self.pixels.as_slice()).ok()?;
        let distinct =
            dedup::dedup_image_u8_3_counts(image).map(|colours| srgb8_to_oklab(&colours));
        let binner = Binner::new(Binner::OKLAB_COMPONENT_RANGES_FROM_SRGB8);
        let wu = WuF32x3::run_indexed_image_counts(&distinct, binner)?;
        let kmeans = Kmeans::run_indexed_image(
            distinct.as_ref(),
            wu.palette(PaletteSize::MAX),
            KmeansOptions::new().sampling_factor(KMEANS_SAMPLING),
        );
        let (palette, mapped) = distinct
            .map_to_indexed(kmeans.into_color_map())
            .into_parts();
        *indices = mapped;
        Some(
            oklab_to_srgb8(&palette)
                .iter()
                .flat_map(|c| [c.red, c.green, c.blue])
                .collect(),
        )
    }

    /// Indexes the frame with its own colours into `exact_palette`, if it has at most 256.
    pub(super) fn exact(&mut self, rgba: &[u8], indices: &mut Vec<u8>) -> bool {
        indices.reserve(rgba.len() / 4);
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
}

/// A quantised frame for the file-writing thread; `None` if quantising failed.
pub(super) type GifResult = (u64, Option<::gif::Frame<'static>>);

/// Writes an animated GIF through a hidden temporary file beside it, renamed into place when
/// finished.
pub(super) struct GifWriter {
    path: PathBuf,
    /// The GIF being written; removed if dropped before it is persisted.
    part: Option<tempfile::NamedTempFile>,
    /// Directories `open` made, removed again if nothing is written.
    made: MadeDirs,
    width: u32,
    height: u32,
    fps: u32,
    /// Frames accepted by `write`.
    frames: u64,
    /// Frames queued for the GIF (not skipped).
    kept: u64,
    encoders: Encoders<Quantiser>,
    /// Quantised frames to the file-writing thread; `None` once it is told to finish.
    results: Option<SyncSender<GifResult>>,
    file_thread: Option<JoinHandle<u64>>,
    failure: Arc<Failure>,
    finished: bool,
}

impl GifWriter {
    pub(super) fn open(opts: &OutputOptions) -> Result<Self, RenderError> {
        let path = opts.path.clone();
        let (Ok(w16), Ok(h16)) = (u16::try_from(opts.width), u16::try_from(opts.height)) else {
            return Err(UsageError::GifTooLarge {
                path,
                width: opts.width,
                height: opts.height,
            }
            .into());
        };
        let mut made = create_parent(&path)?;
        // On an error the temporary file is dropped (removed) first, then what `made` made.
        let (part, encoders, results, file_thread, failure) = made.undo_on_error(|| {
            let part = temp_beside(&path)?;
            let file = part.as_file().try_clone().map_err(|e| {
                RenderError::output(&path, format!("could not create the file: {e}"))
            })?;
            let encoder = ::gif::Encoder::new(BufWriter::new(file), w16, h16, &[])
                .and_then(|mut e| {
                    e.set_repeat(::gif::Repeat::Infinite)?;
                    Ok(e)
                })
                .map_err(|e| {
                    RenderError::output(&path, format!("could not write the GIF header: {e}"))
                })?;

            let failure = Arc::new(Failure::default());
            let (results, quantised) = mpsc::sync_channel::<GifResult>(QUEUE_FRAMES);
            let file_failure = Arc::clone(&failure);
            let file_path = path.clone();
            let file_thread = thread::Builder::new()
                .name("dyeflow-gif-file".into())
                .spawn(move || gif_file_thread(encoder, &quantised, &file_failure, &file_path))
                .map_err(|e| RenderError::EncoderThreads {
                    path: path.clone(),
                    source: Box::new(e),
                })?;

            let encoders =
                match Encoders::new("dyeflow-gif", opts.threads.max(DEFAULT_ENCODER_THREADS)) {
                    Ok(encoders) => encoders,
                    Err(e) => {
                        // Without a sender the file thread ends at once.
                        drop(results);
                        let _ = file_thread.join();
                        return Err(RenderError::EncoderThreads {
                            path: path.clone(),
                            source: Box::new(e),
                        });
                    }
                };
            Ok((part, encoders, results, file_thread, failure))
        })?;
        Ok(Self {
            path,
            part: Some(part),
            made,
            width: opts.width,
            height: opts.height,
            fps: opts.fps,
            frames: 0,
            kept: 0,
            encoders,
            results: Some(results),
            file_thread: Some(file_thread),
            failure,
            finished: false,
        })
    }

    /// Stops the threads after the queued frames. Returns the frames in the file, or `None` if
    /// a thread died.
    fn stop_threads(&mut self) -> Option<u64> {
        let clean = self.encoders.wait();
        self.results = None;
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
pub(super) fn gif_file_thread(
    mut encoder: ::gif::Encoder<BufWriter<File>>,
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
        let Some(results) = self.results.clone() else {
            return Err(self.stopped_error());
        };
        let Some(delay) = gif_delay(self.frames, self.fps) else {
            self.frames += 1;
            return Ok(());
        };
        // Waits while the encoders are behind.
        let mut buffer = self.encoders.buffer();
        buffer.clear();
        buffer.extend_from_slice(rgba);
        let seq = self.kept;
        // Checked in `open`.
        let (w16, h16) = (self.width as u16, self.height as u16);
        let failure = Arc::clone(&self.failure);
        let path = self.path.clone();
        self.encoders.spawn(buffer, move |quantiser, rgba| {
            let frame = if failure.is_set() {
                None
            } else {
                let quantised = panic::catch_unwind(AssertUnwindSafe(|| {
                    quantise_gif(quantiser, rgba, w16, h16, delay)
                }));
                match quantised {
                    Ok(Some(frame)) => Some(frame),
                    Ok(None) => {
                        failure.set(&path, "could not quantise a frame");
                        None
                    }
                    Err(_) => {
                        *quantiser = Quantiser::default();
                        failure.set(&path, "the GIF encoder failed (out of memory?)");
                        None
                    }
                }
            };
            // Fails only if the file thread has ended, which reports why.
            let _ = results.send((seq, frame));
        });
        self.kept += 1;
        self.frames += 1;
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<Option<String>, RenderError> {
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
            self.abandon();
            return Err(error);
        }
        if self.kept == 0 {
            // A GIF with no image is no output: the earlier file stays as it was.
            self.abandon();
            return Ok(None);
        }
        if let Some(part) = self.part.take() {
            persist_beside(part, &self.path)?;
        }
        let size = human_size(file_size(&self.path));
        let path = self.path.display();
        Ok(Some(if self.kept == self.frames {
            let s = if self.kept == 1 { "" } else { "s" };
            format!("{path}, {} frame{s}, {size}", self.kept)
        } else {
            format!(
                "{path}, {} frames at {GIF_MAX_FPS} fps (of {} rendered at {} fps; GIFs play at \
                 most {GIF_MAX_FPS} fps), {size}",
                self.kept, self.frames, self.fps
            )
        }))
    }

    fn frames_written(&self) -> u64 {
        self.frames
    }
}

impl GifWriter {
    /// Remove the temporary file and the directories `open` made.
    fn abandon(&mut self) {
        self.part = None;
        self.made.remove_empty();
    }
}

impl Drop for GifWriter {
    fn drop(&mut self) {
        if !self.finished {
            // Abandoned without `finish`: leave nothing behind.
            self.stop_threads();
            self.abandon();
        }
    }
}

#[cfg(test)]
mod tests;
