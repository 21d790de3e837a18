"""User code in a turn: a returned Verdict must agree with itself and belongs to its validator
(#13 items 14, 15); feedback builders and fallback functions run in the worker too, so one that
hangs or ends its worker ends the run ``error`` naming the hook, never the process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from inspector.core.loop import run_turn
from inspector.core.records import RunRecord, Verdict
from inspector.core.scenario import scenario_from_dict
from inspector.core.validators import contradiction
from inspector.core.worker.ending import died
from inspector.providers.scripted import ScriptedProvider

HOOKS_PY = """
import os, time
from inspector.core.records import Verdict

def contradicts(output, ctx):
    return Verdict(validator="contradicts", ok=True, status="fail", reason="?")

def renamed(output, ctx):
    return Verdict(validator="someone_else", ok=False, status="fail", reason="nope")

def rejects(output, ctx):
    return "no"

def hangs(ctx):
    time.sleep(1000)

def hard_exit(ctx):
    os._exit(7)
"""


async def run(folder: Path, validator: str, policy: dict[str, Any] | None = None) -> RunRecord:
    (folder / "hooks.py").write_text(HOOKS_PY, encoding="utf-8")
    sc = scenario_from_dict(
        {
            "name": "hooks",
            "prompt": {"user": "hi"},
            "validators": [{"kind": "python", "function": f"hooks.py:{validator}"}],
            "policy": {"max_attempts": 2, "validator_timeout_s": 0.3, **(policy or {})},
            "script": [{"text": "one"}, {"text": "two"}],
        },
        source="test.toml",
        base_dir=folder,
    )
    return await run_turn(sc, ScriptedProvider(sc.script))


@pytest.mark.parametrize(
    ("ok", "status", "problem"),
    [
        (True, "pass", None),
        (False, "fail", None),
        (False, "error", None),
        (True, "fail", "returned a Verdict whose fields disagree: ok=True but status='fail'"),
        (True, "error", "returned a Verdict whose fields disagree: ok=True but status='error'"),
        (False, "pass", "returned a Verdict whose fields disagree: ok=False but status='pass'"),
    ],
)
def test_contradiction(ok: bool, status: Any, problem: str | None) -> None:
    assert contradiction(Verdict(validator="v", ok=ok, status=status)) == problem


async def test_a_contradictory_verdict_is_an_error_and_rejects(tmp_path: Path) -> None:
    record = await run(tmp_path, "contradicts")
    verdict = record.steps[0].verdicts[0]
    assert (verdict.validator, verdict.ok, verdict.status) == ("contradicts", False, "error")
    assert verdict.reason == "returned a Verdict whose fields disagree: ok=True but status='fail'"
    assert (record.status, record.termination) == ("error", "validator_error")


async def test_a_verdict_belongs_to_the_validator_that_returned_it(tmp_path: Path) -> None:
    record = await run(tmp_path, "renamed")
    assert [v.validator for s in record.steps for v in s.verdicts] == ["renamed", "renamed"]


@pytest.mark.parametrize(
    ("hook", "policy", "message"),
    [
        (
            "feedback_builder",
            {"feedback_history": "custom", "feedback_builder": "hooks.py:hangs"},
            "feedback_builder: timed out after 0.3 s",
        ),
        (
            "feedback_builder",
            {"feedback_history": "custom", "feedback_builder": "hooks.py:hard_exit"},
            f"feedback_builder: {died(7)}",
        ),
        (
            "fallback_function",
            {"on_invalid_output": "fallback", "fallback_function": "hooks.py:hangs"},
            "fallback_function: timed out after 0.3 s",
        ),
        (
            "fallback_function",
            {"on_invalid_output": "fallback", "fallback_function": "hooks.py:hard_exit"},
            f"fallback_function: {died(7)}",
        ),
    ],
)
async def test_a_hook_that_hangs_or_dies_ends_the_run_in_error(
    tmp_path: Path, hook: str, policy: dict[str, Any], message: str
) -> None:
    record = await run(tmp_path, "rejects", policy)
    assert record.status == "error"
    assert record.error is not None and record.error.message == message
    assert all(s.status != "pending" for s in record.steps)


PRINTING_PY = """
def rejects(output, ctx):
    return "no"

def builder(ctx):
    print("building after attempt", ctx.attempt)
    return ctx.default_next

def fallback(ctx):
    print("falling back")
    return "fallback text"

def broken_builder(ctx):
    print("about to break")
    raise ValueError("broken")
"""


@pytest.mark.parametrize(
    ("policy", "captured"),
    [
        (
            {"feedback_history": "custom", "feedback_builder": "hooks.py:builder"},
            ["building after attempt 1\n", None],
        ),
        (
            {"on_invalid_output": "fallback", "fallback_function": "hooks.py:fallback"},
            [None, "falling back\n"],
        ),
        (
            {"feedback_history": "custom", "feedback_builder": "hooks.py:broken_builder"},
            ["about to break\n"],
        ),
    ],
)
async def test_what_a_hook_printed_is_kept_on_the_step_it_handled(
    tmp_path: Path, policy: dict[str, Any], captured: list[str | None]
) -> None:
    (tmp_path / "hooks.py").write_text(PRINTING_PY, encoding="utf-8")
    sc = scenario_from_dict(
        {
            "name": "hooks",
            "prompt": {"user": "hi"},
            "validators": [{"kind": "python", "function": "hooks.py:rejects"}],
            "policy": {"max_attempts": 2, **policy},
            "script": [{"text": "one"}, {"text": "two"}],
        },
        source="test.toml",
        base_dir=tmp_path,
    )
    record = await run_turn(sc, ScriptedProvider(sc.script))
    assert [s.captured for s in record.steps] == captured
    dumped = record.model_dump(mode="json")
    assert ["captured" in s for s in dumped["steps"]] == [c is not None for c in captured]


async def test_captured_output_is_stored_and_read_back(tmp_path: Path) -> None:
    from inspector.store import Store

    (tmp_path / "hooks.py").write_text(
        PRINTING_PY + "\ndef lookup():\n    print('looking up')\n    return 'found'\n"
        "\ndef loud(output, ctx):\n    print('judging', output)\n    return 'no'\n",
        encoding="utf-8",
    )
    sc = scenario_from_dict(
        {
            "name": "hooks",
            "prompt": {"user": "hi"},
            "tools": [{"name": "lookup", "function": "hooks.py:lookup"}],
            "validators": [{"kind": "python", "function": "hooks.py:loud"}],
            "policy": {
                "max_attempts": 2,
                "feedback_history": "custom",
                "feedback_builder": "hooks.py:builder",
            },
            "script": [{"tool_calls": [{"name": "lookup"}]}, {"text": "one"}, {"text": "two"}],
        },
        source="test.toml",
        base_dir=tmp_path,
    )
    with Store.open(tmp_path / "runs.sqlite3") as store:
        record = await run_turn(sc, ScriptedProvider(sc.script), store.recorder())
        stored = store.load(record.run_id)
    assert stored.model_dump() == record.model_dump()
    assert stored.steps[0].tool_results[0].captured == "looking up\n"
    assert stored.steps[1].verdicts[0].captured == "judging one\n"
    assert stored.steps[1].captured == "building after attempt 1\n"
