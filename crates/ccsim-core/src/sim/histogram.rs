//! Histogram of times (ns), for quantiles without keeping one record per packet: queue sojourn
//! times (the 99th percentile of queueing delay that `ccsim compare` ranks by) and flows'
//! one-way packet delays.
//!
//! Bins are log-linear, as in HdrHistogram (Tene) and Linux's `hist` tooling: values below 16 ns
//! each have their own bin; above, every octave [2^e, 2^(e+1)) is split into 16 equal bins, so
//! a bin is at most 1/16 = 6.25 % of its lower edge wide. 976 bins cover every `u64` (all of
//! simulated time). The counts cover only the bins between the lowest and the highest a
//! histogram has used (a queue whose packets wait microseconds needs at most about 200 bins; a
//! flow whose delays stay within one octave, 16 to 32: this matters with thousands of access
//! queues and flows); recording is a leading-zero count, two shifts, a subtraction and an
//! increment, and allocates only when a value falls outside the bins used so far (no floating
//! point, cannot fail).
//!
//! Quantiles follow the nearest-rank definition (the value of rank ceil(q n) in ascending
//! order, Hyndman & Fan type 1), located in its bin and placed by linear interpolation of the
//! rank between the bin's lowest and highest integer; the error is below one bin width (<= 6.25 %), and the answer is
//! clamped to the largest value recorded, so q = 1 gives the exact maximum.

/// Sub-bins per octave (a power of two).
const SUB_BITS: u32 = 4;
const SUB: u64 = 1 << SUB_BITS;
/// Number of bins: SUB exact bins below SUB, then SUB per octave for exponents SUB_BITS..=63.
pub const BINS: usize = (SUB + (64 - SUB_BITS as u64) * SUB) as usize;

/// Counts of times (ns) in log-linear bins.
#[derive(Clone, Debug, Default)]
pub struct LogHistogram {
    /// Counts of bins `first..first + counts.len()`.
    counts: Vec<u64>,
    /// The bin of `counts[0]`.
    first: usize,
    max: u64,
}

/// The bin of value `v`.
fn bin(v: u64) -> usize {
    if v < SUB {
        return v as usize;
    }
    let e = 63 - v.leading_zeros(); // floor(log2 v) >= SUB_BITS
    let sub = (v >> (e - SUB_BITS)) & (SUB - 1);
    (SUB + (e - SUB_BITS) as u64 * SUB + sub) as usize
}

/// Lower edge and width of bin `b`.
fn edges(b: usize) -> (u64, u64) {
    let b = b as u64;
    if b < SUB {
        return (b, 1);
    }
    let e = (b - SUB) / SUB + SUB_BITS as u64;
    let sub = (b - SUB) % SUB;
    let width = 1u64 << (e - SUB_BITS as u64);
    ((1u64 << e) + sub * width, width)
}

impl LogHistogram {
    /// Count one time (ns).
    pub fn record(&mut self, v: u64) {
        self.record_n(v, 1);
    }

    /// Count `n` times equal to `v` (ns).
    pub fn record_n(&mut self, v: u64, n: u64) {
        let b = bin(v);
        debug_assert!(b < BINS);
        if self.counts.is_empty() {
            self.first = b;
        } else if b < self.first {
            // A value below every bin used so far: the counts start at its bin.
            let shift = self.first - b;
            self.counts.splice(0..0, std::iter::repeat_n(0, shift));
            self.first = b;
        }
        let i = b - self.first;
        if i >= self.counts.len() {
            self.counts.resize(i + 1, 0);
        }
        self.counts[i] += n;
        self.max = self.max.max(v);
    }

    /// Values counted (a sum over the bins: the queue counts its departures itself, so the
    /// packet path keeps no second counter).
    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The largest value recorded (0 when none was).
    pub fn max(&self) -> u64 {
        self.max
    }

    /// The `q`-quantile (0 < q <= 1) in ns; `None` when nothing was recorded.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        let total = self.count();
        if total == 0 || q.is_nan() {
            return None;
        }
        let q = q.clamp(0.0, 1.0);
        // Nearest rank, 1-based: ceil(q n), at least 1.
        let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
        let mut below = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            if c == 0 {
                continue;
            }
            if below + c >= rank {
                let (lo, width) = edges(self.first + i);
                // The rank's place among the c values of the bin, spread evenly over it.
                let frac = (rank - below) as f64 / c as f64;
                let v = lo as f64 + frac * (width - 1) as f64;
                return Some(v.min(self.max as f64).max(lo as f64));
            }
            below += c;
        }
        Some(self.max as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_falls_in_the_bin_whose_edges_hold_it() {
        let mut v = 0u64;
        while v < u64::MAX / 3 {
            let b = bin(v);
            let (lo, w) = edges(b);
            assert!(lo <= v && v - lo < w, "v={v} bin={b} lo={lo} w={w}");
            assert!(b < BINS);
            v = v + v / 4 + 1;
        }
        assert_eq!(bin(u64::MAX), BINS - 1);
    }

    #[test]
    fn bins_are_at_most_a_sixteenth_of_their_lower_edge_wide() {
        for b in SUB as usize..BINS {
            let (lo, w) = edges(b);
            assert!(w as f64 <= lo as f64 / 16.0 + 1e-9, "bin {b}: {lo} + {w}");
        }
    }

    #[test]
    fn quantiles_of_a_uniform_sample_match_the_nearest_rank_within_a_bin() {
        // 1..=10000 us: the nearest-rank q-quantile is ceil(q n) us.
        let mut h = LogHistogram::default();
        for i in 1..=10_000u64 {
            h.record(i * 1000);
        }
        for &q in &[0.01, 0.5, 0.9, 0.99, 0.999] {
            let exact = (q * 10_000f64).ceil() * 1000.0;
            let got = h.quantile(q).unwrap();
            assert!((got - exact).abs() <= exact / 16.0, "q={q}: {got} vs {exact}");
        }
        assert_eq!(h.quantile(1.0), Some(10_000_000.0));
    }

    #[test]
    fn the_counts_grow_only_to_the_highest_bin_used() {
        // Sojourns up to 100 us (1e5 ns < 2^17): bins up to 16 + (16 - 4) * 16 + 15 = 223.
        let mut h = LogHistogram::default();
        assert_eq!(h.counts.len(), 0);
        for v in (0..=100_000u64).step_by(7) {
            h.record(v);
        }
        assert_eq!(h.counts.len(), bin(100_000 - 100_000 % 7) + 1);
        assert!(h.counts.len() < 230, "{}", h.counts.len());
        assert_eq!(h.counts.iter().sum::<u64>(), h.count());
    }

    #[test]
    fn the_counts_cover_only_the_bins_between_the_lowest_and_highest_used() {
        // One-way delays between 20 and 40 ms: one octave and a bin, 17 or 18 bins, whatever
        // the order the values come in; the quantiles are those of the full-range histogram.
        let values: Vec<u64> = (0..2_000u64).map(|k| 20_000_000 + (k * 7_919) % 20_000_001).collect();
        let mut up = LogHistogram::default();
        let mut down = LogHistogram::default();
        for &v in &values {
            up.record(v);
        }
        for &v in values.iter().rev() {
            down.record(v);
        }
        let mut sorted = values.clone();
        sorted.sort_unstable();
        assert!(up.counts.len() <= 18 && down.counts.len() <= 18, "{} {}", up.counts.len(), down.counts.len());
        assert_eq!(up.first, bin(sorted[0]));
        for q in [0.01, 0.5, 0.99, 1.0] {
            assert_eq!(up.quantile(q), down.quantile(q));
            let exact = sorted[((q * 2_000.0).ceil() as usize).clamp(1, 2_000) - 1] as f64;
            let got = up.quantile(q).unwrap();
            assert!((got - exact).abs() <= exact / 16.0, "q={q}: {got} vs {exact}");
        }
    }

    #[test]
    fn small_values_are_exact_and_empty_has_no_quantile() {
        let mut h = LogHistogram::default();
        assert_eq!(h.quantile(0.5), None);
        for v in [3u64, 3, 7, 9] {
            h.record(v);
        }
        // Ascending: 3, 3, 7, 9; the median (rank 2) is 3, the 0.75-quantile (rank 3) is 7.
        assert_eq!(h.quantile(0.5), Some(3.0));
        assert_eq!(h.quantile(0.75), Some(7.0));
        assert_eq!(h.quantile(1.0), Some(9.0));
        assert_eq!(h.count(), 4);
    }
}
