"""`agent-inspector revalidate` as a user runs it: recorded runs re-judged from the store."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.core.events import RunStarted
from inspector.core.records import RunRecord
from inspector.store import Store

Capture = pytest.CaptureFixture[str]

SCENARIO = """
    name = "sms"
    [prompt]
    system = "You write SMS messages."
    user = "Tell Sam the meeting moved to 3pm."
    [[validators]]
    kind = "regex_absent"
    name = "no_markdown"
    pattern = "[*_]"
    [[validators]]
    kind = "python"
    function = "checks.py:short"
    [[script]]
    text = "**Hi Sam**, the meeting moved to 3pm."
    [[script]]
    text = "Hi Sam! Quick heads-up from the team: the meeting has moved to 3pm today, same room."
    [[script]]
    text = "Hi Sam, the meeting moved to 3pm."
"""
CHECKS = """
    def short(output, ctx):
        return len(output) <= 60 or "Shorter, please."
"""


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    write(tmp_path / "sms.toml", SCENARIO)
    write(tmp_path / "checks.py", CHECKS)
    return tmp_path


def record(folder: Path, capsys: Capture, *overrides: str) -> RunRecord:
    sets = [a for o in overrides for a in ("--set", o)]
    main(["run", str(folder / "sms.toml"), *sets, "--json"])
    return RunRecord.model_validate(json.loads(capsys.readouterr().out))


def json_of(capsys: Capture, *args: str) -> tuple[int, dict[str, object]]:
    code = main(["revalidate", *args, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_json_shape_and_the_recorded_verdicts(folder: Path, capsys: Capture) -> None:
    run = record(folder, capsys)
    code, data = json_of(capsys, run.run_id)
    assert code == 0
    assert list(data) == [
        "run_id",
        "verdicts",
        "flips",
        "new_verdicts",
        "dropped_verdicts",
        "scenario",
        "outputs",
        "accepted_before",
        "accepted_after",
    ]
    assert data["run_id"] == run.run_id and data["flips"] == []
    assert data["outputs"] == 3 and data["accepted_before"] == data["accepted_after"] == 3
    verdicts = data["verdicts"]
    assert isinstance(verdicts, list)
    assert verdicts[0] == {
        "validator": "no_markdown",
        "ok": False,
        "status": "fail",
        "reason": "found '*' at 0",
        "feedback": "The answer must not contain '*'.",
        "step": 1,
        "attempt": 1,
    }
    recorded = [(s.index, v.validator, v.status) for s in run.steps for v in s.verdicts]
    assert [(v["step"], v["validator"], v["status"]) for v in verdicts] == recorded


def test_a_toml_replacement_flips_verdicts(folder: Path, capsys: Capture) -> None:
    run = record(folder, capsys)
    lax = write(
        folder / "lax.toml",
        """
        [[validators]]
        kind = "regex_absent"
        name = "no_markdown"
        pattern = "[*_]"
        [[validators]]
        kind = "max_length"
        name = "short"
        max = 200
        """,
    )
    code, data = json_of(capsys, run.run_id, "--validators", str(lax))
    assert code == 0
    assert data["flips"] == [{"step": 2, "validator": "short", "before": "fail", "after": "pass"}]
    assert data["accepted_after"] == 2

    assert main(["revalidate", run.run_id[:5], "--validators", str(lax)]) == 0
    out = capsys.readouterr().out
    assert "1 flip(s):\n  #2 short: fail → pass\n" in out
    assert out.rstrip().endswith("accepted output: step 3 as recorded, step 2 now")


def test_a_python_replacement_that_rejects_everything_exits_1(
    folder: Path, capsys: Capture
) -> None:
    run = record(folder, capsys)
    strict = write(folder / "strict.py", "def short(output, ctx):\n    return 'Too long.'\n")
    code, data = json_of(capsys, run.run_id, "--validators", str(strict))
    assert code == 1
    assert data["flips"] == [
        {"step": 1, "validator": "short", "before": "pass", "after": "fail"},
        {"step": 3, "validator": "short", "before": "pass", "after": "fail"},
    ]
    assert data["accepted_after"] is None


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("broken.py", "def short(:\n", "broken.py:1: syntax error"),
        ("broken.toml", "[[validators]]\nkind = 'max_length'\n", "validators[0].max: Field requ"),
        ("other.py", "def unrelated(output, ctx):\n    pass\n", "no function replaces"),
    ],
)
def test_a_broken_validator_file_is_one_line_and_exit_2(
    folder: Path, capsys: Capture, name: str, text: str, message: str
) -> None:
    run = record(folder, capsys)
    path = write(folder / name, text)
    assert main(["revalidate", run.run_id, "--validators", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"agent-inspector: error: {path}")
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_the_matrix_of_every_run_of_a_scenario(folder: Path, capsys: Capture) -> None:
    first = record(folder, capsys)
    second = record(folder, capsys, "policy.max_attempts=1")  # fails on the first draft
    assert second.status == "failed"
    record(folder, capsys, "name=another")  # another scenario: not in the matrix
    lax = write(folder / "lax.py", "def short(output, ctx):\n    return len(output) < 100\n")

    code, data = json_of(capsys, "--scenario", "sms", "--validators", str(lax))
    assert code == 1  # the second run still has no output without markdown
    assert data["scenario"] == "sms" and data["validators"] == ["no_markdown", "short"]
    rows = data["rows"]
    assert isinstance(rows, list)
    assert [r["run_id"] for r in rows] == [second.run_id, first.run_id]  # newest first
    assert rows[0]["cells"] == {"no_markdown": ["fail"], "short": ["pass"]}
    assert rows[1]["cells"] == {"no_markdown": ["fail", "pass", "pass"], "short": ["pass"] * 3}
    assert [(r["passed_before"], r["passed_after"], r["accepted_after"]) for r in rows] == [
        (False, False, None),
        (True, True, 2),
    ]

    main(["revalidate", "--scenario", "sms", "--validators", str(lax)])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "scenario sms · 2 run(s) re-validated, no model call"
    assert lines[1].split() == [
        "run_id",
        "status",
        "no_markdown",
        "short",
        "before",
        "now",
        "flips",
    ]
    assert lines[2].split() == [second.run_id, "failed", "F", "P", "fail", "fail", "0"]
    assert lines[3].split() == [
        first.run_id,
        "succeeded",
        "FPP",
        "PPP",
        "pass",
        "pass",
        "(#2)",
        "1",
    ]


def test_a_run_whose_files_are_gone_is_a_row_error_in_the_matrix(
    folder: Path, capsys: Capture
) -> None:
    run = record(folder, capsys)
    (folder / "checks.py").unlink()
    code, data = json_of(capsys, "--scenario", "sms")
    assert code == 1
    rows = data["rows"]
    assert isinstance(rows, list) and rows[0]["run_id"] == run.run_id
    assert "validators[1].function: file not found" in str(rows[0]["error"])
    main(["revalidate", "--scenario", "sms"])
    assert "cannot re-validate: " in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        ([], 2, "revalidate: give a RUN_ID or --scenario NAME (one of them)"),
        (["abc", "--scenario", "sms"], 2, "revalidate: give a RUN_ID or --scenario NAME"),
        (["0123abcd"], 2, "no run '0123abcd' in "),
        (["--scenario", "nothing"], 2, "no recorded run of scenario 'nothing' in "),
    ],
)
def test_bad_arguments(capsys: Capture, args: list[str], code: int, message: str) -> None:
    Store.open().close()  # the store is there: the run or scenario is what is unknown
    assert main(["revalidate", *args]) == code
    err = capsys.readouterr().err
    assert err.startswith(f"agent-inspector: error: {message}") and err.count("\n") == 1


def test_a_run_still_being_recorded_is_a_row_error_in_the_matrix(
    folder: Path, capsys: Capture
) -> None:
    done = record(folder, capsys)
    with Store.open(os.environ["AGENT_INSPECTOR_DB"]) as store:
        recorder = store.recorder()  # alive: the run's status is "running"
        recorder(RunStarted.from_record(done.model_copy(update={"run_id": "0still0running"})))
        code, data = json_of(capsys, "--scenario", "sms")
    rows = data["rows"]
    assert isinstance(rows, list) and code == 1
    running = next(r for r in rows if r["run_id"] == "0still0running")
    assert running["status"] == "error" and "still being recorded" in running["error"]
