//! Opening and closing the connection, with `handshake = true`: the sender is the active
//! opener, the receiver (`receiver.rs`) the passive one. Without it the sender starts
//! established and none of this runs.
//!
//! - RFC 9293 §3.5, the three-way handshake: when the application first acts (at the flow's
//!   start for the applications that wake themselves; at the first message for those another
//!   flow drives) the sender sends a SYN (SYN-SENT). No data leaves before the SYN-ACK: the
//!   peer's window is learnt from it (SND.WND, RFC 9293 §3.10.7.3), and until then the
//!   sender's window is 0. On the SYN-ACK it sends a pure ACK, then its data at once, as Linux
//!   does when the application writes after `connect()` returns (`tcp_rcv_synsent_state_process`
//!   holds the ACK back for the data only if a write was already blocked on the connecting
//!   socket). A lost ACK costs nothing: the first data segment acknowledges the SYN-ACK too.
//! - RFC 6298, the SYN's timer: the SYN is sent again when the RTO expires, from the initial
//!   RTO (§2.1: 1 s), doubled at each expiry (§5.5) up to the maximum RTO (§2.5). After
//!   `syn_retries` retransmissions (Linux `tcp_syn_retries`: 6) the next expiry gives the
//!   attempt up (Linux: after 127 s with a 1 s initial RTO; with the default 60 s maximum RTO
//!   here, the last wait is 60 s instead of 64 s and the attempt ends at 123 s): the flow sends
//!   nothing more and the flows table says `connect_failed`.
//! - RTT: the SYN-ACK echoes the timestamp of the SYN it answers (RFC 7323 §4.3), so it
//!   gives the first RTT sample (RFC 6298 §2.2), also after a retransmitted SYN (§3: with
//!   timestamps Karn's rule does not apply); the congestion control sees it as any sample.
//!   RFC 6298 §5.7: if the timer expired awaiting the ACK of the SYN and the initial RTO is
//!   below 3 s, the RTO is set to 3 s when data transmission begins, after that sample: SRTT
//!   and RTTVAR come from it, and the next sample computes the RTO again (§2.3).
//! - RFC 5681 §3.1: if the SYN or the SYN-ACK was lost (the SYN was sent again), the initial
//!   window is one segment. Linux cuts it only after two or more retransmissions.
//! - Options and ECN: the SYN offers the MSS, SACK-permitted, window scale and timestamps
//!   (RFC 9293 §3.7.1, RFC 2018, RFC 7323) and, if ECN is on, asks for it (RFC 3168 §6.1.1:
//!   ECE and CWR; RFC 9768 §3.1.1 for Accurate ECN: AE, CWR and ECE); the receiver answers
//!   what it agrees to (ECE alone; for Accurate ECN the ACE codepoint of the SYN's IP ECN
//!   field, RFC 9768 Table 2), and the sender applies the answer. Both ends are built from the
//!   same flow configuration, so both offer the same options and the agreement is always
//!   that configuration: the negotiation cannot turn SACK or ECN off, or on, in a run; it
//!   makes the handshake's segments (and their capture) those of a real one, and would
//!   decide if the ends were ever configured apart. SYN and SYN-ACK are Not-ECT (RFC 3168
//!   §6.1.1) and [`SYN_EXTRA_HEADER`] bytes longer than a data segment's header.
//! - Closing, for a `transfer` (a bulk flow never ends): once every byte is acknowledged the
//!   sender sends a FIN (FIN-WAIT-1); the receiver's application reads the end of the stream
//!   and closes at once, so the receiver answers with its own FIN, which acknowledges the
//!   sender's (a FIN-ACK, as Linux's delayed ACK in CLOSE-WAIT lets the two go together);
//!   the sender acknowledges it and is done (TIME-WAIT). A lost FIN or FIN-ACK is recovered
//!   by the sender's RTO, doubling, without limit. Linux sends the FIN right behind the data
//!   (on the last segment if it is still queued); waiting for the last ACK delays the close
//!   by a round trip and changes no byte of the transfer, nor its completion time.
//!
//! Not modelled: the receiver's own timers for its SYN-ACK and FIN (it answers the sender's
//! retransmissions instead, which brings the same segment at the same time on a quiet
//! path), RST, simultaneous open, TIME-WAIT's 2 MSL, the AccECN feedback of the SYN-ACK's IP
//! ECN field on the third segment, SYN cookies and TCP Fast Open.

use super::TcpSender;
use crate::endpoint::Cx;
use crate::packet::{Kind, Packet, FLAG_AE, FLAG_CWR, FLAG_ECE, FLAG_SYN_FIN};
use crate::results::FlowResult;
use crate::sim::time::{secs, Time, SEC};
use crate::tcp::{Control, EcnFeedback, SynOptions, SYN_EXTRA_HEADER};

/// RFC 6298 §5.7: the RTO data transmission begins with after a SYN timed out.
const RTO_AFTER_SYN_TIMEOUT: Time = 3 * SEC;

/// Where the connection is (RFC 9293 §3.3.2, the active opener's states).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum State {
    /// Before the application's first action.
    Closed,
    /// SYN sent, no SYN-ACK yet.
    SynSent,
    /// Data flows.
    Established,
    /// FIN sent, not acknowledged yet.
    FinWait,
    /// Both FINs exchanged and acknowledged.
    TimeWait,
    /// The SYN was given up after `syn_retries` retransmissions.
    Failed,
}

/// The connection's state and what the flows table reports of it.
#[derive(Debug)]
pub(super) struct Connection {
    pub(super) state: State,
    /// When the first SYN left.
    first_syn: Option<Time>,
    /// When the SYN-ACK arrived.
    established: Option<Time>,
    /// SYNs sent again.
    syn_retransmissions: u64,
}

impl Connection {
    pub(super) fn new() -> Self {
        Connection { state: State::Closed, first_syn: None, established: None, syn_retransmissions: 0 }
    }
}

/// The ECN answer of a SYN-ACK means the receiver agreed to ECN: ECE alone (RFC 3168
/// §6.1.1), or, for Accurate ECN, one of the ACE codepoints of RFC 9768 Table 2 (0b010,
/// 0b011, 0b100, 0b110).
fn ecn_agreed(flags: u8, feedback: EcnFeedback) -> bool {
    let ace = (flags & FLAG_AE != 0) as u8 * 4 + (flags & FLAG_CWR != 0) as u8 * 2 + (flags & FLAG_ECE != 0) as u8;
    match feedback {
        EcnFeedback::Accurate => matches!(ace, 2 | 3 | 4 | 6),
        _ => ace & 3 == 1,
    }
}

impl TcpSender {
    /// The application acted: if the connection is still closed, send the SYN.
    #[cold]
    #[inline(never)]
    pub(super) fn open_connection(&mut self, cx: &mut Cx) {
        let Some(c) = self.conn.as_deref_mut() else { return };
        if c.state != State::Closed {
            return;
        }
        c.state = State::SynSent;
        c.first_syn = Some(cx.now);
        self.send_syn(cx);
    }

    /// Send the SYN (again) and start its timer.
    fn send_syn(&mut self, cx: &mut Cx) {
        let ecn_setup = match (self.cfg.ecn, self.cfg.ecn_feedback) {
            (false, _) => 0,
            (true, EcnFeedback::Accurate) => FLAG_AE | FLAG_CWR | FLAG_ECE,
            (true, _) => FLAG_ECE | FLAG_CWR,
        };
        let mut syn = Packet {
            flow: self.flow,
            dst: self.dst,
            size: self.cfg.header + SYN_EXTRA_HEADER,
            ts: cx.now,
            window: self.cfg.rwnd.min(u32::MAX as u64) as u32,
            kind: Kind::TcpData,
            flags: FLAG_SYN_FIN | ecn_setup,
            ..Packet::default()
        };
        SynOptions::offered(&self.cfg).write(&mut syn);
        cx.out.push(syn);
        self.rto_deadline = Some(cx.now + self.rtt.rto());
    }

    /// A header-only segment without SYN or FIN, acknowledging the receiver's SYN or FIN:
    /// at `seq` (after the SYN, 0; after the FIN, the byte after it).
    fn send_pure_ack(&mut self, seq: u64, echo: Time, cx: &mut Cx) {
        cx.out.push(Packet {
            flow: self.flow,
            dst: self.dst,
            size: self.cfg.header,
            seq,
            ts: cx.now,
            ts_echo: echo,
            kind: Kind::TcpData,
            ..Packet::default()
        });
    }

    /// Send the FIN (again) and start its timer. It sits after the last byte.
    fn send_fin(&mut self, cx: &mut Cx) {
        cx.out.push(Packet {
            flow: self.flow,
            dst: self.dst,
            size: self.cfg.header,
            seq: self.snd_nxt,
            ts: cx.now,
            kind: Kind::TcpData,
            flags: FLAG_SYN_FIN,
            ..Packet::default()
        });
        self.rto_deadline = Some(cx.now + self.rtt.rto());
    }

    /// The RTO expired while the connection was opening or closing: the SYN's or the FIN's
    /// timer. True if it was one of them (then the data's timeout does not apply).
    pub(super) fn connection_timeout(&mut self, cx: &mut Cx) -> bool {
        let Some(c) = self.conn.as_deref_mut() else { return false };
        match c.state {
            State::SynSent if c.syn_retransmissions >= self.cfg.syn_retries as u64 => {
                c.state = State::Failed;
                self.rto_deadline = None;
            }
            State::SynSent => {
                c.syn_retransmissions += 1;
                self.rtt.back_off();
                self.send_syn(cx);
            }
            State::FinWait => {
                self.rtt.back_off();
                self.send_fin(cx);
            }
            _ => return false,
        }
        true
    }

    /// Every byte sent is acknowledged: an application that closes and has written
    /// everything it will write closes the connection (FIN-WAIT-1).
    #[cold]
    #[inline(never)]
    pub(super) fn on_all_acked(&mut self, cx: &mut Cx) {
        let finished = self.cfg.closes && self.app_wakeup.is_none() && self.snd_nxt == self.app_end;
        let Some(c) = self.conn.as_deref_mut() else { return };
        if finished && c.state == State::Established {
            c.state = State::FinWait;
            self.send_fin(cx);
        }
    }

    /// The receiver's SYN-ACK or FIN-ACK arrived.
    #[cold]
    #[inline(never)]
    pub(super) fn on_connection_segment(&mut self, pkt: &Packet, cx: &mut Cx) {
        let Some(state) = self.conn.as_deref().map(|c| c.state) else { return };
        match (Control::of(pkt), state) {
            (Some(Control::Syn), State::SynSent) => self.established(pkt, cx),
            // A SYN-ACK again (it answered a SYN sent again while the first SYN-ACK was on
            // its way): acknowledge it, as any segment that is not acceptable (RFC 9293
            // §3.10.7.4).
            (Some(Control::Syn), State::Established) => self.send_pure_ack(0, pkt.ts, cx),
            (Some(Control::Fin), State::FinWait | State::TimeWait) => {
                // Our FIN is acknowledged and the receiver's FIN received (or received again:
                // our ACK was lost): acknowledge it.
                if let Some(c) = self.conn.as_deref_mut() {
                    c.state = State::TimeWait;
                }
                self.rto_deadline = None;
                self.send_pure_ack(self.snd_nxt + 1, pkt.ts, cx);
            }
            _ => {}
        }
    }

    /// The SYN-ACK arrived in SYN-SENT: take the agreed options and the first RTT sample,
    /// acknowledge it, and start sending (module header).
    fn established(&mut self, pkt: &Packet, cx: &mut Cx) {
        let now = cx.now;
        let agreed = SynOptions::offered(&self.cfg).agreed(SynOptions::read(pkt));
        self.cfg.sack = agreed.sack;
        if !ecn_agreed(pkt.flags, self.cfg.ecn_feedback) {
            (self.cfg.ecn, self.cfg.ect1) = (false, false);
        }
        self.rwnd = pkt.window as u64;
        if pkt.ts_echo <= now {
            let r = now - pkt.ts_echo;
            self.rtt.sample(r);
            cx.stats.rtt_sample(now, r);
            self.sync_state(now);
            self.cc.on_rtt_sample(&self.st, r);
        }
        let c = self.conn.as_deref_mut().expect("a connection is opening");
        c.state = State::Established;
        c.established = Some(now);
        if c.syn_retransmissions > 0 {
            if self.cfg.initial_rto.clamp(self.cfg.min_rto, self.cfg.max_rto) < RTO_AFTER_SYN_TIMEOUT {
                self.rtt.set_rto(RTO_AFTER_SYN_TIMEOUT);
            }
            self.st.cwnd = self.cfg.mss as u64;
        }
        self.rto_deadline = None;
        self.send_pure_ack(0, pkt.ts, cx);
        self.try_send(cx);
    }

    /// The connection's columns of the flows table.
    pub(super) fn report_connection(&self, row: &mut FlowResult) {
        if let Some(c) = self.conn.as_deref() {
            row.connect_s = c.first_syn.zip(c.established).map(|(syn, est)| secs(est - syn));
            row.syn_retransmissions = c.syn_retransmissions;
            row.connect_failed = c.state == State::Failed;
        }
    }
}

#[cfg(test)]
mod tests {
    //! The handshake and the close against the RFCs' text, the sender alone (its segments read
    //! off its output, the receiver's written by hand) and with a receiver wired to it.
    use super::super::testkit::*;
    use super::*;
    use crate::app::transfer::Transfer;
    use crate::packet::Ecn;
    use crate::sim::dist::Dist;
    use crate::tcp::receiver::{Passive, TcpReceiver};

    /// A sender (MSS 1000 B, header 40 B, IW 10) with a handshake, whose application writes
    /// `segments` segments at time 0.
    fn connecting(segments: u64, tune: impl FnOnce(&mut TcpConfig)) -> (TcpSender, FlowStats) {
        let mut cfg = TcpConfig::default_config();
        (cfg.mss, cfg.header, cfg.init_cwnd, cfg.rwnd, cfg.handshake, cfg.closes) =
            (1000, 40, 10_000, 1 << 30, true, true);
        tune(&mut cfg);
        let app = Transfer::new(0, Dist::Fixed(segments as f64 * 1000.0), Rng::stream(1, Stream::App(0)));
        (TcpSender::new(0, 1, cfg, Box::new(NewReno::default()), Box::new(app)), FlowStats::default())
    }

    fn wake(s: &mut TcpSender, stats: &mut FlowStats, now: Time) -> Vec<Packet> {
        let mut out = Vec::new();
        s.on_wakeup(&mut Cx { now, out: &mut out, stats, messages: &mut MessageLedger::default() });
        out
    }

    fn feed(s: &mut impl Endpoint, stats: &mut FlowStats, pkt: &Packet, now: Time) -> Vec<Packet> {
        let mut out = Vec::new();
        s.on_packet(pkt, &mut Cx { now, out: &mut out, stats, messages: &mut MessageLedger::default() });
        out
    }

    /// The receiver's SYN-ACK for a SYN sent at `echo`: ECE as the ECN answer if `ece`.
    fn syn_ack(echo: Time, ece: bool) -> Packet {
        let mut p = Packet {
            kind: Kind::TcpAck,
            ts_echo: echo,
            window: 1 << 30,
            flags: FLAG_SYN_FIN | if ece { FLAG_ECE } else { 0 },
            size: 48,
            ..Packet::default()
        };
        SynOptions { mss: 1000, sack: true, wscale: 7, timestamps: true }.write(&mut p);
        p
    }

    fn is_syn(p: &Packet) -> bool {
        p.kind == Kind::TcpData && Control::of(p) == Some(Control::Syn)
    }

    fn state(s: &TcpSender) -> State {
        s.conn.as_ref().expect("a handshake").state
    }

    #[test]
    fn three_way_handshake_then_data_rfc9293() {
        // RFC 9293 §3.5: SYN (SYN-SENT), SYN-ACK, ACK (ESTABLISHED); no data before the
        // SYN-ACK, then the ACK and the initial window at once.
        let (mut s, mut st) = connecting(5, |_| {});
        assert_eq!(state(&s), State::Closed);
        let out = wake(&mut s, &mut st, 0);
        assert_eq!(out.len(), 1, "the SYN only");
        let syn = out[0];
        assert!(is_syn(&syn));
        assert_eq!(
            (syn.seq, syn.payload, syn.size, syn.ecn),
            (0, 0, 48, Ecn::NotEct),
            "40 B header + 8 B of SYN options"
        );
        assert_eq!(SynOptions::read(&syn), SynOptions { mss: 1000, sack: true, wscale: 7, timestamps: true });
        assert_eq!(state(&s), State::SynSent);
        assert_eq!(s.next_wakeup(), Some(SEC), "the SYN's timer: the initial RTO, 1 s (RFC 6298 §2.1)");
        assert_eq!(st.packets_sent, 0, "a SYN is not data");
        // The SYN-ACK echoes the SYN's timestamp: a 100 ms sample, the first (RFC 6298 §2.2).
        let out = feed(&mut s, &mut st, &syn_ack(0, false), 100 * MS);
        assert_eq!(state(&s), State::Established);
        let (ack, data) = (out[0], &out[1..]);
        assert_eq!((ack.kind, ack.payload, ack.seq, ack.flags, ack.ts_echo), (Kind::TcpData, 0, 0, 0, 0));
        assert_eq!(data.iter().map(|p| p.seq / 1000).collect::<Vec<_>>(), vec![0, 1, 2, 3, 4]);
        assert_eq!((s.rtt.srtt, s.rtt.rttvar), (Some(100 * MS), 50 * MS));
        assert_eq!(s.rto(), SEC, "100 ms + 4 x 50 ms, rounded up to 1 s (§2.4)");
        assert_eq!((st.rtt_n, st.packets_sent), (1, 5));
        let mut row = FlowResult::default();
        s.report(&mut row);
        assert_eq!((row.connect_s, row.syn_retransmissions, row.connect_failed), (Some(0.1), 0, false));
    }

    #[test]
    fn a_lost_syn_is_sent_again_after_1_2_4_s_and_given_up_after_syn_retries() {
        // RFC 6298 §2.1 and §5.5: 1 s, then doubling; Linux tcp_syn_retries = 6 retransmissions,
        // then one more doubled wait and the attempt ends: 1+2+4+8+16+32+64 = 127 s.
        let (mut s, mut st) = connecting(5, |c| c.max_rto = 120 * SEC);
        let mut syns = vec![];
        let mut now = 0;
        loop {
            let out = wake(&mut s, &mut st, now);
            syns.extend(out.iter().filter(|p| is_syn(p)).map(|p| p.ts / SEC));
            assert!(out.iter().all(is_syn), "nothing but SYNs");
            let Some(next) = s.next_wakeup() else { break };
            now = next;
        }
        assert_eq!(syns, vec![0, 1, 3, 7, 15, 31, 63]);
        assert_eq!(now, 127 * SEC, "given up at 127 s");
        assert_eq!(state(&s), State::Failed);
        let mut row = FlowResult::default();
        s.report(&mut row);
        assert_eq!((row.connect_s, row.syn_retransmissions, row.connect_failed), (None, 6, true));
        // RFC 6298 §2.5's maximum (60 s by default) caps the last wait: 63 + 60 = 123 s.
        let (mut s, mut st) = connecting(5, |c| c.syn_retries = 2);
        let mut times = vec![];
        let mut now = 0;
        loop {
            wake(&mut s, &mut st, now);
            times.push(now / SEC);
            let Some(next) = s.next_wakeup() else { break };
            now = next;
        }
        assert_eq!(times, vec![0, 1, 3, 7], "two retransmissions, then the end at 7 s");
        let (mut s, mut st) = connecting(5, |_| {});
        let mut now = 0;
        while let Some(next) = s.next_wakeup() {
            now = next;
            wake(&mut s, &mut st, now);
        }
        assert_eq!(now, 123 * SEC);
    }

    #[test]
    fn after_a_syn_timeout_data_starts_with_a_3_s_rto_and_one_segment() {
        // RFC 6298 §5.7: the timer expired awaiting the ACK of the SYN and the RTO in use (1 s)
        // is below 3 s: RTO = 3 s when data transmission begins; SRTT and RTTVAR still come
        // from the SYN-ACK's sample (§2.2). RFC 5681 §3.1: a window of one segment.
        let (mut s, mut st) = connecting(5, |_| {});
        wake(&mut s, &mut st, 0);
        let again = wake(&mut s, &mut st, SEC);
        assert!(is_syn(&again[0]) && again[0].ts == SEC);
        // The SYN-ACK answers the second SYN (it echoes its timestamp): a 100 ms sample.
        let out = feed(&mut s, &mut st, &syn_ack(SEC, false), SEC + 100 * MS);
        assert_eq!(s.rtt.srtt, Some(100 * MS));
        assert_eq!(s.rto(), 3 * SEC);
        assert_eq!(out.iter().filter(|p| p.payload > 0).count(), 1, "one segment");
        assert_eq!(s.next_wakeup(), Some(SEC + 100 * MS + 3 * SEC), "the data's timer runs 3 s");
        let mut row = FlowResult::default();
        s.report(&mut row);
        assert_eq!((row.connect_s, row.syn_retransmissions), (Some(1.1), 1));
        // The next sample computes the RTO again (§2.3).
        feed(
            &mut s,
            &mut st,
            &Packet { kind: Kind::TcpAck, ack: 1000, ts_echo: SEC + 100 * MS, window: 1 << 30, ..Packet::default() },
            SEC + 200 * MS,
        );
        assert_eq!(s.rto(), SEC);
        // An implementation already at 3 s or more keeps what the sample gives.
        let (mut s, mut st) = connecting(5, |c| c.initial_rto = 3 * SEC);
        wake(&mut s, &mut st, 0);
        wake(&mut s, &mut st, 3 * SEC);
        feed(&mut s, &mut st, &syn_ack(3 * SEC, false), 3 * SEC + 100 * MS);
        assert_eq!(s.rto(), SEC);
    }

    #[test]
    fn ecn_setup_syn_and_syn_ack_rfc3168() {
        // RFC 3168 §6.1.1: an ECN-setup SYN has ECE and CWR, Not-ECT; the ECN-setup SYN-ACK
        // has ECE alone. Without it, ECN is off for the connection.
        let flags_of = |ecn: bool, feedback: EcnFeedback| {
            let (mut s, mut st) = connecting(2, |c| (c.ecn, c.ecn_feedback) = (ecn, feedback));
            let syn = wake(&mut s, &mut st, 0)[0];
            assert_eq!(syn.ecn, Ecn::NotEct);
            syn.flags & (FLAG_AE | FLAG_CWR | FLAG_ECE)
        };
        assert_eq!(flags_of(false, EcnFeedback::Classic), 0);
        assert_eq!(flags_of(true, EcnFeedback::Classic), FLAG_ECE | FLAG_CWR);
        assert_eq!(flags_of(true, EcnFeedback::Dctcp), FLAG_ECE | FLAG_CWR);
        // RFC 9768 §3.1.1: an AccECN SYN sets AE, CWR and ECE.
        assert_eq!(flags_of(true, EcnFeedback::Accurate), FLAG_AE | FLAG_CWR | FLAG_ECE);
        let data_ecn = |answer: u8, feedback: EcnFeedback| {
            let (mut s, mut st) = connecting(2, |c| (c.ecn, c.ecn_feedback) = (true, feedback));
            wake(&mut s, &mut st, 0);
            let reply = Packet { flags: FLAG_SYN_FIN | answer, ..syn_ack(0, false) };
            let out = feed(&mut s, &mut st, &reply, 10 * MS);
            assert_eq!(out[0].ecn, Ecn::NotEct, "the pure ACK");
            out[1].ecn
        };
        assert_eq!(data_ecn(FLAG_ECE, EcnFeedback::Classic), Ecn::Ect0, "ECN-setup SYN-ACK");
        assert_eq!(data_ecn(0, EcnFeedback::Classic), Ecn::NotEct, "non-ECN-setup SYN-ACK");
        assert_eq!(data_ecn(FLAG_ECE | FLAG_CWR, EcnFeedback::Classic), Ecn::NotEct, "ECE and CWR: not a setup answer");
        // RFC 9768 Table 2: the ACE codepoint answering a Not-ECT SYN is 0b010 (CWR alone).
        assert_eq!(data_ecn(FLAG_CWR, EcnFeedback::Accurate), Ecn::Ect0);
        assert_eq!(data_ecn(0, EcnFeedback::Accurate), Ecn::NotEct);
    }

    /// A sender and a receiver joined by a path of `owd` each way; `drop(k, p)` drops the
    /// k-th packet (from 0, in sending order, either way) if it returns true.
    struct Pair {
        s: TcpSender,
        r: TcpReceiver,
        st: FlowStats,
        now: Time,
        /// (arrival, to the sender?, packet), in flight.
        wire: Vec<(Time, bool, Packet)>,
        sent: usize,
        log: Vec<(Time, bool, Packet)>,
    }

    impl Pair {
        fn new(segments: u64) -> Self {
            let (s, st) = connecting(segments, |_| {});
            let mut cfg = s.cfg.clone();
            cfg.delack_count = 1;
            let r = TcpReceiver::new(0, 0, cfg);
            Pair { s, r, st, now: 0, wire: vec![], sent: 0, log: vec![] }
        }

        /// Run until nothing is in flight and no timer is due before `until`, dropping
        /// the packets `drop` picks by their sending order and direction.
        fn run(&mut self, until: Time, owd: Time, drop: impl Fn(usize, &Packet) -> bool) {
            loop {
                let next_packet = self.wire.iter().map(|w| w.0).min();
                let next_timer = [self.s.next_wakeup(), self.r.next_wakeup()].into_iter().flatten().min();
                let Some(t) = next_packet.into_iter().chain(next_timer).min().filter(|&t| t <= until) else { break };
                self.now = t;
                let mut out: Vec<(bool, Packet)> = vec![];
                if let Some(i) = self.wire.iter().position(|w| w.0 == t) {
                    let (_, to_sender, p) = self.wire.remove(i);
                    let mut o = vec![];
                    let mut cx =
                        Cx { now: t, out: &mut o, stats: &mut self.st, messages: &mut MessageLedger::default() };
                    if to_sender {
                        self.s.on_packet(&p, &mut cx);
                    } else {
                        self.r.on_packet(&p, &mut cx);
                    }
                    out.extend(o.into_iter().map(|p| (!to_sender, p)));
                } else {
                    for (is_sender, due) in [(true, self.s.next_wakeup()), (false, self.r.next_wakeup())] {
                        if due == Some(t) {
                            let mut o = vec![];
                            let mut cx = Cx {
                                now: t,
                                out: &mut o,
                                stats: &mut self.st,
                                messages: &mut MessageLedger::default(),
                            };
                            if is_sender {
                                self.s.on_wakeup(&mut cx);
                            } else {
                                self.r.on_wakeup(&mut cx);
                            }
                            out.extend(o.into_iter().map(|p| (!is_sender, p)));
                        }
                    }
                }
                for (to_sender, p) in out {
                    self.log.push((t, to_sender, p));
                    if !drop(self.sent, &p) {
                        self.wire.push((t + owd, to_sender, p));
                    }
                    self.sent += 1;
                }
            }
        }
    }

    #[test]
    fn a_lost_syn_ack_is_answered_again_when_the_syn_comes_again() {
        // The first SYN-ACK (packet 1) is lost: the sender's timer sends the SYN again at 1 s,
        // the receiver, still in SYN-RECEIVED, answers it again: connected at 1 s + RTT.
        let mut p = Pair::new(3);
        p.run(10 * SEC, 50 * MS, |k, _| k == 1);
        let syn_acks: Vec<Time> =
            p.log.iter().filter(|(_, to_s, q)| *to_s && Control::of(q) == Some(Control::Syn)).map(|l| l.0).collect();
        assert_eq!(syn_acks, vec![50 * MS, SEC + 50 * MS]);
        let mut row = FlowResult::default();
        p.s.report(&mut row);
        assert_eq!((row.connect_s, row.syn_retransmissions), (Some(1.1), 1));
        assert_eq!(p.r.rcv_nxt(), 3001, "the data and the FIN");
        assert_eq!(state(&p.s), State::TimeWait);
    }

    #[test]
    fn a_lost_handshake_ack_does_not_stop_the_data() {
        // Packet 2 is the sender's ACK of the SYN-ACK: lost, the receiver stays in
        // SYN-RECEIVED until the data, which carries the same acknowledgement, arrives.
        let mut p = Pair::new(3);
        p.run(10 * SEC, 50 * MS, |k, q| {
            if k == 2 {
                assert_eq!((q.kind, q.payload, q.flags), (Kind::TcpData, 0, 0), "the handshake's ACK");
            }
            k == 2
        });
        assert_eq!(p.r.rcv_nxt(), 3001);
        assert_eq!(p.st.bytes_delivered, 3000);
        assert_eq!((state(&p.s), p.r.passive()), (State::TimeWait, Some(Passive::Closed)));
        assert_eq!(p.st.retransmissions + p.st.timeouts, 0, "nothing sent again");
    }

    #[test]
    fn a_transfer_closes_with_a_fin_exchange_once_acknowledged() {
        // RFC 9293 §3.6: FIN (FIN-WAIT-1), the receiver's FIN acknowledging it, the last ACK
        // (TIME-WAIT). The sender's FIN leaves once its 3 segments are acknowledged.
        let mut p = Pair::new(3);
        p.run(10 * SEC, 50 * MS, |_, _| false);
        let closing: Vec<(Time, bool, u64, u64, Option<Control>)> = p
            .log
            .iter()
            .filter(|(t, _, _)| *t >= 200 * MS)
            .map(|(t, to_s, q)| (*t / MS, *to_s, q.seq, q.ack, Control::of(q)))
            .collect();
        assert_eq!(
            closing,
            vec![
                (200, false, 3000, 0, Some(Control::Fin)),
                (250, true, 0, 3001, Some(Control::Fin)),
                (300, false, 3001, 0, None),
            ]
        );
        assert_eq!((state(&p.s), p.r.passive()), (State::TimeWait, Some(Passive::Closed)));
        assert_eq!(p.s.next_wakeup(), None, "no timer left");
        // A lost FIN-ACK: the FIN comes again after the RTO (1 s), and is answered again.
        let mut p = Pair::new(3);
        p.run(10 * SEC, 50 * MS, |_, q| q.kind == Kind::TcpAck && Control::of(q) == Some(Control::Fin) && q.ts < SEC);
        let fins: Vec<Time> = p
            .log
            .iter()
            .filter(|(_, to_s, q)| !to_s && Control::of(q) == Some(Control::Fin))
            .map(|l| l.0 / MS)
            .collect();
        assert_eq!(fins, vec![200, 1200]);
        assert_eq!((state(&p.s), p.r.passive()), (State::TimeWait, Some(Passive::Closed)));
    }

    #[test]
    fn a_bulk_flow_never_closes() {
        let mut cfg = TcpConfig::default_config();
        (cfg.handshake, cfg.closes) = (true, false);
        let mut h = Harness::with_app(10, true, Box::new(NewReno::default()), Box::new(Backlog));
        h.s = TcpSender::new(0, 1, cfg, Box::new(NewReno::default()), Box::new(Backlog));
        h.s.app_end = 5000;
        h.s.run_app(
            &mut Cx { now: 0, out: &mut vec![], stats: &mut h.stats, messages: &mut MessageLedger::default() },
            true,
        );
        feed(&mut h.s, &mut h.stats, &syn_ack(0, false), 10 * MS);
        let out = feed(
            &mut h.s,
            &mut h.stats,
            &Packet { kind: Kind::TcpAck, ack: 5000, window: 1 << 30, ..Packet::default() },
            20 * MS,
        );
        assert!(out.is_empty() && state(&h.s) == State::Established);
    }
}

#[cfg(test)]
mod runs {
    //! Whole runs (debug builds check the engine's invariants on every packet): every
    //! congestion control opens its connections through a lossy, congested path, and every
    //! transfer completes and closes.
    use crate::config::{AlgoSpec, Config, DirSpec, FlowSpec, LinkSpec, NodeSpec, TraceSpec};
    use crate::params::{ParamValue, Size};
    use crate::sim::time::{MS, SEC};
    use crate::Simulation;

    #[test]
    fn every_congestion_control_opens_and_closes_through_a_lossy_bottleneck() {
        let mut syns_again = 0;
        for cc in ["newreno", "cubic", "bbr", "dctcp", "prague", "edctcp", "vegas", "compound", "encn"] {
            let queue = AlgoSpec::named("droptail").with("limit", ParamValue::Size(Size::Packets(20)));
            let dir = |rate, delay, loss: f64| DirSpec { rate_bps: rate, delay_ns: delay, loss, queue: queue.clone() };
            let access = |a, b| LinkSpec {
                a,
                b,
                ab: dir(100_000_000, MS, 0.0),
                ba: dir(100_000_000, MS, 0.0),
                schedule: Vec::new(),
            };
            let tcp = AlgoSpec::named("tcp").with("handshake", ParamValue::Bool(true));
            let flow = |app: AlgoSpec, start_ns| FlowSpec {
                name: None,
                src: 2,
                dst: 3,
                transport: tcp.clone(),
                cc: Some(AlgoSpec::named(cc)),
                app,
                start_ns,
                start_max_ns: None,
                stop_ns: None,
                group: None,
            };
            let transfer = AlgoSpec::named("transfer").with("size", ParamValue::Int(100_000));
            let cfg = Config {
                duration_ns: 20 * SEC,
                warmup_ns: 0,
                seed: 3,
                nodes: vec![NodeSpec::router("A"), NodeSpec::router("B"), NodeSpec::host("s"), NodeSpec::host("r")],
                links: vec![
                    LinkSpec {
                        a: 0,
                        b: 1,
                        ab: dir(10_000_000, 10 * MS, 0.02),
                        ba: dir(10_000_000, 10 * MS, 0.02),
                        schedule: Vec::new(),
                    },
                    access(2, 0),
                    access(1, 3),
                ],
                flows: (0..4)
                    .map(|k| flow(AlgoSpec::named("bulk"), k * 100 * MS))
                    .chain((0..6).map(|k| flow(transfer.clone(), 50 * MS + k * 700 * MS)))
                    .collect(),
                trace: TraceSpec::default(),
                bottleneck: None,
                jain_flows: None,
                control: Vec::new(),
                workloads: Vec::new(),
            };
            let mut sim = Simulation::new(&cfg).unwrap_or_else(|e| panic!("{cc}: {e}"));
            sim.run();
            sim.check_conservation().unwrap();
            let results = sim.results();
            assert!(results.flows.iter().all(|f| f.connect_s.is_some()), "{cc}: every connection opens");
            for f in &results.flows[4..] {
                assert!(f.fct_s.is_some() && f.bytes_delivered == 100_000, "{cc}: flow {} completes", f.id);
            }
            syns_again += results.flows.iter().map(|f| f.syn_retransmissions).sum::<u64>();
        }
        assert!(syns_again > 0, "some SYN or SYN-ACK was lost, and sent again");
    }
}
