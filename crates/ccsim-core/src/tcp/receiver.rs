//! The TCP receiver: in-order delivery, out-of-order buffering, ACK generation.
//!
//! - RFC 5681 §4.2 / RFC 1122 §4.2.3.2: delayed ACKs, at least every `delack_count` full
//!   segments and within `delack_timeout`; an immediate ACK for an out-of-order segment (the
//!   duplicate ACK) and for a segment that fills a gap.
//! - RFC 2018: up to three SACK blocks, the block holding the most recently received segment
//!   first (§4), then the others from the highest down.
//! - RFC 7323 §4.3: the echoed timestamp is that of the earliest segment the ACK covers, so a
//!   delayed ACK's RTT sample includes the delay; out-of-order segments do not update it.
//! - RFC 3168 §6.1.3 ([`EcnFeedback::Classic`]): after a CE-marked segment, set ECE on every
//!   ACK until a segment with CWR arrives.
//! - RFC 8257 §3.2 ([`EcnFeedback::Dctcp`], chosen by DCTCP-family congestion controls): one
//!   bit of state, the CE mark of the latest segment; ECE on an ACK is that state, so it
//!   reflects exactly the marks of the segments acknowledged. When an arriving segment's mark
//!   differs from the state and delayed-ACK data is pending, an ACK for the data received so
//!   far goes out at once with the old state (Alizadeh et al. 2010 fig. 10, Linux
//!   `dctcp_ece_ack_update`); then the state flips and the segment is handled as usual. CWR
//!   is ignored.
//! - RFC 9768 ([`EcnFeedback::Accurate`], Accurate ECN, chosen by Prague): the receiver counts
//!   the CE-marked packets it receives (`r.cep`, starting at 5, §3.2.2.1) and every ACK
//!   carries the count modulo 8 in its ACE field (AE, CWR, ECE; [`FLAG_AE`]). ACKs go out at
//!   once for a CE-marked packet that follows one that was not (change-triggered, §3.2.2.5.1)
//!   and when two CE marks have arrived since the last ACK (increment-triggered, §3.2.2.5.2,
//!   n = 2 with data to acknowledge), so that the 3-bit counter cannot wrap between ACKs.
//!   Not modelled: the AccECN TCP option with its byte counters (optional, §3.2.3), and
//!   feedback of ECT(0), ECT(1) and Not-ECT counts. The handshake that negotiates AccECN is
//!   modelled with `handshake` (below); without it both ends start configured for it.
//! - ENCN (ccsim's carriage, see `qdisc/encn.rs`): FLAG_NC_ECHO on an ACK iff the latest data
//!   segment received (the one that triggered the ACK) carried FLAG_NC.
//! - With `handshake` (the sequence and its sources are in `sender/connection.rs`): the
//!   receiver is the passive opener. It answers a SYN with a SYN-ACK carrying the options and
//!   the ECN setup it agrees to (RFC 3168 §6.1.1: ECE alone; RFC 9768 Table 2 for Accurate
//!   ECN), again for each SYN sent again before data arrives; it answers the sender's FIN,
//!   once every byte before it has arrived, with its own FIN acknowledging it (RCV.NXT
//!   moves past the FIN, RFC 9293 §3.10.7.4), again if the FIN comes again. The sender's
//!   header-only segments (SYN, ACKs, FIN) arrive at or below RCV.NXT, so they reach the
//!   branch of old duplicates, and only there are they looked at: data costs nothing more.

use super::{Control, EcnFeedback, SynOptions, TcpConfig, SYN_EXTRA_HEADER};
use crate::endpoint::{Cx, Endpoint};
use crate::invariants::DeliveryCheck;
use crate::packet::{
    Ecn, Kind, Packet, SackBlock, FLAG_AE, FLAG_CWR, FLAG_ECE, FLAG_NC, FLAG_NC_ECHO, FLAG_SYN_FIN, MAX_SACK_BLOCKS,
};
use crate::sim::time::Time;

/// A TCP receiver.
pub struct TcpReceiver {
    flow: u32,
    /// The sending host, where ACKs go.
    peer: u32,
    cfg: TcpConfig,
    /// Next byte expected (RFC 793 RCV.NXT).
    rcv_nxt: u64,
    /// Out-of-order data above `rcv_nxt`: sorted, disjoint `[start, end)` ranges.
    ooo: Vec<(u64, u64)>,
    /// Start of the range holding the most recent out-of-order arrival.
    recent_block: Option<u64>,
    /// In-order segments received since the last ACK.
    unacked_segments: u32,
    delack_deadline: Option<Time>,
    /// RFC 7323 TS.Recent.
    ts_recent: Time,
    /// Classic: echo congestion until CWR. DCTCP: the CE state (`DCTCP.CE`, RFC 8257 §3.2).
    ece: bool,
    /// The latest data segment carried FLAG_NC (ENCN).
    nc: bool,
    /// Accurate ECN: CE-marked packets received, plus 5 (RFC 9768 `r.cep`), modulo 256.
    r_cep: u8,
    /// Accurate ECN: CE marks since the last ACK.
    ce_unacked: u8,
    /// Debug builds: what reached the application (`invariants.rs`).
    delivery: DeliveryCheck,
    /// The connection's state, with `handshake`.
    conn: Option<Passive>,
}

/// The passive opener's states (RFC 9293 §3.3.2) that change what it does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Passive {
    /// Waiting for a SYN.
    Listen,
    /// SYN answered; the handshake's ACK or data not arrived yet (data arriving first opens the
    /// connection as well, unrecorded: data alone decides nothing here).
    SynReceived,
    /// The handshake's ACK arrived.
    Established,
    /// The sender's FIN answered with the receiver's own.
    LastAck,
    /// The sender acknowledged the receiver's FIN.
    Closed,
}

impl TcpReceiver {
    /// A receiver for `flow` acknowledging to node `peer`.
    pub fn new(flow: u32, peer: u32, cfg: TcpConfig) -> Self {
        let handshake = cfg.handshake;
        TcpReceiver {
            flow,
            peer,
            cfg,
            rcv_nxt: 0,
            ooo: Vec::new(),
            recent_block: None,
            unacked_segments: 0,
            delack_deadline: None,
            ts_recent: 0,
            ece: false,
            nc: false,
            r_cep: 5,
            ce_unacked: 0,
            delivery: DeliveryCheck::new(0),
            conn: handshake.then_some(Passive::Listen),
        }
    }

    /// Where the connection is, with `handshake`.
    #[cfg(test)]
    pub(crate) fn passive(&self) -> Option<Passive> {
        self.conn
    }

    /// Next byte expected.
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    /// Insert `[start, end)` into the out-of-order ranges, merging neighbours. Returns the
    /// number of bytes not held before.
    fn insert_ooo(&mut self, start: u64, end: u64) -> u64 {
        let i = self.ooo.partition_point(|r| r.1 < start);
        let mut j = i;
        let (mut s, mut e) = (start, end);
        let mut held = 0;
        while j < self.ooo.len() && self.ooo[j].0 <= end {
            s = s.min(self.ooo[j].0);
            e = e.max(self.ooo[j].1);
            held += self.ooo[j].1 - self.ooo[j].0;
            j += 1;
        }
        // Not `splice`, whose generic machinery costs a few hundred instructions per call.
        if j == i {
            self.ooo.insert(i, (s, e));
        } else {
            self.ooo[i] = (s, e);
            self.ooo.drain(i + 1..j);
        }
        self.recent_block = Some(s);
        (e - s) - held
    }

    fn send_ack(&mut self, cx: &mut Cx) {
        // Built in place in the output buffer rather than on the stack and copied (88 bytes).
        cx.out.push(Packet {
            flow: self.flow,
            dst: self.peer,
            kind: Kind::TcpAck,
            ack: self.rcv_nxt,
            ts: cx.now,
            ts_echo: self.ts_recent,
            window: self.cfg.rwnd as u32,
            flags: self.ecn_flags() | (if self.nc { FLAG_NC_ECHO } else { 0 }),
            ..Packet::default()
        });
        let pkt = cx.out.last_mut().expect("just pushed");
        if self.cfg.sack && !self.ooo.is_empty() {
            let mut n = 0;
            // The ranges are sorted by start: a binary search, not a scan of every hole.
            let recent =
                self.recent_block.and_then(|s| self.ooo.binary_search_by_key(&s, |r| r.0).ok().map(|i| self.ooo[i]));
            let rest = self.ooo.iter().rev().filter(|r| Some(**r) != recent).copied();
            for (s, e) in recent.into_iter().chain(rest).take(MAX_SACK_BLOCKS) {
                pkt.sack[n] = SackBlock { start: (s - self.rcv_nxt) as u32, end: (e - self.rcv_nxt) as u32 };
                n += 1;
            }
            pkt.sack_len = n as u8;
        }
        // SACK option: 2 bytes kind/length + 8 per block, padded to 4 (RFC 2018 §3).
        let sack_bytes = if pkt.sack_len > 0 { (2 + 8 * pkt.sack_len as u32).next_multiple_of(4) } else { 0 };
        pkt.size = self.cfg.header + sack_bytes;
        self.unacked_segments = 0;
        self.ce_unacked = 0;
        self.delack_deadline = None;
    }

    /// A SYN, ACK or FIN of the sender's (module header).
    #[cold]
    #[inline(never)]
    fn on_connection_segment(&mut self, pkt: &Packet, cx: &mut Cx) {
        let Some(state) = self.conn else { return };
        match Control::of(pkt) {
            // A SYN before any data: answer it, again if it comes again (our SYN-ACK was lost,
            // or the sender's timer expired before it arrived). Once data has arrived a SYN is
            // an old duplicate and is ignored (RFC 5961's challenge ACK is not modelled).
            Some(Control::Syn) => {
                if matches!(state, Passive::Listen | Passive::SynReceived) && self.rcv_nxt == 0 && self.ooo.is_empty() {
                    self.conn = Some(Passive::SynReceived);
                    self.ts_recent = pkt.ts;
                    self.send_syn_ack(pkt, cx);
                }
            }
            // The FIN, once every byte before it has arrived: the application reads the end
            // of the stream and closes, so our FIN acknowledges the sender's.
            Some(Control::Fin) => {
                let first = pkt.seq == self.rcv_nxt && !matches!(state, Passive::LastAck | Passive::Closed);
                let again = pkt.seq + 1 == self.rcv_nxt && matches!(state, Passive::LastAck | Passive::Closed);
                if first {
                    self.rcv_nxt += 1;
                    self.conn = Some(Passive::LastAck);
                }
                if first || again {
                    self.ts_recent = pkt.ts;
                    self.send_ack(cx);
                    cx.out.last_mut().expect("just pushed").flags |= FLAG_SYN_FIN;
                }
            }
            // A pure ACK: the handshake's third segment, or the ACK of our FIN.
            None => match state {
                Passive::SynReceived => self.conn = Some(Passive::Established),
                Passive::LastAck if pkt.seq == self.rcv_nxt => self.conn = Some(Passive::Closed),
                _ => {}
            },
        }
    }

    /// Answer the SYN `syn` with a SYN-ACK: the options both ends offered, and the ECN setup
    /// if both ask for ECN (RFC 3168 §6.1.1: ECE; RFC 9768 §3.1.1 and Table 2: for a SYN
    /// asking for Accurate ECN, the ACE codepoint of the SYN's IP ECN field).
    fn send_syn_ack(&mut self, syn: &Packet, cx: &mut Cx) {
        let answer = SynOptions { mss: self.cfg.mss, ..SynOptions::offered(&self.cfg).agreed(SynOptions::read(syn)) };
        self.cfg.sack = answer.sack;
        let asked = syn.flags & (FLAG_AE | FLAG_CWR | FLAG_ECE);
        let ecn = if !self.cfg.ecn || asked & (FLAG_CWR | FLAG_ECE) != FLAG_CWR | FLAG_ECE {
            0
        } else if asked & FLAG_AE != 0 && self.cfg.ecn_feedback == EcnFeedback::Accurate {
            match syn.ecn {
                Ecn::NotEct => FLAG_CWR,
                Ecn::Ect1 => FLAG_CWR | FLAG_ECE,
                Ecn::Ect0 => FLAG_AE,
                Ecn::Ce => FLAG_AE | FLAG_CWR,
            }
        } else {
            // Classic ECN, also for a receiver configured for Accurate ECN that was not asked
            // for it (RFC 9768 §3.1.2).
            if self.cfg.ecn_feedback == EcnFeedback::Accurate {
                self.cfg.ecn_feedback = EcnFeedback::Classic;
            }
            FLAG_ECE
        };
        self.send_ack(cx);
        let pkt = cx.out.last_mut().expect("just pushed");
        pkt.flags = FLAG_SYN_FIN | ecn;
        pkt.size = self.cfg.header + SYN_EXTRA_HEADER;
        answer.write(pkt);
    }

    /// The ECN flags of an ACK: ECE (RFC 3168, RFC 8257), or the ACE counter (RFC 9768).
    fn ecn_flags(&self) -> u8 {
        if self.cfg.ecn_feedback != EcnFeedback::Accurate {
            return if self.ece { FLAG_ECE } else { 0 };
        }
        let ace = self.r_cep & 7;
        (if ace & 1 != 0 { FLAG_ECE } else { 0 })
            | (if ace & 2 != 0 { FLAG_CWR } else { 0 })
            | (if ace & 4 != 0 { FLAG_AE } else { 0 })
    }
}

impl Endpoint for TcpReceiver {
    fn on_packet(&mut self, pkt: &Packet, cx: &mut Cx) {
        if pkt.kind != Kind::TcpData {
            return;
        }
        let ce = pkt.ecn == Ecn::Ce;
        let mut ack_now = false;
        match self.cfg.ecn_feedback {
            EcnFeedback::Classic => {
                if pkt.flags & FLAG_CWR != 0 {
                    self.ece = false;
                }
                if ce {
                    self.ece = true;
                }
            }
            EcnFeedback::Dctcp => {
                if ce != self.ece {
                    if self.unacked_segments > 0 {
                        self.send_ack(cx);
                    }
                    self.ece = ce;
                }
            }
            EcnFeedback::Accurate => {
                // `ece` holds whether the previous packet was CE (change-triggered ACKs).
                if ce {
                    self.r_cep = self.r_cep.wrapping_add(1);
                    self.ce_unacked += 1;
                    ack_now = !self.ece || self.ce_unacked >= 2;
                }
                self.ece = ce;
            }
        }
        self.nc = pkt.flags & FLAG_NC != 0;
        let (start, end) = (pkt.seq, pkt.seq + pkt.payload as u64);
        if end <= self.rcv_nxt {
            if pkt.payload == 0 {
                // The sender's SYN, ACK or FIN (`handshake`): header-only, never data.
                self.on_connection_segment(pkt, cx);
                return;
            }
            // Old duplicate: acknowledge at once so the sender learns where we are.
            self.send_ack(cx);
            return;
        }
        if start > self.rcv_nxt {
            let new = self.insert_ooo(start, end);
            cx.stats.delivered(cx.now, 0, new);
            self.send_ack(cx);
            return;
        }
        // In order (possibly overlapping what we have).
        if self.unacked_segments == 0 {
            self.ts_recent = pkt.ts;
        }
        let had_gap = !self.ooo.is_empty();
        let before = self.rcv_nxt;
        self.rcv_nxt = end;
        // Held ranges are above `before`: what they cover arrived earlier.
        let mut held = 0;
        while let Some(&(s, e)) = self.ooo.first() {
            if s > self.rcv_nxt {
                break;
            }
            self.rcv_nxt = self.rcv_nxt.max(e);
            held += e - s;
            self.ooo.remove(0);
        }
        self.delivery.deliver(cx.now, self.flow, before, self.rcv_nxt);
        cx.stats.delivered(cx.now, self.rcv_nxt - before, self.rcv_nxt - before - held);
        cx.messages.deliver_stream(cx.now, self.rcv_nxt);
        self.unacked_segments += 1;
        if had_gap || ack_now || self.unacked_segments >= self.cfg.delack_count || self.cfg.delack_timeout == 0 {
            self.send_ack(cx);
        } else if self.delack_deadline.is_none() {
            self.delack_deadline = Some(cx.now + self.cfg.delack_timeout);
        }
    }

    fn on_wakeup(&mut self, cx: &mut Cx) {
        if self.delack_deadline.is_some_and(|t| t <= cx.now) {
            self.send_ack(cx);
        }
    }

    fn next_wakeup(&self) -> Option<Time> {
        self.delack_deadline
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::MessageLedger;
    use crate::sim::time::MS;
    use crate::stats::FlowStats;

    fn receiver(delack_count: i64) -> TcpReceiver {
        let mut cfg = TcpConfig::default_config();
        cfg.delack_count = delack_count as u32;
        cfg.header = 40;
        TcpReceiver::new(0, 9, cfg)
    }

    fn data(seq_seg: u64, ts: Time) -> Packet {
        Packet { kind: Kind::TcpData, seq: seq_seg * 1000, payload: 1000, size: 1040, ts, ..Packet::default() }
    }

    fn feed(r: &mut TcpReceiver, p: Packet, now: Time, stats: &mut FlowStats) -> Vec<Packet> {
        let mut out = vec![];
        r.on_packet(&p, &mut Cx { now, out: &mut out, stats, messages: &mut MessageLedger::default() });
        out
    }

    #[test]
    fn acks_every_second_segment_or_on_the_timer() {
        let mut r = receiver(2);
        let mut st = FlowStats::default();
        assert!(feed(&mut r, data(0, 5), 10, &mut st).is_empty());
        assert_eq!(r.next_wakeup(), Some(10 + 200 * MS));
        let acks = feed(&mut r, data(1, 6), 11, &mut st);
        assert_eq!(acks.len(), 1);
        assert_eq!(acks[0].ack, 2000);
        // Echo the earlier segment's timestamp (RFC 7323 §4.3).
        assert_eq!(acks[0].ts_echo, 5);
        assert_eq!(acks[0].size, 40);
        // A lone segment is acknowledged by the timer.
        assert!(feed(&mut r, data(2, 7), 20, &mut st).is_empty());
        let mut out = vec![];
        r.on_wakeup(&mut Cx {
            now: 20 + 200 * MS,
            out: &mut out,
            stats: &mut st,
            messages: &mut MessageLedger::default(),
        });
        assert_eq!(out[0].ack, 3000);
        assert_eq!(st.bytes_delivered, 3000);
    }

    #[test]
    fn out_of_order_data_gets_immediate_dupacks_with_sack_blocks() {
        let mut r = receiver(2);
        let mut st = FlowStats::default();
        feed(&mut r, data(0, 1), 1, &mut st);
        feed(&mut r, data(1, 1), 1, &mut st);
        // Segment 2 lost; 3, 4 and 6 arrive.
        let a = feed(&mut r, data(3, 1), 2, &mut st);
        assert_eq!((a[0].ack, a[0].sack_len), (2000, 1));
        assert_eq!(a[0].sack[0], SackBlock { start: 1000, end: 2000 });
        feed(&mut r, data(4, 1), 3, &mut st);
        let a = feed(&mut r, data(6, 1), 4, &mut st);
        // Most recent block (6) first, then the others from the highest down.
        assert_eq!(a[0].sack_len, 2);
        assert_eq!(a[0].sack[0], SackBlock { start: 4000, end: 5000 });
        assert_eq!(a[0].sack[1], SackBlock { start: 1000, end: 3000 });
        assert_eq!(a[0].size, 40 + 20);
        // The retransmission of 2 fills the gap up to 5: immediate ACK, 6 still SACKed.
        let a = feed(&mut r, data(2, 9), 5, &mut st);
        assert_eq!((a[0].ack, a[0].sack_len, a[0].ts_echo), (5000, 1, 9));
        assert_eq!(st.bytes_delivered, 5000);
    }

    #[test]
    fn echoes_congestion_until_cwr() {
        let mut r = receiver(1);
        let mut st = FlowStats::default();
        let mut p = data(0, 1);
        p.ecn = Ecn::Ce;
        assert_eq!(feed(&mut r, p, 1, &mut st)[0].flags & FLAG_ECE, FLAG_ECE);
        assert_eq!(feed(&mut r, data(1, 1), 2, &mut st)[0].flags & FLAG_ECE, FLAG_ECE);
        let mut p = data(2, 1);
        p.flags = FLAG_CWR;
        assert_eq!(feed(&mut r, p, 3, &mut st)[0].flags & FLAG_ECE, 0);
    }

    #[test]
    fn echoes_the_non_congestion_flag_of_the_segment_that_triggered_the_ack() {
        let mut r = receiver(2);
        let mut st = FlowStats::default();
        let nc = |seg| Packet { flags: FLAG_NC, ..data(seg, 1) };
        // Delayed ACK of segments 0 (flagged) and 1 (not): the trigger, 1, decides.
        assert!(feed(&mut r, nc(0), 1, &mut st).is_empty());
        assert_eq!(feed(&mut r, data(1, 1), 2, &mut st)[0].flags & FLAG_NC_ECHO, 0);
        // 2 (not) then 3 (flagged): echoed.
        assert!(feed(&mut r, data(2, 1), 3, &mut st).is_empty());
        assert_eq!(feed(&mut r, nc(3), 4, &mut st)[0].flags & FLAG_NC_ECHO, FLAG_NC_ECHO);
        // An out-of-order flagged segment triggers an immediate, echoing dupACK.
        assert_eq!(feed(&mut r, nc(5), 5, &mut st)[0].flags & FLAG_NC_ECHO, FLAG_NC_ECHO);
        // A timer-driven ACK echoes the latest segment (flagged 4, filling the gap: immediate).
        let a = feed(&mut r, nc(4), 6, &mut st);
        assert_eq!((a[0].ack, a[0].flags & FLAG_NC_ECHO), (6000, FLAG_NC_ECHO));
        assert!(feed(&mut r, data(6, 1), 7, &mut st).is_empty());
        let mut out = vec![];
        r.on_wakeup(&mut Cx {
            now: 7 + 200 * MS,
            out: &mut out,
            stats: &mut st,
            messages: &mut MessageLedger::default(),
        });
        assert_eq!(out[0].flags & FLAG_NC_ECHO, 0);
        // The echo is independent of ECE: a CE-marked flagged segment gets both.
        let p = Packet { ecn: Ecn::Ce, ..nc(7) };
        feed(&mut r, p, 8 + 200 * MS, &mut st);
        let a = feed(&mut r, nc(8), 9 + 200 * MS, &mut st);
        assert_eq!(a[0].flags & (FLAG_NC_ECHO | FLAG_ECE), FLAG_NC_ECHO | FLAG_ECE);
    }

    /// The ACE counter of an AccECN ACK (RFC 9768 §3.2.2: AE, CWR, ECE from high to low).
    fn ace(a: &Packet) -> u8 {
        (a.flags & FLAG_AE != 0) as u8 * 4 + (a.flags & FLAG_CWR != 0) as u8 * 2 + (a.flags & FLAG_ECE != 0) as u8
    }

    #[test]
    fn accecn_counts_ce_packets_modulo_eight_from_five_and_acks_on_change_and_increment() {
        let mut r = receiver(2);
        r.cfg.ecn_feedback = EcnFeedback::Accurate;
        let mut st = FlowStats::default();
        // Unmarked pair: a delayed ACK with ACE = 5, the initial r.cep (RFC 9768 §3.2.2.1).
        assert!(feed(&mut r, data(0, 1), 1, &mut st).is_empty());
        let a = feed(&mut r, data(1, 1), 2, &mut st);
        assert_eq!((a.len(), a[0].ack, ace(&a[0])), (1, 2000, 5));
        // A CE mark after an unmarked packet: an ACK at once (change-triggered), ACE 6.
        let a = feed(&mut r, ce(2), 3, &mut st);
        assert_eq!((a.len(), a[0].ack, ace(&a[0])), (1, 3000, 6));
        // Further marks: the first waits for its pair, the second completes it (two marks).
        assert!(feed(&mut r, ce(3), 4, &mut st).is_empty());
        let a = feed(&mut r, ce(4), 5, &mut st);
        assert_eq!((a.len(), a[0].ack, ace(&a[0])), (1, 5000, 0));
        // With delayed ACKs every 10 segments, two marks still force an ACK (increment-
        // triggered, n = 2): the 3-bit counter never moves by more than 2 between ACKs.
        r.cfg.delack_count = 10;
        assert!(feed(&mut r, ce(5), 6, &mut st).is_empty());
        let a = feed(&mut r, ce(6), 7, &mut st);
        assert_eq!((a.len(), a[0].ack, ace(&a[0])), (1, 7000, 2));
        assert!(feed(&mut r, data(7, 1), 8, &mut st).is_empty());
        // Eight more marks, one ACK per two: the counter wraps and each ACK moves it by 2.
        let mut seen = vec![];
        for seg in 8..16 {
            seen.extend(feed(&mut r, ce(seg), 9 + seg, &mut st).iter().map(ace));
        }
        assert_eq!(seen, vec![3, 5, 7, 1]);
    }

    /// A receiver with a handshake, ECN-capable or not, with this ECN feedback.
    fn listening(ecn: bool, feedback: EcnFeedback) -> TcpReceiver {
        let mut r = receiver(2);
        (r.cfg.ecn, r.cfg.ecn_feedback) = (ecn, feedback);
        TcpReceiver::new(0, 9, TcpConfig { handshake: true, ..r.cfg })
    }

    fn syn(flags: u8) -> Packet {
        let mut p = Packet { kind: Kind::TcpData, size: 48, ts: 7, flags: FLAG_SYN_FIN | flags, ..Packet::default() };
        SynOptions { mss: 1000, sack: true, wscale: 7, timestamps: true }.write(&mut p);
        p
    }

    #[test]
    fn a_syn_gets_a_syn_ack_with_the_ecn_setup_both_ends_agree_to() {
        // RFC 3168 §6.1.1: a host that received an ECN-setup SYN (ECE and CWR) MAY answer with
        // an ECN-setup SYN-ACK (ECE, not CWR); otherwise it MUST NOT. SYN-ACKs are Not-ECT.
        let answer = |r: &mut TcpReceiver, flags: u8| {
            let out = feed(r, syn(flags), 10, &mut FlowStats::default());
            assert_eq!(out.len(), 1);
            let a = out[0];
            assert_eq!((a.kind, a.ack, a.ts_echo, a.ecn), (Kind::TcpAck, 0, 7, Ecn::NotEct));
            assert_eq!((Control::of(&a), a.size), (Some(Control::Syn), 48), "a SYN-ACK with its options");
            a.flags & (FLAG_AE | FLAG_CWR | FLAG_ECE)
        };
        let ecn_setup = FLAG_ECE | FLAG_CWR;
        assert_eq!(answer(&mut listening(true, EcnFeedback::Classic), ecn_setup), FLAG_ECE);
        assert_eq!(answer(&mut listening(true, EcnFeedback::Classic), 0), 0);
        assert_eq!(answer(&mut listening(false, EcnFeedback::Classic), ecn_setup), 0);
        assert_eq!(answer(&mut listening(true, EcnFeedback::Dctcp), ecn_setup), FLAG_ECE);
        // RFC 9768 §3.1.1 and Table 2: an AccECN SYN (AE, CWR, ECE) that arrived Not-ECT is
        // answered with ACE = 0b010; a classic ECN-setup SYN to an AccECN receiver gets ECE.
        let accecn = FLAG_AE | FLAG_CWR | FLAG_ECE;
        assert_eq!(answer(&mut listening(true, EcnFeedback::Accurate), accecn), FLAG_CWR);
        let mut r = listening(true, EcnFeedback::Accurate);
        assert_eq!(answer(&mut r, ecn_setup), FLAG_ECE);
        assert_eq!(r.cfg.ecn_feedback, EcnFeedback::Classic, "fell back to classic ECN feedback");
        // The SYN-ACK carries its own MSS and the other options both ends offered.
        let mut r = listening(false, EcnFeedback::Classic);
        r.cfg.sack = false;
        let a = feed(&mut r, syn(0), 10, &mut FlowStats::default())[0];
        assert_eq!(SynOptions::read(&a), SynOptions { mss: 1448, sack: false, wscale: 7, timestamps: true });
    }

    #[test]
    fn a_syn_is_answered_again_until_data_arrives_and_a_fin_once_the_data_is_in() {
        let mut r = listening(false, EcnFeedback::Classic);
        let mut st = FlowStats::default();
        assert_eq!(r.passive(), Some(Passive::Listen));
        feed(&mut r, syn(0), 10, &mut st);
        assert_eq!(feed(&mut r, syn(0), 20, &mut st).len(), 1, "the SYN again: the SYN-ACK again");
        assert_eq!(r.passive(), Some(Passive::SynReceived));
        // Data arrives (the handshake's ACK was lost): accepted.
        feed(&mut r, data(0, 30), 30, &mut st);
        feed(&mut r, data(1, 31), 31, &mut st);
        assert!(feed(&mut r, syn(0), 40, &mut st).is_empty(), "a SYN after data is an old duplicate");
        // The FIN after the last byte: the receiver's FIN acknowledges it (RCV.NXT + 1).
        let fin = Packet { kind: Kind::TcpData, seq: 2000, size: 40, ts: 50, flags: FLAG_SYN_FIN, ..Packet::default() };
        let a = feed(&mut r, fin, 50, &mut st);
        assert_eq!((a.len(), a[0].ack, a[0].ts_echo, Control::of(&a[0])), (1, 2001, 50, Some(Control::Fin)));
        assert_eq!(r.passive(), Some(Passive::LastAck));
        // The FIN again (our FIN-ACK was lost): answered again.
        assert_eq!(feed(&mut r, fin, 60, &mut st)[0].ack, 2001);
        // The last ACK closes.
        let ack = Packet { kind: Kind::TcpData, seq: 2001, size: 40, ..Packet::default() };
        assert!(feed(&mut r, ack, 70, &mut st).is_empty());
        assert_eq!(r.passive(), Some(Passive::Closed));
        assert_eq!(st.bytes_delivered, 2000, "the FIN delivers nothing");
    }

    fn dctcp_receiver(delack_count: i64) -> TcpReceiver {
        let mut r = receiver(delack_count);
        r.cfg.ecn_feedback = EcnFeedback::Dctcp;
        r
    }

    fn ce(seg: u64) -> Packet {
        Packet { ecn: Ecn::Ce, ..data(seg, 1) }
    }

    #[test]
    fn dctcp_acks_immediately_when_the_ce_state_changes() {
        // RFC 8257 §3.2 with delayed ACKs every 2 segments. Marks: 0 no, 1 yes, 2 yes, 3 yes,
        // 4 no, 5 no, 6 yes, 7 yes.
        let mut r = dctcp_receiver(2);
        let mut st = FlowStats::default();
        let ece = |a: &Packet| a.flags & FLAG_ECE != 0;
        assert!(feed(&mut r, data(0, 1), 1, &mut st).is_empty());
        // 1 is CE, 0 is pending: ACK 0 alone at once, unmarked; 1 waits.
        let a = feed(&mut r, ce(1), 2, &mut st);
        assert_eq!(a.len(), 1);
        assert_eq!((a[0].ack, ece(&a[0])), (1000, false));
        // 2 (CE) completes the pair 1-2: a normal delayed ACK, marked.
        let a = feed(&mut r, ce(2), 3, &mut st);
        assert_eq!((a.len(), a[0].ack, ece(&a[0])), (1, 3000, true));
        assert!(feed(&mut r, ce(3), 4, &mut st).is_empty());
        // 4 unmarked while 3 (CE) is pending: ACK 3 marked at once; 4 waits.
        let a = feed(&mut r, data(4, 1), 5, &mut st);
        assert_eq!((a.len(), a[0].ack, ece(&a[0])), (1, 4000, true));
        let a = feed(&mut r, data(5, 1), 6, &mut st);
        assert_eq!((a.len(), a[0].ack, ece(&a[0])), (1, 6000, false));
        // 6 (CE) with nothing pending: no extra ACK, the state just flips.
        assert!(feed(&mut r, ce(6), 7, &mut st).is_empty());
        let a = feed(&mut r, ce(7), 8, &mut st);
        assert_eq!((a.len(), a[0].ack, ece(&a[0])), (1, 8000, true));
        // CWR does not clear the state (only classic ECN uses it): 8 is CE with CWR.
        let p = Packet { flags: FLAG_CWR, ..ce(8) };
        assert!(feed(&mut r, p, 9, &mut st).is_empty());
        let mut out = vec![];
        r.on_wakeup(&mut Cx {
            now: 9 + 200 * MS,
            out: &mut out,
            stats: &mut st,
            messages: &mut MessageLedger::default(),
        });
        assert_eq!((out[0].ack, ece(&out[0])), (9000, true));
    }

    #[test]
    fn dctcp_ece_covers_exactly_the_marked_segments() {
        // Any mark pattern, delayed ACKs every 3: the segments an ACK newly covers all have
        // the mark its ECE says, and every segment is covered.
        let mut r = dctcp_receiver(3);
        let mut st = FlowStats::default();
        // Irregular marks, a run of marks, then none from 40 on.
        let marked = |k: u64| k < 40 && ((k * 7 + k / 5).is_multiple_of(3) || (20..27).contains(&k));
        let mut acked = 0;
        for k in 0..60u64 {
            let p = if marked(k) { ce(k) } else { data(k, 1) };
            for a in feed(&mut r, p, k + 1, &mut st) {
                assert!(a.ack > acked, "cumulative ACK moves forward");
                let ece = a.flags & FLAG_ECE != 0;
                for seg in acked / 1000..a.ack / 1000 {
                    assert_eq!(marked(seg), ece, "segment {seg} in ACK {}", a.ack);
                }
                acked = a.ack;
            }
        }
        assert!(acked >= 57_000, "at most delack_count - 1 segments pending: {acked}");
        // The classic receiver, by contrast, keeps echoing after the marks stop (no CWR).
        let mut c = receiver(3);
        let mut echoed_unmarked = false;
        let mut prev = 0;
        for k in 0..60u64 {
            let p = if marked(k) { ce(k) } else { data(k, 1) };
            for a in feed(&mut c, p, k + 1, &mut st) {
                let all_clean = (prev / 1000..a.ack / 1000).all(|s| !marked(s));
                echoed_unmarked |= all_clean && a.flags & FLAG_ECE != 0;
                prev = a.ack;
            }
        }
        assert!(echoed_unmarked);
    }
    #[test]
    fn reordered_duplicated_and_overlapping_segments_deliver_each_byte_once() {
        // 40 segments of 1000 B arrive in a scrambled order, each twice, plus segments
        // straddling segment boundaries; the delivery check (debug builds) verifies each
        // delivery starts where the last ended; the total must be the whole stream.
        let mut r = receiver(2);
        let mut st = FlowStats::default();
        let mut order: Vec<u64> = (0..40).flat_map(|k| [k, k]).collect();
        let mut rng = crate::sim::rng::Rng::stream(3, crate::sim::rng::Stream::Flow(0));
        for i in (1..order.len()).rev() {
            order.swap(i, rng.range_u64(0, i as u64 + 1) as usize);
        }
        for (t, &k) in order.iter().enumerate() {
            feed(&mut r, data(k, 1), t as Time, &mut st);
            // A segment shifted by half a segment overlaps what may already be there.
            let mut straddle = data(k, 1);
            straddle.seq += 500;
            if k < 39 {
                feed(&mut r, straddle, t as Time, &mut st);
            }
        }
        assert_eq!(r.rcv_nxt(), 40_000);
        assert_eq!(st.bytes_delivered, 40_000);
        // Each byte was first received once, whatever the order and the copies.
        assert_eq!(st.bytes_received, 40_000);
    }

    #[test]
    fn goodput_counts_data_when_it_first_arrives_not_when_a_gap_releases_it() {
        // Measured from t = 100. Segment 0 is lost; 1..9 arrive before the window and are
        // held out of order; inside it the retransmitted 0 releases all ten, then 10 and 11
        // arrive. In order, the receiving application gets 12 000 B inside the window; only
        // 3 000 B of them crossed the path inside it.
        let mut r = receiver(1);
        let mut st = FlowStats::new(100);
        for k in 1..10 {
            feed(&mut r, data(k, 1), 50, &mut st);
        }
        // A duplicate of held data inside the window adds nothing.
        feed(&mut r, data(5, 1), 120, &mut st);
        feed(&mut r, data(0, 1), 150, &mut st);
        // A segment overlapping the delivered edge by half adds its new half only.
        let mut half = data(10, 1);
        half.seq -= 500;
        feed(&mut r, half, 160, &mut st);
        feed(&mut r, data(10, 1), 170, &mut st);
        feed(&mut r, data(11, 1), 180, &mut st);
        assert_eq!(st.bytes_delivered, 12_000);
        assert_eq!(st.bytes_received, 3_000);
    }
}
