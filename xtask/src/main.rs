//! `cargo xtask bundle dyeflow --release` writes `target/bundled/Dyeflow.clap` and
//! `target/bundled/Dyeflow.vst3` (the bundle name comes from `bundler.toml`).
//!
//! Two things on top of nice-plug's bundler:
//! - The plugin is built without the `dyeflow` command line (`--no-default-features`): hosts
//!   never load the renderer, its MIDI, WAV, PNG and GIF code and their dependencies. Pass
//!   `--features cli` to bundle it anyway.
//! - On Linux the bundled binaries ship without debug sections: each one's symbols and line
//!   tables go to `target/bundled/symbols/<file>.debug` (keep that file with the release to
//!   turn a crash report's addresses into functions and lines), and the binary gets a
//!   `.gnu_debuglink` to it, so gdb and other debuggers find it by name.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() -> nice_plug_xtask::Result<()> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let bundling = args
        .first()
        .is_some_and(|a| a == "bundle" || a == "bundle-universal");
    let cli = args.iter().any(|a| a.contains("cli"));
    if bundling && !cli && !args.iter().any(|a| a == "--no-default-features") {
        args.push("--no-default-features".to_owned());
    }
    nice_plug_xtask::main_with_args("cargo xtask", args)?;
    if bundling {
        nice_plug_xtask::chdir_workspace_root()?;
        let bundled = Path::new("target/bundled");
        if !cli {
            remove_command_line_bundle(bundled)?;
        }
        if cfg!(target_os = "linux") {
            split_debug_info(bundled)?;
        }
    }
    Ok(())
}

/// nice-plug's bundler also "bundles" an executable of the package that it finds in the target
/// directory as a standalone app: without the `cli` feature that can only be a stale `dyeflow`
/// command from an earlier build, so it goes.
fn remove_command_line_bundle(bundled: &Path) -> nice_plug_xtask::Result<()> {
    for name in ["Dyeflow", "Dyeflow.exe", "Dyeflow.app"] {
        let path = bundled.join(name);
        if path.is_dir() {
            std::fs::remove_dir_all(&path)?;
        } else if path.is_file() {
            std::fs::remove_file(&path)?;
        }
    }
    Ok(())
}

/// Move the debug sections of every bundled ELF binary under `bundled` into `symbols/`.
fn split_debug_info(bundled: &Path) -> nice_plug_xtask::Result<()> {
    let symbols = bundled.join("symbols");
    std::fs::create_dir_all(&symbols)?;
    for binary in elf_files(bundled)? {
        let name = binary
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("binary")
            .to_owned();
        let debug = symbols.join(format!("{name}.debug"));
        let before = std::fs::metadata(&binary)?.len();
        objcopy(&["--only-keep-debug"], &binary, &debug)?;
        let link = format!("--add-gnu-debuglink={}", debug.display());
        objcopy(
            &["--strip-debug", "--strip-unneeded", &link],
            &binary,
            &binary,
        )?;
        let after = std::fs::metadata(&binary)?.len();
        println!(
            "Stripped {}: {:.1} MB -> {:.1} MB (symbols in {})",
            binary.display(),
            before as f64 / 1e6,
            after as f64 / 1e6,
            debug.display()
        );
    }
    Ok(())
}

/// The plugin binaries the bundler just wrote: `*.clap` files and the ELF libraries inside
/// `*.vst3` bundles.
fn elf_files(dir: &Path) -> nice_plug_xtask::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let ext = path.extension().and_then(|e| e.to_str());
        match ext {
            Some("clap") if path.is_file() && is_elf(&path) => out.push(path),
            Some("vst3") if path.is_dir() => out.extend(elf_in(&path)?),
            _ => {}
        }
    }
    out.sort();
    Ok(out)
}

/// Every ELF file under `dir`.
fn elf_in(dir: &Path) -> nice_plug_xtask::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            out.extend(elf_in(&path)?);
        } else if is_elf(&path) {
            out.push(path);
        }
    }
    Ok(out)
}

fn is_elf(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 4];
    std::fs::File::open(path).is_ok_and(|mut f| f.read_exact(&mut magic).is_ok())
        && magic == *b"\x7fELF"
}

fn objcopy(flags: &[&str], input: &Path, output: &Path) -> nice_plug_xtask::Result<()> {
    let status = Command::new("objcopy")
        .args(flags)
        .arg(input)
        .arg(output)
        .status()
        .map_err(|e| std::io::Error::other(format!("objcopy (binutils) could not run: {e}")))?;
    if !status.success() {
        let message = format!(
            "objcopy {} {} failed ({status})",
            flags.join(" "),
            input.display()
        );
        return Err(std::io::Error::other(message).into());
    }
    Ok(())
}
