//! `--obstacles LAYOUT|MASK.png`: the obstacles of a render, a built-in layout by name or a
//! PNG image scaled to the simulation grid (white, or opaque where the image has
//! transparency, is solid; see [`Mask::from_rgba`]).

use super::{InputProblem, RenderError, read_input_until};
use crate::params::ObstacleSettings;
use crate::sim::obstacles::{Layout, Mask, is_bright};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// Largest mask image read, bytes (a PNG that large is far beyond any grid's detail).
pub const MAX_MASK_PNG_BYTES: u64 = 64 << 20;

/// Most pixels a mask image may have: 4096x4096, or any shape of as many (7680x2184...).
/// Checked in the PNG's header before anything of the image's size is allocated, since a
/// small file can hold a huge image (20000x20000 of one colour compresses to 400 kB). A grid
/// has at most as many cells (8192x2048), so more pixels add no detail. Decoding one takes 2
/// bytes a pixel (32 MiB at most) besides the file, and 4 more (64 MiB) for an interlaced PNG,
/// which is read whole.
pub const MAX_MASK_PIXELS: u64 = 1 << 24;

/// Rows decoded between looks at the stop flag.
const STOP_CHECK_ROWS: usize = 64;

/// The obstacles `--obstacles` names for a grid of `grid` cells: a bare name (no directory,
/// no extension) that is no file is a layout (any case); anything else a PNG file. `None`
/// when `stop` was set while the image was decoded.
pub fn obstacles_from(
    path: &Path,
    grid: (usize, usize),
    stop: &AtomicBool,
) -> Result<Option<ObstacleSettings>, RenderError> {
    let bare = path.components().count() == 1 && path.extension().is_none();
    if bare && !path.is_file() {
        return match Layout::from_id(&path.to_string_lossy()) {
            Some(layout) => Ok(Some(ObstacleSettings::layout(layout))),
            None => Err(RenderError::input(
                path,
                InputProblem::NoSuchLayout {
                    names: Layout::ALL.map(Layout::id).join(", "),
                },
            )),
        };
    }
    let Some(bytes) = read_input_until(path, MAX_MASK_PNG_BYTES, stop)? else {
        return Ok(None);
    };
    let Some((solid, w, h)) = decode_png(&bytes, stop).map_err(|e| match e {
        Decoded::TooManyPixels { width, height } => RenderError::input(
            path,
            InputProblem::ImageTooLarge {
                width,
                height,
                max: MAX_MASK_PIXELS,
            },
        ),
        Decoded::NotPng(why) => RenderError::input(path, InputProblem::NotPng(why)),
    })?
    else {
        return Ok(None);
    };
    let mask = Mask::from_pixels(&solid, w, h, grid.0, grid.1).ok_or_else(|| {
        RenderError::input(
            path,
            InputProblem::NotPng(format!("{w}x{h} pixels that do not add up")),
        )
    })?;
    Ok(Some(ObstacleSettings {
        layout: Layout::None,
        mask: if mask.is_empty() {
            String::new()
        } else {
            mask.encode()
        },
    }))
}

/// Why a PNG does not decode into a mask.
#[derive(Debug)]
enum Decoded {
    /// More than [`MAX_MASK_PIXELS`].
    TooManyPixels { width: u32, height: u32 },
    /// Not a PNG the decoder reads.
    NotPng(String),
}

/// A PNG's pixels as solid or not (rows top first; see [`Mask::from_rgba`] for the rule:
/// by alpha when any pixel is transparent, else by brightness), and its size; or why it does
/// not read; `None` when `stop` was set meanwhile.
fn decode_png(
    bytes: &[u8],
    stop: &AtomicBool,
) -> Result<Option<(Vec<bool>, usize, usize)>, Decoded> {
    let not_png = |e: ::png::DecodingError| Decoded::NotPng(e.to_string());
    let mut decoder = ::png::Decoder::new(std::io::Cursor::new(bytes));
    // Palettes and low bit depths to 8 bits per channel, 16 bits down to 8.
    decoder.set_transformations(::png::Transformations::normalize_to_color8());
    let header = decoder.read_header_info().map_err(not_png)?;
    let (width, height) = (header.width, header.height);
    if u64::from(width) * u64::from(height) > MAX_MASK_PIXELS {
        return Err(Decoded::TooManyPixels { width, height });
    }
    let interlaced = header.interlaced;
    let mut reader = decoder.read_info().map_err(not_png)?;
    let channels = match reader.output_color_type().0 {
        ::png::ColorType::Rgba => 4,
        ::png::ColorType::Rgb => 3,
        ::png::ColorType::GrayscaleAlpha => 2,
        ::png::ColorType::Grayscale => 1,
        ::png::ColorType::Indexed => {
            return Err(Decoded::NotPng(
                "a palette the decoder did not expand".into(),
            ));
        }
    };
    let (w, h) = (width as usize, height as usize);
    let mut flags: Vec<u8> = Vec::with_capacity(w * h);
    let mut classify = |row: &[u8]| {
        for p in row.chunks_exact(channels).take(w) {
            let (rgb, alpha) = match channels {
                4 => ([p[0], p[1], p[2]], p[3]),
                3 => ([p[0], p[1], p[2]], 255),
                2 => ([p[0]; 3], p[1]),
                _ => ([p[0]; 3], 255),
            };
            // Bit 0: bright, bit 1: opaque enough, bit 2: not fully opaque.
            flags.push(
                u8::from(is_bright(rgb))
                    | (u8::from(alpha >= 128) << 1)
                    | (u8::from(alpha < 255) << 2),
            );
        }
    };
    if interlaced {
        // Adam7 rows come pass by pass: the frame is read whole (bounded by the pixel cap).
        let size = reader
            .output_buffer_size()
            .ok_or_else(|| Decoded::NotPng("an image too large to decode".into()))?;
        let mut buf = vec![0; size];
        let info = reader.next_frame(&mut buf).map_err(not_png)?;
        for row in buf[..info.buffer_size()]
            .chunks_exact(info.line_size)
            .take(h)
        {
            classify(row);
        }
    } else {
        let mut rows = 0;
        while let Some(row) = reader.next_row().map_err(not_png)? {
            classify(row.data());
            rows += 1;
            if rows % STOP_CHECK_ROWS == 0 && stop.load(Ordering::Relaxed) {
                return Ok(None);
            }
        }
    }
    if flags.len() != w * h {
        return Err(Decoded::NotPng("its rows end early".into()));
    }
    let by_alpha = flags.iter().any(|f| f & 4 != 0);
    let bit = if by_alpha { 2 } else { 1 };
    Ok(Some((
        flags.into_iter().map(|f| f & bit != 0).collect(),
        w,
        h,
    )))
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

    /// No stop.
    fn go() -> AtomicBool {
        AtomicBool::new(false)
    }

    /// A PNG's signature and IHDR chunk for a `w x h` image, 8-bit, of `color`.
    fn header(w: u32, h: u32, color: u8) -> Vec<u8> {
        let mut ihdr = b"IHDR".to_vec();
        ihdr.extend_from_slice(&w.to_be_bytes());
        ihdr.extend_from_slice(&h.to_be_bytes());
        ihdr.extend_from_slice(&[8, color, 0, 0, 0]);
        let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
        out.extend_from_slice(&13u32.to_be_bytes());
        out.extend_from_slice(&ihdr);
        out.extend_from_slice(&crc32fast::hash(&ihdr).to_be_bytes());
        out
    }

    /// An image of more pixels than the cap is refused from its header, whatever the file's
    /// size, with its size and the cap; the largest allowed one decodes.
    #[test]
    fn images_are_limited_by_their_pixels_before_decoding() {
        let dir = scratch("huge");
        for (w, h, color) in [(20_000, 20_000, 0), (20_000, 20_000, 6), (4097, 4096, 0)] {
            let path = dir.join(format!("huge-{w}-{color}.png"));
            // Only the header: nothing of the image's size may be allocated before it is read.
            std::fs::write(&path, header(w, h, color)).unwrap();
            let err = obstacles_from(&path, (16, 9), &go()).unwrap_err();
            assert_eq!(err.exit_code(), 2);
            let text = err.to_string();
            assert!(
                text.contains(&format!("is {w}x{h} pixels"))
                    && text.contains(&format!("at most {MAX_MASK_PIXELS}")),
                "{text}"
            );
        }
        let (w, h) = (4096u32, 4096u32);
        let path = dir.join("largest.png");
        std::fs::write(
            &path,
            png(
                w,
                h,
                ::png::ColorType::Grayscale,
                &vec![255; (w * h) as usize],
            ),
        )
        .unwrap();
        let s = obstacles_from(&path, (16, 9), &go()).unwrap().unwrap();
        // Square, so fitted: 9x9 in the middle.
        assert_eq!(s.mask_at(16, 9).map(|m| m.solid_count()), Some(9 * 9));
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("dyeflow-mask-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// A grey image whose left half is white: the left half of the grid is solid, whatever
    /// the image's size; an image of another shape keeps it (fitted: 40x10 on 16x9 takes the
    /// middle 4 rows, 2 to 5).
    #[test]
    fn a_png_is_scaled_to_the_grid() {
        let dir = scratch("half");
        for (w, h, rows) in [(32u32, 18u32, 0..9), (160, 90, 0..9), (40, 10, 2..6)] {
            let grey: Vec<u8> = (0..h)
                .flat_map(|_| (0..w).map(move |x| if x < w / 2 { 255 } else { 0 }))
                .collect();
            let path = dir.join("half.png");
            std::fs::write(&path, png(w, h, ::png::ColorType::Grayscale, &grey)).unwrap();
            let s = obstacles_from(&path, (16, 9), &go()).unwrap().unwrap();
            let m = s.mask_at(16, 9).expect("solid cells");
            for j in 0..9 {
                for i in 0..16 {
                    let solid = i < 8 && rows.contains(&j);
                    assert_eq!(m.is_solid(i, j), solid, "{w}x{h}: ({i}, {j})");
                }
            }
        }
        // All black: nothing solid, no drawing.
        let black = dir.join("black.png");
        std::fs::write(&black, png(4, 4, ::png::ColorType::Grayscale, &[0; 16])).unwrap();
        assert_eq!(
            obstacles_from(&black, (16, 9), &go()).unwrap().unwrap(),
            ObstacleSettings::default()
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn names_layouts_and_bad_files_say_why() {
        let s = obstacles_from(Path::new("Pillars"), (16, 9), &go())
            .unwrap()
            .unwrap();
        assert_eq!(s, ObstacleSettings::layout(Layout::Pillars));
        let err = obstacles_from(Path::new("spiral"), (16, 9), &go())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("spiral: no such file or obstacle layout; the layouts are none, disc"),
            "{err}"
        );
        let dir = scratch("bad");
        let bad = dir.join("bad.png");
        std::fs::write(&bad, b"not a png at all").unwrap();
        let err = obstacles_from(&bad, (16, 9), &go()).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(
            err.to_string().contains("not a PNG image Dyeflow reads"),
            "{err}"
        );
        let missing = dir.join("missing.png");
        let err = obstacles_from(&missing, (16, 9), &go())
            .unwrap_err()
            .to_string();
        assert!(err.contains("file not found"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
