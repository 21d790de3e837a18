"""Re-validation: a recorded run re-judged by other validators, no model call; flips listed."""

from __future__ import annotations

import asyncio
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest

from inspector.core.errors import ScenarioError
from inspector.core.loop import run_turn
from inspector.core.recording import scenario_of
from inspector.core.records import RunRecord
from inspector.core.revalidate import (
    Flip,
    Revalidation,
    ValidatorSet,
    matrix,
    matrix_row,
    read_validator_file,
    revalidate,
)
from inspector.core.scenario import scenario_from_dict
from inspector.providers.factory import build_provider
from inspector.reports.revalidate_text import format_result

BOLD = "**Hi Sam**, the meeting moved to 3pm."
LONG = "Hi Sam! Quick heads-up from the team: the meeting has moved to 3pm today, same room."
PLAIN = "Hi Sam, the meeting moved to 3pm."
SMS: dict[str, Any] = {
    "name": "sms",
    "prompt": {"system": "You write SMS messages.", "user": "Tell Sam."},
    "tools": [{"name": "lookup", "result": "Sam: 555"}],
    "validators": [
        {"kind": "regex_absent", "name": "no_markdown", "pattern": r"[*_]"},
        {"kind": "max_length", "max": 60},
    ],
    "script": [
        {"tool_calls": [{"name": "lookup", "arguments": {}}]},
        {"text": BOLD},
        {"text": LONG},
        {"text": PLAIN},
    ],
}


def record_of(data: dict[str, Any], base: Path = Path(".")) -> RunRecord:
    scenario = scenario_from_dict(data, source=str(base / "sms.toml"), base_dir=base)
    return asyncio.run(run_turn(scenario, build_provider(scenario)))


def recheck(record: RunRecord, file: Path | None = None) -> Revalidation:
    scenario = scenario_of(record)
    chosen = read_validator_file(file, scenario) if file else ValidatorSet.of(scenario)
    return asyncio.run(revalidate(record, scenario, chosen.compile(scenario)))


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_the_scenarios_own_validators_give_the_recorded_verdicts() -> None:
    record = record_of(SMS)
    result = recheck(record)
    assert result.run_id == record.run_id and result.scenario == "sms"
    assert result.flips == []
    assert result.outputs == 3  # the tool-call step is not a candidate
    judged = [s for s in record.steps if s.verdicts]
    assert [(v.step, v.attempt, v.validator, v.status, v.reason) for v in result.verdicts] == [
        (s.index, s.attempt, v.validator, v.status, v.reason) for s in judged for v in s.verdicts
    ]
    assert result.accepted_before == result.accepted_after == 4


def test_a_laxer_validator_flips_exactly_the_verdict_it_rejected(tmp_path: Path) -> None:
    record = record_of(SMS)
    file = write(
        tmp_path / "lax.toml",
        """
        name = "ignored: only [[validators]] is read"
        [[validators]]
        kind = "regex_absent"
        name = "no_markdown"
        pattern = "[*_]"
        [[validators]]
        kind = "max_length"
        max = 200
        """,
    )
    result = recheck(record, file)
    assert result.flips == [Flip(step=3, validator="max_length", before="fail", after="pass")]
    assert result.accepted_before == 4 and result.accepted_after == 3


def test_a_stricter_validator_flips_exactly_the_verdicts_it_now_rejects(tmp_path: Path) -> None:
    record = record_of(SMS)
    file = write(
        tmp_path / "strict.toml",
        """
        [[validators]]
        kind = "regex_absent"
        name = "no_markdown"
        pattern = "[*_!,]"
        [[validators]]
        kind = "max_length"
        max = 60
        """,
    )
    result = recheck(record, file)
    assert result.flips == [
        Flip(step=3, validator="no_markdown", before="pass", after="fail"),
        Flip(step=4, validator="no_markdown", before="pass", after="fail"),
    ]
    assert result.accepted_before == 4 and result.accepted_after is None


def test_validators_added_or_dropped_are_new_or_dropped_verdicts_not_flips(
    tmp_path: Path,
) -> None:
    record = record_of(SMS)
    file = write(
        tmp_path / "other.toml",
        """
        [[validators]]
        kind = "max_length"
        max = 60
        [[validators]]
        kind = "regex_present"
        name = "names_sam"
        pattern = "Sam"
        """,
    )
    result = recheck(record, file)
    # names_sam passes everywhere (it judged nothing before); no_markdown judges nothing now.
    # Neither changed its mind about a step: no flip.
    assert result.flips == []
    assert [(f.step, f.validator, f.before, f.after) for f in result.new_verdicts] == [
        (2, "names_sam", None, "pass"),
        (3, "names_sam", None, "pass"),
        (4, "names_sam", None, "pass"),
    ]
    assert [(f.step, f.validator, f.before, f.after) for f in result.dropped_verdicts] == [
        (2, "no_markdown", "fail", None),
        (3, "no_markdown", "pass", None),
        (4, "no_markdown", "pass", None),
    ]
    assert {f.kind for f in result.new_verdicts} == {"new"}
    assert {f.kind for f in result.dropped_verdicts} == {"dropped"}
    text = format_result(result)
    assert "no verdict flips" in text
    assert "3 new verdict(s), from validators that did not judge these steps before:" in text
    assert "  #2 names_sam: pass" in text
    assert "3 dropped verdict(s), from validators no longer run:" in text


VALIDATORS_PY = """
    def short(output, ctx):
        return len(output) <= 60

    def check_polite(output, ctx):
        return None
"""


def _python_scenario(tmp_path: Path) -> dict[str, Any]:
    write(tmp_path / "validators.py", VALIDATORS_PY)
    return {
        **SMS,
        "validators": [
            {"kind": "python", "function": "validators.py:short"},
            {"kind": "python", "name": "polite", "function": "validators.py:check_polite"},
            {"kind": "regex_absent", "name": "no_markdown", "pattern": r"[*_]"},
        ],
    }


def test_a_python_file_replaces_the_same_named_python_validators(tmp_path: Path) -> None:
    record = record_of(_python_scenario(tmp_path), tmp_path)
    assert record.output == PLAIN
    (tmp_path / "elsewhere").mkdir()
    replacement = write(
        tmp_path / "elsewhere" / "new.py",
        """
        def short(output, ctx):  # replaces `short`: laxer
            return len(output) <= 200

        def polite(output, ctx):  # replaces the validator named `polite`
            return "Hi" in output or "say hi"

        def unrelated(output, ctx):
            raise AssertionError("not a validator of this scenario")
        """,
    )
    result = recheck(record, replacement)
    assert result.flips == [Flip(step=3, validator="short", before="fail", after="pass")]
    # The names are kept (verdicts compare), the built-in no_markdown is untouched.
    assert [(v.validator, v.status) for v in result.verdicts if v.step == 2] == [
        ("short", "pass"),
        ("polite", "pass"),
        ("no_markdown", "fail"),
    ]
    assert result.accepted_after == 3


def test_a_python_replacement_can_reject(tmp_path: Path) -> None:
    record = record_of(_python_scenario(tmp_path), tmp_path)
    replacement = write(
        tmp_path / "strict.py",
        """
        def check_polite(output, ctx):  # the function name works too
            return "3pm" in output and "moved" in output and "Sam," in output or "be polite"
        """,
    )
    result = recheck(record, replacement)
    # PLAIN has "Sam,"; the bold and the long drafts do not.
    assert result.flips == [
        Flip(step=2, validator="polite", before="pass", after="fail"),
        Flip(step=3, validator="polite", before="pass", after="fail"),
    ]
    polite = next(v for v in result.verdicts if v.step == 3 and v.validator == "polite")
    assert polite.reason == "be polite" and polite.feedback == "be polite"


def test_an_edited_validators_file_is_read_afresh(tmp_path: Path) -> None:
    record = record_of(_python_scenario(tmp_path), tmp_path)
    path = write(tmp_path / "validators.py", VALIDATORS_PY.replace("<= 60", "<= 10"))
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # a newer file, surely
    result = recheck(record)
    assert result.flips == [  # step 3 (the long draft) failed already
        Flip(step=2, validator="short", before="pass", after="fail"),
        Flip(step=4, validator="short", before="pass", after="fail"),
    ]


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("bad.py", "def short(output, ctx)\n    return True\n", "bad.py: bad.py:1: syntax error"),
        ("none.py", "def other(output, ctx):\n    return True\n", "none.py: no function replaces"),
        ("raises.py", "raise RuntimeError('boom')\n", "raises.py: raises.py raised on import"),
        ("bad.toml", "[[validators]\n", "bad.toml: not valid TOML"),
        ("empty.toml", "name = 'x'\n", "empty.toml: validators: no [[validators]] list"),
        (
            "kind.toml",
            "[[validators]]\nkind = 'nope'\n",
            "kind.toml: validators[0]: Input tag 'nope' found using 'kind' does not match",
        ),
        (
            "regex.toml",
            "[[validators]]\nkind = 'regex_absent'\npattern = '('\n",
            "regex.toml: validators[0].pattern: bad regular expression '('",
        ),
        ("notes.txt", "hello", "notes.txt: expected a .toml file with [[validators]] or a .py"),
    ],
)
def test_a_broken_validator_file_is_a_one_line_error(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    record = record_of(_python_scenario(tmp_path), tmp_path)
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScenarioError) as caught:
        recheck(record, path)
    line = str(caught.value)
    assert message in line, line
    assert "\n" not in line


def test_a_missing_file(tmp_path: Path) -> None:
    record = record_of(SMS)
    with pytest.raises(ScenarioError, match=r"gone\.toml: cannot read"):
        recheck(record, tmp_path / "gone.toml")


def test_output_that_fails_the_schema_keeps_its_verdict(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"body": {"type": "string"}}, "required": ["body"]}
    data = {
        "name": "structured",
        "prompt": {"user": "Tell Sam."},
        "output": {"schema": schema},
        "validators": [{"kind": "max_length", "field": "body", "max": 10}],
        "script": [{"final": {"text": "wrong key"}}, {"final": {"body": "Hi Sam, 3pm."}}],
    }
    record = record_of(data)
    file = write(tmp_path / "lax.toml", "[[validators]]\nkind='max_length'\nfield='body'\nmax=20\n")
    result = recheck(record, file)
    assert [(v.step, v.validator, v.status) for v in result.verdicts] == [
        (1, "output", "fail"),  # user validators never see output that misses the schema
        (2, "max_length", "pass"),
    ]
    assert result.flips == [Flip(step=2, validator="max_length", before="fail", after="pass")]
    assert result.accepted_after == 2 and result.accepted_before is None


def test_every_step_validators_rejudge_tool_call_steps(tmp_path: Path) -> None:
    record = record_of(SMS)
    file = write(
        tmp_path / "tools.toml",
        """
        [[validators]]
        kind = "calls_tool"
        tool = "lookup"
        when = "every_step"
        """,
    )
    result = recheck(record, file)
    assert [(v.step, v.status) for v in result.verdicts] == [
        (1, "pass"),  # the tool-call step is judged: its pending call counts
        (2, "pass"),
        (3, "pass"),
        (4, "pass"),
    ]
    assert result.outputs == 3 and result.accepted_after == 2


def test_refusals_empty_replies_and_failed_calls_are_not_rejudged() -> None:
    data = {
        **SMS,
        "policy": {"on_refusal": "retry", "max_attempts": 4},
        "script": [{"refusal": "No."}, {"empty": True}, {"text": "Hi", "error": "down"}],
    }
    record = record_of(data)
    assert [s.status for s in record.steps] == ["failed_validation", "empty", "error"]
    result = recheck(record)
    assert result.verdicts == [] and result.flips == [] and result.outputs == 0


def test_the_matrix_has_a_row_per_run_and_a_column_per_validator(tmp_path: Path) -> None:
    first = record_of(SMS)
    second = record_of({**SMS, "script": [{"text": PLAIN}]})
    file = write(
        tmp_path / "v.toml",
        "[[validators]]\nkind='max_length'\nmax=200\n[[validators]]\nkind='non_empty'\n",
    )
    rows = [matrix_row(r, recheck(r, file)) for r in (first, second)]
    table = matrix("sms", rows)
    assert table.validators == ["max_length", "non_empty"]
    assert table.rows[0].model_dump() == {
        "run_id": first.run_id,
        "started_at": first.started_at,
        "status": "succeeded",
        "passed_before": True,
        "passed_after": True,
        "accepted_after": 2,
        "cells": {"max_length": ["pass", "pass", "pass"], "non_empty": ["pass", "pass", "pass"]},
        # max_length fail→pass on step 3 (no_markdown gone and non_empty new: not flips)
        "flips": 1,
        "error": None,
    }
    assert table.rows[1].accepted_after == 1 and table.rows[1].cells["max_length"] == ["pass"]
