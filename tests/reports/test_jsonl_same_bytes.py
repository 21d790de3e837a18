"""The JSONL export spliced from pieces written once (``json_pieces``) is byte for byte what
the export wrote before it: each line dumped whole, then redacted whole. The fixtures were
written by the code before the change (commit 2f62441) from ``exports_with_secrets``' records;
a recorded run's events (timed, so no fixture) are compared with the line-by-line dump."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from inspector.core.events import fan_out
from inspector.core.loop import Turn
from inspector.core.scenario import scenario_from_dict
from inspector.providers.scripted import ScriptedProvider
from inspector.reports import redact
from inspector.reports.jsonl import event_line, header, jsonl_lines, read_jsonl
from inspector.reports.jsonl_requests import RequestDeltas
from inspector.reports.redact import may_hold_secrets, redacted_json
from inspector.reports.stream_secrets import with_streams_redacted
from inspector.reports.synthetic_events import events_from_record
from inspector.store import Store
from tests.reports.exports_with_secrets import OPENAI_KEY, RECORDS, TOKEN

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_the_export_is_the_bytes_written_before(name: str) -> None:
    record = RECORDS[name]()
    events = events_from_record(record)
    lines = list(jsonl_lines(record, events, synthesized=name.startswith("imported")))
    written = "".join(line + "\n" for line in lines[1:])  # the header names the version
    assert written == (FIXTURES / f"{name}.jsonl").read_text(encoding="utf-8")
    # Still one event a line, read back whole (but for what redaction changed).
    _, read = read_jsonl(lines)
    if name != "leaky-turn":
        assert [r.event for r in read] == [t.event for t in events]


def test_secrets_are_redacted_wherever_they_are_repeated() -> None:
    text = (FIXTURES / "leaky-turn.jsonl").read_text(encoding="utf-8")
    for secret in (OPENAI_KEY, TOKEN, "pp123456", "pw1234", "abc123"):
        assert secret not in text
    assert text.count("[redacted]") > 12  # every request re-sending the message with the key


def _line_by_line(record, events, synthesized=False) -> list[str]:  # type: ignore[no-untyped-def]
    """The export as it was written: each line's value dumped whole and redacted whole (the
    deltas of a stream holding a secret redacted as a stream first: ``stream_secrets``)."""
    deltas = RequestDeltas()
    out = [redacted_json(header(record, events, synthesized=synthesized))]
    return out + [
        redacted_json(event_line(timed, deltas)) for timed in with_streams_redacted(events)
    ]


def _scenario(n: int) -> dict[str, object]:
    call = {"tool_calls": [{"name": "lookup", "arguments": {"q": "x", "api_key": "hunter22"}}]}
    return {
        "name": "secrets",
        "model": {
            "provider": "scripted",
            "name": "bench",
            "stream": True,
            "base_url": "https://user:pw1234@example.com/v1?key=abc",
            "headers": {"Authorization": f"Bearer {OPENAI_KEY}", "X-Build": "7"},
            "safe_headers": ["X-Build"],
            "params": {"api_key": "pp123456"},
        },
        "prompt": {"system": "You are a research agent.", "user": f"My key is {OPENAI_KEY}."},
        "tools": [{"name": "lookup", "description": "Look it up", "result": f"Bearer {TOKEN}"}],
        "policy": {"max_steps": n + 1, "final_step": "none"},
        "script": [call] * n + [{"text": "done, with **markdown**"}],
    }


async def test_a_recorded_run_exports_as_its_lines_dumped_whole(tmp_path: Path) -> None:
    source = scenario_from_dict(_scenario(8), source="s.toml", base_dir=tmp_path)
    with Store.open(tmp_path / "runs.sqlite3") as store:
        turn = Turn(source, ScriptedProvider(source.script), fan_out(store.recorder()))
        run_id = (await turn.run()).run_id
        events = store.events(run_id)
        record = store.load(run_id)
    lines = list(jsonl_lines(record, events))
    assert lines == _line_by_line(record, events)
    kinds = {json.loads(line)["kind"] for line in lines[1:]}
    assert {"text_delta", "tool_call_delta", "tool_executed", "step_finished"} <= kinds
    assert OPENAI_KEY not in "".join(lines) and "pp123456" not in "".join(lines)
    streamed = [json.loads(line) for line in lines[1:]]
    arguments = "".join(e["arguments_delta"] for e in streamed if e["kind"] == "tool_call_delta")
    assert "hunter" not in arguments and "r22" not in arguments
    assert arguments.count('"api_key": "[redacted]"') == 8


def _flat_search(text: str) -> bool:
    """``may_hold_secrets`` as it searched before names were grouped under words."""
    low = text.lower()
    if "bearer" in low:
        return True
    for name in redact._NEEDLES:
        at = low.find(name)
        while at != -1:
            end = at + len(name)
            if redact._AFTER_NAME.match(low, end) and not low.startswith(
                redact._NOTHING_AFTER, end
            ):
                return True
            at = low.find(name, at + 1)
    return bool(re.search(r"(?<!\w)sk-|(?<=\\[nrtbf\"\\/])sk-|(?<=\\u[0-9a-f]{4})sk-", low))


def test_the_secret_search_finds_what_the_flat_search_found() -> None:
    rng = random.Random(18)
    words = [*redact._NEEDLES, "sk-", "x", '"', ":", "=", " ", "\\n", "null", "{}", "_", "A"]
    for _ in range(3000):
        text = "".join(rng.choice(words) for _ in range(rng.randint(0, 8)))
        assert may_hold_secrets(text) == _flat_search(text), text
