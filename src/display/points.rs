//! Points of light: how a point at a canvas position lands on the picture's pixels, and its
//! light in the fixed-point units ([`LIGHT_UNITS`]) the picture adds up. A model that draws
//! points (the grid fluid's particles: `sim/grid/cpu/particles.rs`, and `add_light` in
//! `shaders/particles.wgsl`, which mirrors this operation for operation) draws them with these
//! into the light it hands the picture ([`super::cpu::colorize::Source::particles`], or the
//! hook of [`super::gpu::GpuPicture::encode_colour`]); the particles' slots, their motion and
//! their fade stay the model's.

use super::LIGHT_UNITS;

/// The bilinear footprint of a point at canvas position `pos` in a `width x height` picture
/// (rows top first): the 2x2 pixels around it and their weights, the pixels off the picture
/// left out.
#[inline(always)]
pub fn footprint(pos: [f32; 2], aspect: f32, width: usize, height: usize) -> [(usize, f32); 4] {
    let sx = width as f32 / aspect.max(1e-6);
    let sy = height as f32;
    // Pixel-centre space: pixel (i, j)'s centre at (i, j), row 0 at the top.
    let x = pos[0] * sx - 0.5;
    let y = (1.0 - pos[1]) * sy - 0.5;
    let (x0, y0) = (x.floor(), y.floor());
    let (fx, fy) = (x - x0, y - y0);
    let mut taps = [(0, 0.0); 4];
    for (t, (dx, dy, wgt)) in [
        (0, 0, (1.0 - fx) * (1.0 - fy)),
        (1, 0, fx * (1.0 - fy)),
        (0, 1, (1.0 - fx) * fy),
        (1, 1, fx * fy),
    ]
    .into_iter()
    .enumerate()
    {
        let (i, j) = (x0 as i64 + dx, y0 as i64 + dy);
        if i >= 0 && j >= 0 && (i as usize) < width && (j as usize) < height {
            taps[t] = (j as usize * width + i as usize, wgt);
        }
    }
    taps
}

/// A particle's light on one channel at weight `w`, in fixed-point units: `w * light`
/// rounded to the nearest unit.
#[inline(always)]
pub fn light_units(light: f32, w: f32) -> u32 {
    (light * w * LIGHT_UNITS + 0.5) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The footprint's weights sum to 1 inside the picture, and a point at a pixel's centre
    /// lights that pixel alone.
    #[test]
    fn the_footprint_is_bilinear() {
        let (w, h) = (16, 9);
        let aspect = 16.0 / 9.0;
        let centre = [(5.5 / 16.0) * aspect, 1.0 - 3.5 / 9.0];
        let t = footprint(centre, aspect, w, h);
        let lit: Vec<_> = t.iter().filter(|(_, wt)| *wt > 1e-4).collect();
        assert_eq!(lit.len(), 1);
        assert_eq!(lit[0].0, 3 * w + 5);
        let t = footprint([0.71, 0.33], aspect, w, h);
        let sum: f32 = t.iter().map(|(_, wt)| wt).sum();
        assert!((sum - 1.0).abs() < 1e-5);
        // Off the picture, the taps outside weigh nothing.
        let t = footprint([0.0, 0.0], aspect, w, h);
        let sum: f32 = t.iter().map(|(_, wt)| wt).sum();
        assert!((sum - 0.25).abs() < 1e-5, "{sum}");
    }
}
