//! The plant: a continuous linear time-invariant system given by its transfer function,
//! realized in state space and advanced exactly under a zero-order hold.
//!
//! `G(s) = (b0 s^n + ... + bn) / (a0 s^n + a1 s^(n-1) + ... + an)`, coefficients in descending
//! powers of s, proper (numerator degree <= denominator degree). Realization: controllable
//! canonical form (as `scipy.signal.tf2ss`), with the denominator normalized to `a0 = 1`:
//! `A` has `-a1..-an` in its first row and ones on the subdiagonal, `B = e1`,
//! `C_i = b_i - a_i b0`, `D = b0`.
//!
//! Zero-order hold over any interval `tau` with a constant input `u` (Åström & Wittenmark,
//! *Computer-Controlled Systems*, sec. 2.3): `x(t + tau) = Phi x(t) + Gamma u` with
//! `Phi = e^(A tau)` and `Gamma = ∫_0^tau e^(A s) ds B`, both read off the exponential of
//! the augmented matrix `[[A, B], [0, 0]] tau` (Van Loan 1978): its top-left block is `Phi` and
//! its top-right column `Gamma`. The actuator changes `u` when a control message arrives, at any
//! time, so the loop advances the plant over arbitrary intervals, not only multiples of h.
//!
//! Default example (paper 000 sec. 4, eq. 3): the Maxon F2140 DC motor, position output,
//! `G(s) = 36.3 / (s^2 + 36.17 s)` (time constant 1/36.17 = 27.6 ms).

use super::expm::{expm, Mat, MAX};

/// Highest plant order: the augmented matrix has one more row.
pub const MAX_ORDER: usize = MAX - 1;

/// Numerator of the paper's DC motor.
pub const MOTOR_NUM: [f64; 1] = [36.3];
/// Denominator of the paper's DC motor.
pub const MOTOR_DEN: [f64; 3] = [1.0, 36.17, 0.0];

/// The exact discretization of the plant over one interval.
#[derive(Clone, Copy, Debug)]
pub struct Zoh {
    /// `e^(A tau)`.
    pub phi: Mat,
    /// `∫_0^tau e^(A s) ds B`.
    pub gamma: [f64; MAX],
}

/// A plant in state space with its current state.
#[derive(Clone, Debug)]
pub struct Plant {
    /// Order n.
    n: usize,
    a: Mat,
    b: [f64; MAX],
    c: [f64; MAX],
    d: f64,
    /// State; starts at rest (zero).
    pub x: [f64; MAX],
}

impl Plant {
    /// A plant from transfer-function coefficients (descending powers of s). The error says
    /// what is wrong, for the caller to attach to a field name.
    pub fn from_tf(num: &[f64], den: &[f64]) -> Result<Plant, String> {
        if num.iter().chain(den).any(|v| !v.is_finite()) {
            return Err("coefficients must be finite numbers".into());
        }
        let first = den.iter().position(|&v| v != 0.0).ok_or("the denominator must not be zero")?;
        let den = &den[first..];
        let n = den.len() - 1;
        if n == 0 {
            return Err("the denominator must have degree >= 1 (a dynamic plant)".into());
        }
        if n > MAX_ORDER {
            return Err(format!("plant order {n} exceeds the supported {MAX_ORDER}"));
        }
        let num_first = num.iter().position(|&v| v != 0.0).unwrap_or(num.len());
        let num = &num[num_first..];
        if num.len() > den.len() {
            return Err(format!(
                "improper transfer function: numerator degree {} > denominator degree {n}",
                num.len() - 1
            ));
        }
        let a0 = den[0];
        // Coefficients normalized to a0 = 1, numerator padded to n + 1 terms.
        let a: Vec<f64> = den.iter().map(|v| v / a0).collect();
        let mut b = vec![0.0; n + 1];
        for (i, v) in num.iter().enumerate() {
            b[n + 1 - num.len() + i] = v / a0;
        }
        let mut am = Mat::zeros(n);
        for j in 0..n {
            am.set(0, j, -a[j + 1]);
        }
        for i in 1..n {
            am.set(i, i - 1, 1.0);
        }
        let mut bv = [0.0; MAX];
        bv[0] = 1.0;
        let mut c = [0.0; MAX];
        for i in 0..n {
            c[i] = b[i + 1] - a[i + 1] * b[0];
        }
        Ok(Plant { n, a: am, b: bv, c, d: b[0], x: [0.0; MAX] })
    }

    /// Order n.
    pub fn order(&self) -> usize {
        self.n
    }

    /// The exact zero-order-hold discretization over `tau_s` seconds.
    pub fn zoh(&self, tau_s: f64) -> Zoh {
        let n = self.n;
        let mut m = Mat::zeros(n + 1);
        for i in 0..n {
            for j in 0..n {
                m.set(i, j, self.a.get(i, j) * tau_s);
            }
            m.set(i, n, self.b[i] * tau_s);
        }
        let e = expm(&m);
        let mut phi = Mat::zeros(n);
        let mut gamma = [0.0; MAX];
        for (i, g) in gamma.iter_mut().enumerate().take(n) {
            for j in 0..n {
                phi.set(i, j, e.get(i, j));
            }
            *g = e.get(i, n);
        }
        Zoh { phi, gamma }
    }

    /// Advance the state over the interval `zoh` was made for, with input `u` held.
    pub fn advance(&mut self, zoh: &Zoh, u: f64) {
        let mut x = zoh.phi.mul_vec(&self.x);
        for (xi, g) in x.iter_mut().zip(zoh.gamma.iter()).take(self.n) {
            *xi += g * u;
        }
        self.x = x;
    }

    /// Output `y = C x + D u` with input `u`.
    pub fn output(&self, u: f64) -> f64 {
        self.c.iter().zip(self.x.iter()).take(self.n).map(|(c, x)| c * x).sum::<f64>() + self.d * u
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn motor_realization_is_the_controllable_canonical_form() {
        let p = Plant::from_tf(&MOTOR_NUM, &MOTOR_DEN).unwrap();
        assert_eq!(p.order(), 2);
        assert_eq!((p.a.get(0, 0), p.a.get(0, 1), p.a.get(1, 0), p.a.get(1, 1)), (-36.17, -0.0, 1.0, 0.0));
        assert_eq!((p.c[0], p.c[1], p.d), (0.0, 36.3, 0.0));
    }

    #[test]
    fn motor_step_response_matches_the_closed_form_at_the_sampling_instants() {
        // G(s) = K / (s (s + a)), unit step: y(t) = (K/a) (t - (1 - e^(-a t)) / a).
        let (k, a, h) = (36.3, 36.17, 0.014);
        let mut p = Plant::from_tf(&MOTOR_NUM, &MOTOR_DEN).unwrap();
        let zoh = p.zoh(h);
        for step in 1..=300 {
            p.advance(&zoh, 1.0);
            let t = step as f64 * h;
            let want = k / a * (t - (1.0 - (-a * t).exp()) / a);
            let got = p.output(1.0);
            assert!((got - want).abs() <= 1e-12 * want.abs().max(1.0), "t={t}: {got} vs {want}");
        }
    }

    #[test]
    fn advancing_over_pieces_equals_advancing_over_the_whole_interval() {
        // The hold is exact, so 3 ms + 11 ms with the same input is the 14 ms step.
        let mut whole = Plant::from_tf(&[2.0, 1.0], &[1.0, 3.0, 2.0]).unwrap();
        let mut parts = whole.clone();
        whole.advance(&whole.zoh(0.014), 0.7);
        parts.advance(&parts.zoh(0.003), 0.7);
        parts.advance(&parts.zoh(0.011), 0.7);
        for i in 0..2 {
            assert!((whole.x[i] - parts.x[i]).abs() < 1e-15, "{:?} vs {:?}", whole.x, parts.x);
        }
    }

    #[test]
    fn first_order_lag_follows_its_exponential_and_biproper_plants_pass_the_input_through() {
        // G(s) = 1 / (s + 2): step response (1 - e^(-2t)) / 2.
        let mut p = Plant::from_tf(&[1.0], &[1.0, 2.0]).unwrap();
        p.advance(&p.zoh(0.3), 1.0);
        assert!((p.output(1.0) - (1.0 - (-0.6f64).exp()) / 2.0).abs() < 1e-15);
        // G(s) = (s + 3) / (s + 1) = 1 + 2 / (s + 1): D = 1.
        let q = Plant::from_tf(&[1.0, 3.0], &[1.0, 1.0]).unwrap();
        assert_eq!(q.output(5.0), 5.0);
        // A scaled denominator is the same plant.
        let r = Plant::from_tf(&[2.0, 6.0], &[2.0, 2.0]).unwrap();
        assert_eq!((r.c[0], r.d), (q.c[0], q.d));
    }

    #[test]
    fn bad_transfer_functions_are_rejected_with_a_reason() {
        assert!(Plant::from_tf(&[1.0, 0.0, 0.0], &[1.0, 2.0]).unwrap_err().contains("improper"));
        assert!(Plant::from_tf(&[1.0], &[0.0, 0.0]).unwrap_err().contains("zero"));
        assert!(Plant::from_tf(&[1.0], &[3.0]).unwrap_err().contains("degree"));
        assert!(Plant::from_tf(&[f64::NAN], &[1.0, 1.0]).unwrap_err().contains("finite"));
        assert!(Plant::from_tf(&[1.0], &[1.0; 9]).unwrap_err().contains("order"));
        // Leading zeros are ignored.
        assert_eq!(Plant::from_tf(&[0.0, 1.0], &[0.0, 1.0, 2.0]).unwrap().order(), 1);
    }
}
