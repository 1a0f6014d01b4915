//! The Rust side of every shader's interface against the WGSL, by naga reflection (no GPU
//! needed): each pass's named bindings against the globals at those `@binding`s, each
//! uniform struct's size and field offsets against its WGSL twin, and the Rust constants that
//! mirror WGSL ones.

use crate::display::gpu::bloom::MipUniform;
use crate::display::gpu::obstacle_overlay::OverlayUniform;
use crate::display::gpu::raymarch::MarchUniform;
use crate::display::gpu::streamlines::StreamUniform;
use crate::display::gpu::uniforms::{ColourUniform, PictureUniform};
use crate::gpu::shaders;
use crate::sim::grid::gpu::passes::GpuSplat;
use crate::sim::grid::gpu::passes::diffuse::DiffuseUniform;
use crate::sim::grid::gpu::passes::divergence::{DecideUniform, SlotUniform};
use crate::sim::grid::gpu::passes::multigrid::TailLevel;
use crate::sim::grid::gpu::passes::nodes::NodesUniform;
use crate::sim::grid::gpu::passes::obstacles::SolidsUniform;
use crate::sim::grid::gpu::passes::pressure::LevelUniform;
use crate::sim::grid::gpu::passes::reduce::ReduceUniform;
use crate::sim::grid::gpu::uniforms::GridUniforms;
use crate::sim::liquid3d::gpu::GpuBall;
use crate::sim::liquid3d::gpu::splat::Splat3dUniform;
use crate::sim::particles::gpu::bitonic::StageUniform;
use crate::sim::particles::gpu::sources::{GpuFresh2, GpuFresh3, GpuImpulse, SourcesUniform};
use crate::sim::particles::gpu::step::StepUniform;
use crate::sim::particles::hash::gpu::CellSortUniform;
use crate::sim::sph::gpu::light::LightUniform;
use crate::sim::sph::gpu::solids::CollideUniform;
use std::collections::BTreeMap;

fn parse(shader: &str) -> naga::Module {
    let (_, source) = shaders::modules()
        .into_iter()
        .find(|(n, _)| n == shader)
        .unwrap_or_else(|| panic!("no shader module named {shader}"));
    naga::front::wgsl::parse_str(&source)
        .unwrap_or_else(|e| panic!("{shader}.wgsl: {}", e.emit_to_string(&source)))
}

#[test]
fn every_pass_names_its_bindings_as_the_wgsl_does() {
    let mut listed: Vec<&str> = BINDINGS.iter().map(|(s, _)| *s).collect();
    let modules = shaders::modules();
    let mut shaders: Vec<&str> = modules.iter().map(|(s, _)| s.as_str()).collect();
    listed.sort();
    shaders.sort();
    assert_eq!(listed, shaders, "every shader has its binding list");
    for (shader, bindings) in BINDINGS {
        let module = parse(shader);
        let wgsl: BTreeMap<u32, String> = module
            .global_variables
            .iter()
            .filter_map(|(_, g)| {
                let b = g.binding.as_ref()?;
                assert_eq!(b.group, 0, "{shader}.wgsl: {:?} is not in group 0", g.name);
                Some((b.binding, g.name.clone().unwrap_or_default()))
            })
            .collect();
        let rust: BTreeMap<u32, String> = bindings
            .iter()
            .map(|b| (b.index, b.name.to_string()))
            .collect();
        assert_eq!(
            rust.len(),
            bindings.len(),
            "{shader}: two bindings share an index"
        );
        assert_eq!(
            rust, wgsl,
            "{shader}: Rust bindings (left) against the WGSL (right)"
        );
    }
}

/// A Rust uniform struct: its size and named fields' offsets (padding fields left out).
struct Layout {
    shader: &'static str,
    wgsl: &'static str,
    rust: &'static str,
    size: usize,
    fields: Vec<(&'static str, usize)>,
}

macro_rules! layout {
    ($shader:literal, $wgsl:literal, $ty:ty, [$($field:ident),* $(,)?]) => {
        Layout {
            shader: $shader,
            wgsl: $wgsl,
            rust: stringify!($ty),
            size: size_of::<$ty>(),
            fields: vec![$((stringify!($field), std::mem::offset_of!($ty, $field))),*],
        }
    };
}

#[test]
fn every_uniform_struct_matches_its_wgsl_twin() {
    let layouts = [
        layout!(
            "splat",
            "GridUniforms",
            GridUniforms,
            [
                w,
                h,
                dw,
                dh,
                dye_scale,
                splat_count,
                out_w,
                out_h,
                dt,
                k,
                vel_decay,
                dye_decay,
                vort_k,
                cell,
                a_visc,
                a_dye,
                max_dye,
                sigma,
                kappa,
                ambient,
                up_x,
                up_y,
                heat_decay,
                glow,
            ]
        ),
        layout!(
            "colorize",
            "Colour",
            ColourUniform,
            [
                w,
                h,
                dw,
                dh,
                out_w,
                out_h,
                color_mode,
                brightness,
                saturation,
                hue_shift,
                tone,
                particle_lit,
            ]
        ),
        layout!(
            "splat",
            "Splat",
            GpuSplat,
            [x, y, r, reach, dr, dg, db, fx, fy, shape, heat]
        ),
        layout!(
            "pressure",
            "Level",
            LevelUniform,
            [w, h, colour, cw, cx, cy, omega, sweeps, ch]
        ),
        layout!(
            "pressure",
            "TailLevel",
            TailLevel,
            [w, h, off, rt, pt, cx, cy, pre, post, omega]
        ),
        layout!(
            "tone",
            "Picture",
            PictureUniform,
            [
                threshold, knee, bloom, spread, rays, shade, relief, step, light, background,
                stops, palette, glow, glow_w, glow_h, effects, vibrance,
            ]
        ),
        layout!("bloom", "Mip", MipUniform, [src_w, src_h, dst_w, dst_h]),
        layout!("sunrays", "Mip", MipUniform, [src_w, src_h, dst_w, dst_h]),
        layout!("diffuse", "Diffuse", DiffuseUniform, [nx, ny, fixed, a]),
        layout!("reduce", "Reduce", ReduceUniform, [n, groups, slot, mode]),
        layout!(
            "obstacles",
            "Solids",
            SolidsUniform,
            [closed_u, closed_v, solid_dye, regions, chunks, cells]
        ),
        layout!(
            "nodes",
            "Nodes",
            NodesUniform,
            [n, red, first, count, fine, omega, direct, sweeps]
        ),
        layout!("divergence", "Mean", SlotUniform, [slot, count]),
        layout!("gradient", "Grad", SlotUniform, [slot, count]),
        layout!(
            "obstacle_overlay",
            "Overlay",
            OverlayUniform,
            [w, h, out_w, out_h, outline, half, k, rgb]
        ),
        layout!(
            "streamlines",
            "Stream",
            StreamUniform,
            [
                w, h, out_w, out_h, cols, rows, steps, alone, dt, aspect, half, sx, sy
            ]
        ),
        layout!(
            "streamline_trace",
            "Stream",
            StreamUniform,
            [
                w, h, out_w, out_h, cols, rows, steps, alone, dt, aspect, half, sx, sy
            ]
        ),
        layout!("bitonic_sort", "Stage", StageUniform, [k, j]),
        layout!("sph_solids", "Collide", CollideUniform, [w, h, sx, sy]),
        layout!(
            "particle_sources_2d",
            "Sources",
            SourcesUniform,
            [n, count, recycle, oldest]
        ),
        layout!(
            "particle_sources_2d",
            "Impulse",
            GpuImpulse,
            [centre, reach, pull, force, calm]
        ),
        layout!("particle_sources_2d", "Fresh", GpuFresh2, [pos, vel, color]),
        layout!(
            "particle_sources_3d",
            "Impulse",
            GpuImpulse,
            [centre, reach, pull, force, calm]
        ),
        layout!("particle_sources_3d", "Fresh", GpuFresh3, [pos, vel, color]),
        layout!(
            "sph_light",
            "LightField",
            LightUniform,
            [n, w, h, style, speed, scale, reach, radius, norm]
        ),
        // common.wgsl's, the same struct in every module (the 3D step's too).
        layout!(
            "particle_step_2d",
            "ParticleStep",
            StepUniform,
            [
                n,
                nx,
                ny,
                nz,
                size,
                h,
                gravity,
                inv_cell,
                dt,
                look,
                target_density,
                pressure,
                near_pressure,
                viscosity,
                bulk_viscosity,
                bounce,
                slip,
                keep,
                h5,
                poly6,
                spiky2,
                spiky3,
                spiky2_slope,
                spiky3_slope,
                max_neighbours,
                cells,
                floaters,
                grip,
                ball_mass,
                padded
            ]
        ),
        layout!("particle_step_3d", "Ball", GpuBall, [pos, vel]),
        layout!("cell_sort", "CellSort", CellSortUniform, [n, cells]),
        layout!(
            "particle_reorder_2d",
            "CellSort",
            CellSortUniform,
            [n, cells]
        ),
        layout!(
            "particle_reorder_3d",
            "CellSort",
            CellSortUniform,
            [n, cells]
        ),
        layout!(
            "liquid3d_splat",
            "Splat3d",
            Splat3dUniform,
            [
                n, nx, ny, nz, inside_x, inside_y, inside_z, floaters, inv_voxel, norm, colours
            ]
        ),
        layout!(
            "raymarch",
            "March",
            MarchUniform,
            [
                eye, right, up, forward, axis_x, axis_y, axis_z, corner, sun, sun_local, box_,
                shadow, dims, bricks, sizes
            ]
        ),
        layout!(
            "divergence",
            "Decide",
            DecideUniform,
            [w, h, count, slot_div, slot_u, slot_v, k, threshold]
        ),
    ];
    for l in layouts {
        let what = format!("{} ({}.wgsl) and {}", l.wgsl, l.shader, l.rust);
        let module = parse(l.shader);
        let (members, span) = module
            .types
            .iter()
            .find_map(|(_, t)| match &t.inner {
                naga::TypeInner::Struct { members, span } if t.name.as_deref() == Some(l.wgsl) => {
                    Some((members.clone(), *span))
                }
                _ => None,
            })
            .unwrap_or_else(|| panic!("{}.wgsl has no struct {}", l.shader, l.wgsl));
        assert_eq!(span as usize, l.size, "{what}: sizes");
        let named: Vec<(&str, usize)> = members
            .iter()
            .filter_map(|m| {
                let name = m.name.as_deref()?;
                (!name.starts_with('_')).then_some((name, m.offset as usize))
            })
            .collect();
        assert_eq!(
            named, l.fields,
            "{what}: fields and offsets (WGSL left, Rust right)"
        );
    }
}

/// The value of WGSL constant `name` (a u32 literal) in `shader`.
fn wgsl_u32(shader: &str, name: &str) -> u32 {
    let module = parse(shader);
    let (_, constant) = module
        .constants
        .iter()
        .find(|(_, c)| c.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("{shader}.wgsl has no const {name}"));
    match module.global_expressions[constant.init] {
        naga::Expression::Literal(naga::Literal::U32(x)) => x,
        ref e => panic!("{shader}.wgsl: const {name} is {e:?}, not a u32 literal"),
    }
}

/// The value of WGSL constant `name` (an f32 literal) in `shader`.
fn wgsl_f32(shader: &str, name: &str) -> f32 {
    let module = parse(shader);
    let (_, constant) = module
        .constants
        .iter()
        .find(|(_, c)| c.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("{shader}.wgsl has no const {name}"));
    match module.global_expressions[constant.init] {
        naga::Expression::Literal(naga::Literal::F32(x)) => x,
        ref e => panic!("{shader}.wgsl: const {name} is {e:?}, not an f32 literal"),
    }
}

/// The value of WGSL constant `name` (a `vec3<f32>` of literals) in `shader`.
fn wgsl_vec3(shader: &str, name: &str) -> [f32; 3] {
    let module = parse(shader);
    let (_, constant) = module
        .constants
        .iter()
        .find(|(_, c)| c.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("{shader}.wgsl has no const {name}"));
    let naga::Expression::Compose { ref components, .. } = module.global_expressions[constant.init]
    else {
        panic!("{shader}.wgsl: const {name} is not a vector");
    };
    let v: Vec<f32> = components
        .iter()
        .map(|&c| match module.global_expressions[c] {
            naga::Expression::Literal(naga::Literal::F32(x)) => x,
            ref e => panic!("{shader}.wgsl: const {name} holds {e:?}"),
        })
        .collect();
    v.try_into()
        .unwrap_or_else(|_| panic!("{shader}.wgsl: const {name} is not a vec3"))
}

/// The 3D liquid's picture on the GPU uses the CPU's constants.
#[test]
fn the_ray_march_and_splat_constants_mirror_the_wgsl() {
    use crate::display::cpu::raymarch as cpu;
    use crate::display::gpu::raymarch::MARCH_SW;
    use crate::display::volume::{BRICK, SURFACE};
    use crate::sim::liquid3d::gpu::splat::{SPLAT_SW, UNITS};
    let s = "raymarch";
    assert_eq!(wgsl_u32(s, "MARCH_SW"), MARCH_SW);
    assert_eq!(wgsl_u32(s, "BRICK") as usize, BRICK);
    assert_eq!(wgsl_u32(s, "BISECTIONS") as usize, cpu::BISECTIONS);
    for (name, value) in [
        ("SURFACE", SURFACE),
        ("SURFACE_STEP", cpu::SURFACE_STEP),
        ("INSIDE_STEP", cpu::INSIDE_STEP),
        ("IOR", cpu::IOR),
        ("DYE", cpu::DYE),
        ("SCATTER", cpu::SCATTER),
        ("GLOW", cpu::GLOW),
        ("AMBIENT", cpu::AMBIENT),
        ("TILE", cpu::TILE),
        ("ALBEDO_LIGHT", cpu::ALBEDO[0]),
        ("ALBEDO_DARK", cpu::ALBEDO[1]),
        ("FOG", cpu::FOG),
        ("GLASS", cpu::GLASS),
        ("EDGE", cpu::EDGE),
        ("EDGE_PIXELS", cpu::EDGE_PIXELS),
        ("SHADOW", cpu::SHADOW),
        ("SHADOW_STEP", cpu::SHADOW_STEP),
        ("SHADOW_EMPTY", cpu::SHADOW_EMPTY),
        ("BALL_SHADOW", cpu::BALL_SHADOW),
    ] {
        assert_eq!(wgsl_f32(s, name), value, "{name} (raymarch.wgsl)");
    }
    for (name, value) in [
        ("WATER", cpu::WATER),
        ("SUN", cpu::SUN),
        ("HORIZON", cpu::HORIZON),
        ("ZENITH", cpu::ZENITH),
    ] {
        assert_eq!(wgsl_vec3(s, name), value, "{name} (raymarch.wgsl)");
    }
    let s = "liquid3d_splat";
    assert_eq!(wgsl_u32(s, "SPLAT_SW"), SPLAT_SW);
    assert_eq!(wgsl_f32(s, "UNITS"), UNITS);
    use crate::sim::liquid3d::splat as cpu_splat;
    assert_eq!(wgsl_u32(s, "WALL_LAYERS") as usize, cpu_splat::WALL_LAYERS);
    assert_eq!(wgsl_u32(s, "BULK_LAYER") as usize, cpu_splat::BULK_LAYER);
    assert_eq!(
        crate::display::gpu::raymarch::MAX_BALLS,
        crate::sim::liquid3d::floaters::MAX_FLOATERS
    );
}

#[test]
fn the_picture_constants_mirror_the_wgsl() {
    use crate::display::effects as bloom;
    use crate::display::effects as tone;
    use crate::display::effects as sunrays;
    assert_eq!(wgsl_f32("bloom", "MAX_LIGHT"), bloom::BLOOM_MAX_LIGHT);
    assert_eq!(wgsl_f32("tone", "MAX_LIGHT"), bloom::BLOOM_MAX_LIGHT);
    assert_eq!(wgsl_f32("tone", "BG_COVER"), tone::BG_COVER);
    assert_eq!(
        wgsl_f32("tone", "PALETTE_HALF_LIGHT"),
        crate::fluid::PALETTE_HALF_LIGHT
    );
    assert_eq!(wgsl_u32("sunrays", "SAMPLES"), sunrays::RAYS_SAMPLES);
    assert_eq!(wgsl_f32("sunrays", "DENSITY"), sunrays::RAYS_DENSITY);
    assert_eq!(wgsl_f32("sunrays", "DECAY"), sunrays::RAYS_DECAY);
}

#[test]
fn rust_constants_mirror_the_wgsl() {
    use crate::display::gpu::streamlines::SW as LINE_SW;
    use crate::display::streamlines as lines;
    for shader in ["streamlines", "streamline_trace"] {
        assert_eq!(wgsl_u32(shader, "SW"), LINE_SW, "SW ({shader}.wgsl)");
    }
    assert_eq!(wgsl_f32("streamline_trace", "MAX_LINE"), lines::MAX_LINE);
    for (name, value) in [
        ("TAIL_ALPHA", lines::TAIL_ALPHA),
        ("FADE_SPEED", lines::FADE_SPEED),
        ("HALF_SPEED", lines::HALF_SPEED),
        ("ALPHA_LEVELS", lines::ALPHA_LEVELS),
        ("SPEED_LEVELS", lines::SPEED_LEVELS),
        ("PIECE_PX", lines::PIECE_PX),
    ] {
        assert_eq!(
            wgsl_f32("streamlines", name),
            value,
            "{name} (streamlines.wgsl)"
        );
    }
    assert_eq!(
        wgsl_u32("curl", "WG"),
        crate::gpu::WORKGROUP,
        "WG (common.wgsl)"
    );
    assert_eq!(
        wgsl_u32("reduce", "RW") as usize,
        crate::sim::grid::gpu::passes::reduce::REDUCE_THREADS,
        "RW (reduce.wgsl)"
    );
    assert_eq!(
        wgsl_u32("pressure", "COARSE_MAX") as usize,
        crate::sim::grid::gpu::solver::COARSE_MAX_CELLS,
        "COARSE_MAX (pressure.wgsl)"
    );
    use crate::sim::grid::gpu::passes::multigrid::{
        SMOOTH_MAX_SWEEPS, SMOOTH_TILE, TAIL_MAX_CELLS,
    };
    for (name, rust) in [
        ("TAIL_MAX", TAIL_MAX_CELLS),
        ("ST", SMOOTH_TILE),
        ("SMOOTH_MAX", SMOOTH_MAX_SWEEPS as usize),
        (
            "JH",
            crate::sim::grid::gpu::passes::pressure::JACOBI_BLOCK_ITERATIONS as usize,
        ),
    ] {
        assert_eq!(
            wgsl_u32("pressure", name) as usize,
            rust,
            "{name} (pressure.wgsl)"
        );
    }
    use crate::sim::grid::gpu::passes::obstacles::LIST_THREADS;
    use crate::sim::grid::gpu::passes::reduce::slot;
    assert_eq!(
        wgsl_u32("obstacles", "LW") as usize,
        LIST_THREADS,
        "LW (common.wgsl)"
    );
    assert_eq!(wgsl_u32("obstacles", "NO_REGION"), u32::MAX, "NO_REGION");
    assert_eq!(wgsl_u32("advect", "SLOT_SPEED_U"), slot::SPEED_U);
    assert_eq!(wgsl_u32("advect", "SLOT_SPEED_V"), slot::SPEED_V);
    assert_eq!(
        wgsl_u32("advect", "NEAR_MAX_CELLS") as usize,
        crate::sim::obstacles::near::NearSolids::MAX_CELLS,
        "NEAR_MAX_CELLS (advect.wgsl)"
    );
    use crate::sim::particles::hash::gpu::{SETTLE_MAX, SW};
    assert_eq!(wgsl_u32("sph_light", "SW"), SW, "SW (sph_light.wgsl)");
    assert_eq!(wgsl_u32("cell_sort", "SW"), SW, "SW (cell_sort.wgsl)");
    assert_eq!(wgsl_u32("cell_sort", "SETTLE_MAX"), SETTLE_MAX);
    assert_eq!(
        wgsl_f32("particle_step_3d", "BALL_BOUNCE"),
        crate::sim::liquid3d::floaters::BOUNCE
    );
    use crate::sim::sph::{gpu::light as gpu_light, shared as light};
    assert_eq!(wgsl_f32("sph_light", "LIGHT_UNITS"), gpu_light::LIGHT_UNITS);
    assert_eq!(
        wgsl_f32("sph_light", "GRADIENT_SPEED"),
        light::GRADIENT_SPEED
    );
}

/// Every shader's bindings as the passes name them: `(shader, bindings)`.
const BINDINGS: &[(&str, &[crate::gpu::kernel::Binding])] = &[
    (
        "advect",
        crate::sim::grid::gpu::passes::advect::binding::ALL,
    ),
    ("bloom", crate::display::gpu::bloom::binding::ALL),
    (
        "buoyancy",
        crate::sim::grid::gpu::passes::buoyancy::binding::ALL,
    ),
    ("colorize", crate::display::gpu::colorize::binding::ALL),
    ("curl", crate::sim::grid::gpu::passes::curl::binding::ALL),
    (
        "diffuse",
        crate::sim::grid::gpu::passes::diffuse::binding::ALL,
    ),
    ("tone", crate::display::gpu::tone::binding::ALL),
    (
        "divergence",
        crate::sim::grid::gpu::passes::divergence::binding::ALL,
    ),
    (
        "gradient",
        crate::sim::grid::gpu::passes::gradient::binding::ALL,
    ),
    ("nodes", crate::sim::grid::gpu::passes::nodes::binding::ALL),
    (
        "obstacles",
        crate::sim::grid::gpu::passes::obstacles::binding::ALL,
    ),
    (
        "obstacle_overlay",
        crate::display::gpu::obstacle_overlay::binding::ALL,
    ),
    (
        "particles",
        crate::sim::grid::gpu::passes::particles::binding::ALL,
    ),
    (
        "pressure",
        crate::sim::grid::gpu::passes::pressure::binding::ALL,
    ),
    (
        "reduce",
        crate::sim::grid::gpu::passes::reduce::binding::ALL,
    ),
    ("splat", crate::sim::grid::gpu::passes::splat::binding::ALL),
    (
        "streamline_trace",
        crate::sim::grid::gpu::passes::streamline_trace::binding::ALL,
    ),
    (
        "streamlines",
        crate::display::gpu::streamlines::binding::ALL,
    ),
    ("sunrays", crate::display::gpu::sunrays::binding::ALL),
    (
        "vorticity",
        crate::sim::grid::gpu::passes::vorticity::binding::ALL,
    ),
    (
        "bitonic_sort",
        crate::sim::particles::gpu::bitonic::binding::ALL,
    ),
    (
        "particle_step_2d",
        &crate::sim::particles::gpu::step::binding::CORE,
    ),
    (
        "particle_step_3d",
        crate::sim::particles::gpu::step::binding::ALL,
    ),
    ("sph_solids", crate::sim::sph::gpu::solids::binding::ALL),
    (
        "particle_sources_2d",
        crate::sim::particles::gpu::sources::binding::ALL,
    ),
    (
        "particle_sources_3d",
        crate::sim::particles::gpu::sources::binding::ALL,
    ),
    ("sph_light", crate::sim::sph::gpu::light::binding::ALL),
    ("cell_sort", crate::sim::particles::hash::gpu::binding::ALL),
    (
        "particle_reorder_2d",
        crate::sim::particles::gpu::reorder::binding::ALL,
    ),
    (
        "particle_reorder_3d",
        crate::sim::particles::gpu::reorder::binding::ALL,
    ),
    (
        "liquid3d_splat",
        crate::sim::liquid3d::gpu::splat::binding::ALL,
    ),
    ("raymarch", crate::display::gpu::raymarch::binding::ALL),
];
