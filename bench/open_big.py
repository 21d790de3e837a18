"""Opening a long growing-history run in the window: read + fold + first paint (issue 18).

What is measured: runs recorded by the engine into a store (bench/reports.py's scripted turn of
N ``lookup`` tool calls and a final answer; every request re-sends the whole history, which
grows with the turn) at N = 1,000, 10,000 and 100,000. Each is opened in a fresh process, the
way the window opens a stored run: ``Store.load`` (the read), ``LiveRun.from_record`` with the
collector held (the fold) and the timeline + step detail painted once with the last step
selected (bench/gui.py's ``open_timeline``), offscreen at 1400×900, the collector as in the
window (``GuiThreadCollector``: automatic collection off). Wall times inside the
child (the window waits for the wall clock) and the child's CPU time for the whole, medians.

Peer, same run: bench/reports.py's raw SQLite read of the run's rows and the messages/frames
they reference, with ``json.loads`` of every JSON column (the floor of any reader).

Goals: the 100,000-step run opens (read + fold + first paint) in < 2 s; per-step open cost at
10,000 and 100,000 steps within 1.5x of the 1,000-step figure.

Usage: ``python bench/open_big.py [--write bench/RESULTS.md] [--quick]`` (``--quick``: 1,000
and 10,000 steps, one run each).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

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


def measure(steps: int, runs: int, folder: Path) -> dict[str, float]:
    db = folder / f"open-{steps}.sqlite3"
    start = time.perf_counter()
    run_id = asyncio.run(record(db, steps, "You are a research agent."))
    recorded = time.perf_counter() - start
    here = Path(__file__).resolve()
    samples: dict[str, list[float]] = {}
    for _ in range(runs):
        argv = [sys.executable, str(here), "--child", str(db), run_id, str(steps)]
        for key, value in inner(argv).items():
            samples.setdefault(key, []).append(value)
        samples.setdefault("peer", []).append(
            inner([sys.executable, "-c", PEER, str(db), run_id])["s"]
        )
    out = {key: statistics.median(values) for key, values in samples.items()}
    out["open"] = statistics.median(
        r + f + p
        for r, f, p in zip(samples["read"], samples["fold"], samples["paint"], strict=True)
    )
    out["recorded"], out["size"] = recorded, db.stat().st_size
    print(f"{steps} steps: {out}", file=sys.stderr)
    return out


def section(results: dict[int, dict[str, float]], quick: bool) -> tuple[str, bool]:
    first = min(results)
    base = results[first]["open"] / first
    rows = [
        "| steps | open (read + fold + paint) | read | fold | first paint | CPU | peak memory "
        "| per step vs 1,000 | peer: raw SQLite + `json.loads` | ratio | recorded in, store |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    checks: list[tuple[str, bool]] = []
    for steps, r in sorted(results.items()):
        growth = r["open"] / steps / base
        rows.append(
            f"| {steps:,} | {r['open']:.2f} s | {r['read']:.2f} s | {r['fold']:.2f} s | "
            f"{r['paint'] * 1000:.0f} ms | {r['cpu']:.2f} s | {r['mb']:.0f} MB | {growth:.2f}x | "
            f"{r['peer']:.2f} s CPU | {r['open'] / r['peer']:.1f}x | {r['recorded']:.0f} s, "
            f"{r['size'] / 2**20:.0f} MiB |"
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
    text = f"""{SECTION}

{machine()}. {"--quick: 1,000 and 10,000 steps" if quick else "Medians of the opens"}, each in a
fresh process; load average at the start {os.getloadavg()[0]:.1f} (the machine is shared).
Reproduce with `python bench/open_big.py --write bench/RESULTS.md`.

{chr(10).join(rows)}

{verdicts}

Runs recorded by the engine (scripted `lookup` calls, every request re-sending the whole
history). Read: `Store.load` (wall); fold: `LiveRun.from_record`, collector held; first paint:
the timeline and step detail shown with the last step selected (bench/gui.py). The peer's
figure is CPU time of a separate process reading the same rows (no objects built).
"""
    return text, all(ok for _, ok in checks)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, metavar="RESULTS_MD")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--runs", type=int, help="opens per length (default 3, --quick 1)")
    parser.add_argument(
        "--child", nargs=3, metavar=("DB", "RUN_ID", "STEPS"), help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    if args.child:
        child(args.child[0], args.child[1], int(args.child[2]))
        return 0
    lengths, runs = (QUICK_LENGTHS, QUICK_RUNS) if args.quick else (LENGTHS, RUNS)
    runs = args.runs or runs
    with tempfile.TemporaryDirectory(prefix="agent-inspector-open-") as tmp:
        results = {n: measure(n, runs, Path(tmp)) for n in lengths}
    text, passed = section(results, args.quick)
    print(text)
    if args.write:
        write_section(args.write, SECTION, text)
    return 0 if passed or args.quick else 1


if __name__ == "__main__":
    sys.exit(main())
