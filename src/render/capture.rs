//! Replaying a bounce capture (see [`crate::capture`]): the recorded events at their times,
//! the parameters as the plugin saw them, the same [`Driver`] and steps as any render. Time 0
//! is the capture's first sample; nothing is analysed again (the audio given with `--audio`
//! only goes into the video).

use super::RenderError;
use crate::capture::Record;
use crate::capture::file::Capture;
use crate::engine::Driver;
use crate::params::DyeflowParams;
use crate::sim::Model;
use nice_plug::prelude::{ParamPtr, Params};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// A capture, played step by step.
pub struct CapturePlayer {
    capture: Capture,
    next: usize,
    /// The capture's parameters by index: this Dyeflow's pointer, if it knows the id.
    params: Vec<Option<ParamPtr>>,
    /// Capture time of step 0, seconds.
    start_s: f64,
    step_s: f64,
    steps: u64,
}

impl CapturePlayer {
    /// Load the capture at `path` and put its starting state into `params`; the player and
    /// the parameter ids this Dyeflow does not know.
    pub fn load(path: &Path, params: &DyeflowParams) -> Result<(Self, Vec<String>), RenderError> {
        let capture = crate::capture::file::load(path).map_err(|e| match e {
            // "file not found", "permission denied", as for any input.
            crate::capture::file::CaptureError::Io(e) => RenderError::input_io(path, e),
            e => RenderError::input(path, e),
        })?;
        let state = capture.header.state.to_string();
        let report = crate::preset::apply(state.as_bytes(), params)
            .map_err(|e| RenderError::input(path, e))?;
        let map: std::collections::HashMap<String, ParamPtr> = params
            .param_map()
            .into_iter()
            .map(|(id, ptr, _)| (id, ptr))
            .collect();
        let ptrs: Vec<Option<ParamPtr>> = capture
            .header
            .params
            .iter()
            .map(|id| map.get(id).copied())
            .collect();
        let mut unknown = report.unknown;
        unknown.extend(
            capture
                .header
                .params
                .iter()
                .zip(&ptrs)
                .filter(|(_, p)| p.is_none())
                .map(|(id, _)| id.clone()),
        );
        unknown.sort();
        unknown.dedup();
        let mut player = Self {
            capture,
            next: 0,
            params: ptrs,
            start_s: 0.0,
            step_s: 1.0 / 60.0,
            steps: 0,
        };
        // The values at the start hold from the first step on (and the driver starts from
        // them): the parameters recorded with the first block.
        let origin = player.capture.header.start_s;
        while let Some(&Record::Param { time_s, .. }) = player.capture.records.get(player.next) {
            if time_s > origin {
                break;
            }
            player.apply(player.next);
            player.next += 1;
        }
        Ok((player, unknown))
    }

    /// Step 0 starts at capture time `start_s`; each step is `step_s` seconds.
    /// The parameters recorded before `start_s` are applied now; its events are skipped (a
    /// render from a later start simulates only its pre-roll, as from music).
    pub fn set_steps(&mut self, start_s: f64, step_s: f64) {
        self.start_s = start_s;
        self.step_s = step_s;
        let origin = self.capture.header.start_s;
        while let Some(record) = self.capture.records.get(self.next) {
            if record.time_s() - origin >= start_s {
                break;
            }
            self.apply(self.next);
            self.next += 1;
        }
    }

    /// Seconds from the capture's first sample to its last record.
    pub fn duration_s(&self) -> f64 {
        self.capture.duration_s()
    }

    /// Records the audio thread lost on a full queue while capturing, and whether the size
    /// limit cut it short.
    pub fn losses(&self) -> (u64, bool) {
        (self.capture.dropped, self.capture.limited)
    }

    /// Apply record `i`: a parameter's value set, or an event handed to `event` with its time
    /// counted from the capture's start.
    fn apply_with(&self, i: usize, event: impl FnOnce(&crate::bridge::events::TimedEvent)) {
        match self.capture.records[i] {
            Record::Param { index, value, .. } => {
                if let Some(Some(ptr)) = self.params.get(usize::from(index)) {
                    // SAFETY: the pointers come from the render's parameters, which outlive it.
                    unsafe { crate::capture::set_plain(*ptr, value) };
                }
            }
            Record::Event(mut e) => {
                e.time_s -= self.capture.header.start_s;
                event(&e);
            }
            Record::Transport { .. } | Record::Start { .. } | Record::Stop { .. } => {}
        }
    }

    /// Apply record `i`, dropping an event.
    fn apply(&self, i: usize) {
        self.apply_with(i, |_| {});
    }

    /// Run `steps` steps: each applies its records (parameters, then events, in time order)
    /// and advances the model. Stops early (returning `false`) when `stop` is set.
    pub fn advance(
        &mut self,
        model: &mut dyn Model,
        driver: &mut Driver,
        params: &DyeflowParams,
        steps: u64,
        stop: &AtomicBool,
    ) -> Result<bool, RenderError> {
        for _ in 0..steps {
            if stop.load(Ordering::Relaxed) {
                return Ok(false);
            }
            let t1 = self.start_s + (self.steps + 1) as f64 * self.step_s;
            let origin = self.capture.header.start_s;
            while let Some(record) = self.capture.records.get(self.next) {
                if record.time_s() - origin >= t1 {
                    break;
                }
                self.apply_with(self.next, |e| driver.event(model, e));
                self.next += 1;
            }
            driver.step(model, params, self.step_s as f32);
            self.steps += 1;
        }
        Ok(true)
    }
}
