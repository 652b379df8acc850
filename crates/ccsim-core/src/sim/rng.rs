//! Random streams: one per component, derived from (master seed, component id), so adding a
//! component or drawing more numbers in one place never shifts the numbers drawn elsewhere.
//!
//! Generator: xoshiro256++ (Blackman & Vigna, "Scrambled linear pseudorandom number
//! generators", 2018); state seeded through SplitMix64 as its authors recommend.

/// Identifies the owner of a random stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// Random errors on one link direction.
    Link(u32),
    /// A flow's own draws (start time, application randomness).
    Flow(u32),
    /// A queue discipline's draws (RED, PIE, ...).
    Queue(u32),
    /// A flow's application draws (Poisson arrivals), apart from `Flow` so that giving an
    /// application randomness never shifts the flow's start time or transport draws.
    App(u32),
    /// A node's per-packet processing draws (`net/processing.rs`).
    Node(u32),
    /// A flow's congestion-control draws (BBR's ProbeBW phase), apart from `Flow` so that a
    /// random algorithm never shifts the flow's start time or transport draws.
    Cc(u32),
    /// A workload's arrival times and the pairs its flows are drawn on (`workload.rs`).
    Arrivals(u32),
    /// A workload's flow sizes, apart from `Arrivals` so that another size distribution
    /// leaves the arrival times as they were.
    Sizes(u32),
}

impl Stream {
    fn id(self) -> u64 {
        match self {
            Stream::Link(i) => (1 << 32) | i as u64,
            Stream::Flow(i) => (2 << 32) | i as u64,
            Stream::Queue(i) => (3 << 32) | i as u64,
            Stream::App(i) => (4 << 32) | i as u64,
            Stream::Node(i) => (5 << 32) | i as u64,
            Stream::Cc(i) => (6 << 32) | i as u64,
            Stream::Arrivals(i) => (7 << 32) | i as u64,
            Stream::Sizes(i) => (8 << 32) | i as u64,
        }
    }
}

/// SplitMix64 step (Steele, Lea, Flood 2014): a bijective mixer used for seeding.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A xoshiro256++ generator.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// The stream of `owner` under master `seed`.
    pub fn stream(seed: u64, owner: Stream) -> Rng {
        let mut sm = seed ^ splitmix64(&mut owner.id().clone());
        let s = [splitmix64(&mut sm), splitmix64(&mut sm), splitmix64(&mut sm), splitmix64(&mut sm)];
        Rng { s }
    }

    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1), 53 bits of precision.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.uniform() < p
    }

    /// Uniform integer in [lo, hi); `lo` when the range is empty.
    pub fn range_u64(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        // Lemire's multiply-shift; the tiny bias (< 2^-64 * span) is irrelevant here.
        lo + ((self.next_u64() as u128 * (hi - lo) as u128) >> 64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_independent() {
        let a: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::stream(7, Stream::Link(0));
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::stream(7, Stream::Link(0));
                move |_| r.next_u64()
            })
            .collect();
        let c: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::stream(7, Stream::Link(1));
                move |_| r.next_u64()
            })
            .collect();
        let d: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::stream(8, Stream::Link(0));
                move |_| r.next_u64()
            })
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
    }

    #[test]
    fn uniform_has_the_right_mean_and_range() {
        let mut r = Rng::stream(1, Stream::Flow(3));
        let n = 200_000;
        let mut sum = 0.0;
        for _ in 0..n {
            let u = r.uniform();
            assert!((0.0..1.0).contains(&u));
            sum += u;
        }
        // Mean of U(0,1) is 1/2 with sd 1/sqrt(12 n) ~ 0.00065; allow 5 sd.
        assert!((sum / n as f64 - 0.5).abs() < 0.0033);
        for _ in 0..1000 {
            let x = r.range_u64(10, 13);
            assert!((10..13).contains(&x));
        }
    }
}
