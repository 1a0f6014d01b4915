//! macOS bundles: nice-plug's bundler lays out `Dyeflow.clap`, `Dyeflow.vst3` (and the
//! standalone's `Dyeflow.app`) as `Contents/MacOS/Dyeflow` with a `PkgInfo` and an `Info.plist`;
//! its `Info.plist` names nice-plug as the vendor (`com.nice-plug.dyeflow`) and 1.0.0 as every
//! version. This writes Dyeflow's own (the plugin's CLAP id as the bundle identifier, the
//! package's version, the oldest macOS that Rust's target runs on) and checks each bundle's
//! layout: the executable the plist names is a Mach-O file of the target's architecture.

use std::path::{Path, PathBuf};

/// The bundles' identifiers start with the plugin's CLAP id (`src/lib.rs`).
const IDENTIFIER: &str = "app.dyeflow.dyeflow";
/// The bundles' name, as `bundler.toml` gives it to nice-plug's bundler.
const NAME: &str = "Dyeflow";

/// A macOS target's architecture and the oldest macOS its Rust standard library supports
/// (Rust 1.95: 11.0 on Apple silicon, 10.12 on Intel).
/// A universal build (`bundle-universal`): both, from 10.12.
pub fn target(args: &[String]) -> Option<(&'static str, &'static str)> {
    if args.first().is_some_and(|a| a == "bundle-universal") {
        return Some(("universal", "10.12"));
    }
    let target = args
        .iter()
        .position(|a| a == "--target")
        .and_then(|i| args.get(i + 1).map(String::as_str))
        .or_else(|| args.iter().find_map(|a| a.strip_prefix("--target=")));
    match target {
        Some("aarch64-apple-darwin") => Some(("arm64", "11.0")),
        Some("x86_64-apple-darwin") => Some(("x86_64", "10.12")),
        None if cfg!(all(target_os = "macos", target_arch = "aarch64")) => Some(("arm64", "11.0")),
        None if cfg!(all(target_os = "macos", target_arch = "x86_64")) => Some(("x86_64", "10.12")),
        _ => None,
    }
}

/// The package's version, from the workspace root's `Cargo.toml` (`[package]`'s `version`).
pub fn package_version(manifest: &str) -> Option<String> {
    let package = manifest.split("\n[package]").nth(1)?;
    let section = package.split("\n[").next()?;
    section.lines().find_map(|line| {
        let value = line.trim().strip_prefix("version")?.trim_start();
        let value = value.strip_prefix('=')?.trim();
        Some(value.trim_matches('"').to_owned())
    })
}

/// The bundles (`*.clap`, `*.vst3`, `*.app` folders) under `bundled` whose executable was
/// written since `since`.
pub fn fresh_bundles(
    bundled: &Path,
    since: std::time::SystemTime,
) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(bundled)? {
        let path = entry?.path();
        let is_bundle = path.is_dir()
            && matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("clap" | "vst3" | "app")
            );
        let executable = path.join("Contents").join("MacOS").join(NAME);
        let fresh = std::fs::metadata(&executable)
            .and_then(|m| m.modified())
            .is_ok_and(|m| m >= since);
        if is_bundle && fresh {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

/// Dyeflow's `Info.plist` for `bundle` (its kind from its extension).
pub fn info_plist(bundle: &Path, version: &str, minimum_macos: &str) -> String {
    let kind = bundle
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("clap");
    let package_type = if kind == "app" { "APPL" } else { "BNDL" };
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>CFBundleDevelopmentRegion</key>
  <string>en</string>
  <key>CFBundleExecutable</key>
  <string>{NAME}</string>
  <key>CFBundleIdentifier</key>
  <string>{IDENTIFIER}.{kind}</string>
  <key>CFBundleInfoDictionaryVersion</key>
  <string>6.0</string>
  <key>CFBundleName</key>
  <string>{NAME}</string>
  <key>CFBundleDisplayName</key>
  <string>{NAME}</string>
  <key>CFBundlePackageType</key>
  <string>{package_type}</string>
  <key>CFBundleSignature</key>
  <string>????</string>
  <key>CFBundleShortVersionString</key>
  <string>{version}</string>
  <key>CFBundleVersion</key>
  <string>{version}</string>
  <key>LSMinimumSystemVersion</key>
  <string>{minimum_macos}</string>
  <key>NSHighResolutionCapable</key>
  <true/>
</dict>
</plist>
"#
    )
}

/// The value of `key` in a flat plist dictionary of strings.
pub fn plist_value<'a>(plist: &'a str, key: &str) -> Option<&'a str> {
    let after = plist.split(&format!("<key>{key}</key>")).nth(1)?;
    let value = after.trim_start().strip_prefix("<string>")?;
    Some(&value[..value.find("</string>")?])
}

/// The CPU architecture of a Mach-O file ("arm64", "x86_64"), from its header; `None` for
/// anything else (universal binaries: "universal").
pub fn mach_o_architecture(bytes: &[u8]) -> Option<&'static str> {
    let word = |at: usize| {
        bytes
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
    };
    match word(0)? {
        // MH_MAGIC_64, little endian: the CPU type follows.
        0xfeed_facf => match word(4)? {
            0x0100_000c => Some("arm64"),
            0x0100_0007 => Some("x86_64"),
            _ => None,
        },
        // FAT_MAGIC (big endian on disk).
        0xbeba_feca => Some("universal"),
        _ => None,
    }
}

/// Write Dyeflow's `Info.plist` into `bundle` and check its layout: `Contents/PkgInfo`,
/// `Contents/Info.plist` naming the executable, and `Contents/MacOS/<that>` a Mach-O file for
/// `architecture`. The reason where it is not so.
pub fn finish(
    bundle: &Path,
    version: &str,
    architecture: &str,
    minimum_macos: &str,
) -> Result<(), String> {
    let contents = bundle.join("Contents");
    let plist = info_plist(bundle, version, minimum_macos);
    std::fs::write(contents.join("Info.plist"), &plist)
        .map_err(|e| format!("{}: {e}", contents.join("Info.plist").display()))?;
    check(bundle, architecture)
}

/// Check a macOS bundle's layout (see [`finish`]).
pub fn check(bundle: &Path, architecture: &str) -> Result<(), String> {
    let contents = bundle.join("Contents");
    let plist = std::fs::read_to_string(contents.join("Info.plist"))
        .map_err(|e| format!("{}: no Info.plist ({e})", bundle.display()))?;
    let executable = plist_value(&plist, "CFBundleExecutable")
        .ok_or_else(|| format!("{}: its Info.plist names no executable", bundle.display()))?;
    let package_type = plist_value(&plist, "CFBundlePackageType").unwrap_or("");
    let pkg_info = std::fs::read_to_string(contents.join("PkgInfo")).unwrap_or_default();
    if pkg_info != format!("{package_type}????") {
        return Err(format!(
            "{}: PkgInfo {pkg_info:?} does not match the package type {package_type:?}",
            bundle.display()
        ));
    }
    let path = contents.join("MacOS").join(executable);
    let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    match mach_o_architecture(&bytes) {
        Some(a) if a == architecture || a == "universal" => Ok(()),
        Some(a) => Err(format!("{} is for {a}, not {architecture}", path.display())),
        None => Err(format!("{} is not a Mach-O binary", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// A stand-in for the plugin's library, built for `target` without a macOS SDK: a real
    /// Mach-O dylib (linked by the LLD that ships with Rust) exporting the CLAP and VST3 entry
    /// points nice-plug's bundler looks for. The real library needs Apple's SDK to link.
    const STAND_IN: &str = r#"#![no_std]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! { loop {} }
#[unsafe(no_mangle)]
pub static clap_entry: [u8; 8] = [0; 8];
#[unsafe(no_mangle)]
pub extern "C" fn GetPluginFactory() -> *const u8 { core::ptr::null() }
"#;

    /// Build the stand-in into `out`; `false` (and a note) where Rust's target is missing and
    /// `DYEFLOW_REQUIRE_CROSS` is not 1.
    fn stand_in(target: &str, dir: &Path, out: &Path) -> bool {
        let source = dir.join("stand_in.rs");
        std::fs::write(&source, STAND_IN).unwrap();
        let output = Command::new("rustc")
            .args([
                "--edition",
                "2024",
                "--crate-type",
                "cdylib",
                "-C",
                "panic=abort",
            ])
            .args(["-C", "linker=rust-lld", "-C", "linker-flavor=ld64.lld"])
            .args(["--target", target, "-o"])
            .arg(out)
            .arg(&source)
            .output()
            .unwrap();
        if output.status.success() {
            return true;
        }
        let why = String::from_utf8_lossy(&output.stderr);
        assert!(
            std::env::var_os("DYEFLOW_REQUIRE_CROSS").is_none_or(|v| v != "1"),
            "DYEFLOW_REQUIRE_CROSS=1 but no {target} library could be built: {why}"
        );
        eprintln!("SKIPPED: no {target} library ({why}); rustup target add {target}");
        false
    }

    #[test]
    fn the_version_is_the_packages() {
        let manifest = "[workspace]\nmembers = [\"xtask\"]\n\n[package]\nname = \"dyeflow\"\n\
                        version = \"2.3.4\"\nedition = \"2024\"\n\n[dependencies]\nversion = \"9\"\n";
        assert_eq!(package_version(manifest).as_deref(), Some("2.3.4"));
        assert_eq!(package_version("[workspace]\nversion = \"1\"\n"), None);
    }

    #[test]
    fn mach_o_headers_are_told_apart() {
        let header = |magic: u32, cpu: u32| [magic.to_le_bytes(), cpu.to_le_bytes()].concat();
        assert_eq!(
            mach_o_architecture(&header(0xfeed_facf, 0x0100_000c)),
            Some("arm64")
        );
        assert_eq!(
            mach_o_architecture(&header(0xfeed_facf, 0x0100_0007)),
            Some("x86_64")
        );
        assert_eq!(mach_o_architecture(b"\x7fELF\x02\x01\x01\x00"), None);
        assert_eq!(mach_o_architecture(b"MZ"), None);
    }

    /// What `cargo xtask bundle dyeflow --release --target aarch64-apple-darwin` does after its
    /// build (nice-plug's bundler, then `finish`), on a stand-in library: `Dyeflow.clap` and
    /// `Dyeflow.vst3` laid out as a Mac wants them, with Dyeflow's Info.plist; and a bundle
    /// whose executable is missing or for the other architecture fails the check.
    #[test]
    fn macos_bundles_are_laid_out_for_a_mac() {
        let target = "aarch64-apple-darwin";
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let dir = std::env::temp_dir().join(format!("dyeflow-xtask-macos-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let built = dir.join(target).join("release");
        std::fs::create_dir_all(&built).unwrap();
        let library = built.join("libdyeflow.dylib");
        if !stand_in(target, &dir, &library) {
            return;
        }
        let started = std::time::SystemTime::now() - std::time::Duration::from_secs(1);
        // The bundler reads `bundler.toml` (the bundles' name) from the workspace's root.
        std::env::set_current_dir(root).unwrap();
        let args: Vec<String> = ["--release", "--target", target].map(String::from).to_vec();
        nice_plug_xtask::bundle(&dir, "dyeflow", &args, false).unwrap();
        let bundled = dir.join("bundled");
        let bundles = fresh_bundles(&bundled, started).unwrap();
        let names: Vec<_> = bundles
            .iter()
            .map(|b| b.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["Dyeflow.clap", "Dyeflow.vst3"]);
        let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
        let version = package_version(&manifest).unwrap();
        let (architecture, minimum) = super::target(&args).unwrap();
        assert_eq!((architecture, minimum), ("arm64", "11.0"));
        let library_bytes = std::fs::read(&library).unwrap();
        for (bundle, kind) in bundles.iter().zip(["clap", "vst3"]) {
            finish(bundle, &version, architecture, minimum).unwrap();
            let contents = bundle.join("Contents");
            let mut entries: Vec<_> = std::fs::read_dir(&contents)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            entries.sort();
            assert_eq!(
                entries,
                ["Info.plist", "MacOS", "PkgInfo"],
                "{}",
                bundle.display()
            );
            assert_eq!(
                std::fs::read(contents.join("MacOS/Dyeflow")).unwrap(),
                library_bytes
            );
            assert_eq!(
                std::fs::read_to_string(contents.join("PkgInfo")).unwrap(),
                "BNDL????"
            );
            let plist = std::fs::read_to_string(contents.join("Info.plist")).unwrap();
            let identifier = format!("app.dyeflow.dyeflow.{kind}");
            for (key, value) in [
                ("CFBundleExecutable", "Dyeflow"),
                ("CFBundleIdentifier", identifier.as_str()),
                ("CFBundlePackageType", "BNDL"),
                ("CFBundleShortVersionString", version.as_str()),
                ("CFBundleVersion", version.as_str()),
                ("LSMinimumSystemVersion", "11.0"),
            ] {
                assert_eq!(plist_value(&plist, key), Some(value), "{key} in {plist}");
            }
            // Well formed: every tag closed, one dictionary.
            assert_eq!(
                plist.matches("<key>").count(),
                plist.matches("</key>").count()
            );
            assert_eq!(plist.matches("<dict>").count(), 1);
            assert!(plist.trim_end().ends_with("</plist>"));
        }

        // The check fails where it should: the other architecture, no executable.
        let clap = &bundles[0];
        let err = check(clap, "x86_64").unwrap_err();
        assert!(err.contains("is for arm64"), "{err}");
        std::fs::remove_file(clap.join("Contents/MacOS/Dyeflow")).unwrap();
        let err = check(clap, "arm64").unwrap_err();
        assert!(err.contains("MacOS"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
