"""A client hanging up at any moment of a call ends its step ``cancelled`` ("client
disconnected"), its run ``cancelled``, with no row left pending, and the proxy hangs up on the
upstream at once (the loopback upstream sees its connection close): before the upstream answers
(a streamed or a non-streamed call), as its answer arrives, mid-stream while the upstream holds
its stream open, between slow chunks, as a chunk arrives — on every route the proxy serves
(OpenAI, Anthropic, an OpenAI-compatible local server, another path recorded raw). A forwarded
GET, not recorded, is closed upstream too. The proxy stopping mid-call cuts it the same way,
saying the proxy stopped.

"As ... arrives": the upstream's bytes and the client's hang-up reach the proxy in the same turn
of its event loop, the bytes first, so the proxy's write to the client fails and the handler's
cancellation follows while it closes the upstream. The test holds the loop (no ``await``) while
both happen, on a plain socket it closes itself, which makes that order certain.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from inspector.core.events import StepFinished
from inspector.core.records import RunRecord
from tests.providers.loopback import Received, Reply
from tests.proxy.conftest import ANTHROPIC, KEY, LOCAL, OPENAI, Proxied, pending_rows, until

pytestmark = pytest.mark.timeout(20)  # a missed hang-up waits forever: fail it early


@dataclass(frozen=True)
class Route:
    path: str
    folder: Path
    name: str  # the wire fixture: the request sent and the reply
    body: dict[str, Any] | None = None  # instead of the fixture's request

    def request(self) -> dict[str, Any]:
        if self.body is not None:
            return self.body
        return dict(json.loads((self.folder / f"{self.name}.request.json").read_text()))

    def headers(self) -> dict[str, str]:
        if self.path == "/v1/messages":
            return {"x-api-key": KEY, "anthropic-version": "2023-06-01"}
        return {"authorization": f"Bearer {KEY}"}

    def reply(self, **options: Any) -> Reply:
        sse = self.folder / f"{self.name}.response.sse"
        if sse.exists():
            return Reply(body=sse.read_bytes(), content_type="text/event-stream", **options)
        return Reply(body=(self.folder / f"{self.name}.response.json").read_bytes(), **options)

    def raw_request(self) -> bytes:
        body = json.dumps(self.request()).encode()
        head = [f"POST {self.path} HTTP/1.1", "host: 127.0.0.1"]
        head += [f"{k}: {v}" for k, v in self.headers().items()]
        head += ["content-type: application/json", f"content-length: {len(body)}", "", ""]
        return "\r\n".join(head).encode() + body


STREAMED = {
    "openai": Route("/v1/chat/completions", OPENAI, "stream-text-usage-gpt4o"),
    "anthropic": Route("/v1/messages", ANTHROPIC, "stream-text-haiku45"),
    "local": Route("/v1/chat/completions", LOCAL, "vllm-stream-opt125m"),
    "raw": Route(  # a path the proxy does not read: recorded raw
        "/v1/responses",
        OPENAI,
        "stream-text-usage-gpt4o",
        {"model": "gpt-4o", "input": "Hi", "stream": True},
    ),
}
NOT_STREAMED = {
    "openai": Route("/v1/chat/completions", OPENAI, "text-basic-gpt35"),
    "anthropic": Route("/v1/messages", ANTHROPIC, "text-basic-claude3-opus"),
    "local": Route("/v1/chat/completions", LOCAL, "vllm-text-opt125m"),
}
EVERY_ROUTE = {**{f"{k}-stream": r for k, r in STREAMED.items()}, **NOT_STREAMED}


def queue(proxied: Proxied, reply: Reply) -> None:
    assert proxied.upstream is not None
    proxied.upstream.queue(reply)


async def the_call_upstream(proxied: Proxied) -> Received:
    assert proxied.upstream is not None
    upstream = proxied.upstream
    await until(lambda: upstream.received, "the call reaches the upstream")
    (received,) = upstream.received
    return received


async def leave_after_first_chunk(proxied: Proxied, route: Route) -> None:
    async with (
        httpx.AsyncClient(base_url=proxied.proxy.url) as client,
        client.stream("POST", route.path, json=route.request(), headers=route.headers()) as reply,
    ):
        assert reply.status_code == 200
        async for _ in reply.aiter_raw():
            break  # the user closed the tab


async def leave_before_the_reply(proxied: Proxied, route: Route, method: str = "POST") -> None:
    """The client gives up (its task is cancelled) once the call has reached the upstream."""
    async with httpx.AsyncClient(base_url=proxied.proxy.url) as client:
        body = route.request() if method == "POST" else None
        calling = asyncio.ensure_future(
            client.request(method, route.path, json=body, headers=route.headers())
        )
        await the_call_upstream(proxied)
        calling.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await calling


def hang_up_once_more_is_sent(client: socket.socket, received: Received) -> None:
    """Blocks the event loop (call it without ``await``) until the upstream has written more
    of its reply — into the proxy's socket, unread — then closes the client's socket: the proxy
    reads both in its next turn, the upstream's bytes first."""
    sent = received.body_sent
    while received.body_sent == sent:
        time.sleep(0.001)
    client.close()


async def assert_cancelled(proxied: Proxied, said: str, *, upstream_done: bool = False) -> None:
    """The step and run ended ``cancelled``; the upstream saw the proxy hang up (unless it had
    sent its whole reply already: then there is nothing to hang up on)."""
    received = await the_call_upstream(proxied)
    if not upstream_done:
        await until(received.disconnected.is_set, "the upstream sees the proxy hang up too")
    await until(
        lambda: any(isinstance(e, StepFinished) for e in proxied.events), "the step is recorded"
    )
    (record,) = await proxied.records()
    (step,) = record.steps
    assert step.status == "cancelled"
    assert step.error is not None and said in step.error
    assert (record.status, record.termination) == ("cancelled", "cancelled")
    assert pending_rows(proxied.db) == 0


@pytest.mark.parametrize("route", STREAMED.values(), ids=STREAMED.keys())
async def test_a_client_hanging_up_mid_stream_cancels_the_step(
    proxied: Proxied, route: Route
) -> None:
    queue(proxied, route.reply(chunk_size=100, hold_after=600))  # then open and idle
    await leave_after_first_chunk(proxied, route)
    await assert_cancelled(proxied, "client disconnected after")


@pytest.mark.parametrize("route", STREAMED.values(), ids=STREAMED.keys())
async def test_a_client_hanging_up_between_slow_chunks_cancels_the_step(
    proxied: Proxied, route: Route
) -> None:
    # Seconds of stream: the upstream sees the hang-up long before it would have finished.
    queue(proxied, route.reply(chunk_size=20, chunk_delay_s=0.05))
    await leave_after_first_chunk(proxied, route)
    await assert_cancelled(proxied, "client disconnected after")


@pytest.mark.parametrize("route", EVERY_ROUTE.values(), ids=EVERY_ROUTE.keys())
async def test_a_client_hanging_up_before_the_upstream_answers_cancels_the_step(
    proxied: Proxied, route: Route
) -> None:
    queue(proxied, Reply(hold_before=True))  # not even the status line
    await leave_before_the_reply(proxied, route)
    await assert_cancelled(proxied, "client disconnected before the reply")


@pytest.mark.parametrize("route", STREAMED.values(), ids=STREAMED.keys())
async def test_a_chunk_and_the_hang_up_arriving_together_cancel_the_step(
    proxied: Proxied, route: Route
) -> None:
    queue(proxied, route.reply(chunk_size=20, chunk_delay_s=0.05))
    with socket.create_connection((proxied.proxy.host, proxied.proxy.port)) as client:
        client.sendall(route.raw_request())
        await asyncio.to_thread(client.recv, 65536)  # the reply has begun
        hang_up_once_more_is_sent(client, await the_call_upstream(proxied))
    await assert_cancelled(proxied, "client disconnected after")


@pytest.mark.parametrize("route", EVERY_ROUTE.values(), ids=EVERY_ROUTE.keys())
async def test_the_answer_and_the_hang_up_arriving_together_cancel_the_step(
    proxied: Proxied, route: Route
) -> None:
    release = threading.Event()
    streamed = route.reply().content_type == "text/event-stream"
    options: dict[str, Any] = {"chunk_size": 100, "hold_after": 600} if streamed else {}
    queue(proxied, route.reply(hold_before=True, release=release, **options))
    with socket.create_connection((proxied.proxy.host, proxied.proxy.port)) as client:
        client.sendall(route.raw_request())
        received = await the_call_upstream(proxied)
        release.set()  # the upstream answers while the loop is held
        hang_up_once_more_is_sent(client, received)
    await assert_cancelled(proxied, "client disconnected", upstream_done=not streamed)


async def test_a_client_hanging_up_on_a_forwarded_get_closes_the_upstream(
    proxied: Proxied,
) -> None:
    queue(proxied, Reply(hold_before=True))
    await leave_before_the_reply(proxied, Route("/v1/models", OPENAI, ""), method="GET")
    received = await the_call_upstream(proxied)
    await until(received.disconnected.is_set, "the upstream sees the proxy hang up too")
    assert await proxied.records() == []  # a GET is not a model call: nothing recorded


async def test_the_proxy_stopping_before_the_reply_cancels_the_step_saying_so(
    proxied: Proxied,
) -> None:
    route = STREAMED["openai"]
    queue(proxied, Reply(hold_before=True))
    async with httpx.AsyncClient(base_url=proxied.proxy.url) as client:
        calling = asyncio.ensure_future(
            client.post(route.path, json=route.request(), headers=route.headers())
        )
        await the_call_upstream(proxied)
        (record,) = await proxied.records()  # stops the proxy
        with pytest.raises(httpx.RemoteProtocolError):
            await calling
    await assert_stopped(proxied, record, "the proxy stopped before the reply")


async def test_the_proxy_stopping_mid_stream_cancels_the_step_saying_so(proxied: Proxied) -> None:
    route = STREAMED["openai"]
    queue(proxied, route.reply(chunk_size=100, hold_after=600))
    async with (
        httpx.AsyncClient(base_url=proxied.proxy.url) as client,
        client.stream("POST", route.path, json=route.request(), headers=route.headers()) as reply,
    ):
        async for _ in reply.aiter_raw():
            break
        (record,) = await proxied.records()  # stops the proxy
    await assert_stopped(proxied, record, "the proxy stopped after")


async def assert_stopped(proxied: Proxied, record: RunRecord, said: str) -> None:
    received = await the_call_upstream(proxied)
    await until(received.disconnected.is_set, "the upstream sees the proxy hang up")
    (step,) = record.steps
    assert step.status == "cancelled"
    assert step.error is not None and step.error.startswith(said)
    assert (record.status, record.termination) == ("cancelled", "cancelled")
    assert pending_rows(proxied.db) == 0
