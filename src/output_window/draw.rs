//! The output window itself: a baseview window with an OpenGL context, drawn from a timer.
//!
//! Drawing is one texture upload per new fluid frame and one framebuffer blit per draw: the
//! frame (at most the dye grid's size) is scaled up by the display's GPU with linear filtering,
//! centred at the canvas aspect with black bars. No shader, so nothing to compile or to fail on
//! an old driver.
//!
//! Pacing: the window draws at its monitor's refresh rate. baseview's own redraw pacing waits
//! two vertical blanks between frames (30 fps at 60 Hz), so the window runs a 2 ms timer and
//! draws when at least 0.8 of the monitor's period has passed since the last draw. Where the driver's buffer swap waits for the vertical blank, that lands every
//! draw on a blank; where it does not (software GL), the draws still come once per period.
//!
//! Keys: Esc leaves fullscreen; F11 (or F) toggles it; a double click toggles it too.

use super::{FrameCap, Live, OnChange, Placement, TITLE};
use crate::frame::FrameOutput;
use glow::HasContext;
use keyboard_types::{Code, KeyState};
#[cfg(any(target_os = "linux", windows))]
use nice_plug_egui::baseview::MouseCursor;
use nice_plug_egui::baseview::{
    Event, EventStatus, HandlerError, MouseButton, MouseEvent, TimerHandle, Window, WindowContext,
    WindowEvent, WindowHandler, WindowSettings, WindowSize, dpi::PhysicalSize, gl::GlConfig,
};
use parking_lot::Mutex;
use std::cell::{Cell, RefCell};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// How often the window looks for a frame to draw: often enough for a 240 Hz monitor (it
/// draws once 0.8 of the monitor's period has passed).
const TICK: Duration = Duration::from_millis(2);

/// A press of a key less than this after its release is an auto-repeat (X11 sends both at once).
const KEY_REPEAT_GAP: Duration = Duration::from_millis(30);

/// Two clicks closer than this are a double click.
const DOUBLE_CLICK: Duration = Duration::from_millis(400);

/// A handler error saying `what`.
fn failure(what: impl std::fmt::Display) -> HandlerError {
    HandlerError::from_boxed(what.to_string().into())
}

/// What the window's thread needs.
pub(super) struct Setup {
    pub frames: Arc<Mutex<FrameOutput>>,
    pub cap: FrameCap,
    pub on_change: OnChange,
    pub live: Arc<Live>,
    pub placement: Placement,
}

/// The window's settings for `placement`.
fn settings(placement: &Placement) -> WindowSettings {
    let size = PhysicalSize::new(placement.width, placement.height);
    WindowSettings::new()
        .with_title(TITLE)
        .with_size(size)
        .with_resizable(true)
        .with_fallback_scale_factor(1.0)
        .with_gl_config(GlConfig {
            // The frames are sRGB already: the framebuffer must not encode them again.
            srgb: false,
            depth_bits: 0,
            stencil_bits: 0,
            ..GlConfig::default()
        })
}

/// macOS: make the window on this thread (the main one) and show it; the host's run loop
/// drives it from then on, and dropping the handle closes it. The handler reports its end
/// when it is dropped.
#[cfg(target_os = "macos")]
pub(super) fn create(setup: Setup) -> Result<Window, String> {
    let settings = settings(&setup.placement);
    let window = Window::create(settings, move |ctx| {
        Handler::new(ctx, setup).map_err(failure)
    })
    .map_err(|e| e.to_string())?;
    window.show().map_err(|e| e.to_string())?;
    Ok(window)
}

/// The window's thread: open the window, run it until it closes, and report.
#[cfg(not(target_os = "macos"))]
pub(super) fn run(setup: Setup) {
    let live = setup.live.clone();
    let frames = setup.frames.clone();
    let settings = settings(&setup.placement);
    let result = Window::create(settings, move |ctx| {
        Handler::new(ctx, setup).map_err(failure)
    })
    .and_then(Window::run_until_closed);
    if result.is_err() {
        // baseview may return without joining its window thread when the window ended early:
        // keep the library loaded for that thread.
        crate::pin::pin_library();
    }
    frames.lock().request(0, 0);
    let mut status = live.status.lock();
    status.open = false;
    status.fps = 0.0;
    if let Err(e) = result {
        nice_plug::nice_error!("The output window failed: {e}");
        status.error = Some(format!("the output window failed: {e}"));
    }
}

/// The GL objects.
struct Gl {
    gl: glow::Context,
    texture: glow::Texture,
    framebuffer: glow::Framebuffer,
}

/// The drawing state.
struct Picture {
    /// The texture's size (0 x 0: nothing uploaded yet).
    size: (usize, usize),
    serial: u64,
    /// Something changed since the last draw (a frame, the window's size, an expose).
    dirty: bool,
    last_draw: Option<Instant>,
    /// Frames shown since `since`.
    shown: u32,
    since: Instant,
}

struct Handler {
    ctx: WindowContext,
    gl: Gl,
    frames: Arc<Mutex<FrameOutput>>,
    cap: FrameCap,
    on_change: OnChange,
    live: Arc<Live>,
    #[cfg(any(target_os = "linux", windows))]
    placer: Option<super::platform::Placer>,
    placement: RefCell<Placement>,
    /// The window's size in pixels.
    size: Cell<(u32, u32)>,
    picture: RefCell<Picture>,
    /// The refresh period being drawn at.
    period: Cell<Duration>,
    last_click: Cell<Option<Instant>>,
    /// The size the last placement asked for: a resize to it is ours, not the user's.
    placed: Cell<Option<(u32, u32)>>,
    /// A placement is being applied: resizes now are ours (Windows reports them at once,
    /// before the placement's size is known here).
    placing: Cell<bool>,
    /// The key held down, and the last key let go and when (baseview reports auto-repeats as
    /// presses; on X11 as releases and presses at the same instant).
    held: Cell<Option<Code>>,
    released: Cell<Option<(Code, Instant)>>,
    /// The drawing timer's handle.
    timer: RefCell<Option<TimerHandle>>,
}

impl Handler {
    fn new(ctx: WindowContext, setup: Setup) -> Result<Self, String> {
        let context = ctx
            .gl_context()
            .ok_or_else(|| "no OpenGL context".to_owned())?;
        // SAFETY: the context belongs to this window and this thread; it is made current
        // before any GL call and the loader is the context's own.
        let gl = unsafe {
            context.make_current().map_err(|e| e.to_string())?;
            glow::Context::from_loader_function_cstr(|s| context.get_proc_address(s))
        };
        // SAFETY: the context is current; the objects are created and configured on it.
        let (texture, framebuffer) = unsafe {
            let texture = gl.create_texture()?;
            gl.bind_texture(glow::TEXTURE_2D, Some(texture));
            for (name, value) in [
                (glow::TEXTURE_MIN_FILTER, glow::LINEAR),
                (glow::TEXTURE_MAG_FILTER, glow::LINEAR),
                (glow::TEXTURE_WRAP_S, glow::CLAMP_TO_EDGE),
                (glow::TEXTURE_WRAP_T, glow::CLAMP_TO_EDGE),
            ] {
                gl.tex_parameter_i32(glow::TEXTURE_2D, name, value as i32);
            }
            let framebuffer = gl.create_framebuffer()?;
            let _ = context.make_not_current();
            (texture, framebuffer)
        };
        #[cfg(any(target_os = "linux", windows))]
        let placer = {
            use raw_window_handle::{HasWindowHandle, RawWindowHandle};
            let raw = ctx.window_handle().map(|h| h.as_raw());
            #[cfg(target_os = "linux")]
            let id = match raw {
                Ok(RawWindowHandle::Xcb(h)) => Some(h.window.get()),
                Ok(RawWindowHandle::Xlib(h)) => u32::try_from(h.window).ok(),
                _ => None,
            };
            #[cfg(windows)]
            let id = match raw {
                Ok(RawWindowHandle::Win32(h)) => Some(h.hwnd.get() as *mut std::ffi::c_void),
                _ => None,
            };
            match id.map(super::platform::Placer::new) {
                Some(Ok(p)) => Some(p),
                Some(Err(e)) => {
                    setup.live.status.lock().error = Some(e);
                    None
                }
                None => None,
            }
        };
        let size = ctx.size().physical;
        let handler = Self {
            ctx,
            gl: Gl {
                gl,
                texture,
                framebuffer,
            },
            frames: setup.frames,
            cap: setup.cap,
            on_change: setup.on_change,
            live: setup.live,
            #[cfg(any(target_os = "linux", windows))]
            placer,
            placement: RefCell::new(setup.placement),
            size: Cell::new((size.width, size.height)),
            picture: RefCell::new(Picture {
                size: (0, 0),
                serial: 0,
                dirty: true,
                last_draw: None,
                shown: 0,
                since: Instant::now(),
            }),
            period: Cell::new(Duration::from_secs_f64(1.0 / 60.0)),
            last_click: Cell::new(None),
            placed: Cell::new(None),
            placing: Cell::new(false),
            held: Cell::new(None),
            released: Cell::new(None),
            timer: RefCell::new(None),
        };
        // Placed before it is first shown: a window manager honours the position then.
        handler.apply_wanted();
        // Where the placement resized the window at once (Windows, before this handler existed
        // to hear of it), it draws at the new size.
        let s = handler.ctx.size().physical;
        handler.size.set((s.width, s.height));
        let timer = handler.ctx.create_timer(TICK).map_err(|e| e.to_string())?;
        *handler.timer.borrow_mut() = Some(timer);
        Ok(handler)
    }

    /// Apply a placement the controller asked for, if any.
    fn apply_wanted(&self) {
        if let Some(title) = self.live.title.lock().take() {
            #[cfg(any(target_os = "linux", windows))]
            if let Some(placer) = &self.placer
                && let Err(e) = placer.set_title(&title)
            {
                self.live.status.lock().error = Some(e);
            }
            #[cfg(not(any(target_os = "linux", windows)))]
            let _ = title;
        }
        let Some(wanted) = self.live.wanted.lock().take() else {
            return;
        };
        // Its own placement coming back (the project followed what the window did) changes
        // nothing: placing it again would drop fullscreen for a moment.
        if wanted != *self.placement.borrow() || self.placed.get().is_none() {
            self.place(wanted);
        }
    }

    /// Show the window as `placement` asks, and report where it is.
    fn place(&self, placement: Placement) {
        *self.placement.borrow_mut() = placement.clone();
        #[cfg(any(target_os = "linux", windows))]
        if let Some(placer) = &self.placer {
            // The display server's round trips run without the status lock (the editor reads it
            // every frame).
            self.placing.set(true);
            let placed = placer.place(&placement);
            self.placing.set(false);
            let _ = self.ctx.set_mouse_cursor(if placement.fullscreen {
                MouseCursor::Hidden
            } else {
                MouseCursor::Default
            });
            match placed {
                Ok((monitor, rect)) => {
                    self.placed.set(Some((rect.width, rect.height)));
                    self.set_refresh(monitor.refresh_hz);
                    let mut status = self.live.status.lock();
                    status.rect = rect;
                    status.monitor = Some(monitor);
                    status.error = None;
                }
                Err(e) => self.live.status.lock().error = Some(e),
            }
            return;
        }
        // Elsewhere: the windowed size only.
        self.placed.set(Some((placement.width, placement.height)));
        let _ = self
            .ctx
            .resize(PhysicalSize::new(placement.width, placement.height));
        if placement.fullscreen {
            self.live.status.lock().error =
                Some("fullscreen is only available on X11 and Windows so far".into());
        }
    }

    /// Draw at `hz` (the monitor's refresh rate, known where the window is placed on a
    /// monitor: X11 and Windows).
    #[cfg(any(target_os = "linux", windows))]
    fn set_refresh(&self, hz: f64) {
        let hz = if hz.is_finite() {
            hz.clamp(10.0, 1000.0)
        } else {
            60.0
        };
        self.live.status.lock().refresh_hz = hz;
        self.period.set(Duration::from_secs_f64(1.0 / hz));
    }

    /// Toggle fullscreen (a key, a double click), and tell the project.
    fn set_fullscreen(&self, on: bool) {
        let mut p = self.placement.borrow().clone();
        if p.fullscreen == on {
            return;
        }
        p.fullscreen = on;
        // The project first: whoever sees the window change (the user, a test reading the
        // project once the window has moved) finds the project already saying so.
        (self.on_change)(&p, true);
        self.place(p);
    }

    /// The frame size to ask for: the window's picture area, no finer than the dye grid.
    fn wanted_frame(&self) -> (usize, usize) {
        let (w, h) = self.size.get();
        crate::frame::frame_for((w as f32, h as f32), (self.cap)())
    }

    /// Take the newest frame into the texture, if there is a new one.
    fn upload(&self) {
        let mut frames = self.frames.lock();
        let (w, h) = self.wanted_frame();
        frames.request(w, h);
        if !frames.has_new() {
            return;
        }
        let f = frames.latest();
        let mut pic = self.picture.borrow_mut();
        if f.serial == pic.serial || f.width == 0 || f.height == 0 {
            return;
        }
        let gl = &self.gl.gl;
        let (fw, fh) = (f.width as i32, f.height as i32);
        // SAFETY: the context is current (see `draw`); the pixel slice holds exactly
        // `width * height` RGBA8 pixels, rows tightly packed.
        unsafe {
            gl.bind_texture(glow::TEXTURE_2D, Some(self.gl.texture));
            gl.pixel_store_i32(glow::UNPACK_ALIGNMENT, 1);
            let pixels = glow::PixelUnpackData::Slice(Some(&f.pixels));
            if pic.size != (f.width, f.height) {
                gl.tex_image_2d(
                    glow::TEXTURE_2D,
                    0,
                    glow::RGBA8 as i32,
                    fw,
                    fh,
                    0,
                    glow::RGBA,
                    glow::UNSIGNED_BYTE,
                    pixels,
                );
                gl.bind_framebuffer(glow::READ_FRAMEBUFFER, Some(self.gl.framebuffer));
                gl.framebuffer_texture_2d(
                    glow::READ_FRAMEBUFFER,
                    glow::COLOR_ATTACHMENT0,
                    glow::TEXTURE_2D,
                    Some(self.gl.texture),
                    0,
                );
                pic.size = (f.width, f.height);
            } else {
                gl.tex_sub_image_2d(
                    glow::TEXTURE_2D,
                    0,
                    0,
                    0,
                    fw,
                    fh,
                    glow::RGBA,
                    glow::UNSIGNED_BYTE,
                    pixels,
                );
            }
        }
        pic.serial = f.serial;
        pic.dirty = true;
        pic.shown += 1;
    }

    /// Draw if a period has passed and something changed.
    fn tick(&self) -> Result<(), HandlerError> {
        if self.live.close.load(Ordering::Acquire) {
            self.ctx.request_close();
            return Ok(());
        }
        self.apply_wanted();
        let period = self.period.get();
        {
            let pic = self.picture.borrow();
            if pic
                .last_draw
                .is_some_and(|t| t.elapsed() < period.mul_f32(0.8))
            {
                return Ok(());
            }
        }
        let context = self
            .ctx
            .gl_context()
            .ok_or_else(|| failure("no OpenGL context"))?;
        // SAFETY: the context is this window's, used on its thread only.
        unsafe { context.make_current() }.map_err(failure)?;
        self.upload();
        let mut pic = self.picture.borrow_mut();
        if pic.dirty {
            pic.dirty = false;
            pic.last_draw = Some(Instant::now());
            self.blit(pic.size);
            context.swap_buffers().map_err(failure)?;
        }
        // SAFETY: as above.
        let _ = unsafe { context.make_not_current() };
        let elapsed = pic.since.elapsed().as_secs_f32();
        if elapsed >= 0.5 {
            self.live.status.lock().fps = pic.shown as f32 / elapsed;
            pic.shown = 0;
            pic.since = Instant::now();
        }
        Ok(())
    }

    /// Clear to black and blit the texture into the largest centred rectangle of its aspect,
    /// top row up.
    fn blit(&self, (fw, fh): (usize, usize)) {
        let gl = &self.gl.gl;
        let (w, h) = self.size.get();
        // SAFETY: the context is current; the read framebuffer holds the texture whenever
        // its size is non-zero.
        unsafe {
            gl.bind_framebuffer(glow::DRAW_FRAMEBUFFER, None);
            gl.viewport(0, 0, w as i32, h as i32);
            gl.disable(glow::SCISSOR_TEST);
            gl.disable(glow::FRAMEBUFFER_SRGB);
            gl.clear_color(0.0, 0.0, 0.0, 1.0);
            gl.clear(glow::COLOR_BUFFER_BIT);
            if fw == 0 || fh == 0 {
                return;
            }
            let r = fit((w, h), fw as f32 / fh as f32);
            gl.bind_framebuffer(glow::READ_FRAMEBUFFER, Some(self.gl.framebuffer));
            gl.blit_framebuffer(
                0,
                0,
                fw as i32,
                fh as i32,
                r.0,
                r.1 + r.3,
                r.0 + r.2,
                r.1,
                glow::COLOR_BUFFER_BIT,
                glow::LINEAR,
            );
        }
    }
}

/// The largest rectangle of `aspect` centred in `w x h`: (x, y, width, height), y from the
/// bottom.
fn fit((w, h): (u32, u32), aspect: f32) -> (i32, i32, i32, i32) {
    let (w, h) = (w as f32, h as f32);
    let (rw, rh) = if w / h.max(1.0) > aspect {
        (h * aspect, h)
    } else {
        (w, w / aspect)
    };
    (
        ((w - rw) / 2.0).round() as i32,
        ((h - rh) / 2.0).round() as i32,
        rw.round() as i32,
        rh.round() as i32,
    )
}

impl WindowHandler for Handler {
    fn draw(&self) -> Result<(), HandlerError> {
        self.picture.borrow_mut().dirty = true;
        self.tick()
    }

    fn resized(&self, new_size: WindowSize) -> Result<(), HandlerError> {
        let s = new_size.physical;
        self.size.set((s.width, s.height));
        self.picture.borrow_mut().dirty = true;
        // A window manager (or the user through it) resized the windowed window: the project
        // keeps the new size. Not the size a placement asked for (a saved size larger than its
        // monitor stays saved), and not in fullscreen.
        // Ours until a resize to another size comes (the user's, through the window manager).
        let ours = self.placing.get() || self.placed.get() == Some((s.width, s.height));
        if !ours {
            self.placed.set(None);
        }
        let mut p = self.placement.borrow_mut();
        if !ours && !p.fullscreen && (p.width, p.height) != (s.width, s.height) && s.width > 0 {
            p.width = s.width;
            p.height = s.height;
            let p = p.sanitized();
            (self.on_change)(&p, true);
        }
        Ok(())
    }

    fn on_event(&self, event: Event) -> EventStatus {
        match event {
            Event::Keyboard(k) if k.state == KeyState::Up => {
                if self.held.get() == Some(k.code) {
                    self.held.set(None);
                }
                self.released.set(Some((k.code, Instant::now())));
                EventStatus::Ignored
            }
            Event::Keyboard(k) if k.state == KeyState::Down => {
                // A held key toggles once: its repeats come as presses, or as a release and a
                // press together.
                let repeat = self.held.replace(Some(k.code)) == Some(k.code)
                    || self
                        .released
                        .get()
                        .is_some_and(|(c, t)| c == k.code && t.elapsed() < KEY_REPEAT_GAP);
                if repeat {
                    return EventStatus::Captured;
                }
                let full = self.placement.borrow().fullscreen;
                match k.code {
                    Code::Escape if full => self.set_fullscreen(false),
                    Code::F11 | Code::KeyF => self.set_fullscreen(!full),
                    _ => return EventStatus::Ignored,
                }
                EventStatus::Captured
            }
            Event::Mouse(MouseEvent::ButtonPressed {
                button: MouseButton::Left,
                ..
            }) => {
                let now = Instant::now();
                if self
                    .last_click
                    .get()
                    .is_some_and(|t| now - t < DOUBLE_CLICK)
                {
                    self.last_click.set(None);
                    let full = self.placement.borrow().fullscreen;
                    self.set_fullscreen(!full);
                } else {
                    self.last_click.set(Some(now));
                }
                EventStatus::Captured
            }
            Event::Window(WindowEvent::WillClose) => {
                // Closed by the window manager (not by the plugin): the project remembers.
                if !self.live.close.load(Ordering::Acquire) {
                    (self.on_change)(&self.placement.borrow(), false);
                }
                EventStatus::Captured
            }
            _ => EventStatus::Ignored,
        }
    }

    fn on_timer(&self, _timer: &TimerHandle) {
        if let Err(e) = self.tick() {
            self.live.status.lock().error = Some(format!("drawing failed: {e}"));
            self.ctx.request_close();
        }
    }
}

impl Drop for Handler {
    fn drop(&mut self) {
        self.frames.lock().request(0, 0);
        // macOS: the window closed (asked to, or by the user); `run` reports it elsewhere.
        #[cfg(target_os = "macos")]
        {
            let mut status = self.live.status.lock();
            status.open = false;
            status.fps = 0.0;
        }
        if let Some(context) = self.ctx.gl_context() {
            // SAFETY: the context is this window's; the objects were made on it.
            unsafe {
                if context.make_current().is_ok() {
                    self.gl.gl.delete_framebuffer(self.gl.framebuffer);
                    self.gl.gl.delete_texture(self.gl.texture);
                    let _ = context.make_not_current();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_picture_is_fitted_and_centred() {
        // 16:9 in a 4:3 window: full width, bars above and below.
        assert_eq!(fit((800, 600), 16.0 / 9.0), (0, 75, 800, 450));
        // In a wider window: full height, bars left and right.
        assert_eq!(fit((1000, 450), 16.0 / 9.0), (100, 0, 800, 450));
    }
}
