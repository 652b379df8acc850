//! RTT estimation and the retransmission timeout, RFC 6298 §2 and §5.

use crate::sim::time::Time;

/// SRTT/RTTVAR estimator with exponential backoff.
#[derive(Clone, Debug)]
pub struct RttEstimator {
    /// Smoothed RTT (RFC 6298 SRTT), once a sample exists.
    pub srtt: Option<Time>,
    /// RTT variation (RFC 6298 RTTVAR).
    pub rttvar: Time,
    /// Smallest sample over the connection.
    pub min_rtt: Option<Time>,
    /// Times the timer has backed off since the last new sample.
    pub backoff: u32,
    rto: Time,
    min_rto: Time,
    max_rto: Time,
}

/// RFC 6298 §2: G, the clock granularity; 1 ms as in ns-3.
const CLOCK_GRANULARITY: Time = 1_000_000;

impl RttEstimator {
    /// Before any sample the RTO is `initial_rto` (RFC 6298 §2.1: 1 s).
    pub fn new(initial_rto: Time, min_rto: Time, max_rto: Time) -> Self {
        RttEstimator {
            srtt: None,
            rttvar: 0,
            min_rtt: None,
            backoff: 0,
            rto: initial_rto.clamp(min_rto, max_rto),
            min_rto,
            max_rto,
        }
    }

    /// Feed one RTT measurement (RFC 6298 §2.2 and §2.3, alpha = 1/8, beta = 1/4, K = 4).
    pub fn sample(&mut self, r: Time) {
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(srtt) => {
                // RTTVAR first, with the old SRTT.
                self.rttvar = (3 * self.rttvar + srtt.abs_diff(r)) / 4;
                self.srtt = Some((7 * srtt + r) / 8);
            }
        }
        self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        self.backoff = 0;
        let srtt = self.srtt.unwrap_or(r);
        // §2.4: round up to min_rto; §2.5: a maximum may be applied.
        self.rto = (srtt + CLOCK_GRANULARITY.max(4 * self.rttvar)).clamp(self.min_rto, self.max_rto);
    }

    /// The timer expired: double the RTO (§5.5), up to the maximum.
    pub fn back_off(&mut self) {
        self.backoff += 1;
        self.rto = (self.rto * 2).min(self.max_rto);
    }

    /// Current RTO.
    pub fn rto(&self) -> Time {
        self.rto
    }

    /// Set the RTO to `rto` (within its bounds), keeping SRTT and RTTVAR: RFC 6298 §5.7's 3 s
    /// after a SYN timed out. The next sample computes it again (§2.3).
    pub fn set_rto(&mut self, rto: Time) {
        self.rto = rto.clamp(self.min_rto, self.max_rto);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::time::{MS, SEC};

    #[test]
    fn follows_rfc6298_by_hand() {
        let mut e = RttEstimator::new(SEC, 200 * MS, 60 * SEC);
        assert_eq!(e.rto(), SEC);
        // First sample 100 ms: SRTT 100, RTTVAR 50, RTO = 100 + 4*50 = 300 ms.
        e.sample(100 * MS);
        assert_eq!((e.srtt, e.rttvar, e.rto()), (Some(100 * MS), 50 * MS, 300 * MS));
        // Second sample 200 ms: RTTVAR = 3/4*50 + 1/4*100 = 62.5; SRTT = 7/8*100 + 1/8*200 = 112.5;
        // RTO = 112.5 + 250 = 362.5 ms.
        e.sample(200 * MS);
        assert_eq!(e.rttvar, 62_500_000);
        assert_eq!(e.srtt, Some(112_500_000));
        assert_eq!(e.rto(), 362_500_000);
        assert_eq!(e.min_rtt, Some(100 * MS));
    }

    #[test]
    fn rto_is_floored_backs_off_exponentially_and_is_capped() {
        let mut e = RttEstimator::new(SEC, SEC, 60 * SEC);
        e.sample(10 * MS);
        assert_eq!(e.rto(), SEC); // 10 + 4*5 = 30 ms, rounded up to 1 s
        let mut seen = vec![];
        for _ in 0..8 {
            e.back_off();
            seen.push(e.rto() / SEC);
        }
        assert_eq!(seen, vec![2, 4, 8, 16, 32, 60, 60, 60]);
        // A new sample undoes the backoff.
        e.sample(10 * MS);
        assert_eq!((e.rto(), e.backoff), (SEC, 0));
    }
}
