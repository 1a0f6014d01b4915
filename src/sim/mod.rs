//! The fluid simulation: configuration, solvers and the grids they share.

pub mod config;
