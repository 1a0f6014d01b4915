//! WAV input for `dyeflow render`: mono or stereo PCM (8, 16, 24 or 32-bit integer, or 32-bit
//! float) decoded by hound into `f32` channels.
//!
//! Reading is strict: a data chunk that ends before the length its header promises is an error
//! ("truncated WAV data"), not a shorter song, and so is an empty data chunk. Streaming writers
//! that leave the data length unset (0 or 0xFFFFFFFF) therefore produce files this module
//! rejects; such files need rewriting (e.g. `ffmpeg -i in.wav out.wav`).

use std::io::{self, BufReader, Read};
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

/// At most this many frames are reserved ahead of reading, whatever the header claims.
const MAX_PREALLOCATED_FRAMES: usize = 1 << 20;

/// Audio read from a WAV file: 1 or 2 channels of f32 samples, equal lengths. Integer samples
/// are in -1..1 (full scale is 1); float samples keep their values (they may exceed 1), except
/// that NaN and infinities become 0.
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

/// Read a WAV file. Every failure (missing, unreadable, empty or unsupported file) becomes
/// [`RenderError::Input`] naming the path.
pub fn load(path: &Path) -> Result<Audio, RenderError> {
    let (file, _) = super::open_input(path)?;
    read(BufReader::new(file)).map_err(|problem| RenderError::input(path, problem))
}

/// Decode a WAV stream. Errors are a short problem phrase without a file name, e.g. "not a WAV
/// file (no RIFF/WAVE header)" or "truncated WAV data (…)".
pub fn read(reader: impl Read) -> Result<Audio, String> {
    let mut reader = reader;
    let mut head = [0u8; 12];
    let got = read_up_to(&mut reader, &mut head).map_err(|e| format!("read error ({e})"))?;
    check_riff_wave(&head[..got])?;

    let mut recorder = Recorder {
        inner: io::Cursor::new(head).chain(BufReader::new(reader)),
        record: Vec::with_capacity(256),
    };
    let mut wav = match WavReader::new(&mut recorder) {
        Ok(wav) => wav,
        Err(e) => return Err(header_problem(e, &recorder.record)),
    };

    let spec = wav.spec();
    let channels = usize::from(spec.channels);
    if channels > 2 {
        return Err(format!(
            "has {channels} channels; Dyeflow reads mono or stereo WAV"
        ));
    }
    match (spec.sample_format, spec.bits_per_sample) {
        (SampleFormat::Int, 8 | 16 | 24 | 32) | (SampleFormat::Float, 32) => {}
        (format, bits) => {
            return Err(format!(
                "unsupported WAV encoding ({}); Dyeflow reads 8/16/24/32-bit integer or 32-bit \
                 float PCM",
                encoding_name(format, bits)
            ));
        }
    }
    if !(MIN_SAMPLE_RATE..=MAX_SAMPLE_RATE).contains(&spec.sample_rate) {
        return Err(format!(
            "sample rate {} Hz is outside the supported range {MIN_SAMPLE_RATE}–{MAX_SAMPLE_RATE} \
             Hz",
            spec.sample_rate
        ));
    }
    let frames = u64::from(wav.duration());
    if frames == 0 {
        return Err("no audio (the WAV data chunk is empty)".into());
    }
    if frames > MAX_DURATION_S * u64::from(spec.sample_rate) {
        return Err(format!(
            "too long ({:.1} hours of audio; Dyeflow reads at most {} hours)",
            frames as f64 / f64::from(spec.sample_rate) / 3600.0,
            MAX_DURATION_S / 3600
        ));
    }

    let reserve =
        usize::try_from(frames).map_or(MAX_PREALLOCATED_FRAMES, |f| f.min(MAX_PREALLOCATED_FRAMES));
    let mut out: Vec<Vec<f32>> = (0..channels).map(|_| Vec::with_capacity(reserve)).collect();
    let sample_problem = |e: hound::Error, index: usize| match e {
        hound::Error::IoError(e) if is_eof(&e) => format!(
            "truncated WAV data (the header promises {frames} frames, the file ends after {})",
            index / channels
        ),
        hound::Error::IoError(e) => format!("read error ({e})"),
        other => format!(
            "unsupported WAV encoding ({}: {other})",
            encoding_name(spec.sample_format, spec.bits_per_sample)
        ),
    };
    match spec.sample_format {
        SampleFormat::Int => {
            // Full scale of an n-bit integer is 2^(n-1); a power of two scales exactly.
            let scale = 1.0 / (1u64 << (spec.bits_per_sample - 1)) as f32;
            for (i, sample) in wav.samples::<i32>().enumerate() {
                let sample = sample.map_err(|e| sample_problem(e, i))?;
                out[i % channels].push(sample as f32 * scale);
            }
        }
        SampleFormat::Float => {
            for (i, sample) in wav.samples::<f32>().enumerate() {
                let sample = sample.map_err(|e| sample_problem(e, i))?;
                out[i % channels].push(if sample.is_finite() { sample } else { 0.0 });
            }
        }
    }
    Ok(Audio {
        sample_rate: spec.sample_rate,
        channels: out,
    })
}

/// Passes reads through, keeping a copy of the first [`HEADER_RECORD_BYTES`] bytes.
struct Recorder<R> {
    inner: R,
    record: Vec<u8>,
}

impl<R: Read> Read for Recorder<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let room = HEADER_RECORD_BYTES.saturating_sub(self.record.len());
        if room > 0 {
            self.record.extend_from_slice(&buf[..n.min(room)]);
        }
        Ok(n)
    }
}

/// Fill `buf` as far as the stream allows; returns the number of bytes read.
fn read_up_to(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match reader.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Check the 12-byte RIFF/WAVE header (`head` is shorter if the stream is).
fn check_riff_wave(head: &[u8]) -> Result<(), String> {
    if head.is_empty() {
        return Err("empty file".into());
    }
    if head.starts_with(b"RF64") || head.starts_with(b"BW64") {
        return Err(
            "unsupported WAV container (RF64/BW64); Dyeflow reads plain RIFF WAV files".into(),
        );
    }
    if head.starts_with(b"RIFF") && head.len() < 12 {
        return Err("truncated WAV file (header ends early)".into());
    }
    if head.len() < 12 || &head[..4] != b"RIFF" || &head[8..12] != b"WAVE" {
        return Err("not a WAV file (no RIFF/WAVE header)".into());
    }
    Ok(())
}

/// Whether an I/O error means the stream ended early. hound reports a short read as an
/// `Other` error ("Failed to read enough bytes.").
fn is_eof(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::UnexpectedEof
        || (e.kind() == io::ErrorKind::Other && e.to_string().contains("enough bytes"))
}

/// The problem phrase for an error from [`WavReader::new`]; `record` is the file's start.
fn header_problem(e: hound::Error, record: &[u8]) -> String {
    let fmt = find_fmt(record);
    match e {
        hound::Error::IoError(e) if is_eof(&e) => {
            "truncated WAV file (it ends before the audio data)".into()
        }
        hound::Error::IoError(e) => format!("read error ({e})"),
        hound::Error::Unsupported => format!(
            "unsupported WAV encoding ({})",
            fmt.map_or_else(|| "unknown".to_string(), |f| f.describe())
        ),
        other => match fmt {
            Some(f) if !f.is_supported() => format!("unsupported WAV encoding ({})", f.describe()),
            _ => format!("unreadable WAV header ({})", hound_reason(&other)),
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
            let bits = le16(body, 14)?;
            if tag == 0xFFFE && len >= 40 {
                // The sub-format GUID (bytes 24..40) starts with the plain format tag, for
                // the standard KSDATAFORMAT_SUBTYPE_* GUIDs.
                let guid = body.get(24..40)?;
                if guid[2..] == [0, 0, 0, 0, 0x10, 0, 0x80, 0, 0, 0xAA, 0, 0x38, 0x9B, 0x71] {
                    tag = le16(guid, 0)?;
                }
            }
            return Some(FmtInfo { tag, bits });
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
                read(garbage).expect_err("must fail"),
                "not a WAV file (no RIFF/WAVE header)"
            );
        }
        assert_eq!(read(&b""[..]).expect_err("empty"), "empty file");
        let mut avi = write(spec(1, 44_100, 16, SampleFormat::Int), &[0; 4]);
        avi[8..12].copy_from_slice(b"AVI ");
        assert_eq!(
            read(&avi[..]).expect_err("avi"),
            "not a WAV file (no RIFF/WAVE header)"
        );
    }

    #[test]
    fn six_channels_are_rejected() {
        let bytes = write(spec(6, 48_000, 16, SampleFormat::Int), &[0; 12]);
        assert_eq!(
            read(&bytes[..]).expect_err("must fail"),
            "has 6 channels; Dyeflow reads mono or stereo WAV"
        );
    }

    #[test]
    fn sample_rate_out_of_range_is_rejected() {
        for rate in [500, 800_000] {
            let bytes = write(spec(1, rate, 16, SampleFormat::Int), &[0; 4]);
            let err = read(&bytes[..]).expect_err("must fail");
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
            let err = read(&bytes[..len]).expect_err("truncated file must fail");
            assert!(err.contains("truncated"), "cut at {len}: {err}");
        }
        let err = read(&bytes[..bytes.len() - 10]).expect_err("must fail");
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
            let err = read(&bytes[..]).expect_err("must fail");
            assert!(
                err.starts_with("unsupported WAV encoding (") && err.contains(name),
                "{name}: {err}"
            );
        }
        // A hand-made plain PCM file reads fine.
        let audio = read(&raw_wav(1, 1, 8_000, 16, &[0, 0x40, 0, 0xC0])[..]).expect("pcm");
        assert_eq!(audio.channels[0], vec![0.5, -0.5]);
    }

    #[test]
    fn empty_data_and_overlong_audio_are_rejected() {
        let err = read(&raw_wav(1, 1, 8_000, 16, &[])[..]).expect_err("empty data");
        assert!(err.contains("empty"), "{err}");

        // The header claims 5 hours at 1 kHz, 8-bit mono; rejected before reading samples.
        let mut bytes = raw_wav(1, 1, 1_000, 8, &[0; 4]);
        let claimed = 5 * 3600 * 1000u32;
        let at = bytes.len() - 8;
        bytes[at..at + 4].copy_from_slice(&claimed.to_le_bytes());
        let err = read(&bytes[..]).expect_err("too long");
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
    fn load_reports_missing_files() {
        let dir = std::env::temp_dir().join(format!("dyeflow-wav-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let missing = dir.join("missing.wav");
        let err = load(&missing).expect_err("missing");
        assert_eq!(
            err.to_string(),
            format!("{}: file not found", missing.display())
        );

        let good = dir.join("good.wav");
        std::fs::write(
            &good,
            write(spec(1, 44_100, 16, SampleFormat::Int), &[8192]),
        )
        .expect("write");
        assert_eq!(load(&good).expect("load").channels, vec![vec![0.25]]);

        let empty = dir.join("empty.wav");
        std::fs::write(&empty, b"").expect("write");
        let err = load(&empty).expect_err("empty");
        assert_eq!(err.to_string(), format!("{}: empty file", empty.display()));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
