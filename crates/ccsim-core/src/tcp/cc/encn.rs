//! ENCN-TCP, the sender side of Explicit Non-Congestion Notification.
//!
//! Source: Sup, de Moraes, Bauchspiess, "Simultaneous TCP and NCS flows in a UPPAAL framework
//! with a new AQM technique", IEEE INDIN 2016 (not available to us), read through the
//! authors' later paper, "Acknowledge-Based Non-Congestion Estimation: An Indirect Queue
//! Management Approach for Concurrent TCP and UDP-like Flows", IJCNIS 2020, sec. 2: ANCE "is
//! inspired by ENCN; however, ANCE works with queue length estimation instead of using
//! explicit non-congestion notification". So the ENCN sender is ANCE's Algorithm 1 and
//! Table 1 ([`super::ance::Core`], the same code) with the test `Q_E < Q_min` replaced by
//! "this ACK echoes the routers' non-congestion mark":
//! - slow start: Reno's while ACKs carry the echo; at the first ACK without it,
//!   `W = min(rwnd, ssthresh)`, congestion avoidance, `BF = W`;
//! - congestion avoidance: with the echo, +1 segment once W ACKs have been received and
//!   `BF = BF / 2`; without it, -1 segment once BF ACKs have been received and
//!   `BF = BF + BF / 2`;
//! - losses: TCP-Reno, as ANCE (plain Reno recovery without SACK).
//!
//! A separate, larger increase on marked ACKs (a free parameter, since the INDIN paper's rule
//! is unknown) is not needed by this reading and is not offered. `Q_min` is the router's
//! parameter (`qdisc/encn.rs`, 3 kbytes in the paper).
//!
//! Carriage (ccsim's, see `qdisc/encn.rs`): the sender sets `FLAG_NC` on every data segment
//! ([`CongestionControl::marks_non_congestion`]), every ENCN queue at or above its `q_min`
//! clears it, and the receiver echoes it as `FLAG_NC_ECHO`, which arrives here as
//! [`Ack::nc_echo`]. Without ENCN queues on the path every ACK carries the echo, and the
//! window grows by one segment per RTT up to rwnd (losses still halve it).

use super::ance::Core;
use super::{Ack, CcModel, CcState, Congestion, CongestionControl, FastRecovery, VarSpec};
use crate::registry::Randomness;

/// Registration.
pub const MODEL: CcModel = CcModel {
    name: "encn",
    doc: "ENCN-TCP sender (Sup et al., IEEE INDIN 2016, read through their ANCE paper, IJCNIS 2020): sets FLAG_NC on data; ANCE's Algorithm 1 driven by the routers' non-congestion echo; Reno losses (use with encn queues)",
    params: &[],
    random: Randomness::Never,
    partner_queues: &["encn"],
    build: |_, _| Box::new(Encn::default()),
};

/// The ENCN sender.
#[derive(Clone, Debug, Default)]
pub struct Encn {
    core: Core,
}

impl Encn {
    /// Table 1's BF.
    pub fn bf(&self) -> f64 {
        self.core.bf()
    }
}

/// ENCN's traceable variables.
pub static VARS: &[VarSpec] = &[super::ance::BF];

impl CongestionControl for Encn {
    fn name(&self) -> &'static str {
        "encn"
    }

    fn vars(&self) -> &'static [VarSpec] {
        VARS
    }

    fn var(&self, name: &str) -> Option<f64> {
        (name == "bf").then(|| self.bf())
    }

    fn on_ack(&mut self, st: &mut CcState, ack: &Ack) {
        self.core.on_ack(st, ack.acked, ack.nc_echo);
    }

    fn ssthresh(&mut self, st: &CcState, _event: Congestion) -> u64 {
        self.core.ssthresh(st)
    }

    fn fast_recovery(&self) -> FastRecovery {
        FastRecovery::Reno
    }

    fn marks_non_congestion(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::testkit::{window, Setup, TestSender, MSS};

    /// An ENCN sender with a window of `cwnd`, threshold `ssthresh` and peer window `rwnd`
    /// segments.
    fn sender(cwnd: u64, ssthresh: u64, rwnd: u64) -> TestSender<Encn> {
        TestSender::new(Encn::default(), window(MSS, cwnd, ssthresh).with_rwnd(rwnd))
    }

    /// A one-segment ACK, echoing non-congestion or not.
    fn ack(s: &mut TestSender<Encn>, echo: bool) {
        s.ack(Ack { acked: MSS, nc_echo: echo, ..Ack::default() });
    }

    #[test]
    fn slow_start_lasts_while_acks_echo_non_congestion() {
        let mut s = sender(2, 16, 64);
        for k in 0..5 {
            ack(&mut s, true);
            assert_eq!(s.st.cwnd, (3 + k) * MSS);
        }
        // First ACK without the echo: W = min(rwnd, ssthresh) = 16, BF = 16.
        ack(&mut s, false);
        assert_eq!((s.st.cwnd, s.cc.bf()), (16 * MSS, 16.0));
        assert!(!s.st.in_slow_start());
    }

    #[test]
    fn the_echo_drives_table_1_bf_dynamics() {
        let mut s = sender(4, 8, 64);
        ack(&mut s, false); // leaves slow start: W = 8, BF = 8
                            // (ACKs, echo, W after, BF after), as ANCE's Table 1 test with the echo for Q_E < Q_min.
        let steps: &[(usize, bool, u64, f64)] = &[
            (7, true, 8, 8.0),
            (1, true, 9, 4.0),
            (4, false, 8, 6.0),
            (6, false, 7, 9.0),
            (3, true, 7, 9.0),
            (4, true, 8, 4.5),
            (5, false, 7, 6.75),
        ];
        for (i, &(n, echo, w, bf)) in steps.iter().enumerate() {
            for _ in 0..n {
                ack(&mut s, echo);
            }
            assert_eq!((s.cwnd_segs(), s.cc.bf()), (w, bf), "step {i}");
        }
    }

    #[test]
    fn asks_the_sender_for_the_flag_and_reno_recovery() {
        let cc = Encn::default();
        assert!(cc.marks_non_congestion());
        assert_eq!(cc.fast_recovery(), FastRecovery::Reno);
        assert!(!super::super::newreno::NewReno::default().marks_non_congestion());
    }
}
