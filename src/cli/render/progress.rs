//! Progress of a render on standard error: a bar with the frames per second, the speed against
//! real time and the time left in a terminal; elsewhere (CI
//! logs, a pipe, a file) a plain line after a second and then every three seconds, so a long render never looks hung.
//! Nothing at all with `--quiet`. A closed standard error is ignored: the render goes on.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// How often a line is printed when standard error is not a terminal: often enough that a
/// CI log shows a render moving, seldom enough that an hour's render prints 1 200 lines.
pub const LINE_INTERVAL: Duration = Duration::from_secs(3);
/// When the first line comes: early, so the ETA is known soon.
pub const FIRST_LINE_AFTER: Duration = Duration::from_secs(1);
/// When the bar first shows the speed against real time, and how often it updates it.
const BAR_SPEED_AFTER: Duration = Duration::from_millis(500);
const BAR_SPEED_INTERVAL: Duration = Duration::from_millis(500);

/// Reports frames as they are rendered.
pub struct Progress {
    how: How,
    total: u64,
    done: u64,
    /// When the first frame was started (the pre-roll does not count towards the rate).
    since: Option<Instant>,
    /// When the next line (or the bar's next speed) is due.
    next_line: Option<Instant>,
    /// Frames per second of the video: frames rendered per second over this is the speed
    /// against real time.
    fps: u32,
}

enum How {
    Quiet,
    Bar(indicatif::ProgressBar),
    Lines,
}

impl Progress {
    /// Progress over `total` frames of a video at `fps`; `wanted` false for none.
    pub fn new(wanted: bool, total: u64, fps: u32) -> Self {
        let how = if !wanted {
            How::Quiet
        } else if std::io::stderr().is_terminal() {
            let bar = indicatif::ProgressBar::new(total);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{bar:40} {pos}/{len} frames  {per_sec}  {msg}  {eta} left",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            How::Bar(bar)
        } else {
            How::Lines
        };
        Self {
            how,
            total,
            done: 0,
            since: None,
            next_line: None,
            fps,
        }
    }

    /// A note about what happens before the frames (the pre-roll).
    pub fn note(&mut self, text: &str) {
        match &self.how {
            How::Quiet => {}
            How::Bar(bar) => bar.set_message(text.to_owned()),
            How::Lines => line(&format!("dyeflow render: {text}")),
        }
    }

    /// One more frame is done.
    pub fn frame(&mut self) {
        let since = *self.since.get_or_insert_with(Instant::now);
        self.done += 1;
        let speed = |done: u64| {
            let secs = since.elapsed().as_secs_f64().max(1e-9);
            let fps = done as f64 / secs;
            (fps, fps / f64::from(self.fps.max(1)))
        };
        match &self.how {
            How::Quiet => {}
            How::Bar(bar) => {
                if self.done == 1 {
                    bar.set_message(String::new());
                }
                bar.inc(1);
                let due = *self.next_line.get_or_insert(since + BAR_SPEED_AFTER);
                if Instant::now() >= due {
                    self.next_line = Some(Instant::now() + BAR_SPEED_INTERVAL);
                    bar.set_message(speed_text(speed(self.done).1));
                }
            }
            How::Lines => {
                let due = *self.next_line.get_or_insert(since + FIRST_LINE_AFTER);
                if Instant::now() >= due && self.done < self.total {
                    self.next_line = Some(Instant::now() + LINE_INTERVAL);
                    let (fps, real) = speed(self.done);
                    let eta = (self.total - self.done) as f64 / fps.max(1e-9);
                    line(&format!(
                        "dyeflow render: {}/{} frames ({:.0} %), {fps:.1} fps ({}), {} left",
                        self.done,
                        self.total,
                        100.0 * self.done as f64 / self.total.max(1) as f64,
                        speed_text(real),
                        eta_text(eta)
                    ));
                }
            }
        }
    }

    /// Clear the bar (the summary follows).
    pub fn finish(&mut self) {
        if let How::Bar(bar) = &self.how {
            bar.finish_and_clear();
        }
    }
}

/// "1.42x real time".
fn speed_text(real: f64) -> String {
    format!("{real:.2}x real time")
}

/// Seconds as "42 s", "3 min 5 s", "2 h 7 min".
fn eta_text(seconds: f64) -> String {
    let s = seconds.round() as u64;
    if s < 60 {
        format!("{s} s")
    } else if s < 3600 {
        format!("{} min {} s", s / 60, s % 60)
    } else {
        format!("{} h {} min", s / 3600, s % 3600 / 60)
    }
}

/// A line on standard error; a closed or broken standard error is not the render's problem.
fn line(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eta_reads_naturally() {
        assert_eq!(eta_text(4.4), "4 s");
        assert_eq!(eta_text(185.0), "3 min 5 s");
        assert_eq!(eta_text(7620.0), "2 h 7 min");
        assert_eq!(speed_text(1.4249), "1.42x real time");
    }
}
