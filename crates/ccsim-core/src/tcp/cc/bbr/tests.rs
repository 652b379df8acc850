//! BBR's control law against Linux tcp_bbr.c, by hand: each test drives the algorithm with
//! rate samples built by hand on a 1 MB/s, 100 ms path of 1000-byte packets.

use super::*;
use crate::tcp::cc::testkit::{window, Setup, MSS};

/// The tests' path: bottleneck rate `B` = 1 MB/s (8 Mbit/s), min RTT `R` = 100 ms, so the
/// BDP is `B x R` = 100 000 bytes = 100 packets of `MSS` = 1000 bytes.
const B: f64 = 1_000_000.0;
const R: Time = 100 * MS;

fn assert_close(got: f64, want: f64) {
    assert!((got - want).abs() <= 1e-9 * want.abs().max(1.0), "got {got}, want {want}");
}

/// The ProbeBW window target on the tests' path with one packet per ACK (bytes):
/// `ceil(2 x B x R) = 200` packets, plus the ACK-aggregation allowance of 1 packet (every
/// ACK here starts a new aggregation epoch with its own 1000 bytes as the excess), plus
/// 3 send quanta of 2 segments (pacing below ~2 MB/s: 1 ms of it is under 2 segments):
/// 207, rounded up to even: 208; 210 in the 5/4 phase (index 0), which adds 2.
fn probe_bw_target(cycle_idx: usize) -> u64 {
    if cycle_idx == 0 {
        210 * MSS
    } else {
        208 * MSS
    }
}

/// Drives a BBR directly with hand-made rate samples. The test sets
/// `st.bytes_in_flight` (the pipe after the next ACK; also its `prior_in_flight`),
/// `st.ca_state`, and `sent_at`: `C.delivered` when the packet ending the next sample left.
struct Drive {
    cc: Bbr,
    st: CcState,
    sent_at: u64,
}

impl Drive {
    fn new(cc: Bbr) -> Self {
        Drive { cc, st: window(MSS, 10, None).with_rtt(R, R), sent_at: 0 }
    }

    /// One ACK `gap` after the previous one, for one packet (unless `f` says otherwise),
    /// carrying the RTT sample `R`, whose rate sample measures `rate`.
    fn ack_with(&mut self, gap: Time, rate: f64, f: impl FnOnce(&mut RateSample)) {
        self.st.now += gap;
        let mut rs = RateSample {
            prior_delivered: self.sent_at,
            newly_acked: MSS,
            rtt: Some(R),
            prior_in_flight: self.st.bytes_in_flight,
            delivery_rate: rate,
            ..RateSample::default()
        };
        f(&mut rs);
        self.st.delivered += rs.newly_acked;
        self.st.lost += rs.newly_lost;
        if rs.newly_acked == 0 {
            (rs.prior_delivered, rs.delivered, rs.interval, rs.delivery_rate) = (0, 0, 0, 0.0);
        } else {
            rs.delivered = self.st.delivered - rs.prior_delivered;
            rs.interval = (rs.delivered as f64 * SEC as f64 / rs.delivery_rate).round() as Time;
        }
        self.cc.on_rate_sample(&mut self.st, &Ack::default(), &rs);
    }

    fn ack(&mut self, gap: Time, rate: f64) {
        self.ack_with(gap, rate, |_| {});
    }

    /// A round trip of `n` one-packet ACKs `gap` apart at `rate`: the first delivers a
    /// packet sent after the previous round's first ACK (a round starts), the others
    /// packets sent before this round's first ACK.
    fn round(&mut self, n: u64, gap: Time, rate: f64, app_limited: bool) {
        let mut next = None;
        for _ in 0..n {
            self.ack_with(gap, rate, |rs| rs.is_app_limited = app_limited);
            next.get_or_insert(self.st.delivered);
        }
        self.sent_at = next.unwrap();
    }

    /// An ACK that starts a round: its packet was sent after every ACK so far.
    fn round_ack(&mut self, gap: Time, rate: f64, f: impl FnOnce(&mut RateSample)) {
        self.sent_at = self.st.delivered;
        self.ack_with(gap, rate, f);
    }

    /// Startup at a constant `B` with 150 packets in flight: 4 rounds of 100 ACKs 1 ms
    /// apart end in Drain (test 1), then one ACK with 100 packets in flight enters ProbeBW.
    fn reach_probe_bw(&mut self) {
        self.st.bytes_in_flight = 150 * MSS;
        for _ in 0..4 {
            self.round(100, MS, B, false);
        }
        assert_eq!(self.cc.mode(), Mode::Drain);
        self.st.bytes_in_flight = 100 * MSS;
        self.ack(MS, B);
        assert_eq!(self.cc.mode(), Mode::ProbeBw);
    }
}

#[test]
fn startup_paces_at_high_gain_fills_the_pipe_then_drains_reach_probe_bw() {
    let mut d = Drive::new(Bbr::default());
    // Before any ACK: high_gain x initial cwnd / 1 ms (no RTT yet) x 0.99
    // = 2.885 x 10 000 B / 0.001 s x 0.99 = 28 561 500 B/s.
    d.st.srtt = None;
    assert_close(d.cc.pacing_rate(&d.st).unwrap(), 28_561_500.0);
    // With srtt = 100 ms: 2.885 x 10 000 / 0.1 x 0.99 = 285 615 B/s.
    d.st.srtt = Some(R);
    assert_close(d.cc.pacing_rate(&d.st).unwrap(), 285_615.0);

    // The first round trip, 100 ACKs 1 ms apart at rate B: pacing 2.885 x B x 0.99 = 2 856 150 B/s;
    // cwnd grows by the 1000 acked bytes per ACK: 10 000 + 100 x 1000.
    d.st.bytes_in_flight = 150 * MSS;
    d.round(100, MS, B, false);
    assert_eq!(d.cc.mode(), Mode::Startup);
    assert_close(d.cc.pacing_rate(&d.st).unwrap(), 2_856_150.0);
    assert_eq!(d.st.cwnd, 110_000);
    // Target = ceil(2.885 x B x R) = ceil(288.5) = 289 packets, plus 3 send quanta of
    // 2 segments (1 ms of 2.86 MB/s is 2789 bytes: 2 segments) = 295, rounded up to even:
    // 296 packets. The second round trip reaches 210 000; the third reaches 296 000 after 86 ACKs and
    // stays there (grows only while below target).
    d.round(100, MS, B, false);
    assert_eq!(d.st.cwnd, 210_000);
    d.round(100, MS, B, false);
    assert_eq!(d.st.cwnd, 296_000);
    // The second and third round trips did not grow the bandwidth by 25 %: 2 of the 3; still
    // Startup.
    assert_eq!(d.cc.mode(), Mode::Startup);
    assert!(!d.cc.full_bw_reached());
    // The first ACK of the fourth round trip makes the third such one: Drain. Pacing gain 1/2.885:
    // B / 2.885 x 0.99 = 343 154.246... B/s; ssthresh = the 1.0 x BDP inflight:
    // 100 + 3 x 2 = 106 packets.
    d.ack(MS, B);
    assert_eq!(d.cc.mode(), Mode::Drain);
    assert_close(d.cc.pacing_rate(&d.st).unwrap(), B / 2.885 * 0.99);
    assert_eq!(d.st.ssthresh, 106_000);
    // Drain holds while inflight exceeds 106 packets...
    d.st.bytes_in_flight = 107 * MSS;
    d.ack(MS, B);
    assert_eq!(d.cc.mode(), Mode::Drain);
    // ... and ends once it is down to it: ProbeBW, at a phase other than 3/4.
    d.st.bytes_in_flight = 106 * MSS;
    d.ack(MS, B);
    assert_eq!(d.cc.mode(), Mode::ProbeBw);
    let idx = d.cc.cycle_index();
    assert_ne!(idx, 1);
    assert_eq!(d.cc.pacing_gain(), PACING_GAIN[idx]);
    assert_close(d.cc.pacing_rate(&d.st).unwrap(), PACING_GAIN[idx] * B * 0.99);
}

#[test]
fn startup_continues_while_the_bandwidth_grows_by_a_quarter_per_round() {
    // Exactly +25 % per round (>= the threshold) resets the count every round: still
    // Startup after 10 rounds. Growth is measured against `full_bw`, the last estimate that
    // grew enough: 3 rounds at 1.24 x that one end Startup on the third.
    let mut d = Drive::new(Bbr::default());
    d.st.bytes_in_flight = 150 * MSS;
    let mut rate = B;
    for _ in 0..10 {
        d.round(10, MS, rate, false);
        assert_eq!(d.cc.full_bw, rate);
        rate *= 1.25;
    }
    assert_eq!(d.cc.mode(), Mode::Startup);
    let full_bw = d.cc.full_bw;
    for k in 1..=3 {
        d.round(10, MS, full_bw * 1.24, false);
        assert_eq!(d.cc.full_bw_reached(), k == 3, "round {k} at +24 %");
    }
    // Drain, left at once: 150 packets in flight are below the BDP at ~9 MB/s.
    assert_eq!(d.cc.mode(), Mode::ProbeBw);
}

#[test]
fn the_bandwidth_filter_is_the_max_over_the_last_ten_rounds() {
    let mut d = Drive::new(Bbr::default());
    // The first round trip at 2B, then B. Linux's running max keeps a sample of round trip t
    // until the first sample of round trip t + 11 (a window of ten after it): 2B through the
    // eleventh.
    d.round(10, MS, 2.0 * B, false);
    assert_eq!(d.cc.round_count(), 1);
    assert_eq!(d.cc.max_bw(), 2.0 * B);
    for r in 2..=11 {
        d.round(10, MS, B, false);
        assert_eq!(d.cc.round_count(), r);
        assert_eq!(d.cc.max_bw(), 2.0 * B, "round {r}");
    }
    d.round(10, MS, B, false);
    assert_eq!(d.cc.round_count(), 12);
    assert_eq!(d.cc.max_bw(), B, "the first round trip's 2B sample aged out in the twelfth");
    // A higher sample takes over at once; lower ones do not lower it within the window.
    d.round(10, MS, 1.5 * B, false);
    assert_eq!(d.cc.max_bw(), 1.5 * B);
    for _ in 0..10 {
        d.round(10, MS, 0.5 * B, false);
        assert_eq!(d.cc.max_bw(), 1.5 * B);
    }
    d.round(10, MS, 0.5 * B, false);
    assert_eq!(d.cc.max_bw(), 0.5 * B);
    // ACKs within a round do not count rounds.
    assert_eq!(d.cc.round_count(), 24);
}

#[test]
fn probe_bw_cycles_the_pacing_gain_each_min_rtt() {
    let mut d = Drive::new(Bbr::default());
    d.reach_probe_bw();
    let first = d.cc.cycle_index();
    assert_ne!(first, 1, "never entered at the 3/4 phase");
    // ACKs every 10 ms (R = 100 ms): a phase lasts until the first ACK more than R after
    // its start, the 11th. Inflight (before each ACK) chosen so that the inflight
    // conditions hold at that time:
    // - 5/4: bbr_inflight(B, 5/4) = ceil(125) + 3 x 2 = 131 -> 132 (even) + 2 (phase 0) =
    //   134 packets, against inflight + one quantum of 2: 132 000 reaches it;
    // - 3/4: it ends early at inflight <= bbr_inflight(B, 1) = 100 + 6 = 106 packets, so
    //   107 000 lets it run its full length.
    let inflight = |idx: usize| match idx {
        0 => 132 * MSS,
        1 => 107 * MSS,
        _ => 100 * MSS,
    };
    let mut idx = first;
    for _ in 0..16 {
        for k in 1..=11 {
            d.st.bytes_in_flight = inflight(idx);
            d.ack(10 * MS, B);
            let want = if k < 11 { idx } else { (idx + 1) % CYCLE_LEN };
            assert_eq!(d.cc.cycle_index(), want, "phase {idx}, ACK {k}");
            assert_eq!(d.cc.pacing_gain(), PACING_GAIN[want]);
            assert_close(d.cc.pacing_rate(&d.st).unwrap(), PACING_GAIN[want] * B * 0.99);
        }
        idx = (idx + 1) % CYCLE_LEN;
    }
    // The 5/4 phase with inflight short of its target (131 000 + 2000 < 134 000) and no
    // loss outlasts its min RTT...
    while d.cc.cycle_index() != 0 {
        d.st.bytes_in_flight = 100 * MSS;
        d.ack(10 * MS, B);
    }
    d.st.bytes_in_flight = 131 * MSS;
    for _ in 0..30 {
        d.ack(10 * MS, B);
        assert_eq!(d.cc.cycle_index(), 0);
    }
    // ... until a loss ends it.
    d.ack_with(10 * MS, B, |rs| rs.newly_lost = MSS);
    assert_eq!(d.cc.cycle_index(), 1);
    // The 3/4 phase ends at the first ACK with inflight down to 106 packets, 10 ms in.
    d.st.bytes_in_flight = 106 * MSS;
    d.ack(10 * MS, B);
    assert_eq!(d.cc.cycle_index(), 2);
    // Gain-1 phases go by time alone, whatever inflight.
    for k in 1..=11 {
        d.st.bytes_in_flight = if k % 2 == 0 { 0 } else { 500 * MSS };
        d.ack(10 * MS, B);
        assert_eq!(d.cc.cycle_index(), if k < 11 { 2 } else { 3 });
    }
    // The 5/4 phase also ends once inflight reaches its target after its min RTT.
    while d.cc.cycle_index() != 0 {
        d.st.bytes_in_flight = 100 * MSS;
        d.ack(10 * MS, B);
    }
    d.st.bytes_in_flight = 131 * MSS;
    for _ in 0..15 {
        d.ack(10 * MS, B);
    }
    assert_eq!(d.cc.cycle_index(), 0);
    d.st.bytes_in_flight = 132 * MSS;
    d.ack(10 * MS, B);
    assert_eq!(d.cc.cycle_index(), 1);
}

#[test]
fn probe_bw_starts_at_a_random_phase_other_than_three_quarters() {
    // Linux: cycle_idx = 7 - U{0..6}, then one advance: phases 2..7 and 0, evenly.
    let mut seen = [0u32; CYCLE_LEN];
    for seed in 0..100u64 {
        let mut cc = Bbr::default().with_rng(Rng::stream(seed, Stream::Cc(0)));
        for _ in 0..14 {
            cc.reset_probe_bw_mode();
            seen[cc.cycle_index()] += 1;
        }
    }
    assert_eq!(seen[1], 0);
    for (idx, n) in seen.iter().enumerate().filter(|&(i, _)| i != 1) {
        // 1400 draws over 7 phases: 200 each on average.
        assert!((140..=260).contains(n), "phase {idx}: {n} of 1400");
    }
    // Through the real path, different seeds enter at different phases, never at 3/4.
    let mut entries = std::collections::BTreeSet::new();
    for seed in 0..20 {
        let mut d = Drive::new(Bbr::default().with_rng(Rng::stream(seed, Stream::Cc(0))));
        d.reach_probe_bw();
        assert_ne!(d.cc.cycle_index(), 1);
        entries.insert(d.cc.cycle_index());
    }
    assert!(entries.len() >= 3, "{entries:?}");
}

#[test]
fn probe_rtt_holds_four_packets_for_200_ms_and_a_round_then_restores_the_window() {
    let mut d = Drive::new(Bbr::default());
    d.reach_probe_bw();
    // Settle ProbeBW; then an ACK carrying an RTT 1 us below the minimum restamps it at
    // t0 (only a strictly lower sample does, Linux's `rtt_us < min_rtt_us`).
    d.st.bytes_in_flight = 150 * MSS;
    for _ in 0..20 {
        d.ack(10 * MS, B);
    }
    d.ack_with(10 * MS, B, |rs| rs.rtt = Some(R - 1_000));
    let t0 = d.st.now;
    // ACKs every 100 ms with RTT samples of 120 ms do not refresh it; 10 s after t0 the
    // filter has not expired yet (it must be older than 10 s).
    let slow = |rs: &mut RateSample| rs.rtt = Some(120 * MS);
    for _ in 0..100 {
        d.ack_with(100 * MS, B, slow);
        assert_eq!(d.cc.mode(), Mode::ProbeBw);
    }
    assert_eq!(d.st.now, t0 + 10 * SEC);
    let before = d.st.cwnd;
    assert_eq!(before, probe_bw_target(d.cc.cycle_index()));
    d.ack_with(100 * MS, B, slow);
    assert_eq!(d.cc.mode(), Mode::ProbeRtt);
    assert_eq!(d.st.cwnd, 4 * MSS, "bbr_cwnd_min_target");
    assert_eq!(d.cc.prior_cwnd, before);
    assert_eq!(d.cc.pacing_gain(), 1.0);
    // While inflight is above 4 packets the 200 ms do not start, however long.
    d.st.bytes_in_flight = 50 * MSS;
    for _ in 0..100 {
        d.ack(10 * MS, B);
        assert_eq!((d.cc.mode(), d.st.cwnd), (Mode::ProbeRtt, 4 * MSS));
    }
    // Inflight at 4 packets: the 200 ms start, and a round starts with the next delivery
    // of a packet sent from now on.
    d.st.bytes_in_flight = 4 * MSS;
    d.ack(10 * MS, B);
    let tq = d.st.now;
    let round_mark = d.st.delivered;
    // 300 ms pass but no round ends (every ACK is for a packet sent before): still ProbeRTT.
    for _ in 0..30 {
        d.ack(10 * MS, B);
        assert_eq!((d.cc.mode(), d.st.cwnd), (Mode::ProbeRtt, 4 * MSS));
    }
    assert_eq!(d.st.now, tq + 300 * MS);
    // The round ends: back to ProbeBW (the pipe was full before), the saved window back,
    // capped by this ACK's growth rule: min(before + 1000, target).
    d.sent_at = round_mark;
    d.ack(10 * MS, B);
    assert_eq!(d.cc.mode(), Mode::ProbeBw);
    assert_eq!(d.st.cwnd, (before + MSS).min(probe_bw_target(d.cc.cycle_index())));
    assert!(d.st.cwnd >= before.min(probe_bw_target(d.cc.cycle_index())));
    assert_eq!(d.cc.min_rtt(), Some(R), "ProbeRTT's samples brought the min RTT back to R");
    let t1 = d.st.now;

    // Next time the round comes first: ProbeRTT lasts until the first ACK after 200 ms.
    d.st.bytes_in_flight = 150 * MSS;
    while d.st.now <= t1 + 10 * SEC {
        assert_ne!(d.cc.mode(), Mode::ProbeRtt);
        d.ack_with(100 * MS, B, slow);
    }
    assert_eq!(d.cc.mode(), Mode::ProbeRtt, "10 s after the last min RTT update");
    d.st.bytes_in_flight = 4 * MSS;
    d.ack(10 * MS, B);
    let tq = d.st.now;
    d.round_ack(10 * MS, B, |_| {});
    for _ in 0..19 {
        d.ack(10 * MS, B);
        assert_eq!((d.cc.mode(), d.st.cwnd), (Mode::ProbeRtt, 4 * MSS));
    }
    assert_eq!(d.st.now, tq + 200 * MS, "not yet past the 200 ms");
    d.ack(10 * MS, B);
    assert_eq!(d.cc.mode(), Mode::ProbeBw);
    assert!(d.st.cwnd > 4 * MSS);
}

#[test]
fn recovery_conserves_packets_for_a_round_then_restores_the_prior_window() {
    let mut d = Drive::new(Bbr::default());
    d.reach_probe_bw();
    d.st.bytes_in_flight = 150 * MSS;
    for _ in 0..5 {
        d.ack(MS, B);
    }
    // Lose outside the 5/4 phase, whose window is 2 packets larger, so that the prior
    // window is the plain target: 208 packets.
    while d.cc.cycle_index() == 0 {
        d.ack(10 * MS, B);
    }
    let prior = d.st.cwnd;
    assert_eq!(prior, probe_bw_target(1));
    // The sender enters fast recovery: ssthresh() saves the window and leaves ssthresh.
    let ssthresh = d.st.ssthresh;
    assert_eq!(d.cc.ssthresh(&d.st, Congestion::Loss), ssthresh);
    assert_eq!(d.cc.prior_cwnd, prior);
    // First ACK in Recovery, 3 packets newly lost, 50 left in flight after it:
    // cwnd = inflight + acked = 50 000 + 1000 (packet conservation).
    d.st.ca_state = CaState::Recovery;
    d.st.bytes_in_flight = 50 * MSS;
    d.ack_with(MS, B, |rs| rs.newly_lost = 3 * MSS);
    let entry_delivered = d.st.delivered;
    assert_eq!(d.st.cwnd, 51_000);
    // Within that round, at least inflight + acked, no growth beyond: 49 in flight keeps
    // 51 000; 60 in flight allows 61 000; a loss of 5 packets with 40 in flight:
    // max(61 000 - 5000, 40 000 + 1000) = 56 000.
    d.st.bytes_in_flight = 49 * MSS;
    d.ack(MS, B);
    assert_eq!(d.st.cwnd, 51_000);
    d.st.bytes_in_flight = 60 * MSS;
    d.ack(MS, B);
    assert_eq!(d.st.cwnd, 61_000);
    d.st.bytes_in_flight = 40 * MSS;
    d.ack_with(MS, B, |rs| rs.newly_lost = 5 * MSS);
    assert_eq!(d.st.cwnd, 56_000);
    // A packet sent after recovery began is delivered: the round ends, conservation
    // ends, and the window grows by the acked bytes toward the target (56 000 + 1000).
    d.sent_at = entry_delivered;
    d.ack(MS, B);
    assert_eq!(d.st.cwnd, 57_000);
    d.ack(MS, B);
    assert_eq!(d.st.cwnd, 58_000);
    // Back to Open: the window saved at the start of recovery comes back, then the usual
    // rule min(cwnd + acked, target) (208 packets, 210 in the 5/4 phase) applies.
    d.st.ca_state = CaState::Open;
    d.ack(MS, B);
    assert!(d.st.cwnd >= prior);
    assert_eq!(d.st.cwnd, (prior + MSS).min(probe_bw_target(d.cc.cycle_index())));

    // The same through on_recovery_exit, when the sender reports Open there: the window
    // comes back at once.
    d.st.ssthresh = d.cc.ssthresh(&d.st, Congestion::Loss);
    let prior = d.cc.prior_cwnd;
    d.st.ca_state = CaState::Recovery;
    d.st.bytes_in_flight = 30 * MSS;
    d.ack(MS, B);
    assert_eq!(d.st.cwnd, 31_000);
    d.st.ca_state = CaState::Open;
    d.cc.on_recovery_exit(&mut d.st);
    assert_eq!(d.st.cwnd, prior);

    // A timeout: the sender saves through ssthresh(), sets the loss window, on_timeout.
    // Then growth by acked bytes (at least 4 packets) until Open restores the prior window.
    let prior = d.st.cwnd;
    d.cc.ssthresh(&d.st, Congestion::Timeout);
    d.st.cwnd = MSS;
    d.st.ca_state = CaState::Loss;
    d.cc.on_timeout(&mut d.st);
    assert_eq!(d.cc.full_bw, 0.0, "bbr_set_state(TCP_CA_Loss) resets full_bw");
    assert!(d.cc.lt_is_sampling, "and counts a loss for the long-term sampler");
    d.st.bytes_in_flight = 0;
    d.ack(MS, B);
    assert_eq!(d.st.cwnd, 4 * MSS, "max(1000 + 1000, 4 packets)");
    d.ack(MS, B);
    assert_eq!(d.st.cwnd, 5 * MSS);
    d.st.ca_state = CaState::Open;
    d.ack(MS, B);
    assert!(d.st.cwnd >= prior.min(probe_bw_target(d.cc.cycle_index())));
}

#[test]
fn app_limited_samples_do_not_lower_the_bandwidth_estimate() {
    let mut d = Drive::new(Bbr::default());
    d.reach_probe_bw();
    assert_eq!(d.cc.max_bw(), B);
    // 20 rounds of app-limited samples at B/4: far beyond the 10-round window, still B.
    for _ in 0..20 {
        d.round(10, MS, B / 4.0, true);
        assert_eq!(d.cc.max_bw(), B);
    }
    // An app-limited sample above the estimate is taken.
    d.round(10, MS, 2.0 * B, true);
    assert_eq!(d.cc.max_bw(), 2.0 * B);
    // The same low samples, not app-limited, replace it once it is more than ten round trips
    // old: after nine app-limited round trips (which leave the filter alone), a round trip ten
    // after the 2B sample still keeps it (win_minmax: `t - s[2].t > win` to forget); the
    // next one replaces it.
    for _ in 0..9 {
        d.round(10, MS, B / 4.0, true);
    }
    d.round(10, MS, B / 4.0, false);
    assert_eq!(d.cc.max_bw(), 2.0 * B);
    d.round(10, MS, B / 4.0, false);
    assert_eq!(d.cc.max_bw(), B / 4.0);
}

#[test]
fn probe_rtt_samples_count_as_app_limited() {
    // Linux marks the connection app-limited in ProbeRTT; the sender here does not, so BBR
    // classifies the packets sent during ProbeRTT itself.
    let mut d = Drive::new(Bbr::default());
    d.reach_probe_bw();
    d.st.bytes_in_flight = 150 * MSS;
    d.ack_with(10 * MS, B, |rs| rs.rtt = Some(R - 1_000)); // restamps the minimum
    let t0 = d.st.now;
    while d.cc.mode() != Mode::ProbeRtt {
        d.ack_with(500 * MS, B, |rs| rs.rtt = Some(2 * R));
    }
    assert!(d.st.now > t0 + 10 * SEC);
    // 30 rounds of 4-packet flights at B/10, sent during ProbeRTT and not flagged by the
    // sender; 50 packets in flight hold ProbeRTT open. The estimate stays B.
    d.st.bytes_in_flight = 50 * MSS;
    for _ in 0..30 {
        d.round_ack(10 * MS, B / 10.0, |_| {});
        assert_eq!(d.cc.mode(), Mode::ProbeRtt);
    }
    assert_eq!(d.cc.max_bw(), B);
}

#[test]
fn a_policer_is_detected_from_two_lossy_intervals_at_the_same_rate() {
    let mut d = Drive::new(Bbr::default());
    d.reach_probe_bw();
    d.st.bytes_in_flight = 150 * MSS;
    // Every ACK (2 ms apart) starts a round, delivers 1000 bytes at 500 000 B/s and
    // reports 1000 bytes lost. The first loss starts sampling; the interval ends at the
    // loss of its 4th round: 3000 lost of 3000 delivered (>= 50/256) over 6 ms = 500 000
    // B/s. The next one: 4000 bytes over 8 ms, the same rate: a policer, lt_bw = 500 000.
    let policed = 500_000.0;
    for k in 0..8 {
        assert!(!d.cc.lt_use_bw, "ACK {k}");
        d.round_ack(2 * MS, policed, |rs| rs.newly_lost = MSS);
    }
    assert!(d.cc.lt_use_bw);
    assert_eq!(d.cc.bw(), policed);
    assert_eq!(d.cc.max_bw(), B, "the max filter still holds B");
    assert_eq!(d.cc.pacing_gain(), 1.0);
    assert_close(d.cc.pacing_rate(&d.st).unwrap(), policed * 0.99);
    // lt_bw holds for 48 ProbeBW rounds, then sampling starts over.
    for _ in 0..47 {
        d.round_ack(2 * MS, policed, |_| {});
        assert!(d.cc.lt_use_bw);
        assert_eq!(d.cc.pacing_gain(), 1.0);
    }
    d.round_ack(2 * MS, policed, |_| {});
    assert!(!d.cc.lt_use_bw);
    assert_eq!(d.cc.mode(), Mode::ProbeBw);
}

#[test]
fn a_restart_from_idle_paces_at_the_estimate_and_skips_probe_rtt() {
    let mut d = Drive::new(Bbr::default());
    d.reach_probe_bw();
    while d.cc.cycle_index() != 0 {
        d.ack(10 * MS, B);
    }
    assert_close(d.cc.pacing_rate(&d.st).unwrap(), 1.25 * B * 0.99);
    // Nothing outstanding, a segment leaves: pace at 1.0 x bw (x 0.99).
    d.st.snd_una = 5 * MSS;
    d.st.snd_nxt = 5 * MSS;
    d.cc.on_sent(&d.st, MSS as u32);
    assert_close(d.cc.pacing_rate(&d.st).unwrap(), B * 0.99);
    // With data outstanding, sending is no restart.
    d.st.snd_nxt = 6 * MSS;
    d.ack(MS, B);
    let rate = d.cc.pacing_rate(&d.st).unwrap();
    d.cc.on_sent(&d.st, MSS as u32);
    assert_eq!(d.cc.pacing_rate(&d.st).unwrap(), rate);

    // Without a restart, an expired min RTT (11 s without an update) starts ProbeRTT at the
    // next ACK.
    let mut busy = Drive::new(Bbr::default());
    busy.reach_probe_bw();
    busy.st.now += 11 * SEC;
    busy.ack(MS, B);
    assert_eq!(busy.cc.mode(), Mode::ProbeRtt);
    // After a restart from idle it does not: not on an ACK that delivers nothing, nor on
    // the first that delivers data, whose RTT sample the expired filter takes; then the
    // estimate is fresh for another 10 s.
    d.st.now += 11 * SEC;
    d.st.snd_nxt = d.st.snd_una;
    d.cc.on_sent(&d.st, MSS as u32);
    d.ack_with(MS, B, |rs| (rs.newly_acked, rs.rtt) = (0, None));
    assert_eq!(d.cc.mode(), Mode::ProbeBw);
    d.ack_with(MS, B, |rs| rs.rtt = Some(R + MS));
    assert_eq!(d.cc.mode(), Mode::ProbeBw);
    assert_eq!(d.cc.min_rtt(), Some(R + MS));
    assert!(!d.cc.idle_restart);
    d.ack(MS, B);
    assert_eq!(d.cc.mode(), Mode::ProbeBw);
}

#[test]
fn registered_as_an_owner_of_its_window_with_linux_defaults() {
    let m = crate::tcp::cc::CCS.iter().find(|m| m.name == "bbr").unwrap();
    let p = Params::resolve("bbr", m.params, &Default::default()).unwrap();
    let cc = (m.build)(&p, Rng::stream(0, Stream::Cc(0)));
    assert!(cc.owns_window());
    assert_eq!(cc.name(), "bbr");
    let st = window(MSS, 10, None);
    assert!(cc.pacing_rate(&st).is_some());
    let d = Bbr::default();
    assert_eq!((d.high_gain, d.cwnd_gain_bw, d.bw_rtts), (2.885, 2.0, 10));
    assert_eq!((d.min_rtt_win, d.probe_rtt_time), (10 * SEC, 200 * MS));
    assert_eq!((d.full_bw_thresh, d.full_bw_cnt_max), (1.25, 3));
}

#[test]
fn traced_variables_are_the_model_of_the_path() {
    let mut d = Drive::new(Bbr::default());
    let var = |d: &Drive, name: &str| d.cc.var(name).unwrap();
    // Before any sample: Startup at high gain, no bandwidth, no min RTT.
    assert_eq!(
        [var(&d, "mode"), var(&d, "bw"), var(&d, "pacing_gain"), var(&d, "full_bw_reached")],
        [0.0, 0.0, 2.885, 0.0]
    );
    assert!(var(&d, "min_rtt").is_nan());
    // Startup, Drain, then ProbeBW on the 1 MB/s, 100 ms path: the model holds 8 Mbit/s and
    // 100 ms.
    d.reach_probe_bw();
    let idx = d.cc.cycle_index();
    assert_eq!([var(&d, "bw"), var(&d, "max_bw"), var(&d, "lt_bw")], [8e6, 8e6, 0.0]);
    assert_eq!(var(&d, "min_rtt"), 0.1);
    assert_eq!([var(&d, "mode"), var(&d, "cycle_idx"), var(&d, "pacing_gain")], [2.0, idx as f64, PACING_GAIN[idx]]);
    assert_eq!([var(&d, "cwnd_gain"), var(&d, "full_bw_reached"), var(&d, "lt_use_bw")], [2.0, 1.0, 0.0]);
    assert_eq!(var(&d, "rounds"), d.cc.round_count() as f64);
    assert!(d.cc.round_count() >= 4);
    for v in VARS {
        assert!(d.cc.var(v.name).is_some(), "{}", v.name);
    }
    assert_eq!(d.cc.var("srtt"), None);
}
