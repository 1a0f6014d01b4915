//! Standard MIDI Files for `dyeflow render`: every channel message of every track, merged into
//! one list in seconds from the start of the file.
//!
//! midly decodes the events (running status, meta and SysEx framing). Its strict mode is a
//! compile-time feature that this crate does not enable, and in lenient mode midly quietly
//! drops whatever follows a damaged chunk or event, so a cut-off file would load as a shorter
//! song. To avoid that, this module walks the chunk structure itself (header, declared track
//! count, chunk lengths) and feeds each track chunk to [`midly::EventIter`], treating an event
//! iterator that stops before the end of its chunk as an error. The only leniency kept is a
//! missing End-of-Track meta event: many writers omit it, and a track whose chunk ends on a
//! complete event has lost nothing. Bytes after an End-of-Track event, and any chunks after
//! the declared number of tracks, are ignored.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use midly::{EventIter, MetaMessage, MidiMessage, TrackEventKind};
use nice_plug::midi::NoteEvent;

use super::RenderError;

/// The most events (of any kind, across all tracks) a file may hold before it is rejected.
pub const MAX_EVENTS: usize = 10_000_000;

/// The largest MIDI file [`load`] reads, in bytes.
pub const MAX_FILE_BYTES: u64 = 256 * 1024 * 1024;

/// The tempo until the first Tempo meta event: 120 beats per minute.
const DEFAULT_MICROS_PER_BEAT: f64 = 500_000.0;

/// Why bytes are not a MIDI file Dyeflow reads. Each message is a short problem phrase without
/// a file name (the caller adds it); offsets are bytes from the start of the SMF (chunks) or of
/// the track's data (events), and tracks count from 1.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MidiError {
    /// Neither `MThd` nor a RIFF RMID container.
    #[error("not a MIDI file (no MThd header)")]
    NotMidi,
    /// A RIFF WAVE file.
    #[error("not a MIDI file (no MThd header; it is a WAV file)")]
    WavFile,
    /// A RIFF RMID container whose data chunk is not an SMF.
    #[error("not a MIDI file (RIFF RMID data has no MThd header)")]
    RmidDataNotSmf,
    /// A RIFF RMID container without a data chunk.
    #[error("not a MIDI file (RIFF RMID without a data chunk)")]
    RmidWithoutData,
    /// `RIFF` but fewer than the 12 bytes of a RIFF header.
    #[error("truncated MIDI file (RIFF header ends early)")]
    RiffHeaderCut,
    /// A RIFF chunk that runs past the end of the file.
    #[error("truncated MIDI file (RIFF chunk at byte {offset} ends early)")]
    RiffChunkCut {
        /// The chunk's offset in the RIFF file.
        offset: usize,
    },
    /// The MThd chunk runs past the end of the file.
    #[error("truncated MIDI file (header ends early)")]
    HeaderCut,
    /// An MThd chunk shorter than 6 bytes.
    #[error("corrupt MIDI header (MThd length {0}, expected 6)")]
    HeaderLength(usize),
    /// An SMPTE division with a frame rate other than 24, 25, 29 or 30.
    #[error("corrupt MIDI header (unknown SMPTE frame rate {0})")]
    SmpteFrameRate(u8),
    /// An SMPTE division with 0 ticks per frame.
    #[error("corrupt MIDI header (0 ticks per SMPTE frame)")]
    ZeroTicksPerFrame,
    /// A metrical division of 0 ticks per beat.
    #[error("corrupt MIDI header (0 ticks per beat)")]
    ZeroTicksPerBeat,
    /// Format 2: independent sequential tracks.
    #[error("MIDI format 2 (sequential tracks) is not supported")]
    Format2,
    /// A format number other than 0, 1 or 2.
    #[error("corrupt MIDI header (unknown format {0})")]
    UnknownFormat(u16),
    /// Fewer track chunks than the header declares.
    #[error("truncated MIDI file (the header declares {declared} tracks, found {found})")]
    MissingTracks {
        /// Tracks the header declares.
        declared: usize,
        /// Track chunks present.
        found: usize,
    },
    /// A track chunk that runs past the end of the file.
    #[error("truncated MIDI file (track {0} ends early)")]
    TrackCut(usize),
    /// A chunk id that is not four printable ASCII characters.
    #[error("corrupt MIDI file (invalid chunk at byte {offset})")]
    BadChunk {
        /// The chunk's offset.
        offset: usize,
    },
    /// A chunk other than a track that runs past the end of the file.
    #[error("truncated MIDI file (chunk \"{}\" at byte {offset} ends early)", id.escape_ascii())]
    ChunkCut {
        /// The chunk's id.
        id: [u8; 4],
        /// The chunk's offset.
        offset: usize,
    },
    /// midly (in strict mode) rejected an event.
    #[error("corrupt MIDI file (track {track}: {reason} at byte {offset} of the track)")]
    BadEvent {
        /// The track.
        track: usize,
        /// The event's offset in the track.
        offset: usize,
        /// midly's reason.
        reason: &'static str,
    },
    /// midly (in lenient mode) stopped at a malformed or cut-off event.
    #[error("corrupt MIDI file (track {track}: unreadable event at byte {offset} of the track)")]
    UnreadableEvent {
        /// The track.
        track: usize,
        /// The event's offset in the track.
        offset: usize,
    },
    /// More than [`MAX_EVENTS`] events.
    #[error("too many events (more than {max}); Dyeflow reads smaller MIDI files", max = MAX_EVENTS)]
    TooManyEvents,
    /// A Tempo meta event of 0 microseconds per beat.
    #[error(
        "corrupt MIDI file (track {track}: a tempo of 0 microseconds per beat at byte {offset} of \
         the track)"
    )]
    ZeroTempo {
        /// The track.
        track: usize,
        /// The event's offset in the track.
        offset: usize,
    },
    /// A meta or SysEx event whose length field is cut off by the end of the track.
    #[error(
        "truncated MIDI file (track {track}: a {kind} event at byte {offset} of the track ends \
         early)"
    )]
    EventLengthCut {
        /// The track.
        track: usize,
        /// The event's offset in the track.
        offset: usize,
        /// "meta" or "SysEx".
        kind: &'static str,
    },
    /// A meta or SysEx event whose declared length runs past the end of its track.
    #[error(
        "corrupt MIDI file (track {track}: a {kind} event at byte {offset} of the track claims \
         {len} bytes, past the end of the track)"
    )]
    EventTooLong {
        /// The track.
        track: usize,
        /// The event's offset in the track.
        offset: usize,
        /// "meta" or "SysEx".
        kind: &'static str,
        /// The declared data length.
        len: usize,
    },
    /// A Tempo meta event with other than 3 data bytes.
    #[error(
        "corrupt MIDI file (track {track}: a tempo event at byte {offset} of the track has {len} \
         data bytes, not 3)"
    )]
    TempoLength {
        /// The track.
        track: usize,
        /// The event's offset in the track.
        offset: usize,
        /// The declared data length.
        len: usize,
    },
}

/// One MIDI event at its time in seconds from the start of the file.
#[derive(Clone, Debug, PartialEq)]
pub struct TimedNote {
    /// Seconds from the start of the file.
    pub time_s: f64,
    /// The event. Its `timing()` is 0, a placeholder: the time is `time_s`.
    pub event: NoteEvent<()>,
}

/// How the header's division field turns ticks into time.
#[derive(Clone, Copy, Debug)]
enum Division {
    /// Ticks per quarter note; seconds depend on the tempo map.
    Metrical { ticks_per_beat: u16 },
    /// SMPTE timing: a fixed number of ticks per second, tempo events do not apply.
    Timecode { ticks_per_second: f64 },
}

/// A channel event before its time in seconds is known.
struct TickedEvent {
    tick: u64,
    event: NoteEvent<()>,
}

/// Parse a Standard MIDI File (format 0 or 1, optionally wrapped in a RIFF RMID container).
///
/// All tracks and all 16 channels are merged. Note on/off (a note-on with velocity 0 is a note
/// off), control change, pitch bend, channel pressure and polyphonic aftertouch become
/// [`NoteEvent`]s; program changes, SysEx and meta events other than Tempo are dropped. The
/// result is sorted by time; events at the same tick keep file order (track by track, then
/// within each track).
///
/// # Errors
/// A [`MidiError`] for bytes that are not a complete format 0 or 1 MIDI file.
pub fn parse(bytes: &[u8]) -> Result<Vec<TimedNote>, MidiError> {
    parse_until(bytes, &|| false).map(|notes| notes.unwrap_or_default())
}

/// [`parse`] with the file's tempo map (none for SMPTE timing, which has no beats).
pub fn parse_with_tempo(bytes: &[u8]) -> Result<Parsed, MidiError> {
    parse_until_with_tempo(bytes, &|| false).map(|m| m.unwrap_or_default())
}

/// [`parse`], giving up (`Ok(None)`) as soon as `stop` returns true; it is asked between
/// tracks and every few thousand events.
pub fn parse_until(
    bytes: &[u8],
    stop: &dyn Fn() -> bool,
) -> Result<Option<Vec<TimedNote>>, MidiError> {
    parse_until_with_tempo(bytes, stop).map(|m| m.map(|(notes, _)| notes))
}

/// A MIDI file read: its notes and its tempo map (see [`parse_with_tempo`]).
pub type Parsed = (Vec<TimedNote>, Option<TempoMap>);

/// A metrical MIDI file's tempo map: where each tempo starts, in seconds and in beats
/// (quarter notes), 120 bpm until the first Tempo event.
#[derive(Clone, Debug, PartialEq)]
pub struct TempoMap {
    /// (seconds, beat, beats a minute) at each change, sorted; the first at 0.
    segments: Vec<(f64, f64, f64)>,
}

impl TempoMap {
    pub(super) fn new(tempos: &[(u64, u32)], ticks_per_beat: u16) -> Self {
        let per_beat = f64::from(ticks_per_beat.max(1));
        let mut segments = vec![(0.0, 0.0, 60e6 / DEFAULT_MICROS_PER_BEAT)];
        let mut last_tick = 0u64;
        for &(tick, micros) in tempos {
            let &(at_s, beat, bpm) = segments.last().expect("one at least");
            let beats = (tick - last_tick) as f64 / per_beat;
            let next = (
                at_s + beats * 60.0 / bpm,
                beat + beats,
                60e6 / f64::from(micros),
            );
            if tick == last_tick {
                // Of several changes on one tick, the last wins.
                *segments.last_mut().expect("one at least") = (at_s, beat, next.2);
            } else {
                segments.push(next);
            }
            last_tick = tick;
        }
        Self { segments }
    }

    /// The tempo (beats a minute) and the beat position at `seconds` into the file (before
    /// 0: the first tempo, running back).
    pub fn at(&self, seconds: f64) -> (f64, f64) {
        let i = self
            .segments
            .partition_point(|s| s.0 <= seconds)
            .saturating_sub(1);
        let (at_s, beat, bpm) = self.segments[i];
        (bpm, beat + (seconds - at_s) * bpm / 60.0)
    }
}

/// [`parse_until`] with the file's tempo map (see [`parse_with_tempo`]).
pub fn parse_until_with_tempo(
    bytes: &[u8],
    stop: &dyn Fn() -> bool,
) -> Result<Option<Parsed>, MidiError> {
    let smf = unwrap_rmid(bytes)?;
    let (format, declared_tracks, division, mut rest) = parse_header(smf)?;
    match format {
        0 | 1 => {}
        2 => return Err(MidiError::Format2),
        other => return Err(MidiError::UnknownFormat(other)),
    }

    let mut events: Vec<TickedEvent> = Vec::new();
    // (tick, microseconds per beat), from every track: type-1 files keep them in the first
    // track by convention, but a Tempo event anywhere applies to all tracks.
    let mut tempos: Vec<(u64, u32)> = Vec::new();
    let mut event_count = 0usize;
    let mut found_tracks = 0usize;
    let declared = usize::from(declared_tracks);

    while found_tracks < declared {
        let chunk_offset = smf.len() - rest.len();
        if rest.is_empty() {
            return Err(MidiError::MissingTracks {
                declared,
                found: found_tracks,
            });
        }
        let Some((id, len)) = chunk_header_be(rest) else {
            return Err(MidiError::TrackCut(found_tracks + 1));
        };
        if !id.iter().all(|b| b.is_ascii_graphic() || *b == b' ') {
            return Err(MidiError::BadChunk {
                offset: chunk_offset,
            });
        }
        let body = &rest[8..];
        let Some(data) = body.get(..len) else {
            return Err(if &id == b"MTrk" {
                MidiError::TrackCut(found_tracks + 1)
            } else {
                MidiError::ChunkCut {
                    id,
                    offset: chunk_offset,
                }
            });
        };
        rest = &body[len..];
        if &id != b"MTrk" {
            // Unknown chunk types are skipped, as the SMF specification asks.
            continue;
        }
        found_tracks += 1;
        let finished = read_track(
            data,
            found_tracks,
            division,
            &mut events,
            &mut tempos,
            &mut event_count,
            stop,
        )?;
        if !finished {
            return Ok(None);
        }
    }

    events.sort_by_key(|e| e.tick);
    let notes = timed(events, &mut tempos, division);
    // Sorted by `timed`, ticks in order and of one tick in file order.
    let tempo = match division {
        Division::Metrical { ticks_per_beat } => Some(TempoMap::new(&tempos, ticks_per_beat)),
        Division::Timecode { .. } => None,
    };
    Ok(Some((notes, tempo)))
}

/// Read and parse a MIDI file (its notes and tempo map); `None` if `stop` was set meanwhile.
/// Every failure (missing,
/// unreadable, empty, too large or not a valid MIDI file) becomes [`RenderError::Input`]
/// naming the path.
pub fn load(path: &Path, stop: &AtomicBool) -> Result<Option<Parsed>, RenderError> {
    let Some(bytes) = super::read_input_until(path, MAX_FILE_BYTES, stop)? else {
        return Ok(None);
    };
    parse_until_with_tempo(&bytes, &|| stop.load(Ordering::Relaxed))
        .map_err(|problem| RenderError::input(path, problem))
}

/// Seconds until the last event (0 for none).
pub fn duration_s(notes: &[TimedNote]) -> f64 {
    notes.iter().map(|n| n.time_s).fold(0.0, f64::max)
}

/// A chunk's 4-byte id and big-endian length, if at least 8 bytes remain.
fn chunk_header_be(raw: &[u8]) -> Option<([u8; 4], usize)> {
    let id: [u8; 4] = raw.get(..4)?.try_into().ok()?;
    let len: [u8; 4] = raw.get(4..8)?.try_into().ok()?;
    Some((id, u32::from_be_bytes(len) as usize))
}

/// The SMF inside a RIFF RMID container, or the input itself if it starts with `MThd`.
fn unwrap_rmid(bytes: &[u8]) -> Result<&[u8], MidiError> {
    if bytes.starts_with(b"MThd") {
        return Ok(bytes);
    }
    if !bytes.starts_with(b"RIFF") {
        return Err(MidiError::NotMidi);
    }
    match bytes.get(8..12) {
        Some(b"RMID") => {}
        Some(b"WAVE") => return Err(MidiError::WavFile),
        Some(_) => return Err(MidiError::NotMidi),
        None => return Err(MidiError::RiffHeaderCut),
    }
    let mut rest = &bytes[12..];
    while !rest.is_empty() {
        let offset = bytes.len() - rest.len();
        let (Some(id), Some(len)) = (rest.get(..4), rest.get(4..8)) else {
            return Err(MidiError::RiffChunkCut { offset });
        };
        let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
        let Some(data) = rest.get(8..).and_then(|b| b.get(..len)) else {
            return Err(MidiError::RiffChunkCut { offset });
        };
        if id == b"data" {
            return if data.starts_with(b"MThd") {
                Ok(data)
            } else {
                Err(MidiError::RmidDataNotSmf)
            };
        }
        // Chunks are padded to an even length.
        let skip = (8 + len + (len & 1)).min(rest.len());
        rest = &rest[skip..];
    }
    Err(MidiError::RmidWithoutData)
}

/// The header chunk: format, declared track count, division, and the bytes after the chunk.
fn parse_header(smf: &[u8]) -> Result<(u16, u16, Division, &[u8]), MidiError> {
    let Some((_, len)) = chunk_header_be(smf) else {
        return Err(MidiError::HeaderCut);
    };
    if len < 6 {
        return Err(MidiError::HeaderLength(len));
    }
    let Some(body) = smf.get(8..).and_then(|b| b.get(..len)) else {
        return Err(MidiError::HeaderCut);
    };
    let word = |i: usize| u16::from_be_bytes([body[i], body[i + 1]]);
    let (format, tracks, raw_division) = (word(0), word(2), word(4));
    let division = if raw_division & 0x8000 != 0 {
        let [hi, lo] = raw_division.to_be_bytes();
        // The high byte is minus the frame rate, as a two's complement i8.
        let fps = match (hi as i8).unsigned_abs() {
            24 => 24.0,
            25 => 25.0,
            // "29" is 30 drop-frame: 29.97 frames per second in real time.
            29 => 30.0 / 1.001,
            30 => 30.0,
            other => return Err(MidiError::SmpteFrameRate(other)),
        };
        if lo == 0 {
            return Err(MidiError::ZeroTicksPerFrame);
        }
        Division::Timecode {
            ticks_per_second: fps * f64::from(lo),
        }
    } else {
        if raw_division == 0 {
            return Err(MidiError::ZeroTicksPerBeat);
        }
        Division::Metrical {
            ticks_per_beat: raw_division,
        }
    };
    Ok((format, tracks, division, &smf[8 + len..]))
}

/// Decode one track chunk (`number` counts from 1), appending its channel events and tempo
/// changes at their absolute ticks. Returns `false` if `stop` said to give up.
#[allow(clippy::too_many_arguments)]
fn read_track(
    data: &[u8],
    number: usize,
    division: Division,
    events: &mut Vec<TickedEvent>,
    tempos: &mut Vec<(u64, u32)>,
    event_count: &mut usize,
    stop: &dyn Fn() -> bool,
) -> Result<bool, MidiError> {
    let mut iter = EventIter::new(data);
    let mut tick = 0u64;
    if stop() {
        return Ok(false);
    }
    // A missing End-of-Track is tolerated: the loop also ends when the chunk's bytes do.
    while !iter.unread().is_empty() {
        let offset = data.len() - iter.unread().len();
        check_framing(iter.unread(), number, offset)?;
        if (*event_count).is_multiple_of(STOP_CHECK_EVENTS) && stop() {
            return Ok(false);
        }
        let event = match iter.next() {
            Some(Ok(event)) => event,
            // Only with midly's `strict` feature (if something else in the build enables it).
            Some(Err(e)) => {
                return Err(MidiError::BadEvent {
                    track: number,
                    offset,
                    reason: e.kind().message(),
                });
            }
            // Lenient midly ends the iterator on a malformed or cut-off event.
            None => {
                return Err(MidiError::UnreadableEvent {
                    track: number,
                    offset,
                });
            }
        };
        *event_count += 1;
        if *event_count > MAX_EVENTS {
            return Err(MidiError::TooManyEvents);
        }
        tick += u64::from(event.delta.as_int());
        match event.kind {
            TrackEventKind::Midi { channel, message } => {
                if let Some(note) = to_note_event(channel.as_int(), message) {
                    events.push(TickedEvent { tick, event: note });
                }
            }
            TrackEventKind::Meta(MetaMessage::Tempo(micros)) => {
                if micros.as_int() == 0 {
                    return Err(MidiError::ZeroTempo {
                        track: number,
                        offset,
                    });
                }
                if matches!(division, Division::Metrical { .. }) {
                    tempos.push((tick, micros.as_int()));
                }
            }
            TrackEventKind::Meta(MetaMessage::EndOfTrack) => break,
            _ => {}
        }
    }
    Ok(true)
}

/// How many events are read between looks at the stop flag.
const STOP_CHECK_EVENTS: usize = 1 << 14;

/// A variable-length quantity (at most 4 bytes) at the start of `bytes`: its value and length.
fn varint(bytes: &[u8]) -> Option<(usize, usize)> {
    let mut value = 0usize;
    for (i, &b) in bytes.iter().take(4).enumerate() {
        value = (value << 7) | usize::from(b & 0x7F);
        if b & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
}

/// Check the framing of the event at the start of `event` (its delta time first) that midly,
/// being lenient, would accept: a meta or SysEx event's declared length must end inside its
/// track (else midly cuts it short there and the events after it vanish into its data), and a
/// Tempo meta event has exactly 3 data bytes.
fn check_framing(event: &[u8], number: usize, offset: usize) -> Result<(), MidiError> {
    let Some((_, delta_len)) = varint(event) else {
        return Ok(()); // midly reports a broken delta itself.
    };
    let rest = &event[delta_len..];
    let (kind, meta_type, header) = match rest.first() {
        Some(0xFF) => ("meta", rest.get(1).copied(), 2),
        Some(0xF0 | 0xF7) => ("SysEx", None, 1),
        _ => return Ok(()),
    };
    let Some((len, len_len)) = rest.get(header..).and_then(varint) else {
        return Err(MidiError::EventLengthCut {
            track: number,
            offset,
            kind,
        });
    };
    let end = header + len_len + len;
    if end > rest.len() {
        return Err(MidiError::EventTooLong {
            track: number,
            offset,
            kind,
            len,
        });
    }
    if meta_type == Some(0x51) && len != 3 {
        return Err(MidiError::TempoLength {
            track: number,
            offset,
            len,
        });
    }
    Ok(())
}

/// A channel message as a nice-plug event (timing 0), or `None` for program changes.
fn to_note_event(channel: u8, message: MidiMessage) -> Option<NoteEvent<()>> {
    let ch = channel & 0x0F;
    let raw: ([u8; 3], usize) = match message {
        MidiMessage::NoteOff { key, vel } => ([0x80 | ch, key.as_int(), vel.as_int()], 3),
        MidiMessage::NoteOn { key, vel } => ([0x90 | ch, key.as_int(), vel.as_int()], 3),
        MidiMessage::Aftertouch { key, vel } => ([0xA0 | ch, key.as_int(), vel.as_int()], 3),
        MidiMessage::Controller { controller, value } => {
            ([0xB0 | ch, controller.as_int(), value.as_int()], 3)
        }
        MidiMessage::ProgramChange { .. } => return None,
        MidiMessage::ChannelAftertouch { vel } => ([0xD0 | ch, vel.as_int(), 0], 2),
        MidiMessage::PitchBend { bend } => {
            let value = bend.0.as_int();
            (
                [0xE0 | ch, (value & 0x7F) as u8, ((value >> 7) & 0x7F) as u8],
                3,
            )
        }
    };
    NoteEvent::<()>::from_midi(0, &raw.0[..raw.1]).ok()
}

/// Convert tick-sorted events to seconds, using the tempo map for metrical files.
fn timed(
    events: Vec<TickedEvent>,
    tempos: &mut [(u64, u32)],
    division: Division,
) -> Vec<TimedNote> {
    match division {
        Division::Timecode { ticks_per_second } => events
            .into_iter()
            .map(|e| TimedNote {
                time_s: e.tick as f64 / ticks_per_second,
                event: e.event,
            })
            .collect(),
        Division::Metrical { ticks_per_beat } => {
            // Stable: of several tempo events on one tick, the last in file order wins.
            tempos.sort_by_key(|t| t.0);
            let micros_per_tick_unit = 1e6 * f64::from(ticks_per_beat);
            let mut next_tempo = tempos.iter().peekable();
            let mut segment_tick = 0u64;
            let mut segment_s = 0.0f64;
            let mut micros_per_beat = DEFAULT_MICROS_PER_BEAT;
            events
                .into_iter()
                .map(|e| {
                    // A tempo change on the event's own tick applies to the event.
                    while let Some(&(tick, micros)) = next_tempo.next_if(|t| t.0 <= e.tick) {
                        segment_s +=
                            (tick - segment_tick) as f64 * micros_per_beat / micros_per_tick_unit;
                        segment_tick = tick;
                        micros_per_beat = f64::from(micros);
                    }
                    TimedNote {
                        time_s: segment_s
                            + (e.tick - segment_tick) as f64 * micros_per_beat
                                / micros_per_tick_unit,
                        event: e.event,
                    }
                })
                .collect()
        }
    }
}

#[cfg(test)]
mod tests;
