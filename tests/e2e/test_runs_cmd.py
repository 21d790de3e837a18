"""``agent-inspector runs`` and the recording done by ``agent-inspector run --db``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.commands.runs import format_table
from inspector.reports.run_differences import differences
from inspector.store import RunSummary, Store


def run_demo(db: Path, demo: str, *extra: str) -> dict[str, object]:
    out_path = db.parent / "out.json"
    with out_path.open("w", encoding="utf-8") as out:
        main(["run", f"demo:{demo}", "--db", str(db), "--json", *extra], out)
    data: dict[str, object] = json.loads(out_path.read_text(encoding="utf-8"))
    return data


def test_run_records_and_json_is_the_stored_record(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite3"
    printed = run_demo(db, "retry-feedback")
    with Store.open(db) as store:
        stored = store.load(str(printed["run_id"]))
    assert stored.model_dump(mode="json") == printed
    assert len(stored.steps) == 4


def test_runs_table_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "runs.sqlite3"
    first = run_demo(db, "empty-final")
    second = run_demo(db, "step-cap", "--set", "policy.final_step=none")
    capsys.readouterr()
    assert main(["runs", "--db", str(db)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == [
        "run_id",
        "scenario",
        "status",
        "termination",
        "started_at",
        "steps",
        "tokens",
        "replay_of",
        "differs",
    ]
    assert [ln.split()[0] for ln in lines[1:]] == [second["run_id"], first["run_id"]]
    newest = lines[1].split()
    assert newest[1:4] == ["step-cap", "failed", "step_cap"]
    usage = second["usage"]
    assert isinstance(usage, dict)
    assert newest[-3:] == [
        f"{usage['input_tokens']}+{usage['output_tokens']}",
        "-",
        "final_step=none",
    ]
    assert lines[2].split()[-1] == "-"  # the scenario as written
    # Columns are aligned: every row's run_id column ends where the header's does.
    assert len({ln.index(ln.split()[1]) for ln in lines}) == 1

    assert main(["runs", "--db", str(db), "--json", "--scenario", "empty-final"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [r["run_id"] for r in listed] == [first["run_id"]]
    # ``via`` only for a proxied run, as in the run record.
    assert set(listed[0]) == set(RunSummary.model_fields) - {"via"}
    assert listed[0]["status"] == "succeeded" and listed[0]["steps"] == 3

    assert listed[0]["overrides"] == []

    assert main(["runs", "--db", str(db), "--json", "--limit", "1"]) == 0
    assert [r["run_id"] for r in json.loads(capsys.readouterr().out)] == [second["run_id"]]


def test_runs_uses_the_environment_store(capsys: pytest.CaptureFixture[str]) -> None:
    # tests/conftest.py points AGENT_INSPECTOR_DB at a fresh path for every test: `run` creates
    # the store there (`runs` before it is bad input: tests/commands/test_store_option.py, which
    # also has the default store's "no runs recorded yet").
    assert main(["run", "demo:empty-final"]) == 0
    capsys.readouterr()
    assert main(["runs", "--json"]) == 0
    assert [r["scenario"] for r in json.loads(capsys.readouterr().out)] == ["empty-final"]


def test_numbers_are_right_aligned() -> None:
    summary = RunSummary(
        run_id="r1",
        scenario="s",
        status="succeeded",
        termination=None,
        started_at="t",
        duration_ms=0,
        steps=12,
        input_tokens=1,
        output_tokens=2,
        replay_of="r0",
        provider="p",
        model="m",
    )
    short = summary.model_copy(update={"steps": 3})
    header, long_row, short_row = format_table([summary, short]).splitlines()
    end = header.index("steps") + len("steps")
    assert long_row[end - 2 : end] == "12" and short_row[end - 2 : end] == " 3"
    assert long_row.endswith("1+2  r0         -")
    assert " - " in short_row  # no termination


@pytest.mark.parametrize("command", [["runs"], ["run", "demo:empty-final"]])
def test_a_store_that_cannot_be_opened_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    bad = tmp_path / "not-a-store"
    bad.write_bytes(b"\x00garbage" * 100)
    assert main([*command, "--db", str(bad)]) == 2  # bad input
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert (
        err.startswith("agent-inspector: error: ") and "not-a-store: not an agent-inspector" in err
    )


def test_bad_limit_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["runs", "--limit", "-1"])
    assert exited.value.code == 2
    assert "expected 0 or more, got -1" in capsys.readouterr().err


def test_no_run_of_a_scenario_says_so_rather_than_an_empty_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "runs.sqlite3")
    main(["run", "demo:step-cap", "--db", db])
    capsys.readouterr()
    assert main(["runs", "--db", db, "--scenario", "nope"]) == 0
    assert capsys.readouterr().out.startswith("no run of scenario 'nope' in ")


def test_runs_show_what_differs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "runs.sqlite3"
    sets = ["--set", "policy.max_attempts=1", "--set", "model.temperature=0.5"]
    run_demo(db, "retry-feedback", *sets)
    capsys.readouterr()
    assert main(["runs", "--db", str(db), "--json"]) == 0
    [listed] = json.loads(capsys.readouterr().out)
    assert listed["overrides"] == ["policy.max_attempts=1", "model.temperature=0.5"]
    assert main(["runs", "--db", str(db)]) == 0
    row = capsys.readouterr().out.splitlines()[1]
    assert row.endswith("max_attempts=1, model.temperature=0.5")


def test_the_differences_line() -> None:
    assert differences([], None) == ""
    assert differences(["policy.feedback_history=none"], "3f2a") == (
        "feedback_history=none · replay of 3f2a"
    )
    assert differences(["prompt.user=Hi"], None) == "prompt.user=Hi"
