//! A finite transfer: `size` bytes written at the start time (ns-3 `BulkSendApplication` with
//! `MaxBytes`), or a size drawn once, at construction, from a distribution of mean `size`:
//!
//! - `fixed`: exactly `size`;
//! - `uniform`: uniform on [`size_min`, 2 `size` - `size_min`];
//! - `exponential`: exponential of mean `size`;
//! - `pareto`: Pareto of shape `shape` (> 1) and mean `size`, the heavy-tailed web transfer
//!   model (ns-2 `avg_`/`shape_`; see `sim/dist.rs` for the sources).
//!
//! The draw comes from the application's own stream (`Stream::App(flow)`), so a seed gives the
//! same sizes. Deliberate discretisation: the drawn size is rounded to whole bytes and kept in
//! [1 B, 10^15 B] (a Pareto draw above 10^15 B would never complete anyway). Over UDP the
//! transfer is one datagram (UDP does not segment).
//!
//! A transfer is one message, written at the start, so its completion is the flow's: the flows
//! table's `fct_s`, from the start (when the SYN, or without a handshake the first data packet,
//! leaves) to the moment the receiving application has the last byte. Over TCP with
//! `handshake` the application closes the connection once its data is acknowledged, with a FIN
//! exchange (`tcp/sender/connection.rs`); it is the one application that ends.

use super::{AppModel, Application, Socket};
use crate::error::ConfigError;
use crate::params::{Name, ParamKind, ParamSpec, ParamValue, Params};
use crate::registry::Randomness;
use crate::sim::dist::Dist;
use crate::sim::rng::Rng;
use crate::sim::time::Time;
use crate::stats::FlowStats;

/// Largest size drawn (bytes).
const MAX_SIZE: f64 = 1e15;

static PARAMS: &[ParamSpec] = &[
    ParamSpec::new("size", ParamKind::Bytes, None, "bytes to transfer, or the mean of the size distribution")
        .range(1.0, MAX_SIZE),
    ParamSpec::new(
        "distribution",
        ParamKind::Choice,
        Some(ParamValue::Name(Name::lit("fixed"))),
        "size distribution of mean `size`",
    )
    .choices(&["fixed", "uniform", "exponential", "pareto"]),
    ParamSpec::new("shape", ParamKind::Float, Some(ParamValue::Float(1.5)), "Pareto shape (tail index), > 1")
        .range(0.0, 1000.0),
    ParamSpec::new(
        "size_min",
        ParamKind::Bytes,
        Some(ParamValue::Int(0)),
        "lower end of the uniform distribution (upper end 2 size - size_min), <= size",
    )
    .range(0.0, MAX_SIZE),
];

/// Registration.
pub const MODEL: AppModel = AppModel {
    name: "transfer",
    doc: "one transfer written at the start time: size bytes, or a size drawn from a fixed/uniform/exponential/pareto distribution of mean size",
    params: PARAMS,
    random: Randomness::UnlessDefault { param: "distribution", what: "random sizes" },
    flow_refs: &[],
    build: |p, start, _stop, rng| Box::new(Transfer::new(start, size_dist(p).unwrap_or(Dist::Fixed(p.float("size"))), rng)),
};

/// The size distribution the parameters describe; the error names the parameter at fault.
fn size_dist(p: &Params) -> Result<Dist, (&'static str, String)> {
    let mean = p.uint("size") as f64;
    match p.choice("distribution") {
        "uniform" => {
            let lo = p.uint("size_min") as f64;
            if lo > mean {
                return Err((
                    "size_min",
                    format!("must be at most size ({mean} B) for a uniform of mean size, got {lo} B"),
                ));
            }
            Ok(Dist::Uniform { lo, hi: 2.0 * mean - lo })
        }
        "exponential" => Ok(Dist::Exponential { mean }),
        "pareto" => {
            let shape = p.float("shape");
            Dist::pareto_with_mean(mean, shape).ok_or_else(|| {
                ("shape", format!("a Pareto distribution has a finite mean only for shape > 1, got {shape}"))
            })
        }
        _ => Ok(Dist::Fixed(mean)),
    }
}

/// The size distribution of the `transfer` parameters `given` (`field` in errors), checked:
/// a workload's sizes (`workload.rs`).
pub fn dist_of(given: &std::collections::BTreeMap<String, ParamValue>, field: &str) -> Result<Dist, ConfigError> {
    let p = Params::resolve(field, PARAMS, given)?;
    size_dist(&p).map_err(|(name, message)| ConfigError::new(format!("{field}.{name}"), message))
}

/// Checks the parameters cannot express on their own (`app/mod.rs` calls it for `transfer`).
pub fn check(p: &Params, field: &str) -> Result<(), ConfigError> {
    size_dist(p).map(|_| ()).map_err(|(name, message)| ConfigError::new(format!("{field}.{name}"), message))
}

/// Writes its size once.
pub struct Transfer {
    start: Time,
    size: u64,
    done: bool,
}

impl Transfer {
    /// A transfer at `start` of a size drawn from `dist` with `rng`.
    pub fn new(start: Time, dist: Dist, mut rng: Rng) -> Self {
        let size = dist.sample(&mut rng).round().clamp(1.0, MAX_SIZE) as u64;
        Transfer { start, size, done: false }
    }

    /// The size this transfer writes.
    pub fn size(&self) -> u64 {
        self.size
    }
}

impl Application for Transfer {
    fn size(&self) -> Option<u64> {
        Some(self.size)
    }

    fn next_wakeup(&self) -> Option<Time> {
        (!self.done).then_some(self.start)
    }

    fn on_wakeup(&mut self, now: Time, sock: &mut dyn Socket, _stats: &mut FlowStats) {
        if !self.done && now >= self.start {
            self.done = true;
            sock.write(self.size);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::testing::RecordingSocket;
    use crate::sim::rng::Stream;
    use std::collections::BTreeMap;

    fn params(given: &[(&str, ParamValue)]) -> Result<Params, ConfigError> {
        let given: BTreeMap<String, ParamValue> = given.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        Params::resolve("flows[0].app", PARAMS, &given)
    }

    /// Sizes of `n` transfers, flow f using stream App(f) as the engine builds them.
    fn sizes(given: &[(&str, ParamValue)], seed: u64, n: u32) -> Vec<u64> {
        let p = params(given).unwrap();
        check(&p, "flows[0].app").unwrap();
        (0..n)
            .map(|f| {
                let mut app = (MODEL.build)(&p, 7, None, Rng::stream(seed, Stream::App(f)));
                let mut sock = RecordingSocket::default();
                assert_eq!(app.next_wakeup(), Some(7));
                app.on_wakeup(7, &mut sock, &mut FlowStats::default());
                assert_eq!(app.next_wakeup(), None, "one write only");
                assert_eq!(sock.written.len(), 1);
                sock.written[0]
            })
            .collect()
    }

    fn mean(x: &[u64]) -> f64 {
        x.iter().sum::<u64>() as f64 / x.len() as f64
    }

    #[test]
    fn fixed_size_is_written_once_at_the_start() {
        assert_eq!(sizes(&[("size", ParamValue::Int(5000))], 1, 3), vec![5000, 5000, 5000]);
    }

    #[test]
    fn drawn_sizes_have_the_requested_mean_and_support() {
        let n = 20_000;
        let size = ("size", ParamValue::Int(100_000));
        // Uniform on [20 000, 180 000]: sd 160 000 / sqrt(12) = 46 188.
        let u =
            sizes(&[size, ("distribution", ParamValue::name("uniform")), ("size_min", ParamValue::Int(20_000))], 1, n);
        assert!(u.iter().all(|&s| (20_000..=180_000).contains(&s)));
        assert!((mean(&u) - 100_000.0).abs() < 5.0 * 46_188.0 / (n as f64).sqrt(), "{}", mean(&u));
        // Exponential: sd = mean.
        let e = sizes(&[size, ("distribution", ParamValue::name("exponential"))], 1, n);
        assert!((mean(&e) - 100_000.0).abs() < 5.0 * 100_000.0 / (n as f64).sqrt(), "{}", mean(&e));
        // Pareto shape 3 (finite variance: x_m^2 a / ((a-1)^2 (a-2)) with x_m = 66 667: sd 57 735).
        let p = sizes(&[size, ("distribution", ParamValue::name("pareto")), ("shape", ParamValue::Float(3.0))], 1, n);
        assert!(p.iter().all(|&s| s >= 66_667));
        assert!((mean(&p) - 100_000.0).abs() < 5.0 * 57_735.0 / (n as f64).sqrt(), "{}", mean(&p));
    }

    #[test]
    fn same_seed_same_sizes_other_seed_other_sizes() {
        let given = [("size", ParamValue::Int(10_000)), ("distribution", ParamValue::name("exponential"))];
        assert_eq!(sizes(&given, 4, 50), sizes(&given, 4, 50));
        assert_ne!(sizes(&given, 4, 50), sizes(&given, 5, 50));
    }

    #[test]
    fn pareto_without_finite_mean_and_bad_uniform_are_configuration_errors() {
        let pareto = |shape: f64| {
            let p = params(&[
                ("size", ParamValue::Int(10_000)),
                ("distribution", ParamValue::name("pareto")),
                ("shape", ParamValue::Float(shape)),
            ])
            .unwrap();
            check(&p, "flows[3].app")
        };
        let err = pareto(1.0).unwrap_err();
        assert_eq!(err.field, "flows[3].app.shape");
        assert!(err.message.contains("shape > 1"), "{}", err.message);
        assert!(pareto(0.5).is_err());
        assert!(pareto(1.01).is_ok());
        let p = params(&[
            ("size", ParamValue::Int(10_000)),
            ("distribution", ParamValue::name("uniform")),
            ("size_min", ParamValue::Int(10_001)),
        ])
        .unwrap();
        assert_eq!(check(&p, "flows[0].app").unwrap_err().field, "flows[0].app.size_min");
        let err =
            params(&[("size", ParamValue::Int(10)), ("distribution", ParamValue::name("lognormal"))]).unwrap_err();
        assert_eq!(err.field, "flows[0].app.distribution");
    }
}
