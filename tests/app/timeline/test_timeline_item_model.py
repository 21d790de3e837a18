"""TimelineItemModel: rows, cell data, live appending and the cleared filter, with qtmodeltester
watching every signal."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QModelIndex, Qt
from pytestqt.modeltest import ModelTester

from inspector.app.timeline.timeline_item_model import Column, TimelineItemModel, TimelineRole
from inspector.core.events import TextDelta
from inspector.core.live import LiveRun, LiveStep
from inspector.core.records import Forced, StepRequest
from inspector.reports.step_notes import step_notes
from inspector.reports.timeline_cells import forced_markers, output_preview
from tests.helpers.demo_events import demo_run, stored_run

DEMOS = [
    "retry-feedback",
    "step-cap",
    "final-answer-tool",
    "empty-final",
    "invalid-output-fallback",
]


def rows(model: TimelineItemModel) -> list[str]:
    """Each row as "A<n>" (attempt header), "n<step index>" (a note under the step) or
    "<step index>"."""
    out = []
    for row in range(model.rowCount()):
        index = model.index(row, Column.STEP)
        note = model.note_at(row)
        if note is not None:
            out.append(f"n{note[0]}")
        elif index.data(TimelineRole.IS_HEADER):
            out.append(f"A{index.data(TimelineRole.ATTEMPT)}")
        else:
            out.append(str(index.data(TimelineRole.STEP_INDEX)))
    return out


def cell(model: TimelineItemModel, step: int, column: Column, role: int = 0) -> object:
    return model.index(model.row_of_step(step), column).data(role or Qt.ItemDataRole.DisplayRole)


@pytest.mark.parametrize("demo", DEMOS)
def test_stored_runs_pass_the_model_tester(qtmodeltester: ModelTester, demo: str) -> None:
    model = TimelineItemModel()
    model.show_run(stored_run(demo))
    qtmodeltester.check(model, force_py=True)
    record = demo_run(demo)[1]
    shown = rows(model)
    assert [r for r in shown if r[0].isdigit()] == [str(s.index) for s in record.steps]
    assert {r for r in shown if r.startswith("A")} == {f"A{s.attempt}" for s in record.steps}
    live_steps = stored_run(demo).steps
    assert [r for r in shown if r.startswith("n")] == [
        f"n{live.index}" for live in live_steps for _ in step_notes(live)
    ]


@pytest.mark.parametrize("demo", DEMOS)
def test_live_events_append_rows_and_end_like_the_stored_run(
    qtmodeltester: ModelTester, demo: str
) -> None:
    events, record = demo_run(demo)
    run, model = LiveRun(), TimelineItemModel()
    model.show_run(run)
    qtmodeltester.check(model)  # the C++ tester stays attached and checks every signal
    resets: list[int] = []
    model.modelReset.connect(lambda: resets.append(1))
    counts = []
    for event in events:
        run.apply(event)
        model.on_event(event)
        counts.append(model.rowCount())
    assert counts == sorted(counts) and counts[-1] == len(rows(model))
    assert not resets  # rows (steps, then their notes) are inserted as they come
    stored = TimelineItemModel()
    stored.show_run(stored_run(demo))
    assert rows(model) == rows(stored)
    for step in record.steps:
        for column in Column:
            assert cell(model, step.index, column) == cell(stored, step.index, column)


def test_retry_feedback_rows_show_kind_status_verdicts_tokens_and_cleared() -> None:
    model = TimelineItemModel()
    model.show_run(stored_run("retry-feedback"))
    assert rows(model) == ["A1", "1", "2", "n2", "n2", "A2", "3", "n3", "n3", "A3", "4"]
    assert cell(model, 1, Column.KIND) == "tool call"
    assert cell(model, 2, Column.KIND) == "final"
    assert cell(model, 2, Column.STATUS) == "failed validation"
    assert cell(model, 2, Column.STEP, TimelineRole.CLEARED) is True
    assert "cleared" in str(cell(model, 2, Column.MARKERS))
    assert cell(model, 4, Column.STEP, TimelineRole.CLEARED) is False
    tip = str(cell(model, 3, Column.VERDICTS, Qt.ItemDataRole.ToolTipRole))
    assert "✗ max_length: 171 characters > 160" in tip and "✓ no_markdown" in tip
    step4 = demo_run("retry-feedback")[1].steps[3]
    assert step4.response is not None
    usage = step4.response.usage
    assert cell(model, 4, Column.TOKENS) == f"{usage.input_tokens} / {usage.output_tokens}"
    header = model.index(model.row_of_step(2) - 2, 0)
    assert header.data() == "Attempt 1 · 2 steps · cleared"
    assert not model.flags(header) & Qt.ItemFlag.ItemIsSelectable


def test_latency_bar_is_scaled_to_the_slowest_step() -> None:
    model = TimelineItemModel()
    model.show_run(stored_run("retry-feedback"))
    steps = demo_run("retry-feedback")[1].steps
    slowest = max(steps, key=lambda s: s.latency_ms or 0)
    fractions = {
        s.index: cell(model, s.index, Column.LATENCY, TimelineRole.LATENCY_FRACTION) for s in steps
    }
    assert fractions[slowest.index] == 1.0
    assert all(0 < float(f) <= 1.0 for f in fractions.values())  # type: ignore[arg-type]
    assert len(set(fractions.values())) > 1


def test_forced_markers_name_what_the_loop_forced() -> None:
    model = TimelineItemModel()
    model.show_run(stored_run("step-cap"))
    assert cell(model, 4, Column.MARKERS) == "tools off +instruction"
    assert cell(model, 1, Column.MARKERS) == ""
    model.show_run(stored_run("invalid-output-fallback"))
    assert cell(model, 1, Column.MARKERS, TimelineRole.MARKERS) == [
        ("final_answer pinned", "tool_choice pinned to the final_answer tool"),
    ]
    assert forced_markers(None) == []
    assert [m for m, _ in forced_markers(Forced(tool_choice="required"))] == ["tool required"]


def test_hiding_cleared_attempts_drops_their_rows_and_empty_headers(
    qtmodeltester: ModelTester,
) -> None:
    model = TimelineItemModel()
    model.show_run(stored_run("retry-feedback"))
    qtmodeltester.check(model)
    model.set_show_cleared(False)
    assert rows(model) == ["A1", "1", "A3", "4"]
    assert model.row_of_step(2) == -1 and model.row_of_step(3) == -1
    model.set_show_cleared(True)
    assert rows(model) == ["A1", "1", "2", "n2", "n2", "A2", "3", "n3", "n3", "A3", "4"]


@pytest.mark.parametrize("demo", ["retry-feedback", "invalid-output-fallback"])
def test_cleared_rows_disappear_live_when_hidden(qtmodeltester: ModelTester, demo: str) -> None:
    events, _ = demo_run(demo)
    run, model = LiveRun(), TimelineItemModel()
    model.set_show_cleared(False)
    model.show_run(run)
    qtmodeltester.check(model)
    removed: list[tuple[int, int]] = []
    model.rowsRemoved.connect(lambda _p, first, last: removed.append((first, last)))
    for event in events:
        run.apply(event)
        model.on_event(event)
    hidden = TimelineItemModel()
    hidden.set_show_cleared(False)
    hidden.show_run(stored_run(demo))
    assert rows(model) == rows(hidden)
    assert removed  # the cleared steps streamed in, then went away


def test_a_text_delta_updates_only_the_streaming_output_cell() -> None:
    events, _ = demo_run("retry-feedback")
    run, model = LiveRun(), TimelineItemModel()
    model.show_run(run)
    first_delta = next(i for i, e in enumerate(events) if isinstance(e, TextDelta))
    for event in events[:first_delta]:
        run.apply(event)
        model.on_event(event)
    changes: list[tuple[QModelIndex, QModelIndex]] = []
    model.dataChanged.connect(lambda a, b, _roles: changes.append((a, b)))
    delta = events[first_delta]
    assert isinstance(delta, TextDelta)
    run.apply(delta)
    model.on_event(delta)
    row = model.row_of_step(delta.index)
    assert [(a.row(), a.column(), b.row(), b.column()) for a, b in changes] == [
        (row, Column.OUTPUT, row, Column.OUTPUT)
    ]
    assert cell(model, delta.index, Column.KIND) == "pending"
    assert cell(model, delta.index, Column.OUTPUT) == delta.text.strip()


def test_output_preview_is_one_clipped_line() -> None:
    live = LiveStep(index=1, attempt=1, request=StepRequest(system="", messages=[]))
    live.text.extend(["line one\n", "line   two ", "x" * 500])
    preview = output_preview(live)
    assert preview.startswith("line one line two x")
    assert "\n" not in preview and len(preview) == 120


def test_previews_keep_finished_steps_and_follow_streaming_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from inspector.reports import timeline_cells

    made: list[int] = []
    original = timeline_cells.output_preview
    monkeypatch.setattr(
        timeline_cells, "output_preview", lambda live: (made.append(live.index), original(live))[1]
    )
    previews = timeline_cells.Previews(kept=2)
    streaming = LiveStep(index=1, attempt=1, request=StepRequest(system="", messages=[]))
    streaming.text.append("Hi")
    assert previews.of(streaming) == "Hi"
    streaming.text.append(" Sam")
    assert previews.of(streaming) == "Hi Sam" and made == [1, 1]  # pending: made afresh
    finished = LiveRun.from_record(demo_run("retry-feedback")[1]).steps
    first = previews.of(finished[1])
    assert previews.of(finished[1]) == first and made == [1, 1, 2]  # finished: kept
    previews.of(finished[2])
    previews.of(finished[3])  # past `kept`: the kept ones are dropped, not the answer
    assert previews.of(finished[1]) == first and made == [1, 1, 2, 3, 4, 2]


def test_an_empty_reply_says_so_in_the_output_column() -> None:
    model = TimelineItemModel()
    model.show_run(stored_run("empty-final"))
    assert cell(model, 2, Column.OUTPUT) == "(an empty reply: no text, no tool calls)"


def test_flips_come_and_go_as_note_rows_without_a_reset(qtmodeltester: ModelTester) -> None:
    from inspector.core.revalidate import Flip

    model = TimelineItemModel()
    model.show_run(stored_run("retry-feedback"))
    qtmodeltester.check(model)
    resets: list[int] = []
    model.modelReset.connect(lambda: resets.append(1))
    flips = {
        1: [Flip(step=1, validator="no_markdown", before=None, after="pass")],
        3: [Flip(step=3, validator="max_length", before="fail", after="pass")],
    }
    model.set_flips(flips)
    assert rows(model) == ["A1", "1", "n1", "2", "n2", "n2", "A2", "3", "n3", "n3", "n3", "A3", "4"]
    notes = [model.index(r, 0).data(TimelineRole.NOTE).text for r in model.note_rows(3)]
    assert notes == [
        "✗ max_length: 171 characters > 160",
        "⇄ max_length: fail → pass",
        "↳ feedback (user): An SMS holds 160 characters at most. Shorten it.",
    ]
    assert model.row_of_step(4) == 12
    model.set_flips({})
    assert rows(model) == ["A1", "1", "2", "n2", "n2", "A2", "3", "n3", "n3", "A3", "4"]
    assert model.row_of_step(4) == 10 and not resets


@pytest.mark.parametrize("demo", ["retry-feedback", "step-cap", "final-answer-tool"])
def test_a_rows_paint_cells_are_its_cells_read_one_by_one(demo: str) -> None:
    """``paint_row`` (the row painter's one call per row) gives each column's ``paint_cell``:
    steps, headers and note rows, flipped and cleared steps, a streaming step."""
    from inspector.core.revalidate import Flip

    model = TimelineItemModel()
    model.show_run(stored_run(demo))
    flip = Flip(step=1, validator="no_markdown", before=None, after="pass")
    for flips in ({}, {1: [flip]}):
        model.set_flips(flips)
        for row in range(model.rowCount()):
            cells = [model.paint_cell(row, column) for column in range(len(Column))]
            assert list(model.paint_row(row)) == cells
    live = LiveRun()
    for event in demo_run(demo)[0][:4]:  # a step started, not finished
        live.apply(event)
    model.show_run(live)
    for row in range(model.rowCount()):
        assert list(model.paint_row(row)) == [model.paint_cell(row, c) for c in range(len(Column))]


def test_a_rows_cells_make_the_texts_of_the_columns_shown_only() -> None:
    """``paint_row(row, shown)``: the columns the row painter paints as ``paint_cell`` gives
    them; the others without their text (not made)."""
    model = TimelineItemModel()
    model.show_run(stored_run("step-cap"))
    shown = tuple(column in (Column.STEP, Column.OUTPUT) for column in Column)
    checked = 0
    for row in range(model.rowCount()):
        if not model.step_at(row):
            continue
        cells = model.paint_row(row, shown)
        for column in Column:
            whole = model.paint_cell(row, column)
            assert whole is not None
            if shown[column]:
                assert cells[column] == whole
            else:
                assert cells[column] == whole._replace(text="")
        checked += 1
    assert checked == 4 and model.paint_row(1, shown)[Column.KIND].text == ""  # type: ignore[union-attr]
