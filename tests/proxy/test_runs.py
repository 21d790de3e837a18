"""Runs as the proxy records them: grouped by header, ended when idle, judged live by
``--validators`` and re-judged later like any run; keys from the upstream's settings when the
client sends none; other paths forwarded (a POST kept raw)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx

from inspector.commands.revalidate import recheck
from inspector.core.events import RunFinished, VerdictsReady
from inspector.proxy import RUN_HEADER, Upstreams, load_validators
from inspector.store import Store
from tests.providers.loopback import LoopbackServer, Reply, json_reply
from tests.proxy.conftest import KEY, OPENAI, Proxied, fixture_reply, start_proxied, until
from tests.proxy.test_faults import CHAT, HEADERS

JOKE = "Why did Opentelemetry break up with Tracing? Because it couldn't handle the baggage!"


async def test_calls_with_one_run_header_are_one_run(proxied: Proxied) -> None:
    for _ in range(3):
        proxied.upstream.queue(fixture_reply(OPENAI, "text-basic-gpt35")[0])
    async with httpx.AsyncClient(base_url=proxied.openai_url, headers=HEADERS) as client:
        for text, key in (("one", "task-1"), ("two", "task-1"), ("three", "task-2")):
            body = {"model": "m", "messages": [{"role": "user", "content": text}]}
            await client.post("/chat/completions", json=body, headers={RUN_HEADER: key})
    assert all(RUN_HEADER not in r.headers for r in proxied.upstream.received)

    first, second = await proxied.records()
    assert [s.request.messages[0].content for s in first.steps] == ["one", "two"]
    assert [s.request.messages[0].content for s in second.steps] == ["three"]


def listed(db: Path) -> list[str]:
    """The runs' statuses as another connection sees them (a window in another process)."""
    with Store.open(db) as store:
        return [s.status for s in store.runs()]


async def test_an_open_run_is_listed_while_it_records(proxied: Proxied) -> None:
    proxied.upstream.queue(fixture_reply(OPENAI, "text-basic-gpt35")[0])
    async with httpx.AsyncClient(base_url=proxied.openai_url, headers=HEADERS) as client:
        await client.post("/chat/completions", json=CHAT)
    await until(lambda: listed(proxied.db) == ["running"], "the open run is in the store")
    await proxied.stop()
    assert listed(proxied.db) == ["succeeded"]


async def test_an_idle_run_ends(upstream: LoopbackServer, tmp_path: Path) -> None:
    harness = start_proxied(upstream, tmp_path / "runs.sqlite3", idle_timeout_s=0.2)
    await harness.proxy.start()
    upstream.queue(fixture_reply(OPENAI, "text-basic-gpt35")[0])
    async with httpx.AsyncClient(base_url=harness.openai_url, headers=HEADERS) as client:
        await client.post("/chat/completions", json=CHAT)
    await until(lambda: any(isinstance(e, RunFinished) for e in harness.events), "idle end")
    assert not harness.proxy.book.runs
    await until(lambda: listed(harness.db) == ["succeeded"], "the writer thread wrote the end")
    (record,) = await harness.records()
    assert (record.status, record.steps[0].status) == ("succeeded", "success")


async def test_live_verdicts_show_on_the_step_and_rejudge_offline(
    upstream: LoopbackServer, tmp_path: Path
) -> None:
    strict = tmp_path / "strict.toml"
    strict.write_text(
        '[[validators]]\nkind = "max_length"\nmax = 40\nfeedback = "Shorter."\n'
        '[[validators]]\nname = "no_question"\nkind = "python"\n'
        'function = "checks.py:no_question"\n'
    )
    (tmp_path / "checks.py").write_text(
        "def no_question(output, ctx):\n    return '?' not in output or 'a question'\n"
    )
    harness = start_proxied(upstream, tmp_path / "runs.sqlite3", validators=load_validators(strict))
    await harness.proxy.start()
    upstream.queue(fixture_reply(OPENAI, "text-basic-gpt35")[0])
    async with httpx.AsyncClient(base_url=harness.openai_url, headers=HEADERS) as client:
        response = await client.post("/chat/completions", json=CHAT)
    assert response.json()["choices"][0]["message"]["content"] == JOKE
    await until(lambda: any(isinstance(e, VerdictsReady) for e in harness.events), "live")
    live = next(e for e in harness.events if isinstance(e, VerdictsReady))
    assert [(v.validator, v.status) for v in live.verdicts] == [
        ("max_length", "fail"),
        ("no_question", "fail"),
    ]

    (record,) = await harness.records()
    (step,) = record.steps
    assert step.status == "failed_validation"
    assert [v.status for v in step.verdicts] == ["fail", "fail"]
    assert (record.status, record.termination) == ("failed", "validator_exhausted")

    lenient = tmp_path / "lenient.py"
    lenient.write_text("def no_question(output, ctx):\n    return True\n")
    # What `agent-inspector revalidate RUN_ID --validators lenient.py` runs (its own loop).
    result = await asyncio.to_thread(recheck, record, lenient)
    assert [(f.validator, f.before, f.after) for f in result.flips] == [
        ("no_question", "fail", "pass")
    ]


async def test_a_python_validators_file_judges_with_its_public_functions(
    upstream: LoopbackServer, tmp_path: Path
) -> None:
    checks = tmp_path / "checks.py"
    checks.write_text(
        "import re\n\ndef _helper():\n    pass\n\n"
        "def short(output, ctx):\n    return len(output) < 500\n\n"
        "def plain(output, ctx):\n    return not re.search('[*#]', output)\n"
    )
    harness = start_proxied(upstream, tmp_path / "runs.sqlite3", validators=load_validators(checks))
    await harness.proxy.start()
    upstream.queue(fixture_reply(OPENAI, "text-basic-gpt35")[0])
    async with httpx.AsyncClient(base_url=harness.openai_url, headers=HEADERS) as client:
        await client.post("/chat/completions", json=CHAT)
    (record,) = await harness.records()
    assert [(v.validator, v.status) for v in record.steps[0].verdicts] == [
        ("short", "pass"),
        ("plain", "pass"),
    ]
    assert record.status == "succeeded"


async def test_without_a_client_key_the_upstreams_key_is_sent_and_never_stored(
    upstream: LoopbackServer, tmp_path: Path
) -> None:
    harness = start_proxied(upstream, tmp_path / "runs.sqlite3")
    env_key = "sk-from-the-environment-0123456789"
    harness.proxy.upstreams = Upstreams(upstream.base_url, upstream.base_url, {"openai": env_key})
    await harness.proxy.start()
    for _ in range(2):
        upstream.queue(fixture_reply(OPENAI, "text-basic-gpt35")[0])
    async with httpx.AsyncClient(base_url=harness.openai_url) as client:
        await client.post("/chat/completions", json=CHAT)
        await client.post("/chat/completions", json=CHAT, headers=HEADERS)
    without, with_key = upstream.received
    assert without.headers["authorization"] == f"Bearer {env_key}"
    assert with_key.headers["authorization"] == f"Bearer {KEY}"
    await harness.records()
    stored = harness.stored_bytes()
    assert env_key[3:].encode() not in stored and KEY[3:].encode() not in stored


async def test_other_paths_are_forwarded_and_a_post_is_kept_raw(proxied: Proxied) -> None:
    models = {"object": "list", "data": [{"id": "gpt-4o", "object": "model"}]}
    responses_body = {"id": "resp_1", "object": "response", "output": []}
    proxied.upstream.queue(json_reply(models), json_reply(responses_body))
    async with httpx.AsyncClient(base_url=proxied.openai_url, headers=HEADERS) as client:
        listed = await client.get("/models?limit=5")
        created = await client.post("/responses", json={"model": "gpt-4o", "input": "hi"})
    assert listed.json() == models and created.json() == responses_body
    get, post = proxied.upstream.received
    assert (get.method, get.path) == ("GET", "/v1/models?limit=5")
    assert post.path == "/v1/responses"

    (record,) = await proxied.records()  # the GET is no model call: not recorded
    (step,) = record.steps
    assert step.status == "success"
    assert step.raw is not None
    assert step.raw.request["body"] == {"model": "gpt-4o", "input": "hi"}
    assert step.raw.response["body"] == responses_body


async def test_stopping_ends_open_runs_and_a_held_answer_stands(proxied: Proxied) -> None:
    proxied.upstream.queue(fixture_reply(OPENAI, "text-basic-gpt35")[0])
    async with httpx.AsyncClient(base_url=proxied.openai_url, headers=HEADERS) as client:
        await client.post("/chat/completions", json=CHAT)
    await asyncio.sleep(0)
    assert proxied.proxy.book.runs  # open: the client may still come back
    (record,) = await proxied.records()
    assert (record.status, record.steps[0].status, record.output) == ("succeeded", "success", JOKE)


def padded_stream(name: str, delay_s: float) -> tuple[Reply, bytes]:
    """A recorded stream whose upstream keeps the connection ``delay_s`` after its last event
    (SSE comments follow): the client has its whole reply before the proxy has the end."""
    sse = (OPENAI / f"{name}.response.sse").read_bytes()
    padding = b": still here\n\n" * (len(sse) // 14 + 1)
    reply = Reply(
        body=sse + padding,
        content_type="text/event-stream",
        chunk_size=len(sse),
        chunk_delay_s=delay_s,
    )
    return reply, sse


async def test_a_client_leaving_after_the_last_event_got_its_reply(proxied: Proxied) -> None:
    reply, _ = padded_stream("stream-text-usage-gpt4o", 0.3)
    proxied.upstream.queue(reply)
    async with httpx.AsyncClient(base_url=proxied.openai_url, headers=HEADERS) as client:
        body = {**CHAT, "stream": True}
        async with client.stream("POST", "/chat/completions", json=body) as response:
            async for chunk in response.aiter_raw():
                if b"[DONE]" in chunk:
                    break  # as the openai SDK does
    (record,) = await proxied.records()
    assert (record.status, record.steps[0].status) == ("succeeded", "success")


async def test_a_continuation_sent_before_the_upstream_stream_ends_joins_the_run(
    proxied: Proxied,
) -> None:
    first, _ = padded_stream("stream-tool-call-usage-gpt4o-mini", 0.3)
    proxied.upstream.queue(first, fixture_reply(OPENAI, "text-basic-gpt35")[0])
    asked = {"model": "m", "messages": [{"role": "user", "content": "What is 1231 * 2331?"}]}
    stream = {**asked, "stream": True}
    async with (
        httpx.AsyncClient(base_url=proxied.openai_url, headers=HEADERS) as client,
        client.stream("POST", "/chat/completions", json=stream) as s,
    ):
        received = b""
        async for chunk in s.aiter_raw():
            received += chunk
            if b"[DONE]" in received:
                break
        events = [json.loads(line[6:]) for line in received.split(b"\n")
                  if line.startswith(b"data: {")]  # fmt: skip
        call = next(e["choices"][0]["delta"]["tool_calls"][0] for e in events
                    if e["choices"] and e["choices"][0]["delta"].get("tool_calls"))  # fmt: skip
        arguments = "".join(
            tc["function"].get("arguments", "")
            for e in events
            if e["choices"]
            for tc in e["choices"][0]["delta"].get("tool_calls") or []
        )
        follow = [
            *asked["messages"],
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": call["id"], "type": "function",
                 "function": {"name": "multiply", "arguments": arguments}}]},
            {"role": "tool", "tool_call_id": call["id"], "content": "2869461"},
        ]  # fmt: skip
        # Sent while the first reply's stream is still open upstream.
        await client.post("/chat/completions", json={"model": "m", "messages": follow})
    (record,) = await proxied.records()
    assert [(s.index, s.attempt, s.status) for s in record.steps] == [
        (1, 1, "success"),
        (2, 1, "success"),
    ]
