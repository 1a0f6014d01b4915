//! Every relative link in README.md and the manual (`docs/`, an mdBook) resolves: the file it
//! names exists, and its `#anchor`, if any, is a heading of that file (or of the same file for
//! `[..](#anchor)`). Images count as links. External links (`http:`, `https:`, `mailto:`) are
//! not followed: this test needs no network and no mdbook binary.
//!
//! Heading ids follow mdBook's rule (mdbook-html 0.5, `id_from_content`), which is GitHub's for
//! the headings we write: the heading's text without its markup, lowercased, letters, digits,
//! `_` and `-` kept, whitespace turned into `-`, everything else dropped; a repeated id gets
//! `-1`, `-2`, ... So `## On a hardware GPU (NVIDIA H200, 2026-11-26)` is
//! `#on-a-hardware-gpu-nvidia-h200-2026-11-26`.
//!
//! Also checked, since mdBook would otherwise build a book with holes: every page under
//! `docs/src/` is listed in `SUMMARY.md`, and a page of the book links to Markdown only inside
//! the book (mdBook turns such links into `.html` links, which exist only for its own pages).

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

/// The manual's source folder (`book.toml`'s `src`), relative to the repository.
const BOOK_SRC: &str = "docs/src";

/// The Markdown files checked: README.md and every `.md` under `docs/` but the built book.
fn markdown_files(root: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                // mdBook's output (`docs/book`, gitignored) is not ours to check.
                if path.file_name().is_some_and(|n| n == "book") {
                    continue;
                }
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let mut files = vec![root.join("README.md")];
    walk(&root.join("docs"), &mut files);
    files
}

/// `text` with fenced code blocks and inline code spans blanked out (spaces; newlines kept, so
/// offsets still give line numbers): links and headings inside code are not links or headings.
fn blank_code(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    // Fenced blocks first, line by line.
    let mut fence: Option<(char, usize)> = None;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let marker = trimmed.chars().next().filter(|c| *c == '`' || *c == '~');
        let run = marker.map_or(0, |c| trimmed.chars().take_while(|x| *x == c).count());
        let blank = match fence {
            Some((c, n)) => {
                if marker == Some(c) && run >= n && trimmed[run..].trim().is_empty() {
                    fence = None;
                }
                true
            }
            None if run >= 3 => {
                fence = Some((marker.unwrap(), run));
                true
            }
            None => false,
        };
        if blank {
            out.extend(line.chars().map(|c| if c == '\n' { '\n' } else { ' ' }));
        } else {
            out.push_str(line);
        }
    }
    // Then code spans: a run of backticks up to the next run of the same length, within a
    // paragraph (not across a blank line).
    let chars: Vec<char> = out.chars().collect();
    let mut result = chars.clone();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            i += 1;
            continue;
        }
        let run = chars[i..].iter().take_while(|c| **c == '`').count();
        let mut j = i + run;
        let mut close = None;
        while j < chars.len() {
            if chars[j] == '\n' && chars.get(j + 1) == Some(&'\n') {
                break;
            }
            if chars[j] == '`' {
                let r = chars[j..].iter().take_while(|c| **c == '`').count();
                if r == run {
                    close = Some(j + r);
                    break;
                }
                j += r;
            } else {
                j += 1;
            }
        }
        match close {
            Some(end) => {
                for c in &mut result[i..end] {
                    if *c != '\n' {
                        *c = ' ';
                    }
                }
                i = end;
            }
            None => i += run,
        }
    }
    result.into_iter().collect()
}

/// The id mdBook (and GitHub) gives a heading whose text, markup removed, is `text`.
fn slug(text: &str) -> String {
    text.trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                Some(c)
            } else if c.is_whitespace() {
                Some('-')
            } else {
                None
            }
        })
        .collect()
}

/// A heading's text as rendered: links become their text, code loses its backticks, emphasis
/// its asterisks, HTML its tags.
fn heading_text(raw: &str) -> String {
    let mut text = String::new();
    let chars: Vec<char> = raw.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            // `[text](target)` and `![alt](src)`: keep the text.
            '!' if chars.get(i + 1) == Some(&'[') => i += 1,
            '[' | ']' => {
                if chars[i] == ']' && chars.get(i + 1) == Some(&'(') {
                    i = chars[i..]
                        .iter()
                        .position(|c| *c == ')')
                        .map_or(chars.len(), |p| i + p + 1);
                    continue;
                }
                i += 1;
            }
            '<' => {
                i = chars[i..]
                    .iter()
                    .position(|c| *c == '>')
                    .map_or(chars.len(), |p| i + p + 1);
            }
            '`' | '*' => i += 1,
            c => {
                text.push(c);
                i += 1;
            }
        }
    }
    text
}

/// The anchors a Markdown file defines: its headings' ids (mdBook's numbering of repeats) and
/// any `<a id="...">` or `<a name="...">`.
fn anchors(text: &str) -> HashSet<String> {
    let mut ids = HashSet::new();
    let blanked = blank_code(text);
    for (line, visible) in text.lines().zip(blanked.lines()) {
        let t = visible.trim_start();
        let hashes = t.chars().take_while(|c| *c == '#').count();
        // An ATX heading: 1-6 `#` then a space, not indented as code; in the original line,
        // since the heading's own code spans count for its id.
        if (1..=6).contains(&hashes)
            && t[hashes..].starts_with([' ', '\t'])
            && visible.len() - t.len() < 4
        {
            let raw = line.trim_start()[hashes..].trim();
            let raw = raw.trim_end_matches('#').trim_end();
            let base = slug(&heading_text(raw));
            let mut id = base.clone();
            let mut n = 0;
            while !ids.insert(id.clone()) {
                n += 1;
                id = format!("{base}-{n}");
            }
        }
        for key in ["id=\"", "name=\""] {
            let mut rest = visible;
            while let Some(p) = rest.find(key) {
                rest = &rest[p + key.len()..];
                if let Some(end) = rest.find('"') {
                    ids.insert(rest[..end].to_string());
                }
            }
        }
    }
    ids
}

/// A link found in a file: its line (1-based) and its target as written.
struct Link {
    line: usize,
    target: String,
}

/// Every inline link and image (`[..](target)`, `![..](target)`) and every reference
/// definition (`[label]: target`) outside code.
fn links(text: &str) -> Vec<Link> {
    let visible = blank_code(text);
    let mut out = Vec::new();
    let line_of = |offset: usize| visible[..offset].matches('\n').count() + 1;
    let mut from = 0;
    while let Some(p) = visible[from..].find("](") {
        let start = from + p + 2;
        let rest = &visible[start..];
        let target = if let Some(inner) = rest.strip_prefix('<') {
            inner.split('>').next().unwrap_or("")
        } else {
            // Up to the closing parenthesis (balanced) or a space before a title.
            let mut depth = 0;
            let mut end = rest.len();
            for (k, c) in rest.char_indices() {
                match c {
                    '(' => depth += 1,
                    ')' if depth == 0 => {
                        end = k;
                        break;
                    }
                    ')' => depth -= 1,
                    c if c.is_whitespace() => {
                        end = k;
                        break;
                    }
                    _ => {}
                }
            }
            &rest[..end]
        };
        out.push(Link {
            line: line_of(start),
            target: target.to_string(),
        });
        from = start;
    }
    let mut offset = 0;
    for line in visible.split_inclusive('\n') {
        let t = line.trim_start();
        if t.starts_with('[')
            && let Some(close) = t.find("]:")
            && !t[1..close].contains(']')
        {
            let target = t[close + 2..].split_whitespace().next().unwrap_or("");
            out.push(Link {
                line: line_of(offset),
                target: target.trim_matches(['<', '>']).to_string(),
            });
        }
        offset += line.len();
    }
    out
}

/// `path` with `.` and `..` taken out, without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// `%20` and friends, as a browser reads a link.
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = s.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Every problem with the links of `files` (paths under `root`), one line each, naming the
/// file, the line and the link.
fn check(root: &Path, files: &[PathBuf]) -> Vec<String> {
    let mut problems = Vec::new();
    let rel = |p: &Path| {
        p.strip_prefix(root)
            .unwrap_or(p)
            .to_string_lossy()
            .into_owned()
    };
    let book_src = root.join(BOOK_SRC);
    for file in files {
        let text = match std::fs::read_to_string(file) {
            Ok(t) => t,
            Err(e) => {
                problems.push(format!("{}: cannot be read: {e}", rel(file)));
                continue;
            }
        };
        let in_book = file.starts_with(&book_src);
        for link in links(&text) {
            let at = format!("{}:{}: link `{}`", rel(file), link.line, link.target);
            let target = link.target.as_str();
            if target.is_empty() {
                problems.push(format!("{at}: empty target"));
                continue;
            }
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target, None),
            };
            let path = percent_decode(path);
            if path.starts_with('/') {
                problems.push(format!(
                    "{at}: an absolute path; write it relative to the file"
                ));
                continue;
            }
            let dest = if path.is_empty() {
                file.clone()
            } else {
                normalize(&file.parent().unwrap().join(&path))
            };
            if !dest.exists() {
                problems.push(format!("{at}: no such file {}", rel(&dest)));
                continue;
            }
            let is_md = dest.extension().is_some_and(|e| e == "md");
            if in_book && is_md && !dest.starts_with(&book_src) {
                problems.push(format!(
                    "{at}: a page of the book links to Markdown outside {BOOK_SRC}/, \
                     which mdBook does not render"
                ));
            }
            let Some(anchor) = anchor else { continue };
            if !is_md {
                problems.push(format!(
                    "{at}: an anchor into {}, which is not Markdown",
                    rel(&dest)
                ));
                continue;
            }
            let dest_text = std::fs::read_to_string(&dest).unwrap_or_default();
            let ids = anchors(&dest_text);
            let anchor = percent_decode(anchor);
            if !ids.contains(&anchor) {
                let mut known: Vec<&String> = ids.iter().collect();
                known.sort();
                problems.push(format!(
                    "{at}: no heading with id `{anchor}` in {} (its ids: {})",
                    rel(&dest),
                    known
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
    }
    problems
}

/// Pages under the book's source folder that `SUMMARY.md` does not list (mdBook leaves them
/// out of the book).
fn unlisted_pages(root: &Path, files: &[PathBuf]) -> Vec<String> {
    let src = root.join(BOOK_SRC);
    let summary_path = src.join("SUMMARY.md");
    let Ok(summary) = std::fs::read_to_string(&summary_path) else {
        return vec![format!("{BOOK_SRC}/SUMMARY.md: missing")];
    };
    let listed: HashSet<PathBuf> = links(&summary)
        .iter()
        .map(|l| normalize(&src.join(l.target.split('#').next().unwrap())))
        .collect();
    files
        .iter()
        .filter(|f| f.starts_with(&src) && **f != summary_path && !listed.contains(*f))
        .map(|f| {
            format!(
                "{}: not listed in {BOOK_SRC}/SUMMARY.md, so not in the book",
                f.strip_prefix(root).unwrap().display()
            )
        })
        .collect()
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = markdown_files(root);
    assert!(
        files.len() > 10,
        "expected README.md and the manual's pages, found {files:?}"
    );
    let mut problems = check(root, &files);
    problems.extend(unlisted_pages(root, &files));
    assert!(
        problems.is_empty(),
        "{} broken link(s) in README.md and docs/:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn the_book_has_its_config_and_summary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = std::fs::read_to_string(root.join("docs/book.toml")).expect("docs/book.toml");
    assert!(
        config.contains(&format!(
            "src = \"{}\"",
            BOOK_SRC.trim_start_matches("docs/")
        )),
        "docs/book.toml's src must be the folder this test checks ({BOOK_SRC})"
    );
    assert!(root.join(BOOK_SRC).join("SUMMARY.md").is_file());
}

#[test]
fn slugs_follow_mdbook() {
    assert_eq!(
        slug(&heading_text("On a hardware GPU (NVIDIA H200, 2026-11-26)")),
        "on-a-hardware-gpu-nvidia-h200-2026-11-26"
    );
    assert_eq!(
        slug(&heading_text("The particle fluid (SPH)")),
        "the-particle-fluid-sph"
    );
    assert_eq!(
        slug(&heading_text("Bounce capture: the DAW's bounce as a video")),
        "bounce-capture-the-daws-bounce-as-a-video"
    );
    assert_eq!(
        slug(&heading_text(
            "`dyeflow render` and **its** [options](x.md)"
        )),
        "dyeflow-render-and-its-options"
    );
    assert_eq!(
        slug(&heading_text("colour_ms, per frame")),
        "colour_ms-per-frame"
    );
    let ids = anchors("# A\n\n## A\n\n```sh\n# not a heading\n```\n\n## B `c`\n");
    let mut ids: Vec<String> = ids.into_iter().collect();
    ids.sort();
    assert_eq!(ids, ["a", "a-1", "b-c"]);
}

/// The check fails where it should: a missing file, a missing anchor in another file and in
/// the same file, a missing image, a page missing from the summary; and it leaves code,
/// external links and good links alone.
#[test]
fn the_check_catches_broken_links() {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("docs-link-check");
    let _ = std::fs::remove_dir_all(&root);
    let src = root.join(BOOK_SRC);
    std::fs::create_dir_all(src.join("guide")).unwrap();
    let write = |p: &str, t: &str| std::fs::write(root.join(p), t).unwrap();
    write(
        "README.md",
        "# Top\n\n## Good part\n\n[ok](#good-part) [ok](docs/src/guide/a.md#a-heading)\n\
         [bad file](docs/src/guide/missing.md)\n[bad anchor](docs/src/guide/a.md#nope)\n\
         ![bad image](shots/none.png) [web](https://example.com/x#y)\n\
         `[in code](nowhere.md)`\n\n```md\n[in a block](nowhere.md)\n```\n[self](#nothing-here)\n",
    );
    write("docs/src/SUMMARY.md", "# Summary\n\n- [A](guide/a.md)\n");
    write(
        "docs/src/guide/a.md",
        "# A heading\n\n[up](../../../README.md#good-part)\n",
    );
    write("docs/src/guide/orphan.md", "# Orphan\n");
    let files = markdown_files(&root);
    let problems = check(&root, &files);
    let expect = [
        (
            "README.md:6: link `docs/src/guide/missing.md`",
            "no such file",
        ),
        (
            "README.md:7: link `docs/src/guide/a.md#nope`",
            "no heading with id `nope`",
        ),
        ("README.md:8: link `shots/none.png`", "no such file"),
        ("README.md:14: link `#nothing-here`", "no heading with id"),
        (
            "docs/src/guide/a.md:3: link `../../../README.md#good-part`",
            "outside docs/src/",
        ),
    ];
    for (at, why) in expect {
        assert!(
            problems
                .iter()
                .any(|p| p.starts_with(at) && p.contains(why)),
            "expected a problem `{at}: ...{why}...`, got:\n{}",
            problems.join("\n")
        );
    }
    assert_eq!(problems.len(), expect.len(), "{}", problems.join("\n"));
    let unlisted = unlisted_pages(&root, &files);
    assert_eq!(unlisted.len(), 1, "{unlisted:?}");
    assert!(unlisted[0].starts_with("docs/src/guide/orphan.md"));
}
