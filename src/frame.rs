//! Frames from the simulation thread to their consumer (the editor): RGBA8 pictures through
//! a lock-free triple buffer, at the size the consumer asks for.
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

/// The producer side (simulation thread).
pub struct FrameInput {
    input: triple_buffer::Input<Frame>,
    request: Arc<FrameRequest>,
    serial: u64,
}

/// The consumer side (editor).
pub struct FrameOutput {
    output: triple_buffer::Output<Frame>,
    request: Arc<FrameRequest>,
}

/// A connected pair.
pub fn frame_channel() -> (FrameInput, FrameOutput) {
    let (input, output) = triple_buffer::triple_buffer(&Frame::default());
    let request = Arc::new(FrameRequest::default());
    (
        FrameInput {
            input,
            request: request.clone(),
            serial: 0,
        },
        FrameOutput { output, request },
    )
}

impl FrameInput {
    /// The size the consumer wants, if any.
    pub fn wanted(&self) -> Option<(usize, usize)> {
        self.request.get()
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
    /// returns the frame's size, or `None` to publish nothing.
    pub fn publish_from(
        &mut self,
        sim_time_s: f64,
        fill: impl FnOnce(&mut Vec<u8>) -> Option<(usize, usize)>,
    ) -> bool {
        let frame = self.input.input_buffer_mut();
        let Some((width, height)) = fill(&mut frame.pixels) else {
            return false;
        };
        debug_assert_eq!(frame.pixels.len(), width * height * 4);
        self.serial += 1;
        frame.width = width;
        frame.height = height;
        frame.serial = self.serial;
        frame.sim_time_s = sim_time_s;
        self.input.publish();
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
}
