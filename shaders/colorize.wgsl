// colorize.wgsl: the picture of the fluid at any output size, HSV-coloured, as light in
// linear RGB exposed by the brightness knob. Tone 0 (legacy) tones each channel 1 - e^-x and
// writes the RGBA8 frame; tone 1 (filmic) writes the light (vec4, alpha unused) for the
// tone pass (tone.wgsl).
//   color_mode 0 (dye colour): the dye's own RGB, exposed, hue-shifted, saturated;
//   color_mode 1 (density hue): hue cycles with the dye's total density (Stam's demo);
//   color_mode 2 (velocity hue): hue from the flow's direction, value from its speed;
//   color_mode 3 (temperature): the temperature through a fire palette (cpu colorize::fire).
// Output rows run top to bottom (the simulation's row 0 is the bottom); one u32 per pixel,
// bytes R, G, B, A in memory. Mirrors cpu/colorize.rs.

const DENSITY_HUE_TURNS: f32 = 0.35;
const VELOCITY_VALUE_SCALE: f32 = 2.0;
const PI: f32 = 3.14159265358979;
const FIRE_HUE_TURNS: f32 = 0.14;
const FIRE_WHITENING: f32 = 0.35;
const FIRE_EXPOSURE: f32 = 2.0;
const COLD_HUE_TURNS: f32 = 0.62;

@group(0) @binding(0) var<uniform> C: Colour;
@group(0) @binding(1) var<storage, read> u: array<f32>;
@group(0) @binding(2) var<storage, read> v: array<f32>;
@group(0) @binding(3) var<storage, read> dye: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> frame: array<u32>;
@group(0) @binding(5) var<storage, read_write> light: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read> heat: array<f32>;
// The particles' light: out_w x out_h pixels of three fixed-point units (particles.wgsl),
// read when C.particle_lit is 1.
@group(0) @binding(7) var<storage, read> plight: array<u32>;

// display::LIGHT_UNITS.
const PARTICLE_LIGHT_UNITS: f32 = 256.0;

// The particles' light at pixel `idx`.
fn particle_light(idx: u32) -> vec3<f32> {
    let scale = 1.0 / PARTICLE_LIGHT_UNITS;
    let k = 3u * idx;
    return vec3(f32(plight[k]), f32(plight[k + 1u]), f32(plight[k + 2u])) * scale;
}

// The legacy tone 1 - e^-x, or none (filmic: the tone pass tones).
fn tonemap(x: f32) -> f32 {
    if (C.tone != 0u) {
        return x;
    }
    return 1.0 - exp_det(-max(x, 0.0));
}

fn hsv_to_rgb(h_in: f32, s: f32, v: f32) -> vec3<f32> {
    let h = h_in - floor(h_in);
    var out: vec3<f32>;
    for (var c = 0u; c < 3u; c++) {
        let n = 5.0 - 2.0 * f32(c);
        let k = (n + h * 6.0) % 6.0;
        let m = clamp(min(k, 4.0 - k), 0.0, 1.0);
        out[c] = v - v * s * m;
    }
    return out;
}

fn rgb_to_hsv(rgb: vec3<f32>) -> vec3<f32> {
    let r = rgb.x;
    let g = rgb.y;
    let b = rgb.z;
    let mx = max(max(r, g), b);
    let mn = min(min(r, g), b);
    let c = mx - mn;
    var h = 0.0;
    if (c <= 0.0) {
        h = 0.0;
    } else if (mx == r) {
        let x = (g - b) / c;
        h = select(x, x + 6.0, x < 0.0);
    } else if (mx == g) {
        h = (b - r) / c + 2.0;
    } else {
        h = (r - g) / c + 4.0;
    }
    var s = 0.0;
    if (mx > 0.0) {
        s = c / mx;
    }
    return vec3(h / 6.0, s, mx);
}

// atan2(y, x) / 2 pi, the CPU's polynomial (math::atan2_turns).
fn atan2_turns(y: f32, x: f32) -> f32 {
    let ax = abs(x);
    let ay = abs(y);
    let lo = min(ax, ay);
    let hi = max(ax, ay);
    if (hi == 0.0) {
        return 0.0;
    }
    let t = lo / hi;
    let t2 = t * t;
    var p = fma(t2, -0.0117212, 0.05265332);
    p = fma(t2, p, -0.11643287);
    p = fma(t2, p, 0.19354346);
    p = fma(t2, p, -0.33262347);
    p = fma(t2, p, 0.99997726);
    var a = p * t;
    if (ax < ay) {
        a = 0.5 * PI - a;
    }
    if (x < 0.0) {
        a = PI - a;
    }
    if (y < 0.0) {
        a = -a;
    }
    return a * (0.5 / PI);
}

// Taps of output pixel p along an axis of n source cells (cpu colorize::taps).
fn axis(p: u32, out_n: u32, src_n: u32) -> vec3<f32> {
    let x = min(max((f32(p) + 0.5) * f32(src_n) / f32(out_n) - 0.5, 0.0), f32(src_n - 1u));
    let i0 = u32(x);
    return vec3(f32(i0), f32(min(i0 + 1u, src_n - 1u)), x - f32(i0));
}

fn bilerp_face(f_is_u: bool, x: f32, y: f32) -> f32 {
    if (f_is_u) {
        let t = taps(C.w + 1u, C.h, x, y);
        return blend4(u[t.k], u[t.k + t.dx], u[t.k + t.dy], u[t.k + t.dy + t.dx], t);
    }
    let t = taps(C.w, C.h + 1u, x, y);
    return blend4(v[t.k], v[t.k + t.dx], v[t.k + t.dy], v[t.k + t.dy + t.dx], t);
}

// The temperature at a point in cell-centre space, bilinear.
fn sample_heat(x: f32, y: f32) -> f32 {
    let t = taps(C.w, C.h, x, y);
    return blend4(heat[t.k], heat[t.k + t.dx], heat[t.k + t.dy], heat[t.k + t.dy + t.dx], t);
}

// The fire palette of temperature t (times brightness): (hue, saturation, exposure).
fn fire(t_in: f32) -> vec3<f32> {
    var t = t_in;
    if (t != t || abs(t) > 3.0e38) {
        t = 0.0;
    }
    if (t >= 0.0) {
        return vec3(FIRE_HUE_TURNS * (1.0 - exp_det(-t)), exp_det(-t * FIRE_WHITENING), t * FIRE_EXPOSURE);
    }
    return vec3(COLD_HUE_TURNS, 1.0, -t * FIRE_EXPOSURE);
}

fn to_u8(x: f32) -> u32 {
    return u32(clamp(x * 255.0 + 0.5, 0.0, 255.0));
}

@compute @workgroup_size(WG, WG)
fn colorize(@builtin(global_invocation_id) id: vec3<u32>) {
    let px = id.x;
    let py = id.y;
    let width = C.out_w;
    let height = C.out_h;
    if (px >= width || py >= height) {
        return;
    }
    let brightness = max(C.brightness, 0.0);
    let saturation = clamp(C.saturation, 0.0, 1.0);
    let shift = C.hue_shift / 360.0;
    let ax = axis(px, width, C.dw);
    let ay = axis(height - 1u - py, height, C.dh);
    let i0 = u32(ax.x);
    let i1 = u32(ax.y);
    let j0 = u32(ay.x);
    let j1 = u32(ay.y);
    let fx = vec4(ax.z);
    let bottom = fma(fx, dye[j0 * C.dw + i1] - dye[j0 * C.dw + i0], dye[j0 * C.dw + i0]);
    let top = fma(fx, dye[j1 * C.dw + i1] - dye[j1 * C.dw + i0], dye[j1 * C.dw + i0]);
    let d = fma(vec4(ay.z), top - bottom, bottom);
    var rgb: vec3<f32>;
    if (C.color_mode == 0u) {
        rgb = vec3(tonemap(d.r * brightness), tonemap(d.g * brightness), tonemap(d.b * brightness));
        if (!(saturation == 1.0 && shift == 0.0)) {
            let hsv = rgb_to_hsv(rgb);
            rgb = hsv_to_rgb(hsv.x + shift, hsv.y * saturation, hsv.z);
        }
    } else if (C.color_mode == 1u) {
        let total = (d.r + d.g) + d.b;
        rgb = hsv_to_rgb(fma(total, DENSITY_HUE_TURNS, shift), saturation, tonemap(total * brightness));
    } else if (C.color_mode == 3u) {
        let x = (f32(px) + 0.5) * f32(C.w) / f32(width);
        let y = (f32(height) - f32(py) - 0.5) * f32(C.h) / f32(height);
        let f = fire(sample_heat(x - 0.5, y - 0.5) * brightness);
        rgb = hsv_to_rgb(f.x + shift, f.y * saturation, tonemap(f.z));
    } else {
        let x = (f32(px) + 0.5) * f32(C.w) / f32(width);
        let y = (f32(height) - f32(py) - 0.5) * f32(C.h) / f32(height);
        let uu = bilerp_face(true, x, y - 0.5);
        let vv = bilerp_face(false, x - 0.5, y);
        let speed = sqrt(fma(uu, uu, vv * vv));
        let value = tonemap(speed * VELOCITY_VALUE_SCALE * brightness);
        rgb = hsv_to_rgb(atan2_turns(vv, uu) + shift, saturation, value);
    }
    let idx = py * width + px;
    if (C.tone != 0u) {
        if (C.particle_lit != 0u) {
            rgb += particle_light(idx);
        }
        light[idx] = vec4(rgb, 0.0);
        return;
    }
    if (C.particle_lit != 0u) {
        // The legacy tone of the pixel's light plus the particles': 1 - (1 - tone) e^-p.
        let pl = particle_light(idx);
        let base = clamp(rgb, vec3(0.0), vec3(1.0));
        rgb = vec3(
            1.0 - (1.0 - base.x) * exp_det(-pl.x),
            1.0 - (1.0 - base.y) * exp_det(-pl.y),
            1.0 - (1.0 - base.z) * exp_det(-pl.z),
        );
    }
    frame[py * width + px] = to_u8(rgb.x) | (to_u8(rgb.y) << 8u) | (to_u8(rgb.z) << 16u) | (255u << 24u);
}
