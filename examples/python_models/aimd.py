"""The smallest useful congestion control: additive increase a segments per RTT,
multiplicative decrease by b (the example of docs/python-models.md)."""

import ccsim


@ccsim.congestion_control("my_aimd", params={"a": 1.0, "b": 0.5})
class MyAimd:
    """AIMD(a, b): +a segments per RTT, x b on congestion."""

    def on_ack(self, s, ack):
        s.cwnd += self.a * s.mss * ack.acked_bytes / s.cwnd

    def on_congestion(self, s, event):
        s.ssthresh = s.cwnd = max(self.b * s.cwnd, 2 * s.mss)
