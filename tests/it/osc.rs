//! OSC in, on 127.0.0.1 with bounded loops: the engine listens once the settings turn it on,
//! sets parameters by id and paints splats, counts what it cannot take, survives a flood,
//! and lets the port go when turned off.

use dyeflow::bridge::queue;
use dyeflow::engine::{Engine, EngineOptions};
use dyeflow::frame::frame_channel;
use dyeflow::params::{Aspect, BackendChoice, DyeflowParams, OscSettings, Settings};
use nice_plug::prelude::Param;
use rosc::{OscBundle, OscMessage, OscPacket, OscTime, OscType};
use std::net::UdpSocket;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn message(addr: &str, args: Vec<OscType>) -> Vec<u8> {
    rosc::encoder::encode(&OscPacket::Message(OscMessage {
        addr: addr.into(),
        args,
    }))
    .unwrap()
}

/// Wait up to 10 s for `ok`.
fn eventually(what: &str, mut ok: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ok() {
        assert!(start.elapsed() < Duration::from_secs(10), "{what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A UDP port nothing listens on now.
fn free_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Parameters for a small square CPU fluid (`resolution` cells) with OSC on at `port`.
fn listening(resolution: u32, port: u16) -> Arc<DyeflowParams> {
    let p = DyeflowParams::default();
    p.set_settings(Settings {
        sim_resolution: resolution,
        dye_scale: 1,
        aspect: Aspect::Square,
        backend: BackendChoice::Cpu,
        ..Settings::default()
    });
    p.set_osc(OscSettings {
        enabled: true,
        port,
    });
    Arc::new(p)
}

#[test]
fn osc_sets_parameters_paints_and_counts_what_it_cannot_take() {
    assert!(!DyeflowParams::default().osc().enabled, "off by default");
    let port = free_port();
    let p = listening(128, port);
    let (_tx, rx) = queue::channel(16);
    let (input, mut output) = frame_channel();
    let engine = Engine::start(p.clone(), vec![rx], input, EngineOptions::default()).unwrap();
    output.request(64, 64);
    let osc = || engine.status().osc.unwrap_or_default();
    eventually("the engine listens", || {
        osc().contains(&format!("listening on port {port}"))
    });
    let to = ("127.0.0.1", port);
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();

    // A parameter by its id, normalized.
    sock.send_to(
        &message("/dyeflow/param/visc", vec![OscType::Float(0.7)]),
        to,
    )
    .unwrap();
    eventually("the viscosity follows", || {
        (p.viscosity.unmodulated_normalized_value() - 0.7).abs() < 1e-6
    });
    // In a bundle, as an integer.
    let bundle = rosc::encoder::encode(&OscPacket::Bundle(OscBundle {
        timetag: OscTime::from((0, 1)),
        content: vec![OscPacket::Message(OscMessage {
            addr: "/dyeflow/param/visc".into(),
            args: vec![OscType::Int(0)],
        })],
    }))
    .unwrap();
    sock.send_to(&bundle, to).unwrap();
    eventually("a bundle's message acts", || {
        p.viscosity.unmodulated_normalized_value() == 0.0
    });

    // A splat at the upper left quarter paints it red.
    let splat = |x: f32, y: f32| {
        message(
            "/dyeflow/splat",
            [x, y, 1.0, 0.0, 0.0, 0.0, 0.0]
                .into_iter()
                .map(OscType::Float)
                .collect(),
        )
    };
    sock.send_to(&splat(0.25, 0.75), to).unwrap();
    eventually("the splat shows", || {
        let f = output.latest();
        f.width == 64 && {
            let i = (16 * 64 + 16) * 4;
            f.pixels[i] > 60 && f.pixels[i + 1] < f.pixels[i] / 2
        }
    });

    // Not OSC, wrong arguments, an unknown address, a NaN: counted, nothing changes.
    sock.send_to(b"not osc at all", to).unwrap();
    sock.send_to(&message("/dyeflow/splat", vec![OscType::Float(0.5)]), to)
        .unwrap();
    sock.send_to(
        &message("/dyeflow/param/visc", vec![OscType::Float(f32::NAN)]),
        to,
    )
    .unwrap();
    sock.send_to(&message("/dyeflow/nothing", vec![]), to)
        .unwrap();
    sock.send_to(
        &message("/dyeflow/param/no_such_id", vec![OscType::Float(0.5)]),
        to,
    )
    .unwrap();
    eventually("the bad packets are counted", || {
        osc().contains("3 taken, 3 malformed, 2 unknown")
    });
    assert_eq!(p.viscosity.unmodulated_normalized_value(), 0.0);

    // A flood: the engine goes on (bounded: 5 000 packets).
    let packet = splat(0.75, 0.25);
    for _ in 0..5_000 {
        let _ = sock.send_to(&packet, to);
    }
    eventually("the engine still answers", || {
        sock.send_to(
            &message("/dyeflow/param/visc", vec![OscType::Float(0.3)]),
            to,
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(20));
        (p.viscosity.unmodulated_normalized_value() - 0.3).abs() < 1e-6
    });
    let steps = engine.steps();
    eventually("it still steps", || engine.steps() > steps);

    // Off: the port is let go, and messages do nothing.
    p.set_osc(OscSettings {
        enabled: false,
        port,
    });
    eventually("the engine stops listening", || osc().is_empty());
    let rebound = UdpSocket::bind(("127.0.0.1", port));
    assert!(rebound.is_ok(), "the port is free again");
    drop(rebound);
    sock.send_to(
        &message("/dyeflow/param/visc", vec![OscType::Float(0.9)]),
        to,
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!((p.viscosity.unmodulated_normalized_value() - 0.3).abs() < 1e-6);
}

/// A port another program holds: the engine says why it does not listen, and goes on.
#[test]
fn a_taken_port_is_reported() {
    let holder = UdpSocket::bind("0.0.0.0:0").unwrap();
    let port = holder.local_addr().unwrap().port();
    let p = listening(128, port);
    let (_tx, rx) = queue::channel(16);
    let (input, output) = frame_channel();
    let engine = Engine::start(p, vec![rx], input, EngineOptions::default()).unwrap();
    output.request(32, 32);
    eventually("the engine says why", || {
        engine
            .status()
            .osc
            .is_some_and(|s| s.contains("not listening") && s.contains(&port.to_string()))
    });
    drop(holder);
}

/// While a capture is on, OSC's splats are recorded through the input tap (they drive the
/// fluid as the notes do); before it starts, none are.
#[test]
fn osc_splats_are_captured_while_a_capture_is_on() {
    let port = free_port();
    let p = listening(64, port);
    let (tap, mut records) = dyeflow::capture::InputTap::new();
    let (mut recorder, _chroma_tap, _queues) = dyeflow::capture::queues(p.clone(), &tap);
    let options = EngineOptions {
        input_tap: Some(tap.clone()),
        ..EngineOptions::default()
    };
    let (_tx, rx) = queue::channel(16);
    let (input, output) = frame_channel();
    let engine = Engine::start(p.clone(), vec![rx], input, options).unwrap();
    output.request(32, 32);
    eventually("the engine listens", || {
        engine
            .status()
            .osc
            .unwrap_or_default()
            .contains("listening")
    });
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let splat = |x: f32| {
        message(
            "/dyeflow/splat",
            [x, 0.5, 0.0, 1.0, 0.0, 0.0, 0.0]
                .into_iter()
                .map(OscType::Float)
                .collect(),
        )
    };
    let taken = || {
        let s = engine.status().osc.unwrap_or_default();
        s.split(" · ")
            .nth(1)
            .and_then(|t| t.split_whitespace().next()?.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // Before the capture: taken, not recorded.
    sock.send_to(&splat(0.1), ("127.0.0.1", port)).unwrap();
    eventually("the first splat is taken", || taken() >= 1);
    std::thread::sleep(Duration::from_millis(100));
    // During it: recorded at the latest block's audio time.
    tap.set_clock(3.5);
    recorder.start(3.5, 48_000.0, dyeflow::capture::Cause::Record);
    sock.send_to(&splat(0.9), ("127.0.0.1", port)).unwrap();
    let mut got = Vec::new();
    eventually("the second splat is recorded", || {
        records.drain(|r| got.push(r));
        !got.is_empty()
    });
    std::thread::sleep(Duration::from_millis(100));
    records.drain(|r| got.push(r));
    assert_eq!(got.len(), 1, "{got:?}");
    match got[0] {
        dyeflow::capture::Record::Event(e) => {
            assert_eq!(e.time_s, 3.5);
            match e.event {
                dyeflow::bridge::events::SimEvent::Splat(s) => {
                    assert!((s.pos[0] - 0.9).abs() < 1e-6 && s.color == [0.0, 1.0, 0.0]);
                }
                other => panic!("not a splat: {other:?}"),
            }
        }
        other => panic!("not an event: {other:?}"),
    }
}
