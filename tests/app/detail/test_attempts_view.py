"""AttemptsView: a column per attempt, the kept answer, paging, the three views of a turn, and
the Attempts tab in the window."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QDockWidget
from pytestqt.qtbot import QtBot

from inspector.app.detail.attempts_view import COLUMN_MIN, AttemptsView, Column
from inspector.app.shell.main_window import MainWindow
from inspector.app.theme import is_dark
from inspector.core.events import RunFinished
from inspector.core.live import LiveRun, LiveStep
from inspector.core.records import Verdict
from inspector.reports.attempt_columns import attempt_columns
from tests.helpers.demo_events import demo_run, stored_run


@pytest.fixture
def demos() -> None:
    """The demos' runs, recorded before a ``window`` fixture's event loop runs (``demo_run``
    runs its own)."""
    demo_run("retry-feedback")
    demo_run("invalid-output-fallback")


def make_view(qtbot: QtBot, width: int = 1300) -> AttemptsView:
    view = AttemptsView()
    qtbot.addWidget(view)
    view.resize(width, 850)
    view.show()
    qtbot.waitExposed(view)
    return view


def show(qtbot: QtBot, view: AttemptsView, run: LiveRun) -> None:
    """``show_run`` renders at the next event-loop turn (not inside the window's ``_show``)."""
    view.show_run(run)
    qtbot.waitUntil(lambda: not view._stale and not view._views_due)


def test_one_column_per_attempt_with_candidate_verdicts_and_feedback(qtbot: QtBot) -> None:
    record = demo_run("retry-feedback")[1]
    view = make_view(qtbot)
    show(qtbot, view, stored_run("retry-feedback"))
    columns = view.attempt_columns
    assert len(columns) == 3
    assert "Attempt 1" in columns[0].title.text() and "cleared" in columns[0].title.text()
    assert "cleared" not in columns[2].title.text()
    second = columns[1].body.toPlainText()
    assert record.steps[2].response is not None
    assert record.steps[2].response.text in second
    assert "max_length — failed" in second and "171 characters > 160" in second
    assert second.index("— failed") < second.index("— passed")  # failed first
    assert "feedback · user" in second
    assert "An SMS holds 160 characters at most. Shorten it." in second
    assert "lookup_contact" in columns[0].body.toPlainText()  # its tool step, in brief
    assert "★ Kept answer" in view.kept.title.text()
    assert record.output in view.kept.body.toPlainText()
    assert view.page.text() == "attempts 1–3 of 3"


def test_a_dark_palette_renders_the_columns_again_in_its_colours(qtbot: QtBot) -> None:
    view = make_view(qtbot)
    show(qtbot, view, stored_run("retry-feedback"))
    column, kept = view.attempt_columns[1].body, view.kept.body
    light = (column.toHtml(), kept.toHtml())
    dark = QPalette(view.palette())
    dark.setColor(QPalette.ColorRole.Window, QColor("#202020"))
    dark.setColor(QPalette.ColorRole.Base, QColor("#1e1e1e"))
    dark.setColor(QPalette.ColorRole.Text, QColor("#e0e0e0"))
    dark.setColor(QPalette.ColorRole.WindowText, QColor("#e0e0e0"))
    view.setPalette(dark)
    assert is_dark(view.palette())
    qtbot.waitUntil(lambda: column.toHtml() != light[0] and kept.toHtml() != light[1])


def test_the_three_views_of_the_turn(qtbot: QtBot) -> None:
    record = demo_run("retry-feedback")[1]
    view = make_view(qtbot)
    show(qtbot, view, stored_run("retry-feedback"))
    final_call = view.final_call.body.toPlainText()
    for message in record.steps[-1].request.messages:
        assert (message.content or "") in final_call
    transcript = view.transcript.body.toPlainText()
    assert "**Hi Sam!**" not in transcript  # cleared from what was persisted
    assert record.output in transcript
    streamed = view.streamed.body.toPlainText()
    assert streamed.count("shown, then cleared") == 2
    assert "**Hi Sam!**" in streamed


def test_the_kept_column_shows_the_fallback_value(qtbot: QtBot) -> None:
    record = demo_run("invalid-output-fallback")[1]
    view = make_view(qtbot)
    show(qtbot, view, stored_run("invalid-output-fallback"))
    kept = view.kept.body.toPlainText()
    assert "fallback (after validator exhausted)" in kept
    assert "fallback value" in kept and "not the model's answer" in kept
    assert record.output["body"] in kept  # the handler's value, not a model candidate
    assert len(view.attempt_columns) == 3
    assert all(record.output["body"] not in c.body.toPlainText() for c in view.attempt_columns)


def test_an_error_verdict_is_worded_as_the_validators_not_the_models(qtbot: QtBot) -> None:
    record = demo_run("retry-feedback")[1]
    last = record.steps[-1]
    broken = Verdict(validator="no_cjk", ok=False, status="error", reason="TimeoutError: 2 s")
    step = last.model_copy(update={"status": "validator_error", "verdicts": [broken]})
    run = LiveRun.from_record(record.model_copy(update={"steps": [*record.steps[:-1], step]}))
    view = make_view(qtbot)
    show(qtbot, view, run)
    text = view.attempt_columns[-1].body.toPlainText()
    assert "! no_cjk — validator error" in text and "TimeoutError: 2 s" in text
    assert "the validator raised or timed out — not the model's failure" in text
    assert "no_cjk — failed" not in text


def test_columns_appear_as_the_run_streams(qtbot: QtBot) -> None:
    events, record = demo_run("retry-feedback")
    run = LiveRun()
    view = make_view(qtbot)
    show(qtbot, view, run)
    counts = []
    for event in events:
        run.apply(event)
        view.on_event(event)
        if isinstance(event, RunFinished):
            break
        attempts = len(attempt_columns([s.as_step() for s in run.steps]))

        def drawn(n: int = attempts) -> bool:
            # The three views render a loop turn after the page (on a timer): wait for both.
            transcript = view.transcript.body.toPlainText()
            return len(view.attempt_columns) == n and "Written when the run finishes" in transcript

        qtbot.waitUntil(drawn)
        counts.append(len(view.attempt_columns))
    assert counts[0] == 0 and counts[-1] == 3 and counts == sorted(counts)
    qtbot.waitUntil(lambda: "succeeded" in view.kept.body.toPlainText())
    # The views render in turns of their own: the transcript may come a turn after the kept.
    qtbot.waitUntil(lambda: record.output in view.transcript.body.toPlainText())


def test_a_hidden_view_builds_nothing_and_catches_up_when_shown(qtbot: QtBot) -> None:
    events, record = demo_run("retry-feedback")
    run = LiveRun()
    view = make_view(qtbot)
    show(qtbot, view, run)
    view.hide()
    for event in events:
        run.apply(event)
        view.on_event(event)
        assert not view._timer.isActive()  # no redraw scheduled for a view nobody sees
    view.show_run(run)  # a new run shown while hidden is not rendered either
    assert record.output not in view.transcript.body.toPlainText()
    assert view.attempt_columns == []
    view.show()
    qtbot.waitExposed(view)
    assert len(view.attempt_columns) == 3
    qtbot.waitUntil(lambda: record.output in view.transcript.body.toPlainText())


def _many_attempts(attempts: int) -> LiveRun:
    """``attempts`` copies of one rejected attempt of the demo, renumbered."""
    step = demo_run("retry-feedback")[1].steps[2]
    run = LiveRun()
    run.steps = [
        LiveStep.from_step(step.model_copy(update={"index": n, "attempt": n}))
        for n in range(1, attempts + 1)
    ]
    return run


def _titles(view: AttemptsView) -> list[str]:
    return [c.title.text().split("</b>")[0].removeprefix("<b>") for c in view.attempt_columns]


def test_paging_keys_and_buttons(qtbot: QtBot) -> None:
    view = make_view(qtbot, width=4 * (COLUMN_MIN + 6) + 60)  # 3 attempts and the kept answer
    show(qtbot, view, _many_attempts(12))
    assert view.page.text() == "attempts 1–3 of 12" and not view.earlier.isEnabled()
    view.setFocus()
    requested: list[int] = []
    view.stepRequested.connect(requested.append)
    qtbot.keyClick(view, Qt.Key.Key_PageDown)
    assert view.page.text() == "attempts 4–6 of 12"
    assert _titles(view) == ["Attempt 4", "Attempt 5", "Attempt 6"]
    qtbot.keyClick(view, Qt.Key.Key_Right)  # nothing selected yet: the page's first
    assert view.selected_attempt == 4 and requested[-1] == 4
    qtbot.keyClick(view, Qt.Key.Key_Right)
    qtbot.keyClick(view, Qt.Key.Key_Right)
    qtbot.keyClick(view, Qt.Key.Key_Right)  # past the page: the page follows
    assert view.selected_attempt == 7 and view.page.text() == "attempts 5–7 of 12"
    assert [c.selected for c in view.attempt_columns] == [False, False, True]
    qtbot.keyClick(view, Qt.Key.Key_End)
    assert view.page.text() == "attempts 10–12 of 12" and not view.later.isEnabled()
    assert requested[-1] == 12
    qtbot.mouseClick(view.earlier, Qt.MouseButton.LeftButton)
    assert view.page.text() == "attempts 7–9 of 12" and view.selected_attempt == 9
    qtbot.keyClick(view, Qt.Key.Key_PageUp)
    qtbot.keyClick(view, Qt.Key.Key_Home)
    assert view.page.text() == "attempts 1–3 of 12" and view.selected_attempt == 1


def test_the_selected_attempt_stays_in_view_when_the_view_narrows(qtbot: QtBot) -> None:
    view = make_view(qtbot, width=1300)
    show(qtbot, view, _many_attempts(12))
    view.set_current_step(6)  # the timeline selected a step of attempt 6
    qtbot.waitUntil(lambda: view.selected_attempt == 6)
    wide = len(view.attempt_columns)
    view.resize(2 * (COLUMN_MIN + 6) + 20, 850)  # one attempt beside the kept answer
    qtbot.waitUntil(lambda: len(view.attempt_columns) == 1)
    assert wide > 1 and _titles(view) == ["Attempt 6"]
    assert view.page.text() == "attempt 6 of 12"


def test_a_run_of_many_attempts_builds_only_the_columns_shown(qtbot: QtBot) -> None:
    view = make_view(qtbot)
    show(qtbot, view, _many_attempts(2_000))
    shown = len(view.attempt_columns)
    assert 3 <= shown <= 8
    # Widgets: the page's attempt columns, the kept answer and the three views — no more.
    assert len(view.findChildren(Column)) == shown + 4
    view.set_current_step(2_000)
    qtbot.waitUntil(lambda: _titles(view)[-1] == "Attempt 2000")
    assert len(view.findChildren(Column)) == shown + 4
    assert view.page.text() == f"attempts {2_001 - shown:,}–2,000 of 2,000"
    streamed = view.streamed.body.toPlainText()
    assert "1,980 earlier candidates not shown" in streamed
    assert streamed.count("attempt ") == 20


def test_a_refresh_costs_the_same_at_attempt_200_and_at_attempt_2000(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Steps read per refresh after a new attempt arrives: what the page and the views show,
    never a walk over the attempts before it."""
    reads: list[int] = []
    as_step = LiveStep.as_step
    monkeypatch.setattr(
        LiveStep, "as_step", lambda self: (reads.append(self.index), as_step(self))[1]
    )

    def reads_for_one_more(attempts: int) -> int:
        view = make_view(qtbot)
        run = _many_attempts(attempts)
        show(qtbot, view, run)
        run.steps.append(_many_attempts(attempts + 1).steps[-1])
        view.set_current_step(attempts + 1)
        view._timer.stop()  # the refresh below, once, not when a timer fires
        reads.clear()
        view.refresh()
        view._render_views()
        assert _titles(view)[-1] == f"Attempt {attempts + 1}"
        return len(reads)

    few, many = reads_for_one_more(200), reads_for_one_more(2_000)
    assert few == many and many < 60  # a page, the last 20 candidates, the final call


def _attempts_in_front(window: MainWindow, qtbot: QtBot) -> AttemptsView:
    window.resizeDocks(
        [window.library_dock, window.detail_dock], [252, 350], Qt.Orientation.Horizontal
    )
    window.centre_tabs.show_attempts()
    view = window.attempts
    qtbot.waitUntil(lambda: not view.visibleRegion().isEmpty())
    return view


def test_three_attempts_fit_at_1400x900_without_horizontal_scrolling(
    demos: None, window: MainWindow, qtbot: QtBot
) -> None:
    window.show_run(stored_run("retry-feedback"))  # then the tab is brought forward
    view = _attempts_in_front(window, qtbot)
    qtbot.waitUntil(lambda: len(view.attempt_columns) == 3)
    assert view.page.text() == "attempts 1–3 of 3"
    right = view.mapTo(window, view.rect().topRight()).x()
    for column in [*view.attempt_columns, view.kept]:
        assert column.width() >= COLUMN_MIN
        assert column.mapTo(window, column.rect().topRight()).x() <= right
        assert not column.body.horizontalScrollBar().isVisible()
        assert column.body.verticalScrollBar().value() == 0  # read from the top
    assert window.detail_dock.isVisible()  # the Step dock stays beside the tab


def test_a_click_on_a_column_shows_its_attempts_step(
    demos: None, window: MainWindow, qtbot: QtBot
) -> None:
    record = demo_run("retry-feedback")[1]
    view = _attempts_in_front(window, qtbot)
    window.show_run(stored_run("retry-feedback"))
    qtbot.waitUntil(lambda: len(view.attempt_columns) == 3)
    assert view.selected_attempt == 3  # the run's last step is selected in the timeline
    first = view.attempt_columns[0]
    qtbot.mouseClick(first.body.viewport(), Qt.MouseButton.LeftButton)
    last_of_first = [s.index for s in record.steps if s.attempt == 1][-1]
    assert window.selected_step == last_of_first == 2
    assert window.detail.current_step == 2
    assert view.selected_attempt == 1 and first.selected
    assert window.centre_tabs.currentWidget() is view  # the tab stays in front
    qtbot.keyClick(view, Qt.Key.Key_Right)  # in the window: no shortcut takes the key
    assert view.selected_attempt == 2 and window.selected_step == 3


def test_a_run_streaming_with_the_tab_in_front_fills_it(window: MainWindow, qtbot: QtBot) -> None:
    """Live: columns follow the run (the timeline follows the newest step, the page its
    attempt), and the kept answer comes with the end of the run."""
    view = _attempts_in_front(window, qtbot)
    seen: list[str] = []
    window.runner.engineEvent.connect(lambda _event: seen.append(view.page.text()))
    assert window.library.select_scenario("demo:retry-feedback")
    with qtbot.waitSignal(window.runner.finished, timeout=20_000):
        window.run_turn()
    qtbot.waitUntil(lambda: "succeeded" in view.kept.body.toPlainText())
    assert len(view.attempt_columns) == 3 and view.selected_attempt == 3
    assert seen[0] == "no attempts yet" and "attempt 1 of 1" in seen
    assert window.centre_tabs.currentWidget() is view  # the run did not take the tab away


def test_the_tab_behind_the_timeline_builds_nothing_until_raised(
    demos: None, window: MainWindow, qtbot: QtBot
) -> None:
    """A tab behind another has no visible region; the view asks for one, not ``isVisible()``."""
    window.centre_tabs.show_timeline()
    view = window.attempts
    qtbot.waitUntil(lambda: view.visibleRegion().isEmpty())
    window.show_run(stored_run("retry-feedback"))
    assert view.attempt_columns == [] and not view._timer.isActive()
    built = set(view.findChildren(Column))
    assert built == {view.kept, view.final_call, view.transcript, view.streamed}
    window.actions_by_id["tab:attempts"].trigger()
    qtbot.waitUntil(lambda: len(view.attempt_columns) == 3)
    assert view.hasFocus()  # its paging keys work at once
    docks = [d for d in window.findChildren(QDockWidget) if d.objectName() == "stepDock"]
    assert docks and docks[0].isVisible()  # not put away, as Compare does


def test_the_index_classifies_each_step_once_and_in_slices() -> None:
    from inspector.app.detail.attempt_index import AttemptIndex

    events, record = demo_run("retry-feedback")
    run = LiveRun()
    index = AttemptIndex()
    for event in events:
        run.apply(event)
        index.update(run.steps)
    spans = [index.span(p) for p in range(len(index))]
    assert [(s.number, s.start, s.end) for s in spans] == [(1, 0, 2), (2, 2, 3), (3, 3, 4)]
    assert index.tool_total == 1 and spans[0].tool_count == 1
    assert spans[0].candidates == []  # its last step is its candidate, shown apart
    assert index.position_of(3) == 2 and index.position_of(4) is None
    one_step_each = _many_attempts(10).steps  # each step its attempt's candidate
    assert index.update(one_step_each) is False and len(index) == 10
    assert index.tool_total == 0
    same_attempt = [LiveRun.from_record(record).steps[0]] * 5  # five steps of attempt 1
    assert index.update(same_attempt, budget=2) is True  # 4 to classify, 2 a call
    assert index.update(same_attempt, budget=2) is False
    assert index.span(0).tool_count == 4 and index.span(-1).end == 5


def test_the_index_against_a_plain_walk_whatever_the_budget() -> None:
    """Attempts of one to four steps, numbered from 2 with a gap, indexed in slices of every
    size: the same spans and classification as grouping the steps one by one."""
    from inspector.app.detail.attempt_index import AttemptIndex

    tool, answer = demo_run("retry-feedback")[1].steps[0], demo_run("retry-feedback")[1].steps[1]
    steps: list[LiveStep] = []
    for number, size in ((2, 1), (3, 4), (5, 2), (6, 1), (7, 3)):
        for n in range(size):
            kind = answer if n == size - 1 or n % 2 else tool
            update = {"index": len(steps) + 1, "attempt": number}
            steps.append(LiveStep.from_step(kind.model_copy(update=update)))
    groups = attempt_columns([s.as_step() for s in steps])
    for budget in (1, 2, 3, 5, 100):
        index = AttemptIndex()
        while index.update(steps, budget=budget):
            pass
        spans = [index.span(p) for p in range(len(index))]
        assert [s.number for s in spans] == [c.number for c in groups] == [2, 3, 5, 6, 7]
        assert [s.end for s in spans] == [c.step for c in groups]  # the last step's index
        assert [s.tool_count for s in spans] == [c.tool_count for c in groups]
        assert [len(s.candidates) for s in spans] == [0, 1, 0, 0, 1]
        assert index.position_of(5) == 2 and index.position_of(4) is None


def test_the_render_after_show_run_lets_due_timers_run_first(qtbot: QtBot) -> None:
    """``show_run`` renders at the next event-loop turn, timers included: a timer due before
    it runs first (a 0 ms single shot was an event, delivered before every due timer: the
    window's ``_show``, the page and the views held the loop as one pause)."""
    from PySide6.QtCore import QTimer

    view = make_view(qtbot)
    order: list[str] = []
    refresh = view.refresh

    def counted() -> None:
        order.append("render")
        refresh()

    view.refresh = counted  # type: ignore[method-assign]
    due = QTimer()
    due.setSingleShot(True)
    due.setInterval(0)
    due.timeout.connect(lambda: order.append("timer"))
    due.start()
    view.show_run(stored_run("retry-feedback"))
    qtbot.waitUntil(lambda: "render" in order and "timer" in order)
    assert order[:2] == ["timer", "render"]


@pytest.mark.parametrize("width", [420, 1300])
def test_the_paging_keys_read_from_their_start_or_end_in_an_ellipsis(
    qtbot: QtBot, width: int
) -> None:
    # At 1024x700 the centre tab is ~400 px wide: the right-aligned hint was cut at its left
    # edge ("mpt · PgUp/PgDn: page · click: its step").
    # Then the short keys: the long ones elided read "Left/Right: attempt · PgUp/PgDn: pa…".
    from inspector.app.detail.attempts_view import PAGE_KEYS, SHORT_KEYS

    view = make_view(qtbot, width)
    show(qtbot, view, stored_run("retry-feedback"))
    keys = view.keys
    shown = keys.text()
    assert keys.fontMetrics().horizontalAdvance(shown) <= keys.contentsRect().width()
    assert shown == (SHORT_KEYS if width == 420 else PAGE_KEYS)  # whole, not elided
    assert keys.toolTip() == PAGE_KEYS


def test_the_keys_shorter_still_end_in_an_ellipsis(qtbot: QtBot) -> None:
    from inspector.app.detail.attempts_view import SHORT_KEYS

    view = make_view(qtbot, 250)
    show(qtbot, view, stored_run("retry-feedback"))
    shown = view.keys.text()
    assert shown.endswith("…") and SHORT_KEYS.startswith(shown[:-1])


@pytest.mark.parametrize("width", [420, 1300])
def test_the_three_views_of_the_turn_are_never_squeezed(qtbot: QtBot, width: int) -> None:
    """At 1024x700 the three panes side by side were ~130 px each ("ASSISTAN T"): narrower
    than PANE_MIN each, they are tabs, the one shown as wide as the three."""
    from inspector.app.detail.turn_views import PANE_MIN

    view = make_view(qtbot, width)
    show(qtbot, view, stored_run("retry-feedback"))
    panes = [view.final_call, view.transcript, view.streamed]
    shown = [pane for pane in panes if pane.isVisible()]
    assert shown and all(pane.width() >= PANE_MIN for pane in shown)
    assert len(shown) == (1 if width == 420 else 3)
    assert "Tell Sam" in view.transcript.body.toPlainText()  # rendered, shown or not
    if width == 420:
        view.resize(1300, 850)  # wide again: side by side, titled
        qtbot.waitUntil(
            lambda: all(pane.width() >= PANE_MIN and pane.title.isVisible() for pane in panes)
        )
