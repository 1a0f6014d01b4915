//! `cargo xtask bundle dyeflow --release` writes `target/bundled/Dyeflow.clap` and
//! `target/bundled/Dyeflow.vst3` (the bundle name comes from `bundler.toml`).

fn main() -> nice_plug_xtask::Result<()> {
    nice_plug_xtask::main()
}
