//! Where Dyeflow keeps the user's own files (presets saved from the editor, bounce captures): a
//! `Dyeflow` folder where the platform keeps a user's documents.
//!
//! | platform | folder |
//! |---|---|
//! | Windows | the Documents known folder (wherever the user moved it, OneDrive included), `Documents\Dyeflow` |
//! | macOS | `~/Documents/Dyeflow` |
//! | Linux and the others | `~/Dyeflow` (where it always was: saved presets and captures stay found) |
//!
//! Without a documents folder, `~/Dyeflow` everywhere; without a home, none (the callers say
//! so). This room imports nothing of ours.

use std::path::{Path, PathBuf};

/// The platforms whose conventions differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Platform {
    Windows,
    MacOs,
    /// Linux and every other.
    Other,
}

impl Platform {
    /// The platform this was built for.
    pub const fn current() -> Self {
        if cfg!(windows) {
            Self::Windows
        } else if cfg!(target_os = "macos") {
            Self::MacOs
        } else {
            Self::Other
        }
    }
}

/// The user's Dyeflow folder on `platform`, from its home and documents folders.
pub fn dyeflow_dir_for(
    platform: Platform,
    home: Option<&Path>,
    documents: Option<&Path>,
) -> Option<PathBuf> {
    let base = match (platform, documents) {
        (Platform::Windows | Platform::MacOs, Some(documents)) => documents,
        _ => home?,
    };
    Some(base.join("Dyeflow"))
}

/// The user's home folder.
fn home() -> Option<PathBuf> {
    #[cfg(any(windows, target_os = "macos"))]
    return dirs::home_dir();
    #[cfg(not(any(windows, target_os = "macos")))]
    return std::env::home_dir();
}

/// The user's documents folder where the platform has one Dyeflow uses (Windows, macOS).
fn documents() -> Option<PathBuf> {
    #[cfg(any(windows, target_os = "macos"))]
    return dirs::document_dir();
    #[cfg(not(any(windows, target_os = "macos")))]
    return None;
}

/// The user's Dyeflow folder here (see the module's table).
pub fn dyeflow_dir() -> Option<PathBuf> {
    dyeflow_dir_for(
        Platform::current(),
        home().as_deref(),
        documents().as_deref(),
    )
}

/// Where the editor saves presets and its Presets menu reads them: `presets` in
/// [`dyeflow_dir`].
pub fn presets() -> Option<PathBuf> {
    dyeflow_dir().map(|d| d.join("presets"))
}

/// Where bounce captures go unless told otherwise: `captures` in [`dyeflow_dir`].
pub fn captures() -> Option<PathBuf> {
    dyeflow_dir().map(|d| d.join("captures"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_platform_keeps_its_users_files_where_its_users_look() {
        let home = Path::new("/home/ada");
        let docs = Path::new("/home/ada/OneDrive/Documents");
        let dir = |p, h, d| dyeflow_dir_for(p, h, d);
        assert_eq!(
            dir(Platform::Windows, Some(home), Some(docs)),
            Some(docs.join("Dyeflow"))
        );
        assert_eq!(
            dir(Platform::MacOs, Some(home), Some(docs)),
            Some(docs.join("Dyeflow"))
        );
        // Linux keeps ~/Dyeflow, even with a documents folder.
        assert_eq!(
            dir(Platform::Other, Some(home), Some(docs)),
            Some(home.join("Dyeflow"))
        );
        // No documents folder: the home's; no home either: none.
        assert_eq!(
            dir(Platform::Windows, Some(home), None),
            Some(home.join("Dyeflow"))
        );
        assert_eq!(dir(Platform::MacOs, None, None), None);
        assert_eq!(dir(Platform::Other, None, Some(docs)), None);
    }

    #[test]
    fn here_presets_and_captures_share_the_dyeflow_folder() {
        let Some(dir) = dyeflow_dir() else {
            return;
        };
        assert_eq!(presets(), Some(dir.join("presets")));
        assert_eq!(captures(), Some(dir.join("captures")));
        #[cfg(target_os = "linux")]
        assert_eq!(Some(dir), std::env::home_dir().map(|h| h.join("Dyeflow")));
    }
}
