//! The particle fluid on the CPU: the particles ([`super::Fluid`]) stepped with rayon, the
//! obstacles' collisions, and their light ([`light`]: the particles drawn into a field of light
//! for the display's picture); a [`FluidBackend`] for the model.

pub(crate) mod light;

use crate::display::cpu::colorize::Source;
use crate::display::cpu::picture::Picture;
use crate::fluid::ColorMode;
use crate::sim::sph::backend::{FluidBackend, FrameJob};
use crate::sim::sph::shared::{
    empty_activity, light_look, light_size, liquid_activity, rest_speed,
};
use crate::sim::sph::solids::Solids;
use crate::sim::sph::sources::Action;
use crate::sim::sph::{Fluid, Knobs};
use crate::sim::{Activity, CpuError};
use light::Light;

/// The particle fluid on the CPU.
pub struct CpuFluid {
    fluid: Fluid,
    pool: rayon::ThreadPool,
    /// The obstacles the particles collide with.
    solids: Option<Solids>,
    picture: Picture,
    /// The liquid's light.
    light: Light,
    /// Zero velocity faces for the colour stage's source.
    still: Vec<f32>,
    /// The particles (serial number and place, by serial number) at the last probe.
    probe: Vec<(u64, [f32; 2])>,
}

impl CpuFluid {
    /// `fluid` on `threads` workers (0: one per core).
    pub fn new(fluid: Fluid, threads: usize) -> Result<Self, CpuError> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("dyeflow-sph-{i}"))
            .build()
            .map_err(|source| CpuError::Threads { threads, source })?;
        Ok(Self {
            fluid,
            pool,
            solids: None,
            picture: Picture::default(),
            light: Light::default(),
            still: Vec::new(),
            probe: Vec::new(),
        })
    }

    /// The worker threads.
    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }
}

impl FluidBackend for CpuFluid {
    fn len(&self) -> usize {
        self.fluid.len()
    }

    fn fluid(&mut self) -> &Fluid {
        &self.fluid
    }

    fn set_fluid(&mut self, mut fluid: Fluid) {
        fluid.births = fluid.births.max(self.fluid.births);
        self.fluid = fluid;
    }

    fn act(&mut self, actions: &[Action], budget: usize) {
        let fluid = &mut self.fluid;
        self.pool.install(|| fluid.act(actions, budget));
    }

    fn step(&mut self, knobs: &Knobs, dt: f32, steps: usize) {
        let (fluid, solids) = (&mut self.fluid, self.solids.as_ref());
        self.pool.install(|| {
            for _ in 0..steps {
                fluid.step(knobs, dt);
                if let Some(solids) = solids {
                    solids.collide(fluid, dt, knobs.wall_bounce);
                }
            }
        });
    }

    fn set_solids(&mut self, solids: Option<Solids>) {
        self.solids = solids;
    }

    fn render(&mut self, job: &FrameJob, out: &mut [u8]) {
        let look = job.look;
        let size = light_size(self.fluid.size(), job.model_rows, look.liquid, job.height);
        self.light.draw(
            (&self.fluid, job.target_density),
            size,
            look.liquid,
            look.color_mode == ColorMode::VelocityHue,
            &self.pool,
        );
        let (w, h) = size;
        let planes = &self.light.planes;
        let src = Source::dye(w, h, &mut self.still, [&planes[0], &planes[1], &planes[2]]);
        let (picture, look) = (&mut self.picture, light_look(look));
        self.pool
            .install(|| picture.render(&src, &look, job.width, job.height, out));
    }

    /// The liquid's speed from its particles' places now and at the last probe.
    fn probe(&mut self, tag: u64, seconds: &mut f32) -> Option<(u64, Activity)> {
        if self.fluid.is_empty() {
            self.probe.clear();
            return Some((tag, empty_activity()));
        }
        let f = &self.fluid;
        let mut now: Vec<(u64, [f32; 2])> =
            f.birth.iter().copied().zip(f.pos.iter().copied()).collect();
        now.sort_unstable_by_key(|x| x.0);
        let speed = rest_speed(&now, &self.probe, std::mem::take(seconds));
        self.probe = now;
        Some((tag, liquid_activity(speed)))
    }
}
