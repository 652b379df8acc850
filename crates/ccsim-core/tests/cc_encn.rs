//! ENCN end to end: ENCN senders (`encn` congestion control) behind ENCN routers (`encn`
//! queues) on the daisy chain of paper 000 sec. 3, and on a 10 Mbit/s dumbbell.

mod common;
#[path = "common/daisy.rs"]
mod daisy;

use ccsim_core::config::AlgoSpec;
use ccsim_core::params::{ParamValue, Size};
use ccsim_core::sim::time::{MS, SEC};
use ccsim_core::Simulation;
use common::*;
use daisy::*;

/// An ENCN router queue: DropTail of `limit` packets that withdraws the non-congestion flag
/// at or above `q_min` bytes.
fn encn_queue(q_min: u64, limit: u64) -> AlgoSpec {
    AlgoSpec::named("encn")
        .with("q_min", ParamValue::Size(Size::Bytes(q_min)))
        .with("limit", ParamValue::Size(Size::Packets(limit)))
}

#[test]
fn on_the_paper_daisy_chain_encn_holds_the_queue_near_q_min_with_a_busy_link() {
    let tx_s = (PKT_BYTES * 8) as f64 / BOTTLENECK_BPS as f64;
    for delack in [1, 2] {
        let cfg = chain_run(AlgoSpec::named("encn"), encn_queue(Q_MIN, ROUTER_PKTS), paper_tcp(delack));
        let (r, b) = watch(&cfg, "R1->R2", BOTTLENECK_BPS, PKT_BYTES, Q_MIN - 2 * PKT_BYTES, Q_MIN + 2 * PKT_BYTES);
        let red =
            chain_run(AlgoSpec::named("reno"), paper_red(), paper_tcp(delack).with("ecn", ParamValue::Bool(true)));
        let (rr, rb) = watch(&red, "R1->R2", BOTTLENECK_BPS, PKT_BYTES, 0, 0);
        let (util, red_util) = (r.utilization.unwrap(), rr.utilization.unwrap());
        let f = &r.flows[0];
        eprintln!(
            "encn, delack_count {delack}: utilization {util:.4} (reno+red {red_util:.4}), mean queue {:.0} B, max {} B, \
             {:.1} % of samples within Q_min +- 2 packets, link idle {:.2} % (reno+red {:.2} %), longest idle {:.2} ms \
             (reno+red {:.1} ms), drops {}, timeouts {}",
            b.mean_bytes, b.max_bytes, 100.0 * b.in_band, 100.0 * b.idle, 100.0 * rb.idle, b.longest_idle_s * 1e3,
            rb.longest_idle_s * 1e3, r.queues[2].drops, f.timeouts
        );
        assert!(util > 0.93 && util > red_util, "utilization {util} (red {red_util})");
        assert!(b.idle < 0.06 && b.idle < rb.idle, "idle {} (red {})", b.idle, rb.idle);
        assert!(b.longest_idle_s <= 2.0 * tx_s, "longest idle {}", b.longest_idle_s);
        // The router clears the flag at Q_min: the queue reaches it and stays within two
        // packets of it most of the time, never near the 17-packet buffer.
        assert!((Q_MIN..=2 * Q_MIN).contains(&b.max_bytes), "max {}", b.max_bytes);
        assert!(b.mean_bytes > 0.3 * Q_MIN as f64 && b.mean_bytes < 1.2 * Q_MIN as f64, "mean {}", b.mean_bytes);
        assert!(b.in_band > 0.6, "in band {}", b.in_band);
        assert_eq!((r.queues[2].drops, f.timeouts, f.fast_recoveries), (0, 0, 0));
    }
}

#[test]
fn encn_fills_a_10_mbps_dumbbell_alone_and_in_company() {
    // Transport defaults; an ENCN bottleneck of 200 packets with Q_min scaled to the paper's
    // queueing delay (3 kbytes at 1.5 Mbit/s = 16 ms; 20 kbytes at 10 Mbit/s).
    let q_min = 20_000;
    for n in [1, 3] {
        let mut cfg =
            dumbbell(n, 10_000_000, 10 * MS, encn_queue(q_min, 200), 100_000_000, |i| (5 + 5 * i as u64) * MS);
        cfg.duration_ns = 60 * SEC;
        cfg.warmup_ns = 10 * SEC;
        for i in 0..n {
            cfg.flows.push(bulk_tcp(n, i, "encn"));
        }
        let mut sim = Simulation::new(&cfg).expect("valid config");
        sim.run();
        sim.check_conservation().expect("conservation");
        let r = sim.results();
        let q = &r.queues[0];
        let util = r.utilization.unwrap();
        eprintln!(
            "{n} encn flow(s), q_min {q_min} B: utilization {util:.4}, mean queue {:.0} B, max {} p, drops {}, jain {:.3}, goodputs {:?} Mb/s",
            q.mean_len_bytes,
            q.max_len_pkts,
            q.drops,
            r.jain_index.unwrap(),
            r.flows.iter().map(|f| (f.goodput_bps / 1e4).round() / 100.0).collect::<Vec<_>>()
        );
        assert!(util > 0.8, "{n} flows: utilization {util}");
        assert!(r.flows.iter().all(|f| f.goodput_bps > 0.0));
        let mean = q.mean_len_bytes / q_min as f64;
        assert!((0.5..1.5).contains(&mean) && q.drops == 0, "mean {} B, drops {}", q.mean_len_bytes, q.drops);
    }
}

#[test]
fn without_encn_routers_every_ack_echoes_and_the_window_grows_to_rwnd() {
    // DropTail only: nothing clears the flag, so the sender sees non-congestion throughout
    // and grows one segment per RTT up to rwnd (64 packets), filling the 17-packet router
    // buffer (BDP 16 packets), and overflowing it: losses, handled as Reno.
    let cfg = chain_run(AlgoSpec::named("encn"), droptail(ROUTER_PKTS), paper_tcp(1));
    let mut sim = Simulation::new(&cfg).expect("valid config");
    sim.run();
    sim.check_conservation().expect("conservation");
    let r = sim.results();
    let q = &r.queues[2];
    eprintln!(
        "encn without encn queues: mean queue {:.1} p, drops {}, fast recoveries {}",
        q.mean_len_pkts, q.drops, r.flows[0].fast_recoveries
    );
    assert_eq!(q.name, "R1->R2");
    assert!(q.drops > 0 && q.mean_len_pkts > 5.0);
}
