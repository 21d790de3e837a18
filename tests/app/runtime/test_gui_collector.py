"""Garbage collection on the GUI thread: the due generation follows gc's own thresholds, and the
collector switches automatic collection off only while it lives."""

from __future__ import annotations

import gc
import weakref

import pytest
from PySide6.QtWidgets import QApplication

from inspector.app.runtime.gui_collector import GuiThreadCollector, due_generation


@pytest.mark.parametrize(
    ("counts", "due"),
    [
        ((10, 0, 0), None),
        ((701, 0, 0), 0),
        ((701, 11, 0), 1),
        ((701, 11, 11), 2),
        ((5, 11, 0), 1),  # an older generation is due even when the youngest is not
    ],
)
def test_due_generation_follows_the_thresholds(
    counts: tuple[int, int, int], due: int | None
) -> None:
    assert due_generation(counts, (700, 10, 10)) == due


def test_a_zero_threshold_never_collects() -> None:
    assert due_generation((10_000, 10_000, 10_000), (0, 0, 0)) is None


class Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the cyclic collector frees it


def test_the_collector_owns_automatic_collection_while_it_lives(qapp: QApplication) -> None:
    assert gc.isenabled()
    thresholds = gc.get_threshold()
    collector = GuiThreadCollector(interval_ms=10)
    try:
        assert not gc.isenabled()
        gc.set_threshold(1, 1, 1)
        node = weakref.ref(Node())
        keep = [[] for _ in range(10)]  # allocations push the counts past the thresholds
        assert node() is not None  # automatic collection is off
        collector.check()
        assert node() is None
        assert keep
    finally:
        gc.set_threshold(*thresholds)
        collector.stop()
    assert gc.isenabled()


def test_a_frozen_run_is_still_freed_when_dropped() -> None:
    """``settle_loaded`` freezes the shown run: only reference counting can free it then, which
    works as long as runs hold no reference cycles."""
    from inspector.app.runtime.gui_collector import settle_loaded
    from inspector.core.live import LiveRun
    from tests.helpers.demo_events import demo_run

    record = demo_run("retry-feedback")[1].model_copy(deep=True)
    run = LiveRun.from_record(record)
    refs = [weakref.ref(run), weakref.ref(run.steps[0])]
    del record
    try:
        settle_loaded()
        assert gc.get_freeze_count() > 0
        del run
        assert [ref() for ref in refs] == [None, None]
    finally:
        gc.unfreeze()
