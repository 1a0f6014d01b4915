//! The lock-free queues between a producer thread (the audio thread, or the editor) and a
//! consumer (the simulation or the chroma thread): an `rtrb` ring buffer of fixed-size items
//! with counters.
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

/// The producer end of a queue of `T`. Realtime-safe: [`Sender::send`] never blocks, retries
/// or allocates.
pub struct Sender<T> {
    producer: rtrb::Producer<T>,
    stats: Arc<QueueStats>,
}

/// The consumer end of a queue of `T`, owned by the consuming thread.
pub struct Receiver<T> {
    consumer: rtrb::Consumer<T>,
    stats: Arc<QueueStats>,
}

/// Events from the audio thread or the editor to the simulation thread.
pub type EventSender = Sender<TimedEvent>;
/// The simulation thread's end of an event queue.
pub type EventReceiver = Receiver<TimedEvent>;
/// The chroma tap: the audio thread's decimated input for the chroma thread.
pub type TapSender = Sender<Tap>;
/// The chroma thread's end of the tap.
pub type TapReceiver = Receiver<Tap>;

/// A queue holding up to `capacity` items.
pub fn bounded<T>(capacity: usize) -> (Sender<T>, Receiver<T>) {
    let (mut producer, consumer) = rtrb::RingBuffer::new(capacity.max(1));
    prefault(&mut producer);
    let stats = Arc::new(QueueStats::default());
    (
        Sender {
            producer,
            stats: stats.clone(),
        },
        Receiver { consumer, stats },
    )
}

/// Write every slot of a new (empty) queue once, without committing any, so that the
/// operating system maps its pages now rather than on the audio thread's first pushes: a
/// first write to a fresh page is a page fault, which can sleep on the process's memory-map
/// lock while another thread maps memory (an output-window test once caught `process()`
/// switching out in a full test run). The queue stays empty.
fn prefault<T>(producer: &mut rtrb::Producer<T>) {
    let slots = producer.slots();
    if let Ok(mut chunk) = producer.write_chunk_uninit(slots) {
        let (first, second) = chunk.as_mut_slices();
        for slot in first.iter_mut().chain(second.iter_mut()) {
            *slot = std::mem::MaybeUninit::zeroed();
        }
        std::hint::black_box(chunk.as_mut_slices());
    }
}

/// An event queue holding up to `capacity` events.
pub fn channel(capacity: usize) -> (EventSender, EventReceiver) {
    bounded(capacity)
}

/// A chroma tap holding up to `capacity` samples.
pub fn tap_channel(capacity: usize) -> (TapSender, TapReceiver) {
    bounded(capacity)
}

impl<T> Sender<T> {
    /// Queue `item`; `false` (and counted) when the queue is full.
    #[inline]
    pub fn send(&mut self, item: T) -> bool {
        match self.producer.push(item) {
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

    /// Count an item the producer chose not to send, as a drop.
    pub fn count_dropped(&self) {
        self.stats.dropped.fetch_add(1, Ordering::Relaxed);
    }

    /// Free slots right now.
    pub fn free(&self) -> usize {
        self.producer.slots()
    }
}

impl<T> Receiver<T> {
    /// Take every queued item, oldest first; returns how many.
    pub fn drain(&mut self, f: impl FnMut(T)) -> usize {
        self.drain_up_to(usize::MAX, f)
    }

    /// Take the queued items, at most `limit`, oldest first; returns how many.
    pub fn drain_up_to(&mut self, limit: usize, mut f: impl FnMut(T)) -> usize {
        let mut n = 0;
        while n < limit
            && let Ok(item) = self.consumer.pop()
        {
            f(item);
            n += 1;
        }
        self.stats.received.fetch_add(n as u64, Ordering::Relaxed);
        n
    }

    /// Whether any queued item satisfies `pred`, without taking anything off the queue.
    pub fn any(&mut self, mut pred: impl FnMut(&T) -> bool) -> bool {
        let n = self.consumer.slots();
        match self.consumer.read_chunk(n) {
            Ok(chunk) => {
                let (a, b) = chunk.as_slices();
                a.iter().chain(b).any(&mut pred)
                // Dropped uncommitted: the items stay queued.
            }
            Err(_) => false,
        }
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

    /// Pre-faulting leaves a new queue empty, with all its slots free and in order.
    #[test]
    fn a_new_queue_is_empty_after_its_pages_are_touched() {
        let (mut tx, mut rx) = bounded::<u64>(1000);
        assert_eq!(tx.free(), 1000);
        assert_eq!(rx.drain(|_| ()), 0, "nothing to read");
        for n in 0..1000 {
            assert!(tx.send(n), "slot {n}");
        }
        assert!(!tx.send(1000), "full at its capacity");
        let mut got = Vec::new();
        assert_eq!(rx.drain(|n| got.push(n)), 1000);
        assert_eq!(got, (0..1000).collect::<Vec<u64>>());
    }

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
    fn drain_up_to_takes_at_most_the_limit_in_order() {
        let (mut tx, mut rx) = bounded::<u32>(8);
        for n in 0..5 {
            assert!(tx.send(n));
        }
        let mut got = Vec::new();
        assert_eq!(rx.drain_up_to(3, |x| got.push(x)), 3);
        assert_eq!(got, [0, 1, 2]);
        assert_eq!(rx.drain(|x| got.push(x)), 2);
        assert_eq!(got, [0, 1, 2, 3, 4]);
        assert_eq!(rx.stats().received(), 5);
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
