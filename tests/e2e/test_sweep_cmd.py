"""`agent-inspector sweep` as a user runs it: the grid, the report, export, resume, cancel."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.commands.sweep_run import arm_scenarios, jobs_for
from inspector.core.provider import Provider
from inspector.core.records import RunRecord
from inspector.core.scenario import Scenario
from inspector.providers.factory import build_provider
from inspector.store import Store
from inspector.sweeps.model import Arm, SweepSpec
from inspector.sweeps.runner import Job, run_jobs

Capture = pytest.CaptureFixture[str]

SLOW = """
name = "slow"
[model]
provider = "scripted"
[prompt]
user = "hi"
[[validators]]
kind = "regex_absent"
pattern = "bad"
[policy]
max_attempts = 2
[[script]]
choices = [{ text = "good", delay_ms = DELAY }, { text = "bad", delay_ms = DELAY }]
[[script]]
choices = [{ text = "good", delay_ms = DELAY }, { text = "bad", delay_ms = DELAY }]
"""


def slow_scenario(tmp_path: Path, delay_ms: int) -> Path:
    path = tmp_path / "slow.toml"
    path.write_text(SLOW.replace("DELAY", str(delay_ms)), encoding="utf-8")
    return path


def sweep_json(capsys: Capture, *args: str) -> tuple[int, dict[str, object]]:
    code = main(["sweep", *args, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_demo_sweep_policies_differ_and_the_seed_fixes_the_outcome(capsys: Capture) -> None:
    grid = ["demo:sweep", "--vary", "policy.feedback_history=accumulate,none", "--repeat", "30"]
    code, report = sweep_json(capsys, *grid, "--seed", "5")
    assert code == 0
    arms = report["arms"]
    assert isinstance(arms, list)
    assert [a["name"] for a in arms] == ["feedback_history=accumulate", "feedback_history=none"]
    assert report["runs"] == report["expected"] == 60
    accumulate, none = arms
    assert accumulate["pass_rate"] > none["pass_rate"]
    assert accumulate["cost"]["per_run"] > 0  # priced as gpt-4o-mini
    assert none["versus_baseline"]["p_value"] < 0.05
    _, again = sweep_json(capsys, *grid, "--seed", "5")
    assert [a["passed"] for a in again["arms"]] == [a["passed"] for a in arms]  # type: ignore[union-attr]


def test_a_bad_grid_is_one_line_naming_field_and_value(capsys: Capture) -> None:
    code = main(["sweep", "demo:sweep", "--vary", "policy.feedback_history=accumulate,sometimes"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1
    assert "policy.feedback_history" in err and "'sometimes'" in err
    assert main(["sweep", "demo:sweep", "--baseline", "nope"]) == 2
    assert "--baseline 'nope': no such arm" in capsys.readouterr().err
    with Store.open() as store:
        assert store.sweeps() == []  # nothing stored for a bad grid


def test_sweeps_lists_and_export_writes_csv_json_html(capsys: Capture, tmp_path: Path) -> None:
    _, report = sweep_json(capsys, "demo:sweep", "--repeat", "3", "--seed", "1")
    sweep_id = str(report["sweep_id"])
    assert main(["sweeps"]) == 0
    assert sweep_id in capsys.readouterr().out
    assert main(["export", sweep_id]) == 0
    csv_text = capsys.readouterr().out
    assert csv_text.splitlines()[0].startswith("arm,overrides,runs")
    assert main(["export", sweep_id[:5], "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["arms"] == report["arms"]
    out = tmp_path / "s.html"
    assert main(["export", sweep_id, "--format", "html", "--out", str(out)]) == 0
    assert "<svg" in out.read_text(encoding="utf-8")


def test_a_sweep_asked_for_a_run_format_says_so(capsys: Capture, tmp_path: Path) -> None:
    """A run's formats (jsonl, otel, an OTLP push) are refused for a sweep in one line, exit 2:
    not an HTML page written where OTLP/JSON was asked for."""
    _, report = sweep_json(capsys, "demo:sweep", "--repeat", "2", "--seed", "1")
    sweep_id = str(report["sweep_id"])
    out = tmp_path / "s.otlp.json"
    asked = (
        ["--format", "jsonl"],
        ["--format", "otel", "--out", str(out)],
        ["--otlp-endpoint", "http://127.0.0.1:9/v1/traces"],
    )
    for args in asked:
        assert main(["export", sweep_id, *args]) == 2, args
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err.count("\n") == 1
        assert "a sweep exports as csv, json or html" in captured.err
    assert not out.exists()


def test_a_sweep_run_replays_exactly_offline(capsys: Capture) -> None:
    sweep_json(capsys, "demo:sweep", "--repeat", "2", "--seed", "9")
    with Store.open() as store:
        runs = store.runs()
    for summary in runs:
        assert main(["replay", summary.run_id, "--offline", "--json"]) in (0, 1)
        replayed = json.loads(capsys.readouterr().out)
        with Store.open() as store:
            original = store.load(summary.run_id)
        assert replayed["status"] == original.status
        assert replayed["output"] == original.output
        assert any("model.seed=" in o for o in original.overrides)


def test_revalidate_sweep_names_arms_whose_ranking_changes(capsys: Capture, tmp_path: Path) -> None:
    grid = ["demo:sweep", "--vary", "policy.feedback_history=accumulate,latest,none"]
    _, report = sweep_json(capsys, *grid, "--repeat", "20", "--seed", "2")
    lenient = tmp_path / "v.toml"  # markdown allowed now: only the length counts
    lenient.write_text('[[validators]]\nkind = "max_length"\nmax = 160\n', encoding="utf-8")
    code = main(["revalidate", "--sweep", str(report["sweep_id"]), "--validators", str(lenient)])
    out = capsys.readouterr().out
    assert "60 run(s) re-judged, no model call" in out
    if code == 1:
        assert "ranking changed:" in out
    else:
        assert "ranking unchanged" in out
    code = main(["revalidate", "--sweep", str(report["sweep_id"]), "--json"])
    same = json.loads(capsys.readouterr().out)
    assert (code, same["flipped"], same["rank_changed"]) == (0, 0, [])  # unchanged validators


class Counting:
    """Wraps providers to count the turns streaming at once."""

    def __init__(self) -> None:
        self.now = 0
        self.most = 0

    def wrap(self, scenario: Scenario) -> Provider:
        inner = build_provider(scenario)
        outer = self

        class Wrapped:
            name = inner.name

            async def stream(self, request):  # type: ignore[no-untyped-def]
                outer.now += 1
                outer.most = max(outer.most, outer.now)
                try:
                    async for chunk in inner.stream(request):
                        yield chunk
                finally:
                    outer.now -= 1

        return Wrapped()


def jobs_of(path: Path, repeat: int, concurrency: int) -> tuple[SweepSpec, list[Job]]:
    spec = SweepSpec(
        scenario=str(path),
        arms=[Arm(name="a"), Arm(name="b", overrides=["policy.max_attempts=1"])],
        repeat=repeat,
        seed=1,
        baseline="a",
        concurrency=concurrency,
    )
    return spec, jobs_for(spec, arm_scenarios(spec), spec.slots())


async def test_concurrency_never_exceeds_what_was_asked(tmp_path: Path) -> None:
    _, jobs = jobs_of(slow_scenario(tmp_path, 2), repeat=10, concurrency=3)
    counting = Counting()
    finished: list[RunRecord] = []
    await run_jobs(
        jobs,
        concurrency=3,
        make_provider=counting.wrap,
        sink=lambda e: None,
        on_start=lambda j, r: None,
        on_finish=lambda j, r: finished.append(r),
    )
    assert len(finished) == 20
    assert counting.most == 3


async def test_cancelling_keeps_finished_runs_and_ends_those_in_flight_cancelled(
    tmp_path: Path,
) -> None:
    spec, jobs = jobs_of(slow_scenario(tmp_path, 20), repeat=20, concurrency=4)
    finished: list[RunRecord] = []
    enough = asyncio.Event()

    def on_finish(job: Job, record: RunRecord) -> None:
        finished.append(record)
        if len(finished) == 6:
            enough.set()

    with Store.open() as store:
        store.create_sweep("swtest", "slow", "t", spec.model_dump(mode="json"))
        task = asyncio.create_task(
            run_jobs(
                jobs,
                concurrency=4,
                make_provider=build_provider,
                sink=store.recorder(),
                on_start=lambda j, r: store.add_sweep_run("swtest", r, j.arm, j.rep),
                on_finish=on_finish,
            )
        )
        await enough.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        rows = store.sweep_runs("swtest")
        statuses = [r["status"] for r in rows]
        done = [r for r in finished if r.status != "cancelled"]
        assert len(done) >= 6
        assert statuses.count("cancelled") >= 1  # the runs in flight
        assert len(rows) == len(done) + statuses.count("cancelled")  # nothing else started
        assert "running" not in statuses
        assert len(store.filled_slots("swtest")) == len(done)
        for record in done:
            assert store.load(record.run_id).status == record.status


def test_resume_after_kill_9_runs_exactly_the_missing_runs(tmp_path: Path, capsys: Capture) -> None:
    db = tmp_path / "runs.sqlite3"
    scenario = slow_scenario(tmp_path, 30)
    argv = [
        sys.executable,
        "-m",
        "inspector",
        "sweep",
        str(scenario),
        "--vary",
        "policy.max_attempts=1,2",
        "--repeat",
        "15",
        "--concurrency",
        "3",
        "--seed",
        "4",
        "--db",
        str(db),
    ]
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        finished = 0
        deadline = time.monotonic() + 50  # waiting for progress, not timing it
        while finished < 8 and time.monotonic() < deadline and child.poll() is None:
            time.sleep(0.05)
            if not db.exists():
                continue
            conn = sqlite3.connect(db)
            with contextlib.suppress(sqlite3.OperationalError):  # not migrated yet
                finished = conn.execute(
                    "SELECT count(*) FROM runs WHERE status != 'running'"
                ).fetchone()[0]
            conn.close()
        assert child.poll() is None, "the sweep ended before it could be killed"
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait()
    with Store.open(db) as store:
        (sweep,) = store.sweeps()
        filled = store.filled_slots(sweep.sweep_id)
        before = {r["run_id"] for r in store.sweep_runs(sweep.sweep_id)}
        interrupted = [r for r in store.sweep_runs(sweep.sweep_id) if r["status"] == "interrupted"]
    assert 8 <= len(filled) < 30
    assert interrupted  # the runs in flight when it died
    assert main(["sweep", "--resume", sweep.sweep_id, "--db", str(db), "--json"]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert f"{30 - len(filled)} run(s) to do · concurrency 3" in captured.err  # the sweep's own
    assert report["runs"] == report["expected"] == 30
    with Store.open(db) as store:
        rows = store.sweep_runs(sweep.sweep_id)
    new = [(r["arm"], r["rep"]) for r in rows if r["run_id"] not in before]
    all_slots = {(a, r) for a in range(2) for r in range(15)}
    assert sorted(new) == sorted(all_slots - filled)  # each missing slot once, no other


def test_ctrl_c_keeps_finished_runs_and_says_how_to_resume(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite3"
    scenario = slow_scenario(tmp_path, 30)
    argv = [sys.executable, "-m", "inspector", "sweep", str(scenario), "--repeat", "40",
            "--concurrency", "2", "--db", str(db)]  # fmt: skip
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    finished = 0
    deadline = time.monotonic() + 50  # waiting for progress, not timing it
    while finished < 4 and time.monotonic() < deadline and child.poll() is None:
        time.sleep(0.05)
        if not db.exists():
            continue
        conn = sqlite3.connect(db)
        with contextlib.suppress(sqlite3.OperationalError):  # not migrated yet
            finished = conn.execute(
                "SELECT count(*) FROM runs WHERE status NOT IN ('running', 'cancelled')"
            ).fetchone()[0]
        conn.close()
    assert child.poll() is None, "the sweep ended before Ctrl+C"
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=50)
    assert child.returncode == 1
    with Store.open(db) as store:
        (sweep,) = store.sweeps()
        rows = store.sweep_runs(sweep.sweep_id)
    statuses = [r["status"] for r in rows]
    assert "running" not in statuses and "interrupted" not in statuses
    assert 1 <= statuses.count("cancelled") <= 2  # the runs in flight, at concurrency 2
    kept = len(rows) - statuses.count("cancelled")
    assert kept >= 4
    assert f"{kept}/40 runs" in out  # the report of what finished
    assert f"agent-inspector sweep --resume {sweep.sweep_id} runs the rest" in err
    assert "Traceback" not in err


def test_preset_arms_and_prompts_from_files(
    capsys: Capture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from inspector.resources import resources_dir

    monkeypatch.chdir(tmp_path)
    (tmp_path / "short.txt").write_text("Be brief.", encoding="utf-8")
    (tmp_path / "long.txt").write_text("You write SMS messages, plain text only.", encoding="utf-8")
    preset = resources_dir() / "presets" / "latest-only.toml"
    code, report = sweep_json(
        capsys, "demo:sweep", "--arm", f"latest={preset}", "--repeat", "3", "--seed", "1"
    )
    assert code == 0
    assert [a["name"] for a in report["arms"]] == ["base", "latest"]  # type: ignore[index]
    assert report["baseline"] == "base"
    code, report = sweep_json(
        capsys, "demo:sweep", "--vary", "prompt.system=@short.txt,@long.txt", "--repeat", "2"
    )
    assert [a["name"] for a in report["arms"]] == ["system=short.txt", "system=long.txt"]  # type: ignore[index]
    with Store.open() as store:
        rows = store.sweep_runs(str(report["sweep_id"]))
        systems = {
            r["arm"]: store.load(r["run_id"]).scenario_source["prompt"]["system"] for r in rows
        }
    assert systems == {0: "Be brief.", 1: "You write SMS messages, plain text only."}
