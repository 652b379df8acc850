//! Congestion control: one trait, one file per algorithm.
//!
//! As in Linux and ns-3 (`TcpCongestionOps` over `TcpSocketState`), the window and the
//! measurements live in [`CcState`], owned by the sender; an algorithm reads and changes
//! them from its hooks. Loss detection, SACK, recovery and the RTO stay in the sender: an
//! algorithm only decides how the window grows ([`CongestionControl::on_ack`]) and what
//! ssthresh becomes after a congestion event ([`CongestionControl::ssthresh`]); the sender
//! then applies RFC 5681's rules (cwnd = ssthresh after fast retransmit or ECE, one segment
//! after an RTO).
//!
//! The algorithms' tests share one kit (`testkit.rs`): the starting [`CcState`] and a test
//! sender that feeds an algorithm ACKs, ECN echoes and congestion events in the sender's order.

pub mod ance;
pub mod bbr;
pub mod bbr3;
pub mod ca_artt;
pub mod compound;
pub mod cubic;
pub mod dctcp;
pub mod edctcp;
pub mod encn;
pub mod hystart;
pub mod jersey;
pub mod newreno;
pub mod prague;
pub mod reno;
#[cfg(test)]
pub(crate) mod testkit;
pub mod vegas;
pub mod veno;

use crate::params::{ParamSpec, Params};
use crate::sim::rng::Rng;
use crate::sim::time::Time;
pub use crate::tcp::EcnFeedback;
pub use crate::vars::{VarSpec, VarUnit};

/// Window and measurements shared by the sender and its congestion control.
#[derive(Clone, Debug)]
pub struct CcState {
    /// Sender maximum segment size (bytes).
    pub mss: u32,
    /// Congestion window (bytes).
    pub cwnd: u64,
    /// Slow-start threshold (bytes).
    pub ssthresh: u64,
    /// Smoothed RTT (RFC 6298), once sampled.
    pub srtt: Option<Time>,
    /// Smallest RTT over the connection.
    pub min_rtt: Option<Time>,
    /// Data outstanding in the network by RFC 6675's `pipe` estimate (bytes).
    pub bytes_in_flight: u64,
    /// Data sent and not cumulatively acknowledged, RFC 5681 FlightSize (bytes).
    pub flight_size: u64,
    /// True during fast recovery or recovery after a timeout.
    pub in_recovery: bool,
    /// Oldest unacknowledged byte (SND.UNA): with `snd_nxt`, marks round-trip boundaries
    /// (a round ends when the ACK passes the `snd_nxt` recorded at its start).
    pub snd_una: u64,
    /// Next new byte to be sent (SND.NXT).
    pub snd_nxt: u64,
    /// Peer's advertised window (bytes).
    pub rwnd: u64,
    /// Time of the event being handled.
    pub now: Time,
    /// Bytes delivered (cumulatively acknowledged or SACKed) over the connection: the
    /// draft's `C.delivered`. Kept only for algorithms that own their window.
    pub delivered: u64,
    /// Bytes marked lost over the connection (Linux `tp->lost`, in bytes). Kept only for
    /// algorithms that own their window.
    pub lost: u64,
    /// Where the sender is in loss recovery (kept only for algorithms that own their window).
    pub ca_state: CaState,
}

impl CcState {
    /// The state of a connection that has sent nothing yet: window `cwnd`, threshold
    /// `ssthresh` and peer window `rwnd` (bytes), no RTT sample.
    pub fn new(mss: u32, cwnd: u64, ssthresh: u64, rwnd: u64) -> Self {
        CcState {
            mss,
            cwnd,
            ssthresh,
            srtt: None,
            min_rtt: None,
            bytes_in_flight: 0,
            flight_size: 0,
            in_recovery: false,
            snd_una: 0,
            snd_nxt: 0,
            rwnd,
            now: 0,
            delivered: 0,
            lost: 0,
            ca_state: CaState::Open,
        }
    }

    /// True while cwnd < ssthresh (RFC 5681 §3.1).
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }
}

/// An acknowledgement, as seen by the congestion control.
#[derive(Clone, Copy, Debug, Default)]
pub struct Ack {
    /// Bytes newly acknowledged cumulatively by this ACK (0 for a duplicate ACK).
    pub acked: u64,
    /// RTT sample carried by this ACK (timestamps), if any.
    pub rtt: Option<Time>,
    /// RTT of the most recently sent segment this ACK newly acknowledges, if that segment
    /// was sent once and not SACKed before (Linux's `ca_rtt_us`): unlike the timestamp
    /// sample, which echoes the oldest segment acknowledged (RFC 7323), it leaves out the
    /// time the receiver held a delayed ACK.
    pub rtt_last: Option<Time>,
    /// The ACK carried ECN-Echo.
    pub ece: bool,
    /// Size of the ACK packet on the wire (bytes).
    pub size: u32,
    /// The ACK carried the ENCN non-congestion echo (`FLAG_NC_ECHO`, see `qdisc/encn.rs`).
    pub nc_echo: bool,
    /// Accurate ECN feedback ([`EcnFeedback::Accurate`]): CE-marked packets newly reported by
    /// this ACK (the change of its ACE counter); 0 under the other feedback schemes.
    pub ce_packets: u32,
}

/// A delivery-rate sample, taken by the sender on every ACK for an algorithm that owns its
/// window ([`CongestionControl::owns_window`]), as draft-cheng-iccrg-delivery-rate-estimation-02
/// §3 and Linux `tcp_rate.c` define it. Bytes throughout (Linux counts packets).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RateSample {
    /// `C.delivered` when the most recently sent of the packets this ACK delivered was sent
    /// (`P.delivered`; the draft's `rs.prior_delivered`); 0 when the ACK delivered nothing.
    pub prior_delivered: u64,
    /// Bytes delivered over the sample's interval (`C.delivered - rs.prior_delivered`).
    pub delivered: u64,
    /// The interval: the larger of its send and ACK phases (`rs.interval`, ns); 0 when the
    /// sample is not valid.
    pub interval: Time,
    /// `delivered / interval` (bytes per second); 0 when not valid: no packet delivered,
    /// or an interval shorter than the minimum RTT (draft §3.3).
    pub delivery_rate: f64,
    /// The packet that ends the interval was sent while the application, not the window,
    /// limited the flow (`rs.is_app_limited`).
    pub is_app_limited: bool,
    /// RTT of the most recently sent packet this ACK delivered, if sent once (`rs.rtt`).
    pub rtt: Option<Time>,
    /// Bytes this ACK newly acknowledged cumulatively or SACKed (Linux `acked_sacked`).
    pub newly_acked: u64,
    /// Bytes this ACK newly marked lost (Linux `rs->losses`).
    pub newly_lost: u64,
    /// Bytes in flight (RFC 6675 `pipe`) before this ACK was processed (`prior_in_flight`).
    pub prior_in_flight: u64,
}

/// Where the sender is in loss recovery, for algorithms that own their window (Linux
/// `icsk_ca_state`, with Disorder and CWR folded into Open).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CaState {
    /// No recovery.
    #[default]
    Open,
    /// Fast recovery (RFC 6675 / RFC 6582).
    Recovery,
    /// Recovery after a retransmission timeout.
    Loss,
}

/// How the sender leaves fast recovery when SACK is off.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FastRecovery {
    /// RFC 6582: partial ACKs retransmit the next hole and keep the sender in fast recovery
    /// until everything outstanding at its start is acknowledged.
    #[default]
    NewReno,
    /// RFC 5681 §3.2 step 6 alone: the first ACK of new data ends fast recovery with
    /// cwnd = ssthresh; a second loss in the window needs new duplicate ACKs or the RTO.
    Reno,
}

/// The cause of a window reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Congestion {
    /// Loss detected by duplicate ACKs or SACK (fast retransmit).
    Loss,
    /// ECN-Echo received (RFC 3168 §6.1.2).
    Ecn,
    /// Retransmission timeout.
    Timeout,
}

/// What an algorithm needs from its connection, fixed per algorithm (as Linux's
/// `TCP_CONG_NEEDS_ECN` flag). The engine applies it when it builds the flow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TransportNeeds {
    /// ECN is on whatever the socket option says (data ECT(0), ECE honoured); a flow that
    /// sets `ecn = false` explicitly is rejected.
    pub ecn: bool,
    /// How the receiver echoes CE.
    pub ecn_feedback: EcnFeedback,
    /// Data segments ask routers to return them as explicit loss notifications instead of
    /// dropping them silently (E-DCTCP; see `tcp/cc/edctcp.rs`).
    pub loss_notice: bool,
    /// Transmissions are paced (`pacing = true`) unless the flow sets `pacing = false`: the
    /// algorithm is built around a pacing rate (BBR; Linux paces it without fq since 4.13).
    pub pacing: bool,
    /// Data is sent as ECT(1), the L4S identifier (RFC 9331 §5.1), unless the flow sets
    /// `ect1 = false` (Prague).
    pub ect1: bool,
}

/// A congestion-control algorithm.
pub trait CongestionControl: Send {
    /// Registered name.
    fn name(&self) -> &'static str;

    /// New data was acknowledged outside fast recovery: grow `st.cwnd`.
    fn on_ack(&mut self, st: &mut CcState, ack: &Ack);

    /// Every arriving ACK, new or duplicate, in or out of recovery, before the sender acts
    /// on it (for estimators: DCTCP's marked fraction, ACK inter-arrival times...).
    fn on_ack_received(&mut self, _st: &CcState, _ack: &Ack) {}

    /// ssthresh after a congestion event; RFC 5681 eq. (4) by default:
    /// `max(FlightSize / 2, 2 * SMSS)`.
    fn ssthresh(&mut self, st: &CcState, _event: Congestion) -> u64 {
        (st.flight_size / 2).max(2 * st.mss as u64)
    }

    /// Every RTT sample, in or out of recovery (delay-based algorithms).
    fn on_rtt_sample(&mut self, _st: &CcState, _rtt: Time) {}

    /// A data segment of `bytes` left the sender.
    fn on_sent(&mut self, _st: &CcState, _bytes: u32) {}

    /// Fast recovery or recovery after a timeout ended.
    fn on_recovery_exit(&mut self, _st: &mut CcState) {}

    /// The retransmission timer expired; `st.cwnd` is already the loss window.
    fn on_timeout(&mut self, _st: &mut CcState) {}

    /// True if the algorithm sets the window itself on every ACK, in and out of recovery, from
    /// delivery-rate samples (Linux `cong_control`: BBR). The sender then keeps `delivered`,
    /// `lost` and `ca_state` in [`CcState`], calls [`CongestionControl::on_rate_sample`]
    /// after each ACK (but one older than SND.UNA, as Linux), and never changes cwnd itself
    /// except to the loss window on a timeout; `on_ack`, `ssthresh` (whose result only sets
    /// `ssthresh`) and `on_recovery_exit` are still called as for any algorithm. Read once, at
    /// construction.
    fn owns_window(&self) -> bool {
        false
    }

    /// An algorithm that owns its window: the ACK just processed, with its delivery-rate
    /// sample; set `st.cwnd` (and the pacing rate it reports).
    fn on_rate_sample(&mut self, _st: &mut CcState, _ack: &Ack, _rs: &RateSample) {}

    /// The rate (bytes per second) at which a paced flow sends, if the algorithm sets one
    /// (BBR, Prague); `None`: the sender's default (Linux `tcp_update_pacing_rate`).
    fn pacing_rate(&self, _st: &CcState) -> Option<f64> {
        None
    }

    /// What the algorithm needs from the connection (ECN, receiver feedback, loss notices).
    fn needs(&self) -> TransportNeeds {
        TransportNeeds::default()
    }

    /// A router returned a segment as an explicit loss notification (only algorithms that
    /// ask for them get any): how long to hold its retransmission. `bounces` counts the
    /// notifications for this segment so far, this one included; `rng` is the flow's stream.
    /// The sender reduces the window as for a loss, once per window, itself.
    fn on_loss_notice(&mut self, _st: &CcState, _bounces: u32, _rng: &mut Rng) -> Time {
        0
    }

    /// The fast-recovery style the sender uses without SACK (read once, at construction).
    /// With SACK the sender always follows RFC 6675, which has its own exit rule.
    fn fast_recovery(&self) -> FastRecovery {
        FastRecovery::NewReno
    }

    /// True if the sender must set the ENCN non-congestion flag `FLAG_NC` on every data
    /// segment (read once, at construction).
    fn marks_non_congestion(&self) -> bool {
        false
    }

    /// The algorithm's variables that traces can sample (`trace.flow_vars`): a static table,
    /// the same for every instance built from the same parameters, which the registry reads
    /// from an instance at its defaults. Names differ from the sender's own
    /// ([`crate::tcp::vars::SENDER_VARS`]).
    fn vars(&self) -> &'static [VarSpec] {
        &[]
    }

    /// The current value of variable `name`, one of [`CongestionControl::vars`] (`None` for
    /// any other name); NaN while it is undefined. Read every trace interval, never per packet.
    fn var(&self, _name: &str) -> Option<f64> {
        None
    }
}

/// A registered congestion control.
pub struct CcModel {
    /// Name used in scenarios.
    pub name: &'static str,
    /// One line: what it is and its source.
    pub doc: &'static str,
    /// Declared parameters.
    pub params: &'static [ParamSpec],
    /// Whether it draws random numbers.
    pub random: crate::registry::Randomness,
    /// The queue disciplines it needs at its bottleneck (any of them; empty: any queue).
    pub partner_queues: &'static [&'static str],
    /// Construct from validated parameters and the flow's congestion-control stream
    /// (`Stream::Cc`), which only random algorithms draw from.
    pub build: fn(&Params, Rng) -> Box<dyn CongestionControl>,
}

/// Every congestion control ccsim knows; adding one is a file plus a line here.
pub static CCS: &[CcModel] = &[
    newreno::MODEL,
    cubic::MODEL,
    compound::MODEL,
    vegas::MODEL,
    veno::MODEL,
    ca_artt::MODEL,
    dctcp::MODEL,
    edctcp::MODEL,
    jersey::MODEL,
    reno::MODEL,
    ance::MODEL,
    encn::MODEL,
    bbr::MODEL,
    bbr3::MODEL,
    prague::MODEL,
];

/// Reno's additive increase, shared by the loss-based algorithms: slow start grows by the
/// bytes acknowledged up to `2 * SMSS` per ACK (RFC 3465 appropriate byte counting, L = 2,
/// so that delayed ACKs still double the window per RTT), without overshooting ssthresh;
/// congestion avoidance adds one SMSS per window of acknowledged bytes (RFC 5681 §3.1 byte
/// counting), kept in `bytes_acked`.
pub fn reno_increase(st: &mut CcState, acked: u64, bytes_acked: &mut u64) {
    let mss = st.mss as u64;
    let mut acked = acked;
    if st.in_slow_start() {
        let grow = acked.min(2 * mss).min(st.ssthresh - st.cwnd);
        st.cwnd += grow;
        acked -= grow.min(acked);
        if st.in_slow_start() {
            return;
        }
    }
    *bytes_acked += acked;
    if *bytes_acked >= st.cwnd {
        *bytes_acked -= st.cwnd;
        st.cwnd += mss;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listing_states_what_each_algorithm_needs_from_the_connection() {
        // `ccsim list` prints the docs; what `needs()` returns must be said there.
        for m in CCS {
            let p = Params::resolve(m.name, m.params, &Default::default()).unwrap();
            let needs = (m.build)(&p, Rng::stream(0, crate::sim::rng::Stream::Cc(0))).needs();
            assert_eq!(needs.ecn, m.doc.contains("needs ECN (implied)"), "{}", m.name);
            assert_eq!(needs.ecn_feedback == EcnFeedback::Dctcp, m.doc.contains("RFC 8257 §3.2 ACKs"), "{}", m.name);
            assert_eq!(needs.loss_notice, m.doc.contains("routers return"), "{}", m.name);
            assert_eq!(needs.pacing, m.doc.contains("paced (implied"), "{}", m.name);
            assert_eq!(needs.ect1, m.doc.contains("ECT(1) (implied"), "{}", m.name);
            assert_eq!(needs.ecn_feedback == EcnFeedback::Accurate, m.doc.contains("AccECN"), "{}", m.name);
        }
    }
}
