//! PIE at a 100 Mb/s bottleneck shared by ten NewReno flows (RTTs 20-60 ms): the queueing
//! delay stays near the target while the link stays busy, and with ECN marks replace drops.

mod common;

use ccsim_core::config::{AlgoSpec, Config};
use ccsim_core::params::{ParamValue, Size};
use ccsim_core::results::QueueResult;
use ccsim_core::sim::time::{MS, SEC};
use ccsim_core::Results;
use common::*;

const FLOWS: usize = 10;

fn pie(target_ms: u64, ecn: bool) -> AlgoSpec {
    AlgoSpec::named("pie")
        .with("limit", ParamValue::Size(Size::Packets(1000)))
        .with("target", ParamValue::Int((target_ms * MS) as i64))
        .with("ecn", ParamValue::Bool(ecn))
}

/// 100 Mb/s, 2 ms bottleneck; 1 Gb/s access links of 4-14 ms, so RTT = 4 * access + 4 ms
/// is 20-60 ms; flows start within the first second; 60 s measured after a 10 s warm-up.
fn scenario(queue: AlgoSpec, ecn_flows: bool) -> Config {
    let mut cfg = dumbbell(FLOWS, 100_000_000, 2 * MS, queue, 1_000_000_000, |i| (4 + 10 * i as u64 / 9) * MS);
    cfg.duration_ns = 60 * SEC;
    cfg.warmup_ns = 10 * SEC;
    for i in 0..FLOWS {
        let mut f = bulk_tcp(FLOWS, i, "newreno");
        f.start_max_ns = Some(SEC);
        if ecn_flows {
            f.transport = AlgoSpec::named("tcp").with("ecn", ParamValue::Bool(true));
        }
        cfg.flows.push(f);
    }
    cfg
}

fn bottleneck(r: &Results) -> &QueueResult {
    r.queues.iter().find(|q| q.name == "A->B").expect("bottleneck queue")
}

fn retransmissions(r: &Results) -> u64 {
    r.flows.iter().map(|f| f.retransmissions).sum()
}

fn report(label: &str, r: &Results) {
    let q = bottleneck(r);
    eprintln!(
        "{label}: sojourn mean {:.2} ms max {:.1} ms, utilization {:.4}, arrivals {}, drops {}, marks {}, \
         retransmissions {}, mean length {:.1} p",
        q.mean_sojourn_s * 1e3,
        q.max_sojourn_s * 1e3,
        r.utilization.unwrap(),
        q.arrivals,
        q.drops,
        q.marks,
        retransmissions(r),
        q.mean_len_pkts,
    );
}

fn check_delay_and_utilization(target_ms: u64) -> Results {
    let r = run(&scenario(pie(target_ms, false), false));
    report(&format!("pie target {target_ms} ms"), &r);
    let q = bottleneck(&r);
    let target = target_ms as f64 * 1e-3;
    assert!(q.mean_sojourn_s < 3.0 * target, "mean sojourn {} s vs target {target} s", q.mean_sojourn_s);
    // The controller is not starving the link: the mean delay is of the target's order.
    assert!(q.mean_sojourn_s > 0.2 * target, "mean sojourn {} s vs target {target} s", q.mean_sojourn_s);
    assert!(r.utilization.unwrap() > 0.90, "utilization {}", r.utilization.unwrap());
    assert!(q.drops > 0);
    assert_eq!(q.marks, 0);
    r
}

#[test]
fn pie_holds_the_delay_near_a_15ms_target_at_full_utilization() {
    check_delay_and_utilization(15);
}

#[test]
fn pie_holds_the_delay_near_a_5ms_target_at_full_utilization() {
    check_delay_and_utilization(5);
}

#[test]
fn with_ecn_pie_marks_instead_of_dropping_and_retransmissions_fall() {
    let plain = run(&scenario(pie(15, false), false));
    let ecn = run(&scenario(pie(15, true), true));
    report("pie target 15 ms, no ECN", &plain);
    report("pie target 15 ms, ECN", &ecn);
    let (qp, qe) = (bottleneck(&plain), bottleneck(&ecn));
    assert!(qe.marks > 0);
    assert!(qe.marks as f64 > 0.5 * qp.drops as f64, "marks {} vs drops without ECN {}", qe.marks, qp.drops);
    // p stays below the 10 % marking threshold, so drops are (nearly) gone.
    assert!(qe.drops * 100 <= qp.drops, "drops {} with ECN vs {} without", qe.drops, qp.drops);
    assert!(
        retransmissions(&ecn) * 10 <= retransmissions(&plain),
        "retransmissions {} with ECN vs {} without",
        retransmissions(&ecn),
        retransmissions(&plain)
    );
    assert!(qe.mean_sojourn_s < 3.0 * 0.015);
    assert!(ecn.utilization.unwrap() > 0.90);
}

#[test]
fn timestamp_and_linux_variants_also_hold_the_delay() {
    let on = ParamValue::Bool(true);
    for (label, q) in [
        ("timestamps", pie(15, false).with("use_timestamps", on)),
        ("linux", pie(15, false).with("linux", on).with("use_timestamps", on).with("derandomize", on)),
    ] {
        let r = run(&scenario(q, false));
        report(label, &r);
        let q = bottleneck(&r);
        assert!(q.mean_sojourn_s < 3.0 * 0.015 && q.mean_sojourn_s > 0.2 * 0.015, "{label}: {}", q.mean_sojourn_s);
        assert!(r.utilization.unwrap() > 0.90, "{label}: utilization {}", r.utilization.unwrap());
    }
}
