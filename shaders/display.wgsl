// display.wgsl: the filmic tone mode's last pass: the picture's light (linear RGB from
// colorize, any brightness) to sRGB-encoded, dithered RGBA8 pixels. Per pixel: every channel
// times the filmic curve's gain on the brightest one (hue-preserving), the exact sRGB transfer
// function, then floor(255 v + dither) with a fixed-point interleaved gradient noise that gives
// the CPU's bits. One u32 per pixel, bytes R, G, B, A; rows top first. Mirrors cpu/display.rs.

@group(0) @binding(0) var<uniform> P: Params;
@group(0) @binding(1) var<storage, read> light: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> frame: array<u32>;

// f(m) / m of Narkowicz's ACES fit, capped so that the brightest channel reaches 1
// (fluid::filmic_ratio).
fn filmic_ratio(m_in: f32) -> f32 {
    // fluid::FILMIC_MAX_LIGHT: past 7.24 the cap decides, and m * m cannot overflow.
    let m = clamp(m_in, 0.0, 1.0e4);
    let r = fma(m, 2.51, 0.03) / fma(m, fma(m, 2.43, 0.59), 0.14);
    if (m > 0.0) {
        return min(r, 1.000001 / m);
    }
    return r;
}

// IEC 61966-2-1 (fluid::srgb_encode).
fn srgb_encode(x_in: f32) -> f32 {
    let x = clamp(x_in, 0.0, 1.0);
    if (x <= 0.0031308) {
        return 12.92 * x;
    }
    if (x >= 1.0) {
        return 1.0;
    }
    return 1.055 * pow(x, 1.0 / 2.4) - 0.055;
}

// Interleaved gradient noise in 24-bit fixed point (fluid::dither): in [0, 1).
fn dither(x: u32, y: u32) -> f32 {
    let a = (x * 1125928u + y * 97931u) & 0xffffffu;
    let b = a * 13564u;
    return f32(b >> 8u) * (1.0 / 16777216.0);
}

fn quantise(v: f32, d: f32) -> u32 {
    return u32(clamp(fma(255.0, v, d), 0.0, 255.0));
}

@compute @workgroup_size(WG, WG)
fn display(@builtin(global_invocation_id) id: vec3<u32>) {
    let px = id.x;
    let py = id.y;
    if (px >= P.out_w || py >= P.out_h) {
        return;
    }
    let i = py * P.out_w + px;
    let c = light[i].rgb;
    let k = filmic_ratio(max(max(c.r, c.g), c.b));
    let d = dither(px, py);
    let r = quantise(srgb_encode(c.r * k), d);
    let g = quantise(srgb_encode(c.g * k), d);
    let b = quantise(srgb_encode(c.b * k), d);
    frame[i] = r | (g << 8u) | (b << 16u) | (255u << 24u);
}
