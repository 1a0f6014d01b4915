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
use crate::capture::file::{CaptureError, CaptureReader, Records};
use crate::engine::Driver;
use crate::params::DyeflowParams;
use crate::sim::Model;
use nice_plug::prelude::{ParamPtr, Params};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Records replayed between looks at the stop flag where many may come at once (the start's
/// parameters, those skipped before `--start`).
const STOP_CHECK_RECORDS: u64 = 4096;

/// A capture, played step by step, its records streamed from the file (see
/// [`CaptureReader::records`]): memory does not grow with its length.
pub struct CapturePlayer {
    capture: CaptureReader,
    path: PathBuf,
    /// Seconds of the host's pre-roll before the bounce's start ([`bounce_origin`]).
    origin_s: f64,
    /// The records not replayed yet.
    records: Records,
    /// The next record and its sample (counted from the capture's start), read ahead.
    next: Option<(i64, Record)>,
    /// The capture's parameters by index: this Dyeflow's pointer, if it knows the id.
    params: Vec<Option<ParamPtr>>,
    rate: f64,
    /// The first sample of step 0.
    first_sample: i64,
    step_s: f64,
    steps: u64,
}

impl CapturePlayer {
    /// Open and check the capture at `path` (reading it through once) and put its starting
    /// state into `params`; the player and notes on what could not be used (parameter ids
    /// this Dyeflow does not know, a saved state it cannot read). `None` when `stop` was set
    /// meanwhile.
    pub fn load(
        path: &Path,
        params: &DyeflowParams,
        stop: &AtomicBool,
    ) -> Result<Option<(Self, Vec<String>)>, RenderError> {
        let input = |e| capture_error(path, e);
        let Some(capture) = crate::capture::file::open(path, stop).map_err(input)? else {
            return Ok(None);
        };
        let mut notes = Vec::new();
        let ptrs = set_state(path, &capture, params, &mut notes);
        let (origin, rate) = (
            capture.header.start_s,
            f64::from(capture.header.sample_rate),
        );
        // The values at the start hold from the first step on (and the driver starts from
        // them): every parameter recorded at the first sample, among whatever else came then.
        // Read through a stream of their own; the replay's starts again from the first.
        let mut seen = 0u64;
        for record in capture.records().map_err(input)? {
            let record = record.map_err(input)?;
            if sample_of(&record, origin, rate) != 0 {
                break;
            }
            apply_param(&ptrs, &record);
            seen += 1;
            if seen.is_multiple_of(STOP_CHECK_RECORDS) && stop.load(Ordering::Relaxed) {
                return Ok(None);
            }
        }
        let origin_s = bounce_origin(&capture);
        if origin_s > 0.0 {
            notes.push(format!(
                "{}: the host pre-rolled {origin_s:.2} s before its transport rolled; frame 0 is \
                 where it reached the bounce's start, as the bounced audio's first sample",
                path.display()
            ));
        }
        let mut player = Self {
            records: capture.records().map_err(input)?,
            origin_s,
            capture,
            path: path.to_owned(),
            next: None,
            params: ptrs,
            rate,
            first_sample: 0,
            step_s: 1.0 / 60.0,
            steps: 0,
        };
        player.pull()?;
        Ok(Some((player, notes)))
    }

    /// Read the next record ahead.
    fn pull(&mut self) -> Result<(), RenderError> {
        self.next = match self.records.next() {
            None => None,
            Some(Ok(record)) => Some((
                sample_of(&record, self.capture.header.start_s, self.rate),
                record,
            )),
            Some(Err(e)) => return Err(capture_error(&self.path, e)),
        };
        Ok(())
    }

    /// Seconds from the bounce's start (see [`bounce_origin`]) to the capture's end.
    pub fn duration_s(&self) -> f64 {
        (self.capture.duration_s() - self.origin_s).max(0.0)
    }

    /// Seconds of the host's pre-roll before the bounce's start (0 for most captures).
    pub fn origin_s(&self) -> f64 {
        self.origin_s
    }

    /// Records the plugin could not keep while capturing, and whether the size limit cut it
    /// short.
    pub fn losses(&self) -> (u64, bool) {
        (self.capture.dropped, self.capture.limited)
    }

    /// Step 0 starts `start_s` seconds after the bounce's start (at least
    /// `-`[`CapturePlayer::origin_s`]: the capture's first sample); each step is `step_s`
    /// seconds. The parameters recorded before then are applied now (call it before making the
    /// driver, so it starts from them); its events are skipped (a render from a later start
    /// simulates only its pre-roll, as from music). `false` when `stop` was set meanwhile.
    pub fn set_steps(
        &mut self,
        start_s: f64,
        step_s: f64,
        stop: &AtomicBool,
    ) -> Result<bool, RenderError> {
        self.step_s = step_s;
        self.first_sample = ((self.origin_s + start_s).max(0.0) * self.rate).round() as i64;
        let mut skipped = 0u64;
        while let Some((sample, record)) = self.next {
            if sample >= self.first_sample {
                break;
            }
            self.apply_param(&record);
            self.pull()?;
            skipped += 1;
            if skipped.is_multiple_of(STOP_CHECK_RECORDS) && stop.load(Ordering::Relaxed) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Set the parameter `record` sets, if it is one.
    fn apply_param(&self, record: &Record) {
        apply_param(&self.params, record);
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
            while let Some((sample, record)) = self.next {
                if sample >= end {
                    break;
                }
                match record {
                    Record::Event(mut e) => {
                        e.time_s = sample as f64 / self.rate;
                        driver.event(model, &e);
                    }
                    Record::Param { .. } => self.apply_param(&record),
                    Record::Transport { .. }
                    | Record::Start { .. }
                    | Record::Watch { .. }
                    | Record::Bounce { .. }
                    | Record::Stop { .. } => {}
                }
                self.pull()?;
            }
            driver.step(model, params, self.step_s as f32);
            self.steps += 1;
        }
        Ok(true)
    }
}

/// Where a bounce's audio starts in its capture, seconds from the capture's first sample: 0,
/// unless the host bounced (it said so, or its pace showed it) and began with its transport
/// stopped (a pre-roll: Ardour's export runs 2 s so), where the transport rolls, and where it
/// reaches position 0 if it rolled from before it (Ardour rolls from minus its latency). The
/// bounced audio's first sample is there, so frame 0 is too.
fn bounce_origin(capture: &crate::capture::file::CaptureReader) -> f64 {
    use crate::capture::Cause;
    let bounce = matches!(capture.header.cause, Some(Cause::Offline | Cause::Pace));
    let Some((time_s, samples)) = capture.rolled.filter(|_| bounce) else {
        return 0.0;
    };
    let rate = f64::from(capture.header.sample_rate);
    let origin = time_s - capture.header.start_s + samples.saturating_neg().max(0) as f64 / rate;
    origin.clamp(0.0, capture.duration_s())
}

/// The sample (counted from the capture's start, `origin`) a record falls on, at `rate`.
fn sample_of(record: &Record, origin: f64, rate: f64) -> i64 {
    ((record.time_s() - origin) * rate).round().max(0.0) as i64
}

/// Set the parameter `record` sets, if it is one (`params`: this Dyeflow's pointer for each
/// of the capture's parameters, if it knows the id).
fn apply_param(params: &[Option<ParamPtr>], record: &Record) {
    if let Record::Param { index, value, .. } = *record
        && let Some(Some(ptr)) = params.get(usize::from(index))
    {
        // SAFETY: the pointers come from the render's parameters, which outlive it.
        unsafe { crate::capture::set_plain(*ptr, value) };
    }
}

/// A capture's problem as the render's error: "file not found", "permission denied" as for
/// any input, else what is wrong with it.
fn capture_error(path: &Path, e: CaptureError) -> RenderError {
    match e {
        CaptureError::Io(e) => RenderError::input_io(path, e),
        e => RenderError::input(path, e),
    }
}

/// The capture's saved state set in `params` (its notes in `notes`), and the pointer of each
/// parameter its records name (`None`: one this Dyeflow does not know, noted).
fn set_state(
    path: &Path,
    capture: &crate::capture::file::CaptureReader,
    params: &DyeflowParams,
    notes: &mut Vec<String>,
) -> Vec<Option<ParamPtr>> {
    let state = capture.header.state.to_string();
    let mut unknown = match crate::preset::apply(state.as_bytes(), params) {
        Ok(report) => {
            if let Some(note) = report.version_note() {
                notes.push(format!("{}: its saved state was {note}", path.display()));
            }
            for note in &report.modulation_notes {
                notes.push(format!(
                    "{}: its saved state's modulation: {note}",
                    path.display()
                ));
            }
            report.unknown
        }
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
    ptrs
}
