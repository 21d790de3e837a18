"""The `agent-inspector` command as a user runs it: exit codes, one-line errors, --set, --json."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.core.records import RunRecord

DEMOS = {
    "retry-feedback": ("succeeded", "stop"),
    "step-cap": ("succeeded", "stop"),
    "final-answer-tool": ("succeeded", "stop"),
    "empty-final": ("succeeded", "stop"),
    "invalid-output-fallback": ("fallback", "fallback"),
}


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, RunRecord]:
    code = main(["run", *args, "--json"])
    out = capsys.readouterr().out
    return code, RunRecord.model_validate(json.loads(out))


@pytest.mark.parametrize("demo", sorted(DEMOS))
def test_every_demo_runs_offline(demo: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, record = run_json(capsys, f"demo:{demo}", "--set", "name=x")
    status, termination = DEMOS[demo]
    assert (record.status, record.termination) == (status, termination)
    assert code == 0
    assert record.scenario == "x"  # the --set override reached the scenario
    assert all(s.status != "pending" for s in record.steps)


def test_json_is_the_record_dump(capsys: pytest.CaptureFixture[str]) -> None:
    main(["run", "demo:retry-feedback", "--json"])
    data = json.loads(capsys.readouterr().out)
    record = RunRecord.model_validate(data)
    assert record.model_dump(mode="json") == data
    for key in (
        "run_id",
        "scenario",
        "started_at",
        "duration_ms",
        "policy",
        "status",
        "termination",
        "budgets",
        "output",
        "error",
        "usage",
        "replay_of",
        "steps",
        "transcript",
    ):
        assert key in data
    step = data["steps"][1]
    for key in (
        "index",
        "attempt",
        "status",
        "request",
        "response",
        "tool_results",
        "verdicts",
        "feedback",
        "forced",
        "cleared",
        "internal_tool",
        "latency_ms",
        "ttft_ms",
    ):
        assert key in step
    assert set(step["request"]) >= {"system", "messages", "tools", "tool_choice", "response_format"}
    assert set(data["budgets"]) >= {
        "attempts_used",
        "max_attempts",
        "steps_used",
        "max_steps",
        "transport_retries",
    }


def test_timeline_lists_each_step_and_the_outcome(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "demo:retry-feedback"]) == 0
    lines = capsys.readouterr().out.splitlines()
    steps = [ln for ln in lines if ln.startswith("#")]
    assert len(steps) == 4
    assert "failed_validation" in steps[1] and "✗ no_markdown" in steps[1]
    assert "[cleared]" in steps[1]
    assert any("↳ feedback (user): Plain text only" in ln for ln in lines)
    assert lines[-2].startswith("succeeded · attempts 3/3 · steps 4/8")
    assert lines[-1] == (
        "output: Hi Sam, the meeting moved to 3pm today, same room. Reply if that doesn't work."
    )


def test_the_timeline_run_is_not_read_back_but_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without --json nothing prints the record: the run is not read again (a read of every
    step), and the exit code and the stored run are as with --json."""
    from inspector.store import Store

    db = tmp_path / "runs.sqlite3"
    loads: list[str] = []
    original = Store.load

    def counted(self: Store, run_id: str) -> RunRecord:
        loads.append(run_id)
        return original(self, run_id)

    monkeypatch.setattr(Store, "load", counted)
    assert main(["run", "demo:invalid-output-fallback", "--db", str(db)]) == 0
    assert loads == []
    assert main(["run", "demo:invalid-output-fallback", "--db", str(db), "--json"]) == 0
    assert len(loads) == 1
    capsys.readouterr()
    monkeypatch.undo()
    with Store.open(db) as store:
        runs = store.runs()
        assert [r.status for r in runs] == ["fallback", "fallback"]
        assert len(store.load(runs[1].run_id).steps) == len(store.load(runs[0].run_id).steps)


def test_set_changes_the_policy_and_the_outcome(capsys: pytest.CaptureFixture[str]) -> None:
    code, record = run_json(capsys, "demo:step-cap", "--set", "policy.final_step=none")
    assert (record.status, record.termination, code) == ("failed", "step_cap", 1)
    assert record.policy.final_step == "none"
    assert record.overrides == ["policy.final_step=none"]
    assert record.error is not None and record.error.type == "StepCapReached"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["demo:nope"], "demo:nope: no such demo (available: empty-final"),
        (
            ["demo:step-cap", "--set", "policy.max_steps=0"],
            "demo:step-cap: policy.max_steps: Input should be greater than or equal to 1"
            " (from --set policy.max_steps=0)",
        ),
        (
            ["demo:step-cap", "--set", "policy.bogus=1"],
            "demo:step-cap: policy.bogus: Extra inputs are not permitted"
            " (from --set policy.bogus=1)",
        ),
        (["demo:step-cap", "--set", "nokey"], "--set 'nokey': expected SECTION.KEY=VALUE"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    args: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert expected in err
    assert "Traceback" not in err


def test_broken_toml_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\n[prompt\nuser = "hi"\n')
    assert main(["run", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.toml: not valid TOML" in err


def test_console_script_and_module_entry_points(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    exe = Path(sys.executable).with_name("agent-inspector")
    for cmd in ([str(exe)], [sys.executable, "-m", "inspector"]):
        done = subprocess.run(
            [*cmd, "run", "demo:empty-final", "--json"], capture_output=True, text=True, env=env
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["termination"] == "stop"
    failed = subprocess.run(
        [
            sys.executable,
            "-m",
            "inspector",
            "run",
            "demo:empty-final",
            "--set",
            "policy.on_empty_final=error",
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert failed.returncode == 1
    assert "failed (empty final)" in failed.stdout
