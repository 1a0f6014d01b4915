//! A dropped CPU solver leaves no worker thread behind: a host may unload the plugin's
//! library right after its last instance goes, and a worker still winding down in it would
//! crash the host. (One test in its own process, so no other test's solver threads count.)

use dyeflow::sim::SimConfig;
use dyeflow::sim::grid::cpu::CpuSolver;

/// Threads of this process whose name starts with `prefix` (Linux: `/proc/self/task`).
fn threads_named(prefix: &str) -> Option<usize> {
    let tasks = std::fs::read_dir("/proc/self/task").ok()?;
    Some(
        tasks
            .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
            .filter(|name| name.starts_with(prefix))
            .count(),
    )
}

#[test]
fn a_dropped_solver_has_joined_its_threads() {
    if threads_named("").is_none() {
        eprintln!("no /proc/self/task here: skipped");
        return;
    }
    for round in 0..20 {
        let solver = CpuSolver::new(&SimConfig::new(32, 32), 3).expect("a solver");
        assert_eq!(solver.threads(), 3);
        // The workers name themselves as they start: wait for all three.
        let started = std::time::Instant::now();
        while threads_named("dyeflow-cpu-") != Some(3)
            && started.elapsed() < std::time::Duration::from_secs(5)
        {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert_eq!(threads_named("dyeflow-cpu-"), Some(3), "round {round}");
        drop(solver);
        // No waiting here: the drop returns once they are gone.
        assert_eq!(threads_named("dyeflow-cpu-"), Some(0), "round {round}");
    }
}
