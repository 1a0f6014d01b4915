//! Is a video ffmpeg wrote whole? ffmpeg can exit 0 having written a broken file (5.1 does after
//! "Error writing trailer: No space left on device"), so a video replaces the user's earlier
//! file only once its container reads to the end: an MP4's boxes cover the file exactly and its
//! `moov` lists every frame; a WebM's segment has the size its trailer writes and its clusters
//! hold every frame. Only the containers' headers are read (a few kilobytes of a large file,
//! block headers for WebM), never the pictures.

use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

/// What a finished video holds, as its container says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Contents {
    /// Frames of the video track.
    pub video_frames: u64,
    /// Packets (MP4 samples, WebM blocks) of the audio track; 0 without one.
    pub audio_packets: u64,
}

/// Read the container `container` (`"mp4"` or `"webm"`) of the file at `path` to its end.
///
/// # Errors
/// One phrase saying what is wrong (it ends, or breaks off, where a whole file would not).
pub(super) fn contents(path: &Path, container: &str) -> Result<Contents, String> {
    let file = File::open(path).map_err(|e| format!("it could not be read back ({e})"))?;
    let len = file
        .metadata()
        .map_err(|e| format!("it could not be read back ({e})"))?
        .len();
    if len == 0 {
        return Err("the file is empty".into());
    }
    let mut r = Reader::new(file);
    let read = match container {
        "mp4" => mp4(&mut r, len),
        "webm" => webm(&mut r, len),
        other => return Err(format!("Dyeflow cannot check a .{other} file")),
    };
    read.map_err(|e| match e {
        Broken::Io(e) => format!("it could not be read back ({e})"),
        Broken::Format(why) => why,
    })
}

/// What stops a container from reading.
enum Broken {
    Io(io::Error),
    /// Where the structure breaks off, as a phrase.
    Format(String),
}

impl From<io::Error> for Broken {
    fn from(e: io::Error) -> Self {
        if e.kind() == io::ErrorKind::UnexpectedEof {
            Self::Format("it ends in the middle of its structure".into())
        } else {
            Self::Io(e)
        }
    }
}

fn broken<T>(why: impl Into<String>) -> Result<T, Broken> {
    Err(Broken::Format(why.into()))
}

/// A buffered reader that knows where it is, so that skipping forward within its buffer costs
/// no system call (a WebM's block headers are a few bytes apart).
struct Reader {
    inner: BufReader<File>,
    pos: u64,
}

impl Reader {
    fn new(file: File) -> Self {
        Self {
            inner: BufReader::with_capacity(64 << 10, file),
            pos: 0,
        }
    }

    fn seek(&mut self, to: u64) -> io::Result<()> {
        if to != self.pos {
            match i64::try_from(to.wrapping_sub(self.pos)) {
                Ok(forward) if to > self.pos => self.inner.seek_relative(forward)?,
                _ => {
                    self.inner.seek(SeekFrom::Start(to))?;
                }
            }
            self.pos = to;
        }
        Ok(())
    }

    fn bytes<const N: usize>(&mut self) -> io::Result<[u8; N]> {
        let mut out = [0; N];
        self.inner.read_exact(&mut out)?;
        self.pos += N as u64;
        Ok(out)
    }

    fn byte(&mut self) -> io::Result<u8> {
        Ok(self.bytes::<1>()?[0])
    }
}

// ------------------------------------------------------------------------------------------
// MP4 (ISO base media file format)

/// A box: its type and where its payload lies.
#[derive(Clone, Copy)]
struct Mp4Box {
    kind: [u8; 4],
    start: u64,
    end: u64,
}

/// The boxes from `start` to `end`, which they must cover exactly.
fn mp4_boxes(r: &mut Reader, start: u64, end: u64) -> Result<Vec<Mp4Box>, Broken> {
    let mut boxes = Vec::new();
    let mut at = start;
    while at < end {
        if end - at < 8 {
            return broken("its last box is cut off");
        }
        r.seek(at)?;
        let size = u64::from(u32::from_be_bytes(r.bytes()?));
        let kind: [u8; 4] = r.bytes()?;
        let (header, size) = match size {
            // To the end of the file (only the last box may say so).
            0 => (8, end - at),
            1 => (16, u64::from_be_bytes(r.bytes()?)),
            n => (8, n),
        };
        if size < header || size > end - at {
            return broken(format!(
                "its box '{}' claims more bytes than the file holds (it ends early)",
                String::from_utf8_lossy(&kind)
            ));
        }
        boxes.push(Mp4Box {
            kind,
            start: at + header,
            end: at + size,
        });
        at += size;
    }
    Ok(boxes)
}

/// The first box of type `kind` among the children of `parent`.
fn mp4_child(r: &mut Reader, parent: &Mp4Box, kind: &[u8; 4]) -> Result<Option<Mp4Box>, Broken> {
    Ok(mp4_boxes(r, parent.start, parent.end)?
        .into_iter()
        .find(|b| &b.kind == kind))
}

/// The boxes at `path` below `parent`, the first of each type.
fn mp4_path(r: &mut Reader, parent: &Mp4Box, path: &[&[u8; 4]]) -> Result<Option<Mp4Box>, Broken> {
    let mut here = *parent;
    for kind in path {
        match mp4_child(r, &here, kind)? {
            Some(b) => here = b,
            None => return Ok(None),
        }
    }
    Ok(Some(here))
}

fn mp4(r: &mut Reader, len: u64) -> Result<Contents, Broken> {
    let top = mp4_boxes(r, 0, len)?;
    let has = |kind: &[u8; 4]| top.iter().any(|b| &b.kind == kind);
    if !has(b"ftyp") {
        return broken("it is not an MP4 file (no 'ftyp' box)");
    }
    if !has(b"mdat") {
        return broken("it holds no media data (no 'mdat' box)");
    }
    let Some(moov) = top.iter().find(|b| &b.kind == b"moov") else {
        return broken("it has no index of its frames (no 'moov' box: ffmpeg did not finish it)");
    };
    let mut contents = Contents::default();
    for trak in mp4_boxes(r, moov.start, moov.end)? {
        if &trak.kind != b"trak" {
            continue;
        }
        let Some(hdlr) = mp4_path(r, &trak, &[b"mdia", b"hdlr"])? else {
            return broken("a track has no handler");
        };
        // Version and flags (4 bytes), pre_defined (4), then the handler's type.
        if hdlr.end - hdlr.start < 12 {
            return broken("a track's handler is cut off");
        }
        r.seek(hdlr.start + 8)?;
        let handler: [u8; 4] = r.bytes()?;
        let Some(stsz) = mp4_path(r, &trak, &[b"mdia", b"minf", b"stbl", b"stsz"])? else {
            return broken("a track has no sample sizes (no 'stsz' box)");
        };
        // Version and flags (4 bytes), the common sample size (4), then the count.
        if stsz.end - stsz.start < 12 {
            return broken("a track's sample sizes are cut off");
        }
        r.seek(stsz.start + 8)?;
        let samples = u64::from(u32::from_be_bytes(r.bytes()?));
        match &handler {
            b"vide" => contents.video_frames += samples,
            b"soun" => contents.audio_packets += samples,
            _ => {}
        }
    }
    Ok(contents)
}

// ------------------------------------------------------------------------------------------
// WebM (Matroska's EBML)

const EBML_HEADER: u32 = 0x1A45_DFA3;
const SEGMENT: u32 = 0x1853_8067;
const TRACKS: u32 = 0x1654_AE6B;
const TRACK_ENTRY: u32 = 0xAE;
const TRACK_NUMBER: u32 = 0xD7;
const TRACK_TYPE: u32 = 0x83;
const CLUSTER: u32 = 0x1F43_B675;
const SIMPLE_BLOCK: u32 = 0xA3;
const BLOCK_GROUP: u32 = 0xA0;
const BLOCK: u32 = 0xA1;
/// Track types.
const VIDEO: u64 = 1;
const AUDIO: u64 = 2;

/// An element: its id and where its payload lies (`end` is `None` for an unknown size).
struct Element {
    id: u32,
    start: u64,
    end: Option<u64>,
}

/// An element's id (its marker bit kept, as the specification writes ids), 1 to 4 bytes.
fn ebml_id(r: &mut Reader) -> Result<u32, Broken> {
    let first = r.byte()?;
    let len = first.leading_zeros() + 1;
    if len > 4 {
        return broken("an element's id does not read");
    }
    let mut id = u32::from(first);
    for _ in 1..len {
        id = id << 8 | u32::from(r.byte()?);
    }
    Ok(id)
}

/// A variable-length number (its marker bit removed), 1 to 8 bytes; `None` for all ones (an
/// unknown size).
fn ebml_vint(r: &mut Reader) -> Result<Option<u64>, Broken> {
    let first = r.byte()?;
    let len = first.leading_zeros() + 1;
    if len > 8 {
        return broken("an element's size does not read");
    }
    let mut value = u64::from(first) & (0xFF >> len);
    let mut all_ones = value == 0xFF >> len;
    for _ in 1..len {
        let b = r.byte()?;
        all_ones &= b == 0xFF;
        value = value << 8 | u64::from(b);
    }
    Ok((!all_ones).then_some(value))
}

/// The element at `at`, which must end by `end`.
fn ebml_element(r: &mut Reader, at: u64, end: u64) -> Result<Element, Broken> {
    r.seek(at)?;
    let id = ebml_id(r)?;
    let size = ebml_vint(r)?;
    let start = r.pos;
    let end_here = match size {
        Some(size) => match start.checked_add(size) {
            Some(e) if e <= end => Some(e),
            _ => return broken("an element claims more bytes than the file holds (it ends early)"),
        },
        None => None,
    };
    Ok(Element {
        id,
        start,
        end: end_here,
    })
}

/// The children of an element of known size.
fn ebml_children(r: &mut Reader, start: u64, end: u64) -> Result<Vec<Element>, Broken> {
    let mut out = Vec::new();
    let mut at = start;
    while at < end {
        let e = ebml_element(r, at, end)?;
        let Some(e_end) = e.end else {
            return broken("an element inside another has no size (the file was not finished)");
        };
        at = e_end;
        out.push(e);
    }
    Ok(out)
}

/// An unsigned integer element's value (up to 8 bytes).
fn ebml_uint(r: &mut Reader, e: &Element) -> Result<u64, Broken> {
    let end = e.end.unwrap_or(e.start);
    if end - e.start > 8 {
        return broken("a number in the file is too long");
    }
    r.seek(e.start)?;
    let mut value = 0;
    for _ in e.start..end {
        value = value << 8 | u64::from(r.byte()?);
    }
    Ok(value)
}

fn webm(r: &mut Reader, len: u64) -> Result<Contents, Broken> {
    let header = ebml_element(r, 0, len)?;
    if header.id != EBML_HEADER {
        return broken("it is not a WebM file (no EBML header)");
    }
    let Some(header_end) = header.end else {
        return broken("its EBML header has no size");
    };
    let segment = ebml_element(r, header_end, len)?;
    if segment.id != SEGMENT {
        return broken("it holds no segment");
    }
    // ffmpeg writes the segment's size last, in its trailer.
    let Some(segment_end) = segment.end else {
        return broken("its segment has no size (ffmpeg did not finish it)");
    };
    if segment_end != len {
        return broken("its segment does not end where the file does");
    }
    let mut tracks: Vec<(u64, u64)> = Vec::new();
    let mut blocks: Vec<(u64, u64)> = Vec::new();
    for element in ebml_children(r, segment.start, segment_end)? {
        let end = element.end.expect("children have sizes");
        match element.id {
            TRACKS => tracks.extend(webm_tracks(r, element.start, end)?),
            CLUSTER => {
                for track in webm_block_tracks(r, element.start, end)? {
                    match blocks.iter_mut().find(|(t, _)| *t == track) {
                        Some((_, n)) => *n += 1,
                        None => blocks.push((track, 1)),
                    }
                }
            }
            _ => {}
        }
    }
    let of_kind = |kind: u64| -> u64 {
        tracks
            .iter()
            .filter(|(_, k)| *k == kind)
            .map(|(number, _)| {
                blocks
                    .iter()
                    .find(|(t, _)| t == number)
                    .map_or(0, |(_, n)| *n)
            })
            .sum()
    };
    Ok(Contents {
        video_frames: of_kind(VIDEO),
        audio_packets: of_kind(AUDIO),
    })
}

/// The (number, type) of each track entry of a Tracks element's `start..end`.
fn webm_tracks(r: &mut Reader, start: u64, end: u64) -> Result<Vec<(u64, u64)>, Broken> {
    let mut tracks = Vec::new();
    for entry in ebml_children(r, start, end)? {
        if entry.id != TRACK_ENTRY {
            continue;
        }
        let (mut number, mut kind) = (None, None);
        for field in ebml_children(r, entry.start, entry.end.expect("sized"))? {
            match field.id {
                TRACK_NUMBER => number = Some(ebml_uint(r, &field)?),
                TRACK_TYPE => kind = Some(ebml_uint(r, &field)?),
                _ => {}
            }
        }
        if let (Some(number), Some(kind)) = (number, kind) {
            tracks.push((number, kind));
        }
    }
    Ok(tracks)
}

/// The track of each block (simple, or in a group) of a Cluster's `start..end`.
fn webm_block_tracks(r: &mut Reader, start: u64, end: u64) -> Result<Vec<u64>, Broken> {
    let mut out = Vec::new();
    for child in ebml_children(r, start, end)? {
        let block = match child.id {
            SIMPLE_BLOCK => child,
            BLOCK_GROUP => {
                let group_end = child.end.expect("sized");
                match ebml_children(r, child.start, group_end)?
                    .into_iter()
                    .find(|e| e.id == BLOCK)
                {
                    Some(block) => block,
                    None => continue,
                }
            }
            _ => continue,
        };
        r.seek(block.start)?;
        match ebml_vint(r)? {
            Some(track) => out.push(track),
            None => return broken("a block names no track"),
        }
    }
    Ok(out)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A whole MP4 (in structure: its media data is filler) of `video` frames and `audio`
    /// audio samples.
    pub(in crate::cli::render::files) fn mp4_of(video: u32, audio: u32) -> Vec<u8> {
        let mut tracks = trak(b"vide", video);
        if audio > 0 {
            tracks.extend(trak(b"soun", audio));
        }
        [
            mp4_box(b"ftyp", b"isom\0\0\x02\0"),
            mp4_box(b"moov", &[tracks, mp4_box(b"mvhd", &[0; 100])].concat()),
            mp4_box(b"mdat", &[7; 1000]),
        ]
        .concat()
    }

    fn mp4_box(kind: &[u8; 4], payload: &[u8]) -> Vec<u8> {
        let mut b = ((payload.len() + 8) as u32).to_be_bytes().to_vec();
        b.extend_from_slice(kind);
        b.extend_from_slice(payload);
        b
    }

    /// A track of `samples` samples with handler `handler`.
    fn trak(handler: &[u8; 4], samples: u32) -> Vec<u8> {
        let mut hdlr = vec![0; 8];
        hdlr.extend_from_slice(handler);
        hdlr.extend_from_slice(&[0; 12]);
        let mut stsz = vec![0; 8];
        stsz.extend_from_slice(&samples.to_be_bytes());
        let stbl = mp4_box(b"stbl", &mp4_box(b"stsz", &stsz));
        let minf = mp4_box(b"minf", &stbl);
        let mdia = mp4_box(b"mdia", &[mp4_box(b"hdlr", &hdlr), minf].concat());
        mp4_box(b"trak", &mdia)
    }

    fn check(bytes: &[u8], container: &str) -> Result<Contents, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(format!("v.{container}"));
        std::fs::write(&path, bytes).unwrap();
        contents(&path, container)
    }

    #[test]
    fn an_mp4_reads_only_when_whole() {
        let whole = mp4_of(300, 470);
        assert_eq!(
            check(&whole, "mp4"),
            Ok(Contents {
                video_frames: 300,
                audio_packets: 470
            })
        );
        // Cut anywhere, it does not read: the last box claims bytes past the end.
        for cut in [whole.len() - 1, whole.len() - 500, 40, 9] {
            let e = check(&whole[..cut], "mp4").unwrap_err();
            assert!(
                e.contains("ends early") || e.contains("cut off"),
                "{cut}: {e}"
            );
        }
        // Without its index (a full disk before the trailer).
        let no_moov = [mp4_box(b"ftyp", b"isom"), mp4_box(b"mdat", &[7; 1000])].concat();
        assert!(check(&no_moov, "mp4").unwrap_err().contains("'moov'"));
        assert_eq!(check(&[], "mp4").unwrap_err(), "the file is empty");
        assert!(check(b"RIFF....WAVEfmt ", "mp4").is_err());
    }

    fn ebml(id: u32, payload: &[u8]) -> Vec<u8> {
        let id_bytes = id.to_be_bytes();
        let skip = id_bytes.iter().position(|&b| b != 0).unwrap();
        let mut out = id_bytes[skip..].to_vec();
        // An 8-byte size.
        out.push(0x01);
        out.extend_from_slice(&(payload.len() as u64).to_be_bytes()[1..]);
        out.extend_from_slice(payload);
        out
    }

    fn webm_file(video: usize, audio: usize, segment_size: Option<u64>) -> Vec<u8> {
        let entry = |number: u8, kind: u8| {
            ebml(
                TRACK_ENTRY,
                &[ebml(TRACK_NUMBER, &[number]), ebml(TRACK_TYPE, &[kind])].concat(),
            )
        };
        let tracks = ebml(TRACKS, &[entry(1, 1), entry(2, 2)].concat());
        let block = |track: u8| ebml(SIMPLE_BLOCK, &[0x80 | track, 0, 0, 0x80, 1, 2, 3]);
        let mut cluster = Vec::new();
        for _ in 0..video {
            cluster.extend(block(1));
        }
        for _ in 0..audio {
            // Audio in block groups, as some muxers write it.
            cluster.extend(ebml(BLOCK_GROUP, &ebml(BLOCK, &[0x82, 0, 0, 0, 9])));
        }
        let body = [tracks, ebml(CLUSTER, &cluster)].concat();
        let mut segment = vec![0x18, 0x53, 0x80, 0x67, 0x01];
        let size = segment_size.unwrap_or(body.len() as u64);
        segment.extend_from_slice(&size.to_be_bytes()[1..]);
        segment.extend(body);
        [ebml(EBML_HEADER, &[0x42, 0x86, 0x81, 0x01]), segment].concat()
    }

    #[test]
    fn a_webm_reads_only_when_whole() {
        let whole = webm_file(25, 7, None);
        assert_eq!(
            check(&whole, "webm"),
            Ok(Contents {
                video_frames: 25,
                audio_packets: 7
            })
        );
        for cut in [whole.len() - 1, whole.len() / 2, 12] {
            assert!(check(&whole[..cut], "webm").is_err(), "{cut}");
        }
        // A segment whose size the trailer never wrote (all ones: unknown).
        let unfinished = webm_file(25, 7, Some(0x00FF_FFFF_FFFF_FFFF));
        assert!(
            check(&unfinished, "webm")
                .unwrap_err()
                .contains("ffmpeg did not finish it")
        );
        assert!(check(&webm_file(3, 0, None), "mp4").is_err());
    }
}
