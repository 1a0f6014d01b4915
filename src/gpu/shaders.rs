//! The WGSL sources, compiled into the binary. Each pass's source is `common.wgsl` followed by
//! the pass's file (WGSL has no includes).

/// Types and helpers shared by every pass.
pub const COMMON: &str = include_str!("../../shaders/common.wgsl");

/// One WGSL file per pass, named like the CPU pass (`sim/grid/cpu/<name>.rs`,
/// `display/cpu/<name>.rs`).
pub const PASSES: &[(&str, &str)] = &[
    ("splat", include_str!("../../shaders/splat.wgsl")),
    ("curl", include_str!("../../shaders/curl.wgsl")),
    ("vorticity", include_str!("../../shaders/vorticity.wgsl")),
    ("diffuse", include_str!("../../shaders/diffuse.wgsl")),
    ("divergence", include_str!("../../shaders/divergence.wgsl")),
    ("reduce", include_str!("../../shaders/reduce.wgsl")),
    ("pressure", include_str!("../../shaders/pressure.wgsl")),
    ("nodes", include_str!("../../shaders/nodes.wgsl")),
    ("gradient", include_str!("../../shaders/gradient.wgsl")),
    ("advect", include_str!("../../shaders/advect.wgsl")),
    ("buoyancy", include_str!("../../shaders/buoyancy.wgsl")),
    ("obstacles", include_str!("../../shaders/obstacles.wgsl")),
    ("colorize", include_str!("../../shaders/colorize.wgsl")),
    ("particles", include_str!("../../shaders/particles.wgsl")),
    ("tone", include_str!("../../shaders/tone.wgsl")),
    ("bloom", include_str!("../../shaders/bloom.wgsl")),
    ("sunrays", include_str!("../../shaders/sunrays.wgsl")),
    (
        "streamline_trace",
        include_str!("../../shaders/streamline_trace.wgsl"),
    ),
    (
        "streamlines",
        include_str!("../../shaders/streamlines.wgsl"),
    ),
    (
        "obstacle_overlay",
        include_str!("../../shaders/obstacle_overlay.wgsl"),
    ),
    ("sph_sort", include_str!("../../shaders/sph_sort.wgsl")),
    ("sph_step", include_str!("../../shaders/sph_step.wgsl")),
    ("sph_solids", include_str!("../../shaders/sph_solids.wgsl")),
    (
        "sph_sources",
        include_str!("../../shaders/sph_sources.wgsl"),
    ),
    ("sph_light", include_str!("../../shaders/sph_light.wgsl")),
    ("cell_sort", include_str!("../../shaders/cell_sort.wgsl")),
    (
        "liquid3d_step",
        include_str!("../../shaders/liquid3d_step.wgsl"),
    ),
    (
        "liquid3d_sources",
        include_str!("../../shaders/liquid3d_sources.wgsl"),
    ),
    (
        "liquid3d_splat",
        include_str!("../../shaders/liquid3d_splat.wgsl"),
    ),
    ("raymarch", include_str!("../../shaders/raymarch.wgsl")),
];

/// The full source of pass `name` (common prelude included).
pub fn source(name: &str) -> String {
    let (_, pass) = PASSES
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no shader named {name}"));
    format!("{COMMON}\n{pass}")
}
