//! Simulated time: integer nanoseconds, so that ordering and arithmetic are exact and a seed
//! reproduces a run bit for bit on any machine.

/// A point in simulated time or a duration, in nanoseconds.
pub type Time = u64;

/// One nanosecond.
pub const NS: Time = 1;
/// One microsecond.
pub const US: Time = 1_000;
/// One millisecond.
pub const MS: Time = 1_000_000;
/// One second.
pub const SEC: Time = 1_000_000_000;

/// Seconds as a float, for reporting only.
pub fn secs(t: Time) -> f64 {
    t as f64 / SEC as f64
}

/// Time to serialize `bytes` at `rate_bps`, rounded up to the next nanosecond so that a link
/// never sends faster than its rate.
#[inline]
pub fn tx_time(bytes: u32, rate_bps: u64) -> Time {
    // Every packet size fits the 64-bit product (below 2.3 GB); a 128-bit division costs a
    // library call on the per-packet path.
    match (bytes as u64 * 8).checked_mul(SEC) {
        Some(bits) => bits.div_ceil(rate_bps),
        None => (bytes as u128 * 8 * SEC as u128).div_ceil(rate_bps as u128) as Time,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialization_time_is_exact_or_rounded_up() {
        // 1500 B at 10 Mb/s = 1.2 ms exactly.
        assert_eq!(tx_time(1500, 10_000_000), 1_200_000);
        // 1 B at 3 b/s = 8/3 s, rounded up.
        assert_eq!(tx_time(1, 3), 2_666_666_667);
        // Beyond the 64-bit product: 4 GB at 1 Tb/s = 34.36 ms, rounded up.
        assert_eq!(tx_time(u32::MAX, 1_000_000_000_000), 34_359_739);
    }
}
