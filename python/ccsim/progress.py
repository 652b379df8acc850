"""Progress of long work (a run, a sweep, SMC, a comparison, a reproduction) on standard error.

On a terminal, or in Jupyter, a rich bar that redraws itself. Anywhere else (a pipe, a file, a
CI log) a bar would be one unreadable line or nothing at all, so the progress is a plain line
now and then instead: what is done of the total, the time elapsed and the estimated time left,
every ``PLAIN_INTERVAL_S`` seconds or ``CCSIM_PROGRESS_INTERVAL`` if set (the first after as
long, so that short work writes none) and a last one when the work ends, if any was written::

    ccsim: runs: 12/27 (3 done before, 1 failed), 40 s elapsed, eta 50 s

The plain lines are INFO records of the ``ccsim.progress`` logger: the ``ccsim`` command shows
them on stderr (``--quiet`` hides them); a program shows them once it configures ``logging``.
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = ["Progress", "PLAIN_INTERVAL_S", "interactive", "duration_text", "plain_interval_s", "logger"]

logger = logging.getLogger("ccsim.progress")

# Seconds between two plain progress lines: a few lines a minute, enough to see work advance in
# a log without burying it. The environment variable CCSIM_PROGRESS_INTERVAL (seconds) changes it.
PLAIN_INTERVAL_S = 20.0
INTERVAL_VARIABLE = "CCSIM_PROGRESS_INTERVAL"


def plain_interval_s() -> float:
    """The seconds between plain lines: ``CCSIM_PROGRESS_INTERVAL`` if it is a number >= 0, else
    ``PLAIN_INTERVAL_S``."""
    try:
        value = float(os.environ.get(INTERVAL_VARIABLE, ""))
    except ValueError:
        return PLAIN_INTERVAL_S
    return value if math.isfinite(value) and value >= 0 else PLAIN_INTERVAL_S


def interactive() -> bool:
    """Whether standard error is a terminal (or a Jupyter output) a bar can redraw itself on."""
    from rich.console import Console

    console = Console(stderr=True)
    return bool(console.is_terminal or console.is_jupyter)


def duration_text(seconds: float) -> str:
    """A duration for a person: ``45 s``, ``3 min 20 s``, ``1 h 05 min``."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


class Progress:
    """How much of some work is done: ``update(done, note)`` as it advances, ``close()`` at the end.

    ``label`` names the work (``"runs"``, ``"simulating"``); ``total`` is how much there is to do
    in this session (None: unknown, as in a sequential test, shown without a bar or an ETA);
    ``count(done)`` words the amount done (default ``12/27``); ``started`` is when the work
    began (``time.perf_counter()``), if before this object. ``bar`` chooses the rich bar or the
    plain lines (default: the bar where standard error is interactive). A transient bar is
    removed when it closes.

    The plain lines come from a thread of their own, every ``interval_s``, so that they keep
    coming while nothing finishes (a sweep of long runs); with an interval of 0, one line per
    ``update`` instead.
    """

    def __init__(
        self,
        label: str,
        total: float | None,
        *,
        count: Callable[[float], str] | None = None,
        started: float | None = None,
        bar: bool | None = None,
        transient: bool = True,
        interval_s: float | None = None,
    ) -> None:
        self.label = label
        self.total = total
        self._count = count or self._default_count
        self._started = time.perf_counter() if started is None else started
        self._interval_s = plain_interval_s() if interval_s is None else interval_s
        self._state: tuple[float, str] = (0.0, "")
        self._lines = 0
        self._closed = False
        self._bar: Any = None
        self._task: Any = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if interactive() if bar is None else bar:
            self._bar, self._task = _rich_bar(label, total, transient, self._count(0))
            self._bar.start()
        elif self._interval_s > 0:
            self._thread = threading.Thread(target=self._heartbeat, name="ccsim-progress", daemon=True)
            self._thread.start()

    def _default_count(self, done: float) -> str:
        return f"{done:g}" if self.total is None else f"{done:g}/{self.total:g}"

    def _heartbeat(self) -> None:
        while not self._stop.wait(self._interval_s):
            if self.total is None or self._state[0] < self.total:  # the end has its own line
                self._write(self.line())

    def update(self, done: float, note: str = "") -> None:
        """The amount done so far (of ``total``) and a note to show beside it (``1 failed``)."""
        self._state = (done, note)
        if self._bar is not None:
            text = self._count(done) + (f" ({note})" if note else "")
            self._bar.update(self._task, completed=done, description=text)
        elif self._interval_s <= 0 and not self._closed:
            self._write(self.line())

    def line(self) -> str:
        """The plain progress line: done of total, elapsed and (when it can be told) the ETA."""
        done, note = self._state
        elapsed = time.perf_counter() - self._started
        text = f"{self.label}: {self._count(done)}"
        if note:
            text += f" ({note})"
        text += f", {duration_text(elapsed)} elapsed"
        if self.total is not None and 0 < done < self.total:
            text += f", eta {duration_text(elapsed * (self.total - done) / done)}"
        return text

    def _write(self, text: str) -> None:
        self._lines += 1
        logger.info("%s", text)

    def close(self) -> None:
        """End the bar; in plain lines, a last line if any was written (long work says it ended)."""
        if self._closed:
            return
        self._closed = True
        if self._bar is not None:
            self._bar.stop()
            return
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
        if self._lines:
            done, note = self._state
            elapsed = duration_text(time.perf_counter() - self._started)
            head = f"{self.label}: {self._count(done)}" + (f" ({note})" if note else "")
            finished = self.total is None or done >= self.total
            self._write(f"{head} in {elapsed}" if finished else f"{head}, stopped after {elapsed}")

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _rich_bar(label: str, total: float | None, transient: bool, description: str) -> tuple[Any, Any]:
    """A rich progress bar on stderr and its one task."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    columns: list[Any] = [TextColumn(label)]
    if total is not None:
        columns.append(BarColumn())
    columns += [TextColumn("{task.description}"), TimeElapsedColumn()]
    if total is not None:
        columns += [TextColumn("eta"), TimeRemainingColumn()]
    bar = Progress(*columns, console=Console(stderr=True), transient=transient)
    return bar, bar.add_task(description, total=total)
