//! The colour-mixing model, side by side: red and green dye meeting render yellow in the
//! filmic tone (dye as light, added, then a hue-preserving tone curve) and a dull olive in the
//! legacy tone (`1 - e^-x` per channel). `cargo test --test it mixing:: -- --ignored` writes the
//! comparison to `tests/screenshots/mixing.png` (legacy left, filmic middle, filmic with a
//! new instance's effects right).

use dyeflow::engine::{Discrete, Knobs};
use dyeflow::fluid::{ColorMode, Look, ToneMode, rgb_to_hsv};
use dyeflow::sim::grid::Fields;
use dyeflow::sim::grid::cpu::CpuSolver;
use dyeflow::sim::{SimConfig, Solver};

/// Each panel's size.
const W: usize = 320;
const H: usize = 240;

/// A red blob on the left and a green one on the right, overlapping in the middle, each
/// peaking at dye 1.2.
fn fields(cfg: &SimConfig) -> Fields {
    let mut f = Fields::zeros(cfg);
    let (dw, dh) = (f.dye_width, f.dye_height);
    for j in 0..dh {
        for i in 0..dw {
            let (x, y) = ((i as f32 + 0.5) / dh as f32, (j as f32 + 0.5) / dh as f32);
            let blob = |cx: f32| 1.2 * (-((x - cx).powi(2) + (y - 0.5).powi(2)) / 0.045).exp();
            f.dye[0][j * dw + i] = blob(0.52);
            f.dye[1][j * dw + i] = blob(0.81);
        }
    }
    f
}

/// The three panels (RGBA8, W x H each).
fn panels() -> [Vec<u8>; 3] {
    let cfg = SimConfig::new(4 * 32, 3 * 32);
    let mut s = CpuSolver::new(&cfg, 2).expect("solver threads");
    s.write_fields(&fields(&cfg));
    let legacy = Look {
        tone: ToneMode::Legacy,
        ..Look::default()
    };
    let params = dyeflow::params::DyeflowParams::default();
    let palette = Discrete::from_params(&params).palette;
    let show = Knobs::from_params(&params).look(ColorMode::Dye, ToneMode::Filmic, palette);
    [legacy, Look::default(), show].map(|look| {
        let look = Look {
            color_mode: ColorMode::Dye,
            ..look
        };
        let mut out = vec![0u8; W * H * 4];
        s.render(&look, W, H, &mut out);
        out
    })
}

/// HSV of the pixel where the blobs meet (half way between their centres).
fn meeting(panel: &[u8]) -> [f32; 3] {
    let x = (0.665 * H as f32) as usize;
    let i = (H / 2 * W + x) * 4;
    rgb_to_hsv([0, 1, 2].map(|c| f32::from(panel[i + c]) / 255.0))
}

#[test]
fn red_and_green_meet_as_yellow() {
    let [legacy, filmic, show] = panels();
    let [h, s, v] = meeting(&filmic);
    assert!(
        (h * 360.0 - 60.0).abs() < 6.0 && s > 0.9 && v > 0.5,
        "filmic: {h} {s} {v}"
    );
    let [h, s, v] = meeting(&show);
    assert!(
        (h * 360.0 - 60.0).abs() < 10.0 && s > 0.6 && v > 0.5,
        "effects: {h} {s} {v}"
    );
    // Legacy: the same hue, but dark and dull (olive): far less bright than the filmic one.
    let [_, _, v_legacy] = meeting(&legacy);
    assert!(v_legacy < 0.75 * meeting(&filmic)[2], "legacy {v_legacy}");
}

#[test]
#[ignore = "writes tests/screenshots/mixing.png"]
fn write_the_side_by_side() {
    let panels = panels();
    let gap = 4;
    let width = 3 * W + 2 * gap;
    let mut rgb = vec![255u8; width * H * 3];
    for (k, panel) in panels.iter().enumerate() {
        for y in 0..H {
            for x in 0..W {
                let (src, dst) = ((y * W + x) * 4, (y * width + k * (W + gap) + x) * 3);
                rgb[dst..dst + 3].copy_from_slice(&panel[src..src + 3]);
            }
        }
    }
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/screenshots/mixing.png");
    let file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let mut encoder = png::Encoder::new(file, width as u32, H as u32);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder
        .write_header()
        .unwrap()
        .write_image_data(&rgb)
        .unwrap();
}
