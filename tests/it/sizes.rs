//! The house's room sizes, checked on the source: no file over 1000 lines (Rust and WGSL,
//! tests included), and a file of `src/` over 800 lines says in its header why it is long.

use crate::layout::all_sources;
use std::path::Path;

/// The files of `src/` longer than 800 lines (tests apart) whose header (the leading `//!`
/// lines) does not say why in a paragraph starting "Why this file is long:".
fn long_files_without_a_reason(files: &[(String, String)]) -> Vec<String> {
    files
        .iter()
        .filter(|(rel, text)| !rel.ends_with("tests.rs") && text.lines().count() > 800)
        .filter(|(_, text)| {
            !text
                .lines()
                .take_while(|l| l.starts_with("//!"))
                .any(|l| l.contains("Why this file is long:"))
        })
        .map(|(rel, text)| format!("src/{rel}: {} lines", text.lines().count()))
        .collect()
}

#[test]
fn a_file_over_800_lines_says_why() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut raw = Vec::new();
    for (rel, _) in all_sources() {
        let text = std::fs::read_to_string(root.join(&rel)).unwrap();
        raw.push((rel, text));
    }
    let found = long_files_without_a_reason(&raw);
    assert!(found.is_empty(), "{found:#?}");
    let long = "fn f() {}\n".repeat(801);
    let planted = vec![
        ("sim/long.rs".to_string(), format!("//! A pass.\n{long}")),
        (
            "sim/said.rs".to_string(),
            format!("//! A pass.\n//!\n//! Why this file is long: it is.\n{long}"),
        ),
    ];
    assert_eq!(
        long_files_without_a_reason(&planted),
        ["src/sim/long.rs: 802 lines"]
    );
}

/// Most lines a source file may have (Rust and WGSL, tests included).
const MAX_FILE_LINES: usize = 1000;

/// The files under `dir` (relative to the crate) ending in one of `exts`, with their line
/// counts, deepest folders included.
fn line_counts(dir: &str, exts: &[&str]) -> Vec<(String, usize)> {
    fn walk(root: &Path, dir: &Path, exts: &[&str], out: &mut Vec<(String, usize)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, exts, out);
            } else if exts
                .iter()
                .any(|e| path.extension().is_some_and(|x| x == *e))
            {
                let lines = std::fs::read_to_string(&path).unwrap().lines().count();
                let rel = path.strip_prefix(root).unwrap().display().to_string();
                out.push((rel, lines));
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    walk(root, &root.join(dir), exts, &mut out);
    out
}

/// The files over [`MAX_FILE_LINES`] among `counts`.
fn too_long(counts: &[(String, usize)]) -> Vec<String> {
    counts
        .iter()
        .filter(|(_, n)| *n > MAX_FILE_LINES)
        .map(|(rel, n)| format!("{rel}: {n} lines"))
        .collect()
}

#[test]
fn no_source_file_is_over_1000_lines() {
    let mut counts = line_counts("src", &["rs"]);
    counts.extend(line_counts("tests", &["rs"]));
    counts.extend(line_counts("shaders", &["wgsl"]));
    counts.extend(line_counts("xtask", &["rs"]));
    assert!(counts.len() > 100, "found only {} files", counts.len());
    let found = too_long(&counts);
    assert!(found.is_empty(), "{found:#?}");
    let planted = [
        ("src/a.rs".to_string(), 1000),
        ("src/b.rs".to_string(), 1001),
    ];
    assert_eq!(too_long(&planted), ["src/b.rs: 1001 lines"]);
}
