//! A bounce recognised by its pace, for hosts that do not say they render offline: audio
//! processed much faster than real time, for seconds of audio, is a bounce; a host's
//! anticipative processing (a burst a little ahead of the play head, then real time) is not.
//!
//! The detector sees each block's start on two clocks, the wall clock and the audio clock
//! (seconds of audio processed). It keeps an anchor: the last block at which the audio was not
//! ahead of the wall clock (beyond [`SLACK_S`]) since the anchor before it (playing in real time
//! moves it every block). The audio processed since the anchor beyond the wall time since then is the *lead*.
//! A bounce starts when the lead reaches [`LEAD_S`] while the audio since the anchor ran at least
//! [`BOUNCE_RATIO`] times as fast as the wall clock; it started at the anchor, so a capture that
//! kept the records since then (the capture thread's lookback) loses none of its first seconds.
//!
//! A bounce ends when, since it last ran fast, [`END_S`] seconds of audio have gone at less than
//! [`END_RATIO`] times real time: playback at real time again, or a host that stopped processing
//! and came back later (a gap of [`END_S`] seconds of wall time beyond the audio ends it at
//! once, as the capture thread finishes a capture after as long a silence). Between the two
//! ratios it goes on (a slow bounce, or one recovering
//! from a stall of the host's).
//!
//! Pure arithmetic on two numbers a block: no clock is read here (the caller passes them), so
//! tests drive it with made-up timings.

/// Audio seconds ahead of real time that make a bounce. A host's anticipative processing runs
/// a fraction of a second ahead of the play head (REAPER's default render-ahead is 200 ms);
/// buffers of 8192 frames are 0.19 s at 44.1 kHz.
pub const LEAD_S: f64 = 3.0;
/// The least speed, in audio seconds per wall second, of a bounce. A host whose audio clock
/// runs a little fast against the wall clock (drift) gains lead slowly, and never this fast.
pub const BOUNCE_RATIO: f64 = 1.5;
/// Wall seconds after which an anchor that has not seen [`BOUNCE_RATIO`] moves on: a slow gain
/// of lead (drift, a host a few per cent fast) starts over instead of adding up to [`LEAD_S`].
pub const DRIFT_WINDOW_S: f64 = 10.0;
/// Audio seconds at less than [`END_RATIO`] times real time that end a bounce.
pub const END_S: f64 = 3.0;
/// Audio seconds ahead that still count as real time for the anchor: the two clocks' rounding,
/// and a block that comes a little early. A bounce gains more than this in its first block (at
/// 1.5x, a third of a 10 ms block).
pub const SLACK_S: f64 = 0.001;
/// The speed below which a bounce is over (real time is 1). A bounce at 2x that stalls for half a
/// second needs 3 s of audio to be back at [`BOUNCE_RATIO`] since its last fast block, and is at
/// 1.5 then: well above this.
pub const END_RATIO: f64 = 1.2;

/// What a block's timing says.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PaceEvent {
    /// Nothing new.
    Same,
    /// A bounce: the audio has run far ahead of the wall clock since audio time `from_s`.
    Bounce { from_s: f64 },
    /// The bounce is over: the audio has run at (or below) real time since audio time `since_s`.
    Over { since_s: f64 },
}

/// A point on both clocks, seconds.
#[derive(Clone, Copy, Debug)]
struct Mark {
    wall_s: f64,
    audio_s: f64,
}

/// The detector (one per plugin instance, on the audio thread).
#[derive(Clone, Debug)]
pub struct Pace {
    /// Before a bounce: where the audio was last not ahead. During one: where it last ran fast.
    anchor: Option<Mark>,
    bouncing: bool,
}

impl Default for Pace {
    fn default() -> Self {
        Self::new()
    }
}

impl Pace {
    pub const fn new() -> Self {
        Self {
            anchor: None,
            bouncing: false,
        }
    }

    /// Whether a bounce is under way.
    pub fn bouncing(&self) -> bool {
        self.bouncing
    }

    /// Forget the history (the host stopped processing: deactivation).
    pub fn reset(&mut self) {
        *self = Self::new();
    }

    /// A block starts at wall time `wall_s` and audio time `audio_s` (both in seconds, each
    /// from any origin of its own).
    pub fn block(&mut self, wall_s: f64, audio_s: f64) -> PaceEvent {
        let now = Mark { wall_s, audio_s };
        let Some(anchor) = self.anchor else {
            self.anchor = Some(now);
            return PaceEvent::Same;
        };
        let wall = wall_s - anchor.wall_s;
        let audio = audio_s - anchor.audio_s;
        // Clocks that are not numbers, or run backwards: start over here.
        if !(wall.is_finite() && audio.is_finite()) || wall < 0.0 || audio < 0.0 {
            self.anchor = Some(now);
            return PaceEvent::Same;
        }
        let fast = audio >= BOUNCE_RATIO * wall;
        if self.bouncing {
            let slow = audio < END_RATIO * wall;
            // Fast again, or ten seconds of a slow bounce: measured from here on (a later
            // return to real time then shows within the window, not diluted by the past).
            if fast || (wall > DRIFT_WINDOW_S && !slow) {
                self.anchor = Some(now);
            } else if (audio >= END_S && slow) || wall - audio >= END_S {
                self.bouncing = false;
                self.anchor = Some(now);
                return PaceEvent::Over {
                    since_s: anchor.audio_s,
                };
            }
            return PaceEvent::Same;
        }
        let lead = audio - wall;
        if lead >= LEAD_S && fast {
            self.bouncing = true;
            self.anchor = Some(now);
            return PaceEvent::Bounce {
                from_s: anchor.audio_s,
            };
        }
        if lead <= SLACK_S || (wall > DRIFT_WINDOW_S && !fast) {
            self.anchor = Some(now);
        }
        PaceEvent::Same
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feed `blocks` blocks of `block_s` audio seconds, each taking `wall_per_block_s` of wall
    /// time, from the clocks `(wall, audio)`; the events with the block's audio time.
    fn run(
        pace: &mut Pace,
        clocks: &mut (f64, f64),
        blocks: usize,
        block_s: f64,
        wall_per_block_s: impl Fn(usize) -> f64,
    ) -> Vec<(f64, PaceEvent)> {
        let mut out = Vec::new();
        for b in 0..blocks {
            let e = pace.block(clocks.0, clocks.1);
            if e != PaceEvent::Same {
                out.push((clocks.1, e));
            }
            clocks.0 += wall_per_block_s(b);
            clocks.1 += block_s;
        }
        out
    }

    const BLOCK_S: f64 = 512.0 / 48_000.0;

    /// Real-time play, then a bounce at 200x: found within the lead's worth of audio, starting
    /// at the first fast block (no second lost); then real time again ends it.
    #[test]
    fn a_fast_bounce_is_found_from_its_first_block() {
        let mut pace = Pace::new();
        let mut clocks = (100.0, 7.0);
        // 10 s of play at real time with a little jitter.
        let jitter = |b: usize| BLOCK_S * if b.is_multiple_of(7) { 1.6 } else { 0.9 };
        assert!(run(&mut pace, &mut clocks, 940, BLOCK_S, jitter).is_empty());
        let bounce_start = clocks.1;
        let events = run(&mut pace, &mut clocks, 2000, BLOCK_S, |_| BLOCK_S / 200.0);
        let (at, event) = events[0];
        // The lead reaches 3 s after a little more than 3 s of audio at 200x.
        assert!(at - bounce_start < LEAD_S * 1.01 + BLOCK_S, "found at {at}");
        match event {
            PaceEvent::Bounce { from_s } => {
                assert!(
                    (from_s - bounce_start).abs() <= BLOCK_S + 1e-9,
                    "from {from_s}, bounce at {bounce_start}"
                );
            }
            e => panic!("{e:?}"),
        }
        assert_eq!(events.len(), 1, "{events:?}");
        assert!(pace.bouncing());
        let end = clocks.1;
        // Back to real time: over after END_S of audio, since the bounce's end.
        let events = run(&mut pace, &mut clocks, 600, BLOCK_S, |_| BLOCK_S);
        assert_eq!(events.len(), 1, "{events:?}");
        let (at, event) = events[0];
        assert!((at - end - END_S).abs() < 2.0 * BLOCK_S, "{at} {end}");
        // The block at `end` still came at the bounce's pace (its predecessor took no time).
        assert_eq!(event, PaceEvent::Over { since_s: end });
        assert!(!pace.bouncing());
    }

    /// Anticipative processing: a burst of a second ahead of the play head at every start of
    /// playback, and blocks of 8192 frames at real time, are not bounces.
    #[test]
    fn anticipation_and_big_blocks_are_not_bounces() {
        let mut pace = Pace::new();
        let mut clocks = (0.0, 0.0);
        for _ in 0..5 {
            // 1 s rendered ahead at once, then real time for 20 s, then stopped for 5 s.
            assert!(run(&mut pace, &mut clocks, 94, BLOCK_S, |_| 1e-5).is_empty());
            assert!(run(&mut pace, &mut clocks, 1875, BLOCK_S, |_| BLOCK_S).is_empty());
            clocks.0 += 5.0;
        }
        let big = 8192.0 / 44_100.0;
        assert!(
            run(&mut pace, &mut clocks, 2000, big, |b| big
                * (b % 2) as f64
                * 2.0)
            .is_empty()
        );
        assert!(!pace.bouncing());
    }

    /// A host whose audio clock runs 3 % fast against the wall clock (or a drifting sound card)
    /// gains a second of lead every half minute: never a bounce, even after an hour.
    #[test]
    fn drift_is_not_a_bounce() {
        let mut pace = Pace::new();
        let mut clocks = (0.0, 0.0);
        let hour = (3600.0 / BLOCK_S) as usize;
        assert!(run(&mut pace, &mut clocks, hour, BLOCK_S, |_| BLOCK_S / 1.03).is_empty());
    }

    /// A slow bounce (2x real time, with stalls of half a second) is found after a few seconds,
    /// from its start, and its stalls do not end it.
    #[test]
    fn a_slow_bounce_with_stalls_is_one_bounce() {
        let mut pace = Pace::new();
        let mut clocks = (0.0, 0.0);
        assert!(run(&mut pace, &mut clocks, 500, BLOCK_S, |_| BLOCK_S).is_empty());
        let start = clocks.1;
        let stalls = |b: usize| {
            if (b + 1).is_multiple_of(400) {
                0.5
            } else {
                BLOCK_S / 2.0
            }
        };
        let events = run(&mut pace, &mut clocks, 12_000, BLOCK_S, stalls);
        assert_eq!(events.len(), 1, "{events:?}");
        match events[0].1 {
            PaceEvent::Bounce { from_s } => assert!((from_s - start).abs() <= BLOCK_S + 1e-9),
            e => panic!("{e:?}"),
        }
        // The lead needs 3 s at 2x: 6 s of audio, and 1 s more for the stall in them.
        assert!(events[0].0 - start < 2.0 * LEAD_S + 1.2, "{events:?}");
    }

    /// A host that stops processing after a bounce and comes back later in real time ends it;
    /// clocks that jump backwards or are not numbers start the history over without a bounce.
    #[test]
    fn a_stop_ends_a_bounce_and_bad_clocks_reset() {
        let mut pace = Pace::new();
        let mut clocks = (0.0, 0.0);
        let events = run(&mut pace, &mut clocks, 1000, BLOCK_S, |_| 1e-5);
        assert!(matches!(events[0].1, PaceEvent::Bounce { .. }));
        clocks.0 += 600.0;
        let events = run(&mut pace, &mut clocks, 400, BLOCK_S, |_| BLOCK_S);
        assert!(
            matches!(events[..], [(_, PaceEvent::Over { .. })]),
            "{events:?}"
        );
        for (w, a) in [
            (f64::NAN, 1.0),
            (5.0, f64::INFINITY),
            (-1e9, 0.0),
            (1.0, -5.0),
        ] {
            assert_eq!(pace.block(w, a), PaceEvent::Same);
        }
        assert!(!pace.bouncing());
    }
}
