//! `--obstacles LAYOUT|MASK.png`: the obstacles of a render, a built-in layout by name or a
//! PNG image scaled to the simulation grid (white, or opaque where the image has
//! transparency, is solid; see [`Mask::from_rgba`]).

use super::{InputProblem, RenderError, read_input};
use crate::params::ObstacleSettings;
use crate::sim::obstacles::{Layout, Mask};
use std::path::Path;

/// Largest mask image read, bytes (a PNG that large is far beyond any grid's detail).
pub const MAX_MASK_PNG_BYTES: u64 = 64 << 20;

/// The obstacles `--obstacles` names for a grid of `grid` cells: a bare name (no directory,
/// no extension) that is no file is a layout (any case); anything else a PNG file. Also
/// whether anything is solid.
pub fn obstacles_from(path: &Path, grid: (usize, usize)) -> Result<ObstacleSettings, RenderError> {
    let bare = path.components().count() == 1 && path.extension().is_none();
    if bare && !path.is_file() {
        return match Layout::from_id(&path.to_string_lossy()) {
            Some(layout) => Ok(ObstacleSettings::layout(layout)),
            None => Err(RenderError::input(
                path,
                InputProblem::NoSuchLayout {
                    names: Layout::ALL.map(Layout::id).join(", "),
                },
            )),
        };
    }
    let bytes = read_input(path, MAX_MASK_PNG_BYTES)?;
    let (rgba, w, h) =
        decode_png(&bytes).map_err(|why| RenderError::input(path, InputProblem::NotPng(why)))?;
    let mask = Mask::from_rgba(&rgba, w, h, grid.0, grid.1).ok_or_else(|| {
        RenderError::input(
            path,
            InputProblem::NotPng(format!("{w}x{h} pixels that do not add up")),
        )
    })?;
    Ok(ObstacleSettings {
        layout: Layout::None,
        mask: if mask.is_empty() {
            String::new()
        } else {
            mask.encode()
        },
    })
}

/// A PNG's pixels as RGBA8 rows (top first), and its size; or why it does not read.
fn decode_png(bytes: &[u8]) -> Result<(Vec<u8>, usize, usize), String> {
    let mut decoder = ::png::Decoder::new(std::io::Cursor::new(bytes));
    // Palettes and low bit depths to 8 bits per channel, 16 bits down to 8.
    decoder.set_transformations(::png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().map_err(|e| e.to_string())?;
    let size = reader
        .output_buffer_size()
        .ok_or_else(|| "an image too large to decode".to_owned())?;
    let mut buf = vec![0; size];
    let info = reader.next_frame(&mut buf).map_err(|e| e.to_string())?;
    let (w, h) = (info.width as usize, info.height as usize);
    let n = w * h;
    let rgba = match info.color_type {
        ::png::ColorType::Rgba => buf[..n * 4].to_vec(),
        ::png::ColorType::Rgb => buf[..n * 3]
            .chunks_exact(3)
            .flat_map(|p| [p[0], p[1], p[2], 255])
            .collect(),
        ::png::ColorType::GrayscaleAlpha => buf[..n * 2]
            .chunks_exact(2)
            .flat_map(|p| [p[0], p[0], p[0], p[1]])
            .collect(),
        ::png::ColorType::Grayscale => buf[..n].iter().flat_map(|&g| [g, g, g, 255]).collect(),
        ::png::ColorType::Indexed => return Err("a palette the decoder did not expand".into()),
    };
    Ok((rgba, w, h))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(w: u32, h: u32, color: ::png::ColorType, data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut e = ::png::Encoder::new(&mut out, w, h);
        e.set_color(color);
        e.set_depth(::png::BitDepth::Eight);
        let mut writer = e.write_header().unwrap();
        writer.write_image_data(data).unwrap();
        writer.finish().unwrap();
        out
    }

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("dyeflow-mask-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// A grey image whose left half is white: the left half of the grid is solid, whatever
    /// the image's size.
    #[test]
    fn a_png_is_scaled_to_the_grid() {
        let dir = scratch("half");
        let (w, h) = (40u32, 10u32);
        let grey: Vec<u8> = (0..h)
            .flat_map(|_| (0..w).map(move |x| if x < w / 2 { 255 } else { 0 }))
            .collect();
        let path = dir.join("half.png");
        std::fs::write(&path, png(w, h, ::png::ColorType::Grayscale, &grey)).unwrap();
        let s = obstacles_from(&path, (16, 9)).unwrap();
        let m = s.mask_at(16, 9).expect("solid cells");
        for j in 0..9 {
            for i in 0..16 {
                assert_eq!(m.is_solid(i, j), i < 8, "({i}, {j})");
            }
        }
        // All black: nothing solid, no drawing.
        let black = dir.join("black.png");
        std::fs::write(&black, png(4, 4, ::png::ColorType::Grayscale, &[0; 16])).unwrap();
        assert_eq!(
            obstacles_from(&black, (16, 9)).unwrap(),
            ObstacleSettings::default()
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn names_layouts_and_bad_files_say_why() {
        let s = obstacles_from(Path::new("Pillars"), (16, 9)).unwrap();
        assert_eq!(s, ObstacleSettings::layout(Layout::Pillars));
        let err = obstacles_from(Path::new("spiral"), (16, 9))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("spiral: no such file or obstacle layout; the layouts are none, disc"),
            "{err}"
        );
        let dir = scratch("bad");
        let bad = dir.join("bad.png");
        std::fs::write(&bad, b"not a png at all").unwrap();
        let err = obstacles_from(&bad, (16, 9)).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(
            err.to_string().contains("not a PNG image Dyeflow reads"),
            "{err}"
        );
        let missing = dir.join("missing.png");
        let err = obstacles_from(&missing, (16, 9)).unwrap_err().to_string();
        assert!(err.contains("file not found"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
