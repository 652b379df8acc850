//! Small builders for end-to-end tests (the Python front has the full topology helpers).
#![allow(dead_code)]

use ccsim_core::config::{AlgoSpec, Config, DirSpec, FlowSpec, LinkSpec, NodeKind, NodeSpec, TraceSpec};
use ccsim_core::params::{ParamValue, Size};
use ccsim_core::sim::time::MS;
use ccsim_core::{Results, Simulation};

/// Run `cfg` to its end, check packet conservation over the whole run, and return the results.
pub fn run(cfg: &Config) -> Results {
    let mut sim = Simulation::new(cfg).expect("valid config");
    sim.run();
    sim.check_conservation().expect("conservation");
    sim.results()
}

pub fn droptail(limit_pkts: u64) -> AlgoSpec {
    AlgoSpec::named("droptail").with("limit", ParamValue::Size(Size::Packets(limit_pkts)))
}

pub fn dir(rate_bps: u64, delay_ns: u64, queue: AlgoSpec) -> DirSpec {
    DirSpec { rate_bps, delay_ns, loss: 0.0, queue }
}

pub fn link(a: u32, b: u32, d: DirSpec) -> LinkSpec {
    LinkSpec { a, b, ab: d.clone(), ba: d, schedule: Vec::new() }
}

/// Senders s0..s{n-1} -- A == bottleneck == B -- receivers r0..r{n-1}.
/// Node indices: A = 0, B = 1, s_i = 2 + i, r_i = 2 + n + i.
pub fn dumbbell(
    n: usize,
    bottleneck_bps: u64,
    bottleneck_delay: u64,
    queue: AlgoSpec,
    access_bps: u64,
    access_delay: impl Fn(usize) -> u64,
) -> Config {
    let mut nodes = vec![
        NodeSpec { name: "A".into(), kind: NodeKind::Router, processing: None },
        NodeSpec { name: "B".into(), kind: NodeKind::Router, processing: None },
    ];
    nodes.extend((0..n).map(|i| NodeSpec { name: format!("s{i}"), kind: NodeKind::Host, processing: None }));
    nodes.extend((0..n).map(|i| NodeSpec { name: format!("r{i}"), kind: NodeKind::Host, processing: None }));
    let mut links = vec![LinkSpec {
        a: 0,
        b: 1,
        ab: dir(bottleneck_bps, bottleneck_delay, queue),
        ba: dir(bottleneck_bps, bottleneck_delay, droptail(1000)),
        schedule: Vec::new(),
    }];
    for i in 0..n {
        let d = access_delay(i);
        links.push(link(2 + i as u32, 0, dir(access_bps, d, droptail(1000))));
        links.push(link(1, (2 + n + i) as u32, dir(access_bps, d, droptail(1000))));
    }
    Config {
        duration_ns: 10_000 * MS,
        warmup_ns: 0,
        seed: 1,
        nodes,
        links,
        flows: Vec::new(),
        trace: TraceSpec::default(),
        bottleneck: Some("A->B".into()),
        jain_flows: None,
        control: Vec::new(),
        workloads: Vec::new(),
    }
}

/// A bulk TCP flow from pair i's sender to its receiver in a dumbbell of n pairs.
pub fn bulk_tcp(n: usize, i: usize, cc: &str) -> FlowSpec {
    FlowSpec {
        name: None,
        src: (2 + i) as u32,
        dst: (2 + n + i) as u32,
        transport: AlgoSpec::named("tcp"),
        cc: Some(AlgoSpec::named(cc)),
        app: AlgoSpec::named("bulk"),
        start_ns: 0,
        start_max_ns: None,
        stop_ns: None,
        group: None,
    }
}
