//! Events that cross from the audio thread (and the editor) to the simulation thread: small,
//! fixed-size, `Copy`, so the ring buffer never allocates.

use crate::sim::Splat;

/// Something that should happen to the fluid.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SimEvent {
    /// Paint directly: dye and momentum at a point (the editor's mouse, tests).
    Splat(Splat),
    /// Clear the fluid to rest.
    Reset,
}

/// An event with the time it happened, in seconds on the producer's clock (audio time for the
/// audio thread: samples processed divided by the sample rate).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimedEvent {
    /// When the event happened, in seconds.
    pub time_s: f64,
    /// What happened.
    pub event: SimEvent,
}
