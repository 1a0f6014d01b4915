//! Every shader parses and validates with naga: no GPU needed.

use dyeflow::gpu::shaders;

#[test]
fn every_shader_parses_and_validates() {
    assert!(shaders::PASSES.len() >= 10);
    for (name, source) in shaders::modules() {
        let module = naga::front::wgsl::parse_str(&source).unwrap_or_else(|e| {
            panic!("{name}.wgsl does not parse:\n{}", e.emit_to_string(&source))
        });
        let mut validator = naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::empty(),
        );
        if let Err(e) = validator.validate(&module) {
            panic!(
                "{name}.wgsl does not validate:\n{}",
                e.emit_to_string(&source)
            );
        }
        assert!(
            module
                .entry_points
                .iter()
                .all(|e| e.stage == naga::ShaderStage::Compute),
            "{name}.wgsl: only compute entry points"
        );
    }
}

#[test]
fn every_shader_file_starts_with_a_header_and_is_listed() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".wgsl"))
        .collect();
    files.sort();
    let mut listed: Vec<String> = shaders::files()
        .iter()
        .map(|n| format!("{n}.wgsl"))
        .collect();
    listed.push("common.wgsl".into());
    listed.sort();
    assert_eq!(files, listed, "shaders/ and shaders::files() disagree");
    for f in files {
        let text = std::fs::read_to_string(dir.join(&f)).unwrap();
        assert!(
            text.starts_with(&format!("// {f}:")),
            "{f} lacks its header comment"
        );
    }
}
