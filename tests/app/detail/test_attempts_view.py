"""AttemptsView: a column per attempt, the kept answer, and the three views of a turn."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from inspector.app.detail.attempts_view import AttemptsView, group_attempts
from inspector.core.events import RunFinished
from inspector.core.live import LiveRun
from tests.helpers.demo_events import demo_run, stored_run


def make_view(qtbot: QtBot) -> AttemptsView:
    view = AttemptsView()
    qtbot.addWidget(view)
    view.resize(1300, 850)
    view.show()
    qtbot.waitExposed(view)
    return view


def test_one_column_per_attempt_with_candidate_verdicts_and_feedback(qtbot: QtBot) -> None:
    record = demo_run("retry-feedback")[1]
    view = make_view(qtbot)
    view.show_run(stored_run("retry-feedback"))
    columns = view.attempt_columns
    assert len(columns) == 3
    assert "Attempt 1" in columns[0].title.text() and "cleared" in columns[0].title.text()
    assert "cleared" not in columns[2].title.text()
    second = columns[1].body.toPlainText()
    assert record.steps[2].response is not None
    assert record.steps[2].response.text in second
    assert "171 characters > 160" in second
    assert "An SMS holds 160 characters at most. Shorten it." in second
    assert "lookup_contact" in columns[0].body.toPlainText()  # its tool step, in brief
    assert record.output in view.kept.body.toPlainText()


def test_the_three_views_of_the_turn(qtbot: QtBot) -> None:
    record = demo_run("retry-feedback")[1]
    view = make_view(qtbot)
    view.show_run(stored_run("retry-feedback"))
    final_call = view.final_call.body.toPlainText()
    for message in record.steps[-1].request.messages:
        assert (message.content or "") in final_call
    transcript = view.transcript.body.toPlainText()
    assert "**Hi Sam!**" not in transcript  # cleared from what was persisted
    assert record.output in transcript
    streamed = view.streamed.body.toPlainText()
    assert streamed.count("shown, then cleared") == 2
    assert "**Hi Sam!**" in streamed


def test_fallback_is_named_as_the_handlers_value(qtbot: QtBot) -> None:
    view = make_view(qtbot)
    view.show_run(stored_run("invalid-output-fallback"))
    kept = view.kept.body.toPlainText()
    assert "fallback" in kept and "Supplied by the invalid-output handler" in kept
    assert len(view.attempt_columns) == 3


def test_columns_appear_as_the_run_streams(qtbot: QtBot) -> None:
    events, record = demo_run("retry-feedback")
    run = LiveRun()
    view = make_view(qtbot)
    view.show_run(run)
    counts = []
    for event in events:
        run.apply(event)
        view.on_event(event)
        if isinstance(event, RunFinished):
            break
        qtbot.waitUntil(
            lambda: (
                len(view.attempt_columns) == len(group_attempts([s.as_step() for s in run.steps]))
            )
        )
        counts.append(len(view.attempt_columns))
        assert "Written when the run finishes" in view.transcript.body.toPlainText()
    assert counts[0] == 0 and counts[-1] == 3 and counts == sorted(counts)
    qtbot.waitUntil(lambda: "succeeded" in view.kept.body.toPlainText())
    assert record.output in view.transcript.body.toPlainText()


def test_a_hidden_view_does_not_redraw_and_catches_up_when_shown(qtbot: QtBot) -> None:
    events, record = demo_run("retry-feedback")
    run = LiveRun()
    view = make_view(qtbot)
    view.show_run(run)
    view.hide()
    for event in events:
        run.apply(event)
        view.on_event(event)
        assert not view._timer.isActive()  # no redraw scheduled for a view nobody sees
    view.show_run(run)  # a new run shown while hidden is not rendered either
    assert record.output not in view.transcript.body.toPlainText()
    view.show()
    qtbot.waitExposed(view)
    assert record.output in view.transcript.body.toPlainText()
    assert len(view.attempt_columns) == 3


def test_a_dock_tabbed_behind_another_renders_nothing_until_raised(window, qtbot: QtBot) -> None:  # type: ignore[no-untyped-def]
    """``isVisible()`` is true behind a tab: the view asks for a visible region instead."""
    window.detail_dock.raise_()
    qtbot.waitUntil(lambda: window.attempts.visibleRegion().isEmpty())
    assert window.attempts.isVisible()  # what the old check saw
    window.show_run(stored_run("retry-feedback"))
    assert window.attempts.attempt_columns == []
    assert not window.attempts._timer.isActive()
    window.attempts_dock.raise_()
    qtbot.waitUntil(lambda: len(window.attempts.attempt_columns) == 3)


def _many_attempts(attempts: int) -> LiveRun:
    """``attempts`` copies of one rejected attempt of the demo, renumbered."""
    from inspector.core.live import LiveStep

    step = demo_run("retry-feedback")[1].steps[-1]
    run = LiveRun()
    run.steps = [
        LiveStep.from_step(step.model_copy(update={"index": n, "attempt": n}))
        for n in range(1, attempts + 1)
    ]
    return run


def test_a_run_of_many_attempts_builds_only_the_columns_in_view(qtbot: QtBot) -> None:
    view = make_view(qtbot)
    view.show_run(_many_attempts(2_000))
    columns = view.attempt_columns
    assert 3 <= len(columns) <= 8
    assert "Attempt 1<" in columns[0].title.text()
    bar = view._scroll.horizontalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 2_000 * 300 - view.width())  # it spans them all
    bar.setValue(bar.maximum())
    qtbot.waitUntil(lambda: "Attempt 2000<" in view.attempt_columns[-1].title.text())
    assert len(view.attempt_columns) == len(columns)
    streamed = view.streamed.body.toPlainText()
    assert "1,980 earlier candidates not shown" in streamed
    assert streamed.count("attempt ") == 20


def test_the_index_classifies_each_step_once_and_in_slices() -> None:
    from inspector.app.detail.attempt_index import AttemptIndex

    events, record = demo_run("retry-feedback")
    run = LiveRun()
    index = AttemptIndex()
    for event in events:
        run.apply(event)
        index.update(run.steps)
    assert [(s.number, s.start, s.end) for s in index.spans] == [(1, 0, 2), (2, 2, 3), (3, 3, 4)]
    assert index.tool_total == 1 and index.spans[0].tool_count == 1
    assert index.spans[0].candidates == []  # its last step is its candidate, shown apart
    one_step_each = _many_attempts(10).steps  # each step its attempt's candidate
    assert index.update(one_step_each) is False and len(index.spans) == 10
    assert index.tool_total == 0
    same_attempt = [LiveRun.from_record(record).steps[0]] * 5  # five steps of attempt 1
    assert index.update(same_attempt, budget=2) is True  # 4 to classify, 2 a call
    assert index.update(same_attempt, budget=2) is False
    assert index.spans[0].tool_count == 4
