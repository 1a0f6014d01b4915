//! The lock-free event queue between a producer thread (the audio thread, or the editor) and
//! the simulation thread: an `rtrb` ring buffer of fixed-size events with counters.
//!
//! Pushing never blocks, retries or allocates: a full queue drops the event and counts it.

use super::chroma::Tap;
use super::events::TimedEvent;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Counters shared by both ends. Written by the producer (`pushed`, `dropped`) and the
/// consumer (`received`); read by the status line. Atomics because the two ends live on
/// different threads and neither may lock.
#[derive(Debug, Default)]
pub struct QueueStats {
    pushed: AtomicU64,
    dropped: AtomicU64,
    received: AtomicU64,
}

impl QueueStats {
    /// Events accepted by the queue.
    pub fn pushed(&self) -> u64 {
        self.pushed.load(Ordering::Relaxed)
    }

    /// Events dropped because the queue was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Events taken off the queue by the consumer.
    pub fn received(&self) -> u64 {
        self.received.load(Ordering::Relaxed)
    }
}

/// The producer end. Realtime-safe.
pub struct EventSender {
    producer: rtrb::Producer<TimedEvent>,
    stats: Arc<QueueStats>,
}

/// The consumer end, owned by the simulation thread.
pub struct EventReceiver {
    consumer: rtrb::Consumer<TimedEvent>,
    stats: Arc<QueueStats>,
}

/// A queue holding up to `capacity` events.
pub fn channel(capacity: usize) -> (EventSender, EventReceiver) {
    let (producer, consumer) = rtrb::RingBuffer::new(capacity.max(1));
    let stats = Arc::new(QueueStats::default());
    (
        EventSender {
            producer,
            stats: stats.clone(),
        },
        EventReceiver { consumer, stats },
    )
}

impl EventSender {
    /// Queue `event`; `false` (and counted) when the queue is full.
    #[inline]
    pub fn send(&mut self, event: TimedEvent) -> bool {
        match self.producer.push(event) {
            Ok(()) => {
                self.stats.pushed.fetch_add(1, Ordering::Relaxed);
                true
            }
            Err(_) => {
                self.stats.dropped.fetch_add(1, Ordering::Relaxed);
                false
            }
        }
    }

    /// The shared counters.
    pub fn stats(&self) -> &Arc<QueueStats> {
        &self.stats
    }

    /// Free slots right now.
    pub fn free(&self) -> usize {
        self.producer.slots()
    }
}

impl EventReceiver {
    /// Take every queued event, oldest first.
    pub fn drain(&mut self, mut f: impl FnMut(TimedEvent)) -> usize {
        let mut n = 0;
        while let Ok(e) = self.consumer.pop() {
            f(e);
            n += 1;
        }
        self.stats.received.fetch_add(n as u64, Ordering::Relaxed);
        n
    }

    /// Whether any queued event satisfies `pred`, without taking anything off the queue.
    pub fn any(&mut self, mut pred: impl FnMut(&TimedEvent) -> bool) -> bool {
        let n = self.consumer.slots();
        match self.consumer.read_chunk(n) {
            Ok(chunk) => {
                let (a, b) = chunk.as_slices();
                a.iter().chain(b).any(&mut pred)
                // Dropped uncommitted: the events stay queued.
            }
            Err(_) => false,
        }
    }

    /// The shared counters.
    pub fn stats(&self) -> &Arc<QueueStats> {
        &self.stats
    }
}

/// The producer end of the chroma tap: the audio thread's decimated input for the chroma
/// thread. Realtime-safe: a full queue drops the sample and counts it.
pub struct TapSender {
    producer: rtrb::Producer<Tap>,
    stats: Arc<QueueStats>,
}

/// The consumer end of the chroma tap, owned by the chroma thread.
pub struct TapReceiver {
    consumer: rtrb::Consumer<Tap>,
    stats: Arc<QueueStats>,
}

/// A chroma tap holding up to `capacity` samples.
pub fn tap_channel(capacity: usize) -> (TapSender, TapReceiver) {
    let (producer, consumer) = rtrb::RingBuffer::new(capacity.max(1));
    let stats = Arc::new(QueueStats::default());
    (
        TapSender {
            producer,
            stats: stats.clone(),
        },
        TapReceiver { consumer, stats },
    )
}

impl TapSender {
    /// Queue `tap`; `false` (and counted) when the queue is full.
    #[inline]
    pub fn send(&mut self, tap: Tap) -> bool {
        match self.producer.push(tap) {
            Ok(()) => {
                self.stats.pushed.fetch_add(1, Ordering::Relaxed);
                true
            }
            Err(_) => {
                self.stats.dropped.fetch_add(1, Ordering::Relaxed);
                false
            }
        }
    }

    /// The shared counters.
    pub fn stats(&self) -> &Arc<QueueStats> {
        &self.stats
    }
}

impl TapReceiver {
    /// Take every queued item (at most `limit`), oldest first; returns how many.
    pub fn drain(&mut self, limit: usize, mut f: impl FnMut(Tap)) -> usize {
        let mut n = 0;
        while n < limit
            && let Ok(t) = self.consumer.pop()
        {
            f(t);
            n += 1;
        }
        self.stats.received.fetch_add(n as u64, Ordering::Relaxed);
        n
    }

    /// The shared counters.
    pub fn stats(&self) -> &Arc<QueueStats> {
        &self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bridge::events::SimEvent;

    #[test]
    fn full_queue_drops_and_counts() {
        let (mut tx, mut rx) = channel(4);
        for n in 0..10 {
            tx.send(TimedEvent {
                time_s: n as f64,
                event: SimEvent::Reset,
            });
        }
        assert_eq!((tx.stats().pushed(), tx.stats().dropped()), (4, 6));
        let mut times = Vec::new();
        rx.drain(|e| times.push(e.time_s));
        assert_eq!(times, vec![0.0, 1.0, 2.0, 3.0]);
        assert_eq!(rx.stats().received(), 4);
    }

    #[test]
    fn any_peeks_without_taking() {
        let (mut tx, mut rx) = channel(8);
        for n in 0..3 {
            tx.send(TimedEvent {
                time_s: n as f64,
                event: SimEvent::Reset,
            });
        }
        assert!(rx.any(|e| e.time_s == 2.0));
        assert!(!rx.any(|e| e.time_s == 5.0));
        assert_eq!(rx.drain(|_| {}), 3, "peeking took nothing");
        assert!(!rx.any(|_| true));
    }
}
