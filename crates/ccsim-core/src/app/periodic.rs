//! Periodic messages: `size` bytes every `period` from the start time, as a sensor sends
//! samples (paper 001, Dedu et al.: 1024 B every 50 ms). With a bounded send buffer, a
//! message that does not fit is refused whole and counted as lost at the sender ("lost on
//! sensor").

use super::{offer, AppModel, Application, Socket, SEND_BUFFER};
use crate::params::{ParamKind, ParamSpec, Params};
use crate::registry::Randomness;
use crate::sim::time::Time;
use crate::stats::FlowStats;

static PARAMS: &[ParamSpec] = &[
    ParamSpec::new("size", ParamKind::Bytes, None, "message size").range(1.0, 1e12),
    ParamSpec::new("period", ParamKind::Time, None, "time between messages").range(1.0, 1e18),
    SEND_BUFFER,
];

/// Registration.
pub const MODEL: AppModel = AppModel {
    name: "periodic",
    doc: "a message of `size` bytes every `period`; messages that overflow `buffer` are lost at the sender",
    params: PARAMS,
    random: Randomness::Never,
    flow_refs: &[],
    build: |p: &Params, start, stop, _rng| {
        Box::new(Periodic::new(start, stop, p.uint("size"), p.uint("period"), p.uint("buffer")))
    },
};

/// Sends fixed-size messages at a fixed period.
pub struct Periodic {
    next: Time,
    stop: Option<Time>,
    size: u64,
    period: Time,
    buffer: u64,
}

impl Periodic {
    /// Messages of `size` bytes every `period` from `start` (until `stop`), refusing those that
    /// would take the socket's occupancy above `buffer` bytes.
    pub fn new(start: Time, stop: Option<Time>, size: u64, period: Time, buffer: u64) -> Self {
        Periodic { next: start, stop, size, period: period.max(1), buffer }
    }
}

impl Application for Periodic {
    fn next_wakeup(&self) -> Option<Time> {
        match self.stop {
            Some(stop) if self.next >= stop => None,
            _ => Some(self.next),
        }
    }

    fn on_wakeup(&mut self, now: Time, sock: &mut dyn Socket, stats: &mut FlowStats) {
        while self.next <= now && self.stop.is_none_or(|s| self.next < s) {
            offer(now, self.size, self.buffer, sock, stats);
            self.next += self.period;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::testing::RecordingSocket;

    #[test]
    fn sends_every_period_and_refuses_what_overflows_the_buffer() {
        let mut app = Periodic::new(100, Some(500), 1024, 100, 2048);
        let mut sock = RecordingSocket::default();
        let mut stats = FlowStats::default();
        let mut wakeups = vec![];
        while let Some(t) = app.next_wakeup() {
            wakeups.push(t);
            app.on_wakeup(t, &mut sock, &mut stats);
        }
        // Messages at 100, 200, 300, 400; nothing is acknowledged, so the third and fourth
        // find 2048 bytes buffered and are refused.
        assert_eq!(wakeups, vec![100, 200, 300, 400]);
        assert_eq!(sock.written, vec![1024, 1024]);
        assert_eq!((stats.messages_generated, stats.messages_lost_at_sender), (4, 2));
    }
}
