//! The display's CPU passes, one file per pass, each parallel over rows with rayon and
//! bit-identical for any thread count: [`colorize`] (light from the fields, and the legacy
//! tone), [`bloom`] and [`sunrays`] (the glow), [`display`] (shading, glow, palette,
//! background, tone, sRGB, dither), [`picture`] (the stage that runs them over a frame, with
//! its buffers kept between frames) and [`obstacle_overlay`] (solids over the finished frame).

pub mod bloom;
pub mod colorize;
pub mod display;
pub mod obstacle_overlay;
pub mod picture;
pub mod sunrays;
