"""Hostile user code from the window: a validators file that raises, hangs (sync and async),
exits, calls ``os._exit``, allocates 20 GB or prints 100 MB, saved in the validator editor, is
re-judged (bounded by the signal wait) to the right ``error`` verdict with the window alive and
no worker left over; Stop during a hanging tool ends the run at once and kills its worker; the
Verdicts tab shows what a validator printed."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from inspector.app.detail.step_detail import verdicts_html
from inspector.app.runtime.runner import TurnRunner
from inspector.app.shell.main_window import MainWindow
from inspector.core.records import RunRecord, Step, StepRequest, Verdict
from inspector.core.threads import _idle as idle_jobs
from inspector.core.worker import pool
from inspector.core.worker.ending import died
from inspector.workflows.revalidate import RevalidationResult
from tests.helpers.scenarios import write_scenario

SCENARIO = """
    name = "sms"
    [model]
    provider = "scripted"
    [prompt]
    user = "Tell Sam the meeting moved."
    [[validators]]
    kind = "python"
    function = "checks.py:no_markdown"
    [policy]
    max_attempts = 3
    validator_timeout_s = 0.5
    [[script]]
    text = "**Hi Sam**, the meeting moved."
    [[script]]
    text = "Hi Sam, the meeting moved."
"""
STRICT = """\
def no_markdown(output, ctx):
    return "No markdown." if "*" in output else None
"""
HEAD = "import asyncio, os, sys, time\n\n"
HOSTILE = {
    "raises": ("def no_markdown(output, ctx):\n    raise ValueError('boom')\n", "ValueError: boom"),
    "hangs": ("def no_markdown(output, ctx):\n    while True:\n        pass\n", None),
    "hangs_async": ("async def no_markdown(output, ctx):\n    time.sleep(1000)\n", None),
    "exits": ("def no_markdown(output, ctx):\n    sys.exit(3)\n", "SystemExit: 3"),
    "hard_exit": ("def no_markdown(output, ctx):\n    os._exit(7)\n", None),
    "allocates": (
        "def no_markdown(output, ctx):\n    return len(bytearray(20 * 2**30))\n",
        f"MemoryError: over the user-code memory limit ({pool.DEFAULT_MEMORY_MB} MB)",
    ),
}
TIMED_OUT = "timed out after 0.5 s"
NOT_AGAIN = " on an earlier output: not called again"


@pytest.fixture(autouse=True)
def collected() -> Iterator[None]:
    gc.collect()  # earlier windows' Qt objects, on this thread (see test_revalidation.py)
    yield
    gc.collect()


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    (tmp_path / "checks.py").write_text(STRICT, encoding="utf-8")
    return write_scenario(tmp_path, SCENARIO, "sms.toml")


def run_it(window: MainWindow, qtbot: QtBot) -> RunRecord:
    qtbot.waitUntil(lambda: not window.runner.busy)
    with qtbot.waitSignal(window.runner.finished, timeout=20_000) as finished:
        window.run_turn()
    record: RunRecord = finished.args[0]
    qtbot.waitUntil(lambda: window.shown is not None and window.shown.record is not None)
    return record


def save_text(window: MainWindow, qtbot: QtBot, text: str) -> RevalidationResult:
    dock = window.validators
    dock.python_editor.editor.setPlainText(text)
    with qtbot.waitSignal(dock.revalidator.finished, timeout=30_000) as done:
        qtbot.keyClick(dock.python_editor.editor, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    result: RevalidationResult = done.args[0]
    return result


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_validator_in_the_window_revalidation(
    window: MainWindow, qtbot: QtBot, scenario: Path, name: str
) -> None:
    window.library.select_scenario(str(scenario))
    run_it(window, qtbot)
    threads = set(threading.enumerate())
    source, reason = HOSTILE[name]

    result = save_text(window, qtbot, HEAD + source)

    first, second = (v for run in result.runs for v in run.verdicts)
    assert first.status == second.status == "error"
    if name in ("hangs", "hangs_async"):
        assert (first.reason, second.reason) == (TIMED_OUT, TIMED_OUT + NOT_AGAIN)
    elif name == "hard_exit":
        assert (first.reason, second.reason) == (died(7), died(7) + NOT_AGAIN)
    else:
        assert first.reason == second.reason == reason
    # The window is alive and still runs turns (the fixed validator passes again).
    qtbot.waitUntil(lambda: not window.validators.revalidator.busy, timeout=10_000)
    assert window.isVisible()
    fixed = save_text(window, qtbot, STRICT)
    assert [v.status for run in fixed.runs for v in run.verdicts] == ["fail", "pass"]
    assert run_it(window, qtbot).status == "succeeded"
    assert len(pool.live_workers()) <= pool.MAX_IDLE
    # No thread ran user code; the re-validation job's own thread may wait, idle, for the next.
    spawner = {t for t in threading.enumerate() if t.name.startswith(pool.SPAWNER_THREAD)}
    qtbot.waitUntil(
        lambda: set(threading.enumerate()) - threads - spawner <= set(idle_jobs), timeout=10_000
    )


def test_100_mb_of_prints_in_the_window_revalidation_are_captured(
    window: MainWindow, qtbot: QtBot, scenario: Path
) -> None:
    text = scenario.read_text(encoding="utf-8")
    scenario.write_text(text.replace("validator_timeout_s = 0.5", "validator_timeout_s = 30"))
    window.library.select_scenario(str(scenario))
    run_it(window, qtbot)
    printing = 'def no_markdown(output, ctx):\n    print("x" * 100_000_000)\n'

    result = save_text(window, qtbot, printing)

    for verdict in (v for run in result.runs for v in run.verdicts):
        assert verdict.status == "pass", verdict.reason
        assert (verdict.captured or "").endswith("more characters not kept]")


def test_stop_during_a_hanging_tool_kills_its_worker(
    runner: TurnRunner, qtbot: QtBot, tmp_path: Path
) -> None:
    started = tmp_path / "started"
    (tmp_path / "tools.py").write_text(
        "import os, pathlib, time\n\n"
        "def wait():\n"
        f"    pathlib.Path({str(started)!r}).write_text(str(os.getpid()))\n"
        "    time.sleep(60)\n",
        encoding="utf-8",
    )
    path = write_scenario(
        tmp_path,
        """
        name = "hangs"
        [model]
        provider = "scripted"
        [prompt]
        user = "hi"
        [[tools]]
        name = "wait"
        function = "tools.py:wait"
        [[script]]
        tool_calls = [{ name = "wait", arguments = {} }]
        [[script]]
        text = "never"
        """,
    )
    with qtbot.waitSignal(runner.finished, timeout=20_000) as finished:  # the tool sleeps 60 s
        runner.start(str(path))
        qtbot.waitUntil(lambda: started.exists() and started.read_text() != "", timeout=20_000)
        worker = int(started.read_text())
        runner.stop()
    record: RunRecord = finished.args[0]
    assert (record.status, record.termination) == ("cancelled", "cancelled")
    assert record.steps[0].tool_results == []
    assert worker not in pool.live_workers()
    assert not Path(f"/proc/{worker}").exists()  # killed and reaped, not a zombie


def test_the_verdicts_tab_shows_what_a_validator_printed() -> None:
    step = Step(
        index=1,
        attempt=1,
        status="success",
        request=StepRequest(system="", messages=[]),
        verdicts=[Verdict(validator="v", ok=True, status="pass", captured="debug <line>\n")],
    )
    html = verdicts_html(step, dark=False)
    assert "printed" in html and "debug &lt;line&gt;" in html
