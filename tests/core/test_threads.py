"""Blocking user code runs on reusable daemon workers; a stuck call never blocks the next."""

from __future__ import annotations

import asyncio
import threading

import pytest

from inspector.core.threads import in_daemon_thread


async def test_idle_workers_are_reused() -> None:
    first = await in_daemon_thread(threading.get_ident)
    await asyncio.sleep(0.05)  # let the worker park itself in the idle pool
    second = await in_daemon_thread(threading.get_ident)
    assert first == second != threading.get_ident()


async def test_a_stuck_call_does_not_hold_up_the_next() -> None:
    release = threading.Event()
    stuck = in_daemon_thread(release.wait)
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.05):
            await asyncio.shield(stuck)
    assert await asyncio.wait_for(in_daemon_thread(lambda: "next"), 1) == "next"
    release.set()
    assert await stuck is True


async def test_system_exit_reaches_the_awaiting_code() -> None:
    def leave() -> None:
        raise SystemExit(3)

    with pytest.raises(SystemExit):
        await in_daemon_thread(leave)
