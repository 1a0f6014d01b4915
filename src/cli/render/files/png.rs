//! PNG frames: `frame_000001.png`, … in a directory, encoded on background threads.

use super::*;

#[cfg(test)]
mod tests;

/// The PNG row filter, with fdeflate's fast compression (`Compression::Fast`), which the
/// measurements below (and on 2026-11-28, whole renders) chose over every other level: on the
/// demo's 1280x720 frames zlib's level 1 (through flate2) took 1.7x the render's CPU time for
/// files 9 % larger, level 6 5x the encoding time for files 10 % smaller, and no compression
/// saved 12 % of the CPU time for files 2.8 times the size (whose writing cost the kernel
/// 25 % more time). The row filter: Paeth: on the demo's dithered 1280x720 frames (fdeflate,
/// `Compression::Fast`, 2026-11-23) it encodes in 8.7-9.2 ms, 1.2-1.5 ms faster than choosing
/// the filter per row (`Adaptive`), for files 0.1-2 % larger (about 1 MB); `Up` is 0.3-0.4 ms
/// faster still but up to 11 % larger. (Before the dither, on smooth frames, `Adaptive` was
/// 20 % smaller than `Up`.) See the `encode_speed` benchmark.
pub(super) const PNG_FILTER: ::png::Filter = ::png::Filter::Paeth;

/// The file name of frame `index` (1-based).
pub(super) fn frame_name(index: u64) -> String {
    format!("frame_{index:06}.png")
}

/// The index of the frame whose file is named `name` ([`frame_name`]'s names only).
pub(super) fn frame_index(name: &str) -> Option<u64> {
    let k = name
        .strip_prefix("frame_")?
        .strip_suffix(".png")?
        .parse::<u64>()
        .ok()?;
    (k > 0 && frame_name(k) == name).then_some(k)
}

/// The file that marks a directory as a Dyeflow render's, written by every render of PNG
/// frames: which files that render wrote. A render writes frames only into a directory that
/// is new, empty, or marked, and removes or replaces only files a marker lists: a directory
/// of the user's own files is never a render's, however its files are named.
pub const RENDER_MARKER: &str = ".dyeflow-render.json";

/// What [`RENDER_MARKER`] holds.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(super) struct Marker {
    /// The marker's format, 1.
    #[serde(rename = "dyeflow-render")]
    pub format: u32,
    /// The render wrote `frame_000001.png` to this frame.
    pub frames: u64,
    /// And this generated audio file (the demo's), if any.
    pub audio: Option<String>,
}

/// Whether a name is one of the hidden staging directories of a render (one that was killed
/// leaves it behind).
fn is_staging(name: &str) -> bool {
    name.starts_with(".dyeflow-render-") && name.ends_with(".part")
}

/// The largest render marker read (one a render writes is under a hundred bytes).
const MAX_MARKER_BYTES: u64 = 64 << 10;

/// An earlier render in the output directory, as its marker and the directory say.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Earlier {
    /// Its marker (untrusted: whatever the file says, within its format).
    pub marker: Marker,
    /// The highest frame of it found in the directory (0 for none): what a new render may
    /// have to replace or remove, whatever count the marker claims.
    pub last_on_disk: u64,
}

/// Read a render marker: a small regular file in the marker's format, whose audio file (if
/// any) is a plain name in the directory. `None` if it is anything else.
fn read_marker(path: &Path) -> Option<Marker> {
    use std::io::Read;
    let mut bytes = Vec::new();
    crate::preset::open_regular(path)
        .ok()?
        .take(MAX_MARKER_BYTES + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    if bytes.len() as u64 > MAX_MARKER_BYTES {
        return None;
    }
    let marker = serde_json::from_slice::<Marker>(&bytes).ok()?;
    let plain = |name: &str| {
        let mut parts = Path::new(name).components();
        matches!(
            (parts.next(), parts.next()),
            (Some(std::path::Component::Normal(_)), None)
        ) && name.len() <= 255
    };
    (marker.format == 1 && marker.audio.as_deref().is_none_or(plain)).then_some(marker)
}

/// What is in the output directory `dir` already: nothing (or no directory yet), or an earlier
/// render's frames (its marker). A directory holding anything else is refused, and so is a
/// render's directory holding a file named as one of the frames a new render may write that
/// the earlier render did not write: a render never removes or replaces a file it did not
/// write. What the directory holds is listed, never taken from the marker's count.
fn earlier_render(dir: &Path, max_frames: Option<u64>) -> Result<Option<Earlier>, RenderError> {
    let Ok(entries) = fs::read_dir(dir) else {
        // No directory yet, or not one: `create_dir` makes it or says why not.
        return Ok(None);
    };
    let mut marked = false;
    let mut others = Vec::new();
    for entry in entries {
        let entry = entry
            .map_err(|e| RenderError::output(dir, format!("could not list the directory: {e}")))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == RENDER_MARKER {
            marked = true;
        } else if !is_staging(&name) {
            others.push(name);
        }
    }
    others.sort();
    if !marked {
        return match others.first() {
            None => Ok(None),
            Some(first) => Err(UsageError::NotARender {
                path: dir.to_owned(),
                first: first.clone(),
                more: others.len() - 1,
            }
            .into()),
        };
    }
    let path = dir.join(RENDER_MARKER);
    let marker = read_marker(&path).ok_or(UsageError::BadRenderMarker { path })?;
    let mine = |k: u64| k <= marker.frames || max_frames.is_some_and(|most| k > most);
    if let Some(name) = others
        .iter()
        .find(|n| frame_index(n).is_some_and(|k| !mine(k)))
    {
        return Err(UsageError::NotItsFrame {
            path: dir.join(name),
            frames: marker.frames,
        }
        .into());
    }
    let last_on_disk = others
        .iter()
        .filter_map(|n| frame_index(n))
        .filter(|&k| k <= marker.frames)
        .max()
        .unwrap_or(0);
    Ok(Some(Earlier {
        marker,
        last_on_disk,
    }))
}

/// The frames of an earlier render (those its marker claims, `1..=claimed`) in `dir` past
/// `frames`, as the directory lists them now.
fn frames_past(dir: &Path, frames: u64, claimed: u64) -> io::Result<Vec<PathBuf>> {
    let mut past = Vec::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        if let Some(k) = name.to_str().and_then(frame_index)
            && k > frames
            && k <= claimed
            && entry.file_type().is_ok_and(|t| t.is_file())
        {
            past.push(entry.path());
        }
    }
    past.sort();
    Ok(past)
}

/// Remove `paths` (an earlier render's frames), asking `stopped` before each: whether all
/// were removed (false when a stop came first).
fn remove_all(paths: &[PathBuf], stopped: impl Fn() -> bool) -> Result<bool, RenderError> {
    for path in paths {
        if stopped() {
            return Ok(false);
        }
        fs::remove_file(path).map_err(|e| {
            RenderError::output(
                path,
                format!("could not remove this frame of an earlier render: {e}"),
            )
        })?;
    }
    Ok(true)
}

/// `rgba`'s pixels without their alpha, into `rgb`: four pixels (16 bytes) at a time as three
/// little-endian words, which runs several times faster than copying 3 bytes a pixel.
pub(super) fn rgba_to_rgb(rgba: &[u8], rgb: &mut Vec<u8>) {
    let pixels = rgba.len() / 4;
    rgb.clear();
    rgb.resize(pixels * 3, 0);
    let (whole, rest) = rgba[..pixels * 4].split_at(pixels / 4 * 16);
    let word = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    for (src, dst) in whole.chunks_exact(16).zip(rgb.chunks_exact_mut(12)) {
        let (p0, p1, p2, p3) = (
            word(&src[0..]),
            word(&src[4..]),
            word(&src[8..]),
            word(&src[12..]),
        );
        dst[0..4].copy_from_slice(&(p0 & 0x00ff_ffff | p1 << 24).to_le_bytes());
        dst[4..8].copy_from_slice(&((p1 >> 8) & 0xffff | p2 << 16).to_le_bytes());
        dst[8..12].copy_from_slice(&((p2 >> 16) & 0xff | p3 << 8).to_le_bytes());
    }
    let done = whole.len() / 4 * 3;
    for (src, dst) in rest.chunks_exact(4).zip(rgb[done..].chunks_exact_mut(3)) {
        dst.copy_from_slice(&src[..3]);
    }
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
    rgba_to_rgb(rgba, rgb);
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
    /// The earlier render in `dir`, if there is one.
    earlier: Option<Earlier>,
    /// The stops requested: one during `finish` ends the removal of an earlier render's
    /// frames past this one's (the marker still lists them, so a later render removes them).
    stops: StopRequests,
}

impl PngWriter {
    pub(super) fn open(opts: &OutputOptions) -> Result<Self, RenderError> {
        let dir = opts.path.clone();
        let earlier = earlier_render(&dir, opts.max_frames)?;
        // A generated audio file never replaces a different file of the user's; the same
        // file (from an earlier render of the demo) needs no writing.
        let mut sidecar_name = None;
        let sidecar = match &opts.audio {
            Some(AudioOut::Generated { name, bytes }) => {
                let target = dir.join(name);
                sidecar_name = Some(*name);
                let ours = earlier
                    .as_ref()
                    .is_some_and(|e| e.marker.audio.as_deref() == Some(*name));
                match fs::read(&target) {
                    Ok(existing) if existing == *bytes => None,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => Some((*name, bytes)),
                    _ if ours => Some((*name, bytes)),
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
            let encoders = Encoders::new("dyeflow-png", opts.threads).map_err(|e| {
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
            earlier,
            stops: opts.stops.clone(),
        })
    }

    /// Move the staged frames (and audio) into the output directory, in place of an earlier
    /// render's frames; remove that render's frames past this one's; mark the directory.
    fn commit(&mut self) -> Result<(), RenderError> {
        let Some(staging) = self.staging.take() else {
            return Ok(());
        };
        let stops_at_start = self.stops.count();
        // The earlier render's frames as found on disk, not as many as its marker claims.
        let old_frames = self.earlier.as_ref().map_or(0, |e| e.last_on_disk);
        let claimed = self.earlier.as_ref().map_or(0, |e| e.marker.frames);
        let audio = self
            .sidecar
            .map(str::to_owned)
            .or_else(|| self.earlier.as_ref().and_then(|e| e.marker.audio.clone()));
        let (staged, dir) = (staging.path().to_owned(), self.dir.clone());
        // Written in the staging directory, then renamed into place.
        let mark = |frames: u64| {
            let marker = Marker {
                format: 1,
                frames,
                audio: audio.clone(),
            };
            let (from, to) = (staged.join(RENDER_MARKER), dir.join(RENDER_MARKER));
            serde_json::to_vec(&marker)
                .map_err(io::Error::other)
                .and_then(|json| fs::write(&from, json))
                .and_then(|()| fs::rename(&from, &to))
                .map_err(|e| RenderError::output(&to, format!("could not write it: {e}")))
        };
        // A frame's name the earlier render did not write, taken by a file since `open`
        // looked: the user's, never replaced.
        for k in old_frames.saturating_add(1)..=self.frames {
            let to = self.dir.join(frame_name(k));
            if fs::symlink_metadata(&to).is_ok() {
                let kept = staging.keep();
                return Err(RenderError::output(
                    &to,
                    format!(
                        "a file that no render wrote appeared under this frame's name during the \
                         render, and Dyeflow does not overwrite it; the new render is in {}",
                        kept.display()
                    ),
                ));
            }
        }
        // Then the marker of both renders' files, so that a failure half-way leaves a
        // directory still known as a render's.
        mark(old_frames.max(self.frames))?;
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
        // The earlier render's frames past this one's (its own, as its marker says), as the
        // directory lists them. A stop requested meanwhile leaves the rest (the marker still
        // names them, so the next render into this directory removes them).
        let past = frames_past(&self.dir, self.frames, claimed).map_err(|e| {
            RenderError::output(&self.dir, format!("could not list the directory: {e}"))
        })?;
        if remove_all(&past, || self.stops.count() > stops_at_start)? {
            mark(self.frames)?;
        }
        drop(staging);
        Ok(())
    }
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
    let name = frame_name(index);
    let path = dir.join(&name);
    // Errors name the output directory (the user's), not the staging directory inside it.
    let shown = dir.parent().unwrap_or(dir);
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
                .set(shown, format!("could not encode {name}: {e}"));
            return;
        }
        Err(_) => {
            *scratch = PngScratch::default();
            shared.failure.set(
                shown,
                format!("the PNG encoder failed on {name} (out of memory?)"),
            );
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
                .set(shown, format!("could not write {name}: {e}"));
        }
    }
}

impl PngWriter {
    /// Hand `frame` (checked) to the encoders as the next frame.
    fn queue(&mut self, frame: Vec<u8>) {
        let index = self.frames + 1;
        let size = (self.width, self.height);
        let shared = Arc::clone(&self.shared);
        // The staging directory lives until the encoders have ended (see `Drop`).
        let dir = Arc::clone(&self.staged);
        self.encoders.spawn(frame, move |scratch, rgba| {
            png_job(&dir, size, &shared, scratch, index, rgba);
        });
        self.frames += 1;
    }

    /// The checks before a frame is taken: its size, and an earlier frame's error.
    fn check(&self, rgba: &[u8]) -> Result<(), RenderError> {
        check_frame(&self.dir, rgba, self.width, self.height)?;
        match self.shared.failure.error() {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }
}

impl FrameWriter for PngWriter {
    fn write(&mut self, rgba: &[u8]) -> Result<(), RenderError> {
        self.check(rgba)?;
        // Waits while the encoders are behind.
        let mut buffer = self.encoders.buffer();
        buffer.clear();
        buffer.extend_from_slice(rgba);
        self.queue(buffer);
        Ok(())
    }

    fn write_swap(&mut self, rgba: &mut Vec<u8>) -> Result<(), RenderError> {
        self.check(rgba)?;
        // Waits while the encoders are behind. A used buffer has the frame's size; a new
        // one is sized (zeroed) once.
        let mut next = self.encoders.buffer();
        next.resize(rgba.len(), 0);
        let frame = std::mem::replace(rgba, next);
        self.queue(frame);
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
