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


