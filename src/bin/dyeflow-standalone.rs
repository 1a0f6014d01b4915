//! Dyeflow without a DAW: nice-plug's standalone wrapper around the plugin, with the same
//! editor. Audio comes from JACK, ALSA or a dummy backend (`--backend`), MIDI from JACK or a
//! connected device (`--midi-input`). `--help` lists every option.

fn main() -> std::process::ExitCode {
    if nice_plug::prelude::nice_export_standalone::<dyeflow::Dyeflow>() {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    }
}
