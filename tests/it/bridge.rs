//! The audio thread's bridge: no allocation under dense MIDI and a full queue, and a lock-free
//! queue that keeps order and accounts for every event across two threads.
//!
//! In debug builds nice-plug installs `nice_assert_no_alloc::AllocDisabler` as the global
//! allocator (its `assert_process_allocs` feature), so any allocation inside
//! `assert_no_alloc` aborts the process. `the_allocation_guard_is_armed` proves that in a
//! child process, so the no-allocation test cannot pass vacuously.

use crate::common;
use dyeflow::bridge::bands::Band;
use dyeflow::bridge::chroma::{ChromaAnalyzer, TARGET_RATE_HZ};
use dyeflow::bridge::events::{SimEvent, TimedEvent};
use dyeflow::bridge::queue::{self, EventReceiver};
use dyeflow::bridge::{Bridge, ChromaSink, TransportInfo};
use nice_plug::midi::{Channel, Key, NoteEvent, VoiceID};

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
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            &common::test_named("allocation_probe"),
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

/// The chroma's two sinks under the no-allocation guard: the tap to the chroma thread, never
/// drained, so it runs full and drops; and the inline analyzer (the renderer's), its 4096-point
/// FFT every 512 reduced-rate samples, into an event queue that also runs full. Rates change
/// and resets come on the way, as in the dense test.
#[test]
fn the_chroma_tap_and_the_inline_analysis_allocate_nothing_even_when_full() {
    let (tap, taps) = queue::tap_channel(4096);
    let (tx, _rx) = queue::channel(256);
    let mut tapped = Bridge::new(tx, 48_000.0, 5.0, 200.0);
    tapped.set_chroma_sink(ChromaSink::Queue(tap));
    let (tx, mut inline_rx) = queue::channel(64);
    let mut inline = Bridge::new(tx, 48_000.0, 5.0, 200.0);
    inline.set_chroma_sink(ChromaSink::Inline(Box::new(ChromaAnalyzer::new(
        TARGET_RATE_HZ,
    ))));
    let mut block = vec![0.0f32; 4096];
    let mut chroma_events = 0;
    nice_assert_no_alloc::assert_no_alloc(|| {
        for k in 0..600usize {
            if k % 200 == 0 {
                for b in [&mut tapped, &mut inline] {
                    b.set_sample_rate([44_100.0, 96_000.0, 22_050.0][k / 200]);
                    b.reset();
                }
            }
            for (i, x) in block.iter_mut().enumerate() {
                let n = k * 4096 + i;
                *x = 0.3 * (n as f32 * 0.06).sin() + if n % 9000 < 20 { 0.9 } else { 0.0 };
            }
            if k % 50 == 7 {
                block[100] = f32::NAN;
                block[200] = 1.0e30;
            }
            tapped.process(&[&block], None, || None::<NoteEvent<()>>);
            inline.process(&[&block, &block], None, || None::<NoteEvent<()>>);
            if k % 8 == 0 {
                inline_rx.drain(|e| {
                    if let SimEvent::Chroma { weights } = e.event {
                        chroma_events += 1;
                        assert!(weights.iter().all(|w| (0.0..=1.0).contains(w)));
                    }
                });
            }
        }
    });
    let stats = taps.stats();
    assert!(stats.dropped() > 100_000, "the tap never ran full");
    assert_eq!(stats.pushed(), 4096);
    assert!(
        inline.stats().dropped() > 0,
        "the event queue never ran full"
    );
    assert!(chroma_events > 10, "{chroma_events} chroma events");
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

/// Onsets per band of `signal` (mono, 48 kHz) through the bridge: (band, sample) pairs.
fn band_onsets(signal: &[f32]) -> Vec<(Band, usize)> {
    let (tx, mut rx) = queue::channel(1 << 16);
    let mut bridge = Bridge::new(tx, 48_000.0, 5.0, 200.0);
    let mut found = Vec::new();
    for block in signal.chunks(480) {
        bridge.process(&[block], None, || None::<NoteEvent<()>>);
        rx.drain(|e| {
            if let SimEvent::BandOnset { band, .. } = e.event {
                found.push((band, (e.time_s * 48_000.0).round() as usize));
            }
        });
    }
    found
}

/// A busy rock-like mix, 8 s at 48 kHz: a bass line changing note with every kick, held
/// three-note chords changing every 2 s, a constant hiss, eighth-note hi-hats, kicks (a sine
/// sweeping 120 -> 45 Hz, 150 ms) on the beats 0.5 + k s and noise-burst snares on the
/// off-beats 1.0 + k s. Returns the signal, the kick starts and the snare starts (samples).
fn busy_mix() -> (Vec<f32>, Vec<usize>, Vec<usize>) {
    use rand::{Rng, SeedableRng};
    let fs = 48_000.0f32;
    let n = (fs * 8.0) as usize;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(13);
    let tau = std::f32::consts::TAU;
    let mut out = vec![0.0f32; n];
    let (mut bass_phase, mut kick_phase) = (0.0f32, 0.0f32);
    let kicks: Vec<usize> = (0..8).map(|k| ((0.5 + k as f32) * fs) as usize).collect();
    let snares: Vec<usize> = (0..7).map(|k| ((1.0 + k as f32) * fs) as usize).collect();
    for (i, x) in out.iter_mut().enumerate() {
        let t = i as f32 / fs;
        // Bass: a soft square-ish wave, a new note at each kick.
        let beat = ((t - 0.5).max(0.0)).floor() as usize;
        let bass_hz = [55.0, 73.4, 82.4, 61.7][beat % 4];
        bass_phase = (bass_phase + bass_hz / fs).fract();
        let bass = (tau * bass_phase).sin() + 0.3 * (3.0 * tau * bass_phase).sin();
        // Chords: C major, then A minor, every 2 s, with 30 ms fades.
        let chord: [f32; 3] = if ((t / 2.0) as usize).is_multiple_of(2) {
            [261.6, 329.6, 392.0]
        } else {
            [220.0, 261.6, 329.6]
        };
        let pad: f32 = chord.iter().map(|f| (tau * f * t).sin()).sum::<f32>();
        let fade = ((t % 2.0) / 0.03).min(1.0);
        // Hiss and hi-hats (noise, 20 ms decays every 125 ms).
        let white: f32 = rng.random_range(-1.0..1.0);
        let hat_t = t % 0.125;
        let hat = 0.15 * (-hat_t / 0.02).exp() * white;
        *x = 0.25 * bass + 0.06 * fade * pad + 0.02 * white + hat;
        // Kicks: a decaying sine sweeping down.
        if let Some(&k) = kicks.iter().rev().find(|&&k| k <= i) {
            let kt = (i - k) as f32 / fs;
            if kt < 0.3 {
                let hz = 45.0 + 75.0 * (-kt / 0.03).exp();
                kick_phase = (kick_phase + hz / fs).fract();
                *x += 0.8 * (-kt / 0.15).exp() * (tau * kick_phase).sin();
            }
        }
        // Snares: a noise burst.
        if let Some(&s) = snares.iter().rev().find(|&&s| s <= i) {
            let st = (i - s) as f32 / fs;
            *x += 0.5 * (-st / 0.08).exp() * rng.random_range(-1.0f32..1.0);
        }
    }
    (out, kicks, snares)
}

/// In a busy mix every kick fires a low-band onset within 12 ms (the 200 Hz low-pass and a
/// 120 Hz sweep's first crests take most of it: under a 60 Hz frame), and the low band fires
/// nowhere else but at the mix's start (the bass out of silence); every noise-burst snare
/// fires a mid- or high-band onset within 12 ms.
#[test]
fn kicks_fire_the_low_band_and_snares_the_mid_or_high_band_in_a_busy_mix() {
    let (signal, kicks, snares) = busy_mix();
    let found = band_onsets(&signal);
    let near = |at: usize, starts: &[usize]| starts.iter().any(|&s| near_any(&[at], s));
    let low: Vec<usize> = found
        .iter()
        .filter(|f| f.0 == Band::Low)
        .map(|f| f.1)
        .collect();
    for &k in &kicks {
        assert!(near_any(&low, k), "kick at {k}: low onsets {low:?}");
    }
    assert!(
        low.iter().all(|&at| at < 2_400 || near(at, &kicks)),
        "low onsets away from the kicks: {low:?} (kicks {kicks:?})"
    );
    let upper: Vec<usize> = found
        .iter()
        .filter(|f| f.0 != Band::Low)
        .map(|f| f.1)
        .collect();
    for &s in &snares {
        assert!(
            near_any(&upper, s),
            "snare at {s}: mid/high onsets {upper:?}"
        );
    }
}

/// Whether any of `found` lies within 12 ms after `start` (48 kHz).
fn near_any(found: &[usize], start: usize) -> bool {
    found
        .iter()
        .any(|&at| at >= start && ((at - start) as f32) < 0.012 * 48_000.0)
}
