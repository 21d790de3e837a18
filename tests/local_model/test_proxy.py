"""The recording proxy between the openai SDK and the real local model (``make test-local``):
a streamed and a plain call reach the client as the server sent them and are recorded."""

from __future__ import annotations

from pathlib import Path

import openai
import pytest

from inspector.core.events import fan_out
from inspector.proxy import RecordingProxy, Upstreams
from inspector.proxy.recording import StoreSink
from inspector.store import Store

pytestmark = pytest.mark.local_model


async def test_the_openai_sdk_through_the_proxy_to_the_local_model(
    plain_url: str, tmp_path: Path
) -> None:
    db = tmp_path / "runs.sqlite3"
    sink = StoreSink(db)
    proxy = RecordingProxy(
        fan_out(sink), port=0, upstreams=Upstreams(plain_url, plain_url), timeout_s=120
    )
    await proxy.start()
    try:
        async with openai.AsyncOpenAI(
            base_url=f"{proxy.url}/v1", api_key="sk-local-unused-0000", max_retries=0
        ) as client:
            messages = [{"role": "user", "content": "Say hello."}]
            plain = await client.chat.completions.create(
                model="gemma",
                messages=messages,
                max_tokens=16,  # type: ignore[arg-type]
            )
            stream = await client.chat.completions.create(
                model="gemma",
                messages=messages,
                max_tokens=16,
                stream=True,  # type: ignore[arg-type]
            )
            streamed = "".join(
                [c.choices[0].delta.content or "" async for c in stream if c.choices]
            )
    finally:
        await proxy.stop()
        sink.close()
    with Store.open(db) as store:
        records = [store.load(s.run_id) for s in reversed(store.runs())]
    texts = [r.steps[0].response.text for r in records if r.steps[0].response]
    assert texts == [plain.choices[0].message.content or "", streamed]
    assert all(r.via == "proxy" and r.steps[0].status in ("success", "empty") for r in records)
