"""One full repaint of the timeline's visible rows, as a scroll by a page paints it.

A generated run (bench/gui.py's: 100 attempts of 1,000 steps, 100,000 steps by default) is
shown in a ``TimelineView`` at 1400×900 (bench/gui.py's window size), the last step selected
as there, the collector run as in the window (``GuiThreadCollector``). The viewport is
scrolled to ``--repeats`` places spread over the run (rows not painted before, as
bench/gui.py's scroll paints them) and, at each, repainted synchronously (``repaint``) three
times: the UI thread's CPU time (``time.thread_time``, which the other jobs of a shared
machine do not inflate) of the first paint there (*new rows*), of the second (*again*: a
live run's repaints of the rows it shows) and of the third (*a third time*). Medians of
``--repeats``.

To compare with another tree, run this file from both, alternated (it imports the
``inspector`` of the tree it is in)::

    git -C /work/main archive main | tar -x -C /tmp/base
    cp bench/timeline_repaint.py /tmp/base/bench/
    QT_QPA_PLATFORM=offscreen python bench/timeline_repaint.py
    QT_QPA_PLATFORM=offscreen python /tmp/base/bench/timeline_repaint.py

Prints the figures; it has no goal of its own (bench/gui.py's scroll has the goal).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from gui import WINDOW, generated_record  # bench/gui.py
from PySide6.QtWidgets import QApplication

import inspector
from inspector.app.runtime.gui_collector import GuiThreadCollector, collection_held, settle_loaded
from inspector.app.runtime.refcount_guard import immortalize_none
from inspector.app.timeline.timeline_view import TimelineView
from inspector.core.live import LiveRun


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=60)
    parser.add_argument("--profile", type=Path, help="write a cProfile of the new-row paints")
    args = parser.parse_args()
    immortalize_none()
    app = QApplication.instance() or QApplication(sys.argv[:1])
    with collection_held():
        run = LiveRun.from_record(generated_record(args.steps))
    settle_loaded()
    collector = GuiThreadCollector()  # as in the window: no automatic collection
    view = TimelineView()
    view.resize(*WINDOW)
    view.show_run(run)
    view.select_last()
    view.show()
    app.processEvents()
    table = view.table
    bar = table.verticalScrollBar()
    viewport = table.viewport()
    for value in (0, bar.maximum() // 2):  # a first paint: caches of the font and palette made
        bar.setValue(value)
        viewport.repaint()
    profiler = None
    if args.profile is not None:
        import cProfile

        profiler = cProfile.Profile()
    fresh: list[float] = []
    again: list[float] = []
    third: list[float] = []
    for n in range(args.repeats):
        bar.setValue(bar.maximum() * (2 * n + 1) // (2 * args.repeats + 1))  # not painted yet
        if profiler is not None:
            profiler.enable()
        start = time.thread_time()
        viewport.repaint()
        fresh.append((time.thread_time() - start) * 1000)
        if profiler is not None:
            profiler.disable()
        start = time.thread_time()
        viewport.repaint()
        again.append((time.thread_time() - start) * 1000)
        start = time.thread_time()
        viewport.repaint()
        third.append((time.thread_time() - start) * 1000)
        app.processEvents()
    collector.stop()
    rows = table.rowAt(viewport.height() - 1) - table.rowAt(0) + 1
    tree = Path(inspector.__file__).resolve().parents[1]
    print(
        f"{tree}: {args.steps:,} steps, {rows} rows visible, {WINDOW[0]}x{WINDOW[1]}; "
        f"load {os.getloadavg()[0]:.1f}"
    )
    for name, times in (("new rows", fresh), ("again", again), ("a third time", third)):
        print(
            f"  {name}: median {statistics.median(times):.2f} ms CPU per full repaint "
            f"(min {min(times):.2f}, {len(times)} repaints)"
        )
    if profiler is not None:
        profiler.dump_stats(args.profile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
