//! A DropTail queue before a loss-free wire is *scheduled*: each packet's transmission is
//! fixed when it arrives and its departure is counted lazily (`qdisc` module docs). A wire
//! with a loss probability far too small to ever draw a loss takes the packet-by-packet path
//! instead (a transmitter event per packet, packets into the buffer and out again). The two
//! must give the same run: every statistic of every queue and flow and every sampled trace
//! point, with a packet limit and with a byte limit, before and after the warm-up boundary.
//!
//! One rule differs, and the scenario keeps it out of play: when a transmission starts at the
//! very nanosecond a packet arrives, the scheduled queue counts the departure first, while
//! the packet-by-packet path takes the two events in the order they were scheduled. Both are
//! valid orders for simultaneous events, but ACK clocking makes such coincidences common
//! with round rates and delays (arrival times inherit the bottleneck's departure lattice), so
//! the routers and senders here add a small random processing delay (`net/processing.rs`),
//! which puts arrivals at random nanoseconds. `qdisc`'s unit test covers the coincidences.

mod common;

use std::collections::BTreeMap;

use ccsim_core::config::TraceSpec;
use ccsim_core::params::{ParamValue, Size};
use ccsim_core::sim::time::{MS, SEC};
use ccsim_core::config::AlgoSpec;
use common::*;

/// Six NewReno flows through a 20 Mbit/s bottleneck whose DropTail buffer overflows, with
/// every link lossless or every link "lossy" with probability `loss`.
///
fn scenario(limit: Size, loss: f64) -> ccsim_core::config::Config {
    let queue = AlgoSpec::named("droptail").with("limit", ParamValue::Size(limit));
    let mut cfg = dumbbell(6, 20_000_000, 2 * MS, queue, 100_000_000, |i| (1 + 7 * i as u64) * MS);
    let jitter = Some(BTreeMap::from([
        ("delay".to_string(), ParamValue::Int(1_000)),
        ("jitter".to_string(), ParamValue::Int(3_000)),
        ("distribution".to_string(), ParamValue::name("exponential")),
    ]));
    for node in &mut cfg.nodes {
        node.processing = jitter.clone();
    }
    cfg.duration_ns = 12 * SEC;
    cfg.warmup_ns = 2 * SEC + 123_457;
    cfg.trace = TraceSpec { interval_ns: Some(7 * MS), queues: vec!["A->B".into(), "s0->A".into()], ..TraceSpec::default() };
    for l in &mut cfg.links {
        l.ab.loss = loss;
        l.ba.loss = loss;
    }
    for i in 0..6 {
        let mut f = bulk_tcp(6, i, "newreno");
        f.start_max_ns = Some(SEC);
        cfg.flows.push(f);
    }
    cfg
}

fn same_run(limit: Size) {
    let scheduled = run(&scenario(limit, 0.0));
    let packet_by_packet = run(&scenario(limit, 1e-300));
    let q = &scheduled.queues[0];
    assert!(q.drops > 50 && q.mean_len_pkts > 5.0, "the bottleneck must queue and drop: {q:?}");
    assert!(scheduled.events < packet_by_packet.events, "no transmitter events on scheduled links");
    // Everything but the event count.
    let json = |r: &ccsim_core::Results| {
        let mut v = serde_json::to_value(r).unwrap();
        v["events"] = 0.into();
        v
    };
    let differences = differences(&json(&scheduled), &json(&packet_by_packet), "");
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// Paths where two JSON values differ (the first few), for a readable failure.
fn differences(a: &serde_json::Value, b: &serde_json::Value, path: &str) -> Vec<String> {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.iter().flat_map(|(k, v)| differences(v, y.get(k).unwrap_or(&Value::Null), &format!("{path}.{k}"))).take(10).collect()
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            x.iter().zip(y).enumerate().flat_map(|(i, (u, v))| differences(u, v, &format!("{path}[{i}]"))).take(10).collect()
        }
        _ if a == b => Vec::new(),
        _ => vec![format!("{path}: {a} (scheduled) != {b} (packet by packet)")],
    }
}

#[test]
fn a_scheduled_droptail_queue_gives_the_packet_by_packet_run_with_a_packet_limit() {
    same_run(Size::Packets(40));
}

#[test]
fn a_scheduled_droptail_queue_gives_the_packet_by_packet_run_with_a_byte_limit() {
    same_run(Size::Bytes(50_000));
}



/// Regression: a zero-delay source link at the bottleneck's own rate (Piotrowska's Access
/// Link, N1) delivers packets at the very nanoseconds the bottleneck starts transmissions.
/// Had the scheduled queue counted such a departure before those arrivals, the locked-in
/// packets would always find the place just freed: in this scenario (90 flows from three
/// sources, a 100-packet buffer) two of the three sources got no packet through after their
/// first window. Every source must get a share of the bottleneck.
#[test]
fn a_phase_locked_source_does_not_lock_the_other_sources_out() {
    let dir = |delay_ms: u64, limit: u64| {
        serde_json::json!({"rate_bps": 100_000_000u64, "delay_ns": delay_ms * MS, "loss": 0.0,
                           "queue": {"kind": "droptail", "params": {"limit": {"packets": limit}}}})
    };
    let names = ["s0", "s1", "s2", "A", "B", "r0", "r1", "r2"];
    let nodes: Vec<_> = names.iter().map(|n| serde_json::json!({"name": n, "kind": if n.len() == 1 { "router" } else { "host" }})).collect();
    let mut links = vec![serde_json::json!({"a": 3, "b": 4, "ab": dir(2, 100), "ba": dir(2, 1000)})];
    for (i, d) in [0, 12, 25].into_iter().enumerate() {
        links.push(serde_json::json!({"a": i, "b": 3, "ab": dir(d, 1000), "ba": dir(d, 1000)}));
    }
    for (j, d) in [2, 37, 75].into_iter().enumerate() {
        links.push(serde_json::json!({"a": 4, "b": 5 + j, "ab": dir(d, 1000), "ba": dir(d, 1000)}));
    }
    let tcp = serde_json::json!({"kind": "tcp", "params": {"mss": 1448, "header": 52, "sack": true, "init_cwnd": 1,
        "delack_count": 2, "min_rto": SEC, "initial_rto": SEC, "lost_retransmit": false, "rwnd": {"bytes": 4u64 << 20}}});
    let mut flows = Vec::new();
    for src in 0..3 {
        for dst in 5..8 {
            for _ in 0..10 {
                flows.push(serde_json::json!({"src": src, "dst": dst, "transport": tcp, "cc": {"kind": "newreno"},
                    "app": {"kind": "bulk"}, "start_ns": 0, "start_max_ns": 2 * SEC}));
            }
        }
    }
    let cfg = serde_json::json!({"duration_ns": 8 * SEC, "warmup_ns": 4 * SEC, "seed": 1, "nodes": nodes,
        "links": links, "flows": flows, "bottleneck": "A->B"});
    let cfg: ccsim_core::config::Config = serde_json::from_value(cfg).expect("valid configuration");
    let r = run(&cfg);
    for src in ["s0", "s1", "s2"] {
        let sent = r.queues.iter().find(|q| q.name == format!("{src}->A")).unwrap().arrivals;
        assert!(sent > 3_000, "{src} sent {sent} packets in the measured 4 s (locked out?)");
    }
}
