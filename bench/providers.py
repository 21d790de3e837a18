"""The openai adapter's own cost, against the bare minimum, in the same run.

1. Stream parsing: a 5 MB Chat Completions SSE body, built by repeating the content chunks of a
   recorded stream (``openai-chat/stream-text-usage-gpt4o``), served from memory by
   ``httpx.MockTransport``. Adapter: ``OpenAIProvider.stream`` to its ``Completed`` (SSE decoding
   with httpx-sse, chunk assembly, engine chunks, the raw record of every event). Bare minimum:
   the same client, ``response.aiter_lines()`` + ``json.loads`` of each ``data:`` payload.
   Goal: adapter throughput ≥ 0.5× bare.
2. Time to first token against a real HTTP server on 127.0.0.1 (``tests/providers/loopback.py``)
   over a kept-alive connection: from the call to the first text chunk, adapter vs raw httpx
   (``client.stream`` + ``aiter_lines`` until the first content delta). Goal: overhead < 2 ms.

Why: the inspector records exactly what a provider sent; that must not make streams visibly
slower than talking to the server directly.

Usage: ``python bench/providers.py [--write bench/RESULTS.md] [--quick]``; exit status 1 when a
goal is missed (not with ``--quick``).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import platform
import statistics
import sys
import time
from importlib.metadata import version
from pathlib import Path

import httpx
from results import write_section  # bench/results.py (this folder is on sys.path)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for tests.providers (the loopback server and the fixtures)

from inspector.core.messages import user  # noqa: E402
from inspector.core.provider import Completed, TextChunk  # noqa: E402
from inspector.core.records import StepRequest  # noqa: E402
from inspector.core.scenario import ModelConfig  # noqa: E402
from inspector.providers.openai import OpenAIProvider  # noqa: E402
from tests.providers.loopback import LoopbackServer, sse_reply  # noqa: E402
from tests.providers.wire import response_bytes  # noqa: E402

HEADING = "## Providers (bench/providers.py)"
RECORDING = "openai-chat/stream-text-usage-gpt4o"
REQUEST = StepRequest(system="", messages=[user("What is the capital of Mexico?")])


def big_stream(size: int) -> bytes:
    """The recording with its content events repeated until the body is ``size`` bytes."""
    events = [e + b"\n\n" for e in response_bytes(RECORDING).split(b"\n\n") if e.strip()]
    head, content, tail = events[:1], events[1:-3], events[-3:]  # tail: finish, usage, [DONE]
    body = bytearray(b"".join(head))
    while len(body) < size:
        for event in content:
            body += event
    return bytes(body) + b"".join(tail)


def mock_client(body: bytes) -> httpx.AsyncClient:
    def handler(request: httpx.Request) -> httpx.Response:
        pieces = [body[i : i + 65536] for i in range(0, len(body), 65536)]
        return httpx.Response(
            200, stream=httpx.ByteStream(b"".join(pieces)),
            headers={"content-type": "text/event-stream"},
        )  # fmt: skip

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


async def adapter_parse(client: httpx.AsyncClient, config: ModelConfig) -> tuple[float, int]:
    provider = OpenAIProvider(config, client=client)
    t0 = time.perf_counter()
    text = 0
    async for chunk in provider.stream(REQUEST):
        if isinstance(chunk, Completed):
            text = len(chunk.response.text)
    return time.perf_counter() - t0, text


async def bare_parse(client: httpx.AsyncClient, url: str) -> tuple[float, int]:
    t0 = time.perf_counter()
    text = 0
    async with client.stream("POST", url, json={"stream": True}) as response:
        async for line in response.aiter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                payload = json.loads(line[6:])
                for choice in payload.get("choices") or ():
                    text += len(choice["delta"].get("content") or "")
    return time.perf_counter() - t0, text


async def parse_bench(size: int, runs: int) -> dict[str, float]:
    body = big_stream(size)
    config = ModelConfig(provider="openai", name="gpt-4o", base_url="http://bench/v1")
    adapter_times: list[float] = []
    bare_times: list[float] = []
    async with mock_client(body) as client:
        for _ in range(runs):  # interleaved, so drift hits both alike
            seconds, adapter_text = await adapter_parse(client, config)
            adapter_times.append(seconds)
            seconds, bare_text = await bare_parse(client, "http://bench/v1/chat/completions")
            bare_times.append(seconds)
    assert adapter_text == bare_text, (adapter_text, bare_text)  # both read the same stream
    mb = len(body) / 1e6
    adapter = statistics.median(adapter_times)
    bare = statistics.median(bare_times)
    return {"mb": mb, "adapter_mb_s": mb / adapter, "bare_mb_s": mb / bare, "ratio": bare / adapter}


async def ttft_bench(runs: int) -> dict[str, float]:
    body = response_bytes(RECORDING)
    adapter_ms: list[float] = []
    raw_ms: list[float] = []
    with LoopbackServer() as server:
        config = ModelConfig(provider="openai", name="gpt-4o", base_url=server.base_url)
        url = server.base_url + "/chat/completions"
        async with httpx.AsyncClient() as client:
            provider = OpenAIProvider(config, client=client)
            for i in range(runs + 3):  # the first rounds warm the connection and imports
                server.queue(
                    sse_reply(body, chunk_size=len(body)), sse_reply(body, chunk_size=len(body))
                )
                t0 = time.perf_counter()
                stream = provider.stream(REQUEST)
                async for chunk in stream:
                    if isinstance(chunk, TextChunk):
                        adapter = time.perf_counter() - t0
                        break
                await stream.aclose()  # type: ignore[attr-defined]
                t0 = time.perf_counter()
                async with client.stream("POST", url, json={"stream": True}) as response:
                    async for line in response.aiter_lines():
                        if line.startswith("data: ") and line != "data: [DONE]":
                            choices = json.loads(line[6:]).get("choices") or ()
                            if any(c["delta"].get("content") for c in choices):
                                raw = time.perf_counter() - t0
                                break
                if i >= 3:
                    adapter_ms.append(adapter * 1000)
                    raw_ms.append(raw * 1000)
    a, r = statistics.median(adapter_ms), statistics.median(raw_ms)
    return {"adapter_ms": a, "raw_ms": r, "overhead_ms": a - r}


def machine() -> str:
    return (
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores shared, "
        f"Python {platform.python_version()}, httpx {version('httpx')}, "
        f"httpx-sse {version('httpx-sse')}, load average {os.getloadavg()[0]:.1f} at the start"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, help="replace this benchmark's section in the file")
    parser.add_argument("--quick", action="store_true", help="1 MB, few runs (smoke test)")
    args = parser.parse_args()
    size, runs, ttft_runs = (1_000_000, 2, 10) if args.quick else (5_000_000, 5, 50)
    where = machine()
    parse = asyncio.run(parse_bench(size, runs))
    ttft = asyncio.run(ttft_bench(ttft_runs))
    parse_ok = parse["ratio"] >= 0.5
    ttft_ok = ttft["overhead_ms"] < 2.0
    verdict = {True: "met", False: "MISSED"}
    text = f"""{HEADING}

{dt.date.today().isoformat()} · {where}{" · --quick" if args.quick else ""}

| What | Adapter | Bare minimum | Ratio | Goal |
|---|---|---|---|---|
| Parse a {parse["mb"]:.1f} MB recorded SSE stream (median of {runs}) | {parse["adapter_mb_s"]:.1f} MB/s | {parse["bare_mb_s"]:.1f} MB/s (`aiter_lines` + `json.loads`) | {parse["ratio"]:.2f}× bare speed | ≥ 0.5× · {verdict[parse_ok]} |
| Time to first token, loopback, kept-alive (median of {ttft_runs}) | {ttft["adapter_ms"]:.2f} ms | {ttft["raw_ms"]:.2f} ms (raw httpx) | +{ttft["overhead_ms"]:.2f} ms | < 2 ms · {verdict[ttft_ok]} |

The adapter's extra work per event: SSE decoding (httpx-sse), an engine chunk (a pydantic
model) per delta, and keeping every parsed event for the step's raw record.
"""  # noqa: E501
    print(text)
    if args.write:
        write_section(args.write, HEADING, text)
    return 0 if args.quick or (parse_ok and ttft_ok) else 1


if __name__ == "__main__":
    sys.exit(main())
