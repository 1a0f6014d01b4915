//! Minimal nice-plug contexts, to drive `Plugin` methods directly (no wrapper).
#![allow(dead_code)]

use nice_plug::prelude::*;
use std::collections::VecDeque;

/// An activation context that records nothing.
pub struct Activate;

impl<P: Plugin> ActivateContext<P> for Activate {
    fn plugin_api(&self) -> PluginApi {
        PluginApi::Clap
    }
    fn execute(&self, _task: P::BackgroundTask) {}
    fn set_latency_samples(&self, _samples: u32) {}
    fn set_current_voice_capacity(&self, _capacity: u32) {}
}

/// Activate `plugin` as a host would for the tests: its first layout, 48 kHz, realtime,
/// blocks of up to 512 frames. Whether it accepted.
pub fn activate_48k<P: Plugin>(plugin: &mut P) -> bool {
    let config = BufferConfig {
        sample_rate: 48_000.0,
        min_buffer_size: None,
        max_buffer_size: 512,
        process_mode: ProcessMode::Realtime,
    };
    plugin.activate(&P::AUDIO_IO_LAYOUTS[0], &config, &mut Activate)
}

/// A process context that hands out queued note events and a transport.
pub struct Process<P: Plugin> {
    pub events: VecDeque<PluginNoteEvent<P>>,
    pub transport: Transport,
}

impl<P: Plugin> Process<P> {
    pub fn new(sample_rate: f32) -> Self {
        Self {
            events: VecDeque::new(),
            transport: Transport::new(sample_rate),
        }
    }
}

impl<P: Plugin> ProcessContext<P> for Process<P> {
    fn plugin_api(&self) -> PluginApi {
        PluginApi::Clap
    }
    fn execute_background(&self, _task: P::BackgroundTask) {}
    fn execute_gui(&self, _task: P::BackgroundTask) {}
    fn transport(&self) -> &Transport {
        &self.transport
    }
    fn next_event(&mut self) -> Option<PluginNoteEvent<P>> {
        self.events.pop_front()
    }
    fn try_send_event(
        &mut self,
        event: PluginNoteEvent<P>,
    ) -> Result<
        (),
        (
            PluginNoteEvent<P>,
            nice_plug::context::process::SendEventError,
        ),
    > {
        Err((
            event,
            nice_plug::context::process::SendEventError::NoOutputBuffer,
        ))
    }
    fn set_latency_samples(&self, _samples: u32) {}
    fn request_restart(&self) {}
    fn set_current_voice_capacity(&self, _capacity: u32) {}
}

/// Run `process` once on `channels` of `len` silent samples.
pub fn process_silence<P: Plugin>(
    plugin: &mut P,
    ctx: &mut Process<P>,
    channels: usize,
    len: usize,
) -> ProcessStatus {
    let mut data = vec![vec![0.0f32; len]; channels];
    let mut buffer = Buffer::default();
    // SAFETY: `set_slices` needs the slices to point at live data, all of `len` samples, whenever
    // `buffer` reaches `process`. Each slice is one `Vec` of `data`, all `len` long; `data` is
    // declared before `buffer`, so it is dropped after it, and is not touched again while `buffer`
    // holds the slices, which makes the widened lifetime sound.
    unsafe {
        buffer.set_slices(len, |slices| {
            slices.clear();
            for c in data.iter_mut() {
                // SAFETY: `data` outlives `buffer`, which is dropped at the end of this function.
                slices.push(&mut *(c.as_mut_slice() as *mut [f32]));
            }
        });
    }
    let mut aux = AuxiliaryBuffers {
        inputs: &mut [],
        outputs: &mut [],
    };
    plugin.process(&mut buffer, &mut aux, ctx)
}
