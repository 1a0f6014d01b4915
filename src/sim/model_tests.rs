//! What the models' tests share: a note's splat, and sources and steps no model may be harmed
//! by (each model's test feeds them and checks its own state stays finite and bounded).

use crate::fluid::{Liquid, Splat, SplatShape};
use crate::sim::StepInput;

/// A note's splat at `x` across the canvas (0.6 up), in `color`, pushing up.
pub fn note(x: f32, color: [f32; 3]) -> Splat {
    Splat {
        pos: [x, 0.6],
        radius: 0.05,
        color,
        amount: 1.0,
        force: [0.0, 0.5],
        ..Splat::default()
    }
}

/// A shock: a splat without dye at `pos`, pushing along `force`.
pub fn shock(pos: [f32; 2], force: [f32; 2]) -> Splat {
    Splat {
        pos,
        radius: 0.05,
        force,
        amount: 0.0,
        ..Splat::default()
    }
}

/// Broken sources: a place that is not a number, an infinite amount, huge sizes and forces,
/// and a radial shock with an infinite force.
pub fn broken_splats() -> Vec<Splat> {
    let n = note(0.5, [1.0; 3]);
    vec![
        Splat {
            pos: [f32::NAN, 0.5],
            ..n
        },
        Splat {
            amount: f32::INFINITY,
            ..n
        },
        Splat {
            radius: 1e30,
            amount: 1e30,
            force: [1e30, -1e30],
            ..n
        },
        Splat {
            shape: SplatShape::Radial,
            amount: 0.0,
            force: [f32::INFINITY, 0.0],
            ..n
        },
    ]
}

/// Broken steps: lengths that are not a number, negative, huge, then a frame's, each with
/// broken liquid knobs and a particle budget of `budget`.
pub fn broken_steps(budget: u32) -> Vec<StepInput> {
    [f32::NAN, -1.0, 1e9, 1.0 / 60.0]
        .into_iter()
        .map(|dt| StepInput {
            dt,
            liquid: Liquid {
                drag: f32::NAN,
                gravity: [f32::NAN, 1e30],
                stiffness: f32::INFINITY,
                near: f32::NAN,
                viscosity: -1.0,
                bounce: f32::INFINITY,
                budget,
                floaters: u32::MAX,
            },
            ..StepInput::default()
        })
        .collect()
}
