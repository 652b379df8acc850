//! Bulk transfer: an infinite backlog (ns-3 `BulkSendApplication` with no limit, ns-2 FTP).

use super::{AppModel, Application, Socket, UNLIMITED};
use crate::registry::Randomness;
use crate::sim::time::Time;
use crate::stats::FlowStats;

/// Registration.
pub const MODEL: AppModel = AppModel {
    name: "bulk",
    doc: "infinite backlog from the start time until the stop time (ns-2 FTP, ns-3 BulkSend)",
    params: &[],
    random: Randomness::Never,
    flow_refs: &[],
    build: |_, start, stop, _rng| Box::new(Bulk { start, stop, started: false, stopped: false }),
};

/// Always has data to send between start and stop.
pub struct Bulk {
    start: Time,
    stop: Option<Time>,
    started: bool,
    stopped: bool,
}

impl Application for Bulk {
    fn next_wakeup(&self) -> Option<Time> {
        if !self.started {
            Some(self.start)
        } else if !self.stopped {
            self.stop
        } else {
            None
        }
    }

    fn on_wakeup(&mut self, now: Time, sock: &mut dyn Socket, _stats: &mut FlowStats) {
        if !self.started && now >= self.start {
            self.started = true;
            sock.write(UNLIMITED);
        }
        if self.stop.is_some_and(|s| now >= s) && !self.stopped {
            self.stopped = true;
            sock.close();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::testing::RecordingSocket;

    #[test]
    fn writes_unlimited_at_start_and_closes_at_stop() {
        let mut app = Bulk { start: 5, stop: Some(9), started: false, stopped: false };
        let mut sock = RecordingSocket::default();
        let mut stats = FlowStats::default();
        assert_eq!(app.next_wakeup(), Some(5));
        app.on_wakeup(5, &mut sock, &mut stats);
        assert_eq!(sock.written, vec![UNLIMITED]);
        assert_eq!(app.next_wakeup(), Some(9));
        app.on_wakeup(9, &mut sock, &mut stats);
        assert!(sock.closed);
        assert_eq!(app.next_wakeup(), None);
    }
}
