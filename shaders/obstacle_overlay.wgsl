// obstacle_overlay.wgsl: the obstacles drawn over the finished RGBA8 frame (after colorize
// and tone), filled or outlined. The mask (one u32 per cell, 1 solid, 0 fluid, row 0 at the
// bottom) is sampled bilinearly at each pixel centre, the frame stretched over the grid as
// colorize does (edges clamp); d = (s - 0.5) k, k pixels per cell, is about the signed
// distance to the boundary in pixels (inside positive). Fill: coverage clamp(d + 0.5, 0, 1);
// outline: clamp(half + 0.5 - |d|, 0, 1). Frame rows top first, RGBA8 packed little-endian
// in a u32. Mirrors cpu/obstacle_overlay.rs operation for operation.

struct Overlay {
    // Grid and frame sizes.
    w: u32,
    h: u32,
    out_w: u32,
    out_h: u32,
    // 0: fill, 1: outline.
    outline: u32,
    // Half the outline's width, pixels; pixels per cell.
    half: f32,
    k: f32,
    // The colour drawn, RGB8 packed little-endian (alpha byte unused).
    rgb: u32,
}

@group(0) @binding(0) var<uniform> O: Overlay;
@group(0) @binding(1) var<storage, read> mask: array<u32>;
@group(0) @binding(2) var<storage, read_write> frame: array<u32>;

// `tap` (common.wgsl): pixel centres over cell centres, clamped, as colorize samples.

fn cell(i: u32, j: u32) -> f32 {
    return f32(mask[j * O.w + i]);
}

@compute @workgroup_size(WG, WG)
fn obstacle_overlay(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x >= O.out_w || id.y >= O.out_h) {
        return;
    }
    let tx = tap(id.x, O.out_w, O.w);
    // Rows top first; the grid's row 0 is the bottom.
    let ty = tap(O.out_h - 1u - id.y, O.out_h, O.h);
    let bottom = fma(tx.f, cell(tx.i1, ty.i0) - cell(tx.i0, ty.i0), cell(tx.i0, ty.i0));
    let top = fma(tx.f, cell(tx.i1, ty.i1) - cell(tx.i0, ty.i1), cell(tx.i0, ty.i1));
    let s = fma(ty.f, top - bottom, bottom);
    let d = (s - 0.5) * O.k;
    var a: f32;
    if (O.outline != 0u) {
        a = clamp(O.half + 0.5 - abs(d), 0.0, 1.0);
    } else {
        a = clamp(d + 0.5, 0.0, 1.0);
    }
    if (a <= 0.0) {
        return;
    }
    let at = id.y * O.out_w + id.x;
    let rgb = vec3(f32(O.rgb & 0xffu), f32((O.rgb >> 8u) & 0xffu), f32((O.rgb >> 16u) & 0xffu));
    frame[at] = blend_rgb8(frame[at], rgb, a);
}
