//! Frames from the simulation thread to their consumers (the editor, the output window): RGBA8
//! pictures through one lock-free triple buffer per consumer, rendered at the largest size the
//! consumers ask for (each scales it to its own).
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

/// Smallest frame a consumer asks for, in pixels per side.
pub const MIN_FRAME_EDGE: usize = 16;

/// The frame size worth asking for to fill `view` physical pixels: the view's size at the dye
/// grid's aspect, but no finer than the dye grid `dye` (the display's GPU upsamples as well as
/// the CPU would, for free).
pub fn frame_for(view: (f32, f32), dye: (usize, usize)) -> (usize, usize) {
    let (dw, dh) = (dye.0.max(1), dye.1.max(1));
    let scale = (view.0 / dw as f32).min(view.1 / dh as f32).clamp(0.0, 1.0);
    (
        ((dw as f32 * scale).round() as usize).max(MIN_FRAME_EDGE),
        ((dh as f32 * scale).round() as usize).max(MIN_FRAME_EDGE),
    )
}

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
/// triple buffer and its own requested size: frames are rendered at the largest size asked
/// for and copied to every consumer that watches.
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

impl FrameInput {
    /// The size to render, if any consumer wants frames: the largest any asks for (by
    /// area; the first of equals). Every consumer gets that frame and scales it to its own
    /// size, so the display pipeline runs once per frame however many consumers watch, and
    /// on the GPU its render targets keep one size instead of being rebuilt at every switch.
    pub fn wanted(&self) -> Option<(usize, usize)> {
        self.sinks.iter().filter_map(|s| s.request.get()).fold(
            None,
            |best: Option<(usize, usize)>, size| match best {
                Some(b) if b.0 * b.1 >= size.0 * size.1 => Some(b),
                _ => Some(size),
            },
        )
    }

    /// Which consumers want frames, one bit each (consumer `k`: bit `k`).
    pub fn watchers(&self) -> u32 {
        self.sinks
            .iter()
            .enumerate()
            .filter(|(_, s)| s.request.get().is_some())
            .fold(0, |m, (k, _)| m | 1 << k)
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
    /// consumer that wants frames (to the first when none does, as with one consumer).
    pub fn publish_from(
        &mut self,
        sim_time_s: f64,
        fill: impl FnOnce(&mut Vec<u8>) -> Option<(usize, usize)>,
    ) -> bool {
        // Drawn into the back buffer of the first watching consumer, then copied to the
        // other watching ones.
        let target = self
            .sinks
            .iter()
            .position(|s| s.request.get().is_some())
            .unwrap_or(0);
        let (_, rest) = self.sinks.split_at_mut(target);
        let (sink, tail) = rest.split_first_mut().expect("target is in range");
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
        // Consumers before the target do not watch (it is the first that does).
        for other in tail.iter_mut().filter(|s| s.request.get().is_some()) {
            let copy = other.input.input_buffer_mut();
            copy.pixels.clear();
            copy.pixels.extend_from_slice(&frame.pixels);
            (copy.width, copy.height) = (width, height);
            copy.serial = frame.serial;
            copy.sim_time_s = sim_time_s;
            other.input.publish();
        }
        sink.input.publish();
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
    fn every_watching_consumer_gets_each_frame_at_the_largest_size() {
        let (mut input, mut outputs) = frame_channels(3);
        assert_eq!((input.wanted(), input.watchers()), (None, 0));
        outputs[1].request(4, 2);
        outputs[2].request(2, 1);
        assert_eq!(input.watchers(), 0b110);
        assert_eq!(input.wanted(), Some((4, 2)), "the largest");
        outputs[0].request(1, 1);
        assert_eq!(input.wanted(), Some((4, 2)));

        input.publish(4, 2, 1.0, |p| p.fill(7));
        for out in &mut outputs {
            assert!(out.has_new());
            let f = out.latest();
            assert_eq!((f.width, f.height, f.serial, f.sim_time_s), (4, 2, 1, 1.0));
            assert!(f.pixels.iter().all(|&b| b == 7));
        }

        // A consumer that stops watching gets no more frames.
        outputs[0].request(0, 0);
        input.publish(2, 1, 2.0, |p| p.fill(9));
        assert!(!outputs[0].has_new());
        for k in [1, 2] {
            let f = outputs[k].latest();
            assert_eq!((f.serial, f.pixels.as_slice()), (2, &[9u8; 8][..]));
        }
    }
}
