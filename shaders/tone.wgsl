// tone.wgsl: the filmic tone mode's last pass: the picture's light (linear RGB from
// colorize, any brightness) to sRGB-encoded, dithered RGBA8 pixels. Per pixel: every channel
// times the filmic curve's gain on the brightest one (hue-preserving), the exact sRGB transfer
// function, then floor(255 v + dither) with a fixed-point interleaved gradient noise that gives
// the CPU's bits. One u32 per pixel, bytes R, G, B, A; rows top first. Mirrors cpu/tone.rs.
// With effects (Q.effects), before the tone: shading by the relief of the light's compressed
// luminance (a stencil Q.step pixels wide, clamped at the edges), the glow (bloom.wgsl)
// sampled up bilinearly, a palette's gradient map of the luminance, and the background.

@group(0) @binding(0) var<uniform> C: Colour;
@group(0) @binding(1) var<storage, read> light: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> frame: array<u32>;
@group(0) @binding(3) var<uniform> Q: Picture;
@group(0) @binding(4) var<storage, read> glow: array<vec4<f32>>;

// Rec. 709 luminance (fluid::LUMA), cpu::bloom::BLOOM_MAX_LIGHT, fluid::PALETTE_HALF_LIGHT,
// cpu::tone::BG_COVER.
const LUMA: vec3<f32> = vec3<f32>(0.2126, 0.7152, 0.0722);
const MAX_LIGHT: f32 = 256.0;
const PALETTE_HALF_LIGHT: f32 = 0.5;
const BG_COVER: f32 = 4.0;

fn luma(c: vec3<f32>) -> f32 {
    return fma(LUMA.r, c.r, fma(LUMA.g, c.g, LUMA.b * c.b));
}

// The shading's height field at pixel i: compressed luminance of sane light, 0..1.
fn height_at(i: u32) -> f32 {
    let c = min(max(light[i].rgb, vec3<f32>(0.0)), vec3<f32>(MAX_LIGHT));
    let y = luma(c);
    return y / (1.0 + y);
}

// cpu::tone::shade.
fn shade(c: vec3<f32>, gx: f32, gy: f32) -> vec3<f32> {
    let nx = -gx * Q.relief;
    let ny = -gy * Q.relief;
    let lit = fma(nx, Q.light.x, fma(ny, Q.light.y, 1.0));
    let diffuse = lit / sqrt(fma(nx, nx, fma(ny, ny, 1.0)));
    let k = max(fma(Q.shade, diffuse - 1.0, 1.0), 0.0);
    return c * k;
}

// cpu::tone::VIBRANCE_GAIN.
const VIBRANCE_GAIN: f32 = 4.0;

// cpu::tone::vibrant: chroma around the luminance scaled by 1 + v (1 - s), at most until
// the dimmest channel reaches 0.
fn vibrant(c_in: vec3<f32>, v: f32) -> vec3<f32> {
    // fluid::FILMIC_MAX_LIGHT: the cap keeps the cross products finite.
    let c = min(max(c_in, vec3<f32>(0.0)), vec3<f32>(1.0e4));
    let y = luma(c);
    let hi = max(c.r, max(c.g, c.b));
    let lo = min(c.r, min(c.g, c.b));
    // want = (hi + g lo) / hi, room = y / (y - lo): the smaller, chosen by
    // cross-multiplying as the CPU does.
    let want_n = fma(v * VIBRANCE_GAIN, lo, hi);
    let want_d = max(hi, 1.0e-20);
    var k = want_n / want_d;
    if (lo < y && y * want_d < want_n * (y - lo)) {
        k = y / (y - lo);
    }
    k = max(k, 1.0);
    return fma(vec3<f32>(k), c - vec3<f32>(y), vec3<f32>(y));
}

// cpu::tone::grade: palette, vibrance, then background.
fn grade(c_in: vec3<f32>) -> vec3<f32> {
    var c = c_in;
    if (Q.palette != 0u) {
        let y = luma(c);
        let t = y / (y + PALETTE_HALF_LIGHT);
        let pos = t * 4.0;
        let i = min(u32(pos), 3u);
        let f = pos - f32(i);
        let a = Q.stops[i].rgb;
        let b = Q.stops[i + 1u].rgb;
        c = fma(vec3<f32>(f), b - a, a) * y;
    }
    if (Q.vibrance > 0.0) {
        c = vibrant(c, Q.vibrance);
    }
    let cover = 1.0 / fma(BG_COVER, luma(c), 1.0);
    return fma(Q.background.rgb, vec3<f32>(cover), c);
}

// The glow at pixel (px, py): bilinear from Q.glow_w x Q.glow_h (cpu::picture's order:
// vertical first, then horizontal).
fn glow_at(px: u32, py: u32) -> vec3<f32> {
    let gw = Q.glow_w;
    let ty = tap(py, C.out_h, Q.glow_h);
    let tx = tap(px, C.out_w, gw);
    let a0 = glow[ty.i0 * gw + tx.i0].rgb;
    let b0 = glow[ty.i1 * gw + tx.i0].rgb;
    let a1 = glow[ty.i0 * gw + tx.i1].rgb;
    let b1 = glow[ty.i1 * gw + tx.i1].rgb;
    let left = fma(vec3<f32>(ty.f), b0 - a0, a0);
    let right = fma(vec3<f32>(ty.f), b1 - a1, a1);
    return fma(vec3<f32>(tx.f), right - left, left);
}

// f(m) / m of Narkowicz's ACES fit, capped so that the brightest channel reaches 1
// (fluid::filmic_ratio).
fn filmic_ratio(m_in: f32) -> f32 {
    // fluid::FILMIC_MAX_LIGHT: past 7.24 the cap decides, and m * m cannot overflow.
    let m = clamp(m_in, 0.0, 1.0e4);
    let n = fma(m, 2.51, 0.03);
    let d = fma(m, fma(m, 2.43, 0.59), 0.14);
    // The smaller of n / d and the cap 1.000001 / m, chosen by cross-multiplying as the CPU
    // does (one division there).
    if (n * m > 1.000001 * d) {
        return 1.000001 / m;
    }
    return n / d;
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
fn tone(@builtin(global_invocation_id) id: vec3<u32>) {
    let px = id.x;
    let py = id.y;
    if (px >= C.out_w || py >= C.out_h) {
        return;
    }
    let i = py * C.out_w + px;
    var c = light[i].rgb;
    if (Q.effects != 0u) {
        if (Q.shade > 0.0) {
            let w = C.out_w;
            let row = py * w;
            let left = row + select(0u, px - Q.step, px >= Q.step);
            let right = row + min(px + Q.step, w - 1u);
            let above = select(0u, py - Q.step, py >= Q.step) * w + px;
            let below = min(py + Q.step, C.out_h - 1u) * w + px;
            let gx = height_at(right) - height_at(left);
            let gy = height_at(above) - height_at(below);
            c = shade(c, gx, gy);
        }
        if (Q.glow != 0u) {
            c = c + glow_at(px, py);
        }
        c = grade(c);
    }
    let k = filmic_ratio(max(max(c.r, c.g), c.b));
    let d = dither(px, py);
    let r = quantise(srgb_encode(c.r * k), d);
    let g = quantise(srgb_encode(c.g * k), d);
    let b = quantise(srgb_encode(c.b * k), d);
    frame[i] = r | (g << 8u) | (b << 16u) | (255u << 24u);
}
