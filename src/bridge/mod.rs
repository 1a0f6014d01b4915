//! What crosses threads, and the audio thread's side of it.
//!
//! The audio thread never alters the sound: [`passthrough`] only makes sure nothing subnormal
//! leaves the plugin.

pub mod events;
pub mod passthrough;
pub mod queue;
