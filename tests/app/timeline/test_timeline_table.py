"""TimelineTable: rows inserted repaint only from where they go down. Qt's ``QTableView``
repaints every visible cell on any row count change; streaming appends rows every event-loop
turn. The cells painted are counted (a counting delegate), never timed."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from inspector.app.timeline.timeline_delegate import TimelineDelegate
from inspector.app.timeline.timeline_item_model import Column
from inspector.app.timeline.timeline_view import TimelineView
from inspector.core.events import Event, StepFinished, StepStarted, TextDelta
from inspector.core.live import LiveRun
from inspector.core.revalidate import Flip
from tests.helpers.demo_events import demo_run


class CountingDelegate(TimelineDelegate):
    def __init__(self, *args: object) -> None:
        super().__init__(*args)  # type: ignore[arg-type]
        self.cells = 0

    def paint(self, *args: object) -> None:  # type: ignore[override]
        self.cells += 1
        super().paint(*args)  # type: ignore[arg-type]


def step_events(first: StepStarted, finished: StepFinished, number: int) -> list[Event]:
    """Step ``number`` of attempt 1: started, a piece of text, finished."""
    step = finished.step.model_copy(update={"index": number, "attempt": 1, "verdicts": []})
    return [
        first.model_copy(update={"index": number, "attempt": 1}),
        TextDelta(run_id=first.run_id, index=number, text="x"),
        finished.model_copy(update={"step": step}),
    ]


class Streaming:
    """A timeline showing a live run of ``steps`` one-step rows (plus its attempt header)."""

    def __init__(self, qtbot: QtBot, steps: int) -> None:
        events, _ = demo_run("retry-feedback")
        self.first = next(e for e in events if isinstance(e, StepStarted))
        self.finished = next(e for e in events if isinstance(e, StepFinished))
        self.view = view = TimelineView()
        qtbot.addWidget(view)
        self.delegate = CountingDelegate(view.table)
        view.table.setItemDelegate(self.delegate)
        view.resize(900, 500)
        self.live = LiveRun()
        self.live.apply(events[0])  # RunStarted
        view.show_run(self.live)
        view.show()
        qtbot.waitExposed(view)
        self.steps = 0
        self.add(steps)
        view.follow_now()
        self.settle()

    def add(self, steps: int) -> None:
        for number in range(self.steps + 1, self.steps + steps + 1):
            for event in step_events(self.first, self.finished, number):
                self.live.apply(event)
                self.view.on_event(event)
        self.steps += steps
        self.view._follow_timer.stop()  # the test follows, or not, by itself

    @property
    def cells(self) -> int:
        """Cells painted so far: by the delegate (Qt's path) or the table's row painter."""
        return self.delegate.cells + self.view.table.cells_painted

    def settle(self) -> int:
        """Cells painted until nothing is left to paint."""
        before = self.cells
        for _ in range(5):
            QApplication.processEvents()
        return self.cells - before

    @property
    def visible_cells(self) -> int:
        table = self.view.table
        rows = table.rowAt(table.viewport().height() - 1) - table.rowAt(0) + 1
        shown = [c for c in Column if not table.isColumnHidden(c)]
        return rows * len(shown)


def test_rows_appended_below_the_rows_shown_repaint_no_cell(qtbot: QtBot) -> None:
    stream = Streaming(qtbot, steps=200)
    stream.view.table.scrollToTop()
    stream.settle()
    layouts = stream.view.table.full_layouts
    stream.add(10)  # what a slice of a streaming run does
    assert stream.settle() == 0  # Qt's layout repainted every visible cell
    assert stream.view.table.full_layouts == layouts
    assert stream.view.model.rowCount() == 211


def test_following_the_newest_row_paints_the_new_rows_only(qtbot: QtBot) -> None:
    stream = Streaming(qtbot, steps=200)
    bar = stream.view.table.verticalScrollBar()
    assert bar.value() == bar.maximum() > 0
    stream.add(2)
    assert stream.settle() == 0  # below the rows shown until followed
    stream.view.follow_newest()
    stream.view.follow_now()  # scrolls two rows: the rest of the viewport is moved, not painted
    painted = stream.settle()
    assert 0 < painted <= 3 * len(Column) < stream.visible_cells
    assert bar.value() == bar.maximum()


def test_rows_inserted_above_the_rows_shown_repaint_them_all(qtbot: QtBot) -> None:
    stream = Streaming(qtbot, steps=200)
    flip = Flip(step=3, validator="max_length", before="pass", after="fail")
    stream.view.set_flips({3: [flip]})  # a note row under step 3, far above the viewport
    assert stream.settle() >= stream.visible_cells  # every row shown moved down one


def test_rows_removed_take_qts_full_layout(qtbot: QtBot) -> None:
    stream = Streaming(qtbot, steps=50)
    layouts = stream.view.table.full_layouts
    stream.view.set_flips({3: [Flip(step=3, validator="v", before="pass", after="fail")]})
    stream.settle()
    stream.view.set_flips({})  # the note row goes
    stream.settle()
    assert stream.view.table.full_layouts > layouts


def test_a_note_asked_for_outside_the_rows_does_not_stop_the_next(qtbot: QtBot) -> None:
    from inspector.app.timeline.timeline_view import TimelineView
    from tests.helpers.demo_events import stored_run

    view = TimelineView()
    qtbot.addWidget(view)
    view.show_run(stored_run("step-cap"))
    row = next(r for r in range(view.model.rowCount()) if view.model.note_at(r) is not None)
    one_line = view.table.rowHeight(row)
    view.table.wrap_note(-1)  # no row there
    view.table.wrap_note(row)
    qtbot.waitUntil(lambda: view.table.rowHeight(row) > one_line)
    step = view.model.row_of_step(1)
    view.table.wrap_note(step)  # a step row is never made tall
    qtbot.wait(20)
    assert view.table.rowHeight(step) == one_line
