//! A small CLAP host for tests: it loads Dyeflow through its real `clap_entry`, so the tests
//! exercise nice-plug's wrapper exactly as a DAW does (activation, processing, events, state).
//!
//! Everything runs on the calling thread, which the wrapper then treats as the main thread.
#![allow(dead_code)]

use clap_sys::audio_buffer::clap_audio_buffer;
use clap_sys::entry::clap_plugin_entry;
use clap_sys::events::*;
use clap_sys::ext::audio_ports_config::{
    CLAP_EXT_AUDIO_PORTS_CONFIG, clap_plugin_audio_ports_config,
};
use clap_sys::ext::note_ports::{CLAP_EXT_NOTE_PORTS, clap_plugin_note_ports};
use clap_sys::ext::params::{CLAP_EXT_PARAMS, clap_param_info, clap_plugin_params};
use clap_sys::ext::render::{
    CLAP_EXT_RENDER, CLAP_RENDER_OFFLINE, CLAP_RENDER_REALTIME, clap_plugin_render,
};
use clap_sys::ext::state::{CLAP_EXT_STATE, clap_plugin_state};
use clap_sys::factory::plugin_factory::{CLAP_PLUGIN_FACTORY_ID, clap_plugin_factory};
use clap_sys::host::clap_host;
use clap_sys::plugin::clap_plugin;
use clap_sys::process::{CLAP_PROCESS_ERROR, clap_process, clap_process_status};
use clap_sys::stream::{clap_istream, clap_ostream};
use clap_sys::version::CLAP_VERSION;
use std::cell::Cell;
use std::ffi::{CStr, CString, c_char, c_void};
use std::ptr;

/// The plugin's CLAP id.
pub const PLUGIN_ID: &CStr = c"app.dyeflow.dyeflow";

/// One event in the form CLAP passes it: every event type starts with a `clap_event_header`.
#[derive(Clone, Copy)]
#[repr(C)]
pub union Event {
    pub header: clap_event_header,
    pub note: clap_event_note,
    pub expression: clap_event_note_expression,
    pub midi: clap_event_midi,
    pub param: clap_event_param_value,
    pub transport: clap_event_transport,
}

fn header(size: usize, time: u32, type_: u16) -> clap_event_header {
    clap_event_header {
        size: size as u32,
        time,
        space_id: CLAP_CORE_EVENT_SPACE_ID,
        type_,
        flags: 0,
    }
}

impl Event {
    pub fn time(&self) -> u32 {
        // SAFETY: every field of `Event` is a `#[repr(C)]` CLAP event struct that begins with a
        // `clap_event_header`, and each value holds one of them, so `header` is always
        // initialised.
        unsafe { self.header.time }
    }

    pub fn note(time: u32, on: bool, channel: i16, key: i16, velocity: f64, note_id: i32) -> Self {
        let type_ = if on {
            CLAP_EVENT_NOTE_ON
        } else {
            CLAP_EVENT_NOTE_OFF
        };
        Event {
            note: clap_event_note {
                header: header(size_of::<clap_event_note>(), time, type_),
                note_id,
                port_index: 0,
                channel,
                key,
                velocity,
            },
        }
    }

    pub fn expression(time: u32, id: i32, channel: i16, key: i16, value: f64) -> Self {
        Event {
            expression: clap_event_note_expression {
                header: header(
                    size_of::<clap_event_note_expression>(),
                    time,
                    CLAP_EVENT_NOTE_EXPRESSION,
                ),
                expression_id: id,
                note_id: -1,
                port_index: 0,
                channel,
                key,
                value,
            },
        }
    }

    pub fn midi(time: u32, data: [u8; 3]) -> Self {
        Event {
            midi: clap_event_midi {
                header: header(size_of::<clap_event_midi>(), time, CLAP_EVENT_MIDI),
                port_index: 0,
                data,
            },
        }
    }

    /// A parameter change; `value` is in CLAP's units for that parameter (see `param_info`).
    pub fn param(time: u32, param_id: u32, value: f64) -> Self {
        Event {
            param: clap_event_param_value {
                header: header(
                    size_of::<clap_event_param_value>(),
                    time,
                    CLAP_EVENT_PARAM_VALUE,
                ),
                param_id,
                cookie: ptr::null_mut(),
                note_id: -1,
                port_index: -1,
                channel: -1,
                key: -1,
                value,
            },
        }
    }
}

struct HostData {
    callback_requested: Cell<bool>,
    restart_requested: Cell<bool>,
}

unsafe extern "C" fn host_get_extension(_: *const clap_host, _: *const c_char) -> *const c_void {
    ptr::null()
}
unsafe extern "C" fn host_request_restart(host: *const clap_host) {
    // SAFETY: `host` is the `clap_host` that `Instance::new` passed to `create_plugin`; its
    // `host_data` points at the `HostData` boxed in the same `Instance`, and both boxes outlive
    // the plugin (`Drop` destroys it first). nice-plug requests restarts only from within host
    // calls, all made on the test thread that owns the `Instance`, so the `Cell` is not shared.
    unsafe {
        (*((*host).host_data as *const HostData))
            .restart_requested
            .set(true)
    };
}
unsafe extern "C" fn host_request_process(_: *const clap_host) {}
unsafe extern "C" fn host_request_callback(host: *const clap_host) {
    // SAFETY: as in `host_request_restart`, `host` and its `host_data` are this `Instance`'s
    // boxes, which outlive the plugin. nice-plug calls this only for tasks posted off the main
    // thread; this host opens no editor and Dyeflow posts no background tasks, so no other thread
    // reaches it and the `Cell` is not shared.
    unsafe {
        (*((*host).host_data as *const HostData))
            .callback_requested
            .set(true)
    };
}

unsafe extern "C" fn events_size(list: *const clap_input_events) -> u32 {
    // SAFETY: `list` is the `clap_input_events` that `process` or `flush_params` built and passed
    // to the plugin; its `ctx` is that caller's `&Vec<Event>`. The plugin calls this only during
    // that call, while both are alive.
    unsafe { (*((*list).ctx as *const Vec<Event>)).len() as u32 }
}
unsafe extern "C" fn events_get(
    list: *const clap_input_events,
    i: u32,
) -> *const clap_event_header {
    // SAFETY: as in `events_size`, `list` and the `Vec<Event>` behind its `ctx` are alive for the
    // `process`/`flush` call this runs in; the returned header points into that `Vec`, which the
    // plugin may only read until the call returns.
    unsafe {
        let events = &*((*list).ctx as *const Vec<Event>);
        match events.get(i as usize) {
            Some(e) => &e.header,
            None => ptr::null(),
        }
    }
}
unsafe extern "C" fn out_events_push(
    _: *const clap_output_events,
    _: *const clap_event_header,
) -> bool {
    true
}

unsafe extern "C" fn ostream_write(s: *const clap_ostream, buf: *const c_void, size: u64) -> i64 {
    // SAFETY: `s` is the `clap_ostream` in `save_state`, whose `ctx` is its local `Vec<u8>`, alive
    // and not otherwise accessed during the `save` call; CLAP requires `buf` to hold `size`
    // readable bytes.
    unsafe {
        let out = &mut *((*s).ctx as *mut Vec<u8>);
        out.extend_from_slice(std::slice::from_raw_parts(buf as *const u8, size as usize));
    }
    size as i64
}

struct ReadCursor<'a> {
    data: &'a [u8],
    pos: usize,
    /// Largest read handed out at once, to exercise plugins that must loop over short reads.
    chunk: usize,
}

unsafe extern "C" fn istream_read(s: *const clap_istream, buf: *mut c_void, size: u64) -> i64 {
    // SAFETY: `s` is the `clap_istream` in `load_state`, whose `ctx` is its local `ReadCursor`,
    // alive and not otherwise accessed during the `load` call. `n` is at most `size`, the room
    // CLAP guarantees in `buf`, and at most the bytes left in `data` after `pos` (which never
    // passes `data.len()`); `data` and the plugin's buffer are separate allocations, so the copy
    // does not overlap.
    unsafe {
        let cur = &mut *((*s).ctx as *mut ReadCursor);
        let n = (size as usize).min(cur.data.len() - cur.pos).min(cur.chunk);
        ptr::copy_nonoverlapping(cur.data.as_ptr().add(cur.pos), buf as *mut u8, n);
        cur.pos += n;
        n as i64
    }
}

/// A plugin instance hosted in-process.
pub struct Instance {
    plugin: *const clap_plugin,
    _host: Box<clap_host>,
    host_data: Box<HostData>,
    active: bool,
    processing: bool,
    steady_time: i64,
}

fn entry() -> &'static clap_plugin_entry {
    &dyeflow::clap_entry
}

impl Instance {
    /// Create and `init()` an instance.
    pub fn new() -> Self {
        super::private_captures();
        let entry = entry();
        // SAFETY: `entry` is Dyeflow's static `clap_entry`, and `init` gets a NUL-terminated C
        // literal. `factory` is checked non-null and points to nice-plug's static factory. The
        // `clap_host` and its `HostData` are boxed, so their addresses survive the move into
        // `Self`, and they outlive the plugin, which `Drop` destroys first; the host's strings are
        // `'static` C literals. `PLUGIN_ID` is NUL-terminated, and `plugin` is checked non-null
        // before `init`.
        unsafe {
            assert!((entry.init.unwrap())(c"/dyeflow-test".as_ptr()));
            let factory = (entry.get_factory.unwrap())(CLAP_PLUGIN_FACTORY_ID.as_ptr())
                as *const clap_plugin_factory;
            assert!(!factory.is_null());
            assert_eq!(((*factory).get_plugin_count.unwrap())(factory), 1);

            let host_data = Box::new(HostData {
                callback_requested: Cell::new(false),
                restart_requested: Cell::new(false),
            });
            let host = Box::new(clap_host {
                clap_version: CLAP_VERSION,
                host_data: &*host_data as *const HostData as *mut c_void,
                name: c"dyeflow-test-host".as_ptr(),
                vendor: c"dyeflow".as_ptr(),
                url: c"".as_ptr(),
                version: c"0".as_ptr(),
                get_extension: Some(host_get_extension),
                request_restart: Some(host_request_restart),
                request_process: Some(host_request_process),
                request_callback: Some(host_request_callback),
            });
            let plugin = ((*factory).create_plugin.unwrap())(factory, &*host, PLUGIN_ID.as_ptr());
            assert!(!plugin.is_null(), "create_plugin failed");
            assert!(((*plugin).init.unwrap())(plugin), "init failed");
            Self {
                plugin,
                _host: host,
                host_data,
                active: false,
                processing: false,
                steady_time: 0,
            }
        }
    }

    fn ext<T>(&self, id: &CStr) -> &T {
        // SAFETY: `self.plugin` is non-null (checked in `new`) and alive until `Drop`; `id` is a
        // NUL-terminated `CStr`. The returned pointer is checked non-null and points into the
        // plugin, which lives as long as `self`, the borrow the `&T` is tied to. Callers pair each
        // extension id with its matching `clap_sys` struct type `T`.
        unsafe {
            let p = ((*self.plugin).get_extension.unwrap())(self.plugin, id.as_ptr()) as *const T;
            assert!(!p.is_null(), "missing extension {id:?}");
            &*p
        }
    }

    /// The supported note dialects of each note input port.
    pub fn note_input_dialects(&self) -> Vec<u32> {
        let ext: &clap_plugin_note_ports = self.ext(CLAP_EXT_NOTE_PORTS);
        // SAFETY: `ext` is the plugin's `clap.note-ports` table (see `ext`), called with the live
        // `self.plugin`. `clap_note_port_info` holds only integers and a `c_char` array, so
        // all-zero is a valid value for `get` to overwrite.
        unsafe {
            let n = (ext.count.unwrap())(self.plugin, true);
            (0..n)
                .map(|i| {
                    let mut info = std::mem::zeroed();
                    assert!((ext.get.unwrap())(self.plugin, i, true, &mut info));
                    let info: clap_sys::ext::note_ports::clap_note_port_info = info;
                    info.supported_dialects
                })
                .collect()
        }
    }

    /// The descriptor's id and feature strings.
    pub fn descriptor(&self) -> (String, Vec<String>) {
        // SAFETY: `desc` is the descriptor of the live `self.plugin`, which it owns until
        // `destroy`. CLAP requires `id` and each feature to be NUL-terminated and the `features`
        // array to end in a null pointer, so the loop stops at that terminator and reads no
        // further.
        unsafe {
            let desc = &*(*self.plugin).desc;
            let id = CStr::from_ptr(desc.id).to_string_lossy().into_owned();
            let mut features = Vec::new();
            let mut f = desc.features;
            while !(*f).is_null() {
                features.push(CStr::from_ptr(*f).to_string_lossy().into_owned());
                f = f.add(1);
            }
            (id, features)
        }
    }

    /// Run main-thread callbacks the plugin asked for.
    pub fn pump_main_thread(&self) {
        if self.host_data.callback_requested.replace(false) {
            // SAFETY: `self.plugin` is alive until `Drop`, and this runs on the thread that
            // created it, which the wrapper treats as the main thread, as `on_main_thread`
            // requires.
            unsafe { ((*self.plugin).on_main_thread.unwrap())(self.plugin) };
        }
    }

    /// Select an audio port configuration by its index (0 = stereo, 1 = mono).
    pub fn select_audio_config(&mut self, index: u32) -> bool {
        assert!(!self.active, "select the layout while deactivated");
        let ext: &clap_plugin_audio_ports_config = self.ext(CLAP_EXT_AUDIO_PORTS_CONFIG);
        // SAFETY: `ext` is the plugin's `clap.audio-ports-config` table (see `ext`), called with
        // the live `self.plugin` while deactivated. `clap_audio_ports_config` holds integers,
        // bools, a `c_char` array and nullable pointers, so all-zero is a valid value for `get` to
        // overwrite.
        unsafe {
            let mut cfg = std::mem::zeroed();
            if !(ext.get.unwrap())(self.plugin, index, &mut cfg) {
                return false;
            }
            (ext.select.unwrap())(self.plugin, cfg.id)
        }
    }

    /// Tell the plugin the host renders offline (a bounce) or in real time, through
    /// `clap.render`; whether it accepted.
    pub fn set_render_offline(&self, offline: bool) -> bool {
        let ext: &clap_plugin_render = self.ext(CLAP_EXT_RENDER);
        let mode = if offline {
            CLAP_RENDER_OFFLINE
        } else {
            CLAP_RENDER_REALTIME
        };
        // SAFETY: `ext` is the plugin's `clap.render` table (see `ext`), called on the main
        // thread with the live `self.plugin`.
        unsafe { (ext.set.unwrap())(self.plugin, mode) }
    }

    pub fn activate(&mut self, sample_rate: f64, min_frames: u32, max_frames: u32) -> bool {
        // SAFETY: `self.plugin` is non-null (checked in `new`) and alive until `Drop`; this runs
        // on the main thread, as `activate` requires.
        let ok = unsafe {
            ((*self.plugin).activate.unwrap())(self.plugin, sample_rate, min_frames, max_frames)
        };
        self.active = ok;
        ok
    }

    pub fn start_processing(&mut self) -> bool {
        // SAFETY: `self.plugin` is non-null (checked in `new`) and alive until `Drop`; the call
        // takes no other pointer.
        let ok = unsafe { ((*self.plugin).start_processing.unwrap())(self.plugin) };
        self.processing = ok;
        ok
    }

    pub fn stop_processing(&mut self) {
        if self.processing {
            // SAFETY: `self.plugin` is alive until `Drop`, and `self.processing` means
            // `start_processing` succeeded, as `stop_processing` requires.
            unsafe { ((*self.plugin).stop_processing.unwrap())(self.plugin) };
            self.processing = false;
        }
    }

    pub fn reset(&mut self) {
        // SAFETY: `self.plugin` is non-null (checked in `new`) and alive until `Drop`; the call
        // takes no other pointer.
        unsafe { ((*self.plugin).reset.unwrap())(self.plugin) };
    }

    pub fn deactivate(&mut self) {
        self.stop_processing();
        if self.active {
            // SAFETY: `self.plugin` is alive until `Drop`, and `self.active` means `activate`
            // succeeded, as `deactivate` requires.
            unsafe { ((*self.plugin).deactivate.unwrap())(self.plugin) };
            self.active = false;
        }
        self.pump_main_thread();
    }

    /// Process one block. `inputs` and `outputs` hold one slice per channel; when `in_place` is
    /// set the outputs start as a copy of the inputs and the same buffers are passed as both.
    pub fn process(
        &mut self,
        inputs: &[Vec<f32>],
        outputs: &mut [Vec<f32>],
        events: &Vec<Event>,
        in_place: bool,
    ) -> clap_process_status {
        let frames = inputs[0].len();
        assert!(
            inputs
                .iter()
                .chain(outputs.iter())
                .all(|c| c.len() == frames)
        );
        let mut input_copies: Vec<Vec<f32>> = inputs.to_vec();
        if in_place {
            for (o, i) in outputs.iter_mut().zip(inputs) {
                o.copy_from_slice(i);
            }
        }
        let mut in_ptrs: Vec<*mut f32> = if in_place {
            outputs.iter_mut().map(|c| c.as_mut_ptr()).collect()
        } else {
            input_copies.iter_mut().map(|c| c.as_mut_ptr()).collect()
        };
        let mut out_ptrs: Vec<*mut f32> = outputs.iter_mut().map(|c| c.as_mut_ptr()).collect();
        let audio_in = clap_audio_buffer {
            data32: in_ptrs.as_mut_ptr(),
            data64: ptr::null_mut(),
            channel_count: in_ptrs.len() as u32,
            latency: 0,
            constant_mask: 0,
        };
        let mut audio_out = clap_audio_buffer {
            data32: out_ptrs.as_mut_ptr(),
            data64: ptr::null_mut(),
            channel_count: out_ptrs.len() as u32,
            latency: 0,
            constant_mask: 0,
        };
        let in_events = clap_input_events {
            ctx: events as *const Vec<Event> as *mut c_void,
            size: Some(events_size),
            get: Some(events_get),
        };
        let out_events = clap_output_events {
            ctx: ptr::null_mut(),
            try_push: Some(out_events_push),
        };
        let process = clap_process {
            steady_time: self.steady_time,
            frames_count: frames as u32,
            transport: ptr::null(),
            audio_inputs: &audio_in,
            audio_outputs: &mut audio_out,
            audio_inputs_count: 1,
            audio_outputs_count: 1,
            in_events: &in_events,
            out_events: &out_events,
        };
        self.steady_time += frames as i64;
        // SAFETY: `self.plugin` is alive until `Drop`. Everything `process` points to is a local
        // or a borrowed argument that outlives this call: the two buffer structs, `in_ptrs` and
        // `out_ptrs` (whose lengths are the `channel_count`s), the channel `Vec`s of `frames`
        // samples each (asserted above), both event lists and the `events` behind
        // `in_events.ctx`. In place, the inputs and outputs alias, which CLAP allows.
        let status = unsafe { ((*self.plugin).process.unwrap())(self.plugin, &process) };
        if !in_place {
            assert_eq!(
                input_copies
                    .iter()
                    .map(|c| c.iter().map(|x| x.to_bits()).collect::<Vec<_>>())
                    .collect::<Vec<_>>(),
                inputs
                    .iter()
                    .map(|c| c.iter().map(|x| x.to_bits()).collect::<Vec<_>>())
                    .collect::<Vec<_>>(),
                "the plugin wrote to its input buffers"
            );
        }
        assert_ne!(status, CLAP_PROCESS_ERROR, "process() returned an error");
        self.pump_main_thread();
        status
    }

    /// Save the state through `clap.state`.
    pub fn save_state(&self) -> Vec<u8> {
        let ext: &clap_plugin_state = self.ext(CLAP_EXT_STATE);
        let mut out: Vec<u8> = Vec::new();
        let stream = clap_ostream {
            ctx: &mut out as *mut Vec<u8> as *mut c_void,
            write: Some(ostream_write),
        };
        assert!(
            // SAFETY: `ext` is the live plugin's `clap.state` table (see `ext`); `stream` and the
            // `out` behind its `ctx` outlive the `save` call.
            unsafe { (ext.save.unwrap())(self.plugin, &stream) },
            "state save failed"
        );
        out
    }

    /// Load a state through `clap.state`, handing it over in reads of at most `chunk` bytes.
    pub fn load_state(&mut self, data: &[u8], chunk: usize) -> bool {
        let ext: &clap_plugin_state = self.ext(CLAP_EXT_STATE);
        let mut cursor = ReadCursor {
            data,
            pos: 0,
            chunk,
        };
        let stream = clap_istream {
            ctx: &mut cursor as *mut ReadCursor as *mut c_void,
            read: Some(istream_read),
        };
        // SAFETY: `ext` is the live plugin's `clap.state` table (see `ext`); `stream` and the
        // `cursor` behind its `ctx`, borrowing `data`, outlive the `load` call.
        let ok = unsafe { (ext.load.unwrap())(self.plugin, &stream) };
        self.pump_main_thread();
        ok
    }

    fn params_ext(&self) -> &clap_plugin_params {
        self.ext(CLAP_EXT_PARAMS)
    }

    /// Every parameter's info, in the plugin's order.
    pub fn param_infos(&self) -> Vec<clap_param_info> {
        let ext = self.params_ext();
        // SAFETY: `ext` is the live plugin's `clap.params` table (see `ext`), called with the live
        // `self.plugin`. `clap_param_info` holds integers, floats, `c_char` arrays and a nullable
        // cookie pointer, so all-zero is a valid value for `get_info` to overwrite.
        unsafe {
            let n = (ext.count.unwrap())(self.plugin);
            (0..n)
                .map(|i| {
                    let mut info = std::mem::zeroed();
                    assert!((ext.get_info.unwrap())(self.plugin, i, &mut info));
                    info
                })
                .collect()
        }
    }

    /// The CLAP id of the parameter with this display name.
    pub fn param_id(&self, name: &str) -> u32 {
        self.param_infos()
            .iter()
            // SAFETY: `name` is a fixed `c_char` array, zeroed in `param_infos` and then filled
            // by nice-plug's `strlcpy`, which always leaves a NUL inside the array.
            .find(|i| unsafe { CStr::from_ptr(i.name.as_ptr()) }.to_str() == Ok(name))
            .unwrap_or_else(|| panic!("no parameter named {name}"))
            .id
    }

    pub fn param_value(&self, id: u32) -> f64 {
        let ext = self.params_ext();
        let mut v = 0.0;
        // SAFETY: `ext` is the live plugin's `clap.params` table (see `ext`); `v` outlives the
        // call.
        assert!(unsafe { (ext.get_value.unwrap())(self.plugin, id, &mut v) });
        v
    }

    pub fn param_text(&self, id: u32, value: f64) -> String {
        let ext = self.params_ext();
        let mut buf = [0 as c_char; 256];
        // SAFETY: `ext` is the live plugin's `clap.params` table (see `ext`); `buf` outlives the
        // call and its true length is passed as the size, so the plugin writes only inside it.
        assert!(unsafe {
            (ext.value_to_text.unwrap())(self.plugin, id, value, buf.as_mut_ptr(), buf.len() as u32)
        });
        // SAFETY: `buf` started all zeros and the plugin writes a NUL-terminated string inside it
        // (nice-plug's `strlcpy` always terminates), so a NUL lies within the 256 bytes.
        unsafe { CStr::from_ptr(buf.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    }

    pub fn param_from_text(&self, id: u32, text: &str) -> Option<f64> {
        let ext = self.params_ext();
        let text = CString::new(text).unwrap();
        let mut v = 0.0;
        // SAFETY: `ext` is the live plugin's `clap.params` table (see `ext`); `text` is a
        // NUL-terminated `CString` and `v` a local, both outliving the call.
        unsafe { (ext.text_to_value.unwrap())(self.plugin, id, text.as_ptr(), &mut v) }.then_some(v)
    }

    /// Apply parameter changes outside of processing, through `params.flush`.
    pub fn flush_params(&mut self, events: &Vec<Event>) {
        let ext = self.params_ext();
        let in_events = clap_input_events {
            ctx: events as *const Vec<Event> as *mut c_void,
            size: Some(events_size),
            get: Some(events_get),
        };
        let out_events = clap_output_events {
            ctx: ptr::null_mut(),
            try_push: Some(out_events_push),
        };
        // SAFETY: `ext` is the live plugin's `clap.params` table (see `ext`); `in_events`,
        // `out_events` and the `events` behind `in_events.ctx` all outlive the `flush` call.
        unsafe { (ext.flush.unwrap())(self.plugin, &in_events, &out_events) };
        self.pump_main_thread();
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        self.deactivate();
        // SAFETY: `self.plugin` is alive and deactivated (by `deactivate` above); it is destroyed
        // exactly once, here, and not used afterwards.
        unsafe { ((*self.plugin).destroy.unwrap())(self.plugin) };
    }
}
