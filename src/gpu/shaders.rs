//! The WGSL sources, compiled into the binary. Each pass's source is `common.wgsl` followed by
//! the pass's file (WGSL has no includes); a particle stage's is `common.wgsl`, the
//! dimension's prelude (`particle_dim2.wgsl`, `particle_dim3.wgsl`) and the stage's file,
//! written once over the dimension's vector.

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
    (
        "bitonic_sort",
        include_str!("../../shaders/bitonic_sort.wgsl"),
    ),
    ("sph_solids", include_str!("../../shaders/sph_solids.wgsl")),
    ("sph_light", include_str!("../../shaders/sph_light.wgsl")),
    ("cell_sort", include_str!("../../shaders/cell_sort.wgsl")),
    (
        "liquid3d_splat",
        include_str!("../../shaders/liquid3d_splat.wgsl"),
    ),
    ("raymarch", include_str!("../../shaders/raymarch.wgsl")),
];

/// The particle core's stages (`particle_<stage>.wgsl`), each written once for both
/// dimensions: built per dimension by [`particle_source`]. The step also takes the
/// dimension's container (its hooks and passes).
pub const PARTICLE_STAGES: &[(&str, &str)] = &[
    (
        "particle_step",
        include_str!("../../shaders/particle_step.wgsl"),
    ),
    (
        "particle_reorder",
        include_str!("../../shaders/particle_reorder.wgsl"),
    ),
    (
        "particle_sources",
        include_str!("../../shaders/particle_sources.wgsl"),
    ),
];

/// A dimension's words for the particle stages: its prelude (composed before each stage) and
/// its container (composed after the step: the 2D box, the 3D tank).
pub struct Dimension {
    pub dim: usize,
    pub prelude: (&'static str, &'static str),
    pub container: (&'static str, &'static str),
}

/// The two dimensions particles live in.
pub const DIMENSIONS: [Dimension; 2] = [
    Dimension {
        dim: 2,
        prelude: (
            "particle_dim2",
            include_str!("../../shaders/particle_dim2.wgsl"),
        ),
        container: (
            "particle_box",
            include_str!("../../shaders/particle_box.wgsl"),
        ),
    },
    Dimension {
        dim: 3,
        prelude: (
            "particle_dim3",
            include_str!("../../shaders/particle_dim3.wgsl"),
        ),
        container: (
            "particle_tank",
            include_str!("../../shaders/particle_tank.wgsl"),
        ),
    },
];

/// The full source of particle stage `stage` in `dim` (2 or 3) dimensions: the common
/// prelude, the dimension's prelude, the stage (and the step, the dimension's container).
pub fn particle_source(stage: &str, dim: usize) -> String {
    let (_, body) = PARTICLE_STAGES
        .iter()
        .find(|(n, _)| *n == stage)
        .unwrap_or_else(|| panic!("no particle stage named {stage}"));
    let d = DIMENSIONS
        .iter()
        .find(|d| d.dim == dim)
        .unwrap_or_else(|| panic!("particles live in two or three dimensions, not {dim}"));
    let container = if stage == "particle_step" {
        d.container.1
    } else {
        ""
    };
    format!("{COMMON}\n{}\n{body}\n{container}", d.prelude.1)
}

/// Every module the GPU builds, by name and full source: each pass, and each particle stage
/// in each dimension (`particle_sources_2d`, `particle_sources_3d`).
pub fn modules() -> Vec<(String, String)> {
    let passes = PASSES.iter().map(|(n, _)| (n.to_string(), source(n)));
    let stages = PARTICLE_STAGES.iter().flat_map(|(n, _)| {
        DIMENSIONS
            .iter()
            .map(move |d| (format!("{n}_{}d", d.dim), particle_source(n, d.dim)))
    });
    passes.chain(stages).collect()
}

/// Every file in `shaders/` but `common.wgsl`, by name (without `.wgsl`).
pub fn files() -> Vec<&'static str> {
    let passes = PASSES.iter().map(|(n, _)| *n);
    let stages = PARTICLE_STAGES.iter().map(|(n, _)| *n);
    let preludes = DIMENSIONS.iter().flat_map(|d| [d.prelude.0, d.container.0]);
    passes.chain(stages).chain(preludes).collect()
}

/// The full source of pass `name` (common prelude included).
pub fn source(name: &str) -> String {
    let (_, pass) = PASSES
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no shader named {name}"));
    format!("{COMMON}\n{pass}")
}
