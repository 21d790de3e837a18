"""Fixtures shared by the provider tests (the anthropic and store tests reuse ``loopback``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.providers.loopback import LoopbackServer


@pytest.fixture
def loopback() -> Iterator[LoopbackServer]:
    """A real HTTP server on 127.0.0.1 serving queued replies (see ``loopback.py``)."""
    with LoopbackServer() as server:
        yield server


class RecordingSleep:
    """An injectable ``sleep`` that records the delays asked for and returns at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture
def no_sleep() -> RecordingSleep:
    return RecordingSleep()
