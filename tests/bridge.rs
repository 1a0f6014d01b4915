//! The audio thread's bridge: no allocation under dense MIDI and a full queue, and a lock-free
//! queue that keeps order and accounts for every event across two threads.
//!
//! In debug builds nice-plug installs `nice_assert_no_alloc::AllocDisabler` as the global
//! allocator (its `assert_process_allocs` feature), so any allocation inside
//! `assert_no_alloc` aborts the process. `the_allocation_guard_is_armed` proves that in a
//! child process, so the no-allocation test cannot pass vacuously.

use dyeflow::bridge::events::{SimEvent, TimedEvent};
use dyeflow::bridge::queue::{self, EventReceiver};
use dyeflow::bridge::{Bridge, TransportInfo};
use nice_plug::midi::{Channel, Key, NoteEvent, VoiceID};
use std::process::Command;

/// Environment variable that makes `allocation_probe` allocate under the guard.
const PROBE_ENV: &str = "DYEFLOW_ALLOC_PROBE";

/// Run only as a child of `the_allocation_guard_is_armed`: allocates inside `assert_no_alloc`,
/// which must abort the process.
#[test]
#[ignore = "run by the_allocation_guard_is_armed in a child process"]
fn allocation_probe() {
    if std::env::var_os(PROBE_ENV).is_none() {
        return;
    }
    let v = nice_assert_no_alloc::assert_no_alloc(|| std::hint::black_box(vec![1u8; 64]));
    println!("allocated {} bytes under the guard", v.len());
}

#[cfg(debug_assertions)]
#[test]
fn the_allocation_guard_is_armed() {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "allocation_probe",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(PROBE_ENV, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !out.status.success() && !stdout.contains("allocated 64 bytes"),
        "an allocation inside assert_no_alloc went through: {:?}\n{stdout}",
        out.status
    );
}

/// A deterministic stream of dense host note events for block `block` of `len` samples:
/// notes on and off, poly expressions, CCs (mod wheel, sustain, all notes off), pitch bend
/// and channel pressure, up to 300 per block, in timing order.
fn dense_event(block: u32, len: u32, k: u32) -> Option<NoteEvent<()>> {
    let count = 20 + (block * 37) % 280;
    if k >= count {
        return None;
    }
    let timing = (u64::from(k) * u64::from(len) / u64::from(count)) as u32;
    let key = Key::Number(((block * 7 + k * 5) % 128) as u8);
    let channel = Channel::Number(((block + k) % 16) as u8);
    let voice_id = VoiceID::ID((block * 1000 + k) as i32);
    let x = ((block + k) % 128) as f32 / 127.0;
    Some(match k % 9 {
        0 | 1 => NoteEvent::NoteOn {
            timing,
            voice_id,
            channel,
            key,
            velocity: x,
        },
        2 => NoteEvent::NoteOff {
            timing,
            voice_id,
            channel,
            key,
            velocity: 0.0,
        },
        3 => NoteEvent::PolyPressure {
            timing,
            voice_id,
            channel,
            key,
            pressure: x,
        },
        4 => NoteEvent::PolyTuning {
            timing,
            voice_id,
            channel,
            key,
            tuning: x * 4.0 - 2.0,
        },
        5 => NoteEvent::MidiCC {
            timing,
            channel: (k % 16) as u8,
            cc: [1, 64, 123][(k % 3) as usize],
            value: x,
        },
        6 => NoteEvent::MidiPitchBend {
            timing,
            channel: (k % 16) as u8,
            value: x,
        },
        7 => NoteEvent::MidiChannelPressure {
            timing,
            channel: (k % 16) as u8,
            pressure: x,
        },
        _ => NoteEvent::PolyBrightness {
            timing,
            voice_id,
            channel,
            key,
            brightness: f32::NAN,
        },
    })
}

/// 10,000 blocks of dense MIDI and loud, clicky audio at changing block sizes (1 to 8192
/// samples) and sample rates, through a small queue that the consumer drains only now and
/// then, so it runs full again and again. Everything inside `assert_no_alloc`, the consumer's
/// draining included.
#[test]
fn ten_thousand_dense_blocks_allocate_nothing_even_with_a_full_queue() {
    const SIZES: [usize; 8] = [1, 7, 64, 256, 333, 1024, 4096, 8192];
    let (tx, mut rx) = queue::channel(512);
    let mut bridge = Bridge::new(tx, 48_000.0, 5.0, 200.0);
    let left = vec![0.0f32; 8192];
    let right = vec![0.0f32; 8192];
    let (mut left, mut right) = (left, right);
    let mut received = 0u64;
    let mut last_time = f64::NEG_INFINITY;
    let mut in_order = true;

    nice_assert_no_alloc::assert_no_alloc(|| {
        for block in 0..10_000u32 {
            if block % 2500 == 0 {
                // Re-activation at another rate (the plugin calls this from activate()).
                bridge.set_sample_rate(
                    [44_100.0, 96_000.0, 22_050.0, 192_000.0][(block / 2500) as usize],
                );
                bridge.reset();
            }
            let len = SIZES[(block as usize * 5) % SIZES.len()];
            for (i, (l, r)) in left[..len].iter_mut().zip(&mut right[..len]).enumerate() {
                let n = block as usize * 8192 + i;
                let click = if n % 6000 < 30 { 0.9 } else { 0.0 };
                *l = click + 0.2 * ((n as f32) * 0.05).sin();
                *r = if n.is_multiple_of(5) { f32::NAN } else { -*l };
            }
            bridge.set_bypassed(block % 1000 == 999);
            bridge.set_envelope_times(1.0 + (block % 50) as f32, 100.0 + (block % 70) as f32);
            let transport = (block % 3 != 0).then_some(TransportInfo {
                playing: block % 4 != 0,
                tempo_bpm: 90.0 + f64::from(block % 60),
                beat: f64::from(block) * 0.25,
            });
            let mut k = 0;
            bridge.process(&[&left[..len], &right[..len]], transport, || {
                k += 1;
                dense_event(block, len as u32, k - 1)
            });
            // The consumer falls behind: it drains only every 16th block.
            if block % 16 == 0 {
                rx.drain(|e| {
                    received += 1;
                    in_order &= e.time_s >= last_time;
                    last_time = e.time_s;
                });
            }
        }
    });

    rx.drain(|_| received += 1);
    let stats = bridge.stats();
    assert!(in_order, "events left the queue out of time order");
    assert!(
        stats.dropped() > 10_000,
        "the queue never ran full: {} dropped",
        stats.dropped()
    );
    assert_eq!(stats.pushed(), received);
    assert_eq!(stats.received(), received);
}

fn receive_all(rx: &mut EventReceiver, out: &mut Vec<u64>) -> usize {
    rx.drain(|e| out.push(e.time_s as u64))
}

/// One producer thread pushes a numbered stream as fast as it can into a small queue while a
/// consumer thread drains it at its own, uneven pace. The consumer sees a strictly increasing
/// subsequence (order kept, nothing duplicated), and pushed = received + dropped.
#[test]
fn two_threads_keep_order_and_account_for_every_event() {
    const EVENTS: u64 = 2_000_000;
    let (mut tx, mut rx) = queue::channel(1024);
    let stats = tx.stats().clone();
    let producer = std::thread::spawn(move || {
        let mut accepted = 0u64;
        for n in 0..EVENTS {
            let e = TimedEvent {
                time_s: n as f64,
                event: SimEvent::Onset { strength: 0.5 },
            };
            if tx.send(e) {
                accepted += 1;
            }
            if n % 100_000 == 0 {
                std::thread::yield_now();
            }
        }
        accepted
    });
    let mut seen = Vec::with_capacity(EVENTS as usize);
    let mut rounds = 0u64;
    while !producer.is_finished() {
        receive_all(&mut rx, &mut seen);
        rounds += 1;
        if rounds.is_multiple_of(7) {
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
    }
    let accepted = producer.join().unwrap();
    receive_all(&mut rx, &mut seen);

    assert!(
        seen.windows(2).all(|w| w[0] < w[1]),
        "order broken or duplicates"
    );
    assert_eq!(seen.len() as u64, accepted);
    assert_eq!(stats.pushed(), accepted);
    assert_eq!(stats.received(), accepted);
    assert_eq!(stats.pushed() + stats.dropped(), EVENTS);
    assert!(
        stats.dropped() > 0,
        "the producer never outran the consumer"
    );
    assert!(accepted > 1024, "the consumer took almost nothing");
}
