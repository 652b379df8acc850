//! E-DCTCP explicit loss notifications (`cc/edctcp.rs`): a router returns a segment instead
//! of forwarding it; the sender marks it lost at once, holds its retransmission for the
//! algorithm's backoff and reduces the window once per window.

use super::{Recovery, TcpSender};
use crate::endpoint::Cx;
use crate::packet::Packet;
use crate::sim::time::Time;

/// E-DCTCP state of an outstanding segment that a router returned at least once.
#[derive(Clone, Copy, Debug)]
pub(super) struct Notice {
    /// The segment `[seq, end)`.
    pub(super) seq: u64,
    pub(super) end: u64,
    /// Explicit loss notifications received for it.
    bounces: u8,
    /// Not to be retransmitted before this time (the algorithm's backoff); 0 if not held.
    pub(super) hold_until: Time,
}

impl TcpSender {
    /// E-DCTCP: until when segment `seq` is held back from retransmission (0: not held).
    pub(super) fn hold_until(&self, seq: u64) -> Time {
        if self.notices.is_empty() {
            return 0;
        }
        self.notice_hold(seq)
    }

    /// [`TcpSender::hold_until`] with notices pending (E-DCTCP only): out of line.
    #[inline(never)]
    fn notice_hold(&self, seq: u64) -> Time {
        self.notices.binary_search_by_key(&seq, |n| n.seq).map_or(0, |k| self.notices[k].hold_until)
    }

    /// E-DCTCP: a router returned segment `pkt.seq`, sent at `pkt.ts`, instead of forwarding
    /// it. The loss is certain and immediate: mark it lost (its copy is out of the network),
    /// hold its retransmission for the algorithm's backoff, and reduce the window as a fast
    /// retransmit would, once per window (RFC 6582 §4's rule; a returned retransmission sent
    /// after the last reduction reduces again, RFC 5681 §4.3).
    pub(super) fn on_loss_notice(&mut self, pkt: &Packet, cx: &mut Cx) {
        cx.stats.count(cx.now, |s| &mut s.loss_notices);
        let Some(i) = self.sb.index_of(pkt.seq) else { return }; // acknowledged meanwhile
        let seg = self.sb[i];
        if seg.sacked || seg.xmit_time > pkt.ts {
            return; // delivered, or the notice is about an older copy
        }
        let was_retrans = self.sb.clear_retrans(i);
        let (xmit_time, end) = (seg.xmit_time, seg.end());
        let k = match self.notices.binary_search_by_key(&pkt.seq, |n| n.seq) {
            Ok(k) => k,
            Err(k) => {
                self.notices.insert(k, Notice { seq: pkt.seq, end, bounces: 0, hold_until: 0 });
                k
            }
        };
        let n = &mut self.notices[k];
        n.bounces = n.bounces.saturating_add(1);
        let bounces = n.bounces;
        self.sb.mark_lost(i);
        self.sync_state(cx.now);
        let hold = self.cc.on_loss_notice(&self.st, bounces as u32, &mut self.rng);
        self.retx_hint = self.retx_hint.min(pkt.seq);
        self.notice_frontier = self.notice_frontier.max(end);
        match self.recovery {
            Recovery::Open if self.snd_una >= self.recover && self.snd_una < self.snd_nxt => {
                self.start_fast_recovery(cx);
                if !self.owns_window() {
                    self.st.cwnd = self.st.ssthresh.max(self.cfg.mss as u64);
                }
            }
            Recovery::Fast if was_retrans && xmit_time >= self.reduced_at => {
                self.reduce_on_lost_retransmission(cx);
            }
            _ => {}
        }
        if hold > 0 {
            let until = cx.now.saturating_add(hold);
            self.notices[k].hold_until = until;
            self.hold_expiry = Some(self.hold_expiry.map_or(until, |t| t.min(until)));
        }
        // The notice is feedback as an ACK is (RFC 6298 §5.3): the path is alive and the loss
        // is being repaired, so the timer restarts rather than firing during the backoff.
        self.rto_deadline = Some(cx.now + self.rtt.rto());
        self.sync_state(cx.now);
        self.try_send(cx);
    }

    /// Returned segments whose backoff has passed become eligible for retransmission.
    pub(super) fn release_holds(&mut self, now: Time) {
        self.hold_expiry = None;
        for s in self.notices.iter_mut() {
            if s.hold_until == 0 {
                continue;
            }
            if s.hold_until <= now {
                s.hold_until = 0;
                self.retx_hint = self.retx_hint.min(s.seq);
            } else {
                let until = s.hold_until;
                self.hold_expiry = Some(self.hold_expiry.map_or(until, |t| t.min(until)));
            }
        }
    }
}
