//! The `dyeflow` command line.

use clap::{Args, Parser, Subcommand, ValueEnum};
use dyeflow::bench::{self, BenchOptions, BenchResult};
use dyeflow::params::BackendChoice;
use dyeflow::sim::PressureMethod;
use dyeflow::sim::gpu::GpuOptions;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "dyeflow", version, about = "Dyeflow: music in, fluid out")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Backend {
    Cpu,
    Gpu,
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
    Bench(BenchArgs),
}

#[derive(Args)]
struct BenchArgs {
    /// Solver backend.
    #[arg(long, value_enum, default_value = "cpu")]
    backend: Backend,
    /// Grid size N (N x N cells; with --latency, the height of a 16:9 grid); a
    /// comma-separated list runs each. Default: 512, or 256 with --latency.
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..=8192))]
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
    /// CPU worker threads (default: one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Dye cells per simulation cell, per axis.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=4))]
    dye_scale: u32,
    /// Behave as if there were no GPU (checks the error path).
    #[arg(long, hide = true)]
    no_gpu: bool,
    /// Print one JSON object per run instead of a table row.
    #[arg(long)]
    json: bool,
    /// Measure instead the latency from a note-on entering the audio thread to the first
    /// published frame showing its dye, through the real simulation thread.
    #[arg(long)]
    latency: bool,
    /// Notes timed by --latency.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    trials: u32,
}

fn print_row(r: &BenchResult) {
    let frame = r.frame_ms.map_or("-".to_owned(), |f| format!("{f:.3}"));
    println!(
        "{:>8} {:>6} {:>7} {:>5} {:>7} {:>10.3} {:>9.3} {:>14.3e} {:>12.4} {:>12.4} {:>9}",
        r.backend,
        r.size,
        r.pressure,
        r.iters,
        r.threads,
        r.ms_per_step,
        r.ms_p90,
        r.cell_iters_per_s,
        r.residual_max,
        r.residual_rms,
        frame
    );
    if let Some(a) = &r.adapter {
        println!("         on {a}; step timed by {}", r.timer);
    }
}

fn latency(args: &BenchArgs) -> ExitCode {
    let gpu = GpuOptions {
        force_no_adapter: args.no_gpu,
    };
    let sizes = if args.size.is_empty() {
        vec![256]
    } else {
        args.size.clone()
    };
    for size in sizes {
        let opts = bench::LatencyOptions {
            size: size as usize,
            backend: match args.backend {
                Backend::Cpu => BackendChoice::Cpu,
                Backend::Gpu => BackendChoice::Gpu,
            },
            trials: args.trials as usize,
            gpu: gpu.clone(),
        };
        let r = bench::run_latency(&opts);
        if args.json {
            println!("{}", serde_json::to_string(&r).expect("plain struct"));
        } else {
            println!(
                "{} ({}), {}x{} grid at {} Hz, {} frames: note to screen p50 {:.2} ms, \
                 p99 {:.2} ms (min {:.2}, max {:.2}) over {} notes, {} missed",
                r.backend,
                r.device,
                size * 16 / 9,
                size,
                r.sim_rate_hz,
                r.frame,
                r.latency_p50_ms,
                r.latency_p99_ms,
                r.latency_min_ms,
                r.latency_max_ms,
                r.trials,
                r.missed
            );
        }
        if r.missed > 0 {
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

fn bench(args: BenchArgs) -> ExitCode {
    if args.latency {
        return latency(&args);
    }
    let sizes = if args.size.is_empty() {
        vec![512]
    } else {
        args.size.clone()
    };
    if !args.json {
        println!(
            "{:>8} {:>6} {:>7} {:>5} {:>7} {:>10} {:>9} {:>14} {:>12} {:>12} {:>9}",
            "backend",
            "size",
            "method",
            "iters",
            "threads",
            "ms/step",
            "p90 ms",
            "cell-iter/s",
            "resid max",
            "resid rms",
            "frame ms"
        );
    }
    let gpu = GpuOptions {
        force_no_adapter: args.no_gpu,
    };
    for &size in &sizes {
        for &iters in &args.iters {
            let opts = BenchOptions {
                size: size as usize,
                iters,
                pressure: args.pressure.into(),
                steps: args.steps as usize,
                threads: args.threads,
                dye_scale: args.dye_scale as usize,
            };
            let r = match args.backend {
                Backend::Cpu => bench::run_cpu(&opts),
                Backend::Gpu => match bench::run_gpu(&opts, &gpu) {
                    Ok(r) => r,
                    Err(e) => {
                        eprintln!("dyeflow bench: cannot run on the GPU: {e}.");
                        return ExitCode::from(2);
                    }
                },
            };
            if args.json {
                println!("{}", serde_json::to_string(&r).expect("plain struct"));
            } else {
                print_row(&r);
            }
        }
    }
    ExitCode::SUCCESS
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Bench(args) => bench(args),
    }
}
