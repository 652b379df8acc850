//! Controllers: what the controller host computes from each sample it uses.
//!
//! `pid`: the textbook discrete PID on the error `e = r - y` (Åström & Wittenmark,
//! *Computer-Controlled Systems*, 3rd ed., sec. 8.6 / Åström & Hägglund, *PID Controllers*):
//!
//! ```text
//! u_k = Kp e_k + Ki I_k + Kd (e_k - e_{k-1}) / dt_k
//! ```
//!
//! Integral, forward Euler by default (the form of Åström & Wittenmark's listing, where the
//! integral is updated after the output is computed): `I_k = I_{k-1} + e_{k-1} dt_k`, `I_0 = 0`.
//! With `backward = true`, backward Euler, `I_k = I_{k-1} + e_k dt_k`, the common
//! "`I += e h; u = Kp e + Ki I`" code. Paper 000 (sec. 4) gives Kp = 11.86 and Ki = 47.45 from
//! its ref. \[28\] but not the discretization; forward Euler is the default and a documented
//! choice. Derivative: backward difference of the error, 0 at the first sample.
//!
//! `dt_k` is the time between the sampling instants of the sample used now and the one used
//! before (the controller knows each sample's index, hence its timestamp): `h` when no sample
//! was lost, `m h` after `m - 1` lost or ignored samples, so the integral stays the integral
//! of the error as the controller knew it. The first sample uses `dt = h`. No output
//! saturation and hence no anti-windup: the paper gives none.

use crate::params::{ParamKind, ParamSpec, ParamValue, Params};
use crate::sim::time::{secs, Time};

/// A discrete controller, called once per sample it uses.
pub trait Controller: Send {
    /// The control computed from the error `e` of the sample taken at `t`.
    fn control(&mut self, t: Time, e: f64) -> f64;
}

/// A registered controller.
pub struct ControllerModel {
    /// Name used in scenarios.
    pub name: &'static str,
    /// One line: what it does.
    pub doc: &'static str,
    /// Declared parameters.
    pub params: &'static [ParamSpec],
    /// Construct from validated parameters and the sampling period h.
    pub build: fn(&Params, Time) -> Box<dyn Controller>,
}

static PID_PARAMS: &[ParamSpec] = &[
    ParamSpec::new("kp", ParamKind::Float, Some(ParamValue::Float(11.86)), "proportional gain (paper 000: 11.86)"),
    ParamSpec::new("ki", ParamKind::Float, Some(ParamValue::Float(47.45)), "integral gain, 1/s (paper 000: 47.45)"),
    ParamSpec::new("kd", ParamKind::Float, Some(ParamValue::Float(0.0)), "derivative gain, s"),
    ParamSpec::new(
        "backward",
        ParamKind::Bool,
        Some(ParamValue::Bool(false)),
        "integrate with backward Euler (current error included) instead of forward Euler",
    ),
];

/// Every controller ccsim knows.
pub static CONTROLLERS: &[ControllerModel] = &[ControllerModel {
    name: "pid",
    doc: "discrete PI/PID on e = r - y, forward-Euler integral (backward = true: backward Euler)",
    params: PID_PARAMS,
    build: |p, h| Box::new(Pid::new(p.float("kp"), p.float("ki"), p.float("kd"), p.bool("backward"), h)),
}];

/// A PI/PID controller.
#[derive(Clone, Debug)]
pub struct Pid {
    kp: f64,
    ki: f64,
    kd: f64,
    backward: bool,
    /// Nominal sampling period (s), the step of the first sample.
    h: f64,
    /// Integral of the error so far.
    integral: f64,
    /// Time and error of the previous sample used.
    prev: Option<(Time, f64)>,
}

impl Pid {
    /// A PID with gains `kp`, `ki` (1/s), `kd` (s) at sampling period `h`.
    pub fn new(kp: f64, ki: f64, kd: f64, backward: bool, h: Time) -> Pid {
        Pid { kp, ki, kd, backward, h: secs(h), integral: 0.0, prev: None }
    }
}

impl Controller for Pid {
    fn control(&mut self, t: Time, e: f64) -> f64 {
        let (dt, e_prev) = match self.prev {
            Some((tp, ep)) => (secs(t.saturating_sub(tp)), Some(ep)),
            None => (self.h, None),
        };
        if self.backward {
            self.integral += e * dt;
        } else if let Some(ep) = e_prev {
            self.integral += ep * dt;
        }
        let derivative = match e_prev {
            Some(ep) if dt > 0.0 => (e - ep) / dt,
            _ => 0.0,
        };
        self.prev = Some((t, e));
        self.kp * e + self.ki * self.integral + self.kd * derivative
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::time::MS;

    #[test]
    fn forward_euler_pi_integrates_the_previous_errors() {
        // h = 10 ms, errors 1, 2, 3: I = 0, 0.01, 0.03.
        let mut c = Pid::new(2.0, 5.0, 0.0, false, 10 * MS);
        let u: Vec<f64> = [1.0, 2.0, 3.0].iter().enumerate().map(|(k, &e)| c.control(k as u64 * 10 * MS, e)).collect();
        let want = [2.0 * 1.0, 2.0 * 2.0 + 5.0 * 0.01, 2.0 * 3.0 + 5.0 * 0.03];
        for (g, w) in u.iter().zip(want) {
            assert!((g - w).abs() < 1e-12, "{u:?}");
        }
    }

    #[test]
    fn backward_euler_includes_the_current_error() {
        let mut c = Pid::new(2.0, 5.0, 0.0, true, 10 * MS);
        let u0 = c.control(0, 1.0);
        let u1 = c.control(10 * MS, 2.0);
        assert!((u0 - (2.0 + 5.0 * 0.01)).abs() < 1e-12);
        assert!((u1 - (4.0 + 5.0 * 0.03)).abs() < 1e-12);
    }

    #[test]
    fn a_missed_sample_widens_the_integration_step_and_the_derivative_uses_the_true_gap() {
        // Samples at 0 and 30 ms (10 and 20 ms lost): I = e0 * 30 ms, D = (e1 - e0) / 30 ms.
        let mut c = Pid::new(0.0, 1.0, 1.0, false, 10 * MS);
        c.control(0, 2.0);
        let u = c.control(30 * MS, 5.0);
        assert!((u - (2.0 * 0.03 + 3.0 / 0.03)).abs() < 1e-9, "{u}");
    }
}
