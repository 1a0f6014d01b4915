//! The grid step's stages recorded into a command encoder: one method per stage, each in
//! labelled compute passes ([`GpuSolver::encode_step`] calls them in the algorithm's order).

use super::*;

impl GpuSolver {
    /// The projection's start: close the solid faces (the forces may have opened them), the
    /// divergence, and the right-hand side (mean-free per fluid region around obstacles); for
    /// Jacobi and red-black, the warm start's scaling.
    pub(super) fn encode_project_divergence(&self, d: &mut Dispatcher) {
        let (reduce, vel, ob) = (&self.reduce, self.vel, &self.obstacles);
        ob.encode_close(d, vel);
        self.divergence.encode(d, reduce, vel, Norms::Before);
        if ob.solids().is_some() {
            ob.encode_rhs(d);
        } else {
            self.divergence.encode_subtract_mean(d);
        }
        if self.cfg.pressure != PressureMethod::Multigrid {
            self.pressure.encode_warm_start(d, reduce);
        }
    }

    /// `iterations` of the pressure solve (V-cycles or sweeps). Run one after the other, they
    /// continue each other exactly, as one call with their sum does.
    pub(super) fn encode_project_solve(&self, d: &mut Dispatcher, iterations: u32) {
        match self.cfg.pressure {
            PressureMethod::Jacobi => self.pressure.encode_jacobi(d, iterations),
            PressureMethod::RbGs => self.multigrid.encode_rb_sor(d, iterations),
            PressureMethod::Multigrid => self.multigrid.encode_v_cycles(d, iterations),
        }
    }

    /// The projection's end: subtract the pressure's gradient and close the solid faces (the
    /// gradient across one is meaningless).
    pub(super) fn encode_project_gradient(&self, d: &mut Dispatcher) {
        let vel = self.vel;
        self.gradient.encode(d, &self.reduce, vel);
        self.obstacles.encode_close(d, vel);
    }

    /// Upload this step's parameters (and, when `splats`, the queued splats).
    pub(super) fn prepare(&mut self, p: &StepInput, splats: bool) -> GridUniforms {
        if splats {
            self.emit_particles(p);
            let h = self.cfg.height;
            let list: Vec<GpuSplat> = self
                .pending
                .drain(..)
                .filter_map(|s| CellSplat::new(&s, h))
                .map(|c| GpuSplat::from(&c))
                .collect();
            self.splat_heat = list.iter().any(|s| s.heat != 0.0);
            self.heated |= self.splat_heat;
            self.splat.upload(&self.ctx.queue, &list);
            self.splat_count = list.len() as u32;
        }
        let gp = GridUniforms::step(&self.cfg, p, if splats { self.splat_count } else { 0 });
        let queue = &self.ctx.queue;
        queue.write_buffer(&self.buf.uniforms, 0, bytemuck::bytes_of(&gp));
        self.diffuse
            .write(queue, &gp, p.viscosity > 0.0, p.dye_diffusion > 0.0);
        // The compressibility test needs this step's trace length.
        self.compressibility.write_k(queue, gp.k);
        gp
    }

    /// The whole step, one line per stage (see [`Stage`]), each pass in its labelled compute
    /// pass: the splats, then, when time passes, the forces, the projection and the transport.
    pub(super) fn encode_step(&mut self, e: &mut wgpu::CommandEncoder, p: &StepInput) {
        self.encode_apply_splats(e);
        if p.dt == 0.0 {
            return;
        }
        self.encode_add_buoyancy(e, p);
        self.encode_confine_vorticity(e, p);
        self.encode_diffuse_velocity(e, p);
        self.encode_project(e);
        self.encode_advect_dye(e);
        self.encode_move_particles(e, p);
        self.encode_diffuse_dye(e, p);
        self.encode_advect_velocity(e);
        self.encode_check_compressibility(e);
    }

    /// Encode one stage (diagnostics and stage-by-stage parity tests).
    pub(super) fn encode_stage(
        &mut self,
        e: &mut wgpu::CommandEncoder,
        stage: Stage,
        p: &StepInput,
    ) {
        match stage {
            Stage::ApplySplats => self.encode_apply_splats(e),
            Stage::AddBuoyancy => self.encode_add_buoyancy(e, p),
            Stage::ConfineVorticity => self.encode_confine_vorticity(e, p),
            Stage::DiffuseVelocity => self.encode_diffuse_velocity(e, p),
            Stage::Project => self.encode_project(e),
            Stage::AdvectDye => self.encode_advect_dye(e),
            Stage::MoveParticles => self.encode_move_particles(e, p),
            Stage::DiffuseDye => self.encode_diffuse_dye(e, p),
            Stage::AdvectVelocity => self.encode_advect_velocity(e),
            Stage::CheckCompressibility => self.encode_check_compressibility(e),
        }
    }

    /// [`Stage::ApplySplats`]: the queued splats into velocity, dye and heat; a splat inside a solid
    /// does nothing. With none queued, three full-grid passes are skipped (the dye's is the
    /// largest buffer).
    pub(super) fn encode_apply_splats(&mut self, encoder: &mut wgpu::CommandEncoder) {
        if self.splat_count == 0 {
            return;
        }
        let (vel, dye) = (self.vel, self.dye);
        let mut d = self.pass(encoder, Stage::ApplySplats.label());
        self.splat.encode(&mut d, vel, dye);
        if self.splat_heat {
            self.splat.encode_heat(&mut d, self.heat);
        }
        self.obstacles.encode_close(&mut d, vel);
        self.obstacles.encode_clear(&mut d, dye);
    }

    /// [`Stage::AddBuoyancy`]: the lift of heat and the weight of dye (when either is on).
    pub(super) fn encode_add_buoyancy(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        p: &StepInput,
    ) {
        if !p.lifts() {
            return;
        }
        let mut d = self.pass(encoder, Stage::AddBuoyancy.label());
        self.buoyancy.encode(&mut d, self.vel, self.heat, self.dye);
        self.obstacles.encode_close(&mut d, self.vel);
    }

    /// [`Stage::ConfineVorticity`]: the curl, then the confinement force (when on).
    pub(super) fn encode_confine_vorticity(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        p: &StepInput,
    ) {
        if p.vorticity <= 0.0 {
            return;
        }
        self.curl.encode(
            &mut self.pass(encoder, "grid.confine_vorticity.curl"),
            self.vel,
        );
        self.vorticity.encode(
            &mut self.pass(encoder, "grid.confine_vorticity.confine"),
            self.vel,
        );
    }

    /// [`Stage::DiffuseVelocity`]: implicit viscous diffusion of the velocity (when on).
    pub(super) fn encode_diffuse_velocity(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        p: &StepInput,
    ) {
        if p.viscosity <= 0.0 {
            return;
        }
        let vel = self.vel;
        self.diffuse.keep_velocity(encoder, &self.buf, vel);
        let mut d = self.pass(encoder, Stage::DiffuseVelocity.label());
        self.vel = self
            .diffuse
            .encode_velocity(&mut d, vel, self.cfg.diffusion_iterations);
    }

    /// [`Stage::Project`]: divergence, the pressure solve with the extra iterations the last
    /// compressibility check chose (zero-sized dispatches otherwise: no readback, no stall),
    /// the gradient's subtraction; the divergence after it when measuring.
    pub(super) fn encode_project(&mut self, encoder: &mut wgpu::CommandEncoder) {
        // Two passes (the same dispatches in the same order as one), so the bench's `passes`
        // table tells the divergence from the solve.
        self.encode_project_divergence(&mut self.pass(encoder, "grid.project.divergence"));
        self.encode_project_solve(
            &mut self.pass(encoder, "grid.project.solve"),
            self.cfg.pressure_iterations,
        );
        let (pass, counter) = self.begin(encoder, "grid.project.extra_solve", None);
        let args = self.compressibility.args();
        let extra = extra_iterations(self.cfg.pressure, self.cfg.pressure_iterations);
        self.encode_project_solve(
            &mut Dispatcher::indirect(pass, args).counted(counter),
            extra,
        );
        // They serve one projection.
        encoder.clear_buffer(self.compressibility.args(), 0, None);
        self.encode_project_gradient(&mut self.pass(encoder, "grid.project.gradient"));
        if self.measure {
            let mut d = self.pass(encoder, "grid.project.measure");
            self.divergence
                .encode(&mut d, &self.reduce, self.vel, Norms::After);
        }
    }

    /// [`Stage::AdvectDye`]: the dye (and the heat with it) through the projected velocity.
    /// How far this step's traces reach decides which cells near solids are advected again
    /// without sampling the solids.
    pub(super) fn encode_advect_dye(&mut self, encoder: &mut wgpu::CommandEncoder) {
        let (vel, dye) = (self.vel, self.dye);
        let mut d = self.pass(encoder, Stage::AdvectDye.label());
        self.obstacles.encode_speed(&mut d, &self.reduce, vel);
        self.dye = self.advect.encode_dye(&mut d, vel, dye);
        self.obstacles.encode_clear(&mut d, self.dye);
        if self.heated {
            self.heat = self.advect.encode_heat(&mut d, vel, self.heat);
        }
    }

    /// [`Stage::MoveParticles`]: the particles through the velocity (when any may be alive).
    pub(super) fn encode_move_particles(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        p: &StepInput,
    ) {
        if !self.spawner.alive() {
            return;
        }
        if let Some(pp) = &self.particles {
            pp.encode_advect(
                &mut self.pass(encoder, Stage::MoveParticles.label()),
                self.vel,
            );
        }
        self.spawner.advance(p.dt);
    }

    /// [`Stage::DiffuseDye`]: implicit diffusion of the dye (when on).
    pub(super) fn encode_diffuse_dye(&mut self, encoder: &mut wgpu::CommandEncoder, p: &StepInput) {
        if p.dye_diffusion <= 0.0 {
            return;
        }
        let dye = self.dye;
        self.diffuse.keep_dye(encoder, &self.buf, dye);
        let mut d = self.pass(encoder, Stage::DiffuseDye.label());
        self.dye = self
            .diffuse
            .encode_dye(&mut d, dye, self.cfg.diffusion_iterations);
        self.obstacles.encode_clear(&mut d, self.dye);
    }

    /// [`Stage::AdvectVelocity`]: semi-Lagrangian self-advection, dissipation fused.
    pub(super) fn encode_advect_velocity(&mut self, encoder: &mut wgpu::CommandEncoder) {
        let mut d = self.pass(encoder, Stage::AdvectVelocity.label());
        self.vel = self.advect.encode_velocity(&mut d, self.vel);
        self.obstacles.encode_close(&mut d, self.vel);
    }

    /// [`Stage::CheckCompressibility`]: decided on the GPU, into the next projection's extra
    /// dispatches.
    pub(super) fn encode_check_compressibility(&mut self, encoder: &mut wgpu::CommandEncoder) {
        let mut d = self.pass(encoder, Stage::CheckCompressibility.label());
        let (reduce, divergence) = (&self.reduce, &self.divergence);
        self.compressibility
            .encode(&mut d, reduce, divergence, self.vel);
    }
}
