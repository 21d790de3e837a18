"""The Model saw tab marks what the loop did (issue 14): feedback, kept failed answers,
synthetic tool pairs and the final-step instruction badged; messages new since the previous
call counted and marked; the request's diff with the previous call or attempt one click away.
No tab of the Step dock widens the dock."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from pytestqt.qtbot import QtBot

from inspector.app.detail.step_detail import MODEL_SAW, RAW, StepDetail
from inspector.app.widgets.diff_tints import diff_colour
from inspector.core.events import StepStarted
from inspector.core.live import LiveRun
from tests.helpers.demo_events import demo_run, stored_run
from tests.helpers.runs import demo_record


def make_detail(qtbot: QtBot) -> StepDetail:
    detail = StepDetail()
    qtbot.addWidget(detail)
    detail.resize(640, 720)
    detail.show()
    qtbot.waitExposed(detail)
    return detail


def run_of(demo: str, *overrides: str) -> LiveRun:
    return LiveRun.from_record(asyncio.run(demo_record(demo, *overrides)))


def saw(detail: StepDetail, run: LiveRun, index: int) -> str:
    detail.show_step(run, index)
    detail.tabs.setCurrentIndex(MODEL_SAW)
    return detail.model_saw.toPlainText()


def test_retry_feedback_badges_each_feedback_and_kept_answer_with_its_attempt(
    qtbot: QtBot,
) -> None:
    detail = make_detail(qtbot)
    run = stored_run("retry-feedback")
    text = saw(detail, run, 4)
    for attempt in (1, 2):
        assert text.count(f"FEEDBACK after attempt {attempt} · user") == 1
        assert text.count(f"KEPT · attempt {attempt} (failed)") == 1
    assert text.count("NEW") == 2  # the answer of attempt 2 and its feedback
    feedback = run.steps[2].feedback[0].content
    assert text.index("FEEDBACK after attempt 2") < text.index(str(feedback))
    summary = detail.model_saw_pane.summary.text()
    assert "2 of 7 messages new since the previous call (step 3)" in summary


def test_the_first_call_says_its_messages_are_the_opening(qtbot: QtBot) -> None:
    detail = make_detail(qtbot)
    text = saw(detail, stored_run("retry-feedback"), 1)
    assert "NEW" not in text and "FEEDBACK after" not in text
    pane = detail.model_saw_pane
    # Drawn as plain text (no tag in it): an escaped apostrophe would show as "&#x27;".
    assert pane.summary.text() == "The turn's first call: its 1 message(s) are the opening."
    assert not pane.diff_call.isEnabled() and not pane.diff_attempt.isEnabled()


def test_a_kept_final_answer_call_and_its_result_are_synthetic(qtbot: QtBot) -> None:
    detail = make_detail(qtbot)
    text = saw(detail, stored_run("invalid-output-fallback"), 3)
    assert "SYNTHETIC · final-answer call" in text
    assert "SYNTHETIC · result" in text
    assert "KEPT · attempt 2 (failed)" in text


def test_tool_role_feedback_shows_the_synthetic_feedback_pair(qtbot: QtBot) -> None:
    detail = make_detail(qtbot)
    run = run_of("retry-feedback", 'policy.feedback_role="tool"')
    text = saw(detail, run, 4)
    assert text.count("SYNTHETIC · feedback call") == 2
    assert "FEEDBACK after attempt 2 · tool" in text


def test_the_final_step_instruction_is_badged_in_the_system_prompt(qtbot: QtBot) -> None:
    detail = make_detail(qtbot)
    run = stored_run("step-cap")
    instruction = "Tools are disabled now. Answer the user with what you have."
    text = saw(detail, run, 4)
    assert "FINAL-STEP INSTRUCTION" in text
    assert text.index("FINAL-STEP INSTRUCTION") < text.index(instruction)
    assert "FINAL-STEP INSTRUCTION" not in saw(detail, run, 3)


def test_the_diff_toggles_show_what_the_request_adds(qtbot: QtBot) -> None:
    detail = make_detail(qtbot)
    run = stored_run("retry-feedback")
    saw(detail, run, 4)
    pane = detail.model_saw_pane
    qtbot.mouseClick(pane.diff_call, Qt.MouseButton.LeftButton)
    assert pane.stack.currentWidget() is pane.diff
    lines = pane.diff.toPlainText().splitlines()
    assert "+   An SMS holds 160 characters at most. Shorten it." in lines
    assert "- MESSAGES (5)" in lines and "+ MESSAGES (7)" in lines
    assert "step 3 (the previous call): 5 lines added, 1 removed" in pane.summary.text()

    detail.show_step(run, 3)  # the diff stays on while moving through steps
    assert pane.diff_call.isChecked() and "step 2 (the previous call)" in pane.summary.text()
    detail.show_step(run, 4)

    qtbot.mouseClick(pane.diff_attempt, Qt.MouseButton.LeftButton)
    assert not pane.diff_call.isChecked()
    assert "against step 3 (attempt 2's request)" in pane.summary.text()
    qtbot.mouseClick(pane.diff_attempt, Qt.MouseButton.LeftButton)  # off again: the messages
    assert pane.stack.currentWidget() is pane.chat

    qtbot.mouseClick(pane.diff_call, Qt.MouseButton.LeftButton)
    added = next(k for k, line in enumerate(pane.shown_diff.lines) if line.kind == "added")
    dark = QPalette(pane.palette())  # a light/dark switch re-tints the diff shown
    dark.setColor(QPalette.ColorRole.Base, QColor("#1e1e1e"))
    dark.setColor(QPalette.ColorRole.Text, QColor("#e0e0e0"))
    light_tint = diff_colour("added", pane.palette())
    pane.setPalette(dark)
    dark_tint = diff_colour("added", dark)
    assert dark_tint is not None and dark_tint != light_tint
    block = pane.diff.document().findBlockByNumber(added)
    assert block.blockFormat().background().color() == dark_tint

    detail.show_step(run, 1)  # no previous call: back to the messages
    assert pane.stack.currentWidget() is pane.chat and not pane.diff_call.isChecked()


@pytest.fixture
def retry_run() -> LiveRun:
    return stored_run("retry-feedback")  # before the window's loop runs: asyncio.run works


def test_visiting_raw_does_not_widen_the_step_dock(
    retry_run: LiveRun, window, qtbot: QtBot
) -> None:  # type: ignore[no-untyped-def]
    window.show_run(retry_run)
    window.detail_dock.raise_()
    qtbot.wait(50)
    before = window.detail_dock.width()
    for tab in (RAW, MODEL_SAW):
        window.detail.tabs.setCurrentIndex(tab)
        qtbot.wait(50)
        assert window.detail_dock.width() == before
    pane = window.detail.model_saw_pane
    qtbot.mouseClick(pane.diff_call, Qt.MouseButton.LeftButton)
    qtbot.wait(50)
    assert window.detail_dock.width() == before
    assert window.detail.minimumSizeHint().width() < before


def test_a_step_still_streaming_is_marked_from_the_run_so_far(qtbot: QtBot) -> None:
    """Live: the policy comes from the run's header, the steps from what has arrived."""
    detail = make_detail(qtbot)
    text = saw(detail, live_until_step(4, "retry-feedback"), 4)
    assert "FEEDBACK after attempt 2 · user" in text and "KEPT · attempt 1 (failed)" in text
    assert "2 of 7 messages new" in detail.model_saw_pane.summary.text()
    assert "FINAL-STEP INSTRUCTION" in saw(detail, live_until_step(4, "step-cap"), 4)


def live_until_step(index: int, demo: str) -> LiveRun:
    """The demo's run as the window holds it when step ``index`` has just started."""
    run = LiveRun()
    for event in demo_run(demo)[0]:
        run.apply(event)
        if isinstance(event, StepStarted) and event.index == index:
            break
    live = run.step(index)
    assert live is not None and live.pending and run.record is None
    return run


def test_the_runs_failed_attempts_are_looked_at_once_per_run(qtbot: QtBot) -> None:
    """The pane keeps the shown run's FailureIndex across steps; another run, or the run's
    record replacing its steps, starts a new one."""
    detail = make_detail(qtbot)
    run = stored_run("retry-feedback")  # 3 attempts: 2 ended with a step after them
    for index in (4, 3, 2, 4):
        saw(detail, run, index)
    failures = detail.model_saw_pane._failures
    assert failures.visited == 2
    other = stored_run("retry-feedback")
    assert "KEPT · attempt 2 (failed)" in saw(detail, other, 4)
    assert detail.model_saw_pane._failures is not failures
    assert detail.model_saw_pane._failures.visited == 2
