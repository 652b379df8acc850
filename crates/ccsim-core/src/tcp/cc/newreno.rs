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
    build: |_| Box::new(NewReno::default()),
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
    use crate::tcp::cc::Congestion;

    fn state(cwnd_segs: u64, ssthresh_segs: u64) -> CcState {
        CcState::new(1000, cwnd_segs * 1000, ssthresh_segs * 1000, u64::MAX)
    }

    #[test]
    fn slow_start_grows_by_acked_bytes_up_to_two_segments_per_ack() {
        let mut cc = NewReno::default();
        let mut st = state(10, 1000);
        // A delayed ACK for two segments: +2 MSS.
        cc.on_ack(&mut st, &Ack { acked: 2000, ..Ack::default() });
        assert_eq!(st.cwnd, 12_000);
        // A stretch ACK for five segments is limited to 2 MSS (RFC 3465 L = 2).
        cc.on_ack(&mut st, &Ack { acked: 5000, ..Ack::default() });
        assert_eq!(st.cwnd, 14_000);
    }

    #[test]
    fn slow_start_stops_at_ssthresh_then_adds_one_segment_per_window() {
        let mut cc = NewReno::default();
        let mut st = state(9, 10);
        cc.on_ack(&mut st, &Ack { acked: 2000, ..Ack::default() });
        // 1000 bytes used to reach ssthresh, the other 1000 credited to avoidance.
        assert_eq!(st.cwnd, 10_000);
        // Nine more segments acknowledged: the window of 10 000 bytes is complete: +1 MSS.
        for _ in 0..9 {
            cc.on_ack(&mut st, &Ack { acked: 1000, ..Ack::default() });
        }
        assert_eq!(st.cwnd, 11_000);
    }

    #[test]
    fn ssthresh_is_half_the_flight_but_at_least_two_segments() {
        let mut cc = NewReno::default();
        let mut st = state(20, 1000);
        st.flight_size = 20_000;
        assert_eq!(cc.ssthresh(&st, Congestion::Loss), 10_000);
        st.flight_size = 3000;
        assert_eq!(cc.ssthresh(&st, Congestion::Timeout), 2000);
    }
}
