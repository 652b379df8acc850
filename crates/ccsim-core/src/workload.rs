//! Open-loop workloads: flows that arrive while the run goes on, as the datacenter and AQM
//! literature drives its flow-completion-time experiments (Alizadeh et al., "Data Center TCP",
//! SIGCOMM 2010, sec. 4.3; Alizadeh et al., "pFabric", SIGCOMM 2013, sec. 5).
//!
//! A workload is a Poisson process of rate `rate_per_s` from `start_ns` to `stop_ns`; each
//! arrival is a new flow between one of `pairs` (drawn uniformly) running a `transfer` of a
//! size drawn from the workload's distribution: the `transfer` application's parametric ones
//! (`app/transfer.rs`) or an empirical CDF given as (bytes, cumulative probability) points,
//! sampled by inversion with linear interpolation between points (the convention of the
//! ns-2 `EmpiricalRandomVariable` the pFabric and PIAS scripts use, and of HPCC's traffic
//! generator). A first point of probability p > 0 is an atom: that size with probability p.
//!
//! Arrival times and pairs come from the workload's `Stream::Arrivals`, sizes from its
//! `Stream::Sizes`: changing the size distribution, the transport or the queue leaves the
//! arrival times and pairs as they were (common random numbers across compared runs).
//!
//! The engine (`engine/workload.rs`) creates each flow when it arrives and retires it when it
//! is over, so that memory follows the flows alive at once, not the flows ever created.

use crate::config::{Config, WorkloadSpec};
use crate::error::ConfigError;
use crate::sim::dist::Dist;
use crate::sim::rng::{Rng, Stream};
use crate::sim::time::{tx_time, Time, SEC};

/// Largest size a workload draws (bytes), as `transfer` (`app/transfer.rs`).
const MAX_SIZE: f64 = 1e15;

/// How a workload draws its flows' sizes.
#[derive(Clone, Debug, PartialEq)]
pub enum Sizes {
    /// One of the `transfer` application's distributions.
    Param(Dist),
    /// An empirical CDF: (bytes, cumulative probability) points, both non-decreasing, the
    /// last probability 1.
    Cdf(Vec<(f64, f64)>),
}

impl Sizes {
    /// One size (whole bytes, at least 1).
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        let x = match self {
            Sizes::Param(d) => d.sample(rng),
            Sizes::Cdf(points) => {
                let u = rng.uniform();
                let i = points.iter().position(|&(_, p)| p > u).unwrap_or(points.len() - 1);
                match i {
                    0 => points[0].0,
                    _ => {
                        let ((x0, p0), (x1, p1)) = (points[i - 1], points[i]);
                        x0 + (x1 - x0) * (u - p0) / (p1 - p0)
                    }
                }
            }
        };
        x.round().clamp(1.0, MAX_SIZE) as u64
    }

    /// The mean size (bytes) of the distribution as sampled (before rounding).
    pub fn mean(&self) -> f64 {
        match self {
            Sizes::Param(d) => d.mean(),
            Sizes::Cdf(points) => {
                let atom = points[0].0 * points[0].1;
                atom + points.windows(2).map(|w| (w[1].1 - w[0].1) * (w[0].0 + w[1].0) / 2.0).sum::<f64>()
            }
        }
    }
}

/// A workload while the run goes on: its next arrival and its random streams.
pub struct Workload {
    /// The flows' template and where they go.
    pub spec: WorkloadSpec,
    /// Prefix of the flows' names.
    pub name: String,
    sizes: Sizes,
    arrivals: Rng,
    size_rng: Rng,
    /// Mean time between arrivals (ns).
    mean_gap: f64,
    /// No arrival at or after this time.
    stop: Time,
    /// Flows created so far.
    pub created: u32,
}

/// An arrival: the pair it runs on and its size.
pub struct Arrival {
    /// Index into the workload's `pairs`.
    pub pair: usize,
    /// Bytes the flow transfers.
    pub size: u64,
}

impl Workload {
    /// Workload `w` of `cfg`, checked; `size` is the distribution its `size` parameters
    /// describe (resolved by the caller against `transfer`'s table) unless it has a CDF.
    pub fn new(cfg: &Config, w: usize, size: Dist) -> Result<Workload, ConfigError> {
        let spec = &cfg.workloads[w];
        let field = |key: &str| format!("workloads[{w}].{key}");
        if spec.pairs.is_empty() {
            return Err(ConfigError::new(field("pairs"), "at least one (src, dst) pair is needed"));
        }
        if !(spec.rate_per_s.is_finite() && spec.rate_per_s > 0.0) {
            return Err(ConfigError::new(field("rate_per_s"), format!("must be positive, got {}", spec.rate_per_s)));
        }
        let stop = spec.stop_ns.unwrap_or(cfg.duration_ns).min(cfg.duration_ns);
        if stop <= spec.start_ns {
            return Err(ConfigError::new(field("stop_ns"), "no arrivals: the workload stops before it starts"));
        }
        let sizes = if spec.size_cdf.is_empty() { Sizes::Param(size) } else { Sizes::Cdf(check_cdf(spec, w)?) };
        Ok(Workload {
            name: spec.name.clone().unwrap_or_else(|| format!("workload{w}")),
            spec: spec.clone(),
            sizes,
            arrivals: Rng::stream(cfg.seed, Stream::Arrivals(w as u32)),
            size_rng: Rng::stream(cfg.seed, Stream::Sizes(w as u32)),
            mean_gap: SEC as f64 / spec.rate_per_s,
            stop,
            created: 0,
        })
    }

    /// The time of the arrival after one at `after`, if it is before the stop.
    pub fn next_arrival(&mut self, after: Time) -> Option<Time> {
        let gap = Dist::Exponential { mean: self.mean_gap }.sample(&mut self.arrivals).round();
        let at = after.saturating_add(gap.min(u64::MAX as f64) as u64);
        (at < self.stop).then_some(at)
    }

    /// The first arrival, if any.
    pub fn first_arrival(&mut self) -> Option<Time> {
        self.next_arrival(self.spec.start_ns)
    }

    /// Draw what arrives now: its pair and its size.
    pub fn arrive(&mut self) -> Arrival {
        let pair = self.arrivals.range_u64(0, self.spec.pairs.len() as u64) as usize;
        self.created += 1;
        Arrival { pair, size: self.sizes.sample(&mut self.size_rng) }
    }
}

/// The CDF points, checked: sizes positive and non-decreasing, probabilities in [0, 1]
/// non-decreasing, the last 1.
fn check_cdf(spec: &WorkloadSpec, w: usize) -> Result<Vec<(f64, f64)>, ConfigError> {
    let points = &spec.size_cdf;
    for (k, &(x, p)) in points.iter().enumerate() {
        let field = format!("workloads[{w}].size_cdf[{k}]");
        if !(x.is_finite() && (0.0..=MAX_SIZE).contains(&x)) {
            return Err(ConfigError::new(field, format!("size must be in [0, {MAX_SIZE:e}] bytes, got {x}")));
        }
        if !(0.0..=1.0).contains(&p) {
            return Err(ConfigError::new(field, format!("probability must be in [0, 1], got {p}")));
        }
        if k > 0 && (x < points[k - 1].0 || p < points[k - 1].1) {
            return Err(ConfigError::new(field, "sizes and probabilities must not decrease"));
        }
    }
    match points.last() {
        Some(&(_, 1.0)) => Ok(points.clone()),
        _ => Err(ConfigError::new(
            format!("workloads[{w}].size_cdf"),
            "the last point's cumulative probability must be 1",
        )),
    }
}

/// One hop of a path: its rate (bit/s) and propagation delay (ns).
#[derive(Clone, Copy, Debug)]
pub struct Hop {
    /// Transmission rate.
    pub rate_bps: u64,
    /// Propagation delay.
    pub delay: Time,
}

/// The completion time of a transfer of `size` bytes alone on an idle path, with a window
/// that never limits it: the reference of the flows table's `slowdown` (FCT over this), as
/// pFabric and its successors define it. The segments (`seg` payload bytes each, `header`
/// bytes of headers) are serialized one after the other at every hop, store and forward,
/// so the last byte reaches the receiver after the path's propagation delay, one segment's
/// transmission at every hop but the slowest, and all of them at the slowest. With a
/// handshake, the SYN and SYN-ACK (`handshake` bytes each) take one round trip first.
pub fn ideal_fct(forward: &[Hop], back: &[Hop], size: u64, seg: u64, header: u64, handshake: Option<u64>) -> Time {
    let seg = seg.max(1);
    let segments = size.div_ceil(seg).max(1);
    let full = (seg.min(size) + header) as u32;
    let last = (size - (segments - 1) * seg + header) as u32;
    // The slowest hop (the first of equals) serializes every segment; before it the first
    // segment leads the way, after it the last one closes it.
    let b = (0..forward.len()).rev().max_by_key(|&i| tx_time(full, forward[i].rate_bps)).unwrap_or(0);
    let tx = |hops: &[Hop], bytes: u32| hops.iter().map(|h| tx_time(bytes, h.rate_bps)).sum::<Time>();
    let mut t = forward.iter().map(|h| h.delay).sum::<Time>();
    if let Some(slowest) = forward.get(b) {
        t += tx(&forward[..b], full)
            + (segments - 1) * tx_time(full, slowest.rate_bps)
            + tx_time(last, slowest.rate_bps)
            + tx(&forward[b + 1..], last);
    }
    if let Some(syn) = handshake {
        let way = |hops: &[Hop]| hops.iter().map(|h| h.delay).sum::<Time>() + tx(hops, syn as u32);
        t += way(forward) + way(back);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::time::{MS, US};

    fn draws(sizes: &Sizes, n: usize) -> Vec<u64> {
        let mut rng = Rng::stream(5, Stream::Sizes(0));
        (0..n).map(|_| sizes.sample(&mut rng)).collect()
    }

    #[test]
    fn cdf_draws_follow_the_points_and_interpolate_between_them() {
        // 30 % exactly 1000 B (an atom), then uniform on (1000, 3000] up to probability 1.
        let cdf = Sizes::Cdf(vec![(1000.0, 0.3), (3000.0, 1.0)]);
        let d = draws(&cdf, 200_000);
        let atom = d.iter().filter(|&&x| x == 1000).count() as f64 / d.len() as f64;
        assert!((atom - 0.3).abs() < 0.005, "P(X = 1000) = {atom}");
        let below_2000 = d.iter().filter(|&&x| x <= 2000).count() as f64 / d.len() as f64;
        assert!((below_2000 - 0.65).abs() < 0.005, "P(X <= 2000) = {below_2000}, CDF says 0.3 + 0.7/2");
        assert!(d.iter().all(|&x| (1000..=3000).contains(&x)));
        // The mean: 0.3 * 1000 + 0.7 * 2000 = 1700.
        assert_eq!(cdf.mean(), 1700.0);
        let mean = d.iter().sum::<u64>() as f64 / d.len() as f64;
        assert!((mean - 1700.0).abs() < 5.0, "sample mean {mean}");
    }

    #[test]
    fn cdf_from_zero_has_no_atom() {
        let cdf = Sizes::Cdf(vec![(0.0, 0.0), (10_000.0, 0.5), (20_000.0, 1.0)]);
        assert_eq!(cdf.mean(), 0.5 * 5000.0 + 0.5 * 15_000.0);
        let d = draws(&cdf, 100_000);
        let median_side = d.iter().filter(|&&x| x <= 10_000).count() as f64 / d.len() as f64;
        assert!((median_side - 0.5).abs() < 0.01);
    }

    #[test]
    fn ideal_fct_is_the_hand_computed_store_and_forward_time() {
        // Two hops: 100 Mbit/s 1 ms, then 10 Mbit/s 5 ms. Three segments of 1000 + 40 B and a
        // last one of 500 + 40 B: 2500 B with 1000-byte segments.
        let fwd = [Hop { rate_bps: 100_000_000, delay: MS }, Hop { rate_bps: 10_000_000, delay: 5 * MS }];
        let t = ideal_fct(&fwd, &fwd, 2500, 1000, 40, None);
        // First segment through both hops: 83.2 us + 832 us; then one more full segment and
        // the short one (432 us) at the 10 Mbit/s hop; plus 6 ms of propagation.
        let expected = 6 * MS + 83_200 + 832 * US + 832 * US + 432 * US;
        assert_eq!(t, expected);
        // A handshake adds a round trip of 60-byte segments.
        let syn = ideal_fct(&fwd, &fwd, 2500, 1000, 40, Some(60));
        assert_eq!(syn - t, 2 * (6 * MS + 4_800 + 48 * US));
        // One segment: just its trip.
        assert_eq!(ideal_fct(&fwd, &fwd, 100, 1000, 40, None), 6 * MS + 11_200 + 112 * US);
        // A fast hop after the slowest sees the last, short segment go through.
        let three = [fwd[0], fwd[1], Hop { rate_bps: 100_000_000, delay: MS }];
        assert_eq!(ideal_fct(&three, &three, 2500, 1000, 40, None), expected + MS + 43_200);
    }
}
