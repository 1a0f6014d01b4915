//! The audio thread's side of a capture: pushes [`Record`]s into the capture queue. Never
//! allocates, locks or waits (a full queue drops the record and counts it).
//!
//! While the host processes, the recorder is in one of two modes: capturing (the host renders
//! offline, the Record switch is on, or the pace shows a bounce), or watching (records go to the
//! capture thread, which keeps the last few seconds in memory and writes nothing, so that a
//! bounce recognised by its pace, see [`super::pace`], is captured from its first block).

use super::pace::{Pace, PaceEvent};
use super::{Cause, Record};
use crate::bridge::SentEvents;
use crate::bridge::events::TimedEvent;
use crate::bridge::queue::Sender;
use nice_plug::prelude::{ParamPtr, Params};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Free slots kept for the starts, watches, bounces and stops: a queue that fills drops events,
/// parameters and transport first, so a capture always ends (and the next one starts). A
/// control record that still finds no room is not sent, and the recorder keeps its mode (it
/// tries again at the next block), so the capture thread never falls out of step with it.
const RESERVED_SLOTS: usize = 16;

/// What the recorder does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// The host does not process (before the first block, after a deactivation).
    Off,
    /// Records are kept in memory only, in case a bounce began.
    Watching,
    /// A capture: asked for (offline, Record), or recognised by the pace.
    Capturing { asked: bool },
}

/// Records a capture's events, transport and parameter changes while it is on (or watched).
pub struct Recorder {
    sender: Sender<Record>,
    /// Keeps the parameters the pointers point into alive.
    _params: Arc<dyn Params>,
    /// Every parameter, in the order of `param_map` (the capture header's ids).
    ptrs: Vec<ParamPtr>,
    /// The value last recorded of each (NaN: none yet).
    last: Vec<f32>,
    mode: Mode,
    /// Recognises a bounce the host does not announce.
    pace: Pace,
    /// The wall clock's origin for the pace.
    clock: std::time::Instant,
    /// Raised while a capture is on or watched, for the chroma thread's and the input's taps.
    recording: Arc<AtomicBool>,
}

/// The bridge tells the recorder every event it sends.
impl SentEvents for Recorder {
    #[inline]
    fn sent(&mut self, event: &TimedEvent) {
        if self.mode != Mode::Off {
            data(&mut self.sender, Record::Event(*event));
        }
    }
}

impl Recorder {
    /// A recorder pushing into `sender` the changes of `params`, raising `recording` while a
    /// capture is on. Allocates: make it off the audio thread (at activation).
    pub fn new(
        sender: Sender<Record>,
        params: Arc<dyn Params>,
        recording: Arc<AtomicBool>,
    ) -> Self {
        let ptrs: Vec<ParamPtr> = params.param_map().into_iter().map(|(_, p, _)| p).collect();
        let last = vec![f32::NAN; ptrs.len()];
        Self {
            sender,
            _params: params,
            ptrs,
            last,
            mode: Mode::Off,
            pace: Pace::new(),
            clock: std::time::Instant::now(),
            recording,
        }
    }

    /// The parameter ids in the order records name them.
    pub fn param_ids(params: &dyn Params) -> Vec<String> {
        params
            .param_map()
            .into_iter()
            .map(|(id, _, _)| id)
            .collect()
    }

    /// Whether a capture is being recorded.
    pub fn is_on(&self) -> bool {
        matches!(self.mode, Mode::Capturing { .. })
    }

    /// Whether a capture runs because the pace showed a bounce (the host did not say).
    pub fn bouncing(&self) -> bool {
        self.mode == Mode::Capturing { asked: false }
    }

    /// Start a capture at audio time `time_s`, asked for by `cause`: the next block records
    /// every parameter.
    pub fn start(&mut self, time_s: f64, sample_rate: f32, cause: Cause) {
        if self.is_on() {
            return;
        }
        self.begin(
            Mode::Capturing { asked: true },
            Record::Start {
                time_s,
                sample_rate,
                cause,
            },
        );
    }

    /// Keep records in memory from `time_s` on (see [`Record::Watch`]).
    fn watch(&mut self, time_s: f64, sample_rate: f32) {
        self.begin(
            Mode::Watching,
            Record::Watch {
                time_s,
                sample_rate,
            },
        );
    }

    /// Enter `mode` with `record` (if the queue takes it): the next block records every
    /// parameter.
    fn begin(&mut self, mode: Mode, record: Record) {
        if self.sender.send(record) {
            self.last.fill(f32::NAN);
            self.mode = mode;
            self.recording.store(true, Ordering::Release);
        }
    }

    /// End the capture (or the watch) at audio time `time_s`: the host stopped processing.
    /// Whether the stop was queued (a full queue keeps the mode: the next block tries again).
    pub fn stop(&mut self, time_s: f64) -> bool {
        self.pace.reset();
        self.end(time_s)
    }

    /// Queue the stop at `time_s` and stop recording; whether it was queued.
    fn end(&mut self, time_s: f64) -> bool {
        if self.mode == Mode::Off {
            return true;
        }
        if !self.sender.send(Record::Stop { time_s }) {
            return false;
        }
        self.mode = Mode::Off;
        self.recording.store(false, Ordering::Release);
        true
    }

    /// A block starts at `time_s`: record the parameters that changed since the last block
    /// (all of them at the first) and the host's transport (`samples`, `beat`, `tempo_bpm`,
    /// `playing`; NaN or 0 where the host does not say).
    pub fn block(&mut self, time_s: f64, transport: (i64, f64, f64, bool)) {
        if self.mode == Mode::Off {
            return;
        }
        for (i, (ptr, last)) in self.ptrs.iter().zip(&mut self.last).enumerate() {
            // SAFETY: the pointers come from `_params`, which this recorder keeps alive.
            let value = unsafe { ptr.modulated_plain_value() };
            if value.to_bits() != last.to_bits() {
                *last = value;
                data(
                    &mut self.sender,
                    Record::Param {
                        time_s,
                        index: i as u16,
                        value,
                    },
                );
            }
        }
        let (samples, beat, tempo_bpm, playing) = transport;
        data(
            &mut self.sender,
            Record::Transport {
                time_s,
                samples,
                beat,
                tempo_bpm,
                playing,
            },
        );
    }

    /// Records dropped on a full queue so far.
    pub fn dropped(&self) -> u64 {
        self.sender.stats().dropped()
    }

    /// A block starts at audio time `time_s`, at `sample_rate`: capture while asked to (`want`:
    /// the host renders offline, or the Record switch is on) or while the pace shows a bounce
    /// the host did not announce; watch otherwise. Reads the wall clock: no system call on the
    /// platforms the plugin ships for (Linux's vDSO, macOS's and Windows' user-space clocks).
    pub fn follow(&mut self, want: Option<Cause>, time_s: f64, sample_rate: f32) {
        let wall_s = self.clock.elapsed().as_secs_f64();
        self.follow_at(want, time_s, sample_rate, wall_s);
    }

    /// [`Recorder::follow`] at wall time `wall_s` (seconds from any origin; for tests).
    pub fn follow_at(&mut self, want: Option<Cause>, time_s: f64, sample_rate: f32, wall_s: f64) {
        let pace = self.pace.block(wall_s, time_s);
        match (self.mode, want) {
            (Mode::Off | Mode::Watching, Some(cause)) => self.start(time_s, sample_rate, cause),
            (Mode::Off, None) => self.watch(time_s, sample_rate),
            (Mode::Watching, None) => {
                let bounce = match pace {
                    PaceEvent::Bounce { from_s } => Some(from_s),
                    // A fast run that went on past a capture asked for (Record switched off
                    // during a bounce the host does not flag) is one again.
                    _ if self.pace.bouncing() => Some(time_s),
                    _ => None,
                };
                if let Some(from_s) = bounce
                    && self.sender.send(Record::Bounce { from_s })
                {
                    self.mode = Mode::Capturing { asked: false };
                }
            }
            // A bounce the pace found goes on as asked if the host says so after all.
            (Mode::Capturing { .. }, Some(_)) => self.mode = Mode::Capturing { asked: true },
            (Mode::Capturing { asked: true }, None) => {
                self.stop_and_watch(time_s, time_s, sample_rate)
            }
            (Mode::Capturing { asked: false }, None) => {
                // Over: the capture ends where the audio went back to real time (the render
                // stops there; what came since is not the bounce's).
                if let PaceEvent::Over { since_s } = pace {
                    self.stop_and_watch(since_s.min(time_s), time_s, sample_rate);
                }
            }
        }
    }

    /// End the capture at `stop_s` and watch from `time_s`. The pace's history goes on:
    /// playing on in real time is not a new start.
    fn stop_and_watch(&mut self, stop_s: f64, time_s: f64, sample_rate: f32) {
        if self.end(stop_s) {
            self.watch(time_s, sample_rate);
        }
    }
}

/// Queue a record that is not a start or stop, leaving [`RESERVED_SLOTS`] free for those
/// (beyond them it is dropped and counted, as on a full queue).
#[inline]
fn data(sender: &mut Sender<Record>, record: Record) {
    if sender.free() > RESERVED_SLOTS {
        sender.send(record);
    } else {
        sender.count_dropped();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bridge::queue;

    /// A plugin's parameters, in small (the recorder knows no plugin).
    #[derive(nice_plug::prelude::Params)]
    struct OneParam {
        #[id = "gain"]
        gain: nice_plug::prelude::FloatParam,
    }

    /// The records a recorder sends over blocks of 10 ms of audio at 48 kHz, each taking
    /// `wall(b)` seconds of wall time, asked to capture when `want(b)`; only the starts,
    /// watches, bounces and stops, with the block they came in.
    fn control(
        blocks: usize,
        wall: impl Fn(usize) -> f64,
        want: impl Fn(usize) -> Option<Cause>,
    ) -> Vec<(usize, Record)> {
        let params = Arc::new(OneParam {
            gain: nice_plug::prelude::FloatParam::new(
                "Gain",
                0.5,
                nice_plug::prelude::FloatRange::Linear { min: 0.0, max: 1.0 },
            ),
        });
        let (tx, mut rx) = queue::bounded(1 << 20);
        let mut r = Recorder::new(tx, params, Arc::new(AtomicBool::new(false)));
        let (mut out, mut wall_s) = (Vec::new(), 0.0);
        for b in 0..blocks {
            let time_s = b as f64 * 0.01;
            r.follow_at(want(b), time_s, 48_000.0, wall_s);
            r.block(time_s, (0, f64::NAN, f64::NAN, true));
            rx.drain(|rec| {
                if !matches!(
                    rec,
                    Record::Param { .. } | Record::Transport { .. } | Record::Event(_)
                ) {
                    out.push((b, rec));
                }
            });
            let bounce = matches!(out.last(), Some((_, Record::Bounce { .. })));
            assert_eq!(r.bouncing(), bounce, "block {b}");
            wall_s += wall(b);
        }
        out
    }

    /// Playing watches; a fast run is a bounce from its first block; real time again stops
    /// it and watches on; the host's offline flag or Record starts and stops a capture of
    /// its own.
    #[test]
    fn the_recorder_follows_the_host_and_the_pace() {
        // 5 s in real time, 10 s at 100x, 10 s in real time.
        let wall = |b: usize| if (500..1500).contains(&b) { 1e-4 } else { 0.01 };
        let got = control(2500, wall, |_| None);
        let watch = |t: f64| Record::Watch {
            time_s: t,
            sample_rate: 48_000.0,
        };
        assert_eq!(got[0], (0, watch(0.0)));
        let (b, Record::Bounce { from_s }) = got[1] else {
            panic!("{got:?}")
        };
        assert!((from_s - 5.0).abs() < 0.011, "from {from_s}");
        assert!(b < 500 + 310, "found after {} blocks", b - 500);
        // Over after END_S of real time: a stop where the fast run ended (15 s), and watching
        // again at once.
        let (b, Record::Stop { time_s }) = got[2] else {
            panic!("{got:?}")
        };
        assert!((1500 + 300..1500 + 310).contains(&b), "{b}");
        assert!((time_s - 15.0).abs() < 0.011, "stopped at {time_s}");
        assert_eq!(got[3], (b, watch(b as f64 * 0.01)));
        assert_eq!(got.len(), 4, "{got:?}");
        // Asked (offline blocks or Record) from 2 s to 3 s, in real time.
        let record = |b: usize| (200..300).contains(&b).then_some(Cause::Record);
        let got = control(400, |_| 0.01, record);
        let start = Record::Start {
            time_s: 2.0,
            sample_rate: 48_000.0,
            cause: Cause::Record,
        };
        assert_eq!(
            got,
            vec![
                (0, watch(0.0)),
                (200, start),
                (300, Record::Stop { time_s: 3.0 }),
                (300, watch(3.0)),
            ]
        );
        // Record switched off in the middle of a bounce the host does not flag: the rest of
        // the run is a bounce again, from there.
        let fast = |b: usize| if (100..2000).contains(&b) { 1e-4 } else { 0.01 };
        let record = |b: usize| (100..1000).contains(&b).then_some(Cause::Record);
        let got = control(2000, fast, record);
        assert_eq!(got[1].0, 100);
        assert_eq!(got[2], (1000, Record::Stop { time_s: 10.0 }));
        assert_eq!(got[3], (1000, watch(10.0)));
        assert_eq!(got[4], (1001, Record::Bounce { from_s: 10.01 }));
    }
}
