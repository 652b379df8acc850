//! Poisson source: packets arrive as a Poisson process, i.e. with independent exponentially
//! distributed inter-arrival times of mean `8 * packet_size / rate` (Kleinrock, Queueing
//! Systems vol. 1, sec. 2.4), each of `packet_size` bytes or, with `exp_size = true`, of an
//! exponentially distributed size with that mean (the "M" service of M/M/1 when the link
//! rate is fixed). Used by the analytic oracles (M/M/1, M/D/1).
//!
//! Draws come from the application's own stream (`Stream::App(flow)`), so a seed reproduces
//! the arrivals exactly. Deliberate discretisations: arrival instants are accumulated in f64
//! nanoseconds and rounded to the integer-ns clock (error < 0.5 ns, no drift); exponential
//! sizes are rounded to whole bytes and at least 1 byte (mean shifts by < 0.5 ns-equivalent
//! of a byte, relative error ~ 1/(2 * packet_size)).

use super::{offer, AppModel, Application, Socket, SEND_BUFFER};
use crate::params::{ParamKind, ParamSpec, ParamValue, Params};
use crate::registry::Randomness;
use crate::sim::dist::Dist;
use crate::sim::rng::Rng;
use crate::sim::time::{Time, SEC};
use crate::stats::FlowStats;

static PARAMS: &[ParamSpec] = &[
    ParamSpec::new("rate", ParamKind::Rate, None, "mean application data rate (packet rate = rate / (8 packet_size))")
        .range(1.0, 1e13),
    ParamSpec::new("packet_size", ParamKind::Bytes, Some(ParamValue::Int(1000)), "(mean) payload per packet")
        .range(1.0, 65507.0),
    ParamSpec::new("exp_size", ParamKind::Bool, Some(ParamValue::Bool(false)), "exponentially distributed sizes"),
    SEND_BUFFER,
];

/// Registration.
pub const MODEL: AppModel = AppModel {
    name: "poisson",
    doc: "Poisson arrivals of mean rate `rate`; fixed or exponential (`exp_size`) packet sizes",
    params: PARAMS,
    random: Randomness::Always { what: "random arrivals" },
    flow_refs: &[],
    build: |p: &Params, start, stop, rng| {
        let size = p.uint("packet_size").max(1);
        let pps = p.uint("rate") as f64 / (8.0 * size as f64);
        Box::new(Poisson::new(start, stop, pps, size, p.bool("exp_size"), p.uint("buffer"), rng))
    },
};

/// Sends packets at the instants of a Poisson process.
pub struct Poisson {
    /// Next arrival instant, unrounded (ns).
    next_f: f64,
    stop: Option<Time>,
    /// Mean inter-arrival time (ns).
    mean_gap_ns: f64,
    size: u64,
    exp_size: bool,
    buffer: u64,
    rng: Rng,
}

impl Poisson {
    /// Arrivals at `pps` packets/s on average from `start` (the first one after an
    /// exponential gap, as a Poisson process observed from `start`) until `stop`.
    /// Messages that would overflow a send buffer of `buffer` bytes are lost at the sender.
    pub fn new(
        start: Time,
        stop: Option<Time>,
        pps: f64,
        size: u64,
        exp_size: bool,
        buffer: u64,
        mut rng: Rng,
    ) -> Self {
        // A non-positive or non-finite rate yields no packets rather than a panic.
        let mean_gap_ns = if pps > 0.0 && pps.is_finite() { SEC as f64 / pps } else { f64::INFINITY };
        let next_f = start as f64 + Dist::Exponential { mean: mean_gap_ns }.sample(&mut rng);
        Poisson { next_f, stop, mean_gap_ns, size: size.max(1), exp_size, buffer, rng }
    }

    fn next(&self) -> Option<Time> {
        // Beyond ~292 years (or an infinite or NaN gap) there is nothing more to send.
        if self.next_f.is_nan() || self.next_f >= Time::MAX as f64 / 2.0 {
            return None;
        }
        let t = self.next_f.round() as Time;
        match self.stop {
            Some(stop) if t >= stop => None,
            _ => Some(t),
        }
    }
}

impl Application for Poisson {
    fn next_wakeup(&self) -> Option<Time> {
        self.next()
    }

    fn on_wakeup(&mut self, now: Time, sock: &mut dyn Socket, stats: &mut FlowStats) {
        while let Some(t) = self.next() {
            if t > now {
                break;
            }
            let bytes = if self.exp_size {
                (Dist::Exponential { mean: self.size as f64 }.sample(&mut self.rng).round() as u64)
                    .clamp(1, u32::MAX as u64 / 2)
            } else {
                self.size
            };
            offer(now, bytes, self.buffer, sock, stats);
            self.next_f += Dist::Exponential { mean: self.mean_gap_ns }.sample(&mut self.rng);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::testing::RecordingSocket;
    use crate::sim::rng::Stream;

    /// Run the source to the end and return the arrival instants and sizes.
    fn run(pps: f64, size: u64, exp_size: bool, stop: Time) -> (Vec<Time>, Vec<u64>) {
        let mut app = Poisson::new(0, Some(stop), pps, size, exp_size, u64::MAX, Rng::stream(42, Stream::App(0)));
        let mut sock = RecordingSocket::default();
        let mut stats = FlowStats::default();
        let mut times = vec![];
        while let Some(t) = app.next_wakeup() {
            let before = sock.written.len();
            app.on_wakeup(t, &mut sock, &mut stats);
            times.extend(std::iter::repeat_n(t, sock.written.len() - before));
        }
        assert_eq!(stats.messages_generated as usize, times.len());
        (times, sock.written)
    }

    fn mean_and_cv(x: &[f64]) -> (f64, f64) {
        let n = x.len() as f64;
        let m = x.iter().sum::<f64>() / n;
        let var = x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (n - 1.0);
        (m, var.sqrt() / m)
    }

    #[test]
    fn gaps_are_exponential_with_the_requested_mean() {
        // 10^5 packets/s for 1 s: n ~ 10^5 gaps of mean 10 us. For an exponential the mean's
        // relative sd is 1/sqrt(n) ~ 0.32 %; the sample CV's sd is of the same order (delta
        // method with the exponential's fourth moment 9 mean^4: ~ 1/sqrt(n)). 2 % is > 5 sd.
        let (times, sizes) = run(1e5, 1000, false, SEC);
        assert!(sizes.iter().all(|&s| s == 1000), "fixed sizes stay fixed");
        let gaps: Vec<f64> = times.windows(2).map(|w| (w[1] - w[0]) as f64).collect();
        let (mean, cv) = mean_and_cv(&gaps);
        assert!((mean / 10_000.0 - 1.0).abs() < 0.02, "mean gap {mean} ns");
        assert!((cv - 1.0).abs() < 0.02, "cv {cv}");
        // Count in 1 s: Poisson(10^5), sd 316; 5 sd.
        assert!((times.len() as f64 - 1e5).abs() < 1600.0, "count {}", times.len());
    }

    #[test]
    fn exponential_sizes_have_the_requested_mean_and_unit_cv() {
        let (_, sizes) = run(1e5, 1000, true, SEC);
        let s: Vec<f64> = sizes.iter().map(|&b| b as f64).collect();
        let (mean, cv) = mean_and_cv(&s);
        // Same 5-sd bounds as the gaps; byte rounding moves the mean by < 0.05 %.
        assert!((mean / 1000.0 - 1.0).abs() < 0.02, "mean size {mean}");
        assert!((cv - 1.0).abs() < 0.02, "cv {cv}");
    }

    #[test]
    fn same_seed_same_arrivals_and_zero_rate_sends_nothing() {
        assert_eq!(run(1e4, 500, true, SEC / 10), run(1e4, 500, true, SEC / 10));
        let app = Poisson::new(0, None, 0.0, 100, false, u64::MAX, Rng::stream(1, Stream::App(0)));
        assert_eq!(app.next_wakeup(), None);
    }
}
