"""Runs blocking jobs (the window's re-validation, with its own store) on daemon threads, off
the event loop. User code never runs here: it runs in a worker process (``core.worker``)."""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable
from typing import Any

_MAX_IDLE = 4
_idle: list[_Worker] = []
_idle_lock = threading.Lock()


class _Worker(threading.Thread):
    """A daemon thread that runs one call at a time. It goes back to the idle pool only when its
    call returns, so a call that hangs (and was given up on) never delays anyone else."""

    def __init__(self) -> None:
        super().__init__(name="inspector-user-code", daemon=True)
        self.jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()

    def run(self) -> None:
        while True:
            self.jobs.get()()
            with _idle_lock:
                if len(_idle) >= _MAX_IDLE:
                    return
                _idle.append(self)


def _worker() -> _Worker:
    with _idle_lock:
        if _idle:
            return _idle.pop()
    worker = _Worker()
    worker.start()
    return worker


def in_daemon_thread(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> asyncio.Future[Any]:
    """``fn(*args, **kwargs)`` on a daemon worker thread, as an awaitable future.

    Unlike ``asyncio.to_thread`` (a pool the loop joins at shutdown), a call that never returns
    cannot hold up the loop's shutdown or the process exit: cancelling or timing out the await
    really lets the turn, the CLI and the window move on. Idle workers are reused, so a call costs
    a queue hand-off, not a thread start. Anything ``fn`` raises — even ``SystemExit`` — is
    delivered to the awaiting task as an exception.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(outcome: Callable[[], None]) -> None:
        if not future.done():
            outcome()

    def deliver(outcome: Callable[[], None]) -> None:
        # The loop may have closed while a timed-out call was still running.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, outcome)

    def job() -> None:
        try:
            value = fn(*args, **kwargs)
        except BaseException as exc:  # SystemExit too: the awaiting code turns it into a verdict
            error = exc
            deliver(lambda: future.set_exception(error))
        else:
            deliver(lambda: future.set_result(value))

    _worker().jobs.put(job)
    return future
