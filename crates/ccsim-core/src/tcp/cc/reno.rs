//! Plain Reno: RFC 5681 §3.1 window growth and halving (the same as [`super::newreno`]) with
//! RFC 5681 §3.2 fast recovery *without* NewReno's partial-ACK handling (RFC 6582).
//!
//! The recovery itself lives in the sender, which asks [`CongestionControl::fast_recovery`]:
//! - enter on the DupThresh-th duplicate ACK: ssthresh = max(FlightSize / 2, 2 SMSS),
//!   retransmit the first unacknowledged segment, cwnd = ssthresh + 3 SMSS (§3.2 steps 2-3);
//! - inflate cwnd by one SMSS per further duplicate ACK (step 4);
//! - leave on the first ACK of new data, partial or not, with cwnd = ssthresh (step 6).
//!   A second loss in the same window is not retransmitted at that point: it needs
//!   DupThresh new duplicate ACKs (a second fast retransmit, which halves again) or the RTO.
//!   RFC 6582 §4's guard (no new fast retransmit before `recover` is acknowledged) is
//!   NewReno's and does not apply.
//!
//! Reno with SACK (choice, documented): the Reno/NewReno distinction is about recovering
//! without SACK information. With `sack = true` the sender follows RFC 6675 for every
//! congestion control, whose recovery ends at its RecoveryPoint; `reno` then behaves exactly
//! as `newreno`. Plain Reno needs `sack = false` on the transport.

use super::{reno_increase, Ack, CcModel, CcState, CongestionControl, FastRecovery};
use crate::registry::Randomness;

/// Registration.
pub const MODEL: CcModel = CcModel {
    name: "reno",
    doc: "Reno (RFC 5681): NewReno's window rules, fast recovery left on the first new ACK (no partial-ACK repair; needs sack = false, with SACK RFC 6675 recovery applies)",
    params: &[],
    random: Randomness::Never,
    partner_queues: &[],
    build: |_, _| Box::new(Reno::default()),
};

/// Reno congestion control.
#[derive(Debug, Default)]
pub struct Reno {
    /// Bytes acknowledged since the last congestion-avoidance increase.
    bytes_acked: u64,
}

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }

    fn on_ack(&mut self, st: &mut CcState, ack: &Ack) {
        reno_increase(st, ack.acked, &mut self.bytes_acked);
    }

    fn fast_recovery(&self) -> FastRecovery {
        FastRecovery::Reno
    }
}

#[cfg(test)]
mod tests {
    //! The window rules are NewReno's (tested there); the recovery style is checked on
    //! hand-computed traces in `tcp/sender/recovery.rs`.
    use super::*;
    use crate::tcp::cc::newreno::NewReno;
    use crate::tcp::cc::testkit::{window, TestSender, MSS};

    #[test]
    fn asks_the_sender_for_reno_recovery_while_newreno_keeps_the_default() {
        assert_eq!(Reno::default().fast_recovery(), FastRecovery::Reno);
        assert_eq!(NewReno::default().fast_recovery(), FastRecovery::NewReno);
    }

    #[test]
    fn grows_exactly_like_newreno() {
        let mut a = TestSender::new(Reno::default(), window(MSS, 2, 8));
        let mut b = TestSender::new(NewReno::default(), window(MSS, 2, 8));
        for k in 0..200u64 {
            let ack = Ack { acked: 1000 + (k % 3) * 500, ..Ack::default() };
            a.ack(ack);
            b.ack(ack);
            assert_eq!(a.st.cwnd, b.st.cwnd, "ACK {k}");
        }
        assert!(a.st.cwnd > 8000);
    }
}
