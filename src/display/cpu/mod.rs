//! The display's CPU passes, one file per pass, each parallel over rows with rayon and
//! bit-identical for any thread count: [`colorize`] (light from the fields, and the legacy
//! tone), [`bloom`] and [`sunrays`] (the glow), [`tone`] (shading, glow, palette,
//! background, tone curve, sRGB, dither), [`picture`] (the stage that runs them over a frame, with
//! its buffers kept between frames), [`streamlines`] (a model's traced lines drawn over the
//! finished frame), [`obstacle_overlay`] (solids over it) and [`raymarch`] (the 3D liquid's light,
//! ray-marched through its volume).

pub mod bloom;
pub mod colorize;
pub mod obstacle_overlay;
pub mod picture;
pub mod raymarch;
pub mod streamlines;
pub mod sunrays;
pub mod tone;
