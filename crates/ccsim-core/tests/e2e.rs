//! End-to-end runs checked against hand computation, probability bounds and the issue's
//! acceptance figures. Packet conservation is asserted by the engine itself after every
//! `run_until` in debug builds (these tests), and checked explicitly here as well.

mod common;

use ccsim_core::config::{AlgoSpec, Config, FlowSpec, NodeKind, NodeSpec, TraceSpec};
use ccsim_core::params::ParamValue;
use ccsim_core::sim::time::{tx_time, MS, SEC, US};
use ccsim_core::{Results, Simulation};
use common::*;

fn run(cfg: &Config) -> (Simulation, Results) {
    let mut sim = Simulation::new(cfg).expect("valid config");
    sim.run();
    sim.check_conservation().expect("conservation");
    let r = sim.results();
    (sim, r)
}

/// Two hosts joined by one link, a -> b at `rate` with `delay`, and a UDP flow of periodic
/// messages.
fn two_hosts(rate: u64, delay: u64, loss: f64, size: i64, period: u64, stop: u64) -> Config {
    let mut d = dir(rate, delay, droptail(100_000));
    d.loss = loss;
    Config {
        duration_ns: stop + SEC,
        warmup_ns: 0,
        seed: 3,
        nodes: vec![
            NodeSpec { name: "a".into(), kind: NodeKind::Host, processing: None },
            NodeSpec { name: "b".into(), kind: NodeKind::Host, processing: None },
        ],
        links: vec![link(0, 1, d)],
        flows: vec![FlowSpec {
            name: None,
            src: 0,
            dst: 1,
            transport: AlgoSpec::named("udp"),
            cc: None,
            app: AlgoSpec::named("periodic")
                .with("size", ParamValue::Int(size))
                .with("period", ParamValue::Int(period as i64)),
            start_ns: 0,
            start_max_ns: None,
            stop_ns: Some(stop),
            group: None,
        }],
        trace: TraceSpec::default(),
        bottleneck: None,
        jain_flows: None,
        control: Vec::new(),
        workloads: Vec::new(),
    }
}

#[test]
fn a_packet_arrives_after_serialization_plus_propagation() {
    // 972 B payload + 28 B header = 1000 B at 1 Mb/s: 8 ms, plus 5 ms propagation.
    let (_, r) = run(&two_hosts(1_000_000, 5 * MS, 0.0, 972, 100 * MS, 50 * MS));
    let f = &r.flows[0];
    assert_eq!(f.packets_received, 1);
    assert_eq!(f.delay_max_s, Some(0.013));
    assert_eq!(tx_time(1000, 1_000_000), 8 * MS);
}

#[test]
fn back_to_back_packets_are_serialized() {
    // Ten 1000 B packets written 1 us apart into an 8 ms/packet link: packet k leaves at
    // 8(k+1) ms and was written at k us, so its delay is 8(k+1) ms - k us + 5 ms.
    let (_, r) = run(&two_hosts(1_000_000, 5 * MS, 0.0, 972, US, 10 * US));
    let f = &r.flows[0];
    assert_eq!(f.packets_received, 10);
    let k = 9.0;
    let expect_max = (8.0 * (k + 1.0)) * 1e-3 - k * 1e-6 + 5e-3;
    assert!((f.delay_max_s.unwrap() - expect_max).abs() < 1e-12, "{:?}", f.delay_max_s);
    let mean: f64 = (0..10).map(|k| 8e-3 * (k as f64 + 1.0) - k as f64 * 1e-6 + 5e-3).sum::<f64>() / 10.0;
    assert!((f.delay_mean_s.unwrap() - mean).abs() < 1e-12);
}

#[test]
fn random_loss_drops_about_p_of_packets() {
    // 20 000 packets at p = 0.05: losses ~ Binomial(20000, 0.05), mean 1000, sd 30.8;
    // accept mean +- 5 sd.
    let n = 20_000u64;
    let (_, r) = run(&two_hosts(100_000_000, MS, 0.05, 100, 100 * US, n * 100 * US));
    let lost = r.queues[0].link_losses as f64;
    assert_eq!(r.flows[0].packets_sent, n);
    assert_eq!(r.flows[0].packets_received + r.queues[0].link_losses, n);
    let (mean, sd) = (n as f64 * 0.05, (n as f64 * 0.05 * 0.95).sqrt());
    assert!((lost - mean).abs() < 5.0 * sd, "lost {lost}, expected {mean} +- {}", 5.0 * sd);
}

fn one_flow_10mbps() -> Config {
    // RTT = 2 * (1 + 8 + 1) ms = 20 ms; BDP = 10 Mb/s * 20 ms = 25 000 B ~ 17 packets.
    let mut cfg = dumbbell(1, 10_000_000, 8 * MS, droptail(17), 1_000_000_000, |_| MS);
    cfg.duration_ns = 30 * SEC;
    cfg.flows.push(bulk_tcp(1, 0, "newreno"));
    cfg
}

#[test]
fn one_newreno_flow_fills_a_one_bdp_buffered_link() {
    let (_, r) = run(&one_flow_10mbps());
    let u = r.utilization.unwrap();
    assert!(u > 0.90, "utilization {u}");
    assert!(u <= 1.0);
    // Goodput is below the link rate by the header share (1448/1500) at most.
    let g = r.flows[0].goodput_bps;
    assert!(g < 10e6 * 1448.0 / 1500.0 + 1.0 && g > 0.85 * 10e6, "goodput {g}");
    assert!(r.queues[0].drops > 0, "a one-BDP buffer must overflow now and then");
    assert!(r.flows[0].fast_recoveries > 0);
    // Minimum RTT: 20 ms of propagation plus serialization of a data packet and an ACK.
    let rtt_min = r.flows[0].rtt_min_s.unwrap();
    assert!(rtt_min > 0.020 && rtt_min < 0.023, "rtt_min {rtt_min}");
}

#[test]
fn utilization_is_busy_time_over_the_window_even_when_its_edges_cut_a_packet() {
    // A 200-packet buffer (8 BDP) never drains once NewReno has filled it, so the bottleneck
    // is busy for the whole window: utilization exactly 1. The window's edges fall inside a
    // 1.2 ms transmission; counting whole packets by their start would give 1 +- 1.2/2000.
    let mut cfg = dumbbell(1, 10_000_000, 8 * MS, droptail(200), 1_000_000_000, |_| MS);
    cfg.flows.push(bulk_tcp(1, 0, "newreno"));
    cfg.warmup_ns = 5 * SEC + 333 * US;
    cfg.duration_ns = 7 * SEC + 777 * US;
    let (_, r) = run(&cfg);
    let q = &r.queues[0];
    assert_eq!(q.utilization, 1.0, "tx_bytes {}", q.tx_bytes);
    // Bytes counted by transmission start differ from busy time by less than a packet per edge.
    let window_s = (cfg.duration_ns - cfg.warmup_ns) as f64 / 1e9;
    let by_bytes = q.tx_bytes as f64 * 8.0 / (10e6 * window_s);
    assert!((by_bytes - 1.0).abs() < 2.0 * 1500.0 * 8.0 / (10e6 * window_s), "{by_bytes}");
}

#[test]
fn four_flows_with_equal_rtts_share_fairly() {
    let mut cfg = dumbbell(4, 10_000_000, 5 * MS, droptail(50), 100_000_000, |_| 5 * MS);
    cfg.duration_ns = 60 * SEC;
    cfg.warmup_ns = 10 * SEC;
    for i in 0..4 {
        let mut f = bulk_tcp(4, i, "newreno");
        f.start_max_ns = Some(SEC);
        cfg.flows.push(f);
    }
    let (_, r) = run(&cfg);
    let j = r.jain_index.unwrap();
    assert!(j > 0.95, "Jain {j}: {:?}", r.flows.iter().map(|f| f.goodput_bps).collect::<Vec<_>>());
    assert!(r.utilization.unwrap() > 0.9);
}

#[test]
fn same_seed_gives_identical_results_and_seeds_matter() {
    let mut cfg = dumbbell(3, 10_000_000, 5 * MS, droptail(30), 100_000_000, |i| (1 + 10 * i as u64) * MS);
    cfg.duration_ns = 10 * SEC;
    cfg.trace = TraceSpec {
        interval_ns: Some(10 * MS),
        queues: vec![],
        cwnd: true,
        events: true,
        messages: true,
        ..TraceSpec::default()
    };
    for i in 0..3 {
        let mut f = bulk_tcp(3, i, "newreno");
        f.start_max_ns = Some(SEC);
        cfg.flows.push(f);
    }
    let json = |c: &Config| serde_json::to_string(&run(c).1).unwrap();
    let a = json(&cfg);
    assert_eq!(a, json(&cfg));
    cfg.seed = 2;
    let b = json(&cfg);
    assert_ne!(a, b);
}

#[test]
fn prefetching_for_the_next_event_changes_no_result() {
    // The engine prefetches only for networks too large for a test, so this is the one test
    // that runs that path (with the core's only `unsafe`). Prefetching only reads, so the
    // comparison guards against its ever doing more; force it both ways on a small,
    // congested network (drops, queues, timers, delayed ACKs) and compare everything.
    let mut cfg = dumbbell(8, 10_000_000, 5 * MS, droptail(20), 100_000_000, |i| (1 + 3 * i as u64) * MS);
    cfg.duration_ns = 5 * SEC;
    cfg.trace = TraceSpec {
        interval_ns: Some(10 * MS),
        queues: vec![],
        cwnd: true,
        events: true,
        messages: true,
        ..TraceSpec::default()
    };
    cfg.flows = (0..8).map(|i| bulk_tcp(8, i, "newreno")).collect();
    let outcome = |prefetch: bool| {
        let mut sim = Simulation::new(&cfg).unwrap();
        sim.set_prefetch(prefetch);
        sim.run();
        let r = sim.results();
        assert!(r.queues.iter().find(|q| q.name == "A->B").unwrap().drops > 0, "the bottleneck must overflow");
        (sim.events_executed(), serde_json::to_string(&r).unwrap())
    };
    assert_eq!(outcome(true), outcome(false));
}

#[test]
fn runs_can_be_advanced_in_slices_without_changing_the_outcome() {
    let cfg = one_flow_10mbps();
    let (_, whole) = run(&cfg);
    let mut sim = Simulation::new(&cfg).unwrap();
    let mut t = 0;
    while !sim.finished() {
        t += 777 * MS;
        sim.run_until(t);
    }
    let sliced = sim.results();
    assert_eq!(serde_json::to_string(&whole).unwrap(), serde_json::to_string(&sliced).unwrap());
}

#[test]
fn runs_sliced_by_events_give_the_same_outcome() {
    let cfg = one_flow_10mbps();
    let (whole_sim, whole) = run(&cfg);
    let mut sim = Simulation::new(&cfg).unwrap();
    let mut slices = 0;
    while !sim.advance(cfg.duration_ns, 997).expect("time advances") {
        slices += 1;
    }
    assert!(slices as u64 >= whole_sim.events_executed() / 997);
    assert!(sim.finished());
    assert_eq!(serde_json::to_string(&whole).unwrap(), serde_json::to_string(&sim.results()).unwrap());
}

#[test]
fn a_run_whose_time_stops_advancing_fails_naming_the_component() {
    // Eight flows starting together at t = 0 run at least eight events at that instant; with
    // the guard lowered below that, the same run must stop there and say where.
    let mut cfg = dumbbell(8, 10_000_000, 5 * MS, droptail(20), 100_000_000, |i| (1 + 3 * i as u64) * MS);
    cfg.flows = (0..8).map(|i| bulk_tcp(8, i, "newreno")).collect();
    let mut sim = Simulation::new(&cfg).unwrap();
    sim.set_stall_events(5);
    let stall = sim.advance(SEC, u64::MAX).expect_err("stalls at t = 0");
    assert_eq!((stall.time, stall.events), (0, 5));
    assert!(stall.to_string().contains("stopped advancing at t = 0 ns"), "{stall}");
    assert!(stall.next.starts_with("flows[") || stall.next.starts_with("queue "), "{}", stall.next);
    // With the default guard the run goes on.
    let mut sim = Simulation::new(&cfg).unwrap();
    assert!(sim.advance(SEC, u64::MAX).unwrap());
}

#[test]
fn traces_have_one_row_per_interval() {
    let mut cfg = one_flow_10mbps();
    cfg.duration_ns = 2 * SEC;
    cfg.trace = TraceSpec {
        interval_ns: Some(10 * MS),
        queues: vec!["A->B".into()],
        cwnd: true,
        events: true,
        messages: true,
        ..TraceSpec::default()
    };
    let (_, r) = run(&cfg);
    // The event log holds exactly the drops the queue counted, in time order.
    let log = r.queue_events.as_ref().unwrap();
    let drops = log.event.iter().zip(&log.queue).filter(|(e, q)| e.starts_with("drop") && *q == "A->B").count();
    assert_eq!(drops as u64, r.queues[0].drops);
    assert!(drops > 0);
    assert!(log.time_s.windows(2).all(|w| w[0] <= w[1]));
    let sojourn = &r.traces["queue.A->B.sojourn_s"];
    assert!(sojourn.iter().all(|&s| s <= r.queues[0].max_sojourn_s));
    assert!(sojourn.iter().any(|&s| s > 0.0));
    assert_eq!(r.traces["time_s"].len(), 201);
    assert_eq!(r.traces["queue.A->B.len_pkts"].len(), 201);
    assert_eq!(r.traces["flow.0.cwnd_bytes"][0], 10.0 * 1448.0);
    assert!(r.traces["queue.A->B.len_pkts"].iter().all(|&q| q <= 17.0));
}

#[test]
fn flow_counter_traces_give_throughput_over_time() {
    // One NewReno flow through a 10 Mbit/s bottleneck with a 1 s warm-up: the counters are
    // cumulative over the measured window, so they are 0 before it and end at the flow's
    // totals; once the window is full, a 5 s difference is the bottleneck's payload rate.
    let mut cfg = one_flow_10mbps();
    cfg.duration_ns = 10 * SEC;
    cfg.warmup_ns = SEC;
    cfg.trace = TraceSpec { interval_ns: Some(100 * MS), flow_counters: true, ..TraceSpec::default() };
    let (_, r) = run(&cfg);
    let delivered = &r.traces["flow.0.delivered_bytes"];
    let retx = &r.traces["flow.0.retransmissions"];
    assert_eq!(delivered.len(), r.traces["time_s"].len());
    assert!(delivered[..10].iter().all(|&b| b == 0.0), "nothing counts before the warm-up");
    assert!(delivered.windows(2).all(|w| w[0] <= w[1]) && retx.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(*delivered.last().unwrap(), r.flows[0].bytes_delivered as f64);
    assert_eq!(*retx.last().unwrap(), r.flows[0].retransmissions as f64);
    assert!(r.flows[0].retransmissions > 0, "the 17-packet buffer overflows");
    let rate = (delivered[90] - delivered[40]) * 8.0 / 5.0;
    let payload_rate = 10e6 * 1448.0 / 1500.0;
    assert!(rate > 0.85 * payload_rate && rate <= payload_rate * 1.01, "{rate}");
    // Off by default: no such columns.
    cfg.trace.flow_counters = false;
    assert!(!run(&cfg).1.traces.contains_key("flow.0.delivered_bytes"));
}

#[test]
fn bad_configurations_name_the_field() {
    let mut cfg = one_flow_10mbps();
    cfg.flows[0].cc = Some(AlgoSpec::named("tahoe"));
    let e = Simulation::new(&cfg).err().unwrap();
    assert_eq!(e.field, "flows[0].cc.kind");
    assert!(e.message.contains("newreno"));

    let mut cfg = one_flow_10mbps();
    cfg.links[0].ab.queue = droptail(10).with("limt", ParamValue::Int(3));
    let e = Simulation::new(&cfg).err().unwrap();
    assert_eq!(e.field, "links[0].ab.queue.limt");

    let mut cfg = one_flow_10mbps();
    cfg.links[1].b = 99;
    assert_eq!(Simulation::new(&cfg).err().unwrap().field, "links[1].b");

    let mut cfg = one_flow_10mbps();
    cfg.flows[0].dst = 0; // router A
    assert_eq!(Simulation::new(&cfg).err().unwrap().field, "flows[0].dst");

    let e = ccsim_core::from_json(r#"{"duration_ns": 1, "nodes": [], "links": [], "bogus": 1}"#).err().unwrap();
    assert!(e.message.contains("bogus"), "{e}");
}

#[test]
fn udp_messages_are_counted_received_or_lost_and_add_up() {
    // 2000 datagrams over a lossy link: every message is received or known lost, except the
    // ones after the last delivered datagram, which stay pending.
    let mut cfg = two_hosts(100_000_000, MS, 0.1, 100, 100 * US, 200 * MS);
    cfg.trace.messages = true;
    let (_, r) = run(&cfg);
    let f = &r.flows[0];
    assert_eq!(f.packets_sent, 2000);
    assert_eq!(f.messages_received, f.packets_received);
    assert_eq!(f.messages_received + f.messages_lost_network + f.messages_pending, 2000);
    assert_eq!(f.messages_lost_network + f.messages_pending, r.queues[0].link_losses);
    let log = r.messages.as_ref().unwrap();
    assert_eq!(log.lost.iter().filter(|&&l| l).count() as u64, f.messages_lost_network);
    // One-way delay of a 128 B datagram: 10.24 us of serialization plus 1 ms.
    assert!((f.message_delay_max_s.unwrap() - 0.00101024).abs() < 1e-9);
}

#[test]
fn a_transfer_is_one_message_completed_at_the_flow_completion_time() {
    let mut cfg = one_flow_10mbps();
    cfg.flows[0].app = AlgoSpec::named("transfer").with("size", ParamValue::Int(1_000_000));
    let (_, r) = run(&cfg);
    let f = &r.flows[0];
    assert_eq!((f.messages_received, f.messages_pending), (1, 0));
    assert_eq!(f.bytes_delivered, 1_000_000);
    // 1 MB at 10 Mb/s is 0.8 s of payload; slow start from IW10 over a 20 ms RTT adds a few
    // round trips.
    let fct = f.message_delay_max_s.unwrap();
    assert!(fct > 0.8 && fct < 1.2, "completion time {fct}");
}

#[test]
fn a_reply_flow_answers_every_delivered_message() {
    // Sensor s0 -> r0 sends 1024 B every 50 ms over TCP; r0 answers each with 200 B over UDP.
    let mut cfg = one_flow_10mbps();
    cfg.duration_ns = 10 * SEC;
    cfg.flows[0].app = AlgoSpec::named("periodic")
        .with("size", ParamValue::Int(1024))
        .with("period", ParamValue::Int((50 * MS) as i64));
    let mut reply = cfg.flows[0].clone();
    std::mem::swap(&mut reply.src, &mut reply.dst);
    reply.transport = AlgoSpec::named("udp");
    reply.cc = None;
    reply.app = AlgoSpec::named("reply").with("to", ParamValue::Int(0));
    cfg.flows.push(reply);
    let (_, r) = run(&cfg);
    let (sensor, controller) = (&r.flows[0], &r.flows[1]);
    // Messages at 0, 50, ..., 10 000 ms: events at the stop time itself still run.
    assert_eq!(sensor.messages_generated, 201);
    // Messages still in flight at the end are not answered yet.
    assert_eq!(controller.messages_generated, sensor.messages_received);
    assert_eq!(controller.messages_received + controller.messages_pending, controller.messages_generated);
    assert!(sensor.messages_received >= 199);
    // Request-response time: two one-way trips of at least 10 ms each.
    assert!(controller.message_delay_max_s.unwrap() >= 0.010);

    let mut bad = cfg.clone();
    bad.flows[1].app = AlgoSpec::named("reply").with("to", ParamValue::Int(7));
    assert_eq!(Simulation::new(&bad).err().unwrap().field, "flows[1].app.to");
}

#[test]
fn hosts_do_not_forward_even_for_a_host_whose_only_link_leads_to_another() {
    // a -- b -- R -- c, with b a host: a's only link leads to b, and b's table knows the way
    // to c through R, but b does not forward, so a and c are not connected.
    let mut cfg = two_hosts(10_000_000, MS, 0.0, 100, 10 * MS, SEC);
    cfg.nodes.push(NodeSpec::router("R"));
    cfg.nodes.push(NodeSpec::host("c"));
    let d = dir(10_000_000, MS, droptail(100));
    cfg.links.push(link(1, 2, d.clone()));
    cfg.links.push(link(2, 3, d));
    cfg.flows[0].dst = 3;
    let err = Simulation::new(&cfg).err().expect("a flow through a host is refused");
    assert_eq!(err.field, "flows[0]");
    assert_eq!(err.message, "no route from 'a' to 'c': they are not connected through routers");
    // From b itself the route through R is fine.
    cfg.flows[0].src = 1;
    run(&cfg);
}
