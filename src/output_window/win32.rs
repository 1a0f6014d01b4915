//! The output window on Windows: the monitors (the desktop's display monitors, their device
//! names and refresh rates) and placing the window borderless, windowed on a monitor or
//! fullscreen over all of it, as on X11.
//!
//! Fullscreen is the borderless kind every video player and game uses: a popup window covering
//! the monitor's rectangle at the top of the z-order, which Windows recognises as fullscreen
//! (the taskbar steps back). No display mode is changed. All coordinates are physical pixels:
//! the calls run per-monitor DPI aware (Windows 10 1607 and later, as Rust's standard library
//! requires anyway).
//!
//! Compiled for Windows in CI (clippy for `x86_64-pc-windows-gnu`); run by hand only, not in
//! the test suite (Wine's windows need a display server).

use super::{Monitor, Placement, Rect};
use windows_sys::Win32::Foundation::{HWND, LPARAM, RECT};
use windows_sys::Win32::Graphics::Gdi::{
    DEVMODEW, ENUM_CURRENT_SETTINGS, EnumDisplayMonitors, EnumDisplaySettingsW, GetMonitorInfoW,
    HDC, HMONITOR, MONITORINFO, MONITORINFOEXW,
};
use windows_sys::Win32::UI::HiDpi::{
    AdjustWindowRectExForDpi, DPI_AWARENESS_CONTEXT_PER_MONITOR_AWARE_V2, GetDpiForWindow,
    SetThreadDpiAwarenessContext,
};
use windows_sys::Win32::UI::WindowsAndMessaging::{
    GWL_EXSTYLE, GWL_STYLE, GetWindowLongPtrW, GetWindowRect, HWND_TOP, IsIconic, IsZoomed,
    MONITORINFOF_PRIMARY, SW_RESTORE, SWP_FRAMECHANGED, SWP_NOACTIVATE, SWP_NOOWNERZORDER,
    SWP_SHOWWINDOW, SetWindowLongPtrW, SetWindowPos, SetWindowTextW, ShowWindow, WS_CLIPSIBLINGS,
    WS_MINIMIZEBOX, WS_POPUP, WS_SYSMENU, WS_VISIBLE,
};

/// The window's style, windowed and fullscreen alike: borderless (no caption, no frame),
/// minimisable, with the taskbar's window menu. Whether it is visible is Windows' to keep
/// (`ShowWindow`, `SWP_SHOWWINDOW`), not a bit written here.
const STYLE: u32 = WS_POPUP | WS_CLIPSIBLINGS | WS_MINIMIZEBOX | WS_SYSMENU;

/// How SetWindowPos places it: on top, shown, its frame recomputed, without taking the focus
/// from the host or the editor.
const PLACE_FLAGS: u32 = SWP_FRAMECHANGED | SWP_NOOWNERZORDER | SWP_SHOWWINDOW | SWP_NOACTIVATE;

/// Refresh rates Windows reports as "the hardware's default" (0 and 1): taken as 60 Hz.
const DEFAULT_REFRESH_HZ: f64 = 60.0;

/// Per-monitor DPI awareness on this thread while it lives, the thread's own after.
struct DpiAware(windows_sys::Win32::UI::HiDpi::DPI_AWARENESS_CONTEXT);

impl DpiAware {
    fn new() -> Self {
        // SAFETY: sets this thread's awareness only; restored on drop.
        Self(unsafe { SetThreadDpiAwarenessContext(DPI_AWARENESS_CONTEXT_PER_MONITOR_AWARE_V2) })
    }
}

impl Drop for DpiAware {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: restores the context the thread had (returned by the call in `new`).
            unsafe { SetThreadDpiAwarenessContext(self.0) };
        }
    }
}

fn wide(s: &str) -> Vec<u16> {
    s.encode_utf16().chain(std::iter::once(0)).collect()
}

fn from_wide(s: &[u16]) -> String {
    let end = s.iter().position(|&c| c == 0).unwrap_or(s.len());
    String::from_utf16_lossy(&s[..end])
}

fn rect(r: &RECT) -> Rect {
    Rect {
        x: r.left,
        y: r.top,
        width: (r.right - r.left).max(0) as u32,
        height: (r.bottom - r.top).max(0) as u32,
    }
}

unsafe extern "system" fn each_monitor(
    monitor: HMONITOR,
    _: HDC,
    _: *mut RECT,
    list: LPARAM,
) -> windows_sys::core::BOOL {
    // SAFETY: `list` is the `Vec` that `monitors` passed, alive for the whole enumeration.
    let list = unsafe { &mut *(list as *mut Vec<Monitor>) };
    let mut info = MONITORINFOEXW::default();
    info.monitorInfo.cbSize = std::mem::size_of::<MONITORINFOEXW>() as u32;
    // SAFETY: `info` is a MONITORINFOEXW with its size set, as GetMonitorInfoW requires.
    if unsafe { GetMonitorInfoW(monitor, (&raw mut info).cast::<MONITORINFO>()) } == 0 {
        return 1;
    }
    let mut mode = DEVMODEW {
        dmSize: std::mem::size_of::<DEVMODEW>() as u16,
        ..DEVMODEW::default()
    };
    // SAFETY: the device name is NUL-terminated (it comes from Windows); `mode` has its size.
    let known = unsafe {
        EnumDisplaySettingsW(info.szDevice.as_ptr(), ENUM_CURRENT_SETTINGS, &mut mode) != 0
    };
    let hz = if known && mode.dmDisplayFrequency > 1 {
        f64::from(mode.dmDisplayFrequency)
    } else {
        DEFAULT_REFRESH_HZ
    };
    list.push(Monitor {
        name: from_wide(&info.szDevice),
        rect: rect(&info.monitorInfo.rcMonitor),
        refresh_hz: hz,
        primary: info.monitorInfo.dwFlags & MONITORINFOF_PRIMARY != 0,
    });
    1
}

/// The desktop's monitors (device names such as `\\.\DISPLAY1`), primary first.
pub fn monitors() -> Result<Vec<Monitor>, String> {
    let _aware = DpiAware::new();
    let mut list: Vec<Monitor> = Vec::new();
    // SAFETY: the callback only reads monitor information into `list`, which outlives the call.
    let ok = unsafe {
        EnumDisplayMonitors(
            std::ptr::null_mut(),
            std::ptr::null(),
            Some(each_monitor),
            (&raw mut list) as LPARAM,
        )
    };
    if ok == 0 || list.is_empty() {
        return Err("Windows listed no monitors".into());
    }
    list.sort_by_key(|m| !m.primary);
    Ok(list)
}

/// Places one window (by its handle).
pub struct Placer {
    window: HWND,
}

impl Placer {
    /// For the window `window` (the output window's own, on this thread; borderless once
    /// placed).
    pub fn new(window: HWND) -> Result<Self, String> {
        if window.is_null() {
            return Err("the output window has no Windows handle".into());
        }
        Ok(Self { window })
    }

    pub fn set_title(&self, title: &str) -> Result<(), String> {
        let title = wide(title);
        // SAFETY: a NUL-terminated UTF-16 string and this thread's window.
        if unsafe { SetWindowTextW(self.window, title.as_ptr()) } == 0 {
            return Err("Windows refused the output window's title".into());
        }
        Ok(())
    }

    pub fn monitors(&self) -> Result<Vec<Monitor>, String> {
        monitors()
    }

    /// Show the window as `placement` asks: its monitor's whole rectangle in fullscreen, else
    /// its client area at the windowed size centred on the monitor. The monitor and the
    /// client rectangle.
    pub fn place(&self, placement: &Placement) -> Result<(Monitor, Rect), String> {
        let monitors = self.monitors()?;
        let monitor = super::pick(&monitors, &placement.monitor)
            .ok_or("no monitor to place the output window on")?
            .clone();
        let client = placement.rect_on(&monitor);
        let _aware = DpiAware::new();
        // SAFETY: this thread's window; styles, rectangles and positions are plain values.
        unsafe {
            // Minimised or maximised, it is restored first: a placement is a normal window.
            if IsIconic(self.window) != 0 || IsZoomed(self.window) != 0 {
                ShowWindow(self.window, SW_RESTORE);
            }
            let old = GetWindowLongPtrW(self.window, GWL_STYLE) as u32;
            let ex_style = GetWindowLongPtrW(self.window, GWL_EXSTYLE) as u32;
            SetWindowLongPtrW(
                self.window,
                GWL_STYLE,
                (STYLE | (old & WS_VISIBLE)) as isize,
            );
            // A popup window has no frame, so its outer rectangle is its client rectangle;
            // the adjustment keeps that true should a style add one.
            let mut outer = RECT {
                left: client.x,
                top: client.y,
                right: client.x + client.width as i32,
                bottom: client.y + client.height as i32,
            };
            let dpi = GetDpiForWindow(self.window).max(96);
            AdjustWindowRectExForDpi(&mut outer, STYLE, 0, ex_style, dpi);
            let place = || {
                SetWindowPos(
                    self.window,
                    HWND_TOP,
                    outer.left,
                    outer.top,
                    outer.right - outer.left,
                    outer.bottom - outer.top,
                    PLACE_FLAGS,
                ) != 0
            };
            if !place() {
                return Err(format!(
                    "Windows refused to place the output window on {}",
                    monitor.name
                ));
            }
            // Moved to a monitor of another scale, the window gets WM_DPICHANGED and takes the
            // size Windows suggests for it: placed once more, it covers what was asked.
            let mut now = RECT::default();
            if GetWindowRect(self.window, &mut now) != 0
                && (now.left, now.top, now.right, now.bottom)
                    != (outer.left, outer.top, outer.right, outer.bottom)
            {
                place();
            }
        }
        Ok((monitor, client))
    }
}
