"""Opening a long growing-history run in the window: read + first paint (issue 18).

What is measured: runs recorded by the engine into a store (bench/reports.py's scripted turn of
N ``lookup`` tool calls and a final answer; every request re-sends the whole history, which
grows with the turn) at N = 1,000, 10,000 and 100,000, each opened in a fresh process,
offscreen at 1400×900, the collector as in the window (``GuiThreadCollector``: automatic
collection off), two ways:

- *Window now* (``light_child``), as ``app/shell/stored_open.py`` opens a stored run: a run of
  ``LIGHT_FROM`` steps or more from the store's light read (``load_light_run``), shown and
  painted with the last step selected (bench/gui.py); then the full read and fold
  (``load_stored_run``) on a worker thread while the UI thread ticks every ``TICK_MS`` (the
  longest gap is the stall), the swap (``LiveRun.fill`` + the timeline repainted) and the light
  steps released beside the UI thread. A shorter run is read whole, as the window does.
- *Before* (``child``): ``Store.load`` (the read), ``LiveRun.from_record`` with the collector
  held (the fold) and the first paint: how the window opened every run before.

Wall times inside the child (the window waits for the wall clock) and the child's CPU time for
the open, medians. Peer, same run: bench/reports.py's raw SQLite read of the run's rows and the
messages/frames they reference, with ``json.loads`` of every JSON column (the floor of any
reader that builds the whole run).

Goals: the 100,000-step run opens (read + fold + first paint) in < 2 s; per-step open cost at
10,000 and 100,000 steps within 1.5x of the 1,000-step figure.

Usage: ``python bench/open_big.py [--write bench/RESULTS.md] [--quick] [--runs N] [--stores
DB ...]`` (``--quick``: 1,000 and 10,000 steps, one run each; ``--stores``: open the run of
each of these stores, recorded by this bench before, instead of recording new ones).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

# This checkout's inspector, not the installed one (an editable install of another tree):
# before bench/reports.py and bench/engine.py import it.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine import machine  # bench/engine.py (same folder)
from reports import PEER, inner, record  # bench/reports.py
from results import write_section  # bench/results.py

SECTION = "## Opening a long growing-history run in the window (bench/open_big.py)"
LENGTHS, QUICK_LENGTHS = (1_000, 10_000, 100_000), (1_000, 10_000)
RUNS, QUICK_RUNS = 3, 1
OPEN_GOAL_S = 2.0
GROWTH_GOAL = 1.5
TICK_MS = 5  # the UI thread's heartbeat while the full read runs beside it


def child(db: str, run_id: str, steps: int) -> None:
    """In a fresh process: read, fold, first paint; one JSON line of seconds and peak MB."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from gui import open_timeline  # bench/gui.py
    from PySide6.QtWidgets import QApplication

    from inspector.app.runtime.gui_collector import GuiThreadCollector, collection_held
    from inspector.store import Store

    app = QApplication([])
    collector = GuiThreadCollector()  # as in the window: no automatic collection
    cpu0, start = time.process_time(), time.perf_counter()
    with Store.open(Path(db)) as store, collection_held():
        loaded = store.load(run_id)
    read = time.perf_counter() - start
    assert len(loaded.steps) == steps + 1
    shown, fold, window, _timeline = open_timeline(app, loaded)
    cpu = time.process_time() - cpu0
    status = Path("/proc/self/status").read_text().splitlines()
    peak = next(int(line.split()[1]) / 1024 for line in status if line.startswith("VmHWM:"))
    print(json.dumps({"read": read, "fold": fold, "paint": shown - fold, "cpu": cpu, "mb": peak}))
    window.close()
    collector.stop()


def light_child(db: str, run_id: str, steps: int) -> None:
    """In a fresh process, as the window opens a stored run (``app/shell/stored_open.py``):
    the light read shown and painted, then the full read and fold on a worker thread while
    the UI thread ticks every ``TICK_MS`` (its longest gap is the stall), then the full steps
    put in place and painted again. One JSON line of seconds and peak MB."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from gui import painted, show_timeline  # bench/gui.py
    from PySide6.QtWidgets import QApplication

    from inspector.app.runtime.gui_collector import (
        GuiThreadCollector,
        collection_held,
        settle_loaded,
    )
    from inspector.core.lazy_steps import light_rows
    from inspector.workflows.runs import load_light_run, load_stored_run

    app = QApplication([])
    collector = GuiThreadCollector()
    cpu0, start = time.process_time(), time.perf_counter()
    with collection_held():  # a short run is read whole, as the window does
        run = load_light_run(Path(db), run_id) or load_stored_run(Path(db), run_id)
        assert len(run.steps) == steps + 1
    read = time.perf_counter() - start
    settle_loaded()
    window, timeline, detail = show_timeline(run)
    paint = painted(app, timeline, start) - read
    cpu = time.process_time() - cpu0
    rows = light_rows(run)
    built = rows.built() if rows is not None else steps + 1
    out = {"read": read, "fold": 0.0, "paint": paint, "cpu": cpu, "built": built}
    out |= fill(app, run, db, run_id, timeline, detail) if run.light else {}
    status = Path("/proc/self/status").read_text().splitlines()
    out["mb"] = next(int(line.split()[1]) / 1024 for line in status if line.startswith("VmHWM:"))
    print(json.dumps(out))
    window.close()
    collector.stop()


def fill(app: Any, run: Any, db: str, run_id: str, timeline: Any, detail: Any) -> dict[str, float]:
    """As ``stored_open.fill``: the full read beside the UI thread, the swap, the light steps
    released beside it. Seconds, and the UI thread's longest gap beside either."""
    from gui import painted  # bench/gui.py

    from inspector.app.runtime.gui_collector import collection_held, settle_loaded
    from inspector.core.lazy_steps import light_rows
    from inspector.workflows.runs import load_stored_run

    result: list[Any] = []

    def work() -> None:
        with collection_held():
            result.append(load_stored_run(Path(db), run_id))

    fill0 = time.perf_counter()
    gap = beside(app, work)
    read_full = time.perf_counter() - fill0
    swap0 = time.perf_counter()
    light = light_rows(run)
    run.fill(result[0])
    timeline.steps_filled()
    detail.show_step(run, detail.current_step, soon=True)
    settle_loaded()
    swapped = painted(app, timeline, swap0)
    gap = max(gap, beside(app, light.release))
    return {"full": read_full, "gap": gap, "swap": swapped}


def beside(app: Any, work: Any) -> float:
    """Runs ``work`` on a thread while the UI thread ticks every ``TICK_MS``: the longest gap
    between ticks beyond ``TICK_MS``, in seconds."""
    from PySide6.QtCore import QTimer

    gaps, last = [0.0], [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        gaps[0] = max(gaps[0], now - last[0] - TICK_MS / 1000)
        last[0] = now

    timer = QTimer()
    timer.timeout.connect(tick)
    timer.start(TICK_MS)
    worker = threading.Thread(target=work)
    worker.start()
    while worker.is_alive():
        app.processEvents()
        time.sleep(0.001)
    timer.stop()
    return gaps[0]


def measure(
    steps: int, runs: int, folder: Path, store: Path | None = None
) -> dict[str, dict[str, float]]:
    """{"whole": the whole read's figures, "light": the light open's, "peer": ...} medians."""
    if store is None:
        db = folder / f"open-{steps}.sqlite3"
        start = time.perf_counter()
        run_id = asyncio.run(record(db, steps, "You are a research agent."))
        recorded = time.perf_counter() - start
    else:
        db, recorded = store, float("nan")
        run_id, steps = stored_run(store)
    here = Path(__file__).resolve()
    out: dict[str, dict[str, float]] = {}
    samples: dict[str, dict[str, list[float]]] = {"whole": {}, "light": {}}
    for _ in range(runs):
        for how in ("whole", "light"):
            argv = [sys.executable, str(here), f"--{how}-child", str(db), run_id, str(steps)]
            for key, value in inner(argv).items():
                samples[how].setdefault(key, []).append(value)
        samples["whole"].setdefault("peer", []).append(
            inner([sys.executable, "-c", PEER, str(db), run_id])["s"]
        )
    for how, got in samples.items():
        out[how] = {key: statistics.median(values) for key, values in got.items()}
        out[how]["open"] = statistics.median(
            r + f + p for r, f, p in zip(got["read"], got["fold"], got["paint"], strict=True)
        )
        out[how]["recorded"], out[how]["size"] = recorded, db.stat().st_size
    out["light"]["peer"] = out["whole"]["peer"]
    print(f"{steps} steps: {out}", file=sys.stderr)
    return out


def stored_run(store: Path) -> tuple[str, int]:
    """The (only, else newest) run of an existing store and its step count minus the final
    answer's (as ``record`` makes them: N tool calls and one answer)."""
    import sqlite3

    conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    run_id, steps = conn.execute(
        "SELECT run_id, steps FROM runs ORDER BY started_at DESC"
    ).fetchone()
    conn.close()
    return str(run_id), int(steps) - 1


def section(
    results: dict[int, dict[str, dict[str, float]]], quick: bool, stores: bool
) -> tuple[str, bool]:
    first = min(results)
    base = results[first]["light"]["open"] / first
    rows = [
        "| steps | window now: open (read + first paint) | read | first paint | steps built "
        "| CPU | full read beside it; longest UI gap | swap + paint | before: whole read + fold "
        "+ paint (read) | peak memory now / before | per step vs first | peer: raw SQLite + "
        "`json.loads` | store |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    checks: list[tuple[str, bool]] = []
    for steps, both in sorted(results.items()):
        r, w = both["light"], both["whole"]
        growth = r["open"] / steps / base
        fill = (
            f"{r['full']:.2f} s; {r['gap'] * 1000:.0f} ms | {r['swap'] * 1000:.0f} ms"
            if "full" in r
            else "– (read whole) | –"
        )
        rows.append(
            f"| {steps:,} | {r['open']:.2f} s | {r['read']:.2f} s | {r['paint'] * 1000:.0f} ms | "
            f"{r['built']:,.0f} | {r['cpu']:.2f} s | {fill} | {w['open']:.2f} s "
            f"({w['read']:.2f} s) | {r['mb']:.0f} / {w['mb']:.0f} MB | {growth:.2f}x | "
            f"{w['peer']:.2f} s CPU | {r['size'] / 2**20:.0f} MiB |"
        )
        if steps != first:
            checks.append(
                (
                    f"per-step open cost at {steps:,} ≤ {GROWTH_GOAL}x {first:,} ({growth:.2f}x)",
                    growth <= GROWTH_GOAL,
                )
            )
        if steps >= 100_000:
            checks.append(
                (
                    f"{steps:,}-step run opens < {OPEN_GOAL_S:.0f} s ({r['open']:.2f} s)",
                    r["open"] < OPEN_GOAL_S,
                )
            )
    verdicts = "\n".join(f"- {'PASS' if ok else 'FAIL'}: {text}" for text, ok in checks)
    what = "--quick: 1,000 and 10,000 steps" if quick else "Medians of the opens"
    source = "existing stores (`--stores`)" if stores else "runs recorded by the bench"
    text = f"""{SECTION}

{machine()}. {what}, each in a fresh process, {source}; load average at the start
{os.getloadavg()[0]:.1f} (the machine is shared).
Reproduce with `python bench/open_big.py --write bench/RESULTS.md` (records the runs; `--stores
A.sqlite3 B.sqlite3 …` opens runs recorded so before).

{chr(10).join(rows)}

{verdicts}

Runs recorded by the engine (scripted `lookup` calls, every request re-sending the whole
history). Window now: as `app/shell/stored_open.py` opens a run — a run of `LIGHT_FROM`
(5,000) steps or more from the store's light read (`Store.load_light`: steps built when read),
shown and painted with the last step selected (bench/gui.py); then the full read and fold
(`load_stored_run`) on a worker thread while the UI thread ticks every {TICK_MS} ms (longest
gap between ticks beyond {TICK_MS} ms), then `LiveRun.fill` and the timeline repainted (swap +
paint: one UI-thread turn; the Step detail renders in a turn of its own) and the light steps
released on a worker thread (its gap counted too). Before: the whole read (`Store.load`),
`LiveRun.from_record` and the first paint, as the window opened every run before (and still
opens shorter ones). The peer's
figure is CPU time of a separate process reading the same rows (no objects built).
"""
    return text, all(ok for _, ok in checks)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, metavar="RESULTS_MD")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--runs", type=int, help="opens per length (default 3, --quick 1)")
    parser.add_argument(
        "--stores",
        nargs="+",
        type=Path,
        metavar="DB",
        help="open the runs of these existing stores (one run each, as this bench records "
        "them; opened read-only) instead of recording new ones",
    )
    for how in ("whole", "light"):
        parser.add_argument(
            f"--{how}-child", nargs=3, metavar=("DB", "RUN_ID", "STEPS"), help=argparse.SUPPRESS
        )
    args = parser.parse_args(argv)
    if args.whole_child or args.light_child:
        db, run_id, steps = args.whole_child or args.light_child
        (child if args.whole_child else light_child)(db, run_id, int(steps))
        return 0
    lengths, runs = (QUICK_LENGTHS, QUICK_RUNS) if args.quick else (LENGTHS, RUNS)
    runs = args.runs or runs
    with tempfile.TemporaryDirectory(prefix="agent-inspector-open-") as tmp:
        if args.stores:
            results = {}
            for store in args.stores:
                both = measure(0, runs, Path(tmp), store)
                results[stored_run(store)[1]] = both
        else:
            results = {n: measure(n, runs, Path(tmp)) for n in lengths}
    text, passed = section(results, args.quick, bool(args.stores))
    print(text)
    if args.write:
        write_section(args.write, SECTION, text)
    return 0 if passed or args.quick else 1


if __name__ == "__main__":
    sys.exit(main())
