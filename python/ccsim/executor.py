"""Where runs execute: a pool of local processes, or an existing Dask distributed cluster.

Sweeps and statistical model checking hand the executor picklable calls ``fn(arg)`` and read
the answers as they complete. The work itself is deterministic (each call carries its seed),
so where a call runs never changes what it returns: a cluster gives the same bytes as the
local pool.

- Local (``jobs``): a ``ProcessPoolExecutor`` with ``spawn``ed workers (no fork of a process
  that may hold threads), which ignore SIGINT: Ctrl-C reaches the parent only, which stops
  submitting, keeps what finished and ends the workers.
- Dask (``scheduler="tcp://host:port"``): a ``distributed.Client`` connected to a running
  scheduler (``dask scheduler`` + ``dask worker``); ccsim must be importable on the workers.
  A worker that dies takes its running calls with it; the scheduler runs them again elsewhere.

A call that raises is reported with its exception; the others go on. A local worker process
that dies (killed, out of memory) breaks the pool: its call and every one not yet finished are
reported with ``concurrent.futures.BrokenExecutor`` and nothing more is submitted.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import signal
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

__all__ = ["Executor", "default_jobs"]

# How long a wait for completions blocks before it looks again (keeps Ctrl-C responsive).
POLL_S = 0.2


def default_jobs() -> int:
    """All the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def _ignore_sigint() -> None:
    # Pool workers leave Ctrl-C to the parent, which decides what to keep and ends them.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class Executor:
    """Runs calls on ``jobs`` local processes (all cores by default) or on the Dask cluster
    whose scheduler is at ``scheduler``. Use as a context manager."""

    def __init__(self, jobs: int | None = None, scheduler: str | None = None) -> None:
        if jobs is not None and scheduler is not None:
            raise ValueError("give either jobs (local processes) or a scheduler address, not both")
        if jobs is not None and jobs < 1:
            raise ValueError(f"jobs must be at least 1, got {jobs}")
        self.scheduler = scheduler
        self._client: Any = None
        self._pool: cf.ProcessPoolExecutor | None = None
        if scheduler is not None:
            from dask.distributed import Client  # imported on use: local sweeps need no Dask

            self._client = Client(scheduler, set_as_default=False, timeout="10s")
            self.workers = max(1, sum(w.get("nthreads", 1) for w in self._client.scheduler_info()["workers"].values()))
            self.description = f"Dask cluster at {scheduler} ({self.workers} worker threads)"
        else:
            self.workers = jobs or default_jobs()
            self._pool = cf.ProcessPoolExecutor(
                max_workers=self.workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_ignore_sigint,
            )
            self.description = f"{self.workers} local process{'es' if self.workers != 1 else ''}"

    # --- submission -------------------------------------------------------------------------

    def _submit(self, fn: Callable[[Any], Any], arg: Any) -> Any:
        if self._client is not None:
            # pure=False: every call is its own task, even with equal arguments.
            return self._client.submit(fn, arg, pure=False)
        assert self._pool is not None
        return self._pool.submit(fn, arg)

    def _wait_any(self, pending: set[Any]) -> set[Any]:
        """The calls among ``pending`` that have completed, waiting up to POLL_S for one."""
        if self._client is not None:
            # distributed.wait looks for a default client, which this one is not: poll.
            deadline = time.monotonic() + POLL_S
            while True:
                done = {f for f in pending if f.done()}
                if done or time.monotonic() >= deadline:
                    return done
                time.sleep(0.005)
        done, _ = cf.wait(pending, timeout=POLL_S, return_when=cf.FIRST_COMPLETED)
        return set(done)

    def imap_unordered(
        self, fn: Callable[[Any], Any], args: Iterable[Any], in_flight: int | None = None
    ) -> Iterator[tuple[int, Any, BaseException | None]]:
        """``(index, value, None)`` or ``(index, None, error)`` for each ``fn(arg)``, in the
        order they complete. At most ``in_flight`` calls are submitted at a time (4 per worker
        by default); ``args`` is read lazily, so it may be endless. Closing the iterator early
        cancels what has not started."""
        limit = in_flight or 4 * self.workers
        source = iter(enumerate(args))
        pending: dict[Any, int] = {}
        exhausted = False
        try:
            while True:
                while not exhausted and len(pending) < limit:
                    try:
                        index, arg = next(source)
                    except StopIteration:
                        exhausted = True
                        break
                    try:
                        pending[self._submit(fn, arg)] = index
                    except cf.BrokenExecutor as exc:
                        # A worker process died and took the pool with it: report this call
                        # and submit no more (what was running is reported as it fails).
                        yield index, None, exc
                        exhausted = True
                        break
                if not pending:
                    return
                for future in self._wait_any(set(pending)):
                    index = pending.pop(future)
                    try:
                        value = future.result()
                    except (KeyboardInterrupt, SystemExit):
                        raise
                    except BaseException as exc:  # the call's own failure, or a lost worker
                        yield index, None, exc
                    else:
                        yield index, value, None
        finally:
            for future in pending:
                future.cancel()

    # --- shutting down ----------------------------------------------------------------------

    def close(self, kill: bool = False) -> None:
        """Release the workers; ``kill`` ends local workers at once (an interrupted run)."""
        if self._client is not None:
            self._client.close()
            self._client = None
        if self._pool is not None:
            pool, self._pool = self._pool, None
            if kill:
                # The pool has no public way to stop calls that are running; its processes are
                # ours, so end them (their unfinished calls are lost by definition).
                processes = list(getattr(pool, "_processes", {}).values())
                for process in processes:
                    if process.is_alive():
                        process.terminate()
                for process in processes:
                    process.join(timeout=5)
                # A worker ended while it was sending a result leaves half a message in the
                # result pipe; the pool's manager thread would wait for the rest for ever, and
                # the interpreter for that thread at exit. With the workers gone, closing this
                # process's own end of the pipe lets the thread read end-of-file instead.
                result_queue = getattr(pool, "_result_queue", None)
                if result_queue is not None:
                    result_queue._writer.close()
            pool.shutdown(wait=not kill, cancel_futures=True)

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> None:
        self.close(kill=kind is not None)
