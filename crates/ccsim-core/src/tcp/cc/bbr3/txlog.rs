//! What BBR v3 remembers of its own transmissions: the per-packet fields Linux v3 adds to
//! `tcp_rate.c` (`tx.in_flight`, `tx.lost`, `tx.delivered_ce`, giving `rs->tx_in_flight`,
//! `rs->lost` and `rs->delivered_ce`) and the sender's "cwnd-limited" flag (`tp->is_cwnd_limited`,
//! `tcp_cwnd_validate`), none of which the sender's [`RateSample`] carries.
//!
//! Every transmission is recorded in [`TxLog::on_sent`], keyed by `C.delivered` when it left:
//! the key the sender's sample names its packet by (`rs.prior_delivered`, draft
//! `P.delivered`). Transmissions that leave with the same `C.delivered` (a burst between two
//! ACKs) share one record, the latest's, so a sample from an earlier packet of the burst reads
//! the in-flight of the burst's last one; with pacing, bursts are one or two packets.
//!
//! The hook sees the connection state as it was after the sender's last update, which does not
//! change between the segments of one burst; the segments sent since that update are counted
//! here so that each record's in-flight includes those sent before it and itself (Linux
//! `tcp_packets_in_flight + tcp_skb_pcount` at transmission).

use std::collections::VecDeque;

use crate::sim::time::Time;
use crate::tcp::cc::{CcState, RateSample};

/// One transmission (or the latest of a burst), in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Snap {
    /// `C.delivered` when it left (`P.delivered`).
    delivered: u64,
    /// Bytes in flight once it had left, itself included (`tx.in_flight`).
    in_flight: u64,
    /// `C.lost` when it left (`tx.lost`).
    lost: u64,
    /// CE-marked bytes delivered when it left (`tx.delivered_ce`).
    delivered_ce: u64,
}

/// The fields of Linux v3's rate sample that the sender's sample lacks, in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TxSample {
    /// In flight when the sample's packet left, itself included (`rs->tx_in_flight`).
    pub tx_in_flight: u64,
    /// Bytes marked lost between its transmission and this ACK (`rs->lost`).
    pub lost: u64,
    /// CE-marked bytes delivered over the same interval (`rs->delivered_ce`).
    pub delivered_ce: u64,
}

/// The connection state a burst of transmissions was sent from: time, SND.NXT, in flight,
/// delivered and lost as the hook saw them.
type BurstKey = (Time, u64, u64, u64, u64);

/// The transmissions still outstanding that a sample may name, oldest first.
#[derive(Clone, Debug, Default)]
pub struct TxLog {
    snaps: VecDeque<Snap>,
    /// The state the current burst was sent from, and the bytes sent in it so far.
    burst: Option<BurstKey>,
    burst_bytes: u64,
    /// Sequence number past the last transmission that filled the window: the flow counts as
    /// cwnd-limited until it is acknowledged.
    cwnd_limited_until: u64,
}

impl TxLog {
    /// A transmission of `bytes` left; `delivered_ce` is the flow's count of CE-marked bytes
    /// delivered so far.
    pub fn on_sent(&mut self, st: &CcState, bytes: u64, delivered_ce: u64) {
        let key = (st.now, st.snd_nxt, st.bytes_in_flight, st.delivered, st.lost);
        if self.burst != Some(key) {
            self.burst = Some(key);
            self.burst_bytes = 0;
        }
        self.burst_bytes += bytes;
        let in_flight = st.bytes_in_flight + self.burst_bytes;
        let snap = Snap { delivered: st.delivered, in_flight, lost: st.lost, delivered_ce };
        match self.snaps.back_mut() {
            Some(last) if last.delivered == st.delivered => *last = snap,
            _ => self.snaps.push_back(snap),
        }
        // Linux `tcp_cwnd_validate`: the window stopped the sender (not another full segment
        // fits), so the flow is cwnd-limited until this data is acknowledged.
        if in_flight + st.mss as u64 > st.cwnd {
            self.cwnd_limited_until = self.cwnd_limited_until.max(st.snd_nxt + self.burst_bytes);
        }
    }

    /// Linux `tp->is_cwnd_limited`: data sent while the window was full is outstanding.
    pub fn is_cwnd_limited(&self, st: &CcState) -> bool {
        st.snd_una < self.cwnd_limited_until
    }

    /// The sample's missing fields: from the record of the transmission the sample names
    /// (the latest one that left with `C.delivered <= rs.prior_delivered`), `C.lost` and the
    /// CE count now. Nothing when the ACK delivered nothing.
    pub fn sample(&self, rs: &RateSample, st: &CcState, delivered_ce: u64) -> TxSample {
        if rs.delivered == 0 {
            return TxSample::default();
        }
        let Some(snap) = self.lookup(rs.prior_delivered) else { return TxSample::default() };
        TxSample {
            tx_in_flight: snap.in_flight,
            lost: st.lost.saturating_sub(snap.lost),
            delivered_ce: delivered_ce.saturating_sub(snap.delivered_ce),
        }
    }

    /// Records older than the one `prior_delivered` names are dropped: samples come from the
    /// most recently sent packet an ACK delivers, whose key hardly ever goes back (if it does,
    /// the oldest record kept stands in).
    pub fn prune(&mut self, prior_delivered: u64) {
        while self.snaps.len() > 1 && self.snaps[1].delivered <= prior_delivered {
            self.snaps.pop_front();
        }
    }

    fn lookup(&self, prior_delivered: u64) -> Option<&Snap> {
        let i = self.snaps.partition_point(|s| s.delivered <= prior_delivered);
        self.snaps.get(i.saturating_sub(1))
    }

    /// Records kept (for tests).
    #[cfg(test)]
    pub fn records(&self) -> usize {
        self.snaps.len()
    }
}
