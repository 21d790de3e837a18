"""The scenario a proxied run is recorded with: what its first call asked (model, system prompt,
messages, tools, output schema) and the live validators. It is what ``revalidate`` and
``replay`` load a recorded run from, so it must always be a valid scenario: a part that would
not validate (a tool name the scenario format refuses, an odd schema) is left out, never the run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspector.core.errors import ScenarioError
from inspector.core.records import StepRequest
from inspector.core.scenario import Scenario, scenario_from_dict
from inspector.proxy.normalize import Api

__all__ = ["SCENARIO_NAME", "proxy_scenario"]

SCENARIO_NAME = "proxy"  # every proxied run: `revalidate --scenario proxy` judges them all


def _source(
    api: Api, model: str, upstream: str, request: StepRequest, validators: list[dict[str, Any]]
) -> dict[str, Any]:
    prompt: dict[str, Any] = {"system": request.system}
    if request.messages:
        prompt["messages"] = [m.model_dump(mode="json") for m in request.messages]
    else:
        prompt["user"] = ""
    data: dict[str, Any] = {
        "name": SCENARIO_NAME,
        "model": {"provider": api, "name": model or "unknown", "base_url": upstream},
        "prompt": prompt,
        "validators": validators,
    }
    if request.tools:
        data["tools"] = [t.model_dump(mode="json") for t in request.tools]
    fmt = request.response_format or {}
    schema = (
        (fmt.get("json_schema") or {}).get("schema") if fmt.get("type") == "json_schema" else None
    )
    if isinstance(schema, dict):
        data["output"] = {"schema": schema}
        data["policy"] = {"output_mode": "native"}  # the schema went as a response format
    return data


def proxy_scenario(
    api: Api,
    model: str,
    upstream: str,
    request: StepRequest,
    validators: list[dict[str, Any]],
    base_dir: Path,
) -> tuple[dict[str, Any], Scenario]:
    """(the scenario source to record, the scenario it loads as)."""
    data = _source(api, model, upstream, request, validators)
    for optional in ((), ("tools",), ("tools", "output", "policy")):
        trimmed = {k: v for k, v in data.items() if k not in optional}
        try:
            return trimmed, scenario_from_dict(trimmed, source=SCENARIO_NAME, base_dir=base_dir)
        except ScenarioError:
            continue
    # Only the validators are left to blame, and they were checked at start: keep the prompt.
    bare = {k: v for k, v in data.items() if k in ("name", "model", "prompt")}
    bare["prompt"] = {"system": request.system, "user": ""}
    return bare, scenario_from_dict(bare, source=SCENARIO_NAME, base_dir=base_dir)
