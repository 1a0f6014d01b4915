// common.wgsl: types and helpers every pass shares. Prepended to each pass's source.
//
// Units and layout mirror the CPU solver (src/sim/grid/cpu): the canvas is 1 unit tall, velocity
// is in canvas heights per second, pressure is pre-scaled (q = p dt / (rho h)). Fields are
// flat row-major arrays, row 0 at the bottom:
//   u: (w + 1) x h   (vertical faces; columns 0 and w are walls, always 0)
//   v: w x (h + 1)   (horizontal faces; rows 0 and h are walls, always 0)
//   q, b, curl: w x h cell centres
//   dye: dw x dh cell centres, vec4 (rgb, a unused), dw = w * dye_scale
//   heat, solid: w x h cell centres (temperature; 1 where the cell is solid)
// Arithmetic follows the CPU kernels operation for operation (fma where they use mul_add),
// so results agree to rounding.

// Every 2D pass runs 16 x 16 workgroups; mirrored by gpu::WORKGROUP in Rust.
const WG: u32 = 16u;

// Threads per workgroup of the 1D list passes (obstacles.wgsl, advect.wgsl's near-solids pass,
// nodes.wgsl); mirrored by sim::grid::gpu::passes::obstacles::LIST_THREADS. Their items are folded into
// 2D (at most 65535 workgroups per axis).
const LW: u32 = 256u;

// The item of a 1D list pass's invocation: gid.y * (groups in x * LW) + gid.x.
fn list_item(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return gid.y * (nwg.x * LW) + gid.x;
}

const MAX_SPEED: f32 = 50.0;
// The largest temperature of either sign (sim::MAX_HEAT).
const MAX_HEAT: f32 = 100.0;

struct GridUniforms {
    w: u32,
    h: u32,
    dw: u32,
    dh: u32,
    dye_scale: u32,
    splat_count: u32,
    out_w: u32,
    out_h: u32,
    // Simulated seconds this step.
    dt: f32,
    // Cells travelled per unit velocity: dt * h.
    k: f32,
    // exp(-rate * dt) for velocity and dye.
    vel_decay: f32,
    dye_decay: f32,
    // dt * eps * VORTICITY_SCALE_PER_S.
    vort_k: f32,
    // 1 / h: the cell size in canvas units.
    cell: f32,
    // Implicit diffusion coefficients nu dt / cell^2 (velocity, dye).
    a_visc: f32,
    a_dye: f32,
    max_dye: f32,
    // Buoyancy sigma and weight kappa (canvas heights/s^2), the ambient temperature, the up
    // direction (a unit vector), and exp(-cooling * dt).
    sigma: f32,
    kappa: f32,
    ambient: f32,
    up_x: f32,
    up_y: f32,
    heat_decay: f32,
    // The particles' glow (particles.wgsl draws them at out_w x out_h).
    glow: f32,
}

// The colour stage's sizes and look (colorize, tone). Mirrors
// display::gpu::uniforms::ColourUniform.
struct Colour {
    // The model's grid (velocity faces, temperature) and its dye's (or light's) size.
    w: u32,
    h: u32,
    dw: u32,
    dh: u32,
    // The frame's size.
    out_w: u32,
    out_h: u32,
    color_mode: u32,
    brightness: f32,
    saturation: f32,
    hue_shift: f32,
    // 0: legacy (colorize writes the frame), 1: filmic (colorize writes light, tone the frame).
    tone: u32,
    // 1: colorize adds the particles' light.
    particle_lit: u32,
}

// The picture effects of the filmic tone (bloom, sunrays, tone). Mirrors
// display::gpu::uniforms::PictureUniform; the values are display::effects::Fx's and fluid::Effects'.
struct Picture {
    // Bloom: soft threshold and its knee (absolute light), intensity, spread 0..1.
    threshold: f32,
    knee: f32,
    bloom: f32,
    spread: f32,
    // Sunrays amount; shading amount, relief scale, stencil half-width in pixels.
    rays: f32,
    shade: f32,
    relief: f32,
    step: u32,
    // Towards the shading light, divided by its height (xyz).
    light: vec4<f32>,
    // Background light (rgb).
    background: vec4<f32>,
    // Palette stops, luminance 1 each (rgb), dim to bright.
    stops: array<vec4<f32>, 5>,
    // 1: a palette is on.
    palette: u32,
    // 1: the glow buffer holds bloom and rays; its size (bloom level 0).
    glow: u32,
    glow_w: u32,
    glow_h: u32,
    // 1: any effect is on (0: the plain filmic picture).
    effects: u32,
    // Vibrance 0..1 (cpu::tone::vibrant).
    vibrance: f32,
    _pad1: u32,
    _pad2: u32,
}

// The streamlines' sizes and trace (streamline_trace.wgsl traces, streamlines.wgsl draws).
// Mirrors display::gpu::streamlines::StreamUniform.
struct Stream {
    // Grid and frame sizes.
    w: u32,
    h: u32,
    out_w: u32,
    out_h: u32,
    // Seeds across and up, trace steps, 1: drawn alone.
    cols: u32,
    rows: u32,
    steps: u32,
    alone: u32,
    // Seconds per step, canvas width over height, half a line's width (px).
    dt: f32,
    aspect: f32,
    half: f32,
    _pad0: f32,
    // Pixels per canvas unit, across and up (Lines::scale).
    sx: f32,
    sy: f32,
    _pad1: f32,
    _pad2: f32,
}

// Bilinear taps of pixel p of out_n over src_n texels, centres aligned, clamped
// (cpu::bloom::tap).
struct Tap {
    i0: u32,
    i1: u32,
    f: f32,
}

fn tap(p: u32, out_n: u32, src_n: u32) -> Tap {
    let x = limit((f32(p) + 0.5) * f32(src_n) / f32(out_n) - 0.5, 0.0, f32(src_n - 1u));
    var t: Tap;
    t.i0 = u32(x);
    t.i1 = min(t.i0 + 1u, src_n - 1u);
    t.f = x - f32(t.i0);
    return t;
}

fn lerp(a: f32, b: f32, t: f32) -> f32 {
    return fma(t, b - a, a);
}

// max-then-min, so NaN maps to lo (as the CPU's `limit`).
fn limit(x: f32, lo: f32, hi: f32) -> f32 {
    return min(max(x, lo), hi);
}

// Bilinear sample taps of an nx x ny field at index coordinates (x, y), clamped to the grid.
// The lower corner stops one short of the last row and column and the weight reaches 1
// there; one-wide axes read the same cell twice. Mirrors cpu::advect::Sampler.
struct Taps {
    k: u32,
    dx: u32,
    dy: u32,
    fx: f32,
    fy: f32,
}

fn taps(nx: u32, ny: u32, x_in: f32, y_in: f32) -> Taps {
    let x = limit(x_in, 0.0, f32(nx - 1u));
    let y = limit(y_in, 0.0, f32(ny - 1u));
    let i0 = min(u32(x), max(nx, 2u) - 2u);
    let j0 = min(u32(y), max(ny, 2u) - 2u);
    var t: Taps;
    t.k = j0 * nx + i0;
    t.dx = select(0u, 1u, nx > 1u);
    t.dy = select(0u, nx, ny > 1u);
    t.fx = x - f32(i0);
    t.fy = y - f32(j0);
    return t;
}

fn blend4(a: f32, b: f32, c: f32, d: f32, t: Taps) -> f32 {
    return lerp(lerp(a, b, t.fx), lerp(c, d, t.fx), t.fy);
}

// The RGB8 pixel p (packed little-endian, alpha kept) blended towards rgb (8-bit units) by
// a, each channel rounded to nearest: the overlays' drawing over a finished frame
// (cpu math::blend8).
fn blend_rgb8(p: u32, rgb: vec3<f32>, a: f32) -> u32 {
    var out = p & 0xff000000u;
    for (var ch = 0u; ch < 3u; ch++) {
        let shift = 8u * ch;
        let pf = f32((p >> shift) & 0xffu);
        out |= u32(clamp(fma(a, rgb[ch] - pf, pf) + 0.5, 0.0, 255.0)) << shift;
    }
    return out;
}

// e^x, the CPU's polynomial (math::exp): NaN and x < -87 give 0.
fn exp_det(x_in: f32) -> f32 {
    if (x_in != x_in || x_in < -87.0) {
        return 0.0;
    }
    let x = min(x_in, 88.0);
    let n = round(x * 1.4426950408889634);
    let r = fma(n, -1.4286068e-6, fma(n, -0.69314575, x));
    var p = fma(r, 1.0 / 720.0, 1.0 / 120.0);
    p = fma(r, p, 1.0 / 24.0);
    p = fma(r, p, 1.0 / 6.0);
    p = fma(r, p, 0.5);
    p = fma(r, p, 1.0);
    p = fma(r, p, 1.0);
    return p * bitcast<f32>(u32(i32(n) + 127) << 23u);
}

// The particle core's step (particle_step.wgsl and its containers; the 2D box's sort and
// obstacles, sph_sort.wgsl and sph_solids.wgsl); mirrored by sim::particles::gpu::step::
// StepUniform. In 2D the third components are 0 (nz 1). Lengths in the fluid's units, times in
// seconds.
struct ParticleStep {
    n: u32,               // particles
    nx: u32,              // cells along x, y, z (cells one reach wide)
    ny: u32,
    nz: u32,
    size: vec3<f32>,      // the box or tank
    h: f32,               // the kernels' radius (the reach)
    gravity: vec3<f32>,   // acceleration
    inv_cell: f32,        // 1 / cell edge, as the CPU rounds it (a product rounds the same everywhere)
    dt: f32,
    look: f32,            // look-ahead of the predicted positions
    target_density: f32,
    pressure: f32,        // pressure per unit of density above the target
    near_pressure: f32,
    viscosity: f32,       // per unit of the pair's kernel weight (particles::Physics)
    bulk_viscosity: f32,
    bounce: f32,          // speed kept off a wall
    slip: f32,            // speed kept along a wall over the step
    keep: f32,            // velocity kept through the drag
    h5: f32,              // h^5 as the CPU rounds it (the tank's walls)
    poly6: f32,           // the kernels' factors (particles::kernels::Kernels)
    spiky2: f32,
    spiky3: f32,
    spiky2_slope: f32,
    spiky3_slope: f32,
    max_neighbours: u32,  // neighbours a particle keeps (particles::MAX_NEIGHBOURS)
    cells: u32,           // nx * ny * nz
    floaters: u32,        // the tank's balls (liquid3d::floaters), at most 8; 0 in the box
    grip: f32,            // how hard the liquid grips a ball, per second
    ball_mass: f32,       // a ball's mass over its radius cubed, particles per unit of volume
    padded: u32,          // the 2D bitonic sort's length: a power of two >= n, at least 512
    _p0: u32,
    _p1: u32,
}
