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

/// [`parse`], giving up (`Ok(None)`) as soon as `stop` returns true; it is asked between
/// tracks and every few thousand events.
pub fn parse_until(
    bytes: &[u8],
    stop: &dyn Fn() -> bool,
) -> Result<Option<Vec<TimedNote>>, MidiError> {
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
    Ok(Some(timed(events, &mut tempos, division)))
}

/// Read and parse a MIDI file; `None` if `stop` was set meanwhile. Every failure (missing,
/// unreadable, empty, too large or not a valid MIDI file) becomes [`RenderError::Input`]
/// naming the path.
pub fn load(path: &Path, stop: &AtomicBool) -> Result<Option<Vec<TimedNote>>, RenderError> {
    let bytes = super::read_input(path, MAX_FILE_BYTES)?;
    if stop.load(Ordering::Relaxed) {
        return Ok(None);
    }
    parse_until(&bytes, &|| stop.load(Ordering::Relaxed))
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
mod tests {
    use super::*;
    use midly::num::{u4, u7, u15, u24, u28};
    use midly::{Format, Fps, Header, Smf, Timing, TrackEvent};
    use nice_plug::midi::{Channel, Key};

    fn ev(delta: u32, kind: TrackEventKind<'static>) -> TrackEvent<'static> {
        TrackEvent {
            delta: u28::new(delta),
            kind,
        }
    }

    fn midi(delta: u32, channel: u8, message: MidiMessage) -> TrackEvent<'static> {
        ev(
            delta,
            TrackEventKind::Midi {
                channel: u4::new(channel),
                message,
            },
        )
    }

    fn on(delta: u32, channel: u8, key: u8, vel: u8) -> TrackEvent<'static> {
        midi(
            delta,
            channel,
            MidiMessage::NoteOn {
                key: u7::new(key),
                vel: u7::new(vel),
            },
        )
    }

    fn tempo(delta: u32, micros: u32) -> TrackEvent<'static> {
        ev(
            delta,
            TrackEventKind::Meta(MetaMessage::Tempo(u24::new(micros))),
        )
    }

    fn eot(delta: u32) -> TrackEvent<'static> {
        ev(delta, TrackEventKind::Meta(MetaMessage::EndOfTrack))
    }

    fn write(format: Format, timing: Timing, tracks: Vec<Vec<TrackEvent<'static>>>) -> Vec<u8> {
        let mut smf = Smf::new(Header::new(format, timing));
        smf.tracks = tracks;
        let mut bytes = Vec::new();
        smf.write_std(&mut bytes).expect("write SMF");
        bytes
    }

    fn metrical(ticks: u16) -> Timing {
        Timing::Metrical(u15::new(ticks))
    }

    fn key_of(event: &NoteEvent<()>) -> Option<(u8, u8)> {
        match *event {
            NoteEvent::NoteOn {
                channel: Channel::Number(c),
                key: Key::Number(k),
                ..
            }
            | NoteEvent::NoteOff {
                channel: Channel::Number(c),
                key: Key::Number(k),
                ..
            } => Some((c, k)),
            _ => None,
        }
    }

    /// (time, (channel, key) of a note event, whether it is a note on), per event.
    type Summary = (f64, Option<(u8, u8)>, bool);

    fn summary(notes: &[TimedNote]) -> Vec<Summary> {
        notes
            .iter()
            .map(|n| (n.time_s, key_of(&n.event), is_on(&n.event)))
            .collect()
    }

    fn is_on(event: &NoteEvent<()>) -> bool {
        matches!(event, NoteEvent::NoteOn { .. })
    }

    fn is_off(event: &NoteEvent<()>) -> bool {
        matches!(event, NoteEvent::NoteOff { .. })
    }

    /// A type-1 file: a tempo track (120 bpm, then 60 bpm from tick 480) and a note track.
    fn type1_with_tempo_change() -> Vec<u8> {
        write(
            Format::Parallel,
            metrical(480),
            vec![
                vec![tempo(0, 500_000), tempo(480, 1_000_000), eot(0)],
                vec![
                    on(0, 0, 60, 100),
                    on(480, 0, 60, 0),
                    on(480, 0, 64, 90),
                    eot(0),
                ],
            ],
        )
    }

    #[test]
    fn type0_default_tempo_is_120_bpm() {
        let bytes = write(
            Format::SingleTrack,
            metrical(96),
            vec![vec![
                on(0, 0, 60, 127),
                on(96, 0, 60, 0),
                on(48, 0, 62, 64),
                eot(0),
            ]],
        );
        let notes = parse(&bytes).expect("parse");
        let times: Vec<f64> = notes.iter().map(|n| n.time_s).collect();
        assert_eq!(times, vec![0.0, 0.5, 0.75]);
        assert!(is_on(&notes[0].event));
        assert!(is_off(&notes[1].event));
        assert_eq!(key_of(&notes[2].event), Some((0, 62)));
        match notes[0].event {
            NoteEvent::NoteOn {
                timing, velocity, ..
            } => {
                assert_eq!(timing, 0);
                assert_eq!(velocity, 1.0);
            }
            ref other => panic!("expected NoteOn, got {other:?}"),
        }
        assert_eq!(duration_s(&notes), 0.75);
    }

    #[test]
    fn type1_tempo_change_applies_to_all_tracks() {
        let notes = parse(&type1_with_tempo_change()).expect("parse");
        let times: Vec<f64> = notes.iter().map(|n| n.time_s).collect();
        // Tick 480 at 120 bpm = 0.5 s; tick 960 = 0.5 + 480 ticks at 60 bpm = 1.5 s.
        assert_eq!(times, vec![0.0, 0.5, 1.5]);
        assert_eq!(duration_s(&notes), 1.5);
    }

    #[test]
    fn tempo_in_a_later_track_applies_to_earlier_tracks() {
        let bytes = write(
            Format::Parallel,
            metrical(480),
            vec![
                vec![on(0, 0, 60, 100), on(960, 0, 60, 0), eot(0)],
                vec![tempo(480, 250_000), eot(0)],
            ],
        );
        let notes = parse(&bytes).expect("parse");
        // 480 ticks at 120 bpm (0.5 s), then 480 ticks at 240 bpm (0.25 s).
        assert_eq!(notes[1].time_s, 0.75);
    }

    #[test]
    fn velocity_zero_note_on_is_note_off() {
        let bytes = write(
            Format::SingleTrack,
            metrical(480),
            vec![vec![on(0, 3, 70, 0), eot(0)]],
        );
        let notes = parse(&bytes).expect("parse");
        assert_eq!(notes.len(), 1);
        match notes[0].event {
            NoteEvent::NoteOff {
                channel,
                key,
                velocity,
                ..
            } => {
                assert_eq!(channel, Channel::Number(3));
                assert_eq!(key, Key::Number(70));
                assert_eq!(velocity, 0.0);
            }
            ref other => panic!("expected NoteOff, got {other:?}"),
        }
    }

    #[test]
    fn multi_channel_events_keep_channels_and_kinds() {
        let bytes = write(
            Format::Parallel,
            metrical(480),
            vec![
                vec![
                    on(0, 0, 60, 100),
                    midi(
                        0,
                        9,
                        MidiMessage::Controller {
                            controller: u7::new(1),
                            value: u7::new(127),
                        },
                    ),
                    midi(
                        0,
                        4,
                        MidiMessage::ProgramChange {
                            program: u7::new(5),
                        },
                    ),
                    eot(0),
                ],
                vec![
                    on(0, 15, 61, 100),
                    midi(
                        0,
                        7,
                        MidiMessage::PitchBend {
                            bend: midly::PitchBend::max_raw_value(),
                        },
                    ),
                    midi(0, 2, MidiMessage::ChannelAftertouch { vel: u7::new(127) }),
                    midi(
                        0,
                        11,
                        MidiMessage::Aftertouch {
                            key: u7::new(61),
                            vel: u7::new(0),
                        },
                    ),
                    midi(
                        0,
                        5,
                        MidiMessage::NoteOff {
                            key: u7::new(61),
                            vel: u7::new(127),
                        },
                    ),
                    eot(0),
                ],
            ],
        );
        let notes = parse(&bytes).expect("parse");
        // The program change is dropped; everything else keeps file order (track 1, track 2).
        assert_eq!(notes.len(), 7);
        assert_eq!(key_of(&notes[0].event), Some((0, 60)));
        assert!(matches!(
            notes[1].event,
            NoteEvent::MidiCC { channel: 9, cc: 1, value, .. } if value == 1.0
        ));
        assert_eq!(key_of(&notes[2].event), Some((15, 61)));
        assert!(matches!(
            notes[3].event,
            NoteEvent::MidiPitchBend { channel: 7, value, .. } if value == 1.0
        ));
        assert!(matches!(
            notes[4].event,
            NoteEvent::MidiChannelPressure { channel: 2, pressure, .. } if pressure == 1.0
        ));
        assert!(matches!(
            notes[5].event,
            NoteEvent::PolyPressure {
                channel: Channel::Number(11),
                key: Key::Number(61),
                ..
            }
        ));
        assert!(is_off(&notes[6].event));
        assert_eq!(key_of(&notes[6].event), Some((5, 61)));
        assert!(
            notes
                .iter()
                .all(|n| n.time_s == 0.0 && n.event.timing() == 0)
        );
    }

    #[test]
    fn merge_is_sorted_and_stable() {
        let bytes = write(
            Format::Parallel,
            metrical(480),
            vec![
                vec![on(0, 0, 60, 100), on(480, 0, 60, 0), eot(0)],
                vec![
                    on(240, 1, 62, 100),
                    on(240, 1, 62, 0),
                    on(0, 1, 64, 100),
                    eot(0),
                ],
            ],
        );
        let notes = parse(&bytes).expect("parse");
        let order = summary(&notes);
        assert_eq!(
            order,
            vec![
                (0.0, Some((0, 60)), true),
                (0.25, Some((1, 62)), true),
                // Tick 480: track 1's event first, then track 2's in their file order.
                (0.5, Some((0, 60)), false),
                (0.5, Some((1, 62)), false),
                (0.5, Some((1, 64)), true),
            ]
        );
    }

    /// MThd + one MTrk with the given event bytes.
    fn hand_made(format: u16, division: [u8; 2], track: &[u8]) -> Vec<u8> {
        let mut bytes = b"MThd\0\0\0\x06".to_vec();
        bytes.extend_from_slice(&format.to_be_bytes());
        bytes.extend_from_slice(&1u16.to_be_bytes());
        bytes.extend_from_slice(&division);
        bytes.extend_from_slice(b"MTrk");
        bytes.extend_from_slice(&(track.len() as u32).to_be_bytes());
        bytes.extend_from_slice(track);
        bytes
    }

    #[test]
    fn running_status_hand_assembled() {
        // 96 ticks per beat; note on, then three more events without a status byte.
        let track = [
            0x00, 0x91, 60, 100, // on ch 1, key 60
            0x60, 64, 90, // +96 ticks: running-status note on, key 64
            0x60, 60, 0, // +96: running-status on with velocity 0 = off, key 60
            0x00, 64, 0, // +0: off key 64
            0x00, 0xFF, 0x2F, 0x00, // End of Track
        ];
        let notes = parse(&hand_made(0, [0, 96], &track)).expect("parse");
        let got = summary(&notes);
        assert_eq!(
            got,
            vec![
                (0.0, Some((1, 60)), true),
                (0.5, Some((1, 64)), true),
                (1.0, Some((1, 60)), false),
                (1.0, Some((1, 64)), false),
            ]
        );
    }

    /// A meta or SysEx event whose declared length runs past the end of its track would, in
    /// midly's lenient mode, swallow the notes after it: an error instead.
    #[test]
    fn events_longer_than_their_track_are_errors() {
        let note = [0x00, 0x90, 60, 100, 0x60, 0x80, 60, 0];
        for (what, event) in [
            ("meta", &[0x00, 0xFF, 0x01, 0x40, b'h', b'i'][..]),
            ("SysEx", &[0x00, 0xF0, 0x40, 0x7E, 0xF7][..]),
            ("SysEx", &[0x00, 0xF7, 0x7F, 0x01][..]),
        ] {
            let mut track = event.to_vec();
            track.extend_from_slice(&note);
            let err = parse(&hand_made(0, [0, 96], &track))
                .expect_err(what)
                .to_string();
            assert!(
                err.contains(what) && err.contains("past the end of the track"),
                "{what}: {err}"
            );
        }
        // The same events with their true lengths read fine, and the notes after them stay.
        let mut track = vec![0x00, 0xFF, 0x01, 0x02, b'h', b'i', 0x00, 0xF0, 0x01, 0xF7];
        track.extend_from_slice(&note);
        assert_eq!(parse(&hand_made(0, [0, 96], &track)).expect("ok").len(), 2);
    }

    #[test]
    fn tempo_events_must_be_three_bytes_and_not_zero() {
        let note = [0x00, 0x90, 60, 100];
        let mut short = vec![0x00, 0xFF, 0x51, 0x02, 0x07, 0xA1];
        short.extend_from_slice(&note);
        let err = parse(&hand_made(0, [0, 96], &short))
            .expect_err("2-byte tempo")
            .to_string();
        assert!(
            err.contains("tempo") && err.contains("2 data bytes"),
            "{err}"
        );
        let mut zero = vec![0x00, 0xFF, 0x51, 0x03, 0, 0, 0];
        zero.extend_from_slice(&note);
        let err = parse(&hand_made(0, [0, 96], &zero))
            .expect_err("tempo 0")
            .to_string();
        assert!(err.contains("tempo of 0"), "{err}");
    }

    #[test]
    fn parsing_stops_when_asked() {
        let bytes = type1_with_tempo_change();
        assert_eq!(parse_until(&bytes, &|| true), Ok(None));
        assert_eq!(parse_until(&bytes, &|| false), parse(&bytes).map(Some));
    }

    #[test]
    fn missing_end_of_track_is_accepted() {
        let track = [0x00, 0x90, 60, 100, 0x60, 0x80, 60, 0];
        let notes = parse(&hand_made(0, [0, 96], &track)).expect("parse");
        assert_eq!(notes.len(), 2);
        assert_eq!(notes[1].time_s, 0.5);
    }

    #[test]
    fn event_cut_inside_its_chunk_is_an_error() {
        // The chunk length is right, but the last note-on lacks its velocity byte.
        let track = [0x00, 0x90, 60, 100, 0x60, 0x90, 60];
        let err = parse(&hand_made(0, [0, 96], &track))
            .expect_err("must fail")
            .to_string();
        assert!(err.contains("track 1"), "{err}");
    }

    #[test]
    fn truncated_files_are_errors() {
        let bytes = type1_with_tempo_change();
        // Every cut, from inside the header to one byte short, is an error.
        for len in 0..bytes.len() {
            let err = parse(&bytes[..len])
                .expect_err("truncated file must fail")
                .to_string();
            assert!(
                err.contains("truncated") || err.contains("not a MIDI file"),
                "cut at {len}: {err}"
            );
        }
        let err = parse(&bytes[..bytes.len() - 3])
            .expect_err("must fail")
            .to_string();
        assert_eq!(err, "truncated MIDI file (track 2 ends early)");
    }

    #[test]
    fn garbage_is_not_a_midi_file() {
        for garbage in [
            &b"hello, this is not music"[..],
            &[][..],
            &[0xFF; 64][..],
            &b"RIFF\x24\0\0\0WAVEfmt "[..],
        ] {
            let err = parse(garbage).expect_err("must fail").to_string();
            assert!(
                err.contains("not a MIDI file") && err.contains("MThd"),
                "{err}"
            );
        }
    }

    #[test]
    fn format_2_is_rejected() {
        let bytes = write(
            Format::Sequential,
            metrical(480),
            vec![vec![on(0, 0, 60, 100), eot(0)]],
        );
        assert_eq!(
            parse(&bytes).expect_err("must fail").to_string(),
            "MIDI format 2 (sequential tracks) is not supported"
        );
    }

    #[test]
    fn timecode_timing_ignores_tempo() {
        // 25 fps x 40 subframes = 1000 ticks per second.
        let bytes = write(
            Format::SingleTrack,
            Timing::Timecode(Fps::Fps25, 40),
            vec![vec![
                tempo(0, 1_000_000),
                on(500, 0, 60, 100),
                on(1500, 0, 60, 0),
                eot(0),
            ]],
        );
        let notes = parse(&bytes).expect("parse");
        let times: Vec<f64> = notes.iter().map(|n| n.time_s).collect();
        assert_eq!(times, vec![0.5, 2.0]);
    }

    #[test]
    fn corrupt_headers_are_errors() {
        // Zero ticks per beat.
        let err = parse(&hand_made(0, [0, 0], &[0x00, 0xFF, 0x2F, 0x00]))
            .expect_err("0 tpb")
            .to_string();
        assert!(err.contains("ticks per beat"), "{err}");
        // Unknown format number.
        let err = parse(&hand_made(7, [0, 96], &[0x00, 0xFF, 0x2F, 0x00]))
            .expect_err("format")
            .to_string();
        assert!(err.contains("format 7"), "{err}");
        // More tracks declared than present.
        let mut bytes = hand_made(1, [0, 96], &[0x00, 0xFF, 0x2F, 0x00]);
        bytes[11] = 3;
        let err = parse(&bytes).expect_err("missing tracks").to_string();
        assert!(err.contains("declares 3 tracks, found 1"), "{err}");
    }

    #[test]
    fn rmid_container_is_unwrapped() {
        let smf = type1_with_tempo_change();
        let mut riff = b"RIFF".to_vec();
        riff.extend_from_slice(&((4 + 8 + smf.len()) as u32).to_le_bytes());
        riff.extend_from_slice(b"RMIDdata");
        riff.extend_from_slice(&(smf.len() as u32).to_le_bytes());
        riff.extend_from_slice(&smf);
        assert_eq!(parse(&riff), parse(&smf));
    }

    #[test]
    fn mutated_files_never_panic() {
        let mut bytes = type1_with_tempo_change();
        bytes.extend_from_slice(&hand_made(0, [0xE7, 40], &[0x00, 0x90, 60, 100])[14..]);
        for at in 0..bytes.len() {
            for value in [0x00, 0x01, 0x7F, 0x80, 0xE7, 0xF0, 0xFF] {
                let mut mutated = bytes.clone();
                mutated[at] = value;
                let _ = parse(&mutated);
                let _ = parse(&mutated[..at]);
            }
        }
    }

    #[test]
    fn load_reports_missing_and_empty_files() {
        let dir = std::env::temp_dir().join(format!("dyeflow-midi-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let missing = dir.join("missing.mid");
        let err = load(&missing, &AtomicBool::new(false)).expect_err("missing");
        assert_eq!(
            err.to_string(),
            format!("{}: file not found", missing.display())
        );
        assert_eq!(err.exit_code(), 2);

        let empty = dir.join("empty.mid");
        std::fs::write(&empty, b"").expect("write");
        let err = load(&empty, &AtomicBool::new(false)).expect_err("empty");
        assert_eq!(err.to_string(), format!("{}: empty file", empty.display()));

        let good = dir.join("good.mid");
        std::fs::write(&good, type1_with_tempo_change()).expect("write");
        assert_eq!(
            load(&good, &AtomicBool::new(false))
                .expect("load")
                .map(|n| n.len()),
            Some(3)
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
