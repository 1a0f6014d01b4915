//! Replaying a bounce capture (see [`crate::capture`]): the recorded events at their samples,
//! the parameters as the plugin saw them, the same [`Driver`] and steps as any render. Sample 0
//! is the capture's first; nothing is analysed again (the audio given with `--audio` only goes
//! into the video).
//!
//! Times are whole samples from the capture's start (the bridge stamps every event at a sample
//! of its clock), so which step a record falls into does not depend on where the bridge's
//! clock stood when the capture began, and the events reach the driver stamped as an engine
//! started with the capture would stamp them.

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
    /// Each record's sample, counted from the capture's start.
    samples: Vec<i64>,
    next: usize,
    /// The capture's parameters by index: this Dyeflow's pointer, if it knows the id.
    params: Vec<Option<ParamPtr>>,
    rate: f64,
    /// The first sample of step 0.
    first_sample: i64,
    step_s: f64,
    steps: u64,
}

impl CapturePlayer {
    /// Load the capture at `path` and put its starting state into `params`; the player and
    /// notes on what could not be used (parameter ids this Dyeflow does not know, a saved
    /// state it cannot read).
    pub fn load(path: &Path, params: &DyeflowParams) -> Result<(Self, Vec<String>), RenderError> {
        let capture = crate::capture::file::load(path).map_err(|e| match e {
            // "file not found", "permission denied", as for any input.
            crate::capture::file::CaptureError::Io(e) => RenderError::input_io(path, e),
            e => RenderError::input(path, e),
        })?;
        let mut notes = Vec::new();
        let state = capture.header.state.to_string();
        let mut unknown = match crate::preset::apply(state.as_bytes(), params) {
            Ok(report) => report.unknown,
            Err(e) => {
                // The parameters recorded at the start still set every value.
                notes.push(format!(
                    "{}: its saved state cannot be read ({e}): the settings and obstacles are \
                     this render's, the parameters the recorded ones",
                    path.display()
                ));
                Vec::new()
            }
        };
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
        if !unknown.is_empty() {
            notes.push(format!(
                "{}: skipped parameters this Dyeflow does not know: {}",
                path.display(),
                unknown.join(", ")
            ));
        }
        let rate = f64::from(capture.header.sample_rate);
        let origin = capture.header.start_s;
        let samples = capture
            .records
            .iter()
            .map(|r| ((r.time_s() - origin) * rate).round().max(0.0) as i64)
            .collect();
        let player = Self {
            capture,
            samples,
            next: 0,
            params: ptrs,
            rate,
            first_sample: 0,
            step_s: 1.0 / 60.0,
            steps: 0,
        };
        // The values at the start hold from the first step on (and the driver starts from
        // them): every parameter recorded at the first sample, among whatever else came then.
        for i in 0..player.samples.iter().take_while(|&&s| s == 0).count() {
            player.apply_param(i);
        }
        Ok((player, notes))
    }

    /// Seconds from the capture's first sample to its end.
    pub fn duration_s(&self) -> f64 {
        self.capture.duration_s()
    }

    /// Records the plugin could not keep while capturing, and whether the size limit cut it
    /// short.
    pub fn losses(&self) -> (u64, bool) {
        (self.capture.dropped, self.capture.limited)
    }

    /// Step 0 starts at capture time `start_s`; each step is `step_s` seconds. The parameters
    /// recorded before `start_s` are applied now (call it before making the driver, so it
    /// starts from them); its events are skipped (a render from a later start simulates only
    /// its pre-roll, as from music).
    pub fn set_steps(&mut self, start_s: f64, step_s: f64) {
        self.step_s = step_s;
        self.first_sample = (start_s * self.rate).round() as i64;
        while self.next < self.samples.len() && self.samples[self.next] < self.first_sample {
            self.apply_param(self.next);
            self.next += 1;
        }
    }

    /// Set the parameter of record `i`, if it is one.
    fn apply_param(&self, i: usize) {
        if let Record::Param { index, value, .. } = self.capture.records[i]
            && let Some(Some(ptr)) = self.params.get(usize::from(index))
        {
            // SAFETY: the pointers come from the render's parameters, which outlive it.
            unsafe { crate::capture::set_plain(*ptr, value) };
        }
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
            // As the music's player: the step ends at this sample.
            let end_s = (self.steps + 1) as f64 * self.step_s;
            let end = self.first_sample + (end_s * self.rate).round() as i64;
            while self.next < self.samples.len() && self.samples[self.next] < end {
                match self.capture.records[self.next] {
                    Record::Event(mut e) => {
                        e.time_s = self.samples[self.next] as f64 / self.rate;
                        driver.event(model, &e);
                    }
                    Record::Param { .. } => self.apply_param(self.next),
                    Record::Transport { .. }
                    | Record::Start { .. }
                    | Record::Watch { .. }
                    | Record::Bounce { .. }
                    | Record::Stop { .. } => {}
                }
                self.next += 1;
            }
            driver.step(model, params, self.step_s as f32);
            self.steps += 1;
        }
        Ok(true)
    }
}
