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
    assert (record.status, record.termination) == ("failed", "validator_exhausted")


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
