"""NewReno's window control written in Python: a twin of the engine's `newreno`.

Reno slow start and congestion avoidance with byte counting (RFC 5681 §3.1, RFC 3465 with
L = 2) and RFC 5681's halving; loss recovery (NewReno, SACK) stays in the sender, as for the
Rust model. Integer arithmetic throughout, so that a run gives bit-identical results to
`cc = "newreno"` (tests/test_python_models.py checks it).
"""

import ccsim


@ccsim.congestion_control("py_newreno")
class PyNewReno:
    """NewReno window growth and halving (RFC 5681), in Python."""

    def __init__(self):
        self.bytes_acked = 0  # acknowledged since the last congestion-avoidance increase

    def on_ack(self, s, ack):
        mss, acked = s.mss, ack.acked_bytes
        if s.cwnd < s.ssthresh:
            grow = min(acked, 2 * mss, s.ssthresh - s.cwnd)
            s.cwnd += grow
            acked -= min(grow, acked)
            if s.cwnd < s.ssthresh:
                return
        self.bytes_acked += acked
        if self.bytes_acked >= s.cwnd:
            self.bytes_acked -= s.cwnd
            s.cwnd += mss

    def on_congestion(self, s, event):
        s.ssthresh = max(s.flight_size // 2, 2 * s.mss)
