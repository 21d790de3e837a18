"""Building a turn or a replay and settling its record: what ``agent-inspector run``/``replay``
and the window's Run/Replay buttons share (docs/engine.md, docs/replay.md).

Building is blocking (a provider's HTTP client, a user's python file): the window calls these on
a worker thread and passes ``set_up=True`` so the provider's own set-up happens there too, not on
the UI thread at the first request.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: a worker starts before the engine is imported
    from inspector.core.events import EventSink
    from inspector.core.loop import Turn
    from inspector.core.provider import Provider
    from inspector.core.records import RunRecord
    from inspector.core.scenario import Scenario
    from inspector.store import Recorder, Store


def set_up_provider(provider: object) -> None:
    """Runs a provider's blocking set-up (HTTP client, keyring lookup) now, on this thread."""
    prepare = getattr(provider, "prepare", None)
    if callable(prepare):
        prepare()


def live_provider(*, set_up: bool) -> Callable[[Scenario], Provider]:
    """The scenario's own provider, built (and with ``set_up`` already set up) on demand."""
    from inspector.providers.factory import build_provider

    def build(scenario: Scenario) -> Provider:
        provider = build_provider(scenario)
        if set_up:
            set_up_provider(provider)
        return provider

    return build


@dataclass
class TurnPlan:
    """A scenario loaded with its overrides and its provider built: ready to become a turn once
    there is a sink to publish to (the CLI opens the store only after the scenario loaded)."""

    scenario: Scenario
    provider: Provider
    overrides: list[str] = field(default_factory=list)

    def turn(self, sink: EventSink) -> Turn:
        from inspector.core.loop import Turn

        return Turn(self.scenario, self.provider, sink, overrides=self.overrides)


def plan_turn(ref: str, overrides: list[str], *, set_up: bool = False) -> TurnPlan:
    """Loads scenario ``ref`` (a file or ``demo:NAME``) with ``--set`` style overrides and
    builds its provider. Bad input: ``InspectorError`` with one line.

    A scenario that names python functions gets its user-code worker started, loading them, as
    soon as the file is read (``pool.start``), so that the worker's start-up and the user's
    imports overlap the engine's imports and the scenario's validation instead of following
    them (docs/user-code.md, "Started as the scenario is read")."""
    from inspector.core.scenario_file import names_user_code, user_code_targets
    from inspector.resources import read_scenario_ref

    tables = read_scenario_ref(ref)
    if names_user_code(tables.data, overrides):
        from inspector.core.worker import pool

        pool.start(user_code_targets(tables, overrides))
    from inspector.core.scenario import scenario_from_tables

    scenario = scenario_from_tables(tables, overrides)
    return TurnPlan(scenario, live_provider(set_up=set_up)(scenario), list(overrides))


def replay(
    original: RunRecord,
    overrides: list[str],
    sink: EventSink,
    *,
    offline: bool,
    set_up: bool = False,
) -> Turn:
    """The replay of ``original``: answers from its recording where the request is the same;
    the rest asked live, or with ``offline`` the run stops at the first divergence."""
    from inspector.providers.replay import replay_turn

    live = None if offline else live_provider(set_up=set_up)
    return replay_turn(original, overrides=overrides, live=live, sink=sink)


def settle(store: Store, recorder: Recorder, record: RunRecord) -> None:
    """When recording failed part-way (the engine reported it and detached the recorder), writes
    the finished record now, so that no run is lost. Raises ``StoreError`` if even that fails."""
    if recorder.error is not None:
        store.settle(record)
