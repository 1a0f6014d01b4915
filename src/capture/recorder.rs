//! The audio thread's side of a capture: pushes [`Record`]s into the capture queue. Never
//! allocates, locks or waits (a full queue drops the record and counts it).

use super::Record;
use crate::bridge::events::TimedEvent;
use crate::bridge::queue::Sender;
use nice_plug::prelude::{ParamPtr, Params};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Free slots kept for the start and stop: a queue that fills drops events, parameters and
/// transport first, so a capture always ends (and the next one starts).
const RESERVED_SLOTS: usize = 4;

/// Records a capture's events, transport and parameter changes while it is on.
pub struct Recorder {
    sender: Sender<Record>,
    /// Keeps the parameters the pointers point into alive.
    _params: Arc<dyn Params>,
    /// Every parameter, in the order of `param_map` (the capture header's ids).
    ptrs: Vec<ParamPtr>,
    /// The value last recorded of each (NaN: none yet).
    last: Vec<f32>,
    on: bool,
    /// Raised while a capture is on, for the chroma thread's tap.
    recording: Arc<AtomicBool>,
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
            on: false,
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
        self.on
    }

    /// Start a capture at audio time `time_s`: the next block records every parameter.
    pub fn start(&mut self, time_s: f64, sample_rate: f32) {
        if self.on {
            return;
        }
        self.last.fill(f32::NAN);
        self.on = true;
        self.sender.send(Record::Start {
            time_s,
            sample_rate,
        });
        self.recording.store(true, Ordering::Release);
    }

    /// End the capture at audio time `time_s`.
    pub fn stop(&mut self, time_s: f64) {
        if self.on {
            self.on = false;
            self.recording.store(false, Ordering::Release);
            self.sender.send(Record::Stop { time_s });
        }
    }

    /// A block starts at `time_s`: record the parameters that changed since the last block
    /// (all of them at the first) and the host's transport (`samples`, `beat`, `tempo_bpm`,
    /// `playing`; NaN or 0 where the host does not say).
    pub fn block(&mut self, time_s: f64, transport: (i64, f64, f64, bool)) {
        if !self.on {
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

    /// Record an event the bridge sent.
    #[inline]
    pub fn event(&mut self, event: &TimedEvent) {
        if self.on {
            data(&mut self.sender, Record::Event(*event));
        }
    }

    /// Records dropped on a full queue so far.
    pub fn dropped(&self) -> u64 {
        self.sender.stats().dropped()
    }

    /// Start or stop the capture to match `want`, at audio time `time_s`.
    pub fn follow(&mut self, want: bool, time_s: f64, sample_rate: f32) {
        if want && !self.on {
            self.start(time_s, sample_rate);
        } else if !want && self.on {
            self.stop(time_s);
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
