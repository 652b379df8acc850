"""CoDel written in Python: a twin of the engine's `codel` (RFC 8289 §5 pseudocode, Linux's
count-reuse rule, tail drop beyond `limit`, optional ECN marking).

Time is kept in integer nanoseconds and 1/sqrt(count) in floating point, exactly as the Rust
model does, so that a run gives bit-identical results (tests/test_python_models.py).
"""

import math
from collections import deque

import ccsim


@ccsim.queue_discipline(
    "py_codel",
    params={
        "target": ccsim.param("5ms", doc="acceptable standing queue delay (RFC 8289 §4.4)"),
        "interval": ccsim.param("100ms", doc="window the delay must stay above target (RFC 8289 §4.3)"),
        "mtu": ccsim.param(1514, kind="bytes", doc="no drop while the backlog is at most this"),
        "ecn": ccsim.param(False, doc="CE-mark ECT packets instead of dropping them"),
        "limit": ccsim.param("1000p", doc="buffer size, tail drop beyond it"),
    },
)
class PyCodel:
    """CoDel (RFC 8289), in Python."""

    def __init__(self):
        # Parameters arrive as attributes: times in seconds, sizes as {"packets": n} or {"bytes": n}.
        self.target_ns = round(self.target * 1e9)
        self.interval_ns = round(self.interval * 1e9)
        self.fifo = deque()
        self.first_above_time = 0
        self.drop_next = 0
        self.count = 0
        self.lastcount = 0
        self.dropping = False

    def enqueue(self, q, pkt):
        limit = self.limit
        fits = q.len_packets - 1 < limit["packets"] if "packets" in limit else q.len_bytes <= limit["bytes"]
        if fits:
            self.fifo.append(pkt)
        else:
            q.drop(pkt, "overflow")

    def control_law(self, t):
        return t + int(self.interval_ns / math.sqrt(max(self.count, 1)))

    def dodequeue(self, q, now):
        if not self.fifo:
            self.first_above_time = 0
            return None, False
        pkt = self.fifo.popleft()
        backlog = q.len_bytes - pkt.size  # what stays queued behind the head
        ok_to_drop = False
        if now - pkt.arrival_ns < self.target_ns or backlog <= self.mtu:
            self.first_above_time = 0
        elif self.first_above_time == 0:
            self.first_above_time = now + self.interval_ns
        elif now >= self.first_above_time:
            ok_to_drop = True
        return pkt, ok_to_drop

    def dequeue(self, q):
        now = q.now_ns
        pkt, ok_to_drop = self.dodequeue(q, now)
        if self.dropping:
            if not ok_to_drop:
                self.dropping = False
            while self.dropping and now >= self.drop_next:
                self.count += 1
                if self.ecn and q.mark(pkt):
                    self.drop_next = self.control_law(self.drop_next)
                    return pkt
                q.drop(pkt)
                pkt, ok_to_drop = self.dodequeue(q, now)
                if ok_to_drop:
                    self.drop_next = self.control_law(self.drop_next)
                else:
                    self.dropping = False
        elif ok_to_drop:
            if not (self.ecn and q.mark(pkt)):
                q.drop(pkt)
                pkt, _ = self.dodequeue(q, now)
            self.dropping = True
            delta = self.count - self.lastcount
            self.count = delta if delta > 1 and now - self.drop_next < 16 * self.interval_ns else 1
            self.drop_next = self.control_law(now)
            self.lastcount = self.count
        return pkt
