//! The editor: the live fluid, full-bleed, with a control panel over it that stays out of the
//! way until wanted, and mouse painting as in the original stable-fluids demo.
//!
//! egui through nice-plug-egui's OpenGL backend: it is the one that runs in every host on
//! every desktop (and renders under Xvfb on software GL, so it is tested). The editor never
//! owns the simulation: it shows the frames the simulation thread publishes, asks for frames
//! of the size it displays, and sends the mouse's splats down its own event queue. Closing it
//! stops the frames (not the fluid); reopening it shows the fluid where it is.
//!
//! - [`view`]: the fluid picture, fitted to the window at the canvas aspect.
//! - [`panel`]: every parameter (with the host's begin/set/end gestures), the settings and a
//!   status line.
//! - [`input`]: mouse painting and the keys (P pause, Space splats, R reset, F panel).
//! - [`presets`]: the panel's preset menu (factory presets, the user's, save).
//! - [`output_window`]: the panel's output window controls (the window itself is [`crate::output_window`]).
//! - [`hint`]: the first-run hint on the empty canvas.

mod hint;
mod input;
mod modulation;
mod output_window;
mod panel;
mod presets;
mod view;

pub use view::FRAMES_SHOWN;
mod window;

pub use window::{DyeflowWindow, WindowThread};

use crate::bridge::queue::EventSender;
use crate::engine::LazyEngine;
use crate::frame::FrameOutput;
use crate::params::{DyeflowParams, EDITOR_MAX_SIZE, EDITOR_MIN_SIZE};
use nice_plug::context::gui::GuiContext;
use nice_plug::editor::dpi::{LogicalSize, NativeSize, Size};
use nice_plug::editor::{
    Editor, EditorHandle, HostMethods, Modifiers, ParentWindowHandle, ResizeHint, SizeConstraints,
    SpawnedEditor, VirtualKeyCode,
};

use nice_plug_egui::{
    EguiEditor, EguiEditorHandle, EguiEditorState, EguiNiceSettings, NiceEguiApp, RepaintNotifier,
    create_egui_editor,
};
use parking_lot::Mutex;
use std::sync::Arc;

/// Events the editor can queue for the simulation between two of its steps (mouse splats,
/// random splats, resets).
pub const EDITOR_QUEUE_EVENTS: usize = 1024;

/// What the editor shares with the plugin: made once per plugin instance, cheap (no thread, no
/// window, no GPU).
#[derive(Clone)]
pub struct EditorShared {
    pub params: Arc<DyeflowParams>,
    pub engine: Arc<LazyEngine>,
    /// The simulation's frames (one consumer: whichever editor window is open).
    pub frames: Arc<Mutex<FrameOutput>>,
    /// The editor's queue to the simulation thread.
    pub events: Arc<Mutex<EventSender>>,
    /// Where bounce captures go and stand.
    pub capture: Arc<Mutex<crate::capture::writer::CaptureStatus>>,
    /// The Record switch: capture while the host plays in real time (not saved with the
    /// project).
    pub record: Arc<std::sync::atomic::AtomicBool>,
    /// The instance's output window (open or not; it outlives every editor window).
    pub output: Arc<crate::output_window::OutputWindow>,
    /// Where the editor's events are recorded while a capture is on.
    pub input_tap: Arc<crate::capture::InputTap>,
}

impl EditorShared {
    /// Make the output window follow the project's settings for it.
    pub fn follow_output(&self) {
        if self.params.output().open {
            // The window shows the fluid: make sure it runs.
            self.engine.ensure_running();
        }
        self.output.follow(|| {
            let s = self.params.output();
            (s.open, s.placement)
        });
    }
}

/// The plugin's editor: an egui editor rebuilt when the project's saved size changed while it
/// was closed (the host may load a project after creating the editor).
pub struct DyeflowEditor {
    shared: EditorShared,
    current: Mutex<Built>,
}

struct Built {
    editor: EguiEditor<EditorApp>,
    state: Arc<EguiEditorState>,
    size: (u32, u32),
    /// Where the app records the thread of the window it is built in.
    thread: window::ThreadSlot,
}

/// The editor's size limits and resize behaviour.
fn resize_hint() -> ResizeHint {
    ResizeHint {
        can_resize: true,
        can_resize_horizontally: true,
        can_resize_vertically: true,
        size_constraints: SizeConstraints::Logical {
            min_size: Some(LogicalSize::new(
                EDITOR_MIN_SIZE.0 as f32,
                EDITOR_MIN_SIZE.1 as f32,
            )),
            max_size: Some(LogicalSize::new(
                EDITOR_MAX_SIZE.0 as f32,
                EDITOR_MAX_SIZE.1 as f32,
            )),
        },
        ..ResizeHint::NON_RESIZABLE
    }
}

fn build(shared: &EditorShared) -> Built {
    let saved = shared.params.editor_settings();
    let size = (saved.width, saved.height);
    let state = EguiEditorState::from_size(
        Size::Logical(LogicalSize::new(f64::from(size.0), f64::from(size.1))),
        1.0,
    );
    let settings = EguiNiceSettings::new()
        .with_tile("Dyeflow")
        .with_resize_hint(resize_hint());
    let thread = window::ThreadSlot::default();
    let editor = create_egui_editor(
        state.clone(),
        RepaintNotifier::new(),
        settings,
        EditorApp::new(shared.clone(), thread.clone()),
    )
    .expect("create_egui_editor always returns an editor");
    Built {
        editor,
        state,
        size,
        thread,
    }
}

/// The editor for a plugin instance.
pub fn create(shared: EditorShared) -> Option<DyeflowEditor> {
    let built = build(&shared);
    Some(DyeflowEditor {
        shared,
        current: Mutex::new(built),
    })
}

impl DyeflowEditor {
    /// The editor, rebuilt first if the saved size changed while no window was open.
    fn current(&self) -> parking_lot::MutexGuard<'_, Built> {
        let mut built = self.current.lock();
        let saved = self.shared.params.editor_settings();
        if (saved.width, saved.height) != built.size && !built.state.is_open() {
            *built = build(&self.shared);
        }
        built
    }
}

impl Editor for DyeflowEditor {
    type Handle = DyeflowHandle;

    fn spawn(
        &self,
        parent: Option<ParentWindowHandle>,
        wait_for_parent: bool,
        fallback_scale_factor: Option<f64>,
        gui_context: GuiContext,
        host: Option<HostMethods>,
    ) -> Result<SpawnedEditor<Self::Handle>, Box<dyn std::error::Error>> {
        // The editor shows the fluid: make sure it runs (a host may open the editor before it
        // ever processes audio).
        self.shared.engine.ensure_running();
        let current = self.current();
        // The app is built on the window's thread before `spawn` returns, and records it.
        let _ = current.thread.take();
        let spawned = current.editor.spawn(
            parent,
            wait_for_parent,
            fallback_scale_factor,
            gui_context,
            host,
        )?;
        Ok(SpawnedEditor {
            handle: DyeflowHandle {
                inner: spawned.handle,
                frames: self.shared.frames.clone(),
                params: self.shared.params.clone(),
            },
            window: DyeflowWindow::new(spawned.window, current.thread.take()),
        })
    }

    fn size(&self) -> NativeSize<u32> {
        self.current().editor.size()
    }

    fn resize_hint(&self) -> ResizeHint {
        resize_hint()
    }

    fn track_info_updated(&self, info: nice_plug::plugin::TrackInfo) {
        self.shared.output.set_track_name(Some(info.name()));
        self.current().editor.track_info_updated(info);
    }

    unsafe fn assume_standalone_in_process(&self) {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { self.current().editor.assume_standalone_in_process() }
    }
}

/// An open editor window. Dropping it (the host closes the editor) stops the frames: the
/// simulation goes on without rendering any.
pub struct DyeflowHandle {
    inner: EguiEditorHandle,
    frames: Arc<Mutex<FrameOutput>>,
    params: Arc<DyeflowParams>,
}

impl Drop for DyeflowHandle {
    fn drop(&mut self) {
        self.frames.lock().request(0, 0);
        // MIDI learn waits no more: with no editor nothing would show what the song's next
        // CC was learned for.
        self.params.modulation_live.arm(None);
    }
}

impl EditorHandle for DyeflowHandle {
    type Window = DyeflowWindow;
    type Error = <EguiEditorHandle as EditorHandle>::Error;

    fn run_until_closed(mut window: Self::Window) -> Result<(), Self::Error> {
        EguiEditorHandle::run_until_closed(window.take_inner())
    }

    fn set_parent(
        &self,
        parent: ParentWindowHandle,
        window: &Self::Window,
    ) -> Result<(), Self::Error> {
        self.inner.set_parent(parent, window.inner())
    }

    fn show(&self, window: &Self::Window) -> Result<(), Self::Error> {
        self.inner.show(window.inner())
    }

    fn hide(&self, window: &Self::Window) -> Result<(), Self::Error> {
        self.inner.hide(window.inner())
    }

    fn set_size(
        &self,
        new_size: NativeSize<u32>,
        window: &Self::Window,
    ) -> Result<(), Self::Error> {
        self.inner.set_size(new_size, window.inner())
    }

    fn host_main_thread_callback(&self, window: &Self::Window) {
        self.inner.host_main_thread_callback(window.inner());
    }

    fn adjust_size(
        &self,
        new_size: NativeSize<u32>,
        window: &Self::Window,
    ) -> Option<NativeSize<u32>> {
        self.inner.adjust_size(new_size, window.inner())
    }

    fn set_fallback_scale_factor(
        &self,
        scale_factor: f64,
        window: &Self::Window,
    ) -> Result<(), Self::Error> {
        self.inner
            .set_fallback_scale_factor(scale_factor, window.inner())
    }

    fn on_virtual_key_from_host(
        &self,
        key_code: VirtualKeyCode,
        is_down: bool,
        modifiers: Modifiers,
    ) -> bool {
        self.inner
            .on_virtual_key_from_host(key_code, is_down, modifiers)
    }

    fn state_changed(&self) {
        self.inner.state_changed();
    }

    fn param_value_changed(&self, id: &str, normalized_value: f32) {
        self.inner.param_value_changed(id, normalized_value);
    }

    fn param_modulation_changed(&self, id: &str, modulation_offset: f32) {
        self.inner.param_modulation_changed(id, modulation_offset);
    }
}

/// The egui app behind one editor window.
pub struct EditorApp {
    shared: EditorShared,
    /// Where `build` records the window's thread.
    thread: window::ThreadSlot,
    gui: Option<GuiContext>,
    view: view::FluidView,
    input: input::Painter,
    panel: panel::Panel,
    hint: hint::Hint,
}

impl EditorApp {
    fn new(shared: EditorShared, thread: window::ThreadSlot) -> Self {
        Self {
            shared,
            thread,
            gui: None,
            view: view::FluidView::default(),
            input: input::Painter::default(),
            panel: panel::Panel::default(),
            hint: hint::Hint::default(),
        }
    }
}

impl NiceEguiApp for EditorApp {
    fn build(
        &mut self,
        egui_ctx: egui::Context,
        gui: GuiContext,
        _frame: &mut nice_plug_egui::Frame,
    ) -> Result<(), nice_plug_egui::baseview::HandlerError> {
        self.thread.record_current();
        egui_ctx.set_visuals(egui::Visuals::dark());
        self.gui = Some(gui);
        self.view = view::FluidView::default();
        self.shared.engine.ensure_running();
        Ok(())
    }

    fn ui(&mut self, ui: &mut egui::Ui, frame: &mut nice_plug_egui::Frame) {
        let Some(gui) = self.gui.clone() else {
            return;
        };
        let setter = gui.param_setter();
        let settings = self.shared.params.settings();
        self.shared.follow_output();
        let canvas = self.view.show(ui, &self.shared, &settings);
        let typing = ui.ctx().memory(|m| m.focused().is_some());
        frame.set_key_capture(input::key_capture(typing));
        let acted = self
            .input
            .handle(ui, &canvas, (&self.shared, &setter), typing);
        if self.hint.showing() {
            // Not under the open panel: it is the controls the hint points to.
            let notes = self.shared.engine.status().map_or(0, |s| s.notes);
            let panel_open = self.shared.params.editor_settings().panel_open;
            let liquid = settings.fluid.is_liquid();
            self.hint
                .show(ui, &canvas, (acted, notes), !panel_open, liquid);
        }
        self.panel
            .show(ui, &self.shared, &setter, &self.view, &mut self.input);
        // The fluid moves: draw again soon (the frames come at the simulation rate).
        ui.ctx()
            .request_repaint_after(std::time::Duration::from_millis(8));
    }

    fn resized(&mut self, size: nice_plug_egui::baseview::WindowSize) {
        let mut saved = self.shared.params.editor_settings();
        saved.width = size.logical.width.round() as u32;
        saved.height = size.logical.height.round() as u32;
        self.shared.params.set_editor_settings(saved);
    }
}
