//! The output window on X11: the monitors (RandR 1.5 `GetMonitors`, with each one's refresh
//! rate from its CRTC's mode), and placing a window borderless, windowed on a monitor or
//! fullscreen on it (EWMH `_NET_WM_STATE_FULLSCREEN`).
//!
//! A connection of our own (x11rb's pure-Rust one), beside baseview's: X requests about a
//! window work from any client. Fullscreen is asked of the window manager and, for a display
//! without one (a bare X server, Xvfb), done directly: the window is moved over the monitor's
//! rectangle first, which is also what tells a window manager which monitor to fill.

use super::{Monitor, Placement, Rect};
use x11rb::connection::Connection;
use x11rb::properties::{WmSizeHints, WmSizeHintsSpecification};
use x11rb::protocol::randr::{self, ConnectionExt as _};
use x11rb::protocol::xproto::{
    Atom, AtomEnum, ClientMessageEvent, ConfigureWindowAux, ConnectionExt as _, EventMask,
    PropMode, Window,
};
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;

/// Refresh rate assumed when the server does not tell (no CRTC, as on Xvfb's added monitors).
pub const DEFAULT_REFRESH_HZ: f64 = 60.0;

fn err(e: impl std::fmt::Display) -> String {
    format!("X11: {e}")
}

/// The monitors of the default display (`$DISPLAY`), primary first.
pub fn monitors() -> Result<Vec<Monitor>, String> {
    let (conn, screen) = x11rb::connect(None).map_err(err)?;
    let root = conn.setup().roots[screen].root;
    list(&conn, root)
}

fn list(conn: &RustConnection, root: Window) -> Result<Vec<Monitor>, String> {
    let Some(reply) = conn
        .randr_get_monitors(root, true)
        .ok()
        .and_then(|c| c.reply().ok())
    else {
        // No RandR 1.5 (an old or minimal server): the whole screen is the one monitor.
        let geometry = conn.get_geometry(root).map_err(err)?.reply().map_err(err)?;
        return Ok(vec![Monitor {
            name: "screen".into(),
            rect: Rect {
                x: 0,
                y: 0,
                width: u32::from(geometry.width),
                height: u32::from(geometry.height),
            },
            refresh_hz: DEFAULT_REFRESH_HZ,
            primary: true,
        }]);
    };
    let resources = conn
        .randr_get_screen_resources_current(root)
        .ok()
        .and_then(|c| c.reply().ok());
    let mut monitors: Vec<Monitor> = reply
        .monitors
        .iter()
        .map(|m| {
            let name = conn
                .get_atom_name(m.name)
                .ok()
                .and_then(|c| c.reply().ok())
                .map(|r| String::from_utf8_lossy(&r.name).into_owned())
                .unwrap_or_default();
            let refresh_hz = m
                .outputs
                .first()
                .and_then(|&output| refresh_of(conn, output, resources.as_ref()))
                .unwrap_or(DEFAULT_REFRESH_HZ);
            Monitor {
                name,
                rect: Rect {
                    x: i32::from(m.x),
                    y: i32::from(m.y),
                    width: u32::from(m.width),
                    height: u32::from(m.height),
                },
                refresh_hz,
                primary: m.primary,
            }
        })
        .filter(|m| m.rect.width > 0 && m.rect.height > 0)
        .collect();
    monitors.sort_by_key(|m| !m.primary);
    Ok(monitors)
}

/// The refresh rate of the mode an output's CRTC shows.
fn refresh_of(
    conn: &RustConnection,
    output: randr::Output,
    resources: Option<&randr::GetScreenResourcesCurrentReply>,
) -> Option<f64> {
    let resources = resources?;
    let stamp = resources.config_timestamp;
    let info = conn
        .randr_get_output_info(output, stamp)
        .ok()?
        .reply()
        .ok()?;
    if info.crtc == 0 {
        return None;
    }
    let crtc = conn
        .randr_get_crtc_info(info.crtc, stamp)
        .ok()?
        .reply()
        .ok()?;
    let mode = resources.modes.iter().find(|m| m.id == crtc.mode)?;
    let dots = f64::from(mode.htotal) * f64::from(mode.vtotal);
    let hz = f64::from(mode.dot_clock) / dots;
    (hz.is_finite() && (10.0..=1000.0).contains(&hz)).then_some(hz)
}

/// One output window's X11 side: where it is and how it shows.
pub struct Placer {
    conn: RustConnection,
    root: Window,
    window: Window,
    atoms: Atoms,
}

struct Atoms {
    motif_hints: Atom,
    name: Atom,
    utf8: Atom,
    state: Atom,
    fullscreen: Atom,
    bypass_compositor: Atom,
}

impl Placer {
    /// Take charge of `window` (an X window id on the default display) and make it
    /// borderless.
    pub fn new(window: u32) -> Result<Self, String> {
        let (conn, screen) = x11rb::connect(None).map_err(err)?;
        let root = conn.setup().roots[screen].root;
        let atom = |name: &str| -> Result<Atom, String> {
            Ok(conn
                .intern_atom(false, name.as_bytes())
                .map_err(err)?
                .reply()
                .map_err(err)?
                .atom)
        };
        let atoms = Atoms {
            motif_hints: atom("_MOTIF_WM_HINTS")?,
            name: atom("_NET_WM_NAME")?,
            utf8: atom("UTF8_STRING")?,
            state: atom("_NET_WM_STATE")?,
            fullscreen: atom("_NET_WM_STATE_FULLSCREEN")?,
            bypass_compositor: atom("_NET_WM_BYPASS_COMPOSITOR")?,
        };
        let placer = Self {
            conn,
            root,
            window,
            atoms,
        };
        // Motif hints: flags = decorations (2), decorations = none. Every common window manager
        // reads them.
        placer
            .conn
            .change_property32(
                PropMode::REPLACE,
                window,
                placer.atoms.motif_hints,
                placer.atoms.motif_hints,
                &[2, 0, 0, 0, 0],
            )
            .map_err(err)?;
        placer.conn.flush().map_err(err)?;
        Ok(placer)
    }

    /// Name the window (EWMH's UTF-8 name, and the ICCCM one for older window managers).
    pub fn set_title(&self, title: &str) -> Result<(), String> {
        let bytes = title.as_bytes();
        self.conn
            .change_property8(
                PropMode::REPLACE,
                self.window,
                self.atoms.name,
                self.atoms.utf8,
                bytes,
            )
            .map_err(err)?;
        self.conn
            .change_property8(
                PropMode::REPLACE,
                self.window,
                AtomEnum::WM_NAME,
                self.atoms.utf8,
                bytes,
            )
            .map_err(err)?;
        self.conn.flush().map_err(err)
    }

    /// The display's monitors, primary first.
    pub fn monitors(&self) -> Result<Vec<Monitor>, String> {
        list(&self.conn, self.root)
    }

    /// Show the window as `placement` asks, on the monitor it names (the primary one when no
    /// monitor has that name). Returns the monitor and the window's rectangle.
    pub fn place(&self, placement: &Placement) -> Result<(Monitor, Rect), String> {
        let monitors = self.monitors()?;
        let monitor = super::pick(&monitors, &placement.monitor)
            .cloned()
            .ok_or_else(|| "X11: the display has no monitor".to_owned())?;
        let rect = placement.rect_on(&monitor);
        // Leaving fullscreen first, so the window manager lets the window move (also from
        // one monitor's fullscreen to another's).
        self.set_fullscreen(false)?;
        let (x, y, w, h) = (rect.x, rect.y, rect.width, rect.height);
        // User-specified position and size: window managers honour them for a new window.
        let hints = WmSizeHints {
            position: Some((WmSizeHintsSpecification::UserSpecified, x, y)),
            size: Some((WmSizeHintsSpecification::UserSpecified, w as i32, h as i32)),
            ..WmSizeHints::default()
        };
        hints
            .set_normal_hints(&self.conn, self.window)
            .map_err(err)?;
        self.conn
            .configure_window(
                self.window,
                &ConfigureWindowAux::new().x(x).y(y).width(w).height(h),
            )
            .map_err(err)?;
        if placement.fullscreen {
            self.set_fullscreen(true)?;
        }
        self.conn.flush().map_err(err)?;
        Ok((monitor, rect))
    }

    /// Ask for fullscreen (or leave it): the property, for a window not yet mapped, and the
    /// EWMH message to the root window, for one that is.
    fn set_fullscreen(&self, on: bool) -> Result<(), String> {
        let a = &self.atoms;
        if on {
            self.conn
                .change_property32(
                    PropMode::REPLACE,
                    self.window,
                    a.state,
                    AtomEnum::ATOM,
                    &[a.fullscreen],
                )
                .map_err(err)?;
            // Fullscreen video should not go through a compositor (1: please bypass).
            self.conn
                .change_property32(
                    PropMode::REPLACE,
                    self.window,
                    a.bypass_compositor,
                    AtomEnum::CARDINAL,
                    &[1],
                )
                .map_err(err)?;
        } else {
            self.conn
                .delete_property(self.window, a.state)
                .map_err(err)?;
            self.conn
                .delete_property(self.window, a.bypass_compositor)
                .map_err(err)?;
        }
        // _NET_WM_STATE client message: action (0 remove, 1 add), first property, second,
        // source indication (1: an application).
        let message = ClientMessageEvent::new(
            32,
            self.window,
            a.state,
            [u32::from(on), a.fullscreen, 0, 1, 0],
        );
        self.conn
            .send_event(
                false,
                self.root,
                EventMask::SUBSTRUCTURE_REDIRECT | EventMask::SUBSTRUCTURE_NOTIFY,
                message,
            )
            .map_err(err)?;
        Ok(())
    }
}
