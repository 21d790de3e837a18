"""StepDetail: each tab shows the step's part of the record; the Response tab grows as text
streams in; Ctrl+Tab and Ctrl+1..5 switch tabs."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocumentFragment
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from inspector.app.detail.step_detail import (
    FEEDBACK,
    MODEL_SAW,
    RAW,
    RESPONSE,
    VERDICTS,
    StepDetail,
)
from inspector.core.events import StepFinished, StepStarted, TextDelta
from inspector.core.live import LiveRun
from inspector.core.shared_list import SharedPrefix
from inspector.store import Store
from tests.helpers.demo_events import demo_run, stored_run
from tests.store.synthetic import long_turn


def make_detail(qtbot: QtBot) -> StepDetail:
    detail = StepDetail()
    qtbot.addWidget(detail)
    detail.resize(640, 720)
    detail.show()
    qtbot.waitExposed(detail)
    return detail


def plain(rich: str) -> str:
    return QTextDocumentFragment.fromHtml(rich).toPlainText()


def tab_text(detail: StepDetail, tab: int) -> str:
    detail.tabs.setCurrentIndex(tab)
    if tab == RESPONSE:
        pane = detail.response
        return "\n".join(
            [
                plain(pane.meta.text()),
                pane.problem.text(),
                pane.text.toPlainText(),
                pane.tool_calls.toPlainText(),
            ]
        )
    if tab == RAW:
        return detail.raw_note.text() + "\n" + detail.raw.toPlainText()
    return (detail.model_saw, None, detail.verdicts, detail.feedback)[tab].toPlainText()  # type: ignore[union-attr]


def test_selecting_a_step_shows_the_exact_request(qtbot: QtBot) -> None:
    record = demo_run("retry-feedback")[1]
    detail = make_detail(qtbot)
    detail.show_step(stored_run("retry-feedback"), 3)
    text = tab_text(detail, MODEL_SAW)
    request = record.steps[2].request
    assert request.system in text
    for message in request.messages:
        assert (message.content or "") in text
    assert "Plain text only: no markdown characters." in text  # the injected feedback
    assert "lookup_contact" in text and '"required": [' in text  # tools offered, pretty JSON
    assert "Step 3" in detail.title.text() and "cleared" in detail.title.text()


def test_each_tab_shows_its_part_of_the_step(qtbot: QtBot) -> None:
    step = demo_run("retry-feedback")[1].steps[2]
    detail = make_detail(qtbot)
    detail.show_step(stored_run("retry-feedback"), 3)
    assert step.response is not None
    response = tab_text(detail, RESPONSE)
    assert step.response.text in response and "finish reason: stop" in response
    verdicts = tab_text(detail, VERDICTS)
    assert "max_length" in verdicts and "171 characters > 160" in verdicts
    assert "An SMS holds 160 characters at most." in verdicts
    feedback = tab_text(detail, FEEDBACK)
    assert "feedback · user" in feedback and step.feedback[0].content in feedback
    raw = json.loads(tab_text(detail, RAW).split("\n", 1)[1])
    assert raw["request"] == step.request.model_dump(mode="json")


def test_forced_step_and_tool_call_arguments(qtbot: QtBot) -> None:
    detail = make_detail(qtbot)
    detail.show_step(stored_run("step-cap"), 4)
    saw = tab_text(detail, MODEL_SAW)
    assert "Tools disabled on this step" in saw and "final-step instruction appended" in saw
    detail.show_step(stored_run("final-answer-tool"), 3)
    response = tab_text(detail, RESPONSE)
    assert '  "to": "Sam",' in response  # arguments pretty-printed
    assert "final_answer_1" in response


def test_the_response_tab_grows_as_text_streams(qtbot: QtBot) -> None:
    events, record = demo_run("retry-feedback")
    run = LiveRun()
    detail = make_detail(qtbot)
    detail.tabs.setCurrentIndex(RESPONSE)
    lengths: list[int] = []
    streamed = ""
    for event in events:
        run.apply(event)
        if isinstance(event, StepStarted) and event.index == 2:
            detail.show_step(run, 2)
        detail.on_event(event)
        if isinstance(event, TextDelta) and event.index == 2:
            streamed += event.text
            qtbot.waitUntil(lambda s=streamed: detail.response.text.toPlainText() == s)
            lengths.append(len(detail.response.text.toPlainText()))
        if isinstance(event, StepFinished) and event.step.index == 2:
            break
    assert len(lengths) > 3 and lengths == sorted(lengths) and lengths[0] < lengths[-1]
    qtbot.waitUntil(lambda: "failed validation" in detail.response.meta.text())
    assert record.steps[1].response is not None
    assert detail.response.text.toPlainText() == record.steps[1].response.text


def test_keyboard_switches_tabs(qtbot: QtBot) -> None:
    detail = make_detail(qtbot)
    detail.show_step(stored_run("retry-feedback"), 2)
    detail.activateWindow()
    qtbot.waitActive(detail)
    detail.model_saw.setFocus()  # keys go where the user is: the focused widget
    qtbot.waitUntil(lambda: QApplication.focusWidget() is not None)
    mod = Qt.KeyboardModifier.ControlModifier

    def press(key: Qt.Key, modifiers: Qt.KeyboardModifier = mod) -> None:
        focused = QApplication.focusWidget()
        assert focused is not None
        qtbot.keyClick(focused, key, modifiers)

    press(Qt.Key.Key_2)
    assert detail.tabs.currentIndex() == RESPONSE
    press(Qt.Key.Key_Tab)
    assert detail.tabs.currentIndex() == VERDICTS
    press(Qt.Key.Key_Backtab, mod | Qt.KeyboardModifier.ShiftModifier)
    assert detail.tabs.currentIndex() == RESPONSE
    press(Qt.Key.Key_5)
    assert detail.tabs.currentIndex() == RAW
    press(Qt.Key.Key_Tab)
    assert detail.tabs.currentIndex() == MODEL_SAW
    assert "You write SMS messages" in detail.model_saw.toPlainText()


def test_no_step_selected(qtbot: QtBot) -> None:
    detail = make_detail(qtbot)
    assert "No step selected" in detail.title.text()
    assert "Select a step" in detail.model_saw.toPlainText()


def test_json_blocks_wrap_long_values(qtbot: QtBot) -> None:
    from PySide6.QtGui import QTextDocument

    from inspector.app.widgets.json_view import json_html

    for dark in (False, True):
        document = QTextDocument()
        document.setHtml(json_html({"text": "a long sentence " * 40, "n": 1}, dark))
        document.setTextWidth(240)
        assert document.idealWidth() <= 240  # wrapped, not one line running off the view
        assert "a long sentence" in document.toPlainText()


def _long_request_run(messages: int) -> LiveRun:
    from inspector.core.messages import Message

    record = demo_run("retry-feedback")[1]
    step = record.steps[0]
    history = [Message(role="user", content=f"message {n}") for n in range(messages)]
    long = step.model_copy(
        update={"request": step.request.model_copy(update={"messages": history})}
    )
    return LiveRun.from_record(record.model_copy(update={"steps": [long, *record.steps[1:]]}))


def test_a_long_request_shows_its_last_messages_and_more_on_demand(qtbot: QtBot) -> None:
    """Rendering a step costs the same late in a long turn: the last MESSAGES_SHOWN first."""
    from PySide6.QtCore import QUrl

    from inspector.app.detail.step_detail import MESSAGES_SHOWN, MORE_MESSAGES

    detail = make_detail(qtbot)
    detail.show_step(_long_request_run(500), 1)
    text = tab_text(detail, MODEL_SAW)
    assert f"{500 - MESSAGES_SHOWN} earlier messages not shown" in text
    assert "message 499" in text and f"message {500 - MESSAGES_SHOWN - 1}\n" not in text
    assert text.count("message ") == MESSAGES_SHOWN
    detail.model_saw.anchorClicked.emit(QUrl(MORE_MESSAGES))
    assert "300 earlier messages not shown" in tab_text(detail, MODEL_SAW)


def test_steps_followed_as_they_arrive_render_once_per_interval(qtbot: QtBot) -> None:
    run = stored_run("retry-feedback")
    detail = make_detail(qtbot)
    rendered: list[str] = []
    original = detail.model_saw.set_body
    detail.model_saw.set_body = lambda body: (rendered.append(body), original(body))[1]  # type: ignore[method-assign]
    for index in (1, 2, 3):
        detail.show_step(run, index, soon=True)
    assert rendered == [] and "Step 3" in detail.title.text()
    qtbot.waitUntil(lambda: len(rendered) == 1)
    assert "Plain text only: no markdown characters." in plain(rendered[0])  # step 3's request
    detail.show_step(run, 1)  # a step the user picks renders at once
    assert len(rendered) == 2


def test_a_detail_tabbed_behind_another_dock_renders_when_raised(window, qtbot: QtBot) -> None:  # type: ignore[no-untyped-def]
    record = demo_run("retry-feedback")[1]
    window.policy_dock.raise_()
    qtbot.waitUntil(lambda: window.detail.visibleRegion().isEmpty())
    rendered: list[str] = []
    original = window.detail.model_saw.set_body
    window.detail.model_saw.set_body = lambda body: (rendered.append(body), original(body))[1]
    window.show_run(stored_run("retry-feedback"))
    assert window.detail.current_step == len(record.steps) and rendered == []
    window.detail_dock.raise_()
    qtbot.waitUntil(lambda: len(rendered) == 1)
    assert record.steps[-1].request.messages[-1].content in plain(rendered[0])


def test_raw_tab_shows_a_loaded_runs_shared_raw_body(qtbot: QtBot, tmp_path: Path) -> None:
    # A loaded run's raw bodies hold their wire messages as views of one list (issue 18).
    record = long_turn(6)
    with Store.open(tmp_path / "runs.sqlite3") as store:
        store.save(record)
        loaded = store.load(record.run_id)
    assert loaded.steps[4].raw is not None
    assert isinstance(loaded.steps[4].raw.request["messages"], SharedPrefix)
    detail = make_detail(qtbot)
    detail.show_step(LiveRun.from_record(loaded), 5)
    raw = json.loads(tab_text(detail, RAW).split("\n", 1)[1])
    expected = record.steps[4].raw
    assert expected is not None and raw == {
        "request": expected.request,
        "response": expected.response,
    }
