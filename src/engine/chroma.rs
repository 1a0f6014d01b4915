//! The chroma thread: runs the pitch-class analysis off the audio thread.
//!
//! The audio thread's bridge decimates its input to about 11 kHz and pushes it into a
//! lock-free queue (a [`TapReceiver`] here); this thread drains it every
//! [`CHROMA_POLL_MS`], feeds a [`ChromaAnalyzer`] and pushes each hop's weights, stamped in
//! audio time, as a [`SimEvent::Chroma`] into its own event queue, which the simulation thread
//! drains like the others. Nothing is shared but the two queues and a stop flag: no lock
//! anywhere. A full queue on either side drops and counts; neither side ever waits.
//!
//! [`ChromaThread`] is an RAII handle made at the plugin's first activation (never in
//! `Default`: a host scanning plugins gets no thread); dropping it stops the thread and waits
//! for it at most [`DROP_WAIT_MS`], like the simulation thread.

use super::DROP_WAIT_MS;
use crate::bridge::chroma::{ChromaAnalyzer, FRAME, Tap};
use crate::bridge::events::{SimEvent, TimedEvent};
use crate::bridge::queue::{EventSender, TapReceiver};
use crate::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the thread looks for new samples: a hop is 46 ms, so this adds at most a fifth of
/// a hop of delay. One look is a few atomic loads when nothing came.
pub const CHROMA_POLL_MS: u64 = 10;
/// How often it looks while the input has been silent for a whole analysis window (its
/// analysis of zeros is zeros) and comes at about real time: a host feeding silence wakes it 20
/// times a second, not 100.
/// The queue holds 3 s of input, and the first pitch classes after the silence come at most
/// this much later (a window is 0.37 s long anyway).
pub const CHROMA_IDLE_POLL_MS: u64 = 50;
/// Samples the tap holds: 3 s at 11 kHz, far more than the thread lets pile up.
pub const CHROMA_TAP_SAMPLES: usize = 1 << 15;
/// Weight events the thread's queue holds: 12 s of hops, should the simulation sleep.
pub const CHROMA_QUEUE_EVENTS: usize = 256;
/// Most samples taken in one go before looking at the stop flag again.
const BATCH_SAMPLES: usize = 8192;
/// The thread's name (tests look for it).
pub const CHROMA_THREAD_NAME: &str = "dyeflow-chroma";

/// The running chroma thread.
pub struct ChromaThread {
    /// Set by the handle to stop the thread; an atomic, read by the thread every turn.
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl ChromaThread {
    /// Start the thread: it analyses what arrives on `taps` and sends the weights on `events`.
    pub fn spawn(
        taps: TapReceiver,
        events: EventSender,
        capture: Option<crate::capture::CaptureTap>,
    ) -> std::io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let stop = stop.clone();
            std::thread::Builder::new()
                .name(CHROMA_THREAD_NAME.into())
                .spawn(move || run(&stop, taps, events, capture))?
        };
        Ok(Self {
            stop,
            thread: Some(thread),
        })
    }

    /// Whether the thread still runs.
    pub fn is_running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }
}

/// The analysis in progress: the analyzer, the audio time of its stream's first sample and the
/// samples fed since.
struct Stream {
    analyzer: ChromaAnalyzer,
    start_s: f64,
    samples: u64,
    /// Zeros in a row just fed (a whole window of them: the analyzer holds only zeros).
    zeros: usize,
}

fn run(
    stop: &AtomicBool,
    mut taps: TapReceiver,
    mut events: EventSender,
    mut capture: Option<crate::capture::CaptureTap>,
) {
    let mut stream: Option<Stream> = None;
    // The last nap, seconds.
    let mut nap_s = CHROMA_POLL_MS as f64 * 1e-3;
    while !stop.load(Ordering::Acquire) {
        let taken = taps.drain_up_to(BATCH_SAMPLES, |tap| match tap {
            Tap::Start { rate, time_s } => match &mut stream {
                Some(s) => {
                    s.analyzer.set_rate(rate);
                    s.start_s = time_s;
                    s.samples = 0;
                    s.zeros = FRAME;
                }
                None => {
                    stream = Some(Stream {
                        analyzer: ChromaAnalyzer::new(rate),
                        start_s: time_s,
                        samples: 0,
                        zeros: FRAME,
                    });
                }
            },
            Tap::Sample(x) => {
                // Samples before the first start have no rate: skipped.
                let Some(s) = &mut stream else { return };
                s.samples += 1;
                s.zeros = if x == 0.0 {
                    s.zeros.saturating_add(1)
                } else {
                    0
                };
                if let Some(weights) = s.analyzer.push(x) {
                    let time_s = s.start_s + s.samples as f64 / f64::from(s.analyzer.rate());
                    let event = TimedEvent {
                        time_s,
                        event: SimEvent::Chroma { weights },
                    };
                    events.send(event);
                    if let Some(c) = &mut capture {
                        c.event(&event);
                    }
                }
            }
        });
        if taken < BATCH_SAMPLES {
            // The long nap only while silence comes at about real time: a host that bounces
            // faster (no one tells this thread) would fill the tap's queue meanwhile.
            let silent = stream.as_ref().is_none_or(|s| {
                s.zeros >= FRAME && taken as f64 <= 1.5 * f64::from(s.analyzer.rate()) * nap_s
            });
            let nap = if silent {
                CHROMA_IDLE_POLL_MS
            } else {
                CHROMA_POLL_MS
            };
            nap_s = nap as f64 * 1e-3;
            std::thread::park_timeout(Duration::from_millis(nap));
        }
    }
}

impl Drop for ChromaThread {
    /// Stop the thread and wait for it, at most [`DROP_WAIT_MS`] (a turn takes a few
    /// milliseconds at most, so it always ends well within it). One still busy then is left
    /// to end on its own, with the library pinned so a host unloading the plugin cannot pull
    /// the code from under it; where pinning fails, the drop waits for it instead.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        let Some(thread) = self.thread.take() else {
            return;
        };
        thread.thread().unpark();
        pin::join_within(thread, DROP_WAIT_MS, "The chroma thread");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bridge::chroma::Decimator;
    use crate::bridge::queue;
    use std::time::Instant;

    /// The names of this process's threads.
    fn thread_names() -> Vec<String> {
        std::fs::read_dir("/proc/self/task")
            .map(|dir| {
                dir.filter_map(|t| {
                    std::fs::read_to_string(t.ok()?.path().join("comm"))
                        .ok()
                        .map(|s| s.trim().to_owned())
                })
                .collect()
            })
            .unwrap_or_default()
    }

    #[test]
    fn the_thread_analyses_what_it_is_fed_and_stops_within_the_drop_bound() {
        let (mut tap, taps) = queue::tap_channel(CHROMA_TAP_SAMPLES);
        let (events, mut received) = queue::channel(CHROMA_QUEUE_EVENTS);
        let thread = ChromaThread::spawn(taps, events, None).expect("a thread");
        assert!(thread.is_running());
        let named = |yes: bool| thread_names().iter().any(|n| n == CHROMA_THREAD_NAME) == yes;
        if cfg!(target_os = "linux") {
            // The thread names itself once it runs.
            let start = Instant::now();
            while !named(true) && start.elapsed() < Duration::from_secs(2) {
                std::thread::sleep(Duration::from_millis(1));
            }
            assert!(named(true), "{:?}", thread_names());
        }
        // One second of a 440 Hz sine at 48 kHz, decimated as the bridge does.
        let mut d = Decimator::new(48_000.0);
        assert!(tap.send(Tap::Start {
            rate: d.rate(),
            time_s: 10.0
        }));
        for n in 0..48_000 {
            let x = 0.5 * (std::f32::consts::TAU * 440.0 * n as f32 / 48_000.0).sin();
            if let Some(y) = d.next(x) {
                assert!(tap.send(Tap::Sample(y)), "the tap ran full");
            }
        }
        let start = Instant::now();
        let mut last = None;
        while start.elapsed() < Duration::from_secs(10) {
            received.drain(|e| last = Some(e));
            if last.is_some_and(|e: TimedEvent| e.time_s > 10.9) {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let last = last.expect("weights came");
        let SimEvent::Chroma { weights } = last.event else {
            panic!("{last:?}")
        };
        assert!(weights[9] > 0.99, "A: {weights:?}");
        assert!((10.9..=11.0).contains(&last.time_s), "{}", last.time_s);
        // Dropping stops it within the bound and leaves no thread behind.
        let start = Instant::now();
        drop(thread);
        let took = start.elapsed();
        assert!(took < Duration::from_millis(DROP_WAIT_MS), "{took:?}");
        if cfg!(target_os = "linux") {
            assert!(named(false), "{:?}", thread_names());
        }
    }
}
