//! The congestion-control test kit, shared by the tests of every algorithm.
//!
//! [`window`] and the [`Setup`] steps build the [`CcState`] a test starts from. A
//! [`TestSender`] holds an algorithm with that state and hands it ACKs, ECN echoes and
//! congestion events in the order the TCP sender does (`tcp/sender/`), so that a test reads
//! the window the sender would hold (after quiche's `TestSender`). It models no network: the
//! test says when each ACK arrives, what it acknowledges and what it carries, and sets the
//! RTT estimates (`srtt`, `min_rtt`) and SND.NXT itself where the algorithm reads them.

use super::{Ack, CcState, Congestion, CongestionControl};
use crate::sim::time::{Time, MS};

/// Segment size of the tests' connections, unless a test needs another (bytes).
pub const MSS: u64 = 1000;

/// ssthresh before any congestion event, as `TcpConfig` encodes an unset `init_ssthresh`.
pub const SSTHRESH_UNSET: u64 = u64::MAX / 4;

/// A connection of `mss`-byte segments that has sent nothing yet: a window of `cwnd_segs`
/// segments, a threshold of `ssthresh_segs` segments (`None`: unset, as a sender starts),
/// an unlimited peer window and no RTT sample.
pub fn window(mss: u64, cwnd_segs: u64, ssthresh_segs: impl Into<Option<u64>>) -> CcState {
    let ssthresh = ssthresh_segs.into().map_or(SSTHRESH_UNSET, |s| s * mss);
    CcState::new(mss as u32, cwnd_segs * mss, ssthresh, u64::MAX)
}

/// Builder steps from a [`window`] to the state a test starts from.
pub trait Setup {
    /// `segs` segments sent and none acknowledged yet: SND.NXT and FlightSize.
    fn with_flight(self, segs: u64) -> CcState;
    /// RTT estimates: smoothed `srtt`, smallest `min_rtt`.
    fn with_rtt(self, srtt: Time, min_rtt: Time) -> CcState;
    /// A peer window of `segs` segments.
    fn with_rwnd(self, segs: u64) -> CcState;
}

impl Setup for CcState {
    fn with_flight(self, segs: u64) -> CcState {
        let bytes = segs * self.mss as u64;
        CcState { snd_nxt: self.snd_una + bytes, flight_size: bytes, ..self }
    }

    fn with_rtt(self, srtt: Time, min_rtt: Time) -> CcState {
        CcState { srtt: Some(srtt), min_rtt: Some(min_rtt), ..self }
    }

    fn with_rwnd(self, segs: u64) -> CcState {
        CcState { rwnd: segs * self.mss as u64, ..self }
    }
}

/// An algorithm and the state its sender shares with it.
pub struct TestSender<C: CongestionControl> {
    /// The algorithm under test.
    pub cc: C,
    /// The shared state.
    pub st: CcState,
    /// SND.NXT at the latest window reduction: an ECN echo reduces the window once per
    /// window of data (RFC 3168 §6.1.2), as in the sender.
    ecn_recover: u64,
    /// SND.NXT at the latest timeout: recovery after it ends once that is acknowledged.
    recover: u64,
}

impl<C: CongestionControl> TestSender<C> {
    /// `cc` with the starting state `st`.
    pub fn new(cc: C, st: CcState) -> Self {
        TestSender { cc, st, ecn_recover: 0, recover: 0 }
    }

    /// The window in whole segments.
    pub fn cwnd_segs(&self) -> u64 {
        self.st.cwnd / self.st.mss as u64
    }

    /// An ACK at the current time, handled as the sender does outside fast recovery:
    /// `on_ack_received`; for new data, the RTT sample it carries (`on_rtt_sample`), SND.UNA
    /// moved on (ending the recovery after a timeout once everything sent before it is
    /// acknowledged), then a window reduction if it echoes ECN beyond the last reduction,
    /// `on_ack` otherwise.
    pub fn ack(&mut self, ack: Ack) {
        self.cc.on_ack_received(&self.st, &ack);
        if ack.acked == 0 {
            return;
        }
        if let Some(rtt) = ack.rtt {
            self.cc.on_rtt_sample(&self.st, rtt);
        }
        self.st.snd_una += ack.acked;
        self.st.snd_nxt = self.st.snd_nxt.max(self.st.snd_una);
        if self.st.in_recovery && self.st.snd_una >= self.recover {
            self.st.in_recovery = false;
            self.cc.on_recovery_exit(&mut self.st);
        }
        if ack.ece && self.st.snd_una > self.ecn_recover {
            self.congestion(Congestion::Ecn);
        } else {
            self.cc.on_ack(&mut self.st, &ack);
        }
    }

    /// [`TestSender::ack`] `gap` after the previous event.
    pub fn ack_after(&mut self, gap: Time, ack: Ack) {
        self.st.now += gap;
        self.ack(ack);
    }

    /// A congestion event as the sender handles it, with the FlightSize the test has set:
    /// ssthresh from the algorithm, then
    /// - a loss: the whole fast recovery at once, leaving cwnd = ssthresh (RFC 5681 §3.2
    ///   step 6), with `on_recovery_exit`;
    /// - an ECN echo: cwnd = ssthresh (RFC 3168 §6.1.2);
    /// - a timeout: cwnd = one segment, recovery until everything sent is acknowledged,
    ///   `on_timeout`.
    pub fn congestion(&mut self, event: Congestion) {
        let mss = self.st.mss as u64;
        self.st.ssthresh = self.cc.ssthresh(&self.st, event);
        self.ecn_recover = self.st.snd_nxt;
        match event {
            Congestion::Loss => {
                self.st.cwnd = self.st.ssthresh;
                self.cc.on_recovery_exit(&mut self.st);
            }
            Congestion::Ecn => self.st.cwnd = self.st.ssthresh.max(mss),
            Congestion::Timeout => {
                self.st.cwnd = mss;
                self.st.in_recovery = true;
                self.recover = self.st.snd_nxt;
                self.cc.on_timeout(&mut self.st);
            }
        }
    }

    /// One round trip of a bulk sender, one ms per ACK: every segment outstanding at its
    /// start is acknowledged by its own ACK, the k-th carrying the RTT sample `rtt(k)`; after
    /// each ACK the sender fills the window with new data (SND.NXT = SND.UNA + cwnd).
    /// Returns the window (segments) after every ACK.
    pub fn round(&mut self, rtt: impl Fn(u64) -> Time) -> Vec<f64> {
        let end = self.st.snd_nxt;
        let mss = self.st.mss as u64;
        let mut trace = Vec::new();
        let mut k = 0;
        while self.st.snd_una < end {
            let acked = mss.min(end - self.st.snd_una);
            self.ack_after(MS, Ack { acked, rtt: Some(rtt(k)), ..Ack::default() });
            self.st.snd_nxt = self.st.snd_nxt.max(self.st.snd_una + self.st.cwnd);
            trace.push(self.st.cwnd as f64 / mss as f64);
            k += 1;
        }
        trace
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::newreno::NewReno;

    #[test]
    fn an_echo_reduces_once_per_window_and_a_timeout_recovers_until_snd_nxt() {
        // 10 segments in flight, avoidance at 10: the first echo halves (FlightSize 10 -> 5).
        let mut s = TestSender::new(NewReno::default(), window(MSS, 10, 10).with_flight(10));
        let echo = Ack { acked: MSS, ece: true, ..Ack::default() };
        s.ack(echo);
        assert_eq!((s.cwnd_segs(), s.st.ssthresh), (5, 5 * MSS));
        // Echoes for the rest of that window do not reduce again: the window grows as usual,
        // one segment once 5 segments are acknowledged.
        for _ in 0..9 {
            s.ack(echo);
        }
        assert_eq!(s.cwnd_segs(), 6);
        // An echo for data sent after the reduction reduces again (FlightSize 6 -> 3).
        s.st.snd_nxt += 5 * MSS;
        s.st.flight_size = 6 * MSS;
        s.ack(echo);
        assert_eq!(s.cwnd_segs(), 3);
        // A timeout: one segment, and recovery until SND.NXT (4 segments on) is acknowledged.
        s.st.flight_size = 4 * MSS;
        s.congestion(Congestion::Timeout);
        assert_eq!((s.cwnd_segs(), s.st.ssthresh, s.st.in_recovery), (1, 2 * MSS, true));
        for _ in 0..3 {
            s.ack(Ack { acked: MSS, ..Ack::default() });
        }
        assert!(s.st.in_recovery);
        s.ack(Ack { acked: MSS, ..Ack::default() });
        assert!(!s.st.in_recovery, "SND.UNA reached the SND.NXT of the timeout");
        assert_eq!(s.st.snd_una, s.st.snd_nxt);
    }
}
