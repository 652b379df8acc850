//! TCP Vegas end to end: one flow on a 10 Mbit/s dumbbell with a 200-packet DropTail buffer
//! (RTT 40 ms, BDP 33 packets of 1500 B, so the buffer is six BDPs).

mod common;

use ccsim_core::config::{AlgoSpec, Config};
use ccsim_core::params::ParamValue;
use ccsim_core::sim::time::{MS, SEC};
use ccsim_core::{Results, Simulation};
use common::*;

fn one_flow(cc: AlgoSpec) -> Config {
    let mut cfg = dumbbell(1, 10_000_000, 10 * MS, droptail(200), 100_000_000, |_| 5 * MS);
    cfg.duration_ns = 60 * SEC;
    cfg.warmup_ns = 10 * SEC; // slow start is over within a second
    let mut f = bulk_tcp(1, 0, "vegas");
    f.cc = Some(cc);
    cfg.flows.push(f);
    cfg
}

fn run(cfg: &Config) -> (Simulation, Results) {
    let mut sim = Simulation::new(cfg).expect("valid config");
    sim.run();
    sim.check_conservation().expect("conservation");
    let r = sim.results();
    (sim, r)
}

/// Mean backlog at the bottleneck as Vegas sees it: the queue statistic excludes the packet
/// in transmission, which Vegas's RTT includes (a packet waits for it); the link is busy all
/// the time in these runs (utilization ~1), so one packet is added.
fn backlog(r: &Results) -> f64 {
    r.queues[0].mean_len_pkts + r.utilization.unwrap()
}

#[test]
fn a_vegas_flow_keeps_alpha_to_beta_packets_queued_and_never_fills_the_buffer() {
    let (sim, r) = run(&one_flow(AlgoSpec::named("vegas")));
    let q = &r.queues[0];
    let util = r.utilization.unwrap();
    let b = backlog(&r);
    eprintln!(
        "vegas: utilization {util:.4}, mean queue {:.2} (backlog {b:.2}), max {}, drops {}",
        q.mean_len_pkts, q.max_len_pkts, q.drops
    );
    assert!(util > 0.8, "utilization {util}");
    // alpha = 2, beta = 4; 0.5 packet of tolerance for the ACK clock (delayed ACKs release
    // segments in pairs, so the queue breathes by one packet within a round trip).
    assert!((2.0 - 0.5..=4.0 + 0.5).contains(&b), "backlog {b}");
    // Never more than a few packets: the 200-packet buffer is never approached, nothing is
    // lost in the whole run (slow start included) and nothing is retransmitted.
    assert!(q.max_len_pkts <= 10, "max queue {}", q.max_len_pkts);
    assert_eq!(sim.flow_stats(0).total_lost, 0);
    assert_eq!(r.flows[0].retransmissions, 0);
}

#[test]
fn the_standing_queue_follows_alpha_and_beta() {
    // With alpha = 6, beta = 8 the flow keeps 6..8 packets queued instead of 2..4.
    let cc = AlgoSpec::named("vegas").with("alpha", ParamValue::Float(6.0)).with("beta", ParamValue::Float(8.0));
    let (_, r) = run(&one_flow(cc));
    let b = backlog(&r);
    eprintln!("vegas alpha 6 beta 8: utilization {:.4}, backlog {b:.2}", r.utilization.unwrap());
    assert!((6.0 - 0.5..=8.0 + 0.5).contains(&b), "backlog {b}");
    assert!(r.utilization.unwrap() > 0.8);
    assert_eq!(r.queues[0].drops, 0);
}

#[test]
fn linux_style_slow_start_also_settles_without_loss() {
    let cc = AlgoSpec::named("vegas").with("paper_slow_start", ParamValue::Bool(false));
    let (sim, r) = run(&one_flow(cc));
    let b = backlog(&r);
    eprintln!("vegas, Linux slow start: utilization {:.4}, backlog {b:.2}", r.utilization.unwrap());
    assert!((1.5..=4.5).contains(&b), "backlog {b}");
    assert!(r.utilization.unwrap() > 0.8);
    assert_eq!(sim.flow_stats(0).total_lost, 0);
}

#[test]
fn three_vegas_flows_share_the_link_with_a_small_queue() {
    // Three flows with RTTs 40, 60 and 80 ms starting together (so that every baseRTT is
    // measured on an empty queue; a latecomer would take the standing queue for propagation
    // delay, Vegas's known baseRTT error). Each keeps 2..4 packets queued: the queue holds
    // 6..12 and the link stays full. All see the same queueing delay d, so rate_i = diff_i / d
    // with diff_i in [alpha, beta]: rates differ by at most beta/alpha = 2, for which the
    // worst Jain index of three flows is 16/18 = 0.89 (rates 1, 1, 2), whatever the RTTs.
    let mut cfg = dumbbell(3, 10_000_000, 10 * MS, droptail(200), 100_000_000, |i| (5 + 5 * i as u64) * MS);
    cfg.duration_ns = 60 * SEC;
    cfg.warmup_ns = 10 * SEC;
    for i in 0..3 {
        cfg.flows.push(bulk_tcp(3, i, "vegas"));
    }
    let (sim, r) = run(&cfg);
    let b = backlog(&r);
    eprintln!(
        "3 vegas: backlog {b:.2}, jain {:?}, goodputs {:?}",
        r.jain_index,
        r.flows.iter().map(|f| f.goodput_bps / 1e6).collect::<Vec<_>>()
    );
    assert!(r.utilization.unwrap() > 0.8);
    assert!((3.0 * 2.0 - 1.5..=3.0 * 4.0 + 1.5).contains(&b), "backlog {b}");
    assert!((0..3).all(|f| sim.flow_stats(f).total_lost == 0));
    assert!(r.jain_index.unwrap() > 0.85);
}
