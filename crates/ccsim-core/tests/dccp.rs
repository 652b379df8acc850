//! DCCP end to end: CCID 3 against the TFRC equation under random loss, CCID 2 under
//! congestion, and the transport's configuration errors.

mod common;

use ccsim_core::config::{AlgoSpec, Config, FlowSpec, NodeKind, NodeSpec, TraceSpec};
use ccsim_core::dccp::tfrc::x_bps;
use ccsim_core::params::ParamValue;
use ccsim_core::sim::time::{MS, SEC};
use ccsim_core::{Results, Simulation};
use common::*;

fn dccp(ccid: i64) -> AlgoSpec {
    AlgoSpec::named("dccp").with("ccid", ParamValue::Int(ccid))
}

/// Hosts a and b joined by a link of `rate` and one-way `delay`; a -> b loses `loss` of its
/// packets at random. One DCCP flow a -> b with a bulk backlog.
fn lossy_path(ccid: i64, rate: u64, delay: u64, loss: f64, duration: u64, warmup: u64, seed: u64) -> Config {
    let mut fwd = dir(rate, delay, droptail(1000));
    fwd.loss = loss;
    Config {
        duration_ns: duration,
        warmup_ns: warmup,
        seed,
        nodes: vec![
            NodeSpec { name: "a".into(), kind: NodeKind::Host, processing: None },
            NodeSpec { name: "b".into(), kind: NodeKind::Host, processing: None },
        ],
        links: vec![ccsim_core::config::LinkSpec {
            a: 0,
            b: 1,
            ab: fwd,
            ba: dir(rate, delay, droptail(1000)),
            schedule: Vec::new(),
        }],
        flows: vec![FlowSpec {
            name: None,
            src: 0,
            dst: 1,
            transport: dccp(ccid),
            cc: None,
            app: AlgoSpec::named("bulk"),
            start_ns: 0,
            start_max_ns: None,
            stop_ns: None,
            group: None,
        }],
        trace: TraceSpec { messages: true, ..TraceSpec::default() },
        bottleneck: Some("a->b".into()),
        jain_flows: None,
        control: Vec::new(),
        workloads: Vec::new(),
    }
}

/// The loss event rate of a run by RFC 5348 §5.2's definition, from the message log: a lost
/// datagram starts a new loss event when it was sent more than one RTT after the first loss
/// of the current event; the rate is events per datagram sent. Only datagrams written in
/// [from, to) count (for a backlogged sender, written = sent).
fn loss_event_rate(r: &Results, rtt: f64, from: f64, to: f64) -> (f64, u64, u64) {
    let log = r.messages.as_ref().expect("message log");
    let (mut events, mut sent) = (0u64, 0u64);
    let mut event_start = f64::NEG_INFINITY;
    for i in 0..log.flow.len() {
        let t = log.created_s[i];
        if t < from || t >= to {
            continue;
        }
        sent += 1;
        if log.lost[i] && t > event_start + rtt {
            events += 1;
            event_start = t;
        }
    }
    (events as f64 / sent as f64, events, sent)
}

#[test]
fn ccid3_settles_near_the_tfrc_equation_under_random_loss() {
    // A backlogged CCID 3 flow over a 100 ms round trip with random loss and no queueing: its
    // long-run sending rate should be the RFC 5348 equation at the path's RTT and the loss
    // event rate it experiences. The loss event rate is recomputed here from the message log
    // by the RFC's definition (independently of the receiver's loss history).
    //
    // Tolerance 10 %: the sender follows X_eq(p_est), where p_est is the weighted mean of the
    // last 8 loss intervals (effective sample size (sum w)^2 / sum w^2 = 36 / 5.2 = 6.9), so
    // with geometric intervals p_est has a coefficient of variation of about 1/sqrt(6.9) = 0.38
    // and X (proportional to sqrt(I_mean)) about 0.19. Over 150 s and some 150-250 loss events
    // (about 20 independent histories) the mean's standard error is about 0.19/sqrt(20) = 4 %;
    // Jensen's bias (E sqrt(I) < sqrt(E I), about CV^2/8 = 2 %) and the open interval's max rule
    // (which favours longer intervals) are of the same few-percent order.
    for (loss, seed) in [(0.01, 1), (0.03, 2), (0.01, 3)] {
        let (duration, warmup) = (200 * SEC, 50 * SEC);
        let r = run(&lossy_path(3, 10_000_000, 50 * MS, loss, duration, warmup, seed));
        let f = &r.flows[0];
        assert_eq!(f.cc, "ccid3");
        let rtt = f.rtt_mean_s.unwrap();
        // The path: 100 ms of propagation plus 1.2 ms to serialize a 1500 B packet.
        assert!((rtt - 0.1012).abs() < 0.002, "rtt {rtt}");
        let (p, events, sent) = loss_event_rate(&r, rtt, 50.0, 199.0);
        assert!(events > 100, "{events} loss events");
        let s = 1464.0;
        let expected = x_bps(s, rtt, p);
        let rate = f.packets_sent as f64 * s / 150.0;
        eprintln!(
            "loss {loss} seed {seed}: rtt {rtt:.4} p_event {p:.5} ({events} events / {sent}) X_eq {expected:.0} B/s, sent {rate:.0} B/s, ratio {:.3}",
            rate / expected
        );
        assert!((rate / expected - 1.0).abs() < 0.10, "sent {rate:.0} B/s against X_eq {expected:.0} B/s");
        assert_eq!(f.retransmissions, 0);
    }
}

#[test]
fn ccid2_never_sends_a_datagram_twice_and_halves_on_loss() {
    // A backlogged CCID 2 flow with 2 % random loss: every datagram is a message entered in
    // the ledger when sent, so messages = packets sent, none is delivered twice, none is
    // retransmitted, and losses are not repaired.
    let r = run(&lossy_path(2, 10_000_000, 20 * MS, 0.02, 60 * SEC, 0, 4));
    let f = &r.flows[0];
    assert_eq!(f.cc, "ccid2");
    assert_eq!(f.retransmissions, 0);
    assert_eq!(f.packets_received, f.messages_received, "a datagram arrived twice");
    assert_eq!(f.messages_received + f.messages_lost_network + f.messages_pending, f.packets_sent);
    // Every message lost on the network was a datagram lost on the link (the ones lost behind
    // datagrams still in flight at the end are still pending).
    let dropped = r.queues[0].link_losses;
    assert!(f.messages_lost_network <= dropped && dropped <= f.messages_lost_network + f.messages_pending);
    // Each loss event halves the window at most once per window of data: many halvings, some
    // fewer than losses.
    assert!(f.fast_recoveries > 50, "{}", f.fast_recoveries);
    assert!(f.fast_recoveries <= r.queues[0].link_losses);
    // The window stays near the Mathis et al. figure, 1.22 / sqrt(0.02) = 8.6 packets per RTT
    // (41 ms): about 300 kB/s; a rate far above would mean losses were ignored.
    let rate = f.packets_sent as f64 * 1464.0 / 60.0;
    eprintln!("ccid2: {rate:.0} B/s, {} halvings, {} losses, {} timeouts", f.fast_recoveries, dropped, f.timeouts);
    assert!(rate > 100_000.0 && rate < 600_000.0, "{rate}");
}

#[test]
fn dccp_rejects_a_congestion_control_and_bad_options() {
    let mut cfg = lossy_path(2, 10_000_000, MS, 0.0, SEC, 0, 1);
    cfg.flows[0].cc = Some(AlgoSpec::named("newreno"));
    assert_eq!(Simulation::new(&cfg).err().unwrap().field, "flows[0].cc");
    let mut cfg = lossy_path(2, 10_000_000, MS, 0.0, SEC, 0, 1);
    cfg.flows[0].transport = dccp(4);
    assert_eq!(Simulation::new(&cfg).err().unwrap().field, "flows[0].transport.ccid");
    cfg.flows[0].transport = AlgoSpec::named("dccp").with("bogus", ParamValue::Int(1));
    assert_eq!(Simulation::new(&cfg).err().unwrap().field, "flows[0].transport.bogus");
    cfg.flows[0].transport = AlgoSpec::named("sctp");
    let e = Simulation::new(&cfg).err().unwrap();
    assert_eq!(e.field, "flows[0].transport.kind");
    assert!(e.message.contains("dccp"), "{e}");
}
