//! The `dyeflow` command line.

use clap::{Parser, Subcommand, ValueEnum};
use dyeflow::bench::{self, BenchOptions};
use dyeflow::sim::PressureMethod;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "dyeflow", version, about = "Dyeflow: music in, fluid out")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum Backend {
    Cpu,
}

#[derive(Clone, Copy, ValueEnum)]
enum Pressure {
    /// Jacobi iterations.
    Jacobi,
    /// Red-black Gauss-Seidel sweeps.
    Rbgs,
    /// Multigrid V-cycles.
    Mg,
}

impl From<Pressure> for PressureMethod {
    fn from(p: Pressure) -> Self {
        match p {
            Pressure::Jacobi => PressureMethod::Jacobi,
            Pressure::Rbgs => PressureMethod::RbGs,
            Pressure::Mg => PressureMethod::Multigrid,
        }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Time the solver on a fixed scene (a centre block of dye and force for 20 steps, then
    /// free flow) and report ms/step and the divergence left after projection.
    Bench {
        /// Solver backend.
        #[arg(long, value_enum, default_value = "cpu")]
        backend: Backend,
        /// Grid size N (N x N cells); a comma-separated list runs each.
        #[arg(long, value_delimiter = ',', default_value = "512",
              value_parser = clap::value_parser!(u32).range(1..=8192))]
        size: Vec<u32>,
        /// Pressure iterations: sweeps for jacobi and rbgs, V-cycles for mg; a list runs each.
        #[arg(long, value_delimiter = ',', default_value = "20",
              value_parser = clap::value_parser!(u32).range(1..=10000))]
        iters: Vec<u32>,
        /// Pressure solver.
        #[arg(long, value_enum, default_value = "rbgs")]
        pressure: Pressure,
        /// Steps to time.
        #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
        steps: u32,
        /// Worker threads (default: one per core).
        #[arg(long, default_value_t = 0)]
        threads: usize,
        /// Dye cells per simulation cell, per axis.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=4))]
        dye_scale: u32,
        /// Print one JSON object per run instead of a table row.
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Bench {
            backend: Backend::Cpu,
            size,
            iters,
            pressure,
            steps,
            threads,
            dye_scale,
            json,
        } => {
            if !json {
                println!(
                    "{:>8} {:>6} {:>7} {:>5} {:>7} {:>10} {:>9} {:>14} {:>12} {:>12}",
                    "backend",
                    "size",
                    "method",
                    "iters",
                    "threads",
                    "ms/step",
                    "p90 ms",
                    "cell-iter/s",
                    "resid max",
                    "resid rms"
                );
            }
            for &size in &size {
                for &iters in &iters {
                    let r = bench::run_cpu(&BenchOptions {
                        size: size as usize,
                        iters,
                        pressure: pressure.into(),
                        steps: steps as usize,
                        threads,
                        dye_scale: dye_scale as usize,
                    });
                    if json {
                        println!("{}", serde_json::to_string(&r).expect("plain struct"));
                    } else {
                        println!(
                            "{:>8} {:>6} {:>7} {:>5} {:>7} {:>10.3} {:>9.3} {:>14.3e} {:>12.4} {:>12.4}",
                            r.backend,
                            r.size,
                            r.pressure,
                            r.iters,
                            r.threads,
                            r.ms_per_step,
                            r.ms_p90,
                            r.cell_iters_per_s,
                            r.residual_max,
                            r.residual_rms
                        );
                    }
                }
            }
            ExitCode::SUCCESS
        }
    }
}
