"""``run_small``: ``asyncio.run`` for a coroutine whose result is large (a whole ``RunRecord``).

On the way out, ``asyncio.run`` asks ``signal.getsignal(SIGINT)`` whether its own handler is
still installed; that call tries ``Handlers(handler)``, whose failure message formats the
``repr`` of the handler — a ``functools.partial`` holding the finished task, whose repr holds its
result. A record's pydantic repr grows with steps x history, so a 1,000-step run spent most of
its time there after the turn had ended. Here the task's result is ``None`` and the value is
handed back through a box instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


async def returning_none(coro: Coroutine[Any, Any, T], box: list[T]) -> None:
    """Awaits ``coro`` and puts its result in ``box``: the task itself finishes with ``None``."""
    box.append(await coro)


def run_small(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coro)``, without the finished task ever holding (and printing) the result."""
    box: list[T] = []
    asyncio.run(returning_none(coro, box))
    return box[0]
