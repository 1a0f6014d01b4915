//! What the command line's tests share: running `dyeflow`, a small fast render of the demo,
//! signals to a child.

use std::process::{Command, Output, Stdio};

/// `dyeflow`, with no standard input.
pub fn dyeflow() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_dyeflow"));
    c.stdin(Stdio::null());
    c
}

/// (exit code, stdout, stderr) of a finished run.
pub fn summary(out: &Output) -> (i32, String, String) {
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A small, fast CPU render of the demo into `out`.
pub fn small_demo<'a>(out: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "render",
        "--backend",
        "cpu",
        "--size",
        "64x36",
        "--fps",
        "10",
        "--sim",
        "128",
        "--quiet",
        "--out",
        out,
    ];
    args.extend_from_slice(extra);
    args
}

/// Send `signal` to a child.
#[cfg(unix)]
pub fn signal(child: &std::process::Child, signal: libc::c_int) {
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(child.id() as libc::pid_t, signal) };
}
