//! The daisy chain of paper 000 (ANCE, Sup et al. 2020) sec. 3, its TCP-Reno sender and a
//! bottleneck watcher, for the ANCE and ENCN end-to-end tests (`#[path]`-included next to
//! `mod common`).
#![allow(dead_code)]

use ccsim_core::config::{AlgoSpec, Config, FlowSpec, LinkSpec, NodeKind, NodeSpec, TraceSpec};
use ccsim_core::params::{ParamValue, Size};
use ccsim_core::sim::time::{MS, SEC};
use ccsim_core::{Results, Simulation};

use crate::common::{dir, droptail};

/// Bottleneck rate (sec. 3: 1.5 Mbps).
pub const BOTTLENECK_BPS: u64 = 1_500_000;
/// Packet size on the wire (sec. 3: "packets of 1 kbyte size").
pub const PKT_BYTES: u64 = 1000;
/// Router buffers (sec. 3: Q = 17 packets).
pub const ROUTER_PKTS: u64 = 17;
/// Q_min of ANCE and ENCN (sec. 3.1: 3 kbytes).
pub const Q_MIN: u64 = 3000;

/// S --10 Mbit/s, 2 ms-- R1 --1.5 Mbit/s, 5 ms-- R2 --10 Mbit/s, 33 ms-- D (sec. 3), with
/// `router_queue` on every queue a router feeds and a large DropTail on the hosts' own
/// interfaces. Node indices: R1 = 0, R2 = 1, S = 2, D = 3; the bottleneck queue is `R1->R2`.
/// Base RTT about 87 ms: a bandwidth-delay product of 16.3 packets.
pub fn daisy_chain(router_queue: AlgoSpec) -> Config {
    let host = |rate, delay| dir(rate, delay, droptail(1000));
    let router = |rate, delay| dir(rate, delay, router_queue.clone());
    let nodes = vec![
        NodeSpec { name: "R1".into(), kind: NodeKind::Router, processing: None },
        NodeSpec { name: "R2".into(), kind: NodeKind::Router, processing: None },
        NodeSpec { name: "S".into(), kind: NodeKind::Host, processing: None },
        NodeSpec { name: "D".into(), kind: NodeKind::Host, processing: None },
    ];
    let links = vec![
        LinkSpec { a: 2, b: 0, ab: host(10_000_000, 2 * MS), ba: router(10_000_000, 2 * MS), schedule: Vec::new() },
        LinkSpec {
            a: 0,
            b: 1,
            ab: router(BOTTLENECK_BPS, 5 * MS),
            ba: router(BOTTLENECK_BPS, 5 * MS),
            schedule: Vec::new(),
        },
        LinkSpec { a: 1, b: 3, ab: router(10_000_000, 33 * MS), ba: host(10_000_000, 33 * MS), schedule: Vec::new() },
    ];
    Config {
        duration_ns: 10_000 * MS,
        warmup_ns: 0,
        seed: 1,
        nodes,
        links,
        flows: Vec::new(),
        trace: TraceSpec::default(),
        bottleneck: Some("R1->R2".into()),
        jain_flows: None,
        control: Vec::new(),
        workloads: Vec::new(),
    }
}

/// The paper's sender: 1000-byte packets (948 B of payload + the 52-byte header), initial
/// ssthresh 16 packets and rwnd 64 packets (sec. 3 and 3.1), TCP-Reno without SACK. The
/// initial window (1, Reno's) and the ACK policy are not given: `delack_count` 1 is one
/// ACK per packet, 2 the RFC 1122 delayed ACKs.
pub fn paper_tcp(delack_count: i64) -> AlgoSpec {
    AlgoSpec::named("tcp")
        .with("mss", ParamValue::Int(PKT_BYTES as i64 - 52))
        .with("init_cwnd", ParamValue::Int(1))
        .with("init_ssthresh", ParamValue::Size(Size::Packets(16)))
        .with("rwnd", ParamValue::Size(Size::Packets(64)))
        .with("sack", ParamValue::Bool(false))
        .with("delack_count", ParamValue::Int(delack_count))
}

/// RED as configured in sec. 3.1: min_th = Q_l / 4, max_th = 3 Q_l / 4 with Q_l = 17 kbytes,
/// P_max = 0.1, w_q = 0.002, ECN marking (the paper's RED has the ECN bit).
pub fn paper_red() -> AlgoSpec {
    let bytes = |b| ParamValue::Size(Size::Bytes(b));
    AlgoSpec::named("red")
        .with("limit", ParamValue::Size(Size::Packets(ROUTER_PKTS)))
        .with("min_th", bytes(17_000 / 4))
        .with("max_th", bytes(3 * 17_000 / 4))
        .with("max_p", ParamValue::Float(0.1))
        .with("wq", ParamValue::Float(0.002))
        .with("ecn", ParamValue::Bool(true))
}

/// One bulk flow S -> D over `transport` with congestion control `cc`, 60 s, 5 s warm-up.
pub fn chain_run(cc: AlgoSpec, router_queue: AlgoSpec, transport: AlgoSpec) -> Config {
    let mut cfg = daisy_chain(router_queue);
    cfg.duration_ns = 60 * SEC;
    cfg.warmup_ns = 5 * SEC;
    cfg.flows.push(FlowSpec {
        name: None,
        src: 2,
        dst: 3,
        transport,
        cc: Some(cc),
        app: AlgoSpec::named("bulk"),
        start_ns: 0,
        start_max_ns: None,
        stop_ns: None,
        group: None,
    });
    cfg
}

/// The bottleneck queue sampled every [`STEP`] after the warm-up.
#[derive(Debug, Default)]
pub struct Bottleneck {
    /// Share of samples with nothing waiting (a packet may be in transmission).
    pub queue_empty: f64,
    /// Share of samples with nothing waiting and nothing in transmission: the link idles.
    pub idle: f64,
    /// Longest stretch of idle samples (s).
    pub longest_idle_s: f64,
    /// Mean bytes waiting.
    pub mean_bytes: f64,
    /// Share of samples with `lo..=hi` bytes waiting.
    pub in_band: f64,
    /// Largest number of bytes waiting.
    pub max_bytes: u64,
}

/// Sampling step of [`watch`].
pub const STEP: u64 = MS / 4;

/// Runs `cfg` in steps of [`STEP`], sampling queue `name` (fed by a link of `rate_bps`
/// carrying `pkt_bytes` packets) after the warm-up: the link counts as busy for one
/// transmission time after each departure (start of transmission), so "idle" means that
/// the router holds no packet at all. Checks conservation.
pub fn watch(cfg: &Config, name: &str, rate_bps: u64, pkt_bytes: u64, lo: u64, hi: u64) -> (Results, Bottleneck) {
    let tx = pkt_bytes * 8 * SEC / rate_bps;
    let mut sim = Simulation::new(cfg).expect("valid config");
    let (mut b, mut n) = (Bottleneck::default(), 0u64);
    let (mut out, mut last_departure, mut idle_since) = (0, 0, None);
    let mut t = 0;
    while t < cfg.duration_ns {
        t += STEP;
        sim.run_until(t);
        let q = sim.queue(name).expect("queue exists");
        if q.stats.total_out > out {
            out = q.stats.total_out;
            last_departure = t; // at most one step after the true time
        }
        if t < cfg.warmup_ns {
            continue;
        }
        let bytes = q.len_bytes();
        let idle = bytes == 0 && t >= last_departure + tx;
        n += 1;
        b.queue_empty += f64::from(bytes == 0);
        b.idle += f64::from(idle);
        b.mean_bytes += bytes as f64;
        b.in_band += f64::from((lo..=hi).contains(&bytes));
        b.max_bytes = b.max_bytes.max(bytes);
        match (idle, idle_since) {
            (true, None) => idle_since = Some(t),
            (false, Some(s)) => {
                b.longest_idle_s = b.longest_idle_s.max((t - s) as f64 * 1e-9);
                idle_since = None;
            }
            _ => {}
        }
    }
    sim.run();
    sim.check_conservation().expect("conservation");
    let n = n as f64;
    b.queue_empty /= n;
    b.idle /= n;
    b.mean_bytes /= n;
    b.in_band /= n;
    (sim.results(), b)
}
