"""A run or sweep id the store does not hold is bad input (DESIGN §5: exit 2, one line naming
the id and the store); a turn that failed stays exit 1, and so does a run still recording."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.core.events import RunStarted
from inspector.store import Store

Capture = pytest.CaptureFixture[str]

UNKNOWN = {
    "replay": (["replay", "0123abcd", "--offline"], "no run '0123abcd' in {db}"),
    "export": (["export", "0123abcd"], "no run '0123abcd' in {db}"),
    "export html": (["export", "0123abcd", "--format", "html"], "no run '0123abcd' in {db}"),
    "export otel": (["export", "0123abcd", "--format", "otel"], "no run '0123abcd' in {db}"),
    "compare": (["compare", "{run}", "0123abcd"], "no run '0123abcd' in {db}"),
    "revalidate": (["revalidate", "0123abcd"], "no run '0123abcd' in {db}"),
    "scenario-from": (
        ["scenario-from", "0123abcd", "--out", "{out}"],
        "no run '0123abcd' in {db}",
    ),
    "revalidate --scenario": (
        ["revalidate", "--scenario", "nothing"],
        "no recorded run of scenario 'nothing' in {db}",
    ),
    "export a sweep": (
        ["export", "swnope"],
        "no sweep 'swnope' in {db} (agent-inspector sweeps lists them)",
    ),
    "sweep --resume": (
        ["sweep", "--resume", "swnope"],
        "no sweep 'swnope' in {db} (agent-inspector sweeps lists them)",
    ),
    "revalidate --sweep": (
        ["revalidate", "--sweep", "swnope"],
        "no sweep 'swnope' in {db} (agent-inspector sweeps lists them)",
    ),
}


@pytest.fixture
def recorded(tmp_path: Path, capsys: Capture) -> tuple[Path, str]:
    """A store holding one finished run: (its path, the run's id)."""
    db = tmp_path / "runs.sqlite3"
    assert main(["run", "demo:empty-final", "--db", str(db), "--json"]) == 0
    return db, json.loads(capsys.readouterr().out)["run_id"]


@pytest.mark.parametrize("name", sorted(UNKNOWN))
def test_an_unknown_id_is_bad_input_naming_it_and_the_store(
    name: str, recorded: tuple[Path, str], tmp_path: Path, capsys: Capture
) -> None:
    db, run_id = recorded
    words, message = UNKNOWN[name]
    out = tmp_path / "scenario.toml"
    args = [w.format(run=run_id, out=out) for w in words]
    assert main([*args, "--db", str(db)]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"agent-inspector: error: {message.format(db=db)}\n"
    assert captured.out == "" and not out.exists()
    with Store.open(db) as store:
        assert [s.run_id for s in store.runs()] == [run_id]  # nothing recorded


def test_an_ambiguous_prefix_is_bad_input(recorded: tuple[Path, str], capsys: Capture) -> None:
    db, run_id = recorded
    with Store.open(db) as store:
        record = store.load(run_id)
        for twin in ("abcd0001", "abcd0002"):
            store.save(record.model_copy(update={"run_id": twin}))
    assert main(["export", "abcd", "--db", str(db)]) == 2
    assert capsys.readouterr().err == (
        f"agent-inspector: error: run id 'abcd' is ambiguous in {db} (matches abcd0001, abcd0002)\n"
    )


def test_a_run_still_recording_is_not_bad_input(
    recorded: tuple[Path, str], capsys: Capture
) -> None:
    # The id is right: the run has no final record yet (try again once it has finished).
    db, run_id = recorded
    with Store.open(db) as store:
        record = store.load(run_id)
        recorder = store.recorder()  # alive: the run's status stays "running"
        recorder(RunStarted.from_record(record.model_copy(update={"run_id": "0still0running"})))
        assert main(["export", "0still0running", "--db", str(db)]) == 1
    assert capsys.readouterr().err == (
        f"agent-inspector: error: run '0still0running' in {db} is still being recorded\n"
    )


def test_a_failed_turn_stays_exit_1(recorded: tuple[Path, str], capsys: Capture) -> None:
    db, _ = recorded
    assert main(["run", "demo:step-cap", "--set", "policy.final_step=none", "--db", str(db)]) == 1


def test_the_command_line_says_it_in_one_line_with_no_traceback(recorded: tuple[Path, str]) -> None:
    db, _ = recorded
    done = subprocess.run(
        [sys.executable, "-m", "inspector", "export", "0123abcd", "--db", str(db)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"agent-inspector: error: no run '0123abcd' in {db}\n"
