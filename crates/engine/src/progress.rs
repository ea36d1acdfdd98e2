//! The progress line: a bar, the current rate and an ETA on stderr, redrawn about twice a
//! second and erased when the group of jobs ends. The caller decides whether stderr is a
//! terminal; this only draws.

use crate::clock::Clock;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// What the line measures progress against: bytes (size-bound jobs) and/or time (runtime).
#[derive(Clone, Copy, Debug)]
pub struct Goal {
    pub bytes: Option<u64>,
    pub time_ns: Option<u64>,
}

/// The line for `done` bytes after `elapsed_ns`, moving at `rate` bytes/s (pure).
pub fn render(goal: Goal, done: u64, elapsed_ns: u64, rate: f64) -> String {
    let by_bytes = goal
        .bytes
        .filter(|&b| b > 0)
        .map(|b| (done as f64 / b as f64).min(1.0));
    let by_time = goal
        .time_ns
        .filter(|&t| t > 0)
        .map(|t| (elapsed_ns as f64 / t as f64).min(1.0));
    let frac = match (by_bytes, by_time) {
        (Some(a), Some(b)) => a.max(b),
        (Some(a), None) | (None, Some(a)) => a,
        (None, None) => 0.0,
    };
    const W: usize = 30;
    let filled = (frac * W as f64).round() as usize;
    let bar: String = (0..W).map(|i| if i < filled { '#' } else { '.' }).collect();
    let eta = if frac > 0.0 && frac < 1.0 {
        let s = (elapsed_ns as f64 / 1e9) * (1.0 - frac) / frac;
        let s = s.round() as u64;
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else if frac >= 1.0 {
        "0:00:00".into()
    } else {
        "-:--:--".into()
    };
    format!(
        "[{bar}] {:5.1}%  {:9.1} MB/s  ETA {eta}",
        frac * 100.0,
        rate / 1e6
    )
}

/// Draw the line until `finished` is set, then erase it.
pub fn run_line(
    goal: Goal,
    bytes: Arc<AtomicU64>,
    finished: Arc<AtomicBool>,
    clock: Arc<dyn Clock>,
) {
    let start = clock.now_ns();
    let (mut last_t, mut last_b) = (start, 0u64);
    let mut rate = 0.0;
    let mut err = std::io::stderr();
    while !finished.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
        let now = clock.now_ns();
        if now - last_t < 500_000_000 && !finished.load(Ordering::Relaxed) {
            continue;
        }
        let b = bytes.load(Ordering::Relaxed);
        rate = (b - last_b) as f64 * 1e9 / (now - last_t).max(1) as f64;
        (last_t, last_b) = (now, b);
        let _ = write!(err, "\r{}", render(goal, b, now - start, rate));
        let _ = err.flush();
    }
    let _ = rate;
    let _ = write!(err, "\r\x1b[2K");
    let _ = err.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_shows_bar_rate_and_eta() {
        let g = Goal {
            bytes: Some(1000),
            time_ns: None,
        };
        let l = render(g, 250, 1_000_000_000, 250e6);
        assert!(l.contains(" 25.0%"), "{l}");
        assert!(l.contains("250.0 MB/s"), "{l}");
        assert!(l.contains("ETA 0:00:03"), "{l}");
        assert_eq!(l.matches('#').count(), 8);
        let t = render(
            Goal {
                bytes: None,
                time_ns: Some(10_000_000_000),
            },
            5,
            5_000_000_000,
            1.0,
        );
        assert!(t.contains(" 50.0%") && t.contains("ETA 0:00:05"), "{t}");
        let u = render(
            Goal {
                bytes: None,
                time_ns: None,
            },
            0,
            0,
            0.0,
        );
        assert!(u.contains("-:--:--"), "{u}");
    }
}
