"""The whole window under big runs: playback, many attempts, the collector, the runs list.

Each scene runs in the real ``MainWindow`` (offscreen, 1400×900) on a throwaway store, driven
through its public methods on the app's own qasync loop, with a 5 ms heartbeat timer recording
the longest event-loop stall (its longest gap minus 5 ms). Runs are recorded by the project's
own engine (scripted model) into the store, as ``agent-inspector run`` records them.

1. *Playback*: a 1,000-step tool-calling turn (every request carries the whole conversation so
   far) played back at "max" speed, the Step tab showing each new step. Events per second from
   play to the end. Goal ≥ 1,000/s. Peer: the same events folded into a bare ``LiveRun``.
2. *10,000 attempts*: a turn whose first 9,999 drafts fail a validator, opened from the runs
   list (once the window has listed it) with the Attempts tab in front (the worst case): from
   ``show_stored_run`` to the page of its last attempts shown. Goal < 1 s, no stall > 50 ms.
   Peer: a bare ``QListView`` of 10,000 lines.
3. *Collector*: a 100,000-step run shown; a full ``gc.collect()`` after ``settle_loaded`` (the
   window freezes a shown run out of the collector's scans). Goal < 50 ms. Peer: the same full
   collection without the freeze.
4. *Runs list*: 100,000 runs stored; what the UI thread pays at a run's start or end
   (``note_runs``: merge the newest rows) and to list them all once read on a worker thread
   (``list_runs_soon``: ``set_runs`` and a paint). Goal < 50 ms each. Peer: a bare
   ``QListView`` reset over 100,000 lines.
5. *Live*: a 100,000-step run's events (``StepStarted``, a ``TextDelta``, ``StepFinished`` per
   step, then ``RunFinished``) emitted on the runner's signal as fast as the window takes them,
   the Step tab raised. Goal: no stall > 50 ms, the end included.

Usage: ``QT_QPA_PLATFORM=offscreen python bench/window.py [--write bench/RESULTS.md] [--quick]
[--scene open|live|runs]`` (``--scene open``: scene 2 alone; with ``--write`` only its row is
replaced; ``--scene live``, ``--scene runs``: scene 5, 4 alone, its row printed, nothing
written).
Exit status 1 when a goal is missed (not with ``--quick``).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import gc
import os
import platform
import sqlite3
import statistics
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# This checkout's inspector, not the installed one (an editable install of another tree).
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from editor import Heartbeat  # bench/editor.py (this folder is on sys.path)
from gui import generated_record  # bench/gui.py
from PySide6.QtCore import QStringListModel
from PySide6.QtWidgets import QApplication, QListView
from results import cpu_model, write_section  # bench/results.py

from inspector.app.driven import drive_window, next_emission
from inspector.app.runtime.gui_collector import settle_loaded
from inspector.app.shell.main_window import MainWindow
from inspector.app.shell.runs_listing import read_runs
from inspector.core.events import (
    Event,
    RunFinished,
    RunStarted,
    StepFinished,
    StepStarted,
    TextDelta,
    fan_out,
)
from inspector.core.live import LiveRun
from inspector.core.loop import run_turn
from inspector.core.scenario import scenario_from_dict
from inspector.providers.scripted import ScriptedProvider
from inspector.store import Store

SECTION = "## Window under big runs (bench/window.py)"
PLAYBACK_GOAL = 1_000.0  # events/s
OPEN_GOAL_S = 1.0
STALL_GOAL_MS = 50.0
GC_GOAL_MS = 50.0
RUNS_GOAL_MS = 50.0


def tool_turn(steps: int, folder: Path) -> Any:
    """``steps`` lookup calls then an answer: each request carries the whole history."""
    tool = {
        "name": "lookup",
        "description": "Look something up.",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
        "result": "Sam's number is 555-0101; the meeting moved to 3pm.",
    }
    data = {
        "name": f"bench-window-tools-{steps}",
        "model": {"provider": "scripted", "name": "bench"},
        "prompt": {"system": "You look things up.", "user": "Tell Sam the meeting moved."},
        "tools": [tool],
        "policy": {"max_steps": steps + 1, "max_attempts": 1},
        "script": [{"tool_calls": [{"name": "lookup", "arguments": {"q": "x"}}]}] * steps
        + [{"text": "Sam, the meeting moved to 3pm."}],
    }
    return scenario_from_dict(data, source="<bench-window>", base_dir=folder)


def attempts_turn(attempts: int, folder: Path) -> Any:
    """``attempts`` drafts, all but the last too long for a ``max_length`` validator."""
    long = "Sam, the meeting moved to 3pm today; please confirm you got this message."
    data = {
        "name": f"bench-window-attempts-{attempts}",
        "model": {"provider": "scripted", "name": "bench"},
        "prompt": {"system": "You write SMS.", "user": "Tell Sam the meeting moved."},
        "validators": [{"kind": "max_length", "max": 40, "feedback": "Shorter."}],
        "policy": {
            "max_steps": attempts,
            "max_attempts": attempts,
            "feedback_history": "none",  # a blind retry: every request the same size
        },
        "script": [{"text": long}] * (attempts - 1) + [{"text": "Meeting moved to 3pm."}],
    }
    return scenario_from_dict(data, source="<bench-window>", base_dir=folder)


async def record(store: Store, scenario: Any) -> str:
    """Records a turn into the store, then freezes what it left alive as the window does when
    a run it recorded finishes (``settle_loaded``)."""
    result = await run_turn(scenario, ScriptedProvider(scenario.script), fan_out(store.recorder()))
    settle_loaded()
    return result.run_id


async def playback_scene(window: MainWindow, run_id: str) -> tuple[float, float, int]:
    """(events/s, longest stall ms, events) of a max-speed playback of ``run_id``."""
    control = window.playback
    control.playback.set_speed("max")
    await next_emission(control.playback.playingChanged, lambda: control.play_back(run_id))
    events = len(control.playback.schedule)
    heartbeat = Heartbeat()
    heartbeat.start()
    start = time.perf_counter()
    while control.playback.playing:
        await asyncio.sleep(0.001)
    seconds = time.perf_counter() - start
    assert control.playback.position == events, (control.playback.position, events)
    return events / seconds, heartbeat.stop(), events


def playback_peer(store: Store, run_id: str) -> float:
    events = [s.event for s in store.events(run_id)]
    start = time.perf_counter()
    run = LiveRun()
    for event in events:
        run.apply(event)
    return len(events) / (time.perf_counter() - start)


async def open_scene(window: MainWindow, run_id: str, attempts: int) -> tuple[float, float]:
    """(seconds from show_stored_run to the attempt columns shown, longest stall ms)."""
    window.centre_tabs.show_attempts()
    heartbeat = Heartbeat()
    heartbeat.start()
    start = time.perf_counter()
    window.show_stored_run(run_id)
    while not (
        window.shown is not None
        and window.shown.run_id == run_id
        and window.attempts.attempt_columns
        and f"Attempt {attempts}<" in window.attempts.attempt_columns[-1].title.text()
    ):
        await asyncio.sleep(0.001)
    assert len(window.shown.steps) == attempts
    seconds = time.perf_counter() - start
    await asyncio.sleep(0.3)  # what follows the first paint (catch-up slices) counts as stall
    stall = heartbeat.stop()
    window.centre_tabs.show_timeline()
    return seconds, stall


def list_peer(lines: list[str]) -> float:
    """Seconds for a bare QListView to show ``lines`` (reset + first paint)."""
    app = QApplication.instance()
    assert app is not None
    start = time.perf_counter()
    view = QListView()
    view.setLayoutMode(QListView.LayoutMode.Batched)
    view.setUniformItemSizes(True)
    view.setModel(QStringListModel(lines, view))
    view.resize(400, 800)
    view.show()
    view.repaint()
    app.processEvents()
    seconds = time.perf_counter() - start
    view.close()
    view.deleteLater()
    return seconds


def collector_scene(window: MainWindow, steps: int) -> tuple[float, float, int]:
    """(full collection ms with the run frozen, without (peer), tracked objects)."""
    run = LiveRun.from_record(generated_record(steps))
    window.show_run(run)
    QApplication.processEvents()
    gc.unfreeze()
    tracked = len(gc.get_objects())
    start = time.perf_counter()
    gc.collect()
    unfrozen = (time.perf_counter() - start) * 1000
    settle_loaded()
    times = []
    for _ in range(3):
        start = time.perf_counter()
        gc.collect()
        times.append((time.perf_counter() - start) * 1000)
    gc.unfreeze()
    window.show_run(LiveRun())
    return statistics.median(times), unfrozen, tracked


def copy_runs(db: Path, run_id: str, copies: int) -> None:
    """Fills the runs table with ``copies`` rows like ``run_id``'s (runs list bench only; a
    small run: each copy repeats its header and record)."""
    conn = sqlite3.connect(db)
    columns = [r[1] for r in conn.execute("PRAGMA table_info(runs)") if r[1] not in ("id",)]
    others = [c for c in columns if c not in ("run_id", "started_at")]
    with conn:
        conn.executemany(
            f"INSERT INTO runs (run_id, started_at, {', '.join(others)}) "
            f"SELECT ?, ?, {', '.join(others)} FROM runs WHERE run_id = ?",
            (
                (f"bench{n:06d}", f"2025-01-01T00:00:{n % 60:02d}.{n:06d}+00:00", run_id)
                for n in range(copies)
            ),
        )
    conn.close()


async def runs_scene(window: MainWindow, repeats: int) -> tuple[float, float, float, float, int]:
    """(note_runs ms, listing: the longest UI-thread step (the first chunk, or one more),
    reading ms on a worker, bare QListView reset ms, runs listed)."""
    notes, lists, reads, bare = [], [], [], []
    for _ in range(repeats):
        start = time.perf_counter()
        runs = read_runs(window.store.path)  # what list_runs_soon does on a worker thread
        reads.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        window.library.set_runs(runs, keep=runs[0].run_id)  # as RunsListing.show does
        window.library.repaint()
        worst = (time.perf_counter() - start) * 1000
        model = window.library.runs
        while model.listing:  # the older runs: a chunk per event-loop turn, each one timed
            await asyncio.sleep(0)
            if not model.listing:
                break
            start = time.perf_counter()
            model.show_more()
            window.library.repaint()
            worst = max(worst, (time.perf_counter() - start) * 1000)
        settle_loaded()
        lists.append(worst)
        start = time.perf_counter()
        window.note_runs(keep=runs[0].run_id)
        notes.append((time.perf_counter() - start) * 1000)
        bare.append(list_peer([f"{r.status} {r.scenario} {r.run_id}" for r in runs]) * 1000)
        await asyncio.sleep(0.01)
    med = statistics.median
    return med(notes), med(lists), med(reads), med(bare), window.library.runs.rowCount()


def live_events(steps: int) -> list[Event]:
    """A generated run of ``steps`` steps (bench/gui.py) as the runner delivers it: per step
    ``StepStarted``, one ``TextDelta``, ``StepFinished``; then ``RunFinished``."""
    record = generated_record(steps, attempts=max(1, steps // 1_000))
    run_id = record.run_id
    events: list[Event] = [
        RunStarted.model_construct(
            run_id=run_id,
            scenario="bench",
            started_at="2026-01-01T00:00:00Z",
            policy=record.policy,
            provider="scripted",
            model="bench",
        )
    ]
    for step in record.steps:
        events.append(
            StepStarted.model_construct(
                run_id=run_id, index=step.index, attempt=step.attempt, request=step.request
            )
        )
        events.append(TextDelta.model_construct(run_id=run_id, index=step.index, text="x"))
        events.append(StepFinished.model_construct(run_id=run_id, step=step))
    events.append(RunFinished.model_construct(run_id=run_id, record=record))
    return events


async def live_scene(window: MainWindow, steps: int) -> tuple[float, float, float, int]:
    """(longest stall ms while streaming, at the end (RunFinished), events/s, events): the
    events of a ``steps``-step run emitted on the runner's ``engineEvent``, 100 per
    event-loop turn (the engine in-process makes ~15,000 a second)."""
    events = live_events(steps)
    settle_loaded()
    window.detail_dock.raise_()
    heartbeat = Heartbeat()
    heartbeat.start()
    start = time.perf_counter()
    emit, pacer = window.runner.engineEvent.emit, window.pacer
    for first in range(0, len(events) - 1, 100):
        for event in events[first : first + 100]:
            emit(event)
        await asyncio.sleep(0)
    while pacer.pending:  # the window takes them in slices (EventPacer)
        await asyncio.sleep(0.01)
    rate = (len(events) - 1) / (time.perf_counter() - start)
    await asyncio.sleep(0.2)
    streaming = heartbeat.stop()
    heartbeat.start()
    emit(events[-1])
    while pacer.pending:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.5)
    ending = heartbeat.stop()
    assert window.shown is not None and window.shown.record is not None
    window.show_run(LiveRun())
    return streaming, ending, rate, len(events)


async def live_only(window: MainWindow, folder: Path, quick: bool) -> dict[str, Any]:
    """Scene 5 alone (``--scene live``)."""
    big = 20_000 if quick else 100_000
    return {"sizes": (0, 0, big), "live": await live_scene(window, big)}


async def runs_only(window: MainWindow, folder: Path, quick: bool) -> dict[str, Any]:
    """Scene 4 alone (``--scene runs``)."""
    big = 20_000 if quick else 100_000
    small_id = await record(window.store, attempts_turn(1, folder))
    copy_runs(window.store.path, small_id, big - 1)
    await listed(window)
    return {"sizes": (0, 0, big), "runs": await runs_scene(window, 1 if quick else 3)}


def runs_row(out: dict[str, Any]) -> str:
    note_ms, list_ms, read_ms, bare_ms, listed_n = out["runs"]
    met = note_ms < RUNS_GOAL_MS and list_ms < RUNS_GOAL_MS
    return (
        f"| runs list, {listed_n:,} runs stored | start or end {note_ms:.1f} ms; listing, "
        f"longest UI-thread step {list_ms:.0f} ms (read on a worker: {read_ms:.0f} ms) | "
        f"{bare_ms:.0f} ms (bare `QListView`) | < 50 ms: {'met' if met else 'MISSED'} |"
    )


def live_row(out: dict[str, Any]) -> str:
    big = out["sizes"][2]
    live_stall, end_stall, live_rate, live_events_n = out["live"]
    met = max(live_stall, end_stall) < STALL_GOAL_MS
    return (
        f"| a live {big:,}-step run ({live_events_n:,} events on the runner's signal, as fast "
        f"as the window takes them: {live_rate:,.0f}/s) | longest stall {live_stall:.0f} ms "
        f"streaming, {end_stall:.0f} ms at `RunFinished` | — | < 50 ms: "
        f"{'met' if met else 'MISSED'} |"
    )


async def open_only(window: MainWindow, folder: Path, quick: bool) -> dict[str, Any]:
    """Scene 2 alone (``--scene open``)."""
    attempts = 500 if quick else 10_000
    attempts_id = await record(window.store, attempts_turn(attempts, folder))
    await listed(window)
    return {
        "sizes": (0, attempts, 0),
        "open": await open_repeats(window, attempts_id, attempts, quick),
    }


async def listed(window: MainWindow) -> None:
    """Waits for the window's first listing of the runs (``list_runs_soon``), as a user picks
    a run from the list once it is there. The scripted recording never yields to the event
    loop, so that listing would otherwise land inside the first open and count as its stall
    (its merge reads the newest runs' summaries on the UI thread)."""
    task = window.runs_listing.task
    if task is not None:
        await task
    await asyncio.sleep(0.2)


async def open_repeats(
    window: MainWindow, attempts_id: str, attempts: int, quick: bool
) -> tuple[float, float, float]:
    opens, open_stalls = [], []
    for _ in range(1 if quick else 3):
        seconds, stall = await open_scene(window, attempts_id, attempts)
        opens.append(seconds)
        open_stalls.append(stall)
        window.show_run(LiveRun())
        await asyncio.sleep(0.05)
    lines = [f"Attempt {n} · failed validation" for n in range(1, attempts + 1)]
    return statistics.median(opens), max(open_stalls), list_peer(lines)


async def scenes(window: MainWindow, folder: Path, quick: bool) -> dict[str, Any]:
    store = window.store
    steps, attempts, big = (200, 500, 20_000) if quick else (1_000, 10_000, 100_000)
    out: dict[str, Any] = {"sizes": (steps, attempts, big)}
    tools_id = await record(store, tool_turn(steps, folder))
    rates, stalls = [], []
    for _ in range(1 if quick else 3):
        rate, stall, events = await playback_scene(window, tools_id)
        rates.append(rate)
        stalls.append(stall)
        window.playback.stop_playback()
    out["playback"] = (
        statistics.median(rates),
        max(stalls),
        events,
        playback_peer(store, tools_id),
    )
    attempts_id = await record(store, attempts_turn(attempts, folder))
    await listed(window)
    out["open"] = await open_repeats(window, attempts_id, attempts, quick)
    out["live"] = await live_scene(window, big)
    out["gc"] = collector_scene(window, big)
    small_id = await record(store, attempts_turn(1, folder))  # a small row to copy
    copy_runs(store.path, small_id, big - 3)
    out["runs"] = await runs_scene(window, 1 if quick else 3)
    return out


OPEN_ROW = "| open a stored run of "


def open_met(out: dict[str, Any]) -> bool:
    open_s, open_stall, _ = out["open"]
    return bool(open_s < OPEN_GOAL_S and open_stall < STALL_GOAL_MS)


def open_row(out: dict[str, Any]) -> str:
    attempts = out["sizes"][1]
    open_s, open_stall, open_peer = out["open"]
    return (
        f"{OPEN_ROW}{attempts:,} attempts, Attempts tab in front | {open_s * 1000:.0f} "
        f"ms (longest stall {open_stall:.0f} ms) | {open_peer * 1000:.0f} ms (bare `QListView`, "
        f"{attempts:,} lines) | < 1 s, stall < 50 ms: {'met' if open_met(out) else 'MISSED'} |"
    )


def write_open_row(path: Path, out: dict[str, Any], quick: bool) -> None:
    """``--scene open --write``: the section's open row replaced, the other rows kept, and a
    line saying when that row was measured."""
    text = path.read_text(encoding="utf-8")
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    end = len(text) if end < 0 else end + 1
    lines = text[start:end].splitlines()
    lines = [open_row(out) if line.startswith(OPEN_ROW) else line for line in lines]
    stamp = "The open row alone (`--scene open"
    lines = [line for line in lines if not line.startswith(stamp)]
    while lines and not lines[-1]:
        lines.pop()
    lines.append("")  # a paragraph of its own
    lines.append(
        f"{stamp}{' --quick' if quick else ''}`), re-measured {dt.date.today().isoformat()}, "
        f"load average {os.getloadavg()[0]:.1f}."
    )
    write_section(path, SECTION, "\n".join(lines) + "\n")


def section(out: dict[str, Any], quick: bool) -> tuple[str, bool]:
    steps, _, big = out["sizes"]
    rate, play_stall, events, peer_rate = out["playback"]
    gc_ms, gc_peer, tracked = out["gc"]
    live_stall, end_stall = out["live"][:2]
    note_ms, list_ms, read_ms, bare_ms, listed = out["runs"]
    checks = {
        "playback": rate >= PLAYBACK_GOAL,
        "open": open_met(out),
        "gc": gc_ms < GC_GOAL_MS,
        "runs": note_ms < RUNS_GOAL_MS and list_ms < RUNS_GOAL_MS,
        "live": max(live_stall, end_stall) < STALL_GOAL_MS,
    }
    verdict = {k: "met" if v else "MISSED" for k, v in checks.items()}
    rows = [
        "| what | window | peer (same run) | goal |",
        "|---|---:|---:|---|",
        f"| playback at max speed, {steps:,}-step run ({events:,} events) | {rate:,.0f} events/s "
        f"(longest stall {play_stall:.0f} ms) | {peer_rate:,.0f} events/s (bare `LiveRun` fold) "
        f"| ≥ 1,000/s: {verdict['playback']} |",
        open_row(out),
        live_row(out),
        f"| full `gc.collect()`, {big:,}-step run shown ({tracked:,} objects tracked) | "
        f"{gc_ms:.1f} ms (frozen by `settle_loaded`) | {gc_peer:.0f} ms (not frozen) | "
        f"< 50 ms: {verdict['gc']} |",
        f"| runs list, {listed:,} runs stored: a run's start or end; listing them all (UI "
        f"thread) | {note_ms:.1f} ms (`note_runs`: newest 20 merged); {list_ms:.0f} ms "
        f"(listing them, longest UI-thread step: `set_runs` of the newest 1,000 + paint, or "
        f"1,000 older rows inserted + paint; read on a worker: {read_ms:.0f} ms) | "
        f"{bare_ms:.0f} ms (bare `QListView` reset + paint) | < 50 ms: {verdict['runs']} |",
    ]
    text = f"""{SECTION}

Measured {dt.date.today().isoformat()}; {platform.platform()}; Python {platform.python_version()};
CPU {cpu_model()}, nproc {os.cpu_count()} (shared with other jobs); PySide6
{version("PySide6-Essentials")}; QT_QPA_PLATFORM={os.environ.get("QT_QPA_PLATFORM")}.
{"--quick: smaller runs, one repeat" if quick else "Medians of 3 (longest stalls: the worst of 3)"}.
Reproduce with `python bench/window.py --write bench/RESULTS.md`.

{chr(10).join(rows)}

Runs recorded by the engine (scripted model) into the store; the {big:,}-step run of the
collector row is generated as in bench/gui.py; the {big:,} stored runs are copies of one run's
row. Stalls: a 5 ms heartbeat timer's longest gap minus 5 ms.
"""
    return text, all(checks.values())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, metavar="RESULTS_MD", help="record the table here")
    parser.add_argument("--quick", action="store_true", help="smaller runs, one repeat")
    parser.add_argument(
        "--scene",
        choices=("all", "open", "live", "runs"),
        default="all",
        help="open: scene 2 alone; live, runs: scene 5, 4 alone (printed, not written)",
    )
    args = parser.parse_args(argv)
    chosen = {"open": open_only, "live": live_only, "runs": runs_only}.get(args.scene, scenes)
    with tempfile.TemporaryDirectory(prefix="agent-inspector-bench-") as tmp:
        out = drive_window(
            Path(tmp) / "runs.sqlite3", lambda window: chosen(window, Path(tmp), args.quick)
        )
    if args.scene == "live":
        print(f"{live_row(out)} (load average {os.getloadavg()[0]:.1f})")
        met = max(out["live"][:2]) < STALL_GOAL_MS
        return 0 if met or args.quick else 1
    if args.scene == "runs":
        print(f"{runs_row(out)} (load average {os.getloadavg()[0]:.1f})")
        met = max(out["runs"][:2]) < RUNS_GOAL_MS
        return 0 if met or args.quick else 1
    if args.scene == "open":
        print(open_row(out))
        if args.write:
            write_open_row(args.write, out, args.quick)
        return 0 if open_met(out) or args.quick else 1
    text, passed = section(out, args.quick)
    print(text)
    if args.write:
        write_section(args.write, SECTION, text)
        print(f"wrote {args.write}", file=sys.stderr)
    return 0 if passed or args.quick else 1


if __name__ == "__main__":
    sys.exit(main())
