"""The window's centre and right panes under load: a 100,000-step run, and a fast token stream.

What is measured (offscreen Qt, one process, each figure the median of ``--repeats`` runs):

1. *Open*: a generated run of 100,000 steps (100 attempts of 1,000 steps; every attempt's last
   step a validated candidate, all but the last cleared) is folded into a ``LiveRun`` (what the
   window does on a worker thread, with the collector held as there) and opened in a window
   holding the ``TimelineView`` and the ``StepDetail`` beside it, the last step selected. Time
   = fold + building the window + the timeline's first paint. Goal < 2 s with the store's read
   (bench/store.py measures the read). Peer, same rows in the same run: a plain ``QListView``
   over a ``QStringListModel`` holding one line of text per row (batched layout, uniform item
   sizes) — Qt's floor for 100k rows.
2. *Scroll*: the timeline scrolled top to bottom a page at a time, each page painted
   synchronously (``repaint``); mean and worst per page. Goal: mean < 8 ms, worst < 50 ms.
   Peers: the list above, and a bare ``QTableView`` over the same rows' nine columns of text
   (a Python table model answering the display role from precomputed strings).
3. *Stream*: a 2,000 tokens/s stream of ``TextDelta`` events (one event per token, as a
   provider's deltas arrive) into the timeline, the step detail (Response tab, the streaming
   step shown) and the attempts view, for ``--seconds``; a heartbeat ``QTimer`` every 10 ms
   records the longest gap: the longest event-loop stall is that gap minus 10 ms. Goal < 50 ms.
   Peer: the same stream appended straight into a bare ``QPlainTextEdit``.

The collector runs as in the window (``GuiThreadCollector``: automatic collection off, checks on
the GUI thread) and the folded run is frozen out of its scans (``settle_loaded``).

Usage: ``QT_QPA_PLATFORM=offscreen python bench/gui.py [--write bench/RESULTS.md] [--quick]``.
Exit status 1 when a goal is missed (not with ``--quick``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# This checkout's inspector, not the installed one (an editable install of another tree).
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PySide6.QtCore import (
    QAbstractTableModel,
    QElapsedTimer,
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QStringListModel,
    Qt,
    QTimer,
)
from PySide6.QtWidgets import (
    QApplication,
    QListView,
    QPlainTextEdit,
    QSplitter,
    QTableView,
    QWidget,
)
from results import write_section  # bench/results.py (this folder is on sys.path)

from inspector.app.detail.attempts_view import AttemptsView
from inspector.app.detail.step_detail import RESPONSE, StepDetail
from inspector.app.runtime.gui_collector import GuiThreadCollector, collection_held, settle_loaded
from inspector.app.runtime.refcount_guard import immortalize_none
from inspector.app.timeline.timeline_view import TimelineView
from inspector.core.events import Event, RunStarted, StepStarted, TextDelta
from inspector.core.live import LiveRun
from inspector.core.messages import Message, ToolCall
from inspector.core.policy import Policy
from inspector.core.records import (
    Budgets,
    RunRecord,
    Step,
    StepRequest,
    StepResponse,
    ToolSpec,
    Usage,
    Verdict,
)
from inspector.sweeps.cost import run_cost
from inspector.timeline import step_line

SECTION = "## Window (bench/gui.py)"
STEPS, ATTEMPTS = 100_000, 100
PAINT_GOAL_S = 2.0
SCROLL_MEAN_GOAL_MS, SCROLL_WORST_GOAL_MS = 8.0, 50.0
STALL_GOAL_MS = 50.0
TOKENS_PER_S = 2_000
HEARTBEAT_MS = 10
WINDOW = (1400, 900)


def generated_record(steps: int = STEPS, attempts: int = ATTEMPTS) -> RunRecord:
    """A finished run of ``steps`` steps; built with ``model_construct`` (no validation) so the
    bench measures the window, not pydantic."""
    request = StepRequest.model_construct(
        system="You are a bench.",
        messages=[Message(role="user", content="go")],
        tools=[ToolSpec(name="lookup", description="Look something up")],
        tool_choice="auto",
        response_format=None,
    )
    per_attempt = steps // attempts
    built: list[Step] = []
    for i in range(1, steps + 1):
        attempt = (i - 1) // per_attempt + 1
        last_of_attempt = i % per_attempt == 0
        if last_of_attempt:
            ok = attempt == attempts
            response = StepResponse.model_construct(
                text=f"candidate answer {attempt}",
                tool_calls=[],
                finish_reason="stop",
                usage=Usage.model_construct(input_tokens=40 + i % 97, output_tokens=12),
                refusal=None,
                reasoning=None,
            )
            verdicts = [
                Verdict.model_construct(
                    validator="max_length",
                    ok=ok,
                    status="pass" if ok else "fail",
                    reason="" if ok else "171 characters > 160",
                    feedback=None,
                ),
                Verdict.model_construct(
                    validator="no_markdown", ok=True, status="pass", reason="", feedback=None
                ),
            ]
            status = "success" if ok else "failed_validation"
        else:
            call = ToolCall(id=f"call_{i}", name="lookup", arguments={"q": f"x{i}"})
            response = StepResponse.model_construct(
                text="",
                tool_calls=[call],
                finish_reason="tool_calls",
                usage=Usage.model_construct(input_tokens=40 + i % 97, output_tokens=4),
                refusal=None,
                reasoning=None,
            )
            verdicts, status = [], "success"
        built.append(
            Step.model_construct(
                index=i,
                attempt=attempt,
                status=status,
                request=request,
                response=response,
                tool_results=[],
                verdicts=verdicts,
                feedback=[],
                forced=None,
                cleared=last_of_attempt and attempt != attempts,
                internal_tool=False,
                latency_ms=20.0 + (i * 37) % 400,
                ttft_ms=10.0,
                error=None,
                raw=None,
            )
        )
    return RunRecord.model_construct(
        version=1,
        run_id="bench",
        scenario="bench",
        started_at="2026-01-01T00:00:00Z",
        duration_ms=0.0,
        policy=Policy(),
        status="succeeded",
        termination="stop",
        budgets=Budgets(max_attempts=attempts, max_steps=steps),
        output=None,
        error=None,
        usage=Usage(),
        replay_of=None,
        steps=built,
        transcript=[],
        provider="scripted",
        model="bench",
        fallback_trigger=None,
        scenario_source={},
        scenario_dir="",
        scenario_origin="",
        overrides=[],
    )


class _PaintWatch(QObject):
    """Notes when a widget has painted."""

    def __init__(self, target: QWidget) -> None:
        super().__init__()
        self.painted = False
        target.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.painted = True
        return False


def _until_painted(app: QApplication, viewport: QWidget, start: float) -> float:
    watch = _PaintWatch(viewport)
    while not watch.painted:
        app.processEvents()
    viewport.removeEventFilter(watch)
    return time.perf_counter() - start


def open_timeline(
    app: QApplication, record: RunRecord
) -> tuple[float, float, QWidget, TimelineView]:
    """(fold + first paint seconds, fold seconds, window, timeline)."""
    start = time.perf_counter()
    with collection_held():
        run = LiveRun.from_record(record)
    settle_loaded()
    fold = time.perf_counter() - start
    window, timeline, _detail = show_timeline(run)
    return _until_painted(app, timeline.table.viewport(), start), fold, window, timeline


def show_timeline(run: LiveRun) -> tuple[QWidget, TimelineView, StepDetail]:
    """The timeline and step detail showing ``run``, its last step selected (not painted yet:
    ``painted``)."""
    window = QSplitter()
    timeline = TimelineView(window)
    detail = StepDetail(window)
    window.addWidget(timeline)
    window.addWidget(detail)
    window.resize(*WINDOW)
    timeline.stepSelected.connect(lambda index: detail.show_step(run, index))
    timeline.show_run(run)
    timeline.select_last()
    window.show()
    return window, timeline, detail


def painted(app: QApplication, timeline: TimelineView, start: float) -> float:
    """Seconds from ``start`` until ``timeline``'s rows were painted."""
    return _until_painted(app, timeline.table.viewport(), start)


class _TextTable(QAbstractTableModel):
    """The bare peer: precomputed strings, the display role only."""

    def __init__(self, rows: list[tuple[str, ...]]) -> None:
        super().__init__()
        self._rows = rows

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else 9

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = 0) -> object:
        if role == Qt.ItemDataRole.DisplayRole and index.isValid():
            return self._rows[index.row()][index.column()]
        return None


def open_table_peer(app: QApplication, rows: list[tuple[str, ...]]) -> tuple[float, QTableView]:
    start = time.perf_counter()
    view = QTableView()
    view.verticalHeader().setSectionResizeMode(view.verticalHeader().ResizeMode.Fixed)
    view.verticalHeader().setVisible(False)
    view.setModel(_TextTable(rows))
    view.resize(*WINDOW)
    view.show()
    return _until_painted(app, view.viewport(), start), view


def open_peer(app: QApplication, lines: list[str]) -> tuple[float, QListView]:
    start = time.perf_counter()
    view = QListView()
    view.setLayoutMode(QListView.LayoutMode.Batched)
    view.setUniformItemSizes(True)
    view.setModel(QStringListModel(lines, view))
    view.resize(*WINDOW)
    view.show()
    return _until_painted(app, view.viewport(), start), view


def scroll_through(
    app: QApplication, view: QListView | QTableView | QWidget
) -> tuple[float, float, int, float]:
    """Pages top to bottom; (mean ms per page, worst ms, pages, mean CPU ms of this thread per
    page: on a shared machine the wall time also counts other jobs' time slices)."""
    bar = view.verticalScrollBar()  # type: ignore[attr-defined]
    viewport = view.viewport()  # type: ignore[attr-defined]
    times: list[float] = []
    cpu: list[float] = []
    value = 0
    bar.setValue(0)
    while True:
        start, start_cpu = time.perf_counter(), time.thread_time()
        bar.setValue(value)
        viewport.repaint()
        app.processEvents()
        times.append((time.perf_counter() - start) * 1000)
        cpu.append((time.thread_time() - start_cpu) * 1000)
        if value >= bar.maximum():
            break
        value = min(bar.maximum(), value + max(1, bar.pageStep()) * 50)
    return statistics.mean(times), max(times), len(times), statistics.mean(cpu)


def stream(app: QApplication, seconds: float, sinks: list[Callable[[Event], None]]) -> float:
    """Feeds a 2,000 tokens/s stream for ``seconds``; returns the longest stall in ms."""
    gaps: list[float] = []
    clock = QElapsedTimer()
    clock.start()
    last = [clock.nsecsElapsed()]
    sent = [0]
    done = [False]

    def beat() -> None:
        now = clock.nsecsElapsed()
        gaps.append((now - last[0]) / 1e6)
        last[0] = now

    def feed() -> None:
        due = int(clock.nsecsElapsed() / 1e9 * TOKENS_PER_S)
        while sent[0] < due:
            n = sent[0]
            text = "\n" if n % 200 == 199 else f"tok{n % 1000} "
            event = TextDelta(run_id="stream", index=1, text=text)
            for sink in sinks:
                sink(event)
            sent[0] += 1
        if clock.elapsed() >= seconds * 1000:
            done[0] = True

    heartbeat = QTimer()
    heartbeat.setTimerType(Qt.TimerType.PreciseTimer)
    heartbeat.timeout.connect(beat)
    heartbeat.start(HEARTBEAT_MS)
    feeder = QTimer()
    feeder.setTimerType(Qt.TimerType.PreciseTimer)
    feeder.timeout.connect(feed)
    feeder.start(2)
    while not done[0]:
        app.processEvents()
        time.sleep(0.0005)  # yield like an idle event loop would
    heartbeat.stop()
    feeder.stop()
    assert sent[0] >= seconds * TOKENS_PER_S * 0.9, "the feeder fell behind"
    return max(gaps) - HEARTBEAT_MS


def streaming_views(app: QApplication) -> tuple[list[Callable[[Event], None]], QWidget]:
    run = LiveRun()
    window = QSplitter()
    timeline, detail, attempts = TimelineView(window), StepDetail(window), AttemptsView(window)
    for w in (timeline, detail, attempts):
        window.addWidget(w)
    window.resize(*WINDOW)
    timeline.show_run(run)
    attempts.show_run(run)
    request = StepRequest(system="s", messages=[Message(role="user", content="go")])
    for event in (
        RunStarted(
            run_id="stream",
            scenario="bench",
            started_at="",
            policy=Policy(),
            provider="scripted",
            model="bench",
        ),
        StepStarted(run_id="stream", index=1, attempt=1, request=request),
    ):
        run.apply(event)
        timeline.on_event(event)
        attempts.on_event(event)
    detail.tabs.setCurrentIndex(RESPONSE)
    detail.show_step(run, 1)
    window.show()
    app.processEvents()

    def into_views(event: Event) -> None:
        run.apply(event)
        timeline.on_event(event)
        detail.on_event(event)
        attempts.on_event(event)

    return [into_views], window


def streaming_peer(app: QApplication) -> tuple[list[Callable[[Event], None]], QWidget]:
    edit = QPlainTextEdit()
    edit.setReadOnly(True)
    edit.resize(*WINDOW)
    edit.show()
    app.processEvents()

    def append(event: Event) -> None:
        assert isinstance(event, TextDelta)
        cursor = edit.textCursor()
        cursor.movePosition(cursor.MoveOperation.End)
        cursor.insertText(event.text)

    return [append], edit


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, help="replace this file's section with the results")
    parser.add_argument("--quick", action="store_true", help="10,000 steps, 1 s stream, 1 run")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    immortalize_none()  # shiboken6 6.12.0 on CPython 3.11 leaks None refs (see the module)
    steps = 10_000 if args.quick else STEPS
    repeats = 1 if args.quick else args.repeats
    seconds = 1.0 if args.quick else args.seconds
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    collector = GuiThreadCollector()  # as in the window: no automatic collection
    # The window loads the price table on a worker thread at start-up (the timeline's outcome
    # header), long before a user opens a run: loaded here before anything is timed, so its
    # ~0.2 s on the other thread does not compete with the first open for the GIL.
    run_cost("gpt-4o-mini", "openai", 1, 1)

    # The stream first, on a small heap: with a 100,000-step record alive, CPython's full
    # garbage collections pause any Python program for ~100 ms (the bare peer too).
    stall, peer_stall = [], []
    for _ in range(repeats):
        sinks, widget = streaming_views(app)
        stall.append(stream(app, seconds, sinks))
        widget.close()
        widget.deleteLater()
        sinks, widget = streaming_peer(app)
        peer_stall.append(stream(app, seconds, sinks))
        widget.close()
        widget.deleteLater()
        app.processEvents()

    t = time.perf_counter()
    with collection_held():
        record = generated_record(steps)
    settle_loaded()
    build_s = time.perf_counter() - t
    lines = [step_line(s) for s in record.steps]
    cells = [
        (
            str(s.index),
            str(s.attempt),
            "tool call" if s.response and s.response.tool_calls else "final",
            s.status,
            s.response.text if s.response else "",
            " ".join(f"{v.validator}: {v.status}" for v in s.verdicts),
            "cleared" if s.cleared else "",
            f"{s.response.usage.input_tokens} / {s.response.usage.output_tokens}"
            if s.response
            else "",
            f"{s.latency_ms:,.0f} ms",
        )
        for s in record.steps
    ]

    paint: list[float] = []
    folds: list[float] = []
    peer_paint: list[float] = []
    table_paint: list[float] = []
    scroll: list[tuple[float, float, int, float]] = []
    peer_scroll: list[tuple[float, float, int, float]] = []
    table_scroll: list[tuple[float, float, int, float]] = []
    for _ in range(repeats):
        seconds_, fold_s, window, timeline = open_timeline(app, record)
        paint.append(seconds_)
        folds.append(fold_s)
        scroll.append(scroll_through(app, timeline.table))
        window.close()
        window.deleteLater()
        seconds_, peer = open_peer(app, lines)
        peer_paint.append(seconds_)
        peer_scroll.append(scroll_through(app, peer))
        peer.close()
        peer.deleteLater()
        seconds_, table = open_table_peer(app, cells)
        table_paint.append(seconds_)
        table_scroll.append(scroll_through(app, table))
        table.close()
        table.deleteLater()
        app.processEvents()
    collector.stop()

    med = statistics.median
    paint_s, peer_paint_s = med(paint), med(peer_paint)
    scroll_mean = med(s[0] for s in scroll)
    scroll_worst = max(s[1] for s in scroll)
    peer_mean = med(s[0] for s in peer_scroll)
    table_mean, table_worst = med(s[0] for s in table_scroll), max(s[1] for s in table_scroll)
    scroll_cpu, table_cpu = med(s[3] for s in scroll), med(s[3] for s in table_scroll)
    stall_ms, peer_stall_ms = max(stall), max(peer_stall)
    scroll_ok = scroll_mean < SCROLL_MEAN_GOAL_MS and scroll_worst < SCROLL_WORST_GOAL_MS
    ok = paint_s < PAINT_GOAL_S and stall_ms < STALL_GOAL_MS and scroll_ok
    verdict = lambda good: "met" if good else "MISSED"  # noqa: E731
    rows = [
        ("what", "inspector", "peer", "ratio", "goal"),
        ("---",) * 5,
        (
            "fold + first paint (timeline + step detail, last step selected)",
            f"{paint_s * 1000:.0f} ms (fold {med(folds) * 1000:.0f} ms)",
            f"{peer_paint_s * 1000:.0f} ms (QListView + QStringListModel); "
            f"{med(table_paint) * 1000:.0f} ms (bare QTableView)",
            f"{paint_s / peer_paint_s:.1f}x",
            f"< 2 s with the read: {verdict(paint_s < PAINT_GOAL_S)} (fold + paint)",
        ),
        (
            "scroll through, per page painted (mean / worst; CPU mean)",
            f"{scroll_mean:.1f} / {scroll_worst:.1f} ms; CPU {scroll_cpu:.1f} ms "
            f"({scroll[0][2]} pages)",
            f"{table_mean:.1f} / {table_worst:.1f} ms; CPU {table_cpu:.1f} ms (bare QTableView); "
            f"{peer_mean:.1f} ms (QListView)",
            f"{scroll_mean / table_mean:.1f}x (CPU {scroll_cpu / table_cpu:.1f}x)",
            f"< 8 / < 50 ms: {verdict(scroll_ok)}",
        ),
        (
            f"longest event-loop stall, 2,000 tokens/s for {seconds:.0f} s into "
            "timeline + detail + attempts",
            f"{stall_ms:.1f} ms",
            f"{peer_stall_ms:.1f} ms (bare QPlainTextEdit append)",
            "—",
            f"< 50 ms: {verdict(stall_ms < STALL_GOAL_MS)}",
        ),
    ]
    table = "\n".join("| " + " | ".join(row) + " |" for row in rows)
    text = f"""{SECTION}

Measured {dt.date.today().isoformat()} on {platform.machine()}, {os.cpu_count()} cores,
Python {platform.python_version()}, PySide6 {version("PySide6-Essentials")}, \
QT_QPA_PLATFORM={os.environ.get("QT_QPA_PLATFORM")}; median of {repeats} run(s).
Run: {steps:,} steps in {ATTEMPTS} attempts (generated: {build_s:.2f} s, not counted).

{table}

The peer list holds only strings, so it is the floor: the timeline's cost over it is the
price of chips, markers, latency bars and the step detail beside it. Pages are 50 scroll
steps apart; each is a synchronous repaint of the visible rows. The bare QTableView's default
delegate reads ~8 roles a cell from its Python model; the timeline's delegate reads one
(`TimelineRole.PAINT`). Collection as in the window: `GuiThreadCollector`, the record frozen
by `settle_loaded` (bench/window.py measures a full collection with a 100,000-step run shown).
"""
    print(text)
    if args.write:
        write_section(args.write, SECTION, text)
    return 0 if ok or args.quick else 1


if __name__ == "__main__":
    sys.exit(main())
