"""Where runs execute: a pool of local processes, or an existing Dask distributed cluster.

Sweeps and statistical model checking hand the executor picklable calls ``fn(arg)`` and read
the answers as they complete. The work itself is deterministic (each call carries its seed),
so where a call runs never changes what it returns: a cluster gives the same bytes as the
local pool.

- Local (``jobs``, at most ``MAX_JOBS``): a ``ProcessPoolExecutor`` with ``spawn``ed workers
  (no fork of a process that may hold threads), which ignore SIGINT: Ctrl-C reaches the parent
  only, which stops submitting, keeps what finished and ends the workers. A worker whose parent
  dies (killed outright) exits within ``PARENT_POLL_S``.
- Dask (``scheduler="tcp://host:port"``): a ``distributed.Client`` connected to a running
  scheduler (``dask scheduler`` + ``dask worker``); ccsim must be importable on the workers.
  A worker that dies takes its running calls with it; the scheduler runs them again elsewhere.
  ``check_scheduler_address`` refuses what is no TCP address before a client is made; a client
  that cannot be made or connected raises an OSError (``SchedulerUnreachable`` for Dask's
  other exceptions).

A call that raises is reported with its exception; the others go on. A local worker process
that dies (killed, out of memory) breaks the pool: its call and every one not yet finished are
reported with ``concurrent.futures.BrokenExecutor`` and nothing more is submitted.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Generator, Iterable
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


# Local worker processes at most (the pool's C-level limits are far above what a machine runs).
MAX_JOBS = 1024


def check_scheduler_address(address: str) -> None:
    """ValueError unless ``address`` is a Dask scheduler's TCP address, ``[tcp://]HOST:PORT``
    (the other transports need settings or packages that ccsim does not pass or require)."""
    from distributed.comm.addressing import parse_address, parse_host_port

    if not isinstance(address, str) or not address or any(c.isspace() for c in address):
        raise ValueError("expected an address such as tcp://10.0.0.5:8786")
    try:
        scheme, location = parse_address(address)
        if scheme != "tcp":
            raise ValueError(f"scheme {scheme!r}: ccsim connects over tcp only")
        host, port = parse_host_port(location)
        if not host or not 0 < int(port) < 65536:
            raise ValueError("no host, or a port outside 1..65535")
    except (ValueError, TypeError) as exc:
        raise ValueError(f"expected an address such as tcp://10.0.0.5:8786 ({exc})") from None


class SchedulerUnreachable(ConnectionError):
    """The Dask client could not be made or connected; the message says why."""


def _connect(address: str) -> Any:
    """A ``distributed.Client`` connected to the scheduler at ``address``.

    A Client whose constructor fails is still finalised by the garbage collector, which closes
    it through its event loop with a 20 s timeout, after the error has been reported: mark such
    a client closed and stop its loop here, so that the failure is all the caller sees.
    """
    from dask.distributed import Client  # imported on use: local sweeps need no Dask

    check_scheduler_address(address)
    client = Client.__new__(Client)
    try:
        client.__init__(address, set_as_default=False, timeout="10s")  # type: ignore[misc]
    except BaseException as exc:
        try:
            client.status = "closed"
            client._loop_runner.stop()
        except Exception:  # pragma: no cover - a Dask version without these attributes
            pass
        if isinstance(exc, Exception) and not isinstance(exc, OSError):
            # Whatever Dask raises for an address it cannot use, the caller sees one kind.
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            raise SchedulerUnreachable(f"{type(exc).__name__}: {first}" if first else type(exc).__name__) from exc
        raise
    return client


# How often a local worker checks that the process that started it is still there.
PARENT_POLL_S = 0.25


def _worker_init(parent: int) -> None:
    """Set up a local worker process: Ctrl-C is left to the parent, which decides what to keep
    and ends the workers; and the worker ends itself when the parent is gone.

    A parent killed outright (SIGKILL, the out-of-memory killer) never ends its workers: they
    wait on the pool's call queue, whose write end every worker holds too, so they would wait
    for ever under init, and keep multiprocessing's resource tracker alive with them. A daemon
    thread polls the parent's pid (the worker is re-parented when the parent dies) and exits at
    once; the engine releases the GIL while it simulates, so this also stops a run midway.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if os.getppid() != parent:  # the parent died before this worker got here
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent,), name="ccsim-parent-watch", daemon=True).start()


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_S)
    os._exit(1)  # no cleanup: the results have no reader


def _until_no_cancelled_call(manager: Any, timeout_s: float = 1.0) -> None:
    """Wait (briefly) until the pool's manager thread holds no cancelled call: calls cancelled
    by an earlier iterator stay in its table until it next looks at it."""
    deadline = time.monotonic() + timeout_s
    while manager is not None and manager.is_alive() and time.monotonic() < deadline:
        try:
            items = list(getattr(manager, "pending_work_items", {}).values())
        except RuntimeError:  # the thread changed the table meanwhile: look again
            continue
        if not any(item.future.cancelled() for item in items):
            return
        time.sleep(0.005)


class Executor:
    """Runs calls on ``jobs`` local processes (all cores by default) or on the Dask cluster
    whose scheduler is at ``scheduler``. Use as a context manager."""

    def __init__(self, jobs: int | None = None, scheduler: str | None = None) -> None:
        if jobs is not None and scheduler is not None:
            raise ValueError("give either jobs (local processes) or a scheduler address, not both")
        if jobs is not None and not 1 <= jobs <= MAX_JOBS:
            raise ValueError(f"jobs must be in 1..{MAX_JOBS}, got {jobs}")
        self.scheduler = scheduler
        self._client: Any = None
        self._pool: cf.ProcessPoolExecutor | None = None
        self._abandoned: set[Any] = set()
        """Local calls an iterator left unfinished when it was closed early (see imap_unordered)."""
        if scheduler is not None:
            self._client = _connect(scheduler)
            self.workers = max(1, sum(w.get("nthreads", 1) for w in self._client.scheduler_info()["workers"].values()))
            self.description = f"Dask cluster at {scheduler} ({self.workers} worker threads)"
        else:
            self.workers = jobs or default_jobs()
            self._pool = cf.ProcessPoolExecutor(
                max_workers=self.workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_worker_init,
                initargs=(os.getpid(),),
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
    ) -> Generator[tuple[int, Any, BaseException | None], None, None]:
        """``(index, value, None)`` or ``(index, None, error)`` for each ``fn(arg)``, in the
        order they complete. At most ``in_flight`` calls are submitted at a time (4 per worker
        by default); ``args`` is read lazily, so it may be endless. Closing the iterator early
        cancels what has not started."""
        limit = in_flight or 4 * self.workers
        self._drop_abandoned()
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
            if self._client is not None:
                for future in pending:
                    future.cancel()
            else:
                # Not cancelled here: a local pool that is then killed (an interrupted sweep)
                # fails every call it still holds with BrokenProcessPool from its manager thread,
                # and a future cancelled from outside makes that thread die with
                # InvalidStateError, a traceback printed after the sweep's last line. close()
                # lets the pool cancel them itself; a next iterator cancels them first.
                self._abandoned.update(pending)

    def _drop_abandoned(self) -> None:
        """Cancel the calls an earlier iterator left (those that have not started)."""
        for future in self._abandoned:
            future.cancel()
        self._abandoned.clear()

    # --- shutting down ----------------------------------------------------------------------

    def close(self, kill: bool = False) -> None:
        """Release the workers; ``kill`` ends local workers at once (an interrupted run)."""
        if self._client is not None:
            self._client.close()
            self._client = None
        if self._pool is not None:
            pool, self._pool = self._pool, None
            self._abandoned.clear()
            if kill:
                # The pool has no public way to stop calls that are running; its processes are
                # ours, so end them (their unfinished calls are lost by definition). First the
                # pool is shut down with its queued calls cancelled by its own manager thread
                # (so that none is cancelled from outside when the thread, seeing the workers
                # die, fails what it holds), then the workers are ended.
                processes = list((getattr(pool, "_processes", None) or {}).values())
                result_queue = getattr(pool, "_result_queue", None)
                manager = getattr(pool, "_executor_manager_thread", None)
                pool.shutdown(wait=False, cancel_futures=True)
                _until_no_cancelled_call(manager)
                for process in processes:
                    if process.is_alive():
                        process.terminate()
                for process in processes:
                    process.join(timeout=5)
                # A worker ended while it was sending a result leaves half a message in the
                # result pipe; the pool's manager thread would wait for the rest for ever, and
                # the interpreter for that thread at exit. With the workers gone, closing this
                # process's own end of the pipe lets the thread read end-of-file instead.
                if result_queue is not None:
                    result_queue._writer.close()
                # The thread then closes its wake-up pipe as it ends. The interpreter's exit
                # hook wakes every manager thread through that pipe without a lock (CPython
                # 3.11): a thread closing it meanwhile made the hook print "Bad file
                # descriptor". Once the thread has ended, the hook sees the pipe closed.
                if manager is not None:
                    manager.join(timeout=5)
                return
            pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> None:
        self.close(kill=kind is not None)
