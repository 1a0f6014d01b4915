//! Paths of outputs: the file a name leads to (through symbolic links), whether an output
//! would be one of the run's inputs, the temporary names beside an output (within the file
//! system's name limit whatever the output's name), moving a finished file into place, and the
//! directories an output makes (and removes again when nothing was written).

use super::*;

#[cfg(all(test, unix))]
mod tests;

/// Most symbolic links followed from an output's name (Linux's own limit, `MAXSYMLINKS`).
const MAX_LINKS: usize = 40;

/// Where a file output is written: `path` itself, or, when it is a symbolic link, the file it
/// points to (through every link, however many), so that a re-render into a link replaces the
/// file the link names and keeps the link, as a shell's `>` does. A link to nowhere yet is
/// written where it points.
///
/// # Errors
/// [`RenderError::Output`] for a loop of links (or more than [`MAX_LINKS`]) or a link that
/// cannot be read.
pub fn through_links(path: &Path) -> Result<PathBuf, RenderError> {
    let mut here = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&here) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = fs::read_link(&here).map_err(|e| {
                    RenderError::output(path, format!("could not read the link: {e}"))
                })?;
                here = match here.parent() {
                    Some(parent) if target.is_relative() => parent.join(target),
                    _ => target,
                };
            }
            _ => return Ok(here),
        }
    }
    Err(RenderError::output(
        path,
        format!("it is a loop of symbolic links (or more than {MAX_LINKS} in a row)"),
    ))
}

/// What identifies a file whatever its names (hard links, symbolic links): its device and
/// inode on unix, its volume and file index elsewhere. `None` when there is no such file.
fn identity(path: &Path) -> Option<FileIdentity> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // metadata, not open: a FIFO is looked at without waiting for a writer.
        fs::metadata(path)
            .ok()
            .map(|m| FileIdentity(m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        same_file::Handle::from_path(path).ok().map(FileIdentity)
    }
}

#[cfg(unix)]
#[derive(PartialEq, Eq)]
struct FileIdentity(u64, u64);
#[cfg(not(unix))]
#[derive(PartialEq, Eq)]
struct FileIdentity(same_file::Handle);

/// Refuses an output that would write over one of the run's `inputs` (each named with the
/// option that gave it, such as `("--audio", path)`), by identity, not by name: a hard link or
/// a symbolic link to an input is that input. For a file output, the file it would replace
/// (through its links); for PNG frames, the files the render writes in its directory (frames,
/// its marker, a generated audio file named `sidecar`). Looks only, so it runs before anything
/// is written.
///
/// # Errors
/// [`UsageError::OutputIsInput`] naming the input.
pub fn refuse_inputs(
    kind: &OutputKind,
    out: &Path,
    sidecar: Option<&str>,
    inputs: &[(&'static str, &Path)],
) -> Result<(), RenderError> {
    let clash = |option: &'static str, input: &Path| {
        RenderError::from(UsageError::OutputIsInput {
            output: out.to_owned(),
            option,
            input: input.to_owned(),
        })
    };
    match kind {
        OutputKind::PngSequence => {
            let Some(dir) = identity(out) else {
                return Ok(());
            };
            for &(option, input) in inputs {
                // Where the input really is: its directory and name, through any links.
                let Ok(real) = fs::canonicalize(input) else {
                    continue;
                };
                let (Some(parent), Some(name)) = (real.parent(), real.file_name()) else {
                    continue;
                };
                let name = name.to_string_lossy();
                let written = png::frame_index(&name).is_some()
                    || name == RENDER_MARKER
                    || sidecar.is_some_and(|s| s == name);
                if written && identity(parent).is_some_and(|p| p == dir) {
                    return Err(clash(option, input));
                }
            }
        }
        OutputKind::Gif | OutputKind::Video { .. } => {
            let Some(output) = identity(out) else {
                return Ok(());
            };
            for &(option, input) in inputs {
                if identity(input).is_some_and(|i| i == output) {
                    return Err(clash(option, input));
                }
            }
        }
    }
    Ok(())
}

/// Random characters in a temporary name.
const TEMP_RANDOM_CHARS: usize = 6;
/// The suffix of a temporary file.
const TEMP_SUFFIX: &str = ".part";
/// What [`temp_beside`] adds to the output's name: two dots, the random part, the suffix.
const TEMP_NAME_EXTRA_BYTES: usize = 2 + TEMP_RANDOM_CHARS + TEMP_SUFFIX.len();

/// The longest file name (bytes) the file system of `dir` takes: `pathconf`'s answer on
/// unix, else (or when it has none) 255, the limit of ext4, XFS, APFS, tmpfs and NTFS.
fn name_max(dir: &Path) -> usize {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        if let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) {
            // SAFETY: pathconf reads the NUL-terminated path it is given and nothing else.
            let max = unsafe { libc::pathconf(c.as_ptr(), libc::_PC_NAME_MAX) };
            if let Ok(max) = usize::try_from(max)
                && max > TEMP_NAME_EXTRA_BYTES
            {
                return max;
            }
        }
    }
    let _ = dir;
    255
}

/// `text` cut to at most `bytes` bytes, at a character's boundary.
fn cut_at_char(text: &str, bytes: usize) -> &str {
    if text.len() <= bytes {
        return text;
    }
    let mut end = bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// A new, empty temporary file beside `path` (same directory, so renaming it into place is
/// atomic), hidden and named after it: `.name.XXXXXX.part`. It is removed if dropped before
/// it is persisted.
pub(super) fn temp_beside(path: &Path) -> Result<tempfile::NamedTempFile, RenderError> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map_or_else(|| "output".into(), |n| n.to_string_lossy().into_owned());
    // The name fits the file system's limit whatever the output's (which may take all of it):
    // the output's name is cut to leave room for the dots, the random part and the suffix.
    let room = name_max(dir).saturating_sub(TEMP_NAME_EXTRA_BYTES);
    let prefix = format!(".{}.", cut_at_char(&name, room));
    let mut builder = tempfile::Builder::new();
    builder
        .prefix(&prefix)
        .rand_bytes(TEMP_RANDOM_CHARS)
        .suffix(TEMP_SUFFIX);
    // tempfile makes its files 0600; an output is the user's file like any other, made as
    // `File::create` makes one: 0666 less the umask (which the system applies to this mode).
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    builder
        .tempfile_in(dir)
        .map_err(|e| RenderError::output(path, format!("could not create the file: {e}")))
}

/// Give `new`, about to replace `old`, the permissions `old` has (when it is a file), so a
/// re-render keeps the mode the user gave the output.
pub(super) fn keep_mode(new: &Path, old: &Path) -> io::Result<()> {
    match fs::metadata(old) {
        Ok(meta) if meta.is_file() => fs::set_permissions(new, meta.permissions()),
        _ => Ok(()),
    }
}

/// Move a finished temporary file from [`temp_beside`] into place at `path` (an atomic rename,
/// replacing an earlier output only now, whose mode it keeps).
pub(super) fn persist_beside(
    part: tempfile::NamedTempFile,
    path: &Path,
) -> Result<(), RenderError> {
    keep_mode(part.path(), path).map_err(|e| {
        RenderError::output(path, format!("could not give the new file its mode: {e}"))
    })?;
    part.persist(path).map(drop).map_err(|e| {
        RenderError::output(
            path,
            format!(
                "could not rename {} to it: {}",
                e.file.path().display(),
                e.error
            ),
        )
    })
}

/// Directories an output made, deepest first, so they can be removed again when nothing was
/// written into them.
#[derive(Debug, Default)]
pub(super) struct MadeDirs(Vec<PathBuf>);

impl MadeDirs {
    /// Remove the directories that are still empty.
    pub(super) fn remove_empty(&mut self) {
        for dir in self.0.drain(..) {
            if fs::remove_dir(&dir).is_err() {
                break;
            }
        }
    }

    /// Runs `start`, the rest of an output's setup; if it fails, removes these directories
    /// again (those still empty once what `start` made in them is dropped).
    pub(super) fn undo_on_error<T>(
        &mut self,
        start: impl FnOnce() -> Result<T, RenderError>,
    ) -> Result<T, RenderError> {
        let started = start();
        if started.is_err() {
            self.remove_empty();
        }
        started
    }
}

/// Creates a directory and its parents; errors name `path`, the output. Returns the
/// directories it made.
pub(super) fn create_dir(dir: &Path, path: &Path) -> Result<MadeDirs, RenderError> {
    let named = |a: &Path| {
        if a == path {
            "it".to_string()
        } else {
            a.display().to_string()
        }
    };
    // The directories missing, deepest first, up to the first one there.
    let mut made = Vec::new();
    for a in dir.ancestors().filter(|a| !a.as_os_str().is_empty()) {
        match fs::metadata(a) {
            Ok(meta) if meta.is_dir() => break,
            Ok(_) => {
                return Err(RenderError::output(
                    path,
                    format!("{} exists and is not a directory", named(a)),
                ));
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if fs::symlink_metadata(a).is_ok() {
                    return Err(RenderError::output(
                        path,
                        format!(
                            "{} is a symbolic link to a place that does not exist",
                            named(a)
                        ),
                    ));
                }
                made.push(a.to_path_buf());
            }
            // A loop of symbolic links, a directory that may not be searched, ...
            Err(e) => {
                return Err(RenderError::output(
                    path,
                    format!("{} cannot be reached: {e}", named(a)),
                ));
            }
        }
    }
    match fs::create_dir_all(dir) {
        Ok(()) => Ok(MadeDirs(made)),
        Err(e) => Err(RenderError::output(
            path,
            format!("could not create the directory {}: {e}", dir.display()),
        )),
    }
}

/// Creates the parent directory of an output file; the directories it made.
pub(super) fn create_parent(path: &Path) -> Result<MadeDirs, RenderError> {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => create_dir(parent, path),
        _ => Ok(MadeDirs::default()),
    }
}
