//! `cargo xtask bundle dyeflow --release` writes `target/bundled/Dyeflow.clap` and
//! `target/bundled/Dyeflow.vst3` (the bundle name comes from `bundler.toml`).
//!
//! Two things on top of nice-plug's bundler:
//! - The plugin is built without the `dyeflow` command line (`--no-default-features`): hosts
//!   never load the renderer, its MIDI, WAV, PNG and GIF code and their dependencies. Pass
//!   `--features cli` to bundle it anyway.
//! - The bundled binaries ship without debug sections: each one's symbols and line tables go
//!   to `target/bundled/symbols/<file>.debug` (keep that file with the release to turn a crash
//!   report's addresses into functions and lines), and the binary gets a `.gnu_debuglink` to
//!   it, so gdb and other debuggers find it by name. ELF binaries (Linux) with binutils'
//!   `objcopy`, the Windows GNU build's PE binaries with mingw-w64's
//!   (`x86_64-w64-mingw32-objcopy`; without it they stay whole, and it says so). Only the
//!   binaries this run wrote are touched: a bundle of another target left in
//!   `target/bundled` is not stripped twice.
//! - macOS bundles (built on a Mac, or for `--target aarch64-apple-darwin` /
//!   `x86_64-apple-darwin`) get Dyeflow's own `Info.plist` and their layout checked (`macos`),
//!   and are signed again ad hoc where `codesign` exists (a changed `Info.plist` breaks the
//!   signature nice-plug's bundler made).

mod macos;

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
    let started = std::time::SystemTime::now();
    nice_plug_xtask::main_with_args("cargo xtask", args.clone())?;
    if bundling {
        nice_plug_xtask::chdir_workspace_root()?;
        let bundled = Path::new("target/bundled");
        if !cli {
            remove_command_line_bundle(bundled)?;
        }
        split_debug_info(bundled, started)?;
        if let Some((architecture, minimum_macos)) = macos::target(&args) {
            finish_macos_bundles(bundled, started, architecture, minimum_macos)?;
        }
    }
    Ok(())
}

/// Dyeflow's `Info.plist` in every macOS bundle this run wrote, its layout checked, and an ad
/// hoc signature again where `codesign` exists.
fn finish_macos_bundles(
    bundled: &Path,
    started: std::time::SystemTime,
    architecture: &str,
    minimum_macos: &str,
) -> nice_plug_xtask::Result<()> {
    let manifest = std::fs::read_to_string("Cargo.toml")?;
    let version = macos::package_version(&manifest)
        .ok_or_else(|| std::io::Error::other("Cargo.toml: no [package] version"))?;
    for bundle in macos::fresh_bundles(bundled, started)? {
        macos::finish(&bundle, &version, architecture, minimum_macos)
            .map_err(std::io::Error::other)?;
        let signed = Command::new("codesign")
            .args(["--force", "--sign", "-"])
            .arg(&bundle)
            .status()
            .is_ok_and(|s| s.success());
        println!(
            "{}: Info.plist written, layout checked ({architecture}, macOS {minimum_macos}+), {}",
            bundle.display(),
            if signed {
                "signed ad hoc"
            } else {
                "unsigned (no codesign here: sign it on the Mac, see docs/src/guide/install.md)"
            }
        );
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

/// Move the debug sections of every plugin binary under `bundled` written since `started`
/// into `symbols/`.
fn split_debug_info(bundled: &Path, started: std::time::SystemTime) -> nice_plug_xtask::Result<()> {
    let symbols = bundled.join("symbols");
    std::fs::create_dir_all(&symbols)?;
    for binary in binaries(bundled)? {
        let fresh = std::fs::metadata(&binary)?
            .modified()
            .is_ok_and(|m| m >= started);
        if !fresh {
            continue;
        }
        let objcopy = match format(&binary) {
            Some(Format::Elf) => "objcopy",
            Some(Format::Pe) => "x86_64-w64-mingw32-objcopy",
            None => continue,
        };
        if Command::new(objcopy).arg("--version").output().is_err() {
            println!(
                "{} keeps its debug sections: {objcopy} is not installed",
                binary.display()
            );
            continue;
        }
        let name = binary
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("binary")
            .to_owned();
        let debug = symbols.join(format!("{name}.debug"));
        let before = std::fs::metadata(&binary)?.len();
        run_objcopy(objcopy, &["--only-keep-debug"], &binary, &debug)?;
        let link = format!("--add-gnu-debuglink={}", debug.display());
        run_objcopy(
            objcopy,
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

/// The plugin binaries under a bundle folder: `*.clap` files and the libraries inside
/// `*.vst3` bundles.
fn binaries(dir: &Path) -> nice_plug_xtask::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let ext = path.extension().and_then(|e| e.to_str());
        match ext {
            Some("clap") if path.is_file() && format(&path).is_some() => out.push(path),
            Some("vst3") if path.is_dir() => out.extend(binaries_in(&path)?),
            _ => {}
        }
    }
    out.sort();
    Ok(out)
}

/// Every ELF or PE file under `dir`.
fn binaries_in(dir: &Path) -> nice_plug_xtask::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            out.extend(binaries_in(&path)?);
        } else if format(&path).is_some() {
            out.push(path);
        }
    }
    Ok(out)
}

/// A binary's format, from its first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    /// Linux (and the other ELF systems).
    Elf,
    /// Windows (`MZ`, then a PE header).
    Pe,
}

fn format(path: &Path) -> Option<Format> {
    use std::io::Read;
    let mut magic = [0u8; 4];
    std::fs::File::open(path)
        .ok()?
        .read_exact(&mut magic)
        .ok()?;
    if magic == *b"\x7fELF" {
        Some(Format::Elf)
    } else if magic[..2] == *b"MZ" {
        Some(Format::Pe)
    } else {
        None
    }
}

fn run_objcopy(
    objcopy: &str,
    flags: &[&str],
    input: &Path,
    output: &Path,
) -> nice_plug_xtask::Result<()> {
    let status = Command::new(objcopy)
        .args(flags)
        .arg(input)
        .arg(output)
        .status()
        .map_err(|e| std::io::Error::other(format!("{objcopy} could not run: {e}")))?;
    if !status.success() {
        let message = format!(
            "{objcopy} {} {} failed ({status})",
            flags.join(" "),
            input.display()
        );
        return Err(std::io::Error::other(message).into());
    }
    Ok(())
}
