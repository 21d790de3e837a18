"""Runs blocking user code (sync validators and tools) off the event loop."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import Any


def in_daemon_thread(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> asyncio.Future[Any]:
    """``fn(*args, **kwargs)`` in a daemon thread of its own, as an awaitable future.

    Unlike ``asyncio.to_thread`` (a pool thread the loop joins at shutdown), a call that never
    returns cannot hold up the loop's shutdown or the process exit: cancelling or timing out the
    await really lets the turn, the CLI and the window move on. Anything ``fn`` raises — even
    ``SystemExit`` — is delivered to the awaiting task as an exception.
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

    def work() -> None:
        try:
            value = fn(*args, **kwargs)
        except BaseException as exc:  # SystemExit too: the awaiting code turns it into a verdict
            error = exc
            deliver(lambda: future.set_exception(error))
        else:
            deliver(lambda: future.set_result(value))

    threading.Thread(target=work, name=getattr(fn, "__name__", "user-code"), daemon=True).start()
    return future
