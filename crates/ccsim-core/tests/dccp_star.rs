//! Paper 001 (Dedu, Bise, Bourgeois): three sensors -> router -> controller, with UDP, TCP and
//! DCCP (CCID 2 and 3), and the per-sensor message accounting of its Table I.

mod common;

use ccsim_core::config::{AlgoSpec, Config, FlowSpec, LinkSpec, NodeKind, NodeSpec, TraceSpec};
use ccsim_core::params::ParamValue;
use ccsim_core::sim::time::{MS, SEC};
use ccsim_core::Results;
use common::*;

/// Node indices of the star.
const ROUTER: u32 = 0;
const CONTROLLER: u32 = 1;

/// The star of paper 001: sensors at 1 Mb/s, the router -> controller link at 256 kb/s with a
/// 50-packet DropTail queue; sensor i sends 1024 B every 50 ms from i * 100 ms with a send
/// buffer of `buffer` bytes, and the controller answers every message with 200 B over UDP.
fn dedu(transport: AlgoSpec, buffer: i64, duration: u64) -> Config {
    let mut nodes = vec![
        NodeSpec { name: "router".into(), kind: NodeKind::Router, processing: None },
        NodeSpec { name: "controller".into(), kind: NodeKind::Host, processing: None },
    ];
    let mut links = vec![LinkSpec {
        a: ROUTER,
        b: CONTROLLER,
        ab: dir(256_000, MS, droptail(50)),
        ba: dir(256_000, MS, droptail(50)),
        schedule: Vec::new(),
    }];
    let mut flows = Vec::new();
    for i in 0..3u32 {
        nodes.push(NodeSpec { name: format!("sensor{i}"), kind: NodeKind::Host, processing: None });
        links.push(link(2 + i, ROUTER, dir(1_000_000, MS, droptail(50))));
        flows.push(FlowSpec {
            name: Some(format!("sensor{i}")),
            src: 2 + i,
            dst: CONTROLLER,
            transport: transport.clone(),
            cc: None,
            app: AlgoSpec::named("periodic")
                .with("size", ParamValue::Int(1024))
                .with("period", ParamValue::Int((50 * MS) as i64))
                .with("buffer", ParamValue::Int(buffer)),
            start_ns: i as u64 * 100 * MS,
            start_max_ns: None,
            stop_ns: None,
            group: None,
        });
    }
    for i in 0..3u32 {
        flows.push(FlowSpec {
            name: Some(format!("reply{i}")),
            src: CONTROLLER,
            dst: 2 + i,
            transport: AlgoSpec::named("udp"),
            cc: None,
            app: AlgoSpec::named("reply").with("to", ParamValue::Int(i as i64)).with("size", ParamValue::Int(200)),
            start_ns: 0,
            start_max_ns: None,
            stop_ns: None,
            group: None,
        });
    }
    Config {
        duration_ns: duration,
        warmup_ns: 0,
        seed: 1,
        nodes,
        links,
        flows,
        trace: TraceSpec { events: true, messages: true, ..TraceSpec::default() },
        bottleneck: Some("router->controller".into()),
        jain_flows: None,
        control: Vec::new(),
        workloads: Vec::new(),
    }
}

fn dccp(ccid: i64) -> AlgoSpec {
    AlgoSpec::named("dccp").with("ccid", ParamValue::Int(ccid))
}

/// Table I's identity for sensor flow `f`: every generated message is lost on the sensor,
/// lost on the network, received, or still on its way (in the sender's buffer or the network).
fn assert_adds_up(r: &Results, f: usize) {
    let s = &r.flows[f];
    assert_eq!(
        s.messages_generated,
        s.messages_lost_at_sender + s.messages_lost_network + s.messages_received + s.messages_pending,
        "{}: {s:?}",
        s.name
    );
}

#[test]
fn udp_sensor_packets_that_meet_a_full_router_buffer_are_lost_on_the_network() {
    let r = run(&dedu(AlgoSpec::named("udp"), 20 * 1024, 60 * SEC));
    let log = r.queue_events.as_ref().unwrap();
    // Every drop is a DropTail overflow of the router's queue towards the controller.
    assert!(!log.time_s.is_empty());
    assert!(log.queue.iter().all(|q| q == "router->controller"));
    assert!(log.event.iter().all(|&e| e == "drop_overflow"));
    // 3 x 1024 B every 50 ms is 60 packets/s into a link that serves 256 kb/s / (1052 B * 8) =
    // 30.4: the 50-packet queue fills after about 51 / (60 - 30.4) = 1.7 s, plus the sensors'
    // staggered starts (the paper: losses start at 1.95 s).
    let first = log.time_s[0];
    assert!((1.6..2.0).contains(&first), "first drop at {first} s");
    let mut received = 0;
    for f in 0..3 {
        let s = &r.flows[f];
        assert_adds_up(&r, f);
        assert_eq!(s.messages_lost_at_sender, 0, "UDP never holds a message back");
        assert_eq!(s.retransmissions, 0);
        // Messages lost on the network are this sensor's drops at the router; drops behind
        // packets still in flight at the end are still pending.
        let drops = log.flow.iter().filter(|&&g| g == f as u32).count() as u64;
        assert_eq!(drops, s.queue_drops);
        assert!(s.messages_lost_network <= drops && drops <= s.messages_lost_network + s.messages_pending, "{s:?}");
        // What is pending fits in the network: the queue (50) and the links.
        assert!(s.messages_pending <= 60);
        received += s.messages_received;
        // The controller answers every delivered sensor message.
        assert_eq!(r.flows[3 + f].messages_generated, s.messages_received);
    }
    // The router link is saturated: 30.4 packets/s once the queue has filled.
    let capacity = 256_000.0 / (1052.0 * 8.0) * 60.0;
    assert!((received as f64 / capacity - 1.0).abs() < 0.03, "{received} vs {capacity}");
    // DropTail's synchronisation (paper 001, Fig. 2): one sensor loses nearly everything.
    let worst = (0..3)
        .map(|f| r.flows[f].messages_lost_network as f64 / r.flows[f].messages_generated as f64)
        .fold(0.0, f64::max);
    assert!(worst > 0.9, "{worst}");
}

#[test]
fn table_i_adds_up_over_tcp_and_both_ccids() {
    for transport in [AlgoSpec::named("tcp"), dccp(2), dccp(3)] {
        let r = run(&dedu(transport.clone(), 20 * 1024, 60 * SEC));
        for f in 0..3 {
            let s = &r.flows[f];
            assert_adds_up(&r, f);
            assert!(s.messages_lost_at_sender > 0, "{}: {s:?}", transport.kind);
            if transport.kind == "tcp" {
                // A byte stream loses nothing: drops are repaired and counted apart.
                assert_eq!(s.messages_lost_network, 0);
                assert!(s.retransmissions >= s.queue_drops.min(1), "{s:?}");
            } else {
                assert_eq!(s.retransmissions, 0);
                assert_eq!(s.packets_received, s.messages_received, "a DCCP datagram arrived twice");
                let drops = s.queue_drops;
                assert!(
                    s.messages_lost_network <= drops && drops <= s.messages_lost_network + s.messages_pending,
                    "{s:?}"
                );
            }
        }
        // Congested by design (491 kb/s of samples into 256 kb/s): the congestion controls hold
        // messages back and the full buffers refuse about half of them.
        let generated: u64 = (0..3).map(|f| r.flows[f].messages_generated).sum();
        let refused: u64 = (0..3).map(|f| r.flows[f].messages_lost_at_sender).sum();
        assert!(refused > generated / 4, "{}: {refused} of {generated}", transport.kind);
        // The controller still gets about the link's capacity.
        let received: u64 = (0..3).map(|f| r.flows[f].messages_received).sum();
        let capacity = 256_000.0 / (1060.0 * 8.0) * 60.0;
        assert!(received as f64 > 0.8 * capacity, "{}: {received}", transport.kind);
    }
}
