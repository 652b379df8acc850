//! Control performance indices (Graham & Lathrop, "The Synthesis of 'Optimum' Transient
//! Response: Criteria and Standard Forms", Transactions of the AIEE, 1953; Ogata, *Modern
//! Control Engineering*).
//!
//! Continuous, over the measured window `[t0, T]` with `t` the simulation time:
//! `ITAE = ∫ t |e(t)| dt`, `IAE = ∫ |e(t)| dt`, `ISE = ∫ e(t)^2 dt`.
//! Per sample, at the sampling instants `t_k` in the window: `ITAE_sum = Σ t_k |e_k|` (no
//! factor h). Paper 000 compares its ITAE with a threshold of 8727 rad.s over 30 s at
//! h = 14 ms; that magnitude fits the per-sample sum, not the integral, which is about 70 times
//! smaller (see the papers' README): both are reported.
//!
//! Integration (a documented choice): the loop evaluates the exact plant output `y(t)` on a grid
//! of step `h / substeps`, plus every instant where `u` or `r` changes, and each piece adds the
//! exact integral of the linear interpolant of `e` between its two ends (split at its zero
//! crossing for the absolute values): exact for a piecewise linear error, `O(step^2)` otherwise.
//! `e` may jump at the pieces' ends (a reference edge), so each piece gets its own two limits.

/// Accumulated indices.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Scores {
    /// ∫ t |e| dt (rad.s for a position in rad).
    pub itae: f64,
    /// ∫ |e| dt.
    pub iae: f64,
    /// ∫ e^2 dt.
    pub ise: f64,
    /// Σ t_k |e_k| over the sampling instants.
    pub itae_sum: f64,
    /// Σ |e_k|.
    pub iae_sum: f64,
    /// Σ e_k^2.
    pub ise_sum: f64,
    /// Sampling instants counted in the sums.
    pub samples: u64,
}

impl Scores {
    /// Add the piece `[t0, t1]` (seconds) on which `e` goes linearly from `e0` to `e1`.
    pub fn add_piece(&mut self, t0: f64, t1: f64, e0: f64, e1: f64) {
        if t1 <= t0 {
            return;
        }
        if e0 * e1 < 0.0 {
            // Zero crossing of the linear interpolant.
            let tz = t0 + (t1 - t0) * e0 / (e0 - e1);
            self.add_signed(t0, tz, e0, 0.0);
            self.add_signed(tz, t1, 0.0, e1);
        } else {
            self.add_signed(t0, t1, e0, e1);
        }
        // ∫ e^2 of a linear e: tau (e0^2 + e0 e1 + e1^2) / 3, whatever the signs.
        self.ise += (t1 - t0) * (e0 * e0 + e0 * e1 + e1 * e1) / 3.0;
    }

    /// A piece on which `e` keeps one sign: Simpson's rule, exact for `t |e|` (quadratic in t).
    fn add_signed(&mut self, t0: f64, t1: f64, e0: f64, e1: f64) {
        let (a0, a1) = (e0.abs(), e1.abs());
        let tau = t1 - t0;
        let tm = 0.5 * (t0 + t1);
        let am = 0.5 * (a0 + a1);
        self.itae += tau / 6.0 * (t0 * a0 + 4.0 * tm * am + t1 * a1);
        self.iae += tau * am;
    }

    /// Add the sample `e` taken at `t` seconds.
    pub fn add_sample(&mut self, t: f64, e: f64) {
        self.itae_sum += t * e.abs();
        self.iae_sum += e.abs();
        self.ise_sum += e * e;
        self.samples += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_error_gives_the_closed_forms() {
        // e = 2 on [1, 3]: ITAE = 2 (9 - 1) / 2 = 8, IAE = 4, ISE = 8.
        let mut s = Scores::default();
        s.add_piece(1.0, 3.0, -2.0, -2.0);
        assert!((s.itae - 8.0).abs() < 1e-12 && (s.iae - 4.0).abs() < 1e-12 && (s.ise - 8.0).abs() < 1e-12, "{s:?}");
    }

    #[test]
    fn a_sign_change_is_split_at_the_root() {
        // e = 1 - t on [0, 2]: ∫ t |1 - t| dt = 1/6 + (4/3 - 1/2 ... ) computed by hand:
        // ∫_0^1 t (1 - t) = 1/6; ∫_1^2 t (t - 1) = (8/3 - 2) - (1/3 - 1/2) = 5/6. Total 1.
        // ∫ |1 - t| = 1; ∫ (1 - t)^2 = 2/3.
        let mut s = Scores::default();
        s.add_piece(0.0, 2.0, 1.0, -1.0);
        assert!((s.itae - 1.0).abs() < 1e-12, "{}", s.itae);
        assert!((s.iae - 1.0).abs() < 1e-12);
        assert!((s.ise - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn pieces_add_up_and_samples_are_summed_without_a_step_factor() {
        let mut whole = Scores::default();
        whole.add_piece(0.0, 1.0, 0.0, 3.0);
        let mut parts = Scores::default();
        parts.add_piece(0.0, 0.25, 0.0, 0.75);
        parts.add_piece(0.25, 1.0, 0.75, 3.0);
        assert!((whole.itae - parts.itae).abs() < 1e-12 && (whole.itae - 1.0).abs() < 1e-12);
        let mut s = Scores::default();
        s.add_sample(0.5, -2.0);
        s.add_sample(1.0, 1.0);
        assert_eq!((s.itae_sum, s.iae_sum, s.ise_sum, s.samples), (2.0, 3.0, 5.0, 2));
    }
}
