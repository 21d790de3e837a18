"""A secrets scan: credentials written into a scenario's ``[model]`` headers, params and URL reach
the server, and nowhere else — not the store's bytes, not the exports, not stderr. Header
values are secret unless the scenario declares them safe (``core.credentials``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.core.credentials import is_secret_name, redact_url
from tests.providers.loopback import LoopbackServer, json_reply, sse_reply

SECRETS = {
    "Ocp-Apim-Subscription-Key": "azure-sub-4f1c9a77e2",
    "PRIVATE-TOKEN": "glpat-9ZxQ7wLk3Vb",
    "X-Custom-Auth": "custom-auth-51d0e3",
    "X-Team": "team-undeclared-8c2b",  # no credential-like name, not declared safe
}
PARAM_KEY = "param-key-7e6d5c"
URL_PASSWORD = "url-pass-0a9b8c"
SAFE_VALUE = "build-2026-11-25"


def completion(text: str) -> dict[str, object]:
    return {
        "id": "c1",
        "object": "chat.completion",
        "model": "m",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2},
    }


@pytest.fixture
def scenario(tmp_path: Path) -> tuple[Path, LoopbackServer]:
    server = LoopbackServer().start()
    headers = ", ".join(f'"{k}" = "{v}"' for k, v in SECRETS.items())
    base = server.base_url.replace("http://", f"http://user:{URL_PASSWORD}@")
    path = tmp_path / "secrets.toml"
    path.write_text(
        'name = "secrets"\n'
        "[model]\n"
        'provider = "openai"\nname = "m"\nstream = false\n'
        f'base_url = "{base}"\n'
        f'headers = {{ {headers}, "X-Build" = "{SAFE_VALUE}" }}\n'
        'safe_headers = ["x-build"]\n'
        f'params = {{ key = "{PARAM_KEY}", "api-version" = "1" }}\n'
        '[prompt]\nuser = "hi"\n'
        '[[validators]]\nkind = "max_length"\nmax = 3\n'
        "[policy]\nmax_attempts = 2\n"
    )
    return path, server


def test_scenario_credentials_reach_the_server_and_nothing_else(
    scenario: tuple[Path, LoopbackServer],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path, server = scenario
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-" + "k" * 24)
    db = tmp_path / "runs.sqlite3"
    try:
        server.queue(json_reply(completion("far too long")), json_reply(completion("ok")))
        assert main(["run", str(path), "--db", str(db), "--json"]) == 0
        run_id = json.loads(capsys.readouterr().out)["run_id"]
        received = server.received[0]
    finally:
        server.stop()
    sent = {k.lower(): v for k, v in received.headers.items()}
    for name, value in SECRETS.items():
        assert sent[name.lower()] == value  # the run used the real values
    assert f"key={PARAM_KEY}" in received.path

    html, jsonl = tmp_path / "r.html", tmp_path / "r.jsonl"
    assert main(["export", run_id, "--format", "html", "--out", str(html), "--db", str(db)]) == 0
    assert main(["export", run_id, "--out", str(jsonl), "--db", str(db)]) == 0
    assert main(["runs", "--db", str(db), "--json"]) == 0
    captured = capsys.readouterr()

    places = {
        "store": b"".join(p.read_bytes() for p in tmp_path.glob("runs.sqlite3*")),
        "html": html.read_bytes(),
        "jsonl": jsonl.read_bytes(),
        "output": (captured.out + captured.err).encode(),
    }
    for secret in [*SECRETS.values(), PARAM_KEY, URL_PASSWORD]:
        for where, data in places.items():
            assert secret.encode() not in data, f"{secret} leaked into the {where}"
    assert SAFE_VALUE.encode() in places["store"]  # declared safe: kept as it ran
    assert SAFE_VALUE.encode() in places["jsonl"]


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("X-Api-Key", True),
        ("Ocp-Apim-Subscription-Key", True),
        ("PRIVATE-TOKEN", True),
        ("X-Custom-Auth", True),
        ("key", True),
        ("apiKey", True),
        ("sig", True),
        ("max_tokens", False),
        ("anthropic-version", False),
        ("X-Build", False),
        ("monkey", False),
    ],
)
def test_the_name_rule(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


def test_url_secrets() -> None:
    assert redact_url("https://u:PASS@h/v1?key=K&api-version=1") == (
        "https://u:[redacted]@h/v1?key=[redacted]&api-version=1"
    )
    assert redact_url("https://h/v1?api-version=1") == "https://h/v1?api-version=1"


STREAMED = "pw-stream-3f9a7c51"


def _chunk(delta: dict[str, object], finish: str | None = None) -> str:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return "data: " + json.dumps({"id": "c1", "model": "m", "choices": [choice]}) + "\n\n"


def _split_tool_call() -> str:
    """A tool call whose ``password`` argument the stream cuts in three."""
    parts = ['{"q": "x", "pass', f'word": "{STREAMED[:7]}', f'{STREAMED[7:]}"}}']
    first = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "login"}}
    chunks = [_chunk({"role": "assistant", "tool_calls": [first]})]
    chunks += [
        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": part}}]}) for part in parts
    ]
    return "".join([*chunks, _chunk({}, "tool_calls"), "data: [DONE]\n\n"])


def test_a_credential_argument_split_by_the_stream_leaves_in_no_export(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model streams a tool call whose ``password`` argument arrives in pieces: each
    export redacts it in the message, in the wire body re-sent with the next request (its
    arguments a JSON text), in the raw stream's events and in the delta lines."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-" + "k" * 24)
    path = tmp_path / "login.toml"
    with LoopbackServer() as server:
        path.write_text(
            'name = "login"\n[model]\nprovider = "openai"\nname = "m"\nstream = true\n'
            f'base_url = "{server.base_url}"\n[prompt]\nuser = "log in"\n'
            '[[tools]]\nname = "login"\ndescription = "d"\nresult = "ok"\n'
            'parameters = { type = "object", properties = { q = { type = "string" } } }\n'
        )
        done = _chunk({"role": "assistant", "content": "in"}, "stop") + "data: [DONE]\n\n"
        server.queue(sse_reply(_split_tool_call()), sse_reply(done))
        db = tmp_path / "runs.sqlite3"
        assert main(["run", str(path), "--db", str(db), "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    for fmt in ("jsonl", "html", "otel"):
        out = tmp_path / f"r.{fmt}"
        assert main(["export", run_id, "--format", fmt, "--out", str(out), "--db", str(db)]) == 0
        data = out.read_text(encoding="utf-8")
        for piece in (STREAMED[:7], STREAMED[7:]):
            assert piece not in data, f"{piece} leaked into the {fmt} export"
    jsonl = (tmp_path / "r.jsonl").read_text(encoding="utf-8")
    assert "[redacted]" in jsonl and '\\"q\\": \\"x\\"' in jsonl  # the rest kept as streamed


NAMED = "pw-named-8d2e61b4"


def _named(name: str, data: dict[str, object]) -> str:
    return f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n"


def _split_named_deltas() -> str:
    """A final text answer in Chat Completions chunks, and named Responses-API-style events
    streaming a function call whose ``password`` argument they cut in three (the OpenAI
    provider records a named event as ``{"event": NAME, "data": TEXT}``), interleaved with
    another item's text deltas."""
    delta = "response.function_call_arguments.delta"
    text = "response.output_text.delta"
    parts = ['{"q": "x", "pass', f'word": "{NAMED[:6]}', NAMED[6:12], f'{NAMED[12:]}"}}']
    ids = {"item_id": "fc_1", "output_index": 1}
    events = [_named("response.output_item.added", {"output_index": 1, "item": {"id": "fc_1"}})]
    for n, part in enumerate(parts):
        events.append(_named(delta, {**ids, "delta": part}))
        words = {"item_id": "msg_0", "output_index": 0, "content_index": 0, "delta": f" w{n}"}
        events.append(_named(text, words))
    answer = _chunk({"role": "assistant", "content": "done"}, "stop")
    return "".join([*events, answer, "data: [DONE]\n\n"])


def test_a_credential_split_across_named_stream_events_leaves_in_no_export(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-" + "k" * 24)
    path = tmp_path / "named.toml"
    with LoopbackServer() as server:
        path.write_text(
            'name = "named"\n[model]\nprovider = "openai"\nname = "m"\nstream = true\n'
            f'base_url = "{server.base_url}"\n[prompt]\nuser = "log in"\n'
        )
        server.queue(sse_reply(_split_named_deltas()))
        db = tmp_path / "runs.sqlite3"
        assert main(["run", str(path), "--db", str(db), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    events = record["steps"][0]["raw"]["response"]["events"]
    assert {"event": "response.function_call_arguments.delta"}.items() <= events[1].items()
    for fmt in ("jsonl", "html"):
        out = tmp_path / f"r.{fmt}"
        assert (
            main(["export", record["run_id"], "--format", fmt, "--out", str(out), "--db", str(db)])
            == 0
        )
        data = out.read_text(encoding="utf-8")
        for piece in (NAMED[:6], NAMED[6:12], NAMED[12:]):
            assert piece not in data, f"{piece} leaked into the {fmt} export"
        assert "[redacted]" in data and "w2" in data  # the other item's deltas as streamed
