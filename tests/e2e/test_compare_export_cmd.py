"""``compare`` and ``export`` as a user runs them: runs recorded by ``run --db`` into a temporary
store, then compared and exported through ``inspector.cli.main``."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.reports import EXPORT_VERSION
from inspector.reports.jsonl import JSONL_VERSION, read_jsonl
from inspector.resources import resolve_scenario
from inspector.store import Store

Capsys = pytest.CaptureFixture[str]


def record_run(capsys: Capsys, db: Path, demo: str, *overrides: str) -> str:
    """Runs ``demo:NAME`` through the CLI into ``db`` (its pacing delays off); the run id."""
    entries = len(resolve_scenario(f"demo:{demo}").script)
    undelayed = [f"script.{i}.delay_ms=0" for i in range(entries)]
    sets = [arg for o in (*overrides, *undelayed) for arg in ("--set", o)]
    main(["run", f"demo:{demo}", *sets, "--db", str(db), "--json"])
    run_id: str = json.loads(capsys.readouterr().out)["run_id"]
    return run_id


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "runs.sqlite3"


def test_compare_prints_the_policy_difference_and_the_divergence(capsys: Capsys, db: Path) -> None:
    a = record_run(capsys, db, "retry-feedback")
    b = record_run(capsys, db, "retry-feedback", "policy.feedback_history=latest")
    code = main(["compare", a, b[:6], "--db", str(db)])  # a unique prefix works
    out = capsys.readouterr().out
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "compare 2 runs of retry-feedback"
    assert all(len(line) <= 100 for line in lines)
    assert any(line.split() == ["≠", "feedback_history", "accumulate", "latest"] for line in lines)
    assert [line.split()[1:3] for line in lines if line.startswith("▶")] == [["step", "4"]]
    assert lines.index("outcome") > lines.index("steps") > lines.index("policy (only what differs)")


def test_compare_json_is_the_comparison_model(capsys: Capsys, db: Path) -> None:
    a = record_run(capsys, db, "retry-feedback")
    b = record_run(capsys, db, "retry-feedback", "policy.max_steps=3")
    assert main(["compare", a, b, "--db", str(db), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["version"] == EXPORT_VERSION
    assert [r["run_id"] for r in data["runs"]] == [a, b]
    assert data["policy_diffs"] == [{"field": "max_steps", "values": [8, 3]}]
    assert data["divergence"]["index"] == 3 and data["divergence"]["field"] == "system"
    assert [o["termination"] for o in data["outcomes"]] == ["stop", "step_cap"]
    assert data["steps"][3]["cells"][1] is None


def test_compare_refuses_runs_of_different_scenarios_unless_asked(capsys: Capsys, db: Path) -> None:
    a = record_run(capsys, db, "retry-feedback")
    b = record_run(capsys, db, "empty-final")
    assert main(["compare", a, b, "--db", str(db)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    error = captured.err.strip()
    assert "\n" not in error and "different scenarios" in error and "--any-scenario" in error
    assert main(["compare", a, b, "--db", str(db), "--any-scenario"]) == 0
    captured = capsys.readouterr()
    assert captured.err.startswith("agent-inspector: warning: comparing different scenarios")
    assert "compare 2 runs of retry-feedback / empty-final" in captured.out


def test_compare_needs_two_known_runs(capsys: Capsys, db: Path) -> None:
    a = record_run(capsys, db, "empty-final")
    with pytest.raises(SystemExit) as exited:
        main(["compare", a, "--db", str(db)])
    assert exited.value.code == 2
    capsys.readouterr()
    assert main(["compare", a, "nosuchrun", "--db", str(db)]) == 2
    error = capsys.readouterr().err.strip()
    assert "\n" not in error and "nosuchrun" in error


def test_export_jsonl_is_the_stored_event_log(capsys: Capsys, db: Path) -> None:
    run_id = record_run(capsys, db, "retry-feedback")
    assert main(["export", run_id, "--format", "jsonl", "--db", str(db)]) == 0
    text = capsys.readouterr().out
    lines = [json.loads(line) for line in text.splitlines()]
    header, events = lines[0], lines[1:]
    assert header["kind"] == "header" and header["version"] == JSONL_VERSION
    assert header["run_id"] == run_id and header["synthesized"] is False
    with Store.open(db) as store:
        stored = store.events(run_id)
        record = store.load(run_id)
    assert header["events"] == len(events) == len(stored)
    assert header["record_version"] == record.version
    _, read = read_jsonl(text.splitlines())
    assert [(r.t_ms, r.event) for r in read] == [(s.t_ms, s.event) for s in stored]
    assert events[-1]["kind"] == "run_finished" and events[-1]["record"]["run_id"] == run_id


def test_export_html_to_a_file(capsys: Capsys, db: Path, tmp_path: Path) -> None:
    run_id = record_run(capsys, db, "retry-feedback")
    target = tmp_path / "report.html"
    assert main(["export", run_id, "--format", "html", "--out", str(target), "--db", str(db)]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and str(target) in captured.err
    page = target.read_text(encoding="utf-8")
    steps: list[str] = []

    class Steps(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found = dict(attrs).get("data-step")
            if found:
                steps.append(found)

    Steps().feed(page)
    assert steps == ["1", "2", "3", "4"]
    assert f'content="{EXPORT_VERSION}"' in page and "rebuilt from its record" not in page
    assert not list(tmp_path.glob(".report.html.*"))  # no temporary file left behind


def test_a_run_stored_without_events_is_exported_from_its_record(
    capsys: Capsys, db: Path, tmp_path: Path
) -> None:
    run_id = record_run(capsys, db, "invalid-output-fallback")
    with Store.open(db) as store:
        record = store.load(run_id)
    other = tmp_path / "imported.sqlite3"
    with Store.open(other) as store:
        store.save(record)  # an import: the record only, no event log
        assert store.events(run_id) == []
    assert main(["export", run_id, "--db", str(other)]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines[0]["synthesized"] is True
    kinds = [line["kind"] for line in lines[1:]]
    assert kinds[0] == "run_started" and kinds[-2:] == ["fallback_used", "run_finished"]
    assert kinds.count("step_finished") == len(record.steps)
    assert main(["export", run_id, "--format", "html", "--db", str(other)]) == 0
    assert "rebuilt from its record" in capsys.readouterr().out


def test_export_errors_are_one_line(capsys: Capsys, db: Path, tmp_path: Path) -> None:
    run_id = record_run(capsys, db, "empty-final")
    with pytest.raises(SystemExit) as exited:
        main(["export", run_id, "--format", "pdf", "--db", str(db)])
    assert exited.value.code == 2
    capsys.readouterr()
    missing = tmp_path / "no" / "such" / "dir" / "x.jsonl"  # bad input: exit 2
    assert main(["export", run_id, "--out", str(missing), "--db", str(db)]) == 2
    error = capsys.readouterr().err.strip()
    assert "\n" not in error and str(missing) in error
    assert not missing.parent.exists()
    assert main(["export", "nosuchrun", "--db", str(db)]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("agent-inspector: error:") and "nosuchrun" in error


def test_a_store_damaged_partway_leaves_no_export_file(
    capsys: Capsys, db: Path, tmp_path: Path
) -> None:
    import sqlite3

    run_id = record_run(capsys, db, "retry-feedback")
    with sqlite3.connect(db) as conn:  # the last stored body of the log no longer validates
        (seq,) = conn.execute(
            "SELECT max(seq) FROM events WHERE run_id = ? AND body LIKE '{\"kind\":%'", (run_id,)
        ).fetchone()
        conn.execute(
            'UPDATE events SET body = \'{"kind":"tool_call_delta","index":"two"}\''
            " WHERE run_id = ? AND seq = ?",
            (run_id, seq),
        )
    out = tmp_path / "out" / "run.jsonl"
    out.parent.mkdir()
    code = main(["export", run_id, "--out", str(out), "--db", str(db)])
    error = capsys.readouterr().err.strip()
    assert code != 0 and "\n" not in error and "damaged store" in error
    assert list(out.parent.iterdir()) == []  # neither the file nor its temporary
