//! Events in, steps out: the part of the engine the offline renderer shares.

use super::modulation::{knob_offsets, mapping_offsets};
use super::*;
use crate::fluid::{StreamlineLook, ToneMode};
use crate::mapping::{MAX_PILLAR_EDITS, ObstacleEdit};

/// Seconds of music (or wall) time without a frame read after which the adaptive dye
/// releases as if it had read empty frames: longer than the gap between two frames of any
/// render (1 fps and up) or of a live editor, so only an unwatched engine lets go.
const UNSEEN_S: f64 = 2.0;

/// Everything between the event queue and the model, shared by the engine and the offline
/// renderer so both drive the fluid identically: the mapping (notes and audio to splats),
/// the parameter smoothing, the discrete knobs and the obstacles.
pub struct Driver {
    mapper: Mapper,
    splats: Vec<Splat>,
    /// The mapping's pillar edits of one step (never grows past its capacity).
    edits: Vec<ObstacleEdit>,
    /// The obstacles: the project's and the pillar channel's.
    scene: super::obstacles::Scene,
    smoother: KnobsSmoother,
    discrete: Discrete,
    /// Seconds of simulation so far.
    sim_time: f64,
    /// Seconds of music (or wall) time so far: the steps' `real_dt`, whatever the speed.
    real_time: f64,
    /// Counts every change put into the fluid from outside (splats injected, resets), so the
    /// engine can tell whether anything happened since it last measured the fluid.
    changes: u64,
    /// The last step's parameters: a step of no time (sources only) carries them, so the
    /// liquid's budget holds between steps.
    last: StepInput,
    /// Adaptive dye ([`super::adaptive`]), and the music time of the frame it last read.
    compressor: super::adaptive::Compressor,
    observed_at: f64,
    /// Modulation: the sources' state and the routes ([`super::modulation`]), and what the
    /// last step's routes did to the mapping's parameters.
    modulator: super::modulation::Modulator,
    mapping_offsets: [f32; MAPPED],
}

impl Driver {
    /// A driver starting from the current parameter values.
    pub fn new(params: &DyeflowParams) -> Self {
        Self {
            mapper: Mapper::new(),
            splats: Vec::with_capacity(2 * MAX_VOICES + 32),
            edits: Vec::with_capacity(MAX_PILLAR_EDITS),
            scene: super::obstacles::Scene::default(),
            smoother: KnobsSmoother::new(Knobs::from_params(params)),
            discrete: Discrete::from_params(params),
            sim_time: 0.0,
            real_time: 0.0,
            changes: 0,
            last: Self::input_of(
                Knobs::from_params(params),
                &Discrete::from_params(params),
                0.0,
                0.0,
            ),
            compressor: Default::default(),
            observed_at: 0.0,
            modulator: Default::default(),
            mapping_offsets: [0.0; MAPPED],
        }
    }

    /// Read a frame `model` shows now (RGBA8, `width x height`): how full it is sets the
    /// adaptive dye's action (at the amount `params` set) for the steps after it. Measured
    /// above the look's background as the frame shows it; a model that draws no plain
    /// backdrop is not read (the compressor lets go).
    pub fn observe_frame(
        &mut self,
        rgba: &[u8],
        size: (usize, usize),
        params: &DyeflowParams,
        model: &dyn Model,
    ) {
        let look = self.look();
        self.observe_drawn(rgba, size, params, model, &look);
    }

    /// [`Driver::observe_frame`] for a frame drawn with `look` (an offline render's frame in
    /// flight, read after the look moved on to the next frame's).
    pub fn observe_drawn(
        &mut self,
        rgba: &[u8],
        (width, height): (usize, usize),
        params: &DyeflowParams,
        model: &dyn Model,
        look: &Look,
    ) {
        let fill = if model.dye_over_backdrop() {
            super::adaptive::Fill::of(rgba, width, height, Self::backdrop(look))
        } else {
            None
        };
        let dt = (self.real_time - self.observed_at) as f32;
        self.observed_at = self.real_time;
        self.compressor
            .observe(fill, dt, params.adaptive_dye.value());
    }

    /// The luma (0-255) of a pixel without dye in `look`: its background as the filmic tone
    /// shows it (the other tone modes draw none).
    fn backdrop(look: &Look) -> f32 {
        if look.tone != ToneMode::Filmic {
            return 0.0;
        }
        let bg = look.effects.background;
        let mut px = [0u32];
        crate::display::cpu::tone::tone_row([&bg[0..1], &bg[1..2], &bg[2..3]], 0, &mut px);
        super::adaptive::luma8(&px[0].to_le_bytes())
    }

    /// Start the music's clock at `music_s` (a render from `--start`'s pre-roll): the free
    /// LFOs stand where a render from the start would have them.
    pub fn start_at(&mut self, music_s: f64) {
        if music_s.is_finite() {
            self.real_time = music_s;
            self.observed_at = music_s;
            self.modulator.start_at(music_s);
        }
    }

    /// What the model was told at the last step (the knobs as smoothed and modulated, the
    /// adaptive dye's fade included).
    pub fn last_input(&self) -> StepInput {
        self.last
    }

    /// The adaptive dye's action now: the fade it adds (1/s) and the share of their dye the
    /// sources inject.
    pub fn adaptive(&self) -> (f32, f32) {
        (self.compressor.fade(), self.compressor.gain())
    }

    /// The mapping's settings at `aspect`, as modulated at the last step.
    fn mapping(&self, params: &DyeflowParams, aspect: f32) -> crate::mapping::MappingConfig {
        mapping_config_modulated(params, aspect, &self.mapping_offsets)
    }

    /// The splats of this step with the adaptive dye's share of their dye.
    fn adapt_splats(&mut self) {
        let gain = self.compressor.gain();
        if gain < 1.0 {
            for s in &mut self.splats {
                s.amount *= gain;
            }
        }
    }

    /// The step parameters from the smoothed `knobs` and the discrete ones, for `real_dt`
    /// seconds with the music's `swing`.
    fn input_of(knobs: Knobs, discrete: &Discrete, real_dt: f32, swing: f32) -> StepInput {
        let mut p = knobs.step_input(real_dt, swing);
        p.liquid.budget = discrete.liquid_budget;
        p.liquid.floaters = discrete.liquid_floaters;
        p
    }

    /// Parameters for a step of no time: sources only, with the last step's knobs and the
    /// particle budget as `params` set it now (so a budget changed while paused applies to
    /// what the mouse pours).
    fn still(&mut self, params: &DyeflowParams) -> StepInput {
        let discrete = Discrete::from_params(params);
        self.last.liquid.budget = discrete.liquid_budget;
        self.last.liquid.floaters = discrete.liquid_floaters;
        StepInput {
            dt: 0.0,
            ..self.last
        }
    }

    /// Take one event: notes and audio go to the mapping, splats and resets to the model,
    /// brush strokes to the obstacles (applied with the next step, or
    /// [`Driver::sync_obstacles`]).
    pub fn event(&mut self, model: &mut dyn Model, event: &TimedEvent) {
        self.modulator.event(&event.event);
        match event.event {
            SimEvent::Splat(s) => {
                model.inject(&[s]);
                self.changes += 1;
            }
            SimEvent::Brush(b) => self.scene.brush(&b, model.resolution().cells),
            SimEvent::Reset => {
                model.reset();
                self.changes += 1;
                self.mapper.handle(&TimedEvent {
                    time_s: event.time_s,
                    event: SimEvent::Silence,
                });
            }
            _ => self.mapper.handle(event),
        }
    }

    /// Advance `real_dt` seconds of wall (or music) time: emit the mapping's splats, smooth the
    /// knobs and advance the model. Returns the step's simulated dt.
    pub fn step(&mut self, model: &mut dyn Model, params: &DyeflowParams, real_dt: f32) -> f32 {
        let d = Discrete::from_params(params);
        if d.pressure_iterations != self.discrete.pressure_iterations {
            model.set_effort(d.pressure_iterations);
        }
        self.discrete = d;
        // The modulation's LFOs follow the music's time (not the fluid's speed).
        self.modulator.advance(real_dt);
        let offsets = self.modulator.offsets(params);
        self.mapping_offsets = mapping_offsets(&offsets);
        let mapping = self.mapping(params, model.resolution().aspect());
        let drive = self.mapper.emit(real_dt, &mapping, &mut self.splats);
        self.pillars(&mapping);
        self.sync_obstacles(model, params);
        if !self.splats.is_empty() {
            self.adapt_splats();
            model.inject(&self.splats);
            self.changes += 1;
        }
        let knobs = self.smoother.advance(
            Knobs::from_params_modulated(params, &knob_offsets(&offsets)),
            real_dt,
        );
        let mut step_input = Self::input_of(knobs, &self.discrete, real_dt, drive.swing);
        step_input.vorticity = (step_input.vorticity + drive.vorticity_boost)
            .min(crate::params::vorticity_range().unnormalize(1.0));
        // No frame read for a while (nobody watching): the adaptive dye lets go.
        if real_dt.is_finite() && real_dt > 0.0 {
            self.real_time += f64::from(real_dt);
        }
        let unseen = self.real_time - self.observed_at;
        if unseen > UNSEEN_S {
            self.compressor
                .observe(None, unseen as f32, params.adaptive_dye.value());
            self.observed_at = self.real_time;
        }
        step_input.dye_dissipation += self.compressor.fade();
        self.last = step_input;
        model.advance(&step_input);
        self.sim_time += f64::from(step_input.dt);
        step_input.dt
    }

    /// A step's worth of waiting while paused: the events taken are kept (notes sound on, and
    /// a note-off still ends them) but the notes emit nothing and the fluid does not move;
    /// direct splats (the mouse) still paint, as in the original demo.
    pub fn idle(&mut self, model: &mut dyn Model, params: &DyeflowParams) {
        if self.scene.apply(model) {
            self.changes += 1;
        }
        model.advance(&self.still(params));
    }

    /// Inject what the events taken since the last step ask for at once (note bursts, onset
    /// bursts, beat pulses) without advancing time, so they can be shown before the next step.
    /// Returns whether anything was injected.
    pub fn flush(&mut self, model: &mut dyn Model, params: &DyeflowParams) -> bool {
        let mapping = self.mapping(params, model.resolution().aspect());
        self.mapper.emit(0.0, &mapping, &mut self.splats);
        self.pillars(&mapping);
        let walls = self.sync_obstacles(model, params);
        if self.splats.is_empty() {
            if walls {
                // A step of no time clears what the new walls cover.
                model.advance(&self.still(params));
            }
            return walls;
        }
        self.adapt_splats();
        model.inject(&self.splats);
        self.changes += 1;
        // A step of no time applies the splats and nothing else.
        model.advance(&self.still(params));
        true
    }

    /// The mapping's pillar edits into the scene.
    fn pillars(&mut self, mapping: &crate::mapping::MappingConfig) {
        self.mapper.pillar_edits(mapping, &mut self.edits);
        for e in &self.edits {
            self.scene.edit(e);
        }
    }

    /// Take the project's obstacles when they changed (the editor's layout or Clear, a state
    /// or preset load: the field's serial moved), and give the model its mask when anything
    /// changed (those, the brush, the pillars). One atomic load when nothing did. Whether the
    /// model got a new mask.
    pub fn sync_obstacles(&mut self, model: &mut dyn Model, params: &DyeflowParams) -> bool {
        if self.scene.seen != Some(params.obstacles.serial()) {
            let (settings, serial) = params.obstacles.get();
            self.scene.set_settings(&settings, serial);
        }
        let applied = self.scene.apply(model);
        if applied {
            self.changes += 1;
        }
        applied
    }

    /// The model was rebuilt (new resolution or backend): compose its mask again at its grid.
    pub fn obstacles_rebuilt(&mut self, model: &mut dyn Model, params: &DyeflowParams) {
        self.scene.invalidate();
        self.sync_obstacles(model, params);
    }

    /// Write what the brush drew back into the project (so it is saved with it), unless the
    /// project's obstacles changed meanwhile (they win). Whether it wrote.
    pub fn write_back_obstacles(&mut self, params: &DyeflowParams) -> bool {
        let Some(drawn) = self.scene.take_drawn() else {
            return false;
        };
        let Some(seen) = self.scene.seen else {
            return false;
        };
        match params.obstacles.set_if(seen, drawn) {
            Some(serial) => {
                self.scene.seen = Some(serial);
                true
            }
            None => false,
        }
    }

    /// Whether the mapping would put nothing into the fluid (see [`Mapper::quiet`]).
    pub fn quiet(&self, params: &DyeflowParams) -> bool {
        // The aspect does not matter for quietness.
        self.mapper.quiet(&self.mapping(params, 1.0))
    }

    /// Whether every knob has glided to its parameter's value as modulated now and the
    /// discrete knobs are applied, and no LFO moves a knob: nothing about the fluid's
    /// behaviour or look is still changing. (A steady route settles; a CC or the audio that
    /// moves a routed source unsettles it.)
    pub fn settled(&mut self, params: &DyeflowParams) -> bool {
        let offsets = self.modulator.offsets(params);
        // A mapping's parameter moved by a CC or the music applies at the next step.
        !self.modulator.moving()
            && mapping_offsets(&offsets) == self.mapping_offsets
            && self.smoother.settled(Knobs::from_params_modulated(
                params,
                &knob_offsets(&offsets),
            ))
            && Discrete::from_params(params) == self.discrete
    }

    /// Changes put into the fluid from outside so far (splats, resets): a counter that moves
    /// whenever the fluid was stirred.
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// The look for frames, from the smoothed knobs.
    pub fn look(&self) -> Look {
        let d = &self.discrete;
        let look = self
            .smoother
            .current()
            .look(d.color_mode, d.tone, d.palette);
        Look {
            obstacles: d.obstacles,
            liquid: d.liquid_style,
            streamlines: StreamlineLook {
                mode: d.streamlines,
                density: d.stream_density,
                steps: d.stream_steps,
                ..look.streamlines
            },
            ..look
        }
    }

    /// The smoothed knobs as of the last step.
    pub fn knobs(&self) -> Knobs {
        self.smoother.current()
    }

    /// The discrete knobs as of the last step.
    pub fn discrete(&self) -> &Discrete {
        &self.discrete
    }

    /// Simulated seconds so far.
    pub fn sim_time(&self) -> f64 {
        self.sim_time
    }

    /// The mapping (for tests and the status line).
    pub fn mapper(&self) -> &Mapper {
        &self.mapper
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::sph::model::SphModel;

    /// The particle budget set while paused holds for what the mouse pours then (a step of
    /// no time carries it), not only from the next step on.
    #[test]
    fn a_budget_set_while_paused_holds_for_what_the_mouse_pours() {
        let p = DyeflowParams::default();
        let mut d = Driver::new(&p);
        let mut m = SphModel::new((64, 36), 1, 6000).expect("a model");
        crate::preset::apply(br#"{"params": {"liq_count": 500}}"#, &p).expect("applies");
        let pour = Splat {
            pos: [0.8, 0.5],
            radius: 0.25,
            color: [1.0; 3],
            amount: 4.0,
            ..Splat::default()
        };
        for _ in 0..4 {
            d.event(
                &mut m,
                &TimedEvent {
                    time_s: 0.0,
                    event: SimEvent::Splat(pour),
                },
            );
            d.idle(&mut m, &p);
        }
        assert_eq!(m.fluid().len(), 500);
    }

    /// An LFO routed to a parameter moves what the simulation is told at the LFO's period: a
    /// free 2 Hz sine on the dye dissipation, 30 % of its range deep, stepped at 60 steps a
    /// second for 3 s, crosses its middle going up every 0.5 s, and swings round the
    /// parameter's own value.
    #[test]
    fn an_lfo_moves_the_simulation_s_input_at_its_period() {
        use crate::params::modulation::{Lfo, Modulation, Route, Shape, Source};
        let p = DyeflowParams::default();
        *p.modulation.write() = Modulation {
            lfos: [Lfo {
                shape: Shape::Sine,
                sync: false,
                hz: 2.0,
                ..Lfo::default()
            }; 4],
            routes: vec![Route {
                source: Source::Lfo(0),
                target: "dye_diss".into(),
                depth: 0.3,
            }],
            ..Default::default()
        };
        let mut d = Driver::new(&p);
        let mut m = SphModel::new((64, 36), 1, 500).expect("a model");
        let dt = 1.0 / 60.0;
        let seen: Vec<f32> = (0..180)
            .map(|_| {
                d.step(&mut m, &p, dt);
                d.last_input().dye_dissipation
            })
            .collect();
        let (lo, hi) = seen[60..]
            .iter()
            .fold((f32::MAX, f32::MIN), |(a, b), &v| (a.min(v), b.max(v)));
        let base = p.dye_dissipation.value();
        assert!(
            lo < base && hi > base && hi - lo > 1.0,
            "{lo}..{hi} round {base}"
        );
        let mid = 0.5 * (lo + hi);
        let ups: Vec<f32> = (61..180)
            .filter(|&i| seen[i - 1] < mid && seen[i] >= mid)
            .map(|i| i as f32 * dt)
            .collect();
        assert!(ups.len() >= 3, "{ups:?}");
        for w in ups.windows(2) {
            assert!((w[1] - w[0] - 0.5).abs() < 1.5 * dt, "{ups:?}");
        }
        // Without the route the input holds still.
        p.modulation.write().routes.clear();
        let mut still = Vec::new();
        for _ in 0..30 {
            d.step(&mut m, &p, dt);
            still.push(d.last_input().dye_dissipation);
        }
        assert!((still[29] - base).abs() < 1e-3, "{}", still[29]);
    }

    /// Set parameters as a preset of today's state version does.
    fn set(p: &DyeflowParams, params: &str) {
        let json = format!(
            r#"{{"params": {{{params}}}, "fields": {{"state-version": "{}"}}}}"#,
            crate::params::STATE_VERSION
        );
        crate::preset::apply(json.as_bytes(), p).expect("applies");
    }

    /// The grid fluid on the CPU, small.
    fn grid() -> crate::sim::grid::model::GridModel {
        let cpu = crate::sim::grid::cpu::CpuSolver::new(&crate::sim::SimConfig::new(64, 36), 1)
            .expect("solver threads");
        crate::sim::grid::model::GridModel::new(Box::new(cpu))
    }

    fn cc(cc: u8, value: f32) -> TimedEvent {
        TimedEvent {
            time_s: 0.0,
            event: SimEvent::ControlChange {
                channel: 0,
                cc,
                value,
            },
        }
    }

    /// A steady route lets the knobs settle (the engine may rest), a CC that moves its source
    /// unsettles them until they glide there, and an LFO's route never settles.
    #[test]
    fn modulation_settles_when_steady_and_wakes_when_moved() {
        use crate::params::modulation::{Modulation, Route, Source};
        let p = DyeflowParams::default();
        *p.modulation.write() = Modulation {
            routes: vec![Route {
                source: Source::Cc(20),
                target: "vort".into(),
                depth: 0.5,
            }],
            ..Default::default()
        };
        let mut d = Driver::new(&p);
        let mut m = grid();
        let settle = |d: &mut Driver, m: &mut dyn Model| {
            for i in 0..600 {
                if d.settled(&p) {
                    return i;
                }
                d.step(m, &p, 1.0 / 60.0);
            }
            panic!("never settled");
        };
        settle(&mut d, &mut m);
        d.event(&mut m, &cc(20, 1.0));
        assert!(!d.settled(&p), "the CC moved the route's source");
        assert!(settle(&mut d, &mut m) > 1, "it glides there");
        let k = Knobs::NAMES.iter().position(|n| *n == "vorticity").unwrap();
        assert!(d.modulator.offsets(&p)[k] > 0.49);
        assert!(d.settled(&p), "a steady route stays settled");
        p.modulation.write().routes.push(Route {
            source: Source::Lfo(0),
            target: "hue".into(),
            depth: 0.1,
        });
        for _ in 0..120 {
            d.step(&mut m, &p, 1.0 / 60.0);
            assert!(!d.settled(&p), "an LFO keeps moving its knob");
        }
    }

    /// The adaptive dye reads the dye above the background: a new instance with a bright
    /// background and a few notes takes no action (every pixel is lit, none by dye), nor does
    /// the 3D liquid, whose sky and floor fill its frames; a frame full of dye still acts.
    #[test]
    fn adaptive_dye_reads_the_dye_not_the_background() {
        let p = DyeflowParams::default();
        set(&p, r#""bg_bright": 0.5"#);
        let mut d = Driver::new(&p);
        let mut m = grid();
        let (w, h) = (96, 54);
        let mut rgba = vec![0u8; w * h * 4];
        for i in 0..90 {
            if i % 30 == 0 {
                d.event(
                    &mut m,
                    &TimedEvent {
                        time_s: 0.0,
                        event: SimEvent::Splat(Splat {
                            pos: [0.9, 0.3],
                            radius: 0.03,
                            color: [1.0, 0.3, 0.1],
                            amount: 1.0,
                            ..Splat::default()
                        }),
                    },
                );
            }
            d.step(&mut m, &p, 1.0 / 30.0);
            m.render(&d.look(), w, h, &mut rgba);
            d.observe_frame(&rgba, (w, h), &p, &m);
        }
        let lit = rgba
            .chunks_exact(4)
            .filter(|px| super::super::adaptive::luma8(px) > super::super::adaptive::LIT)
            .count();
        assert!(lit * 10 > rgba.len() / 4 * 9, "the background is lit");
        assert_eq!(d.adaptive(), (0.0, 1.0), "no action on a bright background");
        // A frame of white on it is full.
        let white = vec![255u8; w * h * 4];
        for _ in 0..30 {
            d.step(&mut m, &p, 1.0 / 30.0);
            d.observe_frame(&white, (w, h), &p, &m);
        }
        assert!(d.adaptive().0 > 1.0, "{:?}", d.adaptive());
        // The 3D liquid: its frames are not read.
        let mut liquid =
            crate::sim::liquid3d::model::Liquid3dModel::new((32, 18), 1, 800).expect("a model");
        let mut d = Driver::new(&DyeflowParams::default());
        for _ in 0..30 {
            d.step(&mut liquid, &p, 1.0 / 30.0);
            d.observe_frame(&white, (w, h), &p, &liquid);
        }
        assert_eq!(d.adaptive(), (0.0, 1.0));
    }

    /// The adaptive dye's clock is the music's, not the fluid's: at speed 4 with a frame a
    /// second (a render at 1 fps) it holds its action between the frames it reads.
    #[test]
    fn adaptive_dye_holds_between_slow_frames_at_any_speed() {
        let p = DyeflowParams::default();
        set(&p, r#""speed": 4"#);
        let mut d = Driver::new(&p);
        let mut m = grid();
        let white = vec![255u8; 32 * 18 * 4];
        for _ in 0..5 {
            for _ in 0..30 {
                d.step(&mut m, &p, 1.0 / 30.0);
            }
            d.observe_frame(&white, (32, 18), &p, &m);
        }
        for _ in 0..30 {
            d.step(&mut m, &p, 1.0 / 30.0);
        }
        let (fade, gain) = d.adaptive();
        assert!(
            fade > 5.0 && gain < 0.65,
            "released between frames: {fade} {gain}"
        );
    }

    /// MIDI learn: with a parameter waiting, the next CC heard is learned for it (a CC from
    /// before does not count), sets the value the simulation sees from then on (shown to the
    /// editor), travels in presets, and is forgotten on request.
    #[test]
    fn learns_a_cc() {
        use nice_plug::prelude::Param;
        let p = DyeflowParams::default();
        let mut d = Driver::new(&p);
        let mut m = grid();
        let k = Knobs::NAMES.iter().position(|n| *n == "vorticity").unwrap();
        let base = p.vorticity.value();
        let settle = |d: &mut Driver, m: &mut dyn Model| {
            for _ in 0..600 {
                d.step(m, &p, 1.0 / 60.0);
                if d.settled(&p) {
                    return d.knobs().vorticity;
                }
            }
            panic!("never settled");
        };
        d.event(&mut m, &cc(21, 0.9));
        assert_eq!(settle(&mut d, &mut m), base, "nothing learned yet");
        p.modulation_live.arm(Some("vort"));
        d.step(&mut m, &p, 1.0 / 60.0);
        assert_eq!(p.modulation.read().learned_cc("vort"), None);
        d.event(&mut m, &cc(21, 0.8));
        d.step(&mut m, &p, 1.0 / 60.0);
        assert_eq!(p.modulation.read().learned_cc("vort"), Some(21));
        assert_eq!(p.modulation_live.learning(), None, "no longer waiting");
        let at = |v: f32| p.vorticity.preview_plain(v);
        assert!((settle(&mut d, &mut m) - at(0.8)).abs() < 1e-3 * at(1.0));
        assert!((p.modulation_live.now(k).unwrap() - 0.8).abs() < 1e-6);
        // Another CC does not move it; its own does.
        d.event(&mut m, &cc(22, 0.1));
        d.event(&mut m, &cc(21, 0.25));
        assert!((settle(&mut d, &mut m) - at(0.25)).abs() < 1e-3 * at(1.0));
        // Saved with the project's modulation, so presets carry it.
        let q = DyeflowParams::default();
        crate::preset::apply(crate::preset::to_json(&p).as_bytes(), &q).expect("applies");
        assert_eq!(q.modulation.read().learned_cc("vort"), Some(21));
        // Forgotten: the parameter's own value again, and nothing shown as modulated.
        p.modulation.write().forget("vort");
        assert!((settle(&mut d, &mut m) - base).abs() < 1e-3 * at(1.0));
        assert_eq!(p.modulation_live.now(k), None);
    }
}
