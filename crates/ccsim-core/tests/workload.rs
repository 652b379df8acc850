//! Open-loop workloads (`workload.rs`, `engine/workload.rs`): flows that arrive while the run
//! goes on, their completion times against queueing theory, and memory that follows the flows
//! alive at once.

mod common;

use ccsim_core::config::{AlgoSpec, Config, WorkloadSpec};
use ccsim_core::params::ParamValue;
use ccsim_core::sim::time::{MS, SEC};
use ccsim_core::Simulation;
use common::{droptail, dumbbell};

/// `pairs` dumbbell pairs on a `rate` bottleneck with 1 ms access and bottleneck delays and
/// a 1000-packet DropTail buffer, and one workload of `rate_per_s` TCP transfers over them.
fn scenario(pairs: usize, rate: u64, rate_per_s: f64, size: &[(&str, ParamValue)], duration: u64) -> Config {
    let mut cfg = dumbbell(pairs, rate, MS, droptail(1000), 10 * rate, |_| MS / 4);
    cfg.duration_ns = duration;
    cfg.workloads.push(WorkloadSpec {
        name: Some("web".into()),
        group: None,
        pairs: (0..pairs as u32).map(|i| (2 + i, 2 + pairs as u32 + i)).collect(),
        rate_per_s,
        start_ns: 0,
        stop_ns: None,
        size: size.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        size_cdf: Vec::new(),
        transport: AlgoSpec::named("tcp"),
        cc: Some(AlgoSpec::named("newreno")),
    });
    cfg
}

/// Exponential sizes of mean 100 kB.
fn exp_sizes() -> [(&'static str, ParamValue); 2] {
    [("size", ParamValue::Int(100_000)), ("distribution", ParamValue::name("exponential"))]
}

/// The bottleneck's capacity for payload: 10 Mbit/s times 1448 of every 1500 bytes.
const RATE: u64 = 10_000_000;
const GOODPUT: f64 = RATE as f64 * 1448.0 / 1500.0;

/// Mean FCT of the flows that arrived in [20 s, 550 s) of a 600 s run at load `rho`, over the
/// M/G/1 processor-sharing mean `E[S] / (C (1 - rho))` with the measured flows' mean size
/// (Kleinrock, Queueing Systems vol. 2, sec. 4.4; the mean is insensitive to the size
/// distribution). Also the most flow indices in use at once and the flows made.
fn fct_over_ps(rho: f64, buffer: u64) -> (f64, usize, usize) {
    let lambda = rho * GOODPUT / (8.0 * 100_000.0);
    let mut cfg = scenario(4, RATE, lambda, &exp_sizes(), 600 * SEC);
    cfg.links[0].ab.queue = droptail(buffer);
    let mut sim = Simulation::new(&cfg).unwrap();
    sim.run();
    sim.check_conservation().unwrap();
    let slots = sim.flow_slots();
    let r = sim.results();
    let measured: Vec<_> = r.flows.iter().filter(|f| f.start_s >= 20.0 && f.start_s < 550.0).collect();
    assert!(measured.iter().all(|f| f.fct_s.is_some()), "every flow that arrived before 550 s completed");
    let n = measured.len() as f64;
    let mean_fct = measured.iter().map(|f| f.fct_s.unwrap()).sum::<f64>() / n;
    let mean_size = measured.iter().map(|f| f.size_bytes.unwrap() as f64).sum::<f64>() / n;
    (mean_fct / (mean_size * 8.0 / (GOODPUT * (1.0 - rho))), slots, r.flows.len())
}

#[test]
fn mean_fct_is_the_processor_sharing_figure_and_memory_follows_the_flows_alive() {
    // TCP flows through a FIFO with room for all of them share the link about as processor
    // sharing does (Ben Fredj et al., "Statistical bandwidth sharing", SIGCOMM 2001): measured
    // 1.03, 1.02, 0.96 of the figure at these loads, with 1 900 to 4 500 flows.
    for rho in [0.3, 0.5, 0.7] {
        let (ratio, slots, flows) = fct_over_ps(rho, 1000);
        assert!((ratio - 1.0).abs() < 0.1, "load {rho}: mean FCT {ratio:.3} x the M/G/1-PS figure");
        // Thousands of flows made, a few dozen flow indices: retired flows free theirs.
        assert!(flows > 2000 && slots < 40, "load {rho}: {flows} flows in {slots} indices");
    }
    // The oracle tells: a 3-packet buffer loses segments, and the RTO (1 s minimum) of
    // flows that lose their last ones takes the mean far above the sharing figure.
    let (ratio, ..) = fct_over_ps(0.5, 3);
    assert!(ratio > 1.3, "a 3-packet buffer: {ratio:.3} x the figure");
}

#[test]
fn arrivals_are_poisson_and_the_same_whatever_the_network() {
    let run = |queue: AlgoSpec| {
        let mut cfg = scenario(4, RATE, 20.0, &exp_sizes(), 100 * SEC);
        cfg.links[0].ab.queue = queue;
        common::run(&cfg)
    };
    let a = run(droptail(1000));
    // 2000 arrivals expected in 100 s; a Poisson count has a standard deviation of 45.
    let n = a.flows.len() as f64;
    assert!((n - 2000.0).abs() < 4.0 * 2000f64.sqrt(), "{n} arrivals");
    // Exponential gaps: their coefficient of variation is 1.
    let starts: Vec<f64> = a.flows.iter().map(|f| f.start_s).collect();
    let gaps: Vec<f64> = starts.windows(2).map(|w| w[1] - w[0]).collect();
    let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
    let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
    assert!((sd / mean - 1.0).abs() < 0.1, "gaps: mean {mean}, sd {sd}");
    // Ids in order of arrival, names per workload, every size drawn once.
    assert!(a.flows.iter().enumerate().all(|(i, f)| f.id == i as u32 && f.name == format!("web.{i}")));
    assert!(a.flows.iter().all(|f| f.group.as_deref() == Some("web") && f.app == "transfer"));
    // Another queue changes completion times, not arrivals, pairs or sizes.
    let b = run(AlgoSpec::named("codel"));
    let key = |r: &ccsim_core::Results| -> Vec<(u64, String, Option<u64>)> {
        r.flows.iter().map(|f| (f.start_s.to_bits(), f.src.clone(), f.size_bytes)).collect()
    };
    assert_eq!(key(&a), key(&b));
    assert_ne!(
        a.flows.iter().map(|f| f.fct_s.map(f64::to_bits)).collect::<Vec<_>>(),
        b.flows.iter().map(|f| f.fct_s.map(f64::to_bits)).collect::<Vec<_>>()
    );
    // The same seed gives the same table.
    let again = run(droptail(1000));
    assert_eq!(serde_json::to_string(&a.flows).unwrap(), serde_json::to_string(&again.flows).unwrap());
}

#[test]
fn a_flow_alone_takes_its_ideal_time_unless_slow_start_waits() {
    // One 1 MB transfer every 10 s on average (they rarely overlap); the CDF workload draws
    // exactly its one size.
    let alone = |bottleneck_delay: u64| {
        let mut cfg = scenario(1, RATE, 0.1, &[], 200 * SEC);
        cfg.links[0].ab.delay_ns = bottleneck_delay;
        cfg.links[0].ba.delay_ns = bottleneck_delay;
        cfg.workloads[0].size_cdf = vec![(1_000_000.0, 1.0)];
        let r = common::run(&cfg);
        assert!(r.flows.len() > 10);
        let starts: Vec<f64> = r.flows.iter().map(|f| f.start_s).collect();
        // The flows that had the path to themselves.
        let lone = |i: usize| {
            (i == 0 || starts[i] - starts[i - 1] > 2.0) && starts.get(i + 1).is_none_or(|&s| s - starts[i] > 2.0)
        };
        let rows: Vec<_> = r.flows.iter().enumerate().filter(|&(i, _)| lone(i)).map(|(_, f)| f.clone()).collect();
        assert!(rows.len() > 5 && rows.iter().all(|f| f.size_bytes == Some(1_000_000)));
        rows
    };
    // A 3 ms round trip holds 2.5 segments at 10 Mbit/s: the initial window of 10 fills it,
    // and the transfer takes exactly the ideal time: 690 segments of 1448 + 52 bytes and
    // one of 880 + 52 serialized at 10 Mbit/s, the first and last at 100 Mbit/s on the
    // access links, and 1.5 ms of propagation.
    for f in alone(MS) {
        assert_eq!(f.slowdown, Some(1.0), "FCT {:?}", f.fct_s);
        let ideal = 1.5e-3 + 120e-6 + 690.0 * 1.2e-3 + 745.6e-6 + 74.56e-6;
        assert!((f.fct_s.unwrap() - ideal).abs() < 1e-9, "FCT {:?}, ideal {ideal}", f.fct_s);
    }
    // A 102.5 ms round trip holds 85 segments: slow start (IW10, one ACK every two
    // segments, each growing the window by two) sends 10, 20, 40 and 80 segments in the
    // first four round trips, and the link idles for the rest of each: 102.5 ms less 1.2 ms
    // a segment, 90.5 + 78.5 + 54.5 + 6.5 = 230 ms in all, on top of the ideal.
    for f in alone(50 * MS) {
        let (fct, slowdown) = (f.fct_s.unwrap(), f.slowdown.unwrap());
        let extra = fct - fct / slowdown;
        assert!((extra - 0.230).abs() < 0.01, "FCT {fct}: {extra:.4} s over the ideal");
    }
}

#[test]
fn bad_workloads_are_errors_naming_the_key() {
    let base = scenario(2, RATE, 5.0, &exp_sizes(), 10 * SEC);
    let check = |edit: &dyn Fn(&mut Config), field: &str| {
        let mut cfg = base.clone();
        edit(&mut cfg);
        let err = Simulation::new(&cfg).err().unwrap_or_else(|| panic!("{field}: accepted"));
        assert_eq!(err.field, field, "{err:?}");
    };
    check(&|c| c.workloads[0].rate_per_s = 0.0, "workloads[0].rate_per_s");
    check(&|c| c.workloads[0].pairs.clear(), "workloads[0].pairs");
    check(&|c| c.workloads[0].pairs[1] = (2, 0), "workloads[0].pairs[1].dst");
    check(&|c| c.workloads[0].pairs[0] = (2, 99), "workloads[0].pairs[0]");
    check(&|c| c.workloads[0].start_ns = 20 * SEC, "workloads[0].stop_ns");
    check(&|c| c.workloads[0].size_cdf = vec![(10.0, 0.5), (5.0, 1.0)], "workloads[0].size_cdf[1]");
    check(&|c| c.workloads[0].size_cdf = vec![(10.0, 0.5)], "workloads[0].size_cdf");
    check(
        &|c| c.workloads[0].transport = AlgoSpec::named("tcp").with("mss", ParamValue::Int(0)),
        "workloads[0].transport.mss",
    );
    check(
        &|c| {
            c.workloads[0].size.insert("distribution".into(), ParamValue::name("pareto"));
            c.workloads[0].size.insert("shape".into(), ParamValue::Float(0.9));
        },
        "workloads[0].size.shape",
    );
}
