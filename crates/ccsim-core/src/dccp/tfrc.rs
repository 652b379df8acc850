//! TFRC building blocks (RFC 5348): the TCP throughput equation and the receiver's loss
//! interval history.
//!
//! - §3.1, the throughput equation, in bytes per second:
//!   `X_Bps = s / (R sqrt(2 b p / 3) + t_RTO (3 sqrt(3 b p / 8)) p (1 + 32 p^2))`, with the
//!   recommended `b = 1` and `t_RTO = 4 R` ([`x_bps`]); its inverse in `p`
//!   ([`p_for_rate`]) synthesises the first loss interval (§6.3.1).
//! - §5.4, the average loss interval over the `n = 8` most recent intervals with the weights
//!   `1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2`: `I_mean = max(I_tot0, I_tot1) / W_tot`, where `I_tot0`
//!   includes the open interval `I_0` and `I_tot1` does not, so the open interval counts only
//!   when it raises the mean; `p = 1 / I_mean`. With fewer than `n` closed intervals, the
//!   existing ones are used as in §5.4's `k < n` case.
//! - §5.5, history discounting (optional in the RFC, a parameter here): when the open
//!   interval exceeds twice the average of the closed ones, the closed ones are discounted by
//!   `DF = max(0.5, 2 I_mean / I_0)` in the average, and each time a new loss event starts the
//!   older intervals keep the discount current at that moment (`DF_i <- DF_i DF`), as ns-2's
//!   `tfrc-sink.cc` does. The discount scales both the weighted sum and the sum of weights.
//! - Loss events (RFC 4342 §10.2, CCID 3's window counter in place of RFC 5348 §5.2's
//!   timestamps): a loss starts a new loss event when the window counter of the packet
//!   received before it is more than 4 (one RTT of quarter-RTT steps) beyond the one recorded
//!   for the current event, or once a packet with such a counter has arrived after the event
//!   began (which keeps the modulo-16 comparison valid), as Linux's `loss_interval.c` does.
//!   Interval lengths count packets (sequence numbers) from one event's first loss to the
//!   next's (§5.3).

/// Number of loss intervals averaged (RFC 5348 §5.4, `n`).
pub const N: usize = 8;

/// Interval weights `w_0 .. w_7` (RFC 5348 §5.4): 1 for the newer half, then decreasing.
pub const WEIGHTS: [f64; N] = [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2];

/// Lower bound of the discount factor (RFC 5348 §5.5).
const DF_MIN: f64 = 0.5;

/// RFC 5348 §3.1 with explicit `b` and `t_RTO`: the allowed rate in bytes per second for
/// segment size `s` (bytes), round-trip time `r` (s) and loss event rate `p` in (0, 1].
pub fn throughput(s: f64, r: f64, p: f64, b: f64, t_rto: f64) -> f64 {
    let denom = r * (2.0 * b * p / 3.0).sqrt() + t_rto * (3.0 * (3.0 * b * p / 8.0).sqrt()) * p * (1.0 + 32.0 * p * p);
    s / denom
}

/// RFC 5348 §3.1 with the recommended `b = 1` and `t_RTO = 4 R`.
pub fn x_bps(s: f64, r: f64, p: f64) -> f64 {
    throughput(s, r, p, 1.0, 4.0 * r)
}

/// The loss event rate `p` at which [`x_bps`] gives `x` (bytes/s): the equation decreases in
/// `p`, so bisection on `log p` over `[1e-12, 1]` finds it (RFC 5348 §6.3.1 asks for 5 %
/// accuracy; this is far tighter). Clamped to the interval's ends.
pub fn p_for_rate(s: f64, r: f64, x: f64) -> f64 {
    let (mut lo, mut hi) = (1e-12_f64.ln(), 0.0_f64);
    if x_bps(s, r, 1.0) >= x {
        return 1.0;
    }
    if x_bps(s, r, lo.exp()) <= x {
        return lo.exp();
    }
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if x_bps(s, r, mid.exp()) > x {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (0.5 * (lo + hi)).exp()
}

/// One loss interval.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Interval {
    /// Sequence number of the first loss of the event that starts the interval.
    start: u64,
    /// Window counter recorded for the event (that of the packet received before the loss).
    ccval: u8,
    /// Length in packets (for the open interval: up to the highest sequence number received).
    len: f64,
    /// History discount factor `DF_i` (§5.5).
    df: f64,
    /// A packet more than one RTT (in window-counter steps) after the event arrived: the next
    /// loss starts a new event.
    closed: bool,
}

/// The receiver's loss interval history: `I_0` (open) and up to [`N`] closed intervals.
#[derive(Clone, Debug)]
pub struct LossHistory {
    /// `iv[0]` is `I_0`, `iv[i]` is `I_i`.
    iv: [Interval; N + 1],
    /// Closed intervals held (`k`).
    k: usize,
    discounting: bool,
}

impl LossHistory {
    /// An empty history (no loss yet).
    pub fn new(discounting: bool) -> Self {
        LossHistory { iv: [Interval::default(); N + 1], k: 0, discounting }
    }

    /// True once the first loss event has been recorded.
    pub fn has_loss(&self) -> bool {
        self.k > 0
    }

    /// The first loss event, at sequence number `seq` with window counter `ccval`: the
    /// interval before it is `synthetic` packets long (RFC 5348 §6.3.1), and `I_0` runs from
    /// `seq` to `highest`.
    pub fn first_event(&mut self, seq: u64, ccval: u8, synthetic: f64, highest: u64) {
        debug_assert!(!self.has_loss());
        self.iv[1] = Interval { start: 0, ccval: 0, len: synthetic.max(1.0), df: 1.0, closed: true };
        self.iv[0] = Interval { start: seq, ccval, len: open_len(seq, highest), df: 1.0, closed: false };
        self.k = 1;
    }

    /// A packet `seq` was found lost (or ECN-marked), `ccval` being the window counter of the
    /// packet received before it; returns true if it starts a new loss event. The caller
    /// handles the very first loss with [`LossHistory::first_event`].
    pub fn on_loss(&mut self, seq: u64, ccval: u8, highest: u64) -> bool {
        if !self.has_loss() || seq <= self.iv[0].start {
            return false;
        }
        let cur = self.iv[0];
        if !(cur.closed || ccval_after(ccval, cur.ccval) > 4) {
            return false; // same loss event (within one RTT of its start)
        }
        let df = self.discount();
        for i in 1..=self.k {
            self.iv[i].df *= df;
        }
        self.iv[0].len = (seq - cur.start) as f64;
        self.iv[0].df = 1.0;
        self.iv.copy_within(0..N, 1);
        self.k = (self.k + 1).min(N);
        self.iv[0] = Interval { start: seq, ccval, len: open_len(seq, highest), df: 1.0, closed: false };
        true
    }

    /// A data packet arrived: the open interval reaches `highest`; a window counter more than
    /// 4 beyond the event's closes the event to further losses.
    pub fn on_data(&mut self, highest: u64, ccval: u8) {
        if !self.has_loss() {
            return;
        }
        let cur = &mut self.iv[0];
        cur.len = cur.len.max(open_len(cur.start, highest));
        if ccval_after(ccval, cur.ccval) > 4 {
            cur.closed = true;
        }
    }

    /// The current §5.5 discount factor `DF`: below 1 when `I_0` exceeds twice the (already
    /// discounted) average of the closed intervals.
    fn discount(&self) -> f64 {
        if !self.discounting || self.k == 0 {
            return 1.0;
        }
        let (mut tot, mut wsum) = (0.0, 0.0);
        for i in 1..=self.k {
            let w = WEIGHTS[i - 1] * self.iv[i].df;
            tot += w * self.iv[i].len;
            wsum += w;
        }
        let mean = tot / wsum;
        let i0 = self.iv[0].len;
        if i0 > 2.0 * mean {
            (2.0 * mean / i0).max(DF_MIN)
        } else {
            1.0
        }
    }

    /// The average loss interval `I_mean` (§5.4, with §5.5 discounting if enabled); `None`
    /// before the first loss.
    pub fn i_mean(&self) -> Option<f64> {
        if !self.has_loss() {
            return None;
        }
        let df = self.discount();
        let k = self.k;
        // I_tot0 over I_0 .. I_{k-1}, I_tot1 over I_1 .. I_k, weights w_0 .. w_{k-1} each.
        let (mut tot0, mut w0) = (0.0, 0.0);
        let (mut tot1, mut w1) = (0.0, 0.0);
        for i in 0..=k {
            let d = if i == 0 { 1.0 } else { self.iv[i].df * df };
            if i < k {
                tot0 += self.iv[i].len * WEIGHTS[i] * d;
                w0 += WEIGHTS[i] * d;
            }
            if i > 0 {
                tot1 += self.iv[i].len * WEIGHTS[i - 1] * d;
                w1 += WEIGHTS[i - 1] * d;
            }
        }
        Some((tot0 / w0).max(tot1 / w1))
    }

    /// The loss event rate `p = 1 / I_mean` (0 before the first loss).
    pub fn p(&self) -> f64 {
        self.i_mean().map_or(0.0, |m| 1.0 / m.max(1.0))
    }

    /// Interval lengths `I_0, I_1, ..` (tests and inspection).
    pub fn lengths(&self) -> Vec<f64> {
        if !self.has_loss() {
            return Vec::new();
        }
        self.iv[..=self.k].iter().map(|i| i.len).collect()
    }
}

/// Packets in an open interval starting at `start` with `highest` received.
fn open_len(start: u64, highest: u64) -> f64 {
    (highest.saturating_sub(start) + 1) as f64
}

/// How far window counter `a` is after `b`, modulo 16 (RFC 4342 §8.1 circular arithmetic).
pub fn ccval_after(a: u8, b: u8) -> u8 {
    a.wrapping_sub(b) & 0xF
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_equation_matches_independent_closed_form_values() {
        // Values computed by hand from RFC 5348 §3.1 (b = 1, t_RTO = 4R), see the arithmetic:
        // s = 1000, R = 0.1, p = 0.01: R sqrt(2p/3) = 0.1 * 0.0816497 = 0.00816497;
        // t_RTO 3 sqrt(3p/8) p (1 + 32 p^2) = 0.4 * 0.18371173 * 0.01 * 1.0032 = 0.00073719844;
        // X = 1000 / 0.00890216444 = 112332.2 B/s.
        assert!((x_bps(1000.0, 0.1, 0.01) - 112_332.2).abs() < 0.1, "{}", x_bps(1000.0, 0.1, 0.01));
        // s = 1460, R = 0.2, p = 0.1: 0.2 * 0.2581989 = 0.05163978;
        // 0.8 * 3 sqrt(0.0375) * 0.1 * 1.32 = 0.8 * 0.5809475 * 0.132 = 0.06134806;
        // X = 1460 / 0.11298784 = 12921.7 B/s.
        assert!((x_bps(1460.0, 0.2, 0.1) - 12_921.7).abs() < 0.1, "{}", x_bps(1460.0, 0.2, 0.1));
        // p = 1, s = 500, R = 0.05, t_RTO = 4R = 0.2: 0.05 * 0.8164966 = 0.04082483;
        // 0.2 * 3 * 0.6123724 * 33 = 12.12497; X = 500 / 12.16579 = 41.0988 B/s.
        assert!((x_bps(500.0, 0.05, 1.0) - 41.0988).abs() < 1e-3);
        // A t_RTO other than 4R and b = 2 (explicit form): s = 1000, R = 0.1, p = 0.01,
        // t_RTO = 1, b = 2: 0.1 sqrt(0.04/3) = 0.0115470054; 3 sqrt(0.0075) * 0.01 * 1.0032 =
        // 0.0026063901; X = 1000 / 0.0141533955 = 70654.4 B/s.
        assert!((throughput(1000.0, 0.1, 0.01, 2.0, 1.0) - 70_654.4).abs() < 0.1);
        // The rate falls as p or R grows, and scales with s.
        assert!(x_bps(1000.0, 0.1, 0.02) < x_bps(1000.0, 0.1, 0.01));
        assert!(x_bps(1000.0, 0.2, 0.01) < x_bps(1000.0, 0.1, 0.01));
        assert!((x_bps(2000.0, 0.1, 0.01) / x_bps(1000.0, 0.1, 0.01) - 2.0).abs() < 1e-12);
    }

    #[test]
    fn the_inverse_recovers_p() {
        for &p in &[1e-6, 1e-4, 0.01, 0.1, 0.5] {
            let x = x_bps(1024.0, 0.3, p);
            let q = p_for_rate(1024.0, 0.3, x);
            assert!((q / p - 1.0).abs() < 1e-9, "p {p} -> {q}");
        }
        // Out of range: a rate the equation cannot reach even at p = 1 gives p = 1.
        assert_eq!(p_for_rate(1000.0, 0.1, 1.0), 1.0);
    }

    #[test]
    fn average_loss_interval_follows_the_weights_by_hand() {
        let mut h = LossHistory::new(false);
        assert_eq!(h.p(), 0.0);
        // First loss at 100 with a synthetic I_1 = 50; I_0 = 100..=129: 30 packets.
        h.first_event(100, 0, 50.0, 129);
        assert_eq!(h.lengths(), vec![30.0, 50.0]);
        // k = 1: I_mean = max(I_0, I_1) = 50.
        assert_eq!(h.i_mean(), Some(50.0));
        h.on_data(200, 3); // I_0 = 101 > I_1: the open interval now counts.
        assert_eq!(h.i_mean(), Some(101.0));
        // Within one RTT (counter 4 steps on): same event.
        assert!(!h.on_loss(201, 4, 201));
        // Counter 5 on: a new event; I_1 = 210 - 100 = 110.
        assert!(h.on_loss(210, 5, 215));
        assert_eq!(h.lengths(), vec![6.0, 110.0, 50.0]);
        // k = 2: I_tot0 = 6 + 110 = 116, I_tot1 = 110 + 50 = 160, W_tot = 2 -> 80.
        assert_eq!(h.i_mean(), Some(80.0));
        // Fill to nine events of 100 packets each after: weights matter.
        let mut seq = 210;
        let mut cc = 5u8;
        for _ in 0..8 {
            seq += 100;
            cc = (cc + 5) & 0xF;
            assert!(h.on_loss(seq, cc, seq));
        }
        // I_1..I_8 = 100 each (the oldest intervals fell off), I_0 = 1.
        assert_eq!(h.lengths(), vec![1.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0]);
        // I_tot1 = 100 * W_tot, W_tot = 6 -> 100; I_tot0 = (1 + 100 * 5) / 6 = 83.5; the max is 100.
        assert!((h.i_mean().unwrap() - 100.0).abs() < 1e-12);
        assert!((h.p() - 0.01).abs() < 1e-12);
    }

    #[test]
    fn weighted_mean_of_unequal_intervals() {
        // Closed intervals (newest first) 10, 20, ..., 80 and I_0 = 5:
        // I_tot1 = 10+20+30+40 + 0.8*50 + 0.6*60 + 0.4*70 + 0.2*80 = 100 + 40+36+28+16 = 220;
        // W_tot = 6; I_tot0 = 5 + 10+20+30 + 0.8*40 + 0.6*50 + 0.4*60 + 0.2*70 = 65 + 32+30+24+14
        // = 165. I_mean = 220 / 6.
        let mut h = LossHistory::new(false);
        h.first_event(0, 0, 80.0, 0);
        let mut seq = 0;
        let mut cc = 0u8;
        for len in [70u64, 60, 50, 40, 30, 20, 10] {
            seq += len;
            cc = (cc + 5) & 0xF;
            assert!(h.on_loss(seq, cc, seq));
        }
        h.on_data(seq + 4, cc);
        assert_eq!(h.lengths(), vec![5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0]);
        assert!((h.i_mean().unwrap() - 220.0 / 6.0).abs() < 1e-12);
    }

    #[test]
    fn history_discounting_lowers_the_weight_of_old_intervals() {
        // I_1 = 100 (k = 1) and a long open interval I_0 = 500: DF = max(0.5, 200/500) = 0.5.
        // With a single closed interval, I_mean = max(I_0, I_1) either way.
        let mut plain = LossHistory::new(false);
        let mut disc = LossHistory::new(true);
        for h in [&mut plain, &mut disc] {
            h.first_event(0, 0, 100.0, 0);
            assert!(h.on_loss(100, 5, 100)); // I_1 = 100, I_2 = 100
            h.on_data(599, 5); // I_0 = 500
        }
        // Without discounting: I_tot0 = 500 + 100 = 600, I_tot1 = 200, W = 2 -> 300.
        assert_eq!(plain.i_mean(), Some(300.0));
        // With: mean of closed = 100, I_0 = 500 > 200: DF = 0.5; I_tot0 = 500 + 0.5*100 = 550
        // over W = 1.5 -> 366.67; I_tot1 = (100 + 100) * 0.5 / (2 * 0.5) = 100.
        assert!((disc.i_mean().unwrap() - 550.0 / 1.5).abs() < 1e-9);
        // The discount at the next loss event stays with the old intervals: I_1 = 500 (new,
        // DF 1), I_2 and I_3 = 100 with DF 0.5.
        assert!(disc.on_loss(600, 10, 600));
        // I_0 = 1: DF_now = 1. I_tot0 = 1 + 500 + 0.5*100 = 551 over 2.5 = 220.4;
        // I_tot1 = 500 + 0.5*100 + 0.5*100 = 600 over 2 = 300.
        assert!((disc.i_mean().unwrap() - 300.0).abs() < 1e-9);
        // Never below DF_MIN: I_0 = 10 000 against a mean of 100 still gives 0.5.
        let mut h = LossHistory::new(true);
        h.first_event(0, 0, 100.0, 0);
        assert!(h.on_loss(100, 5, 100));
        h.on_data(10_099, 5);
        assert!((h.discount() - 0.5).abs() < 1e-12);
    }

    #[test]
    fn a_late_packet_of_the_event_closes_it_against_counter_wraparound() {
        let mut h = LossHistory::new(false);
        h.first_event(10, 14, 20.0, 10);
        // A packet two RTTs later (counter 14 -> 7, i.e. 9 steps): the event is closed, so a
        // loss whose counter has wrapped around to look close (15) still starts a new event.
        h.on_data(40, 7);
        assert!(h.on_loss(41, 15, 41));
    }
}
