"""Faults between the client, the proxy and the upstream: errors reach the client as the
upstream sent them and are recorded on the step; broken streams break for the client too; bad
bodies are refused, not recorded. A client hanging up: ``test_hangups.py``."""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path
from typing import Any

import httpx
import pytest

from inspector.proxy.capture import ReplyCapture
from tests.providers.loopback import LoopbackServer, Reply, json_reply
from tests.proxy.conftest import (
    KEY,
    OPENAI,
    Proxied,
    fixture_reply,
    pending_rows,
    start_proxied,
)

CHAT = {"model": "gpt-4o", "messages": [{"role": "user", "content": "Hi"}]}
HEADERS = {"authorization": f"Bearer {KEY}"}


@pytest.mark.parametrize(
    ("name", "status"),
    [
        ("error-429-openrouter-upstream-rate-limit", 429),
        ("error-400-unsupported-value-o1-mini", 400),
    ],
)
async def test_an_upstream_error_reaches_the_client_and_the_step(
    proxied: Proxied, name: str, status: int
) -> None:
    reply, body = fixture_reply(OPENAI, name, status=status, headers={"retry-after": "7"})
    proxied.upstream.queue(reply)
    async with httpx.AsyncClient(base_url=proxied.openai_url) as client:
        response = await client.post("/chat/completions", json=CHAT, headers=HEADERS)
    assert (response.status_code, response.content) == (status, body)
    assert response.headers["retry-after"] == "7"

    (record,) = await proxied.records()
    (step,) = record.steps
    assert step.status == "error"
    message = json.loads(body)["error"]["message"]
    assert step.error is not None and f"HTTP {status}" in step.error and message in step.error
    assert step.raw is not None and step.raw.response["body"] == json.loads(body)
    assert (record.status, record.termination) == ("error", "provider_error")


async def test_an_upstream_error_quoting_the_clients_key_is_recorded_without_it(
    proxied: Proxied,
) -> None:
    """A gateway answering 401 with "Incorrect API key provided: <the key>": the client gets
    the reply as sent; the step's error, its raw body and the store hold ``[redacted]``, as a
    run's provider records the same reply."""
    error = {"error": {"message": f"Incorrect API key provided: {KEY}.", "code": "invalid"}}
    proxied.upstream.queue(json_reply(error, status=401))
    async with httpx.AsyncClient(base_url=proxied.openai_url) as client:
        response = await client.post("/chat/completions", json=CHAT, headers=HEADERS)
    assert response.status_code == 401 and KEY in response.text

    (record,) = await proxied.records()
    (step,) = record.steps
    assert step.error == "openai: HTTP 401: Incorrect API key provided: [redacted]."
    assert step.raw is not None
    assert KEY not in json.dumps(step.raw.response)
    assert KEY.encode() not in proxied.stored_bytes()


async def test_a_500_and_then_the_clients_retry_are_one_run(proxied: Proxied) -> None:
    ok, body = fixture_reply(OPENAI, "text-basic-gpt35")
    proxied.upstream.queue(Reply(status=500, body=b"upstream broke"), ok)
    async with httpx.AsyncClient(base_url=proxied.openai_url) as client:
        failed = await client.post("/chat/completions", json=CHAT, headers=HEADERS)
        retried = await client.post("/chat/completions", json=CHAT, headers=HEADERS)
    assert (failed.status_code, failed.content) == (500, b"upstream broke")
    assert retried.content == body

    (record,) = await proxied.records()
    assert [(s.status, s.attempt) for s in record.steps] == [("error", 1), ("success", 1)]
    assert record.steps[0].error == "openai: HTTP 500: upstream broke"
    assert record.status == "succeeded"


async def test_an_upstream_that_goes_silent_times_out(
    upstream: LoopbackServer, tmp_path: Path
) -> None:
    harness = start_proxied(upstream, tmp_path / "runs.sqlite3", timeout_s=0.3)
    await harness.proxy.start()
    sse = (OPENAI / "stream-text-usage-gpt4o.response.sse").read_bytes()
    held = sse.index(b"\n\n", sse.index(b"capital")) + 2  # some text has arrived by then
    upstream.queue(
        Reply(body=sse, content_type="text/event-stream", chunk_size=50, hold_after=held)
    )
    received = bytearray()
    async with httpx.AsyncClient(base_url=harness.openai_url) as client:
        with pytest.raises(httpx.RemoteProtocolError):
            async with client.stream(
                "POST", "/chat/completions", json={**CHAT, "stream": True}, headers=HEADERS
            ) as response:
                async for chunk in response.aiter_raw():
                    received += chunk
    assert bytes(received) == sse[:held]  # what arrived, then the break, as from the upstream

    (record,) = await harness.records()
    (step,) = record.steps
    assert step.status == "error"
    assert step.error is not None and "read timeout" in step.error
    assert step.response is not None and step.response.text == "The capital"  # had arrived
    assert pending_rows(harness.db) == 0


async def test_an_upstream_that_never_answers_is_a_504(tmp_path: Path) -> None:
    with socket.socket() as silent:  # accepts connections (the backlog) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        host, port = silent.getsockname()
        url = f"http://{host}:{port}/v1"
        harness = start_proxied(url, tmp_path / "runs.sqlite3", timeout_s=0.3)
        await harness.proxy.start()
        async with httpx.AsyncClient(base_url=harness.openai_url) as client:
            response = await client.post("/chat/completions", json=CHAT, headers=HEADERS)
        (record,) = await harness.records()
    assert response.status_code == 504
    # Connected (the backlog) then no answer: a read timeout; on a loaded machine the connect
    # itself may time out first. Either way a 504 and a step error saying so.
    assert "timeout" in response.json()["error"]["message"]
    (step,) = record.steps
    assert step.status == "error" and step.error is not None and "timeout" in step.error
    assert record.status == "error"


async def test_a_stream_the_upstream_cuts_is_cut_for_the_client_too(proxied: Proxied) -> None:
    sse = (OPENAI / "stream-text-usage-gpt4o.response.sse").read_bytes()
    proxied.upstream.queue(
        Reply(body=sse, content_type="text/event-stream", chunk_size=64, cut_after=700)
    )
    received = bytearray()
    async with httpx.AsyncClient(base_url=proxied.openai_url) as client:
        with pytest.raises(httpx.RemoteProtocolError):
            async with client.stream(
                "POST", "/chat/completions", json={**CHAT, "stream": True}, headers=HEADERS
            ) as response:
                async for chunk in response.aiter_raw():
                    received += chunk
    assert bytes(received) == sse[:700]

    (record,) = await proxied.records()
    (step,) = record.steps
    assert step.status == "error"
    assert step.error is not None and "closed by the server mid-response" in step.error
    assert record.status == "error"


async def test_fifty_concurrent_clients_each_get_their_reply_and_run(proxied: Proxied) -> None:
    reply, body = fixture_reply(OPENAI, "text-basic-gpt35")
    proxied.upstream.queue(*[reply] * 50)
    limits = httpx.Limits(max_connections=50)
    async with httpx.AsyncClient(base_url=proxied.openai_url, limits=limits) as client:
        responses = await asyncio.gather(
            *[
                client.post(
                    "/chat/completions",
                    json={"model": "gpt-4o", "messages": [{"role": "user", "content": f"#{i}"}]},
                    headers=HEADERS,
                )
                for i in range(50)
            ]
        )
    assert all(r.status_code == 200 and r.content == body for r in responses), [
        (r.status_code, r.content[:200]) for r in responses if r.content != body
    ]

    records = await proxied.records()
    assert len(records) == 50
    asked = sorted(r.steps[0].request.messages[0].content or "" for r in records)
    assert asked == sorted(f"#{i}" for i in range(50))
    assert all(r.status == "succeeded" and len(r.steps) == 1 for r in records)
    assert pending_rows(proxied.db) == 0


@pytest.mark.parametrize(
    ("path", "body", "problem"),
    [
        ("/v1/chat/completions", b"model=gpt-4o", "not JSON"),
        ("/v1/messages", b"{not json", "not JSON"),
        ("/v1/chat/completions", b"[1, 2]", "not a JSON object"),
    ],
)
async def test_a_body_that_is_not_a_request_is_refused_and_not_recorded(
    proxied: Proxied, path: str, body: bytes, problem: str
) -> None:
    async with httpx.AsyncClient(base_url=proxied.proxy.url) as client:
        response = await client.post(path, content=body, headers=HEADERS)
    assert response.status_code == 400
    message = response.json()["error"]["message"]
    assert message.startswith("agent-inspector proxy: ") and problem in message
    if path == "/v1/messages":  # in the shape the Anthropic SDK reads
        assert response.json()["type"] == "error"
    assert proxied.upstream.received == []
    assert await proxied.records() == []


async def test_a_fault_of_the_proxys_own_still_ends_the_step(
    proxied: Proxied, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: ReplyCapture, chunk: bytes) -> list[Any]:
        raise RuntimeError("a bug in reading the reply")

    monkeypatch.setattr(ReplyCapture, "feed", broken)
    sse = (OPENAI / "stream-text-usage-gpt4o.response.sse").read_bytes()
    proxied.upstream.queue(Reply(body=sse, content_type="text/event-stream", chunk_size=100))
    async with httpx.AsyncClient(base_url=proxied.openai_url) as client:
        with pytest.raises(httpx.RemoteProtocolError):  # the reply breaks off for the client
            await client.post("/chat/completions", json={**CHAT, "stream": True}, headers=HEADERS)

    (record,) = await proxied.records()
    (step,) = record.steps
    assert step.status == "error"
    assert step.error == "agent-inspector proxy: RuntimeError: a bug in reading the reply"
    assert step.raw is not None and step.raw.request["body"]["stream"] is True
    assert record.status == "error"
    assert pending_rows(proxied.db) == 0
