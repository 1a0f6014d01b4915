//! The particle fluids written once: the 2D particle fluid (`src/sim/sph`, `shaders/sph*`) and
//! the 3D liquid (`src/sim/liquid3d`, `shaders/liquid3d*`) share their stages through the
//! particle core (`src/sim/particles`), not as copies. Two ratchets hold the way there
//! (docs/src/internals/particle-core.md): the runs of six same-shaped lines the two still
//! share, and the lines the three folders hold. Each number is today's: a change that adds a
//! twin or lines fails, one that removes them lowers the number here.

use std::collections::HashSet;
use std::path::Path;

/// Six-line windows the 2D and the 3D particle code share (see [`shared_windows`]): none
/// since the step's WGSL was written once (particle_step.wgsl).
const SHARED_WINDOWS: usize = 0;

/// Lines of `src/sim/sph`, `src/sim/liquid3d` and `src/sim/particles` together, tests
/// included. Issue 56 asks for 7 000. Raised twice, openly: by the generic step (C6-C8, from
/// 9 435: the 3D step's container hooks moved beside the core's stages rather than going, and
/// the core's step and its test are new) and by the 2D model over a backend trait (C13, from
/// 9 509: one model drives the CPU's or the GPU's particles, as the 3D liquid's does, each
/// backend with its own glue; then the review's fixes to the 2D GPU's failure and serial
/// numbers added a few more).
const PARTICLE_LINES: usize = 9633;

/// Words that name a dimension or its fluid: lines equal but for them are the same line.
const DIMENSION_WORDS: &[&str] = &[
    "sph",
    "liquid3d",
    "Sph",
    "Liquid3d",
    "SPH",
    "Fluid",
    "Liquid",
    "GpuFluid",
    "GpuLiquid",
    "fluid",
    "liquid",
    "vec2",
    "vec3",
    "vec4",
];

/// A line's shape: no comment, no whitespace, every number `0`, every dimension word `D`;
/// `None` for a line of brackets and punctuation only (or blank), which every file shares.
fn shape(line: &str) -> Option<String> {
    let code = line.split("//").next().unwrap_or("");
    let mut out = String::new();
    let mut chars = code.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_alphanumeric() || c == '_' {
            let mut word = c.to_string();
            while let Some(&n) = chars.peek() {
                let number_part = c.is_ascii_digit() && n == '.';
                if !(n.is_alphanumeric() || n == '_' || number_part) {
                    break;
                }
                word.push(n);
                chars.next();
            }
            if c.is_ascii_digit() {
                out.push('0');
            } else if DIMENSION_WORDS.contains(&word.as_str()) {
                out.push('D');
            } else {
                out.push_str(&word);
            }
        } else if !c.is_whitespace() {
            out.push(c);
        }
    }
    let trivial = out.chars().all(|c| "{}()[];,.".contains(c));
    (!trivial).then_some(out)
}

/// Each six consecutive shaped lines of one file, with where they start.
fn windows(files: &[(String, String)]) -> Vec<(Vec<String>, String)> {
    let mut out = Vec::new();
    for (name, text) in files {
        let lines: Vec<(usize, String)> = text
            .lines()
            .enumerate()
            .filter_map(|(i, l)| shape(l).map(|s| (i + 1, s)))
            .collect();
        for w in lines.windows(6) {
            let key = w.iter().map(|(_, s)| s.clone()).collect();
            out.push((key, format!("{name}:{}", w[0].0)));
        }
    }
    out
}

/// The windows of `two` (the 2D files) that `three` (the 3D files) also has, each once, with
/// where each side has it.
fn shared_windows(two: &[(String, String)], three: &[(String, String)]) -> Vec<String> {
    let theirs: std::collections::HashMap<Vec<String>, String> =
        windows(three).into_iter().collect();
    let mut seen = HashSet::new();
    windows(two)
        .into_iter()
        .filter_map(|(key, at)| {
            let there = theirs.get(&key)?;
            seen.insert(key.clone()).then(|| format!("{at} ~ {there}"))
        })
        .collect()
}

/// The files under `dir` (relative to the crate) whose name starts with `prefix` and ends in
/// `.rs` or `.wgsl`, with their text, subfolders included.
fn files(dir: &str, prefix: &str) -> Vec<(String, String)> {
    fn walk(dir: &Path, prefix: &str, out: &mut Vec<(String, String)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                walk(&path, "", out);
            } else if name.starts_with(prefix) && (name.ends_with(".rs") || name.ends_with(".wgsl"))
            {
                let text = std::fs::read_to_string(&path).unwrap();
                out.push((path.display().to_string(), text));
            }
        }
    }
    let mut out = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join(dir),
        prefix,
        &mut out,
    );
    out
}

fn two_d() -> Vec<(String, String)> {
    [files("src/sim/sph", ""), files("shaders", "sph")].concat()
}

fn three_d() -> Vec<(String, String)> {
    [files("src/sim/liquid3d", ""), files("shaders", "liquid3d")].concat()
}

#[test]
fn the_particle_fluids_share_no_new_twins() {
    let shared = shared_windows(&two_d(), &three_d());
    assert_eq!(
        shared.len(),
        SHARED_WINDOWS,
        "six-line windows shared by the 2D and the 3D particle code (a new twin: write it once \
         in src/sim/particles):\n{shared:#?}"
    );
    // A planted twin is found: the same lines, in each dimension's words.
    let body = "let a = p[0] + v[0] * dt;\nlet b = clamp(a, 0.0, size.x);\nif b > top {\n\
                count += 1;\n}\nout[i] = vec2(b, 1.5);\nreturn out;\n";
    let two = vec![("a.wgsl".to_string(), body.to_string())];
    let three = vec![("b.wgsl".to_string(), body.replace("vec2", "vec3"))];
    assert_eq!(shared_windows(&two, &three).len(), 1);
    let other = vec![("c.wgsl".to_string(), body.replace("top", "bottom"))];
    assert!(shared_windows(&two, &other).is_empty());
}

#[test]
fn the_particle_code_keeps_to_its_line_budget() {
    let lines: usize = [
        files("src/sim/sph", ""),
        files("src/sim/liquid3d", ""),
        files("src/sim/particles", ""),
    ]
    .concat()
    .iter()
    .map(|(_, text)| text.lines().count())
    .sum();
    assert!(
        lines <= PARTICLE_LINES,
        "src/sim/{{sph,liquid3d,particles}}: {lines} lines, over the {PARTICLE_LINES} recorded"
    );
}
