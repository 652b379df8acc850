//! Per-packet processing at nodes (net/processing.rs), end to end: a UDP packet train
//! a -> R -> b through a router with processing. Oracles: the same run without processing
//! (the base one-way delay), the uniform distribution's mean and support, and FIFO order.
//! Packet conservation, counting packets held in processing stages, is asserted by the engine
//! after every `run_until` in debug builds and checked explicitly here.

mod common;

use std::collections::BTreeMap;

use ccsim_core::config::{AlgoSpec, Config, FlowSpec, NodeSpec, TraceSpec};
use ccsim_core::params::ParamValue;
use ccsim_core::sim::time::{MS, SEC, US};
use ccsim_core::{Results, Simulation};
use common::*;

fn processing(delay: u64, jitter: u64, dist: &str) -> Option<BTreeMap<String, ParamValue>> {
    Some(BTreeMap::from([
        ("delay".to_string(), ParamValue::Int(delay as i64)),
        ("jitter".to_string(), ParamValue::Int(jitter as i64)),
        ("distribution".to_string(), ParamValue::name(dist)),
    ]))
}

/// Hosts a, b and router R (a -- R -- b, 100 Mb/s, 1 ms each), a UDP flow a -> b of 100 B
/// messages every `period` until `stop`; message log on.
fn chain(period: u64, stop: u64, seed: u64) -> Config {
    let d = dir(100_000_000, MS, droptail(100_000));
    Config {
        duration_ns: stop + SEC,
        warmup_ns: 0,
        seed,
        nodes: vec![NodeSpec::host("a"), NodeSpec::router("R"), NodeSpec::host("b")],
        links: vec![link(0, 1, d.clone()), link(1, 2, d)],
        flows: vec![FlowSpec {
            name: None,
            src: 0,
            dst: 2,
            transport: AlgoSpec::named("udp"),
            cc: None,
            app: AlgoSpec::named("periodic")
                .with("size", ParamValue::Int(100))
                .with("period", ParamValue::Int(period as i64)),
            start_ns: 0,
            start_max_ns: None,
            stop_ns: Some(stop),
            group: None,
        }],
        trace: TraceSpec { messages: true, ..TraceSpec::default() },
        bottleneck: None,
        jain_flows: None,
        control: Vec::new(),
        workloads: Vec::new(),
    }
}

/// Per message in index order: (delivered time, one-way delay), in ns.
fn deliveries(r: &Results) -> Vec<(f64, f64)> {
    let log = r.messages.as_ref().expect("message log");
    let mut rows: Vec<(u64, f64, f64)> = (0..log.index.len())
        .map(|i| (log.index[i], log.delivered_s[i].expect("nothing is lost") * 1e9, log.delay_s[i].unwrap() * 1e9))
        .collect();
    rows.sort_by_key(|r| r.0);
    assert!(rows.iter().enumerate().all(|(k, r)| r.0 == k as u64), "every message logged once");
    rows.into_iter().map(|(_, t, d)| (t, d)).collect()
}

#[test]
fn far_apart_packets_gain_delay_plus_half_the_uniform_jitter_on_average() {
    // 2000 packets 5 ms apart: the previous release is 5 ms in the past, far beyond the
    // 70 us a packet can spend in processing, so no packet waits for another and each gains
    // exactly delay + X, X ~ U[0, 50 us].
    let base_cfg = chain(5 * MS, 10 * SEC, 1);
    let base = deliveries(&run(&base_cfg));
    let d0 = base[0].1;
    assert!(base.iter().all(|&(_, d)| d == d0), "without processing every packet has the same delay");

    let mut cfg = base_cfg.clone();
    cfg.nodes[1].processing = processing(20 * US, 50 * US, "uniform");
    let got = deliveries(&run(&cfg));
    assert_eq!(got.len(), 2000);
    let extra: Vec<f64> = got.iter().map(|&(_, d)| d - d0).collect();
    // Support [delay, delay + jitter] (draws rounded to whole ns; delays read back through
    // f64 seconds, so allow 1 ns).
    assert!(extra.iter().all(|&x| (20_000.0 - 1.0..=70_000.0 + 1.0).contains(&x)), "{extra:?}");
    // Mean delay + jitter/2 = 45 us; sd of U[0, 50 us] is 14.43 us, of the mean of 2000 draws
    // 0.323 us: 5 sd = 1.6 us.
    let mean = extra.iter().sum::<f64>() / extra.len() as f64;
    assert!((mean - 45_000.0).abs() < 1_615.0, "mean extra delay {mean} ns");
    // Not degenerate: the draws spread over the interval (sample sd near 14.43 us).
    let sd = (extra.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (extra.len() - 1) as f64).sqrt();
    assert!((sd - 14_434.0).abs() < 1_500.0, "sd {sd}");
}

#[test]
fn close_packets_are_never_reordered_by_jitter() {
    // 100 B every 2 us (the 100 Mb/s link serializes one in 10.24 us, so they leave a's queue
    // back to back 10.24 us apart) through an exponential jitter of mean 200 us: without the
    // FIFO rule about half of all neighbours would swap.
    let mut cfg = chain(2 * US, 20 * MS, 2);
    cfg.nodes[1].processing = processing(0, 200 * US, "exponential");
    let got = deliveries(&run(&cfg));
    assert!(got.len() > 9_000, "{}", got.len());
    assert!(got.windows(2).all(|w| w[0].0 <= w[1].0), "messages delivered in the order they were sent");
}

#[test]
fn hosts_process_what_they_send_and_what_they_receive() {
    // Fixed 7 us at a (on sending) and 11 us at b (on receiving); none at the router.
    let base = deliveries(&run(&chain(5 * MS, SEC, 3)));
    let mut cfg = chain(5 * MS, SEC, 3);
    cfg.nodes[0].processing = processing(7 * US, 0, "uniform");
    cfg.nodes[2].processing = processing(11 * US, 0, "uniform");
    let got = deliveries(&run(&cfg));
    assert_eq!(got.len(), base.len());
    for (g, b) in got.iter().zip(&base) {
        assert!((g.1 - b.1 - 18_000.0).abs() < 1.0, "{} vs {}", g.1, b.1);
    }
}

#[test]
fn packets_held_in_processing_are_counted_by_conservation() {
    // Stop in the middle of a train whose packets each spend 1 ms in the router.
    let mut cfg = chain(100 * US, 50 * MS, 4);
    cfg.nodes[1].processing = processing(MS, 0, "uniform");
    let mut sim = Simulation::new(&cfg).unwrap();
    sim.run_until(30 * MS);
    // About 10 packets are inside the router now; the books balance only if they count.
    sim.check_conservation().expect("conservation with packets in processing");
    let r = sim.results();
    let f = &r.flows[0];
    assert!(f.packets_sent - f.packets_received >= 5, "{} sent, {} received", f.packets_sent, f.packets_received);
}

#[test]
fn same_seed_same_jitter_and_bad_processing_is_a_configuration_error() {
    let mut cfg = chain(MS, 200 * MS, 5);
    cfg.nodes[1].processing = processing(0, 100 * US, "exponential");
    assert_eq!(deliveries(&run(&cfg)), deliveries(&run(&cfg)));
    let mut other = cfg.clone();
    other.seed = 6;
    assert_ne!(deliveries(&run(&cfg)), deliveries(&run(&other)));

    cfg.nodes[1].processing = processing(0, 100 * US, "gaussian");
    let err = Simulation::new(&cfg).err().expect("unknown distribution");
    assert_eq!(err.field, "nodes[1].processing.distribution");
    let mut bad = processing(0, 0, "uniform").unwrap();
    bad.insert("jitter".into(), ParamValue::Int(-1));
    cfg.nodes[1].processing = Some(bad);
    assert_eq!(Simulation::new(&cfg).err().expect("negative jitter").field, "nodes[1].processing.jitter");
}
