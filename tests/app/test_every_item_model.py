"""Every Qt item model under ``inspector.app`` is found and checked by qtmodeltester, empty and
filled with a real run's data: a new item model fails here until it gets a filler below."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable
from typing import Any

import pytest
from PySide6.QtCore import QAbstractItemModel
from pytestqt.modeltest import ModelTester

import inspector.app
from inspector.core.live import LiveRun
from inspector.core.revalidate import Flip
from inspector.reports.compare import compare_runs
from tests.helpers.demo_events import demo_run, stored_run
from tests.helpers.runs import run_summary
from tests.helpers.sweeps import small_report


def item_model_classes() -> dict[str, type[QAbstractItemModel]]:
    found: dict[str, type[QAbstractItemModel]] = {}
    for info in pkgutil.walk_packages(inspector.app.__path__, "inspector.app."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, QAbstractItemModel)
                and value.__module__ == module.__name__
            ):
                found[f"{module.__name__}.{name}"] = value
    return found


def _timeline(model: Any) -> None:
    model.show_run(stored_run("retry-feedback"))
    model.set_flips({1: [Flip(step=1, validator="no_markdown", before="fail", after="pass")]})
    model.set_show_cleared(False)


def _timeline_live(model: Any) -> None:
    run = LiveRun()
    model.show_run(run)
    for event in demo_run("step-cap")[0]:
        run.apply(event)
        model.on_event(event)


def _compare(model: Any) -> None:
    records = [demo_run("retry-feedback")[1], demo_run("step-cap")[1]]
    model.set_comparison(compare_runs(records))
    model.set_comparison(None)
    model.set_comparison(compare_runs(records))


def _flips(model: Any) -> None:
    from inspector.app.validators.flips_view import FlipRow

    model.set_rows([FlipRow("run1", 1, "no_markdown", "fail", "pass", "")])


def _validators(model: Any) -> None:
    model.set_tables(
        [
            {"kind": "max_length", "max_chars": 200},
            {"kind": "python", "function": "checks.py:ok"},
            {"kind": "no_such_kind"},
        ]
    )


def _runs(model: Any) -> None:
    model.set_runs([run_summary("b2"), run_summary("a1", "failed", replay_of="b2")])


def _runs_filter() -> QAbstractItemModel:
    from inspector.app.library.runs_filter import RunsFilter
    from inspector.app.library.runs_item_model import RunsItemModel

    return RunsFilter(RunsItemModel())


def _runs_filtered(model: Any) -> None:
    _runs(model.sourceModel())
    model.set_only(["a1"])
    model.set_only(None)


def _arms(model: Any) -> None:
    report = small_report()
    model.set_report(report)
    model.set_report(report)  # the same arms: rows updated in place
    model.set_report(None)
    model.set_report(report)


FILLERS: dict[str, tuple[Callable[[], QAbstractItemModel] | None, list[Callable[[Any], None]]]] = {
    "inspector.app.library.runs_item_model.RunsItemModel": (None, [_runs]),
    "inspector.app.library.scenarios_item_model.ScenariosItemModel": (None, []),
    "inspector.app.library.runs_filter.RunsFilter": (_runs_filter, [_runs_filtered]),
    "inspector.app.sweep.arms_item_model.ArmsItemModel": (None, [_arms]),
    "inspector.app.timeline.timeline_item_model.TimelineItemModel": (
        None,
        [_timeline, _timeline_live],
    ),
    "inspector.app.compare.compare_item_model.CompareItemModel": (None, [_compare]),
    "inspector.app.validators.flips_view.FlipsItemModel": (None, [_flips]),
    "inspector.app.validators.validators_item_model.ValidatorsItemModel": (None, [_validators]),
}


def _make(name: str, cls: type[QAbstractItemModel]) -> QAbstractItemModel:
    factory, _ = FILLERS[name]
    if factory is not None:
        return factory()
    if name.endswith("ScenariosItemModel"):
        return cls(["retry-feedback", "step-cap"])  # type: ignore[call-arg]
    return cls()


def test_every_item_model_has_a_filler() -> None:
    assert set(item_model_classes()) == set(FILLERS)


@pytest.mark.parametrize("name", sorted(FILLERS))
def test_item_model_passes_the_model_tester(qtmodeltester: ModelTester, name: str) -> None:
    cls = item_model_classes()[name]
    _, fillers = FILLERS[name]
    for fill in [None, *fillers]:
        model = _make(name, cls)
        qtmodeltester.check(model, force_py=True)  # the python tester: it raises on a fault
        if fill is not None:
            fill(model)
            qtmodeltester.check(model, force_py=True)
