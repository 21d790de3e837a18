"""What a replay and a re-validation take from a recorded run: the scenario it ran, and the
results of its side-effect tools.

``Turn(recorded_tools=RecordedTools(record))``: a call of a tool marked ``side_effects = true``
gets the result the recorded run got for the same tool name and the same arguments (canonical
JSON), in the order they were recorded. A call the recording never made (or made fewer times)
raises ``ReplayDivergence`` — running it would be a side effect the user never approved; the loop
ends the run ``error`` / ``provider_error`` with that message.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path

from inspector.core.errors import ReplayDivergence
from inspector.core.fingerprint import canonical_json
from inspector.core.messages import ToolCall
from inspector.core.records import RunRecord, ToolResult
from inspector.core.scenario import Scenario, ToolConfig, scenario_from_dict

__all__ = ["RecordedTools", "scenario_of"]

_NOT_RUN = "not executed: "  # the trace of a call that never ran (see handlers.not_executed)
_SHOWN_ARGS = 80


def scenario_of(record: RunRecord, overrides: Sequence[str] = ()) -> Scenario:
    """The scenario a run was recorded with (its effective source, its overrides included),
    plus ``overrides``; relative ``file.py:name`` references resolve in its recorded folder."""
    return scenario_from_dict(
        record.scenario_source,
        source=record.scenario_origin or record.scenario,
        base_dir=Path(record.scenario_dir or "."),
        overrides=list(overrides),
    )


def _key(name: str, arguments: object) -> tuple[str, str]:
    return name, canonical_json(arguments)


def _call_text(name: str, arguments_json: str) -> str:
    if len(arguments_json) > _SHOWN_ARGS:
        arguments_json = arguments_json[:_SHOWN_ARGS] + "…"
    return f"{name}({arguments_json})"


class RecordedTools:
    """The ``RecordedResults`` hook of a replay, built from the recorded run.

    ``step`` (optional) tells which step the turn is on, for the divergence message."""

    def __init__(self, record: RunRecord, step: Callable[[], int] | None = None) -> None:
        self._step = step
        self._results: dict[tuple[str, str], deque[ToolResult]] = {}
        calls = {
            call.id: call
            for s in record.steps
            if s.response is not None
            for call in s.response.tool_calls
        }
        for s in record.steps:
            for result in s.tool_results:
                call = calls.get(result.tool_call_id)
                if call is None or (result.error or "").startswith(_NOT_RUN):
                    continue
                key = _key(call.name, call.arguments)
                self._results.setdefault(key, deque()).append(result)

    def __call__(self, call: ToolCall, config: ToolConfig) -> ToolResult:
        queue = self._results.get(_key(call.name, call.arguments))
        if queue:
            return queue.popleft()
        where = f"step {self._step()}: " if self._step is not None else ""
        made = _call_text(call.name, canonical_json(call.arguments))
        recorded = [k for k in self._results if k[0] == call.name]
        if not recorded:
            seen = f"the recording has no call of {call.name}"
        elif queue is not None:
            seen = "the recording made this call fewer times"
        else:
            seen = "recorded: " + ", ".join(_call_text(*k) for k in recorded[:3])
        raise ReplayDivergence(
            f"{where}side-effect tool call {made} was never recorded, so it is not run ({seen})"
        )
