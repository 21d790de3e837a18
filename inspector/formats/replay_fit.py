"""Whether an imported run's rebuilt scenario sends the requests its source recorded.

An imported run replays from its ``scenario_source`` (``scenario_from``): the engine builds each
request from that scenario and its policy, and an offline replay answers only a request that
is identical to a recorded one. Some recorded requests cannot be built that way — a
``tool_choice`` of ``required`` or ``none`` on an ordinary step, a ``response_format`` other
than a JSON schema, tools that change between calls. ``request_gaps`` builds the request the
engine would send at each recorded step (``core.requests.build_request``, the loop's own
function) and names each field that would differ, so the import does not claim "replayable".
"""

from __future__ import annotations

from typing import Any

from inspector.core.errors import InspectorError
from inspector.core.fidelity import SCENARIO_DOES_NOT_LOAD, FidelityGap
from inspector.core.fingerprint import canonical_json as canonical
from inspector.core.output import scenario_plan
from inspector.core.records import RunRecord, StepRequest, ToolSpec
from inspector.core.requests import build_request

# The request fields a scenario decides (the messages follow from the recorded history).
FIELDS = ("system", "tools", "tool_choice", "response_format")


def request_gaps(record: RunRecord) -> list[FidelityGap]:
    """One ``request_differs`` gap per request field the rebuilt scenario would send otherwise
    than recorded, with the steps it touches (empty: every step) and the first difference."""
    from inspector.formats.scenario_from import scenario_of_record

    try:
        scenario = scenario_of_record(record)
    except (InspectorError, ValueError) as exc:
        detail = f"{SCENARIO_DOES_NOT_LOAD}: the rebuilt scenario does not load: {exc}"
        return [FidelityGap(kind="request_differs", detail=detail)]
    plan = scenario_plan(scenario)
    offered = [
        ToolSpec(name=t.name, description=t.description, parameters=t.parameters)
        for t in scenario.tools
    ]
    if plan.final_tool is not None:
        offered.append(plan.final_tool)
    suffix = plan.system_suffix
    system = scenario.prompt.system + suffix if scenario.prompt.system else suffix.lstrip()
    differing: dict[str, list[int]] = {}
    first: dict[str, tuple[Any, Any]] = {}
    for step in record.steps:
        sent, _ = build_request(
            index=step.index,
            system=system,
            history=[],  # the messages are not compared: they follow from the recording
            offered=offered,
            plan=plan,
            has_user_tools=bool(scenario.tools),
            policy=scenario.policy,
        )
        for name in FIELDS:
            recorded, built = _field(step.request, name), _field(sent, name)
            if canonical(recorded) != canonical(built):
                differing.setdefault(name, []).append(step.index)
                first.setdefault(name, (recorded, built))
    gaps = []
    for name, steps in differing.items():
        recorded, built = first[name]
        detail = (
            f"{name}: the source sent {_short(recorded)}, a replay of the rebuilt scenario"
            f" sends {_short(built)} (the engine cannot send it as recorded)"
        )
        every = len(steps) == len(record.steps)
        gaps.append(
            FidelityGap(kind="request_differs", steps=[] if every else steps, detail=detail)
        )
    return gaps


def _field(request: StepRequest, name: str) -> Any:
    value = getattr(request, name)
    if name == "tools":
        return [t.model_dump(mode="json") for t in value]
    return value


def _short(value: Any, limit: int = 80) -> str:
    text = canonical(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
