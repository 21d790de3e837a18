"""The recording proxy between real clients and a loopback upstream replaying wire recordings.

``proxied`` starts a ``RecordingProxy`` on an ephemeral port in the test's event loop, recording
through ``StoreSink`` (what the command uses) into a fresh store; ``await proxied.records()``
stops it (ending every open run) and returns the runs as the store rebuilds them.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from inspector.core.events import Event, fan_out
from inspector.core.records import RunRecord
from inspector.proxy import RecordingProxy, Upstreams
from inspector.proxy.recording import StoreSink
from inspector.proxy.verdicts import ValidatorFile
from inspector.store import Store
from tests.providers.fixture_paths import wire_folder
from tests.providers.loopback import LoopbackServer, Reply

OPENAI = wire_folder("openai-chat")
ANTHROPIC = wire_folder("anthropic-messages")
LOCAL = wire_folder("openai-compatible-local")
KEY = "sk-test-proxy-key-0123456789abcdef"


def pending_rows(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(
            conn.execute("SELECT count(*) FROM steps WHERE status = 'pending'").fetchone()[0]
        )


async def until(condition: Callable[[], object], what: str) -> None:
    """Waits (without a time bound of its own: pytest-timeout ends a hang) for ``condition()``."""
    while not condition():
        await asyncio.sleep(0.01)


def fixture_reply(folder: Path, name: str, **kwargs: object) -> tuple[Reply, bytes]:
    """The recorded reply ``name`` (``.response.sse`` streamed in slices, else the JSON body)
    and its bytes, which the client must receive unchanged."""
    sse = folder / f"{name}.response.sse"
    if sse.exists():
        body = sse.read_bytes()
        options = {"chunk_size": 97, **kwargs}
        return Reply(body=body, content_type="text/event-stream", **options), body  # type: ignore[arg-type]
    body = (folder / f"{name}.response.json").read_bytes()
    return Reply(body=body, **kwargs), body  # type: ignore[arg-type]


@dataclass
class Proxied:
    proxy: RecordingProxy
    upstream: LoopbackServer | None  # None when started in front of a bare URL
    sink: StoreSink
    db: Path
    events: list[Event] = field(default_factory=list)
    stopped: bool = False

    @property
    def openai_url(self) -> str:
        return f"{self.proxy.url}/v1"

    async def stop(self) -> None:
        if not self.stopped:
            self.stopped = True
            await self.proxy.stop()
            self.sink.close()

    async def records(self) -> list[RunRecord]:
        await self.stop()
        with Store.open(self.db) as store:
            return [store.load(s.run_id) for s in reversed(store.runs())]

    def stored_bytes(self) -> bytes:
        """Every byte of the store's files (the database, its WAL and shared memory)."""
        return b"".join(p.read_bytes() for p in self.db.parent.glob(f"{self.db.name}*"))


def start_proxied(
    upstream: LoopbackServer | str,
    db: Path,
    *,
    validators: ValidatorFile | None = None,
    idle_timeout_s: float = 60.0,
    timeout_s: float = 30.0,
) -> Proxied:
    """A proxy (not started) in front of ``upstream`` (a loopback server or a base URL)."""
    url = upstream if isinstance(upstream, str) else upstream.base_url
    sink = StoreSink(db)
    events: list[Event] = []
    proxy = RecordingProxy(
        fan_out(sink, events.append),
        port=0,
        upstreams=Upstreams(openai=url, anthropic=url),
        validators=validators,
        idle_timeout_s=idle_timeout_s,
        timeout_s=timeout_s,
    )
    return Proxied(proxy, None if isinstance(upstream, str) else upstream, sink, db, events)


@pytest.fixture
def upstream() -> Iterator[LoopbackServer]:
    with LoopbackServer() as server:
        yield server


@pytest.fixture
async def proxied(upstream: LoopbackServer, tmp_path: Path) -> AsyncIterator[Proxied]:
    harness = start_proxied(upstream, tmp_path / "runs.sqlite3")
    await harness.proxy.start()
    try:
        yield harness
    finally:
        await harness.stop()
