"""Opening a long stored run (app/shell/stored_open.py): shown from the store's light read
first, then filled with its full steps read on a worker thread — the timeline keeps its rows,
the views that need whole steps render then; what the user sees at the end is what the whole
read shows. A run whose full read fails ends on the one-line error."""

from __future__ import annotations

import threading
from itertools import pairwise
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from inspector.app.detail.attempts_view import LOADING
from inspector.app.detail.model_saw import WHOLE_LATER
from inspector.app.shell.main_window import MainWindow
from inspector.core.lazy_steps import LightParts
from inspector.core.live import LiveRun
from inspector.store import Store
from inspector.workflows import runs
from tests.app.timeline.test_light_open import cells
from tests.store.synthetic import every_shape


@pytest.fixture
def gated(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Every run opens light (``LIGHT_FROM`` 0); the full read waits for the event."""
    from inspector.app.shell import main_window

    monkeypatch.setattr(runs, "LIGHT_FROM", 0)
    gate = threading.Event()
    real = main_window.load_stored_run

    def gated_read(path: Path, run_id: str, reuse: LightParts | None = None) -> LiveRun:
        gate.wait(timeout=30)
        return real(path, run_id, reuse)

    monkeypatch.setattr(main_window, "load_stored_run", gated_read)
    return gate


def test_a_long_run_shows_light_then_filled_as_a_whole_read_shows_it(
    window: MainWindow, store: Store, qtbot: QtBot, gated: threading.Event
) -> None:
    record = every_shape()
    store.save(record)
    window.show_stored_run(record.run_id)
    qtbot.waitUntil(lambda: window.shown is not None and window.shown.run_id == record.run_id)
    light = window.shown
    assert light.light and light.record is not None
    model = window.timeline.model
    rows = model.rowCount()
    assert rows > len(record.steps)  # headers and notes laid out from the light read
    window.detail.tabs.setCurrentIndex(0)  # Model saw: the request is not read yet
    qtbot.waitUntil(lambda: window.detail.current_step == len(record.steps))
    window.detail.show_step(light, window.detail.current_step)
    assert "Loading step 5's request" in window.detail.model_saw_pane.chat.toPlainText()

    window.centre_tabs.show_attempts()  # no attempts until the full steps: it says so
    qtbot.waitUntil(lambda: window.attempts.page.text() == LOADING)
    gated.set()
    qtbot.waitUntil(lambda: not light.light, timeout=10_000)
    assert window.shown is light and model.rowCount() == rows  # same rows, filled in place
    window.centre_tabs.show_timeline()
    qtbot.waitUntil(lambda: "Loading" not in window.detail.model_saw_pane.chat.toPlainText())
    window.centre_tabs.show_attempts()  # on the attempt of the step selected while light
    qtbot.waitUntil(lambda: window.attempts.selected_attempt == 3)

    whole = MainWindow(store)  # the same run read whole, as every run was before
    qtbot.addWidget(whole)
    whole.show_loaded(LiveRun.from_record(store.load(record.run_id)))
    assert cells(model) == cells(whole.timeline.model)
    assert window.run_heading.text() == whole.run_heading.text()


def test_a_run_whose_full_read_fails_ends_on_the_one_line_error(
    window: MainWindow,
    store: Store,
    qtbot: QtBot,
    gated: threading.Event,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from inspector.app.shell import main_window
    from inspector.store import StoreUnusable

    def damaged(path: Path, run_id: str, reuse: LightParts | None = None) -> LiveRun:
        gated.wait(timeout=30)
        raise StoreUnusable(f"{path}: damaged store: cannot read run {run_id}")

    monkeypatch.setattr(main_window, "load_stored_run", damaged)
    record = every_shape()
    store.save(record)
    window.show_stored_run(record.run_id)
    qtbot.waitUntil(lambda: window.shown is not None and window.shown.light)
    gated.set()
    qtbot.waitUntil(lambda: "could not be loaded" in window.run_heading.text(), timeout=10_000)
    assert "damaged store" in window.message_bar.text.text()
    assert window.timeline.model.rowCount() == 0  # nothing half-read stays on screen


def test_a_step_selected_while_the_run_is_light_is_read_alone(
    window: MainWindow, store: Store, qtbot: QtBot, gated: threading.Event
) -> None:
    """Its request (Model saw, without badges or diffs) and raw exchange come before the
    whole run, whose read is held back here."""
    record = every_shape()
    store.save(record)
    window.show_stored_run(record.run_id)
    qtbot.waitUntil(lambda: window.shown is not None and window.shown.light)
    light = window.shown
    detail = window.detail
    window.timeline.select_step(3)
    detail.tabs.setCurrentIndex(4)  # Raw: step 3's raw response, read alone
    qtbot.waitUntil(lambda: '"empty"' in detail.raw.toPlainText(), timeout=10_000)
    detail.tabs.setCurrentIndex(0)
    chat = detail.model_saw_pane.chat
    qtbot.waitUntil(lambda: "Plain text only." in chat.toPlainText(), timeout=10_000)
    assert detail.model_saw_pane.summary.text() == WHOLE_LATER
    assert light.light and not gated.is_set()  # all of it before the whole run was read
    gated.set()
    qtbot.waitUntil(lambda: not light.light, timeout=10_000)
    qtbot.waitUntil(lambda: detail.model_saw_pane.summary.text() != WHOLE_LATER)


def test_a_step_with_a_long_request_waits_for_the_whole_run(
    window: MainWindow,
    store: Store,
    qtbot: QtBot,
    gated: threading.Event,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Its messages would cost what the whole read's do: it is not read alone."""
    from inspector.core import lazy_steps

    monkeypatch.setattr(lazy_steps, "ALONE_MAX", 2)  # step 5's request has 3 messages
    asked: list[int] = []
    window.detail.wholeStepWanted.connect(lambda _run, index: asked.append(index))
    record = every_shape()
    store.save(record)
    window.detail.tabs.setCurrentIndex(0)
    window.show_stored_run(record.run_id)
    qtbot.waitUntil(lambda: window.shown is not None and window.shown.light)
    qtbot.waitUntil(lambda: window.detail.current_step == 5)
    window.detail.show_step(window.shown, 5)
    assert "Loading step 5's request" in window.detail.model_saw_pane.chat.toPlainText()
    window.timeline.select_step(1)  # one message: read alone
    qtbot.waitUntil(lambda: asked == [1])
    gated.set()
    qtbot.waitUntil(lambda: not window.shown.light, timeout=10_000)


def test_a_long_runs_timeline_rows_are_laid_out_off_the_ui_thread(
    window: MainWindow,
    store: Store,
    qtbot: QtBot,
    gated: threading.Event,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The light run's rows come laid out from the worker thread (``lay_out_light``): the
    timeline's ``show_run`` lays out none itself, and shows what a whole read shows."""
    from inspector.app.timeline import timeline_item_model, timeline_rows

    on_ui: list[int] = []
    ui = threading.get_ident()
    real = timeline_rows.take_light

    def counted(*args: object) -> float:
        on_ui.append(threading.get_ident() == ui)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(timeline_item_model, "take_light", counted)
    monkeypatch.setattr(timeline_rows, "take_light", counted)
    record = every_shape()
    store.save(record)
    window.show_stored_run(record.run_id)
    qtbot.waitUntil(lambda: window.shown is not None and window.shown.run_id == record.run_id)
    assert window.shown.light and on_ui == [False]  # once, on a worker thread
    gated.set()
    qtbot.waitUntil(lambda: not window.shown.light, timeout=10_000)
    whole = MainWindow(store)
    qtbot.addWidget(whole)
    whole.show_loaded(LiveRun.from_record(store.load(record.run_id)))
    assert cells(window.timeline.model) == cells(whole.timeline.model)


def test_the_fills_renders_each_run_in_a_loop_turn_of_their_own(
    window: MainWindow,
    store: Store,
    qtbot: QtBot,
    gated: threading.Event,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Once the full steps are in, the Attempts tab's refresh and views and the Step
    detail's render go through ``in_own_turn``: no two of them in one event-loop pass, nor
    in passes next to each other (what fell due meanwhile runs between)."""
    from inspector.app.detail import attempts_view, step_detail
    from inspector.app.widgets import loop_turns

    ran: list[tuple[str, int]] = []

    def through(name: str) -> object:
        def gate(owner: object, piece: object) -> bool:
            def logged() -> None:
                ran.append((getattr(piece, "__name__", name), loop_turns.TURNS.now()))
                piece()  # type: ignore[operator]

            return loop_turns.in_own_turn(owner, logged)  # type: ignore[arg-type]

        return gate

    monkeypatch.setattr(attempts_view, "in_own_turn", through("attempts"))
    monkeypatch.setattr(step_detail, "in_own_turn", through("detail"))
    record = every_shape()
    store.save(record)
    window.centre_tabs.show_attempts()
    window.show_stored_run(record.run_id)
    qtbot.waitUntil(lambda: window.shown is not None and window.shown.run_id == record.run_id)
    light = window.shown
    qtbot.waitUntil(lambda: window.attempts.page.text() == LOADING)
    ran.clear()
    gated.set()
    qtbot.waitUntil(lambda: not light.light, timeout=10_000)
    qtbot.waitUntil(lambda: {"_flush", "_render_views"} <= {n for n, _ in ran})
    qtbot.wait(50)
    turns = [turn for _, turn in ran]
    assert all(later - earlier >= 2 for earlier, later in pairwise(turns)), ran


def test_the_light_steps_the_fill_replaces_are_freed_off_the_ui_thread(
    window: MainWindow, store: Store, qtbot: QtBot, gated: threading.Event
) -> None:
    """The fill replaces the light steps (each step built when read, those with notes built
    by the light read): the UI thread does not free them — a worker drops what they built
    and read, and what the UI thread lets go of then is empty."""
    import gc
    import weakref

    from inspector.core.lazy_steps import light_rows, light_steps

    record = every_shape()
    store.save(record)
    window.show_stored_run(record.run_id)
    qtbot.waitUntil(lambda: window.shown is not None and window.shown.light)
    run = window.shown
    steps, rows = light_steps(run), light_rows(run)
    assert steps is not None and rows is not None
    built = weakref.ref(steps[2])  # a light step, built on the UI thread when read
    freed_on: list[bool] = []
    ui = threading.get_ident()
    weakref.finalize(built(), lambda: freed_on.append(threading.get_ident() == ui))
    assert steps.built() > 0 and rows.built() > 0 and rows.held() > 0
    gc.collect()
    gated.set()
    qtbot.waitUntil(lambda: not run.light, timeout=10_000)
    qtbot.waitUntil(lambda: steps.built() == 0 and rows.held() == 0, timeout=10_000)
    assert rows.built() == 0 and built() is None
    assert freed_on == [False]  # dropped by the worker, by reference counting


def test_the_model_saw_marks_index_of_the_filled_run_is_built_off_the_ui_thread(
    window: MainWindow,
    store: Store,
    qtbot: QtBot,
    gated: threading.Event,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The full read's ``FailureIndex`` (what earlier attempts left in the request) is built
    on the worker thread beside it; the Step detail's render after the fill looks at no
    attempt again, and its marks are those a whole read shows."""
    from inspector.reports.request_marks import FailureIndex

    looked_on_ui: list[int] = []
    ui = threading.get_ident()
    real = FailureIndex.update

    def counted(self: FailureIndex, *args: object, **kwargs: object) -> None:
        before = self.visited
        real(self, *args, **kwargs)  # type: ignore[arg-type]
        if threading.get_ident() == ui:
            looked_on_ui.append(self.visited - before)

    monkeypatch.setattr(FailureIndex, "update", counted)
    record = every_shape()
    store.save(record)
    window.detail.tabs.setCurrentIndex(0)  # Model saw
    window.show_stored_run(record.run_id)
    qtbot.waitUntil(lambda: window.shown is not None and window.shown.light)
    run = window.shown
    gated.set()
    qtbot.waitUntil(lambda: not run.light, timeout=10_000)
    pane = window.detail.model_saw_pane
    qtbot.waitUntil(lambda: "Loading" not in pane.chat.toPlainText())
    window.detail.show_step(run, len(record.steps))
    assert pane._failures.visited > 0 and sum(looked_on_ui) == 0

    shown = pane.chat.toHtml()
    pane.clear("")  # its index let go: the next render builds one on the UI thread
    window.detail.show_step(run, len(record.steps))
    assert sum(looked_on_ui) > 0 and pane.chat.toHtml() == shown  # the same marks


def test_the_attempts_index_of_the_filled_run_is_built_off_the_ui_thread(
    window: MainWindow,
    store: Store,
    qtbot: QtBot,
    gated: threading.Event,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The Attempts tab shows the filled run from an ``AttemptIndex`` built on the worker
    thread beside the full read: it indexes none of the run's steps on the UI thread, and
    shows what it shows when it indexes them itself."""
    from inspector.app.detail.attempt_index import AttemptIndex

    indexed_on_ui: list[int] = []
    ui = threading.get_ident()
    real = AttemptIndex.update

    def counted(self: AttemptIndex, steps: list[object], *args: object) -> bool:
        before = len(self)
        more = real(self, steps, *args)  # type: ignore[arg-type]
        if threading.get_ident() == ui:
            indexed_on_ui.append(len(self) - before)
        return more

    monkeypatch.setattr(AttemptIndex, "update", counted)
    from inspector.app.detail.attempts_view import AttemptsView

    renders: list[str] = []  # the page rendered by a refresh (its own turn), or apart
    for name in ("refresh", "_render_page"):
        method = getattr(AttemptsView, name)
        monkeypatch.setattr(
            AttemptsView,
            name,
            lambda self, _m=method, _n=name: (renders.append(_n), _m(self))[1],
        )
    record = every_shape()
    store.save(record)
    window.centre_tabs.show_attempts()
    window.show_stored_run(record.run_id)
    qtbot.waitUntil(lambda: window.shown is not None and window.shown.light)
    run = window.shown
    qtbot.waitUntil(lambda: window.detail.current_step == len(record.steps))
    renders.clear()
    gated.set()
    qtbot.waitUntil(lambda: not run.light, timeout=10_000)
    attempts = window.attempts
    qtbot.waitUntil(lambda: attempts.page.text() != LOADING and bool(attempts.attempt_columns))
    assert sum(indexed_on_ui) == 0
    # the selected step's attempt (the last) shown by the refresh, not rendered in the fill
    assert renders[:2] == ["refresh", "_render_page"], renders
    assert attempts.selected_attempt == record.steps[-1].attempt
    shown = [c.title.text() for c in attempts.attempt_columns], attempts.page.text()
    attempts.show_run(run)  # its own index, built on the UI thread at its refresh
    qtbot.waitUntil(lambda: sum(indexed_on_ui) > 0)
    assert ([c.title.text() for c in attempts.attempt_columns], attempts.page.text()) == shown


def test_a_light_run_dropped_before_its_full_read_is_freed_off_the_ui_thread(
    window: MainWindow,
    store: Store,
    qtbot: QtBot,
    gated: threading.Event,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Another run shown while the full read of a light one runs: once the read arrives (and
    is dropped), the light run — the steps it built, its bodies — is freed on a worker, not
    on the UI thread when the fill lets go of it."""
    import weakref

    from inspector.app.runtime import run_graveyard

    record = every_shape()
    store.save(record)
    window.show_stored_run(record.run_id)
    qtbot.waitUntil(lambda: window.shown is not None and window.shown.light)
    run = window.shown
    ui, freed_on = threading.get_ident(), []
    for step in run.steps:  # each built (a view read them all)
        weakref.finalize(step, lambda: freed_on.append(threading.get_ident() == ui))
    gone = weakref.ref(run)
    del run, step
    monkeypatch.setattr(run_graveyard, "PATIENCE", 3)  # the read outlasts the graveyard's
    window.show_loaded(LiveRun())  # the user moved on; the full read is still under way
    qtbot.waitUntil(lambda: window.focus.graveyard.pending == 0)  # let go: the fill holds it
    assert gone() is not None
    gated.set()
    qtbot.waitUntil(lambda: gone() is None and len(freed_on) == len(record.steps), timeout=10_000)
    assert set(freed_on) == {False}


def test_the_whole_read_reuses_what_the_light_read_produced(
    window: MainWindow, store: Store, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fill hands the whole read the light read's step bodies and verdicts
    (``LightParts``), so the worker beside the first paint does not read them again."""
    from inspector.app.shell import main_window

    monkeypatch.setattr(runs, "LIGHT_FROM", 0)
    real = main_window.load_stored_run
    given: list[LightParts | None] = []

    def read(path: Path, run_id: str, reuse: LightParts | None = None) -> LiveRun:
        given.append(reuse)
        return real(path, run_id, reuse)

    monkeypatch.setattr(main_window, "load_stored_run", read)
    record = every_shape()
    store.save(record)
    window.show_stored_run(record.run_id)
    qtbot.waitUntil(lambda: window.shown is not None and not window.shown.light, timeout=10_000)
    assert len(given) == 1 and given[0] is not None
    assert len(given[0].verdicts) == len({s.index for s in record.steps if s.verdicts})
    assert window.shown.record == store.load(record.run_id)
