"""One offscreen screenshot per offline demo: the window renders real content, not a blank."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from pathlib import Path

import pytest
from PySide6.QtGui import QImage
from pytestqt.qtbot import QtBot

from inspector.app.app import _Headless, save_screenshot
from inspector.app.shell import runs_listing
from inspector.app.shell.main_window import MainWindow
from inspector.core.records import RunRecord
from inspector.resources import demo_names
from inspector.store import Store
from tests.helpers.runs import demo_record

OFFLINE_DEMOS = [
    "retry-feedback",
    "step-cap",
    "final-answer-tool",
    "empty-final",
    "invalid-output-fallback",
]


def colour_histogram(image: QImage, step: int = 4) -> Counter[int]:
    """Colours of a grid of pixels (every ``step``-th in each direction)."""
    return Counter(
        image.pixel(x, y)
        for y in range(0, image.height(), step)
        for x in range(0, image.width(), step)
    )


def not_blank(image: QImage) -> str | None:
    """Why ``image`` does not look like a rendered window (None: it does)."""
    colours = colour_histogram(image)
    if len(colours) <= 40:  # text, icons, chips, status colours
        return f"only {len(colours)} colours"
    most_common_share = colours.most_common(1)[0][1] / sum(colours.values())
    if most_common_share >= 0.8:
        return f"one colour covers {most_common_share:.0%}: a flat background"
    return None


@pytest.mark.parametrize("demo", OFFLINE_DEMOS)
def test_the_window_renders_each_demo(
    demo: str, window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    assert window.library.select_scenario(f"demo:{demo}")
    with qtbot.waitSignal(window.runner.finished, timeout=20_000) as finished:
        window.run_turn()
    qtbot.waitUntil(lambda: not window.runner.busy)
    window.timeline.select_last()
    assert window.detail.current_step == len(finished.args[0].steps)

    path = tmp_path / f"{demo}.png"
    save_screenshot(window, path)
    image = QImage(str(path))
    assert (image.width(), image.height()) == (1400, 900)
    assert not_blank(image) is None, not_blank(image)
    assert not window.message_bar.isVisible() or window.message_bar.level != "error"


def test_the_check_rejects_a_blank_or_flat_image() -> None:
    blank = QImage(1400, 900, QImage.Format.Format_RGB32)
    blank.fill(0xFFEEEEEE)
    assert not_blank(blank) == "only 1 colours"
    # Many colours, but one background over nearly all of it: still rejected.
    for x in range(60):
        blank.setPixel(x * 4, 0, 0xFF000000 + x * 0x010203)
    reason = not_blank(blank)
    assert reason is not None and "flat background" in reason


def test_a_screenshot_shows_the_whole_run_and_its_cost(
    window: MainWindow, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--screenshot`` draws the run as it ended: not the step the paced events had reached
    when the runner went idle, nor ``cost …`` while the price is looked up."""

    def slow_price(*_key: object) -> float:
        time.sleep(0.3)  # the price table's first load
        return 0.000040

    monkeypatch.setattr("inspector.app.timeline.outcome_header.run_cost", slow_price)
    # Every event after the first of a loop turn waits for a later turn, as a fast run's do.
    window.pacer.slice_s = window.pacer.slice_max_s = 0.0
    seen: dict[str, object] = {}

    def done(record: RunRecord | None, problem: str) -> int:
        assert record is not None and not problem
        seen["record"] = record
        seen["status"] = window.timeline.outcome.outcome.status
        seen["steps"] = len(window.live.steps) if window.live is not None else 0
        seen["facts"] = window.timeline.outcome.outcome.facts_line
        return 0

    headless = _Headless(window, done)
    headless.exit = lambda _code: None  # the test's loop goes on
    headless.start("demo:sweep")  # gpt-4o-mini: a model with a price
    qtbot.waitUntil(lambda: headless.code is not None, timeout=20_000)
    record = seen["record"]
    assert isinstance(record, RunRecord)
    assert seen["status"] == record.status == "succeeded"
    assert seen["steps"] == len(record.steps)
    assert "$0.000040" in str(seen["facts"]), seen["facts"]


def test_an_unknown_demo_names_the_demos_there_are(window: MainWindow, qtbot: QtBot) -> None:
    """``gui demo:nope --screenshot``: the line ``run demo:nope`` says, exit 2."""
    said: list[str] = []
    headless = _Headless(window, lambda _record, problem: said.append(problem) or 2)
    headless.exit = lambda _code: None
    headless.start("demo:nope")
    qtbot.waitUntil(lambda: headless.code is not None, timeout=5_000)
    assert headless.code == 2
    assert said == [f"demo:nope: no such demo (available: {', '.join(demo_names())})"]


@pytest.fixture
def stored_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Three runs in the store the ``window`` fixture opens, which the window reads slowly (as
    a big store is read): made before the Qt loop runs (asyncio.run cannot run inside it)."""
    record = asyncio.run(demo_record("retry-feedback"))
    ids = [f"{record.run_id[:-1]}{n}" for n in range(3)]
    with Store.open(tmp_path / "runs.sqlite3") as store:
        for run_id in ids:
            store.save(record.model_copy(update={"run_id": run_id}))
    read = runs_listing.read_runs

    def slow_read(path: Path) -> list[object]:
        time.sleep(0.3)
        return list(read(path))

    monkeypatch.setattr(runs_listing, "read_runs", slow_read)
    return ids


def test_a_screenshot_without_a_scenario_shows_the_stored_runs(
    stored_runs: list[str], window: MainWindow, qtbot: QtBot
) -> None:
    """``gui --db STORE --screenshot``: the runs list as read, not empty because the picture
    was taken while the store was still read on its worker thread."""
    listed: list[int] = []
    headless = _Headless(
        window, lambda _record, _problem: listed.append(window.library.runs.rowCount()) or 0
    )
    headless.exit = lambda _code: None
    headless.start(None)
    qtbot.waitUntil(lambda: headless.code is not None, timeout=10_000)
    assert listed == [len(stored_runs)]
