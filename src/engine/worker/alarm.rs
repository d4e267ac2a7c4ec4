//! A paced worker's alarm clock: the machine wakes a sleeping thread late, and the later the
//! longer it slept (measured on this 2-core VM: 10-14 µs after sleeps under 50 µs, 35-40 µs after
//! sleeps over a millisecond, as the core sinks into deeper idle). Paced sends would take that on,
//! long gaps between arrivals coming out longer than the schedule drew them and short ones
//! shorter: Poisson arrivals would not be exponential any more. So a paced worker asks to be
//! woken early, by the lateness it has seen after sleeps of that length, and sleeps the rest
//! again: a short sleep, whose lateness is the least and the same whatever the gap. (Spinning
//! the rest instead was tried: in the debug build it left constant-rate sends late and bunched.)
//!
//! Only sleeps of at least [`SHORTEST`] are moved: at high rates the sleeps are short, the
//! lateness small against the batching grain, and a second wake-up would be paid on every
//! request. None is moved by more than [`MOST`]: a wake-up far later than that (a descheduled
//! thread, a stopped process) is the machine's, not the alarm's to learn.

use std::time::{Duration, Instant};

use crate::engine::LATE_NS;

/// A paced worker's late wake-ups: waits it came back from over [`LATE_NS`] after its time.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Wakeups {
    pub late: u64,
    pub worst: Duration,
}

impl Wakeups {
    /// A wait called at `called`, to return by `at` at the latest, returned at `now`: late by
    /// how long after the later of the two (a wait called past its time returns at once).
    #[inline]
    pub(super) fn woke(&mut self, called: Instant, at: Instant, now: Instant) {
        let late = now.saturating_duration_since(at.max(called));
        if late.as_nanos() > u128::from(LATE_NS) {
            self.late += 1;
            self.worst = self.worst.max(late);
        }
    }
}

/// Sleeps shorter than this are not moved.
const SHORTEST: Duration = Duration::from_micros(64);

/// The most a wake-up is moved forward.
const MOST: Duration = Duration::from_micros(200);

/// Sleep lengths in powers of two from [`SHORTEST`]: 64-128 µs, ..., 4 ms and over.
const CLASSES: usize = 7;

/// How far one wake-up's lateness moves its class's mean: 1/2^SHIFT.
const SHIFT: u32 = 4;

pub(super) struct Alarm {
    /// Mean lateness in nanoseconds (scaled by 2^SHIFT) of timer wake-ups, by sleep class.
    late: [u64; CLASSES],
}

/// One wait: when the worker asked to be woken, and the sleep's class.
pub(super) struct Asked {
    /// When the driver was told to wake.
    pub at: Instant,
    /// The sleep's class, if it was moved.
    class: Option<usize>,
}

impl Alarm {
    pub(super) fn new() -> Alarm {
        Alarm { late: [0; CLASSES] }
    }

    /// When to wake for `due`, as of `now`: earlier by the lateness learnt for sleeps this long.
    pub(super) fn ask(&self, due: Instant, now: Instant) -> Asked {
        let sleep = due.saturating_duration_since(now);
        if sleep < SHORTEST {
            return Asked { at: due, class: None };
        }
        let class = ((sleep.as_micros() / SHORTEST.as_micros()).ilog2() as usize).min(CLASSES - 1);
        let early = Duration::from_nanos(self.late[class] >> SHIFT).min(MOST).min(sleep);
        Asked { at: due - early, class: Some(class) }
    }

    /// After the wait returned at `now`: a timer wake-up (no events, not before the time
    /// asked) teaches its class. (Woken before the send's time, the worker finds nothing due
    /// and its loop waits again, a short sleep.)
    pub(super) fn woke(&mut self, asked: &Asked, now: Instant, events: bool) {
        let Some(class) = asked.class else { return };
        // Events are handled at once; a wait that returned before its time for nothing (a
        // signal) waits again, and neither says how late the timer was.
        if events || now < asked.at {
            return;
        }
        let late = now.saturating_duration_since(asked.at).min(MOST * 2).as_nanos() as u64;
        self.late[class] = self.late[class] - (self.late[class] >> SHIFT) + late;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learns_each_sleep_lengths_lateness_and_wakes_that_much_early() {
        let mut alarm = Alarm::new();
        let start = Instant::now();
        let (short, long) = (Duration::from_micros(100), Duration::from_millis(2));
        for i in 0..200u32 {
            let now = start + Duration::from_millis(u64::from(i) * 10);
            let asked = alarm.ask(now + short, now);
            alarm.woke(&asked, asked.at + Duration::from_micros(10), false);
            let asked = alarm.ask(now + long, now);
            alarm.woke(&asked, asked.at + Duration::from_micros(40), false);
        }
        let now = start + Duration::from_secs(3);
        let early = |alarm: &Alarm, sleep| now + sleep - alarm.ask(now + sleep, now).at;
        let (e_short, e_long) = (early(&alarm, short), early(&alarm, long));
        assert!((Duration::from_micros(9)..=Duration::from_micros(11)).contains(&e_short), "{e_short:?}");
        assert!((Duration::from_micros(38)..=Duration::from_micros(41)).contains(&e_long), "{e_long:?}");
        // Short sleeps are not moved, and no wake-up is moved by more than MOST.
        assert_eq!(alarm.ask(now + Duration::from_micros(30), now).at, now + Duration::from_micros(30));
        for _ in 0..200 {
            let asked = alarm.ask(now + long, now);
            alarm.woke(&asked, asked.at + Duration::from_secs(1), false);
        }
        assert_eq!(early(&alarm, long), MOST);
    }

    #[test]
    fn a_wake_up_is_late_past_its_time_or_its_call_whichever_came_later() {
        let (t, ms) = (Instant::now(), Duration::from_millis);
        let mut w = Wakeups::default();
        w.woke(t, t + ms(1), t + ms(2)); // 1 ms after its time: not over it
        w.woke(t, t + ms(5), t + ms(1)); // events before its time
        w.woke(t + ms(10), t + ms(3), t + ms(10) + Duration::from_micros(500)); // called late: its own
        assert_eq!(w.late, 0);
        w.woke(t, t + ms(1), t + ms(4));
        w.woke(t + ms(10), t + ms(3), t + ms(17));
        assert_eq!((w.late, w.worst), (2, ms(7)));
    }

    #[test]
    fn only_timer_wake_ups_teach() {
        let mut alarm = Alarm::new();
        alarm.late[2] = 50_000 << SHIFT;
        let now = Instant::now();
        let asked = alarm.ask(now + Duration::from_micros(300), now);
        assert_eq!(asked.at, now + Duration::from_micros(250));
        alarm.woke(&asked, now, true); // an event
        alarm.woke(&asked, now, false); // a wait cut short by a signal
        assert_eq!(alarm.late[2], 50_000 << SHIFT);
        alarm.woke(&asked, asked.at, false); // a timer on time
        assert_eq!(alarm.late[2], (50_000 << SHIFT) - 50_000);
    }
}
