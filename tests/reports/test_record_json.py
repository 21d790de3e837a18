"""``--json``'s record written in chunks with each message's text made once is byte for byte
``json.dumps(record.model_dump(mode="json"), indent=2, ensure_ascii=False)``."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import pytest

from inspector.core.events import fan_out
from inspector.core.loop import Turn, run_turn
from inspector.core.records import RunRecord
from inspector.core.scenario import scenario_from_dict
from inspector.providers.factory import build_provider
from inspector.providers.scripted import ScriptedProvider
from inspector.reports.record_json import CHUNK, write_json, write_record_json
from inspector.resources import demo_names, resolve_scenario
from inspector.store import Store
from tests.reports.exports_with_secrets import RECORDS


def _expected(record: RunRecord) -> str:
    return json.dumps(record.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"


def _written(record: RunRecord) -> str:
    out = io.StringIO()
    write_record_json(record, out)
    return out.getvalue()


@pytest.mark.parametrize("name", [n for n in demo_names() if n != "local-model"])
def test_each_demo_record_is_written_as_json_dumps_writes_it(name: str) -> None:
    scenario = resolve_scenario(f"demo:{name}")
    record = asyncio.run(run_turn(scenario, build_provider(scenario), lambda _: None))
    assert _written(record) == _expected(record)


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_records_with_raw_bodies_and_secrets_are_written_the_same(name: str) -> None:
    record = RECORDS[name]()
    assert _written(record) == _expected(record)


async def test_a_loaded_growing_history_run_shares_its_messages_and_writes_the_same(
    tmp_path: Path,
) -> None:
    calls = [
        {"tool_calls": [{"name": "lookup", "arguments": {"q": f'é\n"{n}" \u2028', "n": n}}]}
        for n in range(12)
    ]
    data = {
        "name": "history",
        "model": {"provider": "scripted", "name": "m"},
        "prompt": {"system": "Ünïcode\tsystem", "user": "line one\nline two"},
        "tools": [{"name": "lookup", "description": "d", "result": "r\u00e9sultat"}],
        "policy": {"max_steps": 20},
        "script": [*calls, {"text": "done: ✓"}],
    }
    source = scenario_from_dict(data, source="s.toml", base_dir=tmp_path)
    with Store.open(tmp_path / "runs.sqlite3") as store:
        turn = Turn(source, ScriptedProvider(source.script), fan_out(store.recorder()))
        run_id = (await turn.run()).run_id
        record = store.load(run_id)
    last, before = record.steps[-1].request.messages, record.steps[-2].request.messages
    assert last[1] is before[1]  # shared: each text made once
    assert _written(record) == _expected(record)


class _CountingOut(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def write(self, text: str) -> int:
        self.calls += 1
        return super().write(text)


def test_json_goes_out_in_few_writes() -> None:
    """``json.dump`` writes every token with a call of its own: a system call each where the
    stream is unbuffered (``PYTHONUNBUFFERED``)."""
    value = {"rows": [{"n": n, "text": f"row {n}", "more": [n, None, True]} for n in range(5000)]}
    out = _CountingOut()
    write_json(value, out)
    text = out.getvalue()
    assert text == json.dumps(value, indent=2, ensure_ascii=False) + "\n"
    assert out.calls <= len(text) // CHUNK + 2
