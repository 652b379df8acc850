//! NewReno's window control: Reno slow start and congestion avoidance (RFC 5681 §3.1) and
//! halving on congestion (RFC 5681 eq. 4). NewReno's partial-ACK handling (RFC 6582) and SACK
//! recovery (RFC 6675) are loss recovery and live in the sender.

use super::{reno_increase, Ack, CcModel, CcState, CongestionControl};
use crate::registry::Randomness;

/// Registration.
pub const MODEL: CcModel = CcModel {
    name: "newreno",
    doc: "Reno window growth and halving (RFC 5681) with NewReno/SACK recovery in the sender (RFC 6582, RFC 6675)",
    params: &[],
    random: Randomness::Never,
    partner_queues: &[],
    build: |_, _| Box::new(NewReno::default()),
};

/// NewReno congestion control.
#[derive(Debug, Default)]
pub struct NewReno {
    /// Bytes acknowledged since the last congestion-avoidance increase.
    bytes_acked: u64,
}

impl CongestionControl for NewReno {
    fn name(&self) -> &'static str {
        "newreno"
    }

    fn on_ack(&mut self, st: &mut CcState, ack: &Ack) {
        reno_increase(st, ack.acked, &mut self.bytes_acked);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::testkit::{window, Setup, TestSender, MSS};
    use crate::tcp::cc::Congestion;

    fn acked(bytes: u64) -> Ack {
        Ack { acked: bytes, ..Ack::default() }
    }

    #[test]
    fn slow_start_grows_by_acked_bytes_up_to_two_segments_per_ack() {
        let mut s = TestSender::new(NewReno::default(), window(MSS, 10, 1000));
        // A delayed ACK for two segments: +2 MSS.
        s.ack(acked(2000));
        assert_eq!(s.st.cwnd, 12_000);
        // A stretch ACK for five segments is limited to 2 MSS (RFC 3465 L = 2).
        s.ack(acked(5000));
        assert_eq!(s.st.cwnd, 14_000);
    }

    #[test]
    fn slow_start_stops_at_ssthresh_then_adds_one_segment_per_window() {
        let mut s = TestSender::new(NewReno::default(), window(MSS, 9, 10));
        s.ack(acked(2000));
        // 1000 bytes used to reach ssthresh, the other 1000 credited to avoidance.
        assert_eq!(s.st.cwnd, 10_000);
        // Nine more segments acknowledged: the window of 10 000 bytes is complete: +1 MSS.
        for _ in 0..9 {
            s.ack(acked(1000));
        }
        assert_eq!(s.st.cwnd, 11_000);
    }

    #[test]
    fn ssthresh_is_half_the_flight_but_at_least_two_segments() {
        let mut cc = NewReno::default();
        let st = window(MSS, 20, 1000).with_flight(20);
        assert_eq!(cc.ssthresh(&st, Congestion::Loss), 10_000);
        let st = window(MSS, 20, 1000).with_flight(3);
        assert_eq!(cc.ssthresh(&st, Congestion::Timeout), 2000);
    }
}
