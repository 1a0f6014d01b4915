//! Frames from the simulation thread to their consumers (the editor, the output window): RGBA8
//! pictures through one lock-free triple buffer per consumer, at the size each asks for.
//!
//! The consumer never waits and never sees a half-written frame; the producer never waits
//! for the consumer. Frames the consumer did not read in time are overwritten.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// One picture.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Frame {
    /// Size in pixels.
    pub width: usize,
    pub height: usize,
    /// RGBA8, top row first, `width * height * 4` bytes.
    pub pixels: Vec<u8>,
    /// Counts up with every published frame (0: none yet).
    pub serial: u64,
    /// Simulated time of the fluid shown, in seconds.
    pub sim_time_s: f64,
}

/// Largest frame edge a consumer may ask for; larger requests are clamped.
pub const MAX_FRAME_EDGE: usize = 8192;

/// The consumer's request, shared with the producer. Written by the consumer (editor thread),
/// read by the simulation thread; an atomic so neither side locks.
#[derive(Debug, Default)]
pub struct FrameRequest {
    /// `width << 32 | height`; 0 when no frames are wanted.
    size: AtomicU64,
}

impl FrameRequest {
    /// Ask for frames of `width x height` (0 x 0: none).
    pub fn set(&self, width: usize, height: usize) {
        let (w, h) = (
            width.min(MAX_FRAME_EDGE) as u64,
            height.min(MAX_FRAME_EDGE) as u64,
        );
        self.size.store(w << 32 | h, Ordering::Release);
    }

    /// The requested size, if frames are wanted.
    pub fn get(&self) -> Option<(usize, usize)> {
        let s = self.size.load(Ordering::Acquire);
        let (w, h) = ((s >> 32) as usize, (s & 0xffff_ffff) as usize);
        (w > 0 && h > 0).then_some((w, h))
    }
}

/// Most consumers one producer serves (the editor and the output window).
pub const MAX_OUTPUTS: usize = 4;

/// One consumer's end, as the producer holds it.
struct Sink {
    input: triple_buffer::Input<Frame>,
    request: Arc<FrameRequest>,
}

/// The producer side (simulation thread). It serves several consumers, each with its own
/// triple buffer and its own requested size: one frame per distinct size, copied to each
/// consumer that asked for that size.
pub struct FrameInput {
    sinks: Vec<Sink>,
    serial: u64,
}

/// The consumer side (the editor, the output window).
pub struct FrameOutput {
    output: triple_buffer::Output<Frame>,
    request: Arc<FrameRequest>,
}

/// A connected pair: one producer, one consumer.
pub fn frame_channel() -> (FrameInput, FrameOutput) {
    let (input, mut outputs) = frame_channels(1);
    (input, outputs.remove(0))
}

/// One producer and `n` consumers (at least 1, at most [`MAX_OUTPUTS`]).
pub fn frame_channels(n: usize) -> (FrameInput, Vec<FrameOutput>) {
    let (sinks, outputs) = (0..n.clamp(1, MAX_OUTPUTS))
        .map(|_| {
            let (input, output) = triple_buffer::triple_buffer(&Frame::default());
            let request = Arc::new(FrameRequest::default());
            (
                Sink {
                    input,
                    request: request.clone(),
                },
                FrameOutput { output, request },
            )
        })
        .unzip();
    (FrameInput { sinks, serial: 0 }, outputs)
}

/// The distinct frame sizes the consumers want, in consumer order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sizes {
    sizes: [(usize, usize); MAX_OUTPUTS],
    len: usize,
}

impl Sizes {
    /// The sizes, each once.
    pub fn as_slice(&self) -> &[(usize, usize)] {
        &self.sizes[..self.len]
    }

    /// Whether no frames are wanted.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many sizes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// The first size.
    pub fn first(&self) -> Option<(usize, usize)> {
        self.as_slice().first().copied()
    }

    /// Whether `size` is among them.
    pub fn contains(&self, size: (usize, usize)) -> bool {
        self.as_slice().contains(&size)
    }

    /// Add `size` unless it is there (or the list is full).
    pub fn push(&mut self, size: (usize, usize)) {
        if !self.contains(size) && self.len < MAX_OUTPUTS {
            self.sizes[self.len] = size;
            self.len += 1;
        }
    }

    /// Take the first size.
    pub fn pop_front(&mut self) -> Option<(usize, usize)> {
        if self.len == 0 {
            return None;
        }
        let first = self.sizes[0];
        self.sizes.copy_within(1..self.len, 0);
        self.len -= 1;
        Some(first)
    }
}

impl FrameInput {
    /// The size the first watching consumer wants, if any consumer wants frames.
    pub fn wanted(&self) -> Option<(usize, usize)> {
        self.sinks.iter().find_map(|s| s.request.get())
    }

    /// Every distinct size the consumers want (empty: no one watches).
    pub fn sizes(&self) -> Sizes {
        let mut sizes = Sizes::default();
        for size in self.sinks.iter().filter_map(|s| s.request.get()) {
            sizes.push(size);
        }
        sizes
    }

    /// Publish a frame: `fill` writes the pixels into the (reused) back buffer, already sized
    /// `width * height * 4`.
    pub fn publish(
        &mut self,
        width: usize,
        height: usize,
        sim_time_s: f64,
        fill: impl FnOnce(&mut Vec<u8>),
    ) {
        self.publish_from(sim_time_s, |pixels| {
            pixels.resize(width * height * 4, 0);
            fill(pixels);
            Some((width, height))
        });
    }

    /// Publish a frame if `fill` produces one: it receives the (reused) back buffer and
    /// returns the frame's size, or `None` to publish nothing. The frame goes to every
    /// consumer that wants its size (to the first consumer when none does, so a frame started
    /// before a resize still shows).
    pub fn publish_from(
        &mut self,
        sim_time_s: f64,
        fill: impl FnOnce(&mut Vec<u8>) -> Option<(usize, usize)>,
    ) -> bool {
        // The frame is drawn into the back buffer of the consumer that is most likely to want
        // it (the first watching one), then copied to the others of its size.
        let target = self
            .sinks
            .iter()
            .position(|s| s.request.get().is_some())
            .unwrap_or(0);
        let (head, rest) = self.sinks.split_at_mut(target);
        let (sink, tail) = rest.split_first_mut().expect("target is in range");
        let first_request = sink.request.get();
        let frame = sink.input.input_buffer_mut();
        let Some((width, height)) = fill(&mut frame.pixels) else {
            return false;
        };
        debug_assert_eq!(frame.pixels.len(), width * height * 4);
        self.serial += 1;
        frame.width = width;
        frame.height = height;
        frame.serial = self.serial;
        frame.sim_time_s = sim_time_s;
        let wants = |s: &Sink| s.request.get() == Some((width, height));
        let first_wants = first_request == Some((width, height));
        for other in head.iter_mut().chain(tail.iter_mut()).filter(|s| wants(s)) {
            let copy = other.input.input_buffer_mut();
            copy.pixels.clear();
            copy.pixels.extend_from_slice(&frame.pixels);
            (copy.width, copy.height) = (width, height);
            copy.serial = frame.serial;
            copy.sim_time_s = sim_time_s;
            other.input.publish();
        }
        // A frame of a size its target no longer wants (a resize meanwhile) still goes to it
        // when no other consumer took it.
        let others = head.iter().chain(tail.iter()).any(wants);
        if first_wants || !others {
            sink.input.publish();
        }
        true
    }
}

impl FrameOutput {
    /// Ask for frames of `width x height` (0 x 0 stops them).
    pub fn request(&self, width: usize, height: usize) {
        self.request.set(width, height);
    }

    /// The newest published frame (serial 0: none yet).
    pub fn latest(&mut self) -> &Frame {
        self.output.read()
    }

    /// Whether a frame newer than the last `latest` is waiting.
    pub fn has_new(&self) -> bool {
        self.output.updated()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_round_trips_and_frames_arrive_in_order() {
        let (mut input, mut output) = frame_channel();
        assert_eq!(input.wanted(), None);
        output.request(640, 360);
        assert_eq!(input.wanted(), Some((640, 360)));
        output.request(100_000, 3);
        assert_eq!(input.wanted(), Some((MAX_FRAME_EDGE, 3)));
        input.publish(2, 1, 0.5, |p| p.copy_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]));
        input.publish(1, 1, 0.6, |p| p.copy_from_slice(&[9, 9, 9, 9]));
        assert!(output.has_new());
        let f = output.latest();
        assert_eq!(
            (f.width, f.height, f.serial, f.pixels.as_slice()),
            (1, 1, 2, &[9u8, 9, 9, 9][..])
        );
        output.request(0, 0);
        assert_eq!(input.wanted(), None);
    }

    #[test]
    fn each_consumer_gets_the_frames_of_its_size() {
        let (mut input, mut outputs) = frame_channels(3);
        assert!(input.sizes().is_empty());
        outputs[1].request(4, 2);
        outputs[2].request(1, 1);
        assert_eq!(input.sizes().as_slice(), &[(4, 2), (1, 1)]);
        outputs[0].request(1, 1);
        assert_eq!(
            input.sizes().as_slice(),
            &[(1, 1), (4, 2)],
            "each size once"
        );
        assert_eq!(input.wanted(), Some((1, 1)));

        // A frame of 4 x 2 goes to the consumer that wants it, and only there.
        input.publish(4, 2, 1.0, |p| p.fill(7));
        assert!(outputs[1].has_new() && !outputs[0].has_new() && !outputs[2].has_new());
        let f = outputs[1].latest();
        assert_eq!((f.width, f.height, f.serial), (4, 2, 1));
        assert!(f.pixels.iter().all(|&b| b == 7));

        // One of 1 x 1 goes to both that want it, with the same serial.
        input.publish(1, 1, 2.0, |p| p.copy_from_slice(&[1, 2, 3, 4]));
        for k in [0, 2] {
            let f = outputs[k].latest();
            assert_eq!((f.serial, f.pixels.as_slice()), (2, &[1u8, 2, 3, 4][..]));
        }
        assert!(!outputs[1].has_new());

        // A size no one wants any more (a resize meanwhile) still reaches the first watcher.
        input.publish(3, 3, 3.0, |p| p.fill(1));
        assert_eq!(outputs[0].latest().width, 3);
        assert!(!outputs[1].has_new() && !outputs[2].has_new());
    }

    #[test]
    fn sizes_pop_in_order() {
        let mut s = Sizes::default();
        for size in [(1, 1), (2, 2), (1, 1), (3, 3), (4, 4), (5, 5)] {
            s.push(size);
        }
        assert_eq!(
            s.as_slice(),
            &[(1, 1), (2, 2), (3, 3), (4, 4)],
            "distinct, bounded"
        );
        assert_eq!(s.pop_front(), Some((1, 1)));
        assert_eq!(s.as_slice(), &[(2, 2), (3, 3), (4, 4)]);
    }
}
