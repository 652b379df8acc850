//! The matrix exponential of a small dense matrix, by scaling and squaring with a diagonal
//! Padé approximant.
//!
//! Source: Golub & Van Loan, *Matrix Computations* (3rd ed.), Algorithm 11.3.1; Moler & Van
//! Loan, "Nineteen dubious ways to compute the exponential of a matrix, twenty-five years
//! later", SIAM Review 45(1), 2003, method 3. Scale `A` by `2^-j` so that `||A/2^j||_inf <= 1/2`,
//! evaluate the (q, q) Padé approximant `D(A)^-1 N(A)` with `q = 6`, and square the result `j`
//! times. For `q = 6` and that norm the approximant's relative backward error is below
//! `2^(3-2q) (q!)^2 / ((2q)! (2q+1)!) ≈ 3.4e-16`, i.e. machine precision.
//!
//! Matrices are at most [`MAX`] x [`MAX`] and live on the stack ([`Mat`]), so nothing here
//! allocates: the control loop calls it while the simulation runs.

/// Largest dimension supported (a plant of order `MAX - 1` plus its input, see `plant.rs`).
pub const MAX: usize = 8;

/// Padé degree.
const Q: usize = 6;

/// A dense square matrix of dimension `n <= MAX`, row-major in a fixed array.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mat {
    /// Dimension.
    pub n: usize,
    /// Entries; `a[i * MAX + j]` is row i, column j. Entries outside n x n are zero.
    a: [f64; MAX * MAX],
}

impl Mat {
    /// The n x n zero matrix (`n` is clamped to [`MAX`]).
    pub fn zeros(n: usize) -> Mat {
        Mat { n: n.min(MAX), a: [0.0; MAX * MAX] }
    }

    /// The n x n identity.
    pub fn identity(n: usize) -> Mat {
        let mut m = Mat::zeros(n);
        for i in 0..m.n {
            m.a[i * MAX + i] = 1.0;
        }
        m
    }

    /// From rows (tests and small constructions); panics if the rows are not square or too big.
    pub fn from_rows(rows: &[&[f64]]) -> Mat {
        let n = rows.len();
        assert!(n <= MAX && rows.iter().all(|r| r.len() == n), "square, at most {MAX} x {MAX}");
        let mut m = Mat::zeros(n);
        for (i, r) in rows.iter().enumerate() {
            for (j, &v) in r.iter().enumerate() {
                m.set(i, j, v);
            }
        }
        m
    }

    /// Entry (i, j).
    #[inline]
    pub fn get(&self, i: usize, j: usize) -> f64 {
        self.a[i * MAX + j]
    }

    /// Set entry (i, j).
    #[inline]
    pub fn set(&mut self, i: usize, j: usize, v: f64) {
        self.a[i * MAX + j] = v;
    }

    /// `self * other`.
    pub fn mul(&self, other: &Mat) -> Mat {
        let n = self.n;
        let mut out = Mat::zeros(n);
        for i in 0..n {
            for k in 0..n {
                let aik = self.get(i, k);
                if aik == 0.0 {
                    continue;
                }
                for j in 0..n {
                    out.a[i * MAX + j] += aik * other.get(k, j);
                }
            }
        }
        out
    }

    /// `self * s`.
    pub fn scale(&self, s: f64) -> Mat {
        let mut out = *self;
        out.a.iter_mut().for_each(|v| *v *= s);
        out
    }

    /// `self + s * other`.
    fn add_scaled(&self, s: f64, other: &Mat) -> Mat {
        let mut out = *self;
        out.a.iter_mut().zip(other.a.iter()).for_each(|(v, o)| *v += s * o);
        out
    }

    /// Maximum absolute row sum.
    pub fn norm_inf(&self) -> f64 {
        (0..self.n).map(|i| (0..self.n).map(|j| self.get(i, j).abs()).sum::<f64>()).fold(0.0, f64::max)
    }

    /// `self * v` for a vector of the same dimension (entries past n ignored).
    pub fn mul_vec(&self, v: &[f64; MAX]) -> [f64; MAX] {
        let mut out = [0.0; MAX];
        for (i, o) in out.iter_mut().enumerate().take(self.n) {
            *o = (0..self.n).map(|j| self.get(i, j) * v[j]).sum();
        }
        out
    }

    /// `X` with `self * X = rhs`, by Gaussian elimination with partial pivoting. A singular
    /// `self` (never the case for a Padé denominator of a scaled matrix) gives non-finite entries.
    fn solve(&self, rhs: &Mat) -> Mat {
        let n = self.n;
        let mut a = *self;
        let mut b = *rhs;
        for col in 0..n {
            let pivot = (col..n).max_by(|&x, &y| a.get(x, col).abs().total_cmp(&a.get(y, col).abs())).unwrap_or(col);
            if pivot != col {
                for j in 0..n {
                    a.a.swap(col * MAX + j, pivot * MAX + j);
                    b.a.swap(col * MAX + j, pivot * MAX + j);
                }
            }
            let p = a.get(col, col);
            for row in col + 1..n {
                let f = a.get(row, col) / p;
                if f == 0.0 {
                    continue;
                }
                for j in col..n {
                    a.a[row * MAX + j] -= f * a.get(col, j);
                }
                for j in 0..n {
                    b.a[row * MAX + j] -= f * b.get(col, j);
                }
            }
        }
        for col in (0..n).rev() {
            let p = a.get(col, col);
            for j in 0..n {
                let mut s = b.get(col, j);
                for k in col + 1..n {
                    s -= a.get(col, k) * b.get(k, j);
                }
                b.set(col, j, s / p);
            }
        }
        b
    }
}

/// `e^A`. Non-finite input gives non-finite output; it never panics.
pub fn expm(a: &Mat) -> Mat {
    let n = a.n;
    let norm = a.norm_inf();
    if !norm.is_finite() {
        return Mat::identity(n).scale(f64::NAN);
    }
    // Smallest j >= 0 with ||A||/2^j <= 1/2 (capped: f64 norms are below 2^1024).
    let mut j = 0u32;
    let mut scaled_norm = norm;
    while scaled_norm > 0.5 && j < 1100 {
        scaled_norm *= 0.5;
        j += 1;
    }
    let x = a.scale(0.5f64.powi(j as i32));
    let identity = Mat::identity(n);
    let (mut num, mut den, mut power) = (identity, identity, identity);
    let mut c = 1.0;
    for k in 1..=Q {
        // c_k = c_{k-1} (q - k + 1) / ((2q - k + 1) k)
        c *= (Q - k + 1) as f64 / ((2 * Q - k + 1) * k) as f64;
        power = x.mul(&power);
        num = num.add_scaled(c, &power);
        den = den.add_scaled(if k % 2 == 0 { c } else { -c }, &power);
    }
    let mut f = den.solve(&num);
    for _ in 0..j {
        f = f.mul(&f);
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_close(got: &Mat, want: &Mat, tol: f64) {
        for i in 0..want.n {
            for j in 0..want.n {
                let (g, w) = (got.get(i, j), want.get(i, j));
                assert!((g - w).abs() <= tol * w.abs().max(1.0), "({i},{j}): got {g}, want {w}");
            }
        }
    }

    #[test]
    fn exponential_of_a_diagonal_matrix_is_the_diagonal_of_exponentials() {
        let d = [-36.17, 0.0, 2.5, -0.001, 7.0];
        let mut a = Mat::zeros(d.len());
        let mut want = Mat::zeros(d.len());
        for (i, &v) in d.iter().enumerate() {
            a.set(i, i, v);
            want.set(i, i, v.exp());
        }
        // Squaring j times amplifies rounding by up to ~2^j: e^7 needs j = 4.
        assert_close(&expm(&a), &want, 1e-13);
    }

    #[test]
    fn exponential_of_a_nilpotent_matrix_is_its_finite_series() {
        // N strictly upper triangular, N^3 = 0: e^N = I + N + N^2/2.
        let n = Mat::from_rows(&[&[0.0, 2.0, -3.0], &[0.0, 0.0, 5.0], &[0.0, 0.0, 0.0]]);
        let want = Mat::from_rows(&[&[1.0, 2.0, -3.0 + 2.0 * 5.0 / 2.0], &[0.0, 1.0, 5.0], &[0.0, 0.0, 1.0]]);
        assert_close(&expm(&n), &want, 1e-15);
    }

    #[test]
    fn exponential_of_a_rotation_generator_is_a_rotation() {
        // [[0, -w], [w, 0]] t -> [[cos, -sin], [sin, cos]]; a large angle exercises the squaring.
        let theta = 40.0;
        let a = Mat::from_rows(&[&[0.0, -theta], &[theta, 0.0]]);
        let want = Mat::from_rows(&[&[theta.cos(), -theta.sin()], &[theta.sin(), theta.cos()]]);
        assert_close(&expm(&a), &want, 1e-13);
    }

    #[test]
    fn exponential_of_a_jordan_block_has_the_t_exp_term() {
        // [[l, 1], [0, l]] -> e^l [[1, 1], [0, 1]].
        let l = -3.0;
        let a = Mat::from_rows(&[&[l, 1.0], &[0.0, l]]);
        let e = f64::exp(l);
        assert_close(&expm(&a), &Mat::from_rows(&[&[e, e], &[0.0, e]]), 1e-14);
    }

    #[test]
    fn non_finite_input_gives_non_finite_output_without_panicking() {
        let a = Mat::from_rows(&[&[f64::NAN, 0.0], &[0.0, 1.0]]);
        assert!(expm(&a).get(0, 0).is_nan());
        let big = Mat::from_rows(&[&[1e300, 0.0], &[0.0, 1.0]]);
        assert!(!expm(&big).get(0, 0).is_finite());
    }
}
