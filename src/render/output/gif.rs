//! Animated GIF: every frame quantised to its own palette on background threads, written in
//! order by one more.

use super::*;

/// Quantising threads for GIF frames (they are written in order by one more thread).
pub(super) const GIF_THREADS: usize = 2;
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

/// Quantises and LZW-compresses one frame into a GIF frame with its own palette.
pub(super) fn quantise_gif(
    quantiser: &mut Quantiser,
    rgba: &[u8],
    width: u16,
    height: u16,
    delay: u16,
) -> ::gif::Frame<'static> {
    let mut indices = Vec::new();
    let palette = quantiser.quantise(rgba, &mut indices);
    let mut frame = ::gif::Frame::from_palette_pixels(width, height, indices, palette, None);
    frame.delay = delay;
    frame.make_lzw_pre_encoded();
    frame
}

/// Bits per channel of the colour histogram the palette is built from.
pub(super) const HISTOGRAM_BITS: u32 = 5;
/// Bits per channel of the cache of nearest palette entries.
pub(super) const NEAREST_BITS: u32 = 6;
/// An empty slot of the nearest-entry cache.
pub(super) const UNKNOWN: u16 = u16::MAX;
/// Slots of the exact-colour table (twice the most colours it holds).
pub(super) const EXACT_SLOTS: usize = 512;
/// An empty slot of the exact-colour table (no RGB colour packs to it).
pub(super) const NO_COLOUR: u32 = u32::MAX;

/// The histogram (or cache) bin of a pixel, keeping the top `bits` of each channel.
pub(super) fn colour_bin(pixel: &[u8], bits: u32) -> usize {
    let shift = 8 - bits;
    (usize::from(pixel[0] >> shift) << (2 * bits))
        | (usize::from(pixel[1] >> shift) << bits)
        | usize::from(pixel[2] >> shift)
}

/// A histogram bin: the mean colour of its pixels and how many there are.
#[derive(Clone, Copy)]
pub(super) struct BinColour {
    colour: [f32; 3],
    weight: f32,
}

/// A box of median cut: a range of bins, and the variance along its widest axis.
pub(super) struct ColourBox {
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
pub(super) fn add_weighted(sum: &mut [f64; 4], bin: &BinColour) {
    let weight = f64::from(bin.weight);
    for (s, c) in sum.iter_mut().zip(bin.colour) {
        *s += f64::from(c) * weight;
    }
    sum[3] += weight;
}

/// The weighted mean colour of some bins.
pub(super) fn mean_colour(bins: &[BinColour]) -> [f32; 3] {
    let mut sum = [0.0f64; 4];
    for bin in bins {
        add_weighted(&mut sum, bin);
    }
    [0, 1, 2].map(|a| (sum[a] / sum[3].max(f64::MIN_POSITIVE)) as f32)
}

/// A palette as RGB bytes.
pub(super) fn palette_bytes(palette: &[[f32; 3]]) -> Vec<u8> {
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
pub(super) struct Quantiser {
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
    pub(super) fn quantise(&mut self, rgba: &[u8], indices: &mut Vec<u8>) -> Vec<u8> {
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
    pub(super) fn exact(&mut self, rgba: &[u8], indices: &mut Vec<u8>) -> bool {
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
    pub(super) fn palette(&mut self, rgba: &[u8]) -> Vec<u8> {
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
    pub(super) fn set_palette(&mut self, palette: &[u8]) {
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
    pub(super) fn nearest_entry(&self, r: i32, g: i32, b: i32) -> u8 {
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
            return Err(RenderError::Usage(format!(
                "{}: a GIF can be at most 65535x65535 pixels, not {}x{}",
                path.display(),
                opts.width,
                opts.height
            )));
        };
        let mut made = create_parent(&path)?;
        let part = match temp_beside(&path) {
            Ok(part) => part,
            Err(e) => {
                made.remove_empty();
                return Err(e);
            }
        };
        let file = part
            .as_file()
            .try_clone()
            .map_err(|e| RenderError::output(&path, format!("could not create the file: {e}")))?;
        let header = ::gif::Encoder::new(BufWriter::new(file), w16, h16, &[]).and_then(|mut e| {
            e.set_repeat(::gif::Repeat::Infinite)?;
            Ok(e)
        });
        let encoder = match header {
            Ok(encoder) => encoder,
            Err(e) => {
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
                return Err(RenderError::output(
                    &path,
                    format!("could not start the encoder threads: {e}"),
                ));
            }
        };

        let encoders = match Encoders::new("dyeflow-gif", GIF_THREADS) {
            Ok(encoders) => encoders,
            Err(e) => {
                // Without a sender the file thread ends at once.
                drop(results);
                let _ = file_thread.join();
                return Err(RenderError::output(
                    &path,
                    format!("could not start the encoder threads: {e}"),
                ));
            }
        };
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
                if quantised.is_err() {
                    *quantiser = Quantiser::default();
                    failure.set(&path, "the GIF encoder failed (out of memory?)");
                }
                quantised.ok()
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
            part.persist(&self.path).map_err(|e| {
                RenderError::output(
                    &self.path,
                    format!(
                        "could not rename {} to it: {}",
                        e.file.path().display(),
                        e.error
                    ),
                )
            })?;
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
