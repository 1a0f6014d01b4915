//! Where the 3D liquid's particles live and step: on the CPU ([`Liquid`] itself) or on the GPU
//! ([`super::gpu::GpuLiquid`]). The model ([`super::model::Liquid3dModel`]) drives either
//! through [`LiquidBackend`]: every frame's sources as [`Action`]s and its steps go to the
//! backend; what is seldom (a new pool, a new budget, a snapshot) edits the particles as a
//! [`Liquid`], which the GPU reads back and sends again.

use super::floaters::Floater;
use super::sources::Action;
use super::{Knobs, Liquid};
use crate::display::cpu::raymarch::Quality;
use crate::display::volume::Scene;
use crate::fluid::Look;
use crate::gpu::GpuError;

/// What a frame shows, besides the particles.
pub struct FrameView<'a> {
    pub look: &'a Look,
    pub scene: &'a Scene,
    /// The voxel asked for, m, and the particles per m³ of the liquid at rest.
    pub voxel: f32,
    pub target_density: f32,
    /// The frame's size, and how the ray march trades quality for time.
    pub size: (usize, usize),
    pub quality: Quality,
    /// The floaters' colours (their places are the GPU's).
    pub colours: &'a [[f32; 3]],
}

/// The particles' home (see the module's header). Calls run inside the model's thread pool.
pub trait LiquidBackend: Send {
    /// "cpu" or "gpu".
    fn name(&self) -> &'static str;

    /// Particles now.
    fn len(&self) -> usize;

    /// No particles.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The tank's size, m.
    fn size(&self) -> [f32; 3];

    /// The particles as they are now (the GPU reads them back after a change, waiting for it).
    fn liquid(&mut self) -> &Liquid;

    /// The particles, to edit (the GPU reads them back first and sends them again before its
    /// next step).
    fn liquid_mut(&mut self) -> &mut Liquid;

    /// The floaters as last known (on the GPU: as last read back, which the activity probe
    /// does every quarter second while playing, and [`LiquidBackend::refresh_floaters`] once a
    /// frame; their number is always the current one).
    fn floaters(&self) -> &[Floater];

    /// Bring the floaters' places up to date as far as is known without waiting (the GPU's:
    /// from a copy made after its last step, read back once it has landed).
    fn refresh_floaters(&mut self) {}

    /// Give floater `i` `share` of `colour` (the picture's, not the physics').
    fn tint_floater(&mut self, i: usize, colour: [f32; 3], share: f32);

    /// Carry out `actions` in order, keeping at most `budget` particles (the newest).
    fn act(&mut self, actions: &[Action], budget: usize);

    /// `steps` steps of `dt` seconds with `knobs`, each followed by the drag: the velocities
    /// times `keep`.
    fn step(&mut self, knobs: &Knobs, dt: f32, keep: f32, steps: usize);

    /// What made the backend unusable, once something did.
    fn failure(&self) -> Option<GpuError>;

    /// Wait for the work queued (the GPU's; the CPU's is done when its calls return).
    fn wait(&mut self) {}

    /// Time each step on the device from now (`on`), for benches: the GPU's timestamps.
    fn time_steps(&mut self, _on: bool) {}

    /// The device times of the steps timed since the last call, ms (none on the CPU, or
    /// without timestamps).
    fn take_step_times(&mut self) -> Vec<f64> {
        Vec::new()
    }

    /// Whether it draws the picture itself, on its device (the GPU's: see
    /// [`LiquidBackend::encode_frame`]); otherwise the model draws it on the CPU from
    /// [`LiquidBackend::liquid`].
    fn draws(&self) -> bool {
        false
    }

    /// Encode a frame of the particles seen in `view` on the backend's device and submit it;
    /// its serial, or `None` (a frame skipped, a failed device, a backend that does not draw).
    fn encode_frame(&mut self, _view: &FrameView) -> Option<u64> {
        None
    }

    /// Wait for frame `serial` and copy it into `out` (RGBA8 of `size`, rows top first; zeros
    /// when it did not come back).
    fn finish_frame(&mut self, _serial: u64, _look: &Look, _size: (usize, usize), out: &mut [u8]) {
        out.fill(0);
    }

    /// Copy the newest finished frame into `out` without waiting; its size.
    fn collect_frame(&mut self, _out: &mut Vec<u8>) -> Option<(usize, usize)> {
        None
    }

    /// Wait for the device and drop every frame in flight (before a frame rendered at once).
    fn settle_frames(&mut self) {}
}

impl LiquidBackend for Liquid {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn len(&self) -> usize {
        self.pos.len()
    }

    fn size(&self) -> [f32; 3] {
        self.size
    }

    fn liquid(&mut self) -> &Liquid {
        self
    }

    fn floaters(&self) -> &[Floater] {
        &self.floaters
    }

    fn tint_floater(&mut self, i: usize, colour: [f32; 3], share: f32) {
        if let Some(f) = self.floaters.get_mut(i) {
            f.tint(colour, share);
        }
    }

    fn liquid_mut(&mut self) -> &mut Liquid {
        self
    }

    fn act(&mut self, actions: &[Action], budget: usize) {
        self.particles.act(actions, budget);
    }

    fn step(&mut self, knobs: &Knobs, dt: f32, keep: f32, steps: usize) {
        for _ in 0..steps {
            self.step_kept(knobs, dt, keep);
            if keep < 1.0 {
                for f in &mut self.floaters {
                    f.vel = f.vel.map(|c| c * keep);
                }
            }
        }
    }

    fn failure(&self) -> Option<GpuError> {
        None
    }
}
