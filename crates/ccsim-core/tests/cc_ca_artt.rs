//! CA-ARTT end to end on a 10 Mbit/s dumbbell (RTT 40 ms, BDP 33 packets, 200-packet
//! buffer), and the per-flow RTT sample log that feeds the ARIMA tooling.

mod common;

use ccsim_core::config::{AlgoSpec, Config, TraceSpec};
use ccsim_core::params::ParamValue;
use ccsim_core::sim::time::{MS, SEC};
use ccsim_core::{Results, Simulation};
use common::*;

fn dumbbell_10m(n: usize, cc: AlgoSpec) -> Config {
    let mut cfg = dumbbell(n, 10_000_000, 10 * MS, droptail(200), 100_000_000, |i| (5 + 5 * i as u64) * MS);
    cfg.duration_ns = 60 * SEC;
    cfg.warmup_ns = 10 * SEC;
    for i in 0..n {
        let mut f = bulk_tcp(n, i, "ca-artt");
        f.cc = Some(cc.clone());
        cfg.flows.push(f);
    }
    cfg
}

fn run(cfg: &Config) -> (Simulation, Results) {
    let mut sim = Simulation::new(cfg).expect("valid config");
    sim.run();
    sim.check_conservation().expect("conservation");
    let r = sim.results();
    (sim, r)
}

#[test]
fn ca_artt_fills_a_10_mbps_link() {
    for n in [1, 3] {
        let (_, r) = run(&dumbbell_10m(n, AlgoSpec::named("ca-artt")));
        let util = r.utilization.unwrap();
        eprintln!(
            "{n} ca-artt flow(s): utilization {util:.4}, mean queue {:.1}, drops {}",
            r.queues[0].mean_len_pkts, r.queues[0].drops
        );
        assert!(util > 0.8, "{n} flows: utilization {util}");
        assert!(r.flows.iter().all(|f| f.goodput_bps > 0.0));
    }
}

#[test]
fn eq33_lets_the_queue_grow_where_the_vegas_form_keeps_it_small() {
    // With a steady RTT the forecast approaches the measured RTT and eq. 33 approaches 0, so
    // the default CA-ARTT grows until the buffer overflows (the paper's Fig. 5: it "stays in
    // slow start" longer than Vegas); with eq33 = false the estimator is Vegas's with ARTT
    // in place of the RTT and the queue stays at a few packets.
    let (_, paper) = run(&dumbbell_10m(1, AlgoSpec::named("ca-artt")));
    let vegas_form = AlgoSpec::named("ca-artt").with("eq33", ParamValue::Bool(false));
    let (sim, vf) = run(&dumbbell_10m(1, vegas_form));
    eprintln!(
        "eq33: queue {:.1}, drops {}; vegas form: queue {:.1}, max {}, drops {}",
        paper.queues[0].mean_len_pkts,
        paper.queues[0].drops,
        vf.queues[0].mean_len_pkts,
        vf.queues[0].max_len_pkts,
        vf.queues[0].drops
    );
    assert!(paper.queues[0].mean_len_pkts > 50.0);
    assert!(paper.queues[0].drops > 0);
    assert!(vf.utilization.unwrap() > 0.8);
    assert!(vf.queues[0].mean_len_pkts < 10.0);
    assert_eq!(sim.flow_stats(0).total_lost, 0);
}

#[test]
fn the_rtt_log_holds_every_sample_of_every_flow_in_time_order() {
    let mut cfg = dumbbell(2, 10_000_000, 10 * MS, droptail(50), 100_000_000, |i| (5 + 5 * i as u64) * MS);
    cfg.duration_ns = 5 * SEC;
    cfg.flows.push(bulk_tcp(2, 0, "ca-artt"));
    cfg.flows.push(bulk_tcp(2, 1, "newreno"));
    let (_, r) = run(&cfg);
    assert!(r.rtt_samples.is_none(), "off unless asked for");

    cfg.trace = TraceSpec { rtt: true, ..TraceSpec::default() };
    let (_, r) = run(&cfg);
    let log = r.rtt_samples.as_ref().expect("trace.rtt = true");
    assert_eq!(log.time_s.len(), log.flow.len());
    assert_eq!(log.time_s.len(), log.rtt_s.len());
    assert!(log.time_s.windows(2).all(|w| w[0] <= w[1]));
    // No warm-up here, so the log and the per-flow counters cover the same samples.
    for f in &r.flows {
        let mine: Vec<f64> = log.flow.iter().zip(&log.rtt_s).filter(|(g, _)| **g == f.id).map(|(_, x)| *x).collect();
        assert_eq!(mine.len() as u64, f.rtt_samples, "flow {}", f.id);
        let mean = mine.iter().sum::<f64>() / mine.len() as f64;
        assert!((mean - f.rtt_mean_s.unwrap()).abs() < 1e-9);
        let min = mine.iter().copied().fold(f64::INFINITY, f64::min);
        assert_eq!(Some(min), f.rtt_min_s);
        // Propagation alone is 40 ms (flow 0) and 60 ms (flow 1).
        assert!(min >= 0.040 + 0.020 * f.id as f64);
    }
    // Logging changes nothing else.
    cfg.trace.rtt = false;
    let (_, without) = run(&cfg);
    assert_eq!(serde_json::to_string(&without.flows).unwrap(), serde_json::to_string(&r.flows).unwrap());
}
