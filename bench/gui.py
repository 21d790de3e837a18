"""The window's centre and right panes under load: a 100,000-step run, and a fast token stream.

What is measured (offscreen Qt, one process, each figure the median of ``--repeats`` runs):

1. *Open*: a generated run of 100,000 steps (100 attempts of 1,000 steps; every attempt's last
   step a validated candidate, all but the last cleared) is opened in a window holding the
   ``TimelineView`` and the ``StepDetail`` beside it, the last step selected. Time to first
   paint = from building the window to the timeline's viewport having painted. Goal < 1 s.
   Peer, same rows in the same run: a plain ``QListView`` over a ``QStringListModel`` holding
   one line of text per row (batched layout, uniform item sizes) — Qt's floor for 100k rows.
2. *Scroll*: the timeline scrolled top to bottom a page at a time, each page painted
   synchronously (``repaint``); mean and worst per page. Same for the peer.
3. *Stream*: a 2,000 tokens/s stream of ``TextDelta`` events (one event per token, as a
   provider's deltas arrive) into the timeline, the step detail (Response tab, the streaming
   step shown) and the attempts view, for ``--seconds``; a heartbeat ``QTimer`` every 10 ms
   records the longest gap: the longest event-loop stall is that gap minus 10 ms. Goal < 50 ms.
   Peer: the same stream appended straight into a bare ``QPlainTextEdit``.

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

from PySide6.QtCore import QElapsedTimer, QEvent, QObject, QStringListModel, Qt, QTimer
from PySide6.QtWidgets import (
    QApplication,
    QListView,
    QPlainTextEdit,
    QSplitter,
    QWidget,
)
from results import write_section  # bench/results.py (this folder is on sys.path)

from inspector.app.detail.attempts_view import AttemptsView
from inspector.app.detail.step_detail import RESPONSE, StepDetail
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
from inspector.timeline import step_line

SECTION = "## Window (bench/gui.py)"
STEPS, ATTEMPTS = 100_000, 100
PAINT_GOAL_S = 1.0
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


def open_timeline(app: QApplication, run: LiveRun) -> tuple[float, QWidget, TimelineView]:
    start = time.perf_counter()
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
    return _until_painted(app, timeline.table.viewport(), start), window, timeline


def open_peer(app: QApplication, lines: list[str]) -> tuple[float, QListView]:
    start = time.perf_counter()
    view = QListView()
    view.setLayoutMode(QListView.LayoutMode.Batched)
    view.setUniformItemSizes(True)
    view.setModel(QStringListModel(lines, view))
    view.resize(*WINDOW)
    view.show()
    return _until_painted(app, view.viewport(), start), view


def scroll_through(app: QApplication, view: QListView | QWidget) -> tuple[float, float, int]:
    """Pages top to bottom; (mean ms per page, worst ms, pages)."""
    bar = view.verticalScrollBar()  # type: ignore[attr-defined]
    viewport = view.viewport()  # type: ignore[attr-defined]
    times: list[float] = []
    value = 0
    bar.setValue(0)
    while True:
        start = time.perf_counter()
        bar.setValue(value)
        viewport.repaint()
        app.processEvents()
        times.append((time.perf_counter() - start) * 1000)
        if value >= bar.maximum():
            break
        value = min(bar.maximum(), value + max(1, bar.pageStep()) * 50)
    return statistics.mean(times), max(times), len(times)


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
    record = generated_record(steps)
    build_s = time.perf_counter() - t
    t = time.perf_counter()
    run = LiveRun.from_record(record)
    fold_s = time.perf_counter() - t
    lines = [step_line(s) for s in record.steps]

    paint, peer_paint, scroll, peer_scroll = [], [], [], []
    for _ in range(repeats):
        seconds_, window, timeline = open_timeline(app, run)
        paint.append(seconds_)
        scroll.append(scroll_through(app, timeline.table))
        window.close()
        window.deleteLater()
        seconds_, peer = open_peer(app, lines)
        peer_paint.append(seconds_)
        peer_scroll.append(scroll_through(app, peer))
        peer.close()
        peer.deleteLater()
        app.processEvents()

    med = statistics.median
    paint_s, peer_paint_s = med(paint), med(peer_paint)
    scroll_mean = med(s[0] for s in scroll)
    scroll_worst = max(s[1] for s in scroll)
    peer_mean = med(s[0] for s in peer_scroll)
    stall_ms, peer_stall_ms = max(stall), max(peer_stall)
    ok = paint_s < PAINT_GOAL_S and stall_ms < STALL_GOAL_MS
    verdict = lambda good: "met" if good else "MISSED"  # noqa: E731
    rows = [
        ("what", "inspector", "peer", "ratio", "goal"),
        ("---",) * 5,
        (
            "time to first paint (timeline + step detail, last step selected)",
            f"{paint_s * 1000:.0f} ms",
            f"{peer_paint_s * 1000:.0f} ms (QListView + QStringListModel)",
            f"{paint_s / peer_paint_s:.1f}x",
            f"< 1 s: {verdict(paint_s < PAINT_GOAL_S)}",
        ),
        (
            "scroll through, per page painted (mean / worst)",
            f"{scroll_mean:.1f} / {scroll_worst:.1f} ms over {scroll[0][2]} pages",
            f"{peer_mean:.1f} ms",
            f"{scroll_mean / peer_mean:.1f}x",
            "—",
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
Run: {steps:,} steps in {ATTEMPTS} attempts (generated: {build_s:.2f} s, not counted;
`LiveRun.from_record`: {fold_s * 1000:.0f} ms, not counted).

{table}

The peer list holds only strings, so it is the floor: the timeline's cost over it is the
price of chips, markers, latency bars and the step detail beside it. Pages are 50 scroll
steps apart; each is a synchronous repaint of the visible rows. The stream is measured on a
small heap: with the 100,000-step record alive, CPython's full garbage collections alone stall
the loop ~120 ms (measured: the bare peer as much as the views); `gc.freeze()` after loading a
big stored run takes its objects out of those collections.
"""
    print(text)
    if args.write:
        write_section(args.write, SECTION, text)
    return 0 if ok or args.quick else 1


if __name__ == "__main__":
    sys.exit(main())
