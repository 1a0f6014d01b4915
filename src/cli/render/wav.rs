//! WAV input for `dyeflow render`: mono or stereo PCM (8, 16, 24 or 32-bit integer, or 32-bit
//! float) decoded by hound into `f32` channels, streamed block by block so memory stays small
//! whatever the file's length.
//!
//! Reading is strict: a data chunk that ends before the length its header promises is an error
//! ("truncated WAV data"), not a shorter song, and so is an empty data chunk. Both are found when
//! the file is opened, before any output is written. Streaming writers that leave the data
//! length unset (0 or 0xFFFFFFFF) therefore produce files this module rejects; such files need
//! rewriting (e.g. `ffmpeg -i in.wav out.wav`).
//!
//! Why this file is long: about 350 of its lines are tests (every format, every malformed
//! header); the reader itself is one streaming parser.

use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use hound::{SampleFormat, WavReader};

use super::RenderError;

/// The lowest sample rate accepted, in Hz.
pub const MIN_SAMPLE_RATE: u32 = 1_000;

/// The highest sample rate accepted, in Hz.
pub const MAX_SAMPLE_RATE: u32 = 768_000;

/// The longest audio accepted, in seconds (4 hours).
pub const MAX_DURATION_S: u64 = 4 * 60 * 60;

/// How many bytes of the file's start are kept to describe an encoding hound rejects.
const HEADER_RECORD_BYTES: usize = 64 * 1024;

/// Why a WAV stream cannot be read. Each message is a short problem phrase without a file
/// name (the caller adds it), e.g. "not a WAV file (no RIFF/WAVE header)".
#[derive(Debug, thiserror::Error)]
pub enum WavError {
    /// Reading the stream failed.
    #[error("read error ({0})")]
    Read(#[source] io::Error),
    /// The stream has no bytes.
    #[error("empty file")]
    Empty,
    /// An RF64 or BW64 container (64-bit sizes), which hound does not read.
    #[error("unsupported WAV container (RF64/BW64); Dyeflow reads plain RIFF WAV files")]
    Rf64,
    /// `RIFF` but fewer than the 12 bytes of a RIFF/WAVE header.
    #[error("truncated WAV file (header ends early)")]
    HeaderCut,
    /// No RIFF/WAVE header.
    #[error("not a WAV file (no RIFF/WAVE header)")]
    NotWav,
    /// The header is unreadable for a reason other than a known unsupported encoding.
    #[error("unreadable WAV header ({reason})")]
    BadHeader {
        /// hound's reason, without its "Ill-formed WAVE file: " prefix.
        reason: String,
    },
    /// The file ends inside the chunks before the audio data.
    #[error("truncated WAV file (it ends before the audio data)")]
    EndsBeforeData,
    /// More than two channels.
    #[error("has {0} channels; Dyeflow reads mono or stereo WAV")]
    Channels(usize),
    /// An encoding other than 8/16/24/32-bit integer or 32-bit float PCM.
    #[error(
        "unsupported WAV encoding ({encoding}); Dyeflow reads 8/16/24/32-bit integer or 32-bit \
         float PCM"
    )]
    Encoding {
        /// A human name for the encoding, e.g. "A-law" or "64-bit float".
        encoding: String,
    },
    /// hound could not decode the samples of an encoding that passed the header check.
    #[error("unsupported WAV encoding ({encoding}: {source})")]
    Samples {
        /// A human name for the encoding.
        encoding: String,
        /// hound's error.
        #[source]
        source: hound::Error,
    },
    /// A sample rate outside [`MIN_SAMPLE_RATE`]..=[`MAX_SAMPLE_RATE`].
    #[error(
        "sample rate {0} Hz is outside the supported range {min}–{max} Hz",
        min = MIN_SAMPLE_RATE,
        max = MAX_SAMPLE_RATE
    )]
    SampleRate(u32),
    /// The data chunk holds no frames.
    #[error("no audio (the WAV data chunk is empty)")]
    NoAudio,
    /// Longer than [`MAX_DURATION_S`].
    #[error(
        "too long ({hours:.1} hours of audio; Dyeflow reads at most {max} hours)",
        max = MAX_DURATION_S / 3600
    )]
    TooLong {
        /// The audio's length in hours.
        hours: f64,
    },
    /// The data chunk is shorter than its header says.
    #[error(
        "truncated WAV data (the header promises {promised} frames, the file ends after \
         {present})"
    )]
    DataCut {
        /// Frames the header declares.
        promised: u64,
        /// Whole frames in the file.
        present: u64,
    },
    /// The stream ended while samples were read (it shrank after it was opened).
    #[error("truncated WAV data (the file ended while it was read)")]
    EndedWhileReading,
    /// A seek to a frame past what hound can address.
    #[error("cannot seek to frame {0}: past the end of what a WAV file can hold")]
    SeekTooFar(u64),
}

/// Audio in memory: 1 or 2 channels of f32 samples, equal lengths. Integer samples are in
/// -1..1 (full scale is 1); float samples keep their values (they may exceed 1), except that
/// NaN and infinities become 0.
#[derive(Clone, Debug)]
pub struct Audio {
    /// Frames per second.
    pub sample_rate: u32,
    /// One vector per channel (1 or 2), all of the same length.
    pub channels: Vec<Vec<f32>>,
}

impl Audio {
    /// The length in seconds (0 if the sample rate is 0).
    pub fn duration_s(&self) -> f64 {
        if self.sample_rate == 0 {
            0.0
        } else {
            self.frames() as f64 / f64::from(self.sample_rate)
        }
    }

    /// The number of frames (samples per channel).
    pub fn frames(&self) -> usize {
        self.channels.first().map_or(0, Vec::len)
    }
}

/// An open WAV file whose samples are decoded on demand, a block at a time.
pub struct WavStream<R: Read + Seek = BufReader<File>> {
    wav: WavReader<Spliced<R>>,
    /// Frames per second.
    pub sample_rate: u32,
    /// Channels: 1 or 2.
    pub channels: usize,
    /// Frames in the file.
    pub frames: u64,
    format: SampleFormat,
    bits: u16,
    /// Whether hound's `seek` lands right (it assumes `bits / 8` bytes per sample, which a
    /// padded container such as 24 bits in 4 bytes breaks; then a seek reads and discards).
    seekable: bool,
    /// The frame the next read returns.
    next: u64,
    /// Interleaved scratch for one read.
    scratch: Vec<f32>,
}

/// Open a WAV file for streaming. Every failure (missing, unreadable, empty, truncated or
/// unsupported file) becomes [`RenderError::Input`] naming the path.
pub fn open(path: &Path) -> Result<WavStream, RenderError> {
    let (file, len) = super::open_input(path)?;
    WavStream::new(BufReader::new(file), len).map_err(|problem| RenderError::input(path, problem))
}

/// Decode a whole WAV stream into memory.
///
/// # Errors
/// A [`WavError`] for a stream that is unreadable, not a WAV file, or one Dyeflow does not
/// read.
pub fn read(mut reader: impl Read) -> Result<Audio, WavError> {
    let mut bytes = Vec::new();
    reader.read_to_end(&mut bytes).map_err(WavError::Read)?;
    let len = bytes.len() as u64;
    let mut stream = WavStream::new(io::Cursor::new(bytes), len)?;
    let frames = usize::try_from(stream.frames).map_err(|_| WavError::TooLong {
        hours: stream.duration_s() / 3600.0,
    })?;
    let mut channels = vec![Vec::new(); stream.channels];
    stream.block(0, frames as u64, &mut channels)?;
    Ok(Audio {
        sample_rate: stream.sample_rate,
        channels,
    })
}

impl<R: Read + Seek> WavStream<R> {
    /// Read and check the header of a WAV stream `len` bytes long: the encoding, the rate, the
    /// length, and that the data chunk is all there.
    pub fn new(mut reader: R, len: u64) -> Result<Self, WavError> {
        let mut record = Vec::with_capacity(256);
        (&mut reader)
            .take(HEADER_RECORD_BYTES as u64)
            .read_to_end(&mut record)
            .map_err(WavError::Read)?;
        check_riff_wave(&record[..record.len().min(12)])?;
        // hound walks the chunks itself but forgets the pad byte after a chunk of odd length
        // (and reads only 4 bytes of a `fact` chunk), so a valid file with such a chunk before
        // the audio read as truncated or damaged. The chunks are walked here, by the RIFF
        // rules, and hound sees only the fmt chunk and the data.
        let chunks = walk_chunks(&mut reader, len)?;
        let mut reader = Spliced::new(reader, &chunks, len).map_err(WavError::Read)?;
        let wav = WavReader::new(&mut reader).map_err(|e| header_problem(e, &record))?;

        let spec = wav.spec();
        let channels = usize::from(spec.channels);
        if channels > 2 {
            return Err(WavError::Channels(channels));
        }
        match (spec.sample_format, spec.bits_per_sample) {
            (SampleFormat::Int, 8 | 16 | 24 | 32) | (SampleFormat::Float, 32) => {}
            (format, bits) => {
                return Err(WavError::Encoding {
                    encoding: encoding_name(format, bits),
                });
            }
        }
        if !(MIN_SAMPLE_RATE..=MAX_SAMPLE_RATE).contains(&spec.sample_rate) {
            return Err(WavError::SampleRate(spec.sample_rate));
        }
        let frames = u64::from(wav.duration());
        if frames == 0 {
            return Err(WavError::NoAudio);
        }
        if frames > MAX_DURATION_S * u64::from(spec.sample_rate) {
            return Err(WavError::TooLong {
                hours: frames as f64 / f64::from(spec.sample_rate) / 3600.0,
            });
        }
        // The data chunk must all be there: hound's reader stands at its start.
        let block_align = find_fmt(&record)
            .map(|f| u64::from(f.block_align))
            .filter(|&b| b > 0 && b.is_multiple_of(channels as u64))
            .unwrap_or(channels as u64 * u64::from(spec.bits_per_sample.div_ceil(8)));
        let present = len.saturating_sub(chunks.data_at) / block_align;
        if present < frames {
            return Err(WavError::DataCut {
                promised: frames,
                present,
            });
        }
        reader.seek(SeekFrom::Start(0)).map_err(WavError::Read)?;
        let wav = WavReader::new(reader).map_err(|e| header_problem(e, &record))?;
        Ok(Self {
            wav,
            sample_rate: spec.sample_rate,
            channels,
            frames,
            format: spec.sample_format,
            bits: spec.bits_per_sample,
            seekable: spec.bits_per_sample.is_multiple_of(8)
                && block_align == channels as u64 * u64::from(spec.bits_per_sample / 8),
            next: 0,
            scratch: Vec::new(),
        })
    }

    /// The length in seconds.
    pub fn duration_s(&self) -> f64 {
        self.frames as f64 / f64::from(self.sample_rate)
    }

    /// Append frames `from..to` of each channel to `out` (one vector per channel: 1 or 2),
    /// with zeros past the end of the audio. Reading forwards block after block is cheapest;
    /// any other `from` seeks.
    pub fn block(&mut self, from: u64, to: u64, out: &mut [Vec<f32>]) -> Result<(), WavError> {
        let to = to.max(from);
        let end = to.min(self.frames);
        if from < end && from != self.next {
            self.seek(from)?;
        }
        let n = end.saturating_sub(from) as usize;
        let count = n * self.channels;
        self.scratch.clear();
        let sample_problem = |e: hound::Error| match e {
            hound::Error::IoError(e) if is_eof(&e) => WavError::EndedWhileReading,
            hound::Error::IoError(e) => WavError::Read(e),
            other => WavError::Samples {
                encoding: encoding_name(self.format, self.bits),
                source: other,
            },
        };
        match self.format {
            SampleFormat::Int => {
                // Full scale of an n-bit integer is 2^(n-1); a power of two scales exactly.
                let scale = 1.0 / (1u64 << (self.bits - 1)) as f32;
                for sample in self.wav.samples::<i32>().take(count) {
                    self.scratch
                        .push(sample.map_err(sample_problem)? as f32 * scale);
                }
            }
            SampleFormat::Float => {
                for sample in self.wav.samples::<f32>().take(count) {
                    let x = sample.map_err(sample_problem)?;
                    self.scratch.push(if x.is_finite() { x } else { 0.0 });
                }
            }
        }
        if self.scratch.len() != count {
            return Err(WavError::EndedWhileReading);
        }
        self.next = from + n as u64;
        for (c, channel) in out.iter_mut().enumerate() {
            let source = c.min(self.channels - 1);
            channel.extend(self.scratch.iter().skip(source).step_by(self.channels));
            // Silence past the end of the audio.
            channel.resize(channel.len() + (to - from) as usize - n, 0.0);
        }
        Ok(())
    }

    /// Make `frame` the next one read.
    fn seek(&mut self, frame: u64) -> Result<(), WavError> {
        if self.seekable {
            self.wav
                .seek(u32::try_from(frame).map_err(|_| WavError::SeekTooFar(frame))?)
                .map_err(WavError::Read)?;
        } else {
            if frame < self.next {
                self.wav.seek(0).map_err(WavError::Read)?;
                self.next = 0;
            }
            // Read and discard: only for padded containers.
            let mut skip = Vec::new();
            while self.next < frame {
                let n = (frame - self.next).min(1 << 16);
                skip.clear();
                skip.resize(self.channels, Vec::new());
                let at = self.next;
                self.block(at, at + n, &mut skip)?;
            }
        }
        self.next = frame;
        Ok(())
    }
}

/// Where a WAV file's fmt chunk and audio data are.
#[derive(Clone, Copy, Debug)]
struct Chunks {
    /// The fmt chunk's body: its offset and length.
    fmt_at: u64,
    fmt_len: u32,
    /// The data chunk's body: its offset and the length its header gives.
    data_at: u64,
    data_len: u32,
}

/// The longest fmt chunk read (the standard ones are 16, 18 and 40 bytes).
const MAX_FMT_BYTES: u32 = 1 << 16;

/// Walk the RIFF chunks of a WAV file `len` bytes long, from the first after the 12-byte
/// header to the data chunk: each chunk's body is followed by a pad byte when its length is
/// odd (RIFF's rule). The fmt chunk must come before the data.
fn walk_chunks<R: Read + Seek>(reader: &mut R, len: u64) -> Result<Chunks, WavError> {
    let mut at = 12u64;
    let mut fmt = None;
    loop {
        if at.saturating_add(8) > len {
            return Err(WavError::EndsBeforeData);
        }
        reader.seek(SeekFrom::Start(at)).map_err(WavError::Read)?;
        let mut head = [0u8; 8];
        reader.read_exact(&mut head).map_err(|e| {
            if is_eof(&e) {
                WavError::EndsBeforeData
            } else {
                WavError::Read(e)
            }
        })?;
        let size = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
        let body = at + 8;
        match &head[..4] {
            b"fmt " => {
                if size > MAX_FMT_BYTES {
                    return Err(WavError::BadHeader {
                        reason: format!("a fmt chunk of {size} bytes"),
                    });
                }
                if body + u64::from(size) > len {
                    return Err(WavError::EndsBeforeData);
                }
                fmt = Some((body, size));
            }
            b"data" => {
                let Some((fmt_at, fmt_len)) = fmt else {
                    return Err(WavError::BadHeader {
                        reason: "missing fmt chunk".into(),
                    });
                };
                return Ok(Chunks {
                    fmt_at,
                    fmt_len,
                    data_at: body,
                    data_len: size,
                });
            }
            _ => {}
        }
        at = body + u64::from(size) + u64::from(size & 1);
    }
}

/// A WAV file as hound is shown it: a plain header (RIFF/WAVE, the file's fmt chunk, the data
/// chunk's header), then the file's bytes from the data's start on. Seeks and reads go to the
/// file only where they must, so streaming forwards reads it in order.
struct Spliced<R> {
    head: Vec<u8>,
    inner: R,
    /// Where the data starts in the file.
    data_at: u64,
    /// The length of what hound sees.
    total: u64,
    /// Where hound stands.
    pos: u64,
    /// Where the file stands, when known.
    inner_pos: Option<u64>,
}

impl<R: Read + Seek> Spliced<R> {
    fn new(mut inner: R, chunks: &Chunks, len: u64) -> io::Result<Self> {
        let mut fmt = vec![0u8; chunks.fmt_len as usize];
        inner.seek(SeekFrom::Start(chunks.fmt_at))?;
        inner.read_exact(&mut fmt)?;
        let mut head = Vec::with_capacity(28 + fmt.len());
        let riff = (4 + 8 + fmt.len() as u64 + 8 + u64::from(chunks.data_len)).min(0xFFFF_FFFF);
        head.extend_from_slice(b"RIFF");
        head.extend_from_slice(&(riff as u32).to_le_bytes());
        head.extend_from_slice(b"WAVEfmt ");
        head.extend_from_slice(&chunks.fmt_len.to_le_bytes());
        head.extend_from_slice(&fmt);
        head.extend_from_slice(b"data");
        head.extend_from_slice(&chunks.data_len.to_le_bytes());
        let total = head.len() as u64 + len.saturating_sub(chunks.data_at);
        Ok(Self {
            head,
            inner,
            data_at: chunks.data_at,
            total,
            pos: 0,
            inner_pos: None,
        })
    }
}

impl<R: Read + Seek> Read for Spliced<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let head = self.head.len() as u64;
        if self.pos < head {
            let from = self.pos as usize;
            let n = buf.len().min(self.head.len() - from);
            buf[..n].copy_from_slice(&self.head[from..from + n]);
            self.pos += n as u64;
            return Ok(n);
        }
        let at = self.data_at + (self.pos - head);
        if self.inner_pos != Some(at) {
            self.inner.seek(SeekFrom::Start(at))?;
        }
        let n = self.inner.read(buf);
        self.inner_pos = None;
        let n = n?;
        self.inner_pos = Some(at + n as u64);
        self.pos += n as u64;
        Ok(n)
    }
}

impl<R: Read + Seek> Seek for Spliced<R> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
            SeekFrom::End(d) => self.total.checked_add_signed(d),
        };
        self.pos = target.ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "a seek before the start")
        })?;
        Ok(self.pos)
    }
}

/// Check the 12-byte RIFF/WAVE header (`head` is shorter if the stream is).
fn check_riff_wave(head: &[u8]) -> Result<(), WavError> {
    if head.is_empty() {
        return Err(WavError::Empty);
    }
    if head.starts_with(b"RF64") || head.starts_with(b"BW64") {
        return Err(WavError::Rf64);
    }
    if head.starts_with(b"RIFF") && head.len() < 12 {
        return Err(WavError::HeaderCut);
    }
    if head.len() < 12 || &head[..4] != b"RIFF" || &head[8..12] != b"WAVE" {
        return Err(WavError::NotWav);
    }
    Ok(())
}

/// Whether an I/O error means the stream ended early. hound reports a short read as an
/// `Other` error ("Failed to read enough bytes.").
fn is_eof(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::UnexpectedEof
        || (e.kind() == io::ErrorKind::Other && e.to_string().contains("enough bytes"))
}

/// The error for a failure of [`WavReader::new`]; `record` is the file's start.
fn header_problem(e: hound::Error, record: &[u8]) -> WavError {
    let fmt = find_fmt(record);
    match e {
        hound::Error::IoError(e) if is_eof(&e) => WavError::EndsBeforeData,
        hound::Error::IoError(e) => WavError::Read(e),
        hound::Error::Unsupported => WavError::Encoding {
            encoding: fmt.map_or_else(|| "unknown".to_string(), |f| f.describe()),
        },
        other => match fmt {
            Some(f) if !f.is_supported() => WavError::Encoding {
                encoding: f.describe(),
            },
            _ => WavError::BadHeader {
                reason: hound_reason(&other),
            },
        },
    }
}

/// hound's error text without its "Ill-formed WAVE file: " prefix.
fn hound_reason(e: &hound::Error) -> String {
    match e {
        hound::Error::FormatError(reason) => (*reason).to_string(),
        other => other.to_string(),
    }
}

/// The encoding fields of a fmt chunk, as far as needed to name it.
#[derive(Clone, Copy, Debug)]
struct FmtInfo {
    /// The format tag, or the sub-format's tag for WAVE_FORMAT_EXTENSIBLE.
    tag: u16,
    bits: u16,
    /// Bytes per frame (all channels).
    block_align: u16,
}

impl FmtInfo {
    fn is_supported(self) -> bool {
        matches!((self.tag, self.bits), (1, 8 | 16 | 24 | 32) | (3, 32))
    }

    fn describe(self) -> String {
        match self.tag {
            1 => format!("{}-bit integer PCM", self.bits),
            3 => format!("{}-bit float", self.bits),
            2 => "Microsoft ADPCM".into(),
            6 => "A-law".into(),
            7 => "µ-law".into(),
            0x11 => "IMA ADPCM".into(),
            0x31 => "GSM 6.10".into(),
            0x50 => "MPEG".into(),
            0x55 => "MP3".into(),
            0xFFFE => "WAVE_FORMAT_EXTENSIBLE with an unknown sub-format".into(),
            tag => format!("format tag 0x{tag:04X}"),
        }
    }
}

/// Find and decode the fmt chunk in the recorded start of a RIFF/WAVE file.
fn find_fmt(record: &[u8]) -> Option<FmtInfo> {
    let le16 = |b: &[u8], i: usize| Some(u16::from_le_bytes([*b.get(i)?, *b.get(i + 1)?]));
    let mut rest = record.get(12..)?;
    while rest.len() >= 8 {
        let len = u32::from_le_bytes([rest[4], rest[5], rest[6], rest[7]]) as usize;
        let body = &rest[8..];
        if &rest[..4] == b"fmt " {
            let mut tag = le16(body, 0)?;
            let block_align = le16(body, 12)?;
            let bits = le16(body, 14)?;
            if tag == 0xFFFE && len >= 40 {
                // The sub-format GUID (bytes 24..40) starts with the plain format tag, for
                // the standard KSDATAFORMAT_SUBTYPE_* GUIDs.
                let guid = body.get(24..40)?;
                if guid[2..] == [0, 0, 0, 0, 0x10, 0, 0x80, 0, 0, 0xAA, 0, 0x38, 0x9B, 0x71] {
                    tag = le16(guid, 0)?;
                }
            }
            return Some(FmtInfo {
                tag,
                bits,
                block_align,
            });
        }
        // Chunks are padded to an even length.
        let skip = len.checked_add(len & 1)?;
        rest = body.get(skip..)?;
    }
    None
}

/// A human name for hound's view of an encoding.
fn encoding_name(format: SampleFormat, bits: u16) -> String {
    match format {
        SampleFormat::Int => format!("{bits}-bit integer PCM"),
        SampleFormat::Float => format!("{bits}-bit float"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hound::{WavSpec, WavWriter};

    fn spec(channels: u16, sample_rate: u32, bits: u16, format: SampleFormat) -> WavSpec {
        WavSpec {
            channels,
            sample_rate,
            bits_per_sample: bits,
            sample_format: format,
        }
    }

    /// A WAV of `samples` (i32 for integer formats, f32 for float) in memory.
    fn write<S: hound::Sample + Copy>(spec: WavSpec, samples: &[S]) -> Vec<u8> {
        let mut bytes = Vec::new();
        let mut writer = WavWriter::new(io::Cursor::new(&mut bytes), spec).expect("writer");
        for &s in samples {
            writer.write_sample(s).expect("sample");
        }
        writer.finalize().expect("finalize");
        bytes
    }

    /// A minimal WAV with a 16-byte fmt chunk of any tag, built by hand.
    fn raw_wav(tag: u16, channels: u16, rate: u32, bits: u16, data: &[u8]) -> Vec<u8> {
        let block_align = channels * bits.div_ceil(8);
        let mut fmt = Vec::new();
        fmt.extend_from_slice(&tag.to_le_bytes());
        fmt.extend_from_slice(&channels.to_le_bytes());
        fmt.extend_from_slice(&rate.to_le_bytes());
        fmt.extend_from_slice(&(rate * u32::from(block_align)).to_le_bytes());
        fmt.extend_from_slice(&block_align.to_le_bytes());
        fmt.extend_from_slice(&bits.to_le_bytes());
        let mut bytes = b"RIFF".to_vec();
        bytes.extend_from_slice(&((4 + 8 + fmt.len() + 8 + data.len()) as u32).to_le_bytes());
        bytes.extend_from_slice(b"WAVEfmt ");
        bytes.extend_from_slice(&(fmt.len() as u32).to_le_bytes());
        bytes.extend_from_slice(&fmt);
        bytes.extend_from_slice(b"data");
        bytes.extend_from_slice(&(data.len() as u32).to_le_bytes());
        bytes.extend_from_slice(data);
        bytes
    }

    #[test]
    fn pcm16_mono_44k() {
        let bytes = write(
            spec(1, 44_100, 16, SampleFormat::Int),
            &[16384, -16384, 0, 32767, -32768],
        );
        let audio = read(&bytes[..]).expect("read");
        assert_eq!(audio.sample_rate, 44_100);
        assert_eq!(audio.channels.len(), 1);
        assert_eq!(
            audio.channels[0],
            vec![0.5, -0.5, 0.0, 32767.0 / 32768.0, -1.0]
        );
        assert_eq!(audio.frames(), 5);
        assert_eq!(audio.duration_s(), 5.0 / 44_100.0);
    }

    #[test]
    fn pcm24_stereo_96k() {
        let bytes = write(
            spec(2, 96_000, 24, SampleFormat::Int),
            &[4_194_304, -8_388_608, 0, 8_388_607, -2_097_152, 1],
        );
        let audio = read(&bytes[..]).expect("read");
        assert_eq!(audio.sample_rate, 96_000);
        assert_eq!(audio.channels[0], vec![0.5, 0.0, -0.25]);
        assert_eq!(
            audio.channels[1],
            vec![-1.0, 8_388_607.0 / 8_388_608.0, 1.0 / 8_388_608.0]
        );
        assert_eq!(audio.frames(), 3);
    }

    #[test]
    fn pcm8_and_pcm32() {
        let bytes = write(spec(1, 8_000, 8, SampleFormat::Int), &[-64, 64, -128, 0]);
        let audio = read(&bytes[..]).expect("read 8-bit");
        assert_eq!(audio.channels[0], vec![-0.5, 0.5, -1.0, 0.0]);

        let bytes = write(
            spec(2, 48_000, 32, SampleFormat::Int),
            &[1 << 30, i32::MIN, -(1 << 29), 0],
        );
        let audio = read(&bytes[..]).expect("read 32-bit");
        assert_eq!(audio.channels[0], vec![0.5, -0.25]);
        assert_eq!(audio.channels[1], vec![-1.0, 0.0]);
    }

    #[test]
    fn float32_stereo_keeps_values_and_zeroes_non_finite() {
        let bytes = write(
            spec(2, 48_000, 32, SampleFormat::Float),
            &[0.25, -1.5, f32::NAN, f32::INFINITY, 2.0, f32::NEG_INFINITY],
        );
        let audio = read(&bytes[..]).expect("read");
        assert_eq!(audio.channels[0], vec![0.25, 0.0, 2.0]);
        assert_eq!(audio.channels[1], vec![-1.5, 0.0, 0.0]);
        assert_eq!(audio.duration_s(), 3.0 / 48_000.0);
    }

    #[test]
    fn garbage_is_not_a_wav_file() {
        let midi = b"MThd\0\0\0\x06\0\0\0\x01\0\x60MTrk\0\0\0\x04\0\xFF\x2F\0";
        for garbage in [
            &b"just some text, renamed to .wav"[..],
            &midi[..],
            &[0u8; 100][..],
        ] {
            assert_eq!(
                read(garbage).expect_err("must fail").to_string(),
                "not a WAV file (no RIFF/WAVE header)"
            );
        }
        assert_eq!(read(&b""[..]).expect_err("empty").to_string(), "empty file");
        let mut avi = write(spec(1, 44_100, 16, SampleFormat::Int), &[0; 4]);
        avi[8..12].copy_from_slice(b"AVI ");
        assert_eq!(
            read(&avi[..]).expect_err("avi").to_string(),
            "not a WAV file (no RIFF/WAVE header)"
        );
    }

    #[test]
    fn six_channels_are_rejected() {
        let bytes = write(spec(6, 48_000, 16, SampleFormat::Int), &[0; 12]);
        assert_eq!(
            read(&bytes[..]).expect_err("must fail").to_string(),
            "has 6 channels; Dyeflow reads mono or stereo WAV"
        );
    }

    #[test]
    fn sample_rate_out_of_range_is_rejected() {
        for rate in [500, 800_000] {
            let bytes = write(spec(1, rate, 16, SampleFormat::Int), &[0; 4]);
            let err = read(&bytes[..]).expect_err("must fail").to_string();
            assert!(
                err.contains(&rate.to_string()) && err.contains("1000–768000 Hz"),
                "{err}"
            );
        }
        for rate in [MIN_SAMPLE_RATE, MAX_SAMPLE_RATE] {
            let bytes = write(spec(1, rate, 16, SampleFormat::Int), &[0; 4]);
            assert_eq!(read(&bytes[..]).expect("in range").sample_rate, rate);
        }
    }

    #[test]
    fn truncated_data_is_an_error() {
        let samples: Vec<i32> = (0..100).collect();
        let bytes = write(spec(2, 44_100, 16, SampleFormat::Int), &samples);
        assert!(read(&bytes[..]).is_ok());
        // Every cut is an error, never a silently shorter file.
        for len in 4..bytes.len() {
            let err = read(&bytes[..len])
                .expect_err("truncated file must fail")
                .to_string();
            assert!(err.contains("truncated"), "cut at {len}: {err}");
        }
        let err = read(&bytes[..bytes.len() - 10])
            .expect_err("must fail")
            .to_string();
        assert_eq!(
            err,
            "truncated WAV data (the header promises 50 frames, the file ends after 47)"
        );
    }

    #[test]
    fn unsupported_encodings_are_named() {
        let cases = [
            (raw_wav(3, 1, 44_100, 64, &[0; 16]), "64-bit float"),
            (raw_wav(6, 1, 8_000, 8, &[0; 4]), "A-law"),
            (raw_wav(7, 1, 8_000, 8, &[0; 4]), "µ-law"),
            (raw_wav(2, 1, 8_000, 4, &[0; 4]), "ADPCM"),
            (raw_wav(0x55, 2, 44_100, 16, &[0; 8]), "MP3"),
        ];
        for (bytes, name) in cases {
            let err = read(&bytes[..]).expect_err("must fail").to_string();
            assert!(
                err.starts_with("unsupported WAV encoding (") && err.contains(name),
                "{name}: {err}"
            );
        }
        // A hand-made plain PCM file reads fine.
        let audio = read(&raw_wav(1, 1, 8_000, 16, &[0, 0x40, 0, 0xC0])[..]).expect("pcm");
        assert_eq!(audio.channels[0], vec![0.5, -0.5]);
    }

    /// `bytes` (a WAV from [`write`] or [`raw_wav`]) with `chunk` (id and body) put before its
    /// data chunk, padded as RIFF pads a chunk of odd length.
    fn with_chunk_before_data(bytes: &[u8], id: &[u8; 4], body: &[u8]) -> Vec<u8> {
        let data = bytes
            .windows(4)
            .position(|w| w == b"data")
            .expect("a data chunk");
        let mut chunk = id.to_vec();
        chunk.extend_from_slice(&(body.len() as u32).to_le_bytes());
        chunk.extend_from_slice(body);
        if body.len() % 2 == 1 {
            chunk.push(0);
        }
        let mut out = bytes[..data].to_vec();
        out.extend_from_slice(&chunk);
        out.extend_from_slice(&bytes[data..]);
        let riff = (out.len() - 8) as u32;
        out[4..8].copy_from_slice(&riff.to_le_bytes());
        out
    }

    /// Chunks of odd length are followed by a pad byte; a `fact` chunk may be longer than its
    /// 4-byte count. Files with such chunks before the audio read exactly, whole or streamed.
    #[test]
    fn padded_odd_chunks_and_long_fact_chunks_before_the_data_are_read() {
        let samples: Vec<i32> = (0..64).map(|i| i * 300 - 9000).collect();
        let plain = write(spec(2, 44_100, 16, SampleFormat::Int), &samples);
        let want = read(&plain[..]).expect("plain").channels;
        let odd = with_chunk_before_data(&plain, b"LIST", b"INFOISFT\x05\0\0\0abcd\0");
        assert_eq!(odd.len() % 2, 0, "padded");
        let odd_twice = with_chunk_before_data(&odd, b"junk", b"x");
        let long_fact = with_chunk_before_data(&plain, b"fact", &[32, 0, 0, 0, 1, 2, 3, 4, 5]);
        for (name, bytes) in [
            ("odd", odd),
            ("two odd", odd_twice),
            ("long fact", long_fact),
        ] {
            let audio = read(&bytes[..]).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(audio.channels, want, "{name}");
            let len = bytes.len() as u64;
            let mut stream = WavStream::new(io::Cursor::new(bytes), len).expect("stream");
            let mut out = vec![Vec::new(), Vec::new()];
            stream.block(10, 20, &mut out).expect("block");
            stream.block(0, 5, &mut out).expect("a seek back");
            assert_eq!(out[0][..10], want[0][10..20], "{name}");
            assert_eq!(out[1][10..], want[1][..5], "{name}");
        }
    }

    #[test]
    fn empty_data_and_overlong_audio_are_rejected() {
        let err = read(&raw_wav(1, 1, 8_000, 16, &[])[..])
            .expect_err("empty data")
            .to_string();
        assert!(err.contains("empty"), "{err}");

        // The header claims 5 hours at 1 kHz, 8-bit mono; rejected before reading samples.
        let mut bytes = raw_wav(1, 1, 1_000, 8, &[0; 4]);
        let claimed = 5 * 3600 * 1000u32;
        let at = bytes.len() - 8;
        bytes[at..at + 4].copy_from_slice(&claimed.to_le_bytes());
        let err = read(&bytes[..]).expect_err("too long").to_string();
        assert!(err.contains("at most 4 hours"), "{err}");
    }

    #[test]
    fn mutated_files_never_panic() {
        let files = [
            write(spec(2, 44_100, 16, SampleFormat::Int), &[1, -1, 300, -300]),
            write(spec(1, 96_000, 24, SampleFormat::Int), &[1, -1, 300]),
            write(spec(2, 48_000, 32, SampleFormat::Float), &[0.5, -0.5]),
        ];
        for bytes in files {
            for at in 0..bytes.len() {
                for value in [0x00, 0x01, 0x02, 0x10, 0x7F, 0x80, 0xFE, 0xFF] {
                    let mut mutated = bytes.clone();
                    mutated[at] = value;
                    let _ = read(&mutated[..]);
                }
            }
        }
    }

    #[test]
    fn open_reports_missing_files() {
        let dir = std::env::temp_dir().join(format!("dyeflow-wav-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let problem = |path: &Path| match open(path) {
            Ok(_) => panic!("{} opened", path.display()),
            Err(e) => e.to_string(),
        };
        let missing = dir.join("missing.wav");
        assert_eq!(
            problem(&missing),
            format!("{}: file not found", missing.display())
        );

        let good = dir.join("good.wav");
        std::fs::write(
            &good,
            write(spec(1, 44_100, 16, SampleFormat::Int), &[8192]),
        )
        .expect("write");
        let mut stream = open(&good).expect("open");
        let mut channels = vec![Vec::new()];
        stream.block(0, 3, &mut channels).expect("read");
        assert_eq!(channels, vec![vec![0.25, 0.0, 0.0]], "silence past the end");

        let empty = dir.join("empty.wav");
        std::fs::write(&empty, b"").expect("write");
        assert_eq!(problem(&empty), format!("{}: empty file", empty.display()));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Blocks read in any order, with seeks, give exactly the samples of a whole read; a mono
    /// file fills both channels of a stereo request.
    #[test]
    fn streamed_blocks_match_the_whole_file() {
        let samples: Vec<i32> = (0..2000).map(|i| (i * 37 % 4001) - 2000).collect();
        for (spec, stereo) in [
            (spec(2, 48_000, 16, SampleFormat::Int), true),
            (spec(2, 48_000, 24, SampleFormat::Int), true),
            (spec(1, 8_000, 8, SampleFormat::Int), false),
        ] {
            let clipped: Vec<i32> = samples
                .iter()
                .map(|&x| {
                    x.clamp(
                        -(1 << (spec.bits_per_sample - 1)),
                        (1 << (spec.bits_per_sample - 1)) - 1,
                    )
                })
                .collect();
            let bytes = write(spec, &clipped);
            let whole = read(&bytes[..]).expect("read");
            let len = bytes.len() as u64;
            let mut stream = WavStream::new(io::Cursor::new(bytes), len).expect("open");
            let frames = stream.frames;
            for (from, to) in [
                (0, 100),
                (100, 333),
                (900, 1200),
                (50, 60),
                (0, frames + 10),
            ] {
                let mut out = vec![Vec::new(), Vec::new()];
                stream.block(from, to, &mut out).expect("block");
                for (c, channel) in out.iter().enumerate() {
                    let source = if stereo { c } else { 0 };
                    let mut expected: Vec<f32> =
                        whole.channels[source][from as usize..(to.min(frames)) as usize].to_vec();
                    expected.resize((to - from) as usize, 0.0);
                    assert_eq!(channel, &expected, "{spec:?} {from}..{to} channel {c}");
                }
            }
        }
    }
}
