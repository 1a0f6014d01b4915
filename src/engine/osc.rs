//! OSC in: VJ tools (TouchDesigner, Resolume, a phone's controller) drive Dyeflow over UDP.
//!
//! Off by default; the panel's Settings turn it on and pick the port (saved with the project,
//! not with presets). A thread of its own listens on every interface at that port, decodes
//! packets with `rosc`, and
//! - `/dyeflow/param/<id> <value>` sets parameter `<id>` (its id, as in presets) to the
//!   normalized `value` (0 to 1; an int, float, double or bool);
//! - `/dyeflow/splat x y r g b dx dy` paints: dye of colour `r g b` (0 to 1) at `x y` (0 to 1
//!   across and up the frame), pushed by `dx dy` (canvas heights a second), with the brush's
//!   radius; it goes to the simulation thread's queue like the editor's mouse;
//! - bundles are opened (their time tags ignored: everything acts on arrival).
//!
//! Anything else (not OSC, unknown addresses, wrong arguments, non-finite numbers) is counted
//! and ignored. Nothing it receives reaches the audio thread: parameters are atomics the
//! simulation thread reads, and splats go through a lock-free queue. A parameter set over OSC
//! changes what Dyeflow draws at once; the host is not told (it learns the value when it saves
//! the project), so an automation lane on the same parameter overrides it at its next point.

use crate::bridge::events::{SimEvent, TimedEvent};
use crate::bridge::queue::EventSender;
use crate::fluid::Splat;
use crate::params::DyeflowParams;
use nice_plug::prelude::{ParamPtr, Params};
use std::collections::HashMap;
use std::net::UdpSocket;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long a receive waits before the thread looks at its stop flag, ms.
const RECV_TIMEOUT_MS: u64 = 50;
/// Deepest bundle nesting opened (deeper ones count as malformed).
const MAX_BUNDLE_DEPTH: usize = 8;
/// Radius of an OSC splat, canvas heights (the editor brush's default).
const SPLAT_RADIUS: f32 = 0.05;
/// The thread's name.
pub const OSC_THREAD_NAME: &str = "dyeflow-osc";

/// What the server has taken so far.
#[derive(Debug, Default)]
pub struct OscCounts {
    /// Messages acted on.
    pub taken: AtomicU64,
    /// Packets that are not OSC, or messages with wrong arguments.
    pub malformed: AtomicU64,
    /// Messages to addresses Dyeflow does not have.
    pub unknown: AtomicU64,
}

/// A running OSC server on one port.
pub struct OscServer {
    port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    counts: Arc<OscCounts>,
}

impl OscServer {
    /// Listen on `port` (every interface): parameters into `params`, splats into `events`.
    pub fn start(
        port: u16,
        params: Arc<DyeflowParams>,
        events: EventSender,
    ) -> std::io::Result<Self> {
        let socket = UdpSocket::bind(("0.0.0.0", port))?;
        socket.set_read_timeout(Some(Duration::from_millis(RECV_TIMEOUT_MS)))?;
        let stop = Arc::new(AtomicBool::new(false));
        let counts = Arc::new(OscCounts::default());
        let thread = {
            let (stop, counts) = (stop.clone(), counts.clone());
            std::thread::Builder::new()
                .name(OSC_THREAD_NAME.into())
                .spawn(move || run(&socket, &stop, &params, events, &counts))?
        };
        Ok(Self {
            port,
            stop,
            thread: Some(thread),
            counts,
        })
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `(taken, malformed, unknown)` so far.
    pub fn counts(&self) -> (u64, u64, u64) {
        let c = &self.counts;
        (
            c.taken.load(Ordering::Relaxed),
            c.malformed.load(Ordering::Relaxed),
            c.unknown.load(Ordering::Relaxed),
        )
    }
}

impl Drop for OscServer {
    /// Stop the thread (it looks at the flag at least every [`RECV_TIMEOUT_MS`]) and wait for
    /// it, at most [`super::DROP_WAIT_MS`] plus that.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            crate::pin::join_within(
                thread,
                super::DROP_WAIT_MS + RECV_TIMEOUT_MS,
                "The OSC thread",
            );
        }
    }
}

fn run(
    socket: &UdpSocket,
    stop: &AtomicBool,
    params: &DyeflowParams,
    mut events: EventSender,
    counts: &OscCounts,
) {
    let ptrs: HashMap<String, ParamPtr> = params
        .param_map()
        .into_iter()
        .map(|(id, ptr, _)| (id, ptr))
        .collect();
    let aspect = || params.settings().aspect.ratio();
    let mut buf = vec![0u8; rosc::decoder::MTU.max(65_536)];
    while !stop.load(Ordering::Acquire) {
        let n = match socket.recv(&mut buf) {
            Ok(n) => n,
            // Timeouts (and anything else the socket reports) come back to the stop flag.
            Err(_) => continue,
        };
        match rosc::decoder::decode_udp(&buf[..n]) {
            Ok((_, packet)) => take(&packet, 0, &ptrs, &mut events, aspect(), counts),
            Err(_) => {
                counts.malformed.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// Act on `packet` (a bundle `depth` deep).
fn take(
    packet: &rosc::OscPacket,
    depth: usize,
    ptrs: &HashMap<String, ParamPtr>,
    events: &mut EventSender,
    aspect: f32,
    counts: &OscCounts,
) {
    match packet {
        rosc::OscPacket::Bundle(b) if depth < MAX_BUNDLE_DEPTH => {
            for p in &b.content {
                take(p, depth + 1, ptrs, events, aspect, counts);
            }
        }
        rosc::OscPacket::Bundle(_) => {
            counts.malformed.fetch_add(1, Ordering::Relaxed);
        }
        rosc::OscPacket::Message(m) => {
            let counter = match message(m, ptrs, events, aspect) {
                Taken::Yes => &counts.taken,
                Taken::Malformed => &counts.malformed,
                Taken::Unknown => &counts.unknown,
            };
            counter.fetch_add(1, Ordering::Relaxed);
        }
    }
}

enum Taken {
    Yes,
    Malformed,
    Unknown,
}

/// A number argument, if it is one and finite.
fn number(arg: &rosc::OscType) -> Option<f32> {
    let x = match *arg {
        rosc::OscType::Float(x) => x,
        rosc::OscType::Double(x) => x as f32,
        rosc::OscType::Int(x) => x as f32,
        rosc::OscType::Long(x) => x as f32,
        rosc::OscType::Bool(b) => f32::from(u8::from(b)),
        _ => return None,
    };
    x.is_finite().then_some(x)
}

fn message(
    m: &rosc::OscMessage,
    ptrs: &HashMap<String, ParamPtr>,
    events: &mut EventSender,
    aspect: f32,
) -> Taken {
    if let Some(id) = m.addr.strip_prefix("/dyeflow/param/") {
        let Some(&ptr) = ptrs.get(id) else {
            return Taken::Unknown;
        };
        let [arg] = m.args.as_slice() else {
            return Taken::Malformed;
        };
        let Some(value) = number(arg) else {
            return Taken::Malformed;
        };
        // SAFETY: the pointers come from the parameters this thread holds (the engine keeps
        // them alive longer than the server).
        unsafe { ptr._internal_set_normalized_value(value.clamp(0.0, 1.0)) };
        return Taken::Yes;
    }
    if m.addr == "/dyeflow/splat" {
        let values: Option<Vec<f32>> = m.args.iter().map(number).collect();
        let Some([x, y, r, g, b, dx, dy]) =
            values.as_deref().and_then(|v| <[f32; 7]>::try_from(v).ok())
        else {
            return Taken::Malformed;
        };
        let unit = |v: f32| v.clamp(0.0, 1.0);
        let splat = Splat {
            pos: [unit(x) * aspect, unit(y)],
            radius: SPLAT_RADIUS,
            color: [unit(r), unit(g), unit(b)],
            amount: 1.0,
            force: [dx.clamp(-50.0, 50.0), dy.clamp(-50.0, 50.0)],
            ..Splat::default()
        };
        events.send(TimedEvent {
            time_s: 0.0,
            event: SimEvent::Splat(splat),
        });
        return Taken::Yes;
    }
    Taken::Unknown
}
