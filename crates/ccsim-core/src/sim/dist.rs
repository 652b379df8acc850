//! Random variates of the scenario's random elements (node processing jitter, transfer sizes),
//! drawn by inversion of the CDF from the owner's own stream (`sim::rng`), so a seed gives the
//! same draws whatever else the run does.
//!
//! - fixed: the value itself;
//! - uniform on [lo, hi]: `lo + (hi - lo) U`;
//! - exponential of mean m: `-m ln(1 - U)` (Kleinrock, Queueing Systems vol. 1, sec. 2.4);
//! - Pareto (type I) of shape a > 1 and mean m: scale `x_m = m (a - 1) / a`, CDF
//!   `1 - (x_m / x)^a` for x >= x_m, drawn as `x_m (1 - U)^(-1/a)`. Parameterised by shape and
//!   mean as ns-2's `Application/Traffic/Pareto` and `RandomVariable/Pareto` (avg, shape) and
//!   ns-3's `ParetoRandomVariable`: the heavy-tailed web object/file size model (Crovella and
//!   Bestavros, "Self-similarity in World Wide Web traffic", IEEE/ACM ToN 5(6), 1997; SURGE,
//!   Barford and Crovella 1998, shape ~ 1.1-1.5). The shape must exceed 1 for the mean to
//!   exist; callers reject a smaller one as a configuration error.
//!
//! `1 - U` with U in [0, 1) lies in (0, 1], so no draw is infinite or NaN.

use super::rng::Rng;

/// A distribution of non-negative reals.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Dist {
    /// Always this value.
    Fixed(f64),
    /// Uniform on [lo, hi].
    Uniform {
        /// Lower end.
        lo: f64,
        /// Upper end.
        hi: f64,
    },
    /// Exponential of this mean.
    Exponential {
        /// Mean.
        mean: f64,
    },
    /// Pareto type I of scale `x_m` (the minimum) and shape `a` (> 1 for a finite mean).
    Pareto {
        /// Scale: the smallest value.
        x_m: f64,
        /// Shape (tail index).
        a: f64,
    },
}

impl Dist {
    /// A Pareto distribution of this shape and mean; `None` unless `shape > 1` and the mean is
    /// positive and finite.
    pub fn pareto_with_mean(mean: f64, shape: f64) -> Option<Dist> {
        (shape > 1.0 && shape.is_finite() && mean > 0.0 && mean.is_finite())
            .then(|| Dist::Pareto { x_m: mean * (shape - 1.0) / shape, a: shape })
    }

    /// One draw.
    pub fn sample(&self, rng: &mut Rng) -> f64 {
        match *self {
            Dist::Fixed(x) => x,
            Dist::Uniform { lo, hi } => lo + (hi - lo) * rng.uniform(),
            Dist::Exponential { mean } => -mean * (1.0 - rng.uniform()).ln(),
            Dist::Pareto { x_m, a } => x_m * (1.0 - rng.uniform()).powf(-1.0 / a),
        }
    }

    /// The mean (infinite for a Pareto of shape <= 1).
    pub fn mean(&self) -> f64 {
        match *self {
            Dist::Fixed(x) => x,
            Dist::Uniform { lo, hi } => (lo + hi) / 2.0,
            Dist::Exponential { mean } => mean,
            Dist::Pareto { x_m, a } => {
                if a > 1.0 {
                    a * x_m / (a - 1.0)
                } else {
                    f64::INFINITY
                }
            }
        }
    }

    /// True when every draw is the same value.
    pub fn is_fixed(&self) -> bool {
        match *self {
            Dist::Fixed(_) => true,
            Dist::Uniform { lo, hi } => lo == hi,
            Dist::Exponential { mean } => mean == 0.0,
            Dist::Pareto { .. } => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::rng::Stream;

    fn draws(d: Dist, n: usize) -> Vec<f64> {
        let mut rng = Rng::stream(11, Stream::Node(0));
        (0..n).map(|_| d.sample(&mut rng)).collect()
    }

    fn mean(x: &[f64]) -> f64 {
        x.iter().sum::<f64>() / x.len() as f64
    }

    #[test]
    fn uniform_and_exponential_means_match_within_five_standard_errors() {
        let n = 100_000;
        // U[10, 30]: mean 20, sd 20/sqrt(12) = 5.77; standard error 0.018.
        let u = draws(Dist::Uniform { lo: 10.0, hi: 30.0 }, n);
        assert!(u.iter().all(|&x| (10.0..=30.0).contains(&x)));
        assert!((mean(&u) - 20.0).abs() < 5.0 * 5.77 / (n as f64).sqrt(), "{}", mean(&u));
        // Exp(mean 7): sd 7; standard error 0.022.
        let e = draws(Dist::Exponential { mean: 7.0 }, n);
        assert!((mean(&e) - 7.0).abs() < 5.0 * 7.0 / (n as f64).sqrt(), "{}", mean(&e));
        // Its CDF at the mean is 1 - 1/e.
        let below = e.iter().filter(|&&x| x <= 7.0).count() as f64 / n as f64;
        let p = 1.0 - (-1.0f64).exp();
        assert!((below - p).abs() < 5.0 * (p * (1.0 - p) / n as f64).sqrt(), "{below}");
    }

    #[test]
    fn pareto_has_its_scale_as_minimum_and_the_tail_of_its_cdf() {
        // Shape 2.5, mean 1000: x_m = 600. The sample mean converges slowly for a heavy tail
        // (finite variance needs a > 2; here var = x_m^2 a / ((a-1)^2 (a-2)) = 800 000, sd 894).
        let d = Dist::pareto_with_mean(1000.0, 2.5).unwrap();
        assert_eq!(d, Dist::Pareto { x_m: 600.0, a: 2.5 });
        assert_eq!(d.mean(), 1000.0);
        let n = 200_000;
        let x = draws(d, n);
        assert!(x.iter().all(|&v| v >= 600.0));
        assert!((mean(&x) - 1000.0).abs() < 5.0 * 894.0 / (n as f64).sqrt(), "{}", mean(&x));
        // Pr[X > 2 x_m] = 2^-a: a distribution-free check of the tail by counting.
        let p = 2f64.powf(-2.5);
        let above = x.iter().filter(|&&v| v > 1200.0).count() as f64 / n as f64;
        assert!((above - p).abs() < 5.0 * (p * (1.0 - p) / n as f64).sqrt(), "{above} vs {p}");
    }

    #[test]
    fn pareto_without_a_finite_mean_is_refused() {
        assert_eq!(Dist::pareto_with_mean(1000.0, 1.0), None);
        assert_eq!(Dist::pareto_with_mean(1000.0, 0.5), None);
        assert_eq!(Dist::pareto_with_mean(0.0, 2.0), None);
        assert_eq!(Dist::pareto_with_mean(f64::NAN, 2.0), None);
        assert_eq!(Dist::Pareto { x_m: 1.0, a: 1.0 }.mean(), f64::INFINITY);
    }
}
