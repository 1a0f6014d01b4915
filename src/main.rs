//! The `dyeflow` command: everything is in the library's `cli` module.

fn main() -> std::process::ExitCode {
    dyeflow::cli::main()
}
