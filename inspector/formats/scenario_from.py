"""Save as scenario (``scenario-from RUN_ID --out FILE``): a recorded run — native, proxied or
imported — as a scenario file that replays it offline.

The file runs on the scripted model: its ``[[script]]`` is the recorded replies in order, so
``run`` reproduces the turn with no network; the model the run used is kept in a comment and in
``description``, to switch back to it by editing ``[model]``. From the record:

- ``[prompt]``: the first call's system prompt and messages;
- ``[[tools]]``: every tool offered (minus the synthetic final-answer tool), its canned
  ``result`` the first result recorded for it; ``side_effects = true`` for the names asked;
- ``[output]``: the schema when the run asked for one (its scenario's, else the first call's
  ``response_format``);
- ``[[validators]]`` and ``[policy]``: the run's scenario's when it had one (a native run), else
  the step budget the recording needs (an imported run's validators are not known).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from inspector.core.records import RunRecord, Step, ToolSpec
from inspector.core.scenario import Scenario, scenario_from_dict
from inspector.reports.redact import redacted


def scenario_dict(record: RunRecord, side_effects: Iterable[str] = ()) -> dict[str, Any]:
    """The scenario's data (TOML-ready: no ``None`` anywhere). ``ValueError`` when the run has
    no step to take a prompt from."""
    if not record.steps:
        raise ValueError(f"run {record.run_id} has no model call to build a scenario from")
    source = record.scenario_source or {}
    first = record.steps[0].request
    output_name = str((source.get("output") or {}).get("name", "final_answer"))
    data: dict[str, Any] = {
        "name": record.scenario,
        "description": _description(record),
        "model": _model(record, source),
        "prompt": {
            "system": first.system,
            "messages": [m.model_dump(mode="json") for m in first.messages],
        },
    }
    output = source.get("output") or _output_of(first.response_format)
    if output:
        data["output"] = output
    in_tool_mode = record.policy.output_mode == "tool"
    synthetic = None if source.get("tools") or not output or not in_tool_mode else output_name
    tools = _tools(record, synthetic, set(side_effects))
    if tools:
        data["tools"] = tools
    if source.get("validators"):
        data["validators"] = [_absolute(v, record.scenario_dir) for v in source["validators"]]
    data["policy"] = _policy(record)
    data["script"] = [_entry(s) for s in record.steps]
    cleaned: dict[str, Any] = _drop_none(data)
    return cleaned


def scenario_file_data(record: RunRecord, side_effects: Iterable[str] = ()) -> dict[str, Any]:
    """``scenario_dict`` for a file (``scenario-from``, Save as scenario): shared like an export,
    so redacted as the exports are — a key a reply or a prompt held (a model or a server
    echoing it) is not written into the file. (An imported run's stored ``scenario_source``
    keeps the text, as the store keeps every text.) Redacted as an export redacts a run's
    ``scenario_source``: its schemas (a tool's ``password`` parameter, an output's ``api_key``
    field) stay, or the file would not load."""
    wrapped = redacted({"scenario_source": scenario_dict(record, side_effects)})
    data: dict[str, Any] = wrapped["scenario_source"]
    return data


def scenario_of_record(record: RunRecord, side_effects: Iterable[str] = ()) -> Scenario:
    """The scenario checked the way ``run`` will load it (a bad one is a ``ScenarioError``)."""
    data = scenario_dict(record, side_effects)
    return scenario_from_dict(data, source=record.scenario, base_dir=Path("."))


def _description(record: RunRecord) -> str:
    origin = record.scenario_origin or record.scenario
    model = f"{record.provider or '?'} {record.model}".strip()
    return f"Saved from run {record.run_id} ({origin}; recorded with {model}); replays offline."


def _model(record: RunRecord, source: dict[str, Any]) -> dict[str, Any]:
    model: dict[str, Any] = {"provider": "scripted", "name": record.model or "demo"}
    recorded = source.get("model") or {}
    for key in ("temperature", "max_tokens", "stream"):
        if recorded.get(key) is not None:
            model[key] = recorded[key]
    return model


def _output_of(response_format: dict[str, Any] | None) -> dict[str, Any] | None:
    if not response_format or response_format.get("type") != "json_schema":
        return None
    spec = response_format.get("json_schema") or {}
    schema = spec.get("schema")
    if not isinstance(schema, dict):
        return None
    # Its name too: a native-mode replay sends it in the response_format it builds.
    name = spec.get("name")
    return (
        {"schema": schema, "name": name} if isinstance(name, str) and name else {"schema": schema}
    )


def _tools(
    record: RunRecord, synthetic: str | None, side_effects: set[str]
) -> list[dict[str, Any]]:
    """A native run's scenario tools as they were (their functions or canned results); else
    the tools the calls offered, with the first result recorded for each."""
    declared = (record.scenario_source or {}).get("tools")
    if declared:
        names = {t["name"] for t in declared}
        _check_side_effects(side_effects, names)
        return [
            _absolute(dict(t, side_effects=t.get("side_effects") or t["name"] in side_effects),
                      record.scenario_dir)
            for t in declared
        ]  # fmt: skip
    # The synthetic final-answer tool is not a user tool: its calls are the internal steps'.
    internal = {c.name for s in record.steps if s.internal_tool and s.response
                for c in s.response.tool_calls}  # fmt: skip
    internal |= {synthetic} if synthetic else set()
    offered: dict[str, ToolSpec] = {}
    for step in record.steps:
        for tool in step.request.tools:
            if tool.name not in internal:
                offered.setdefault(tool.name, tool)
    results: dict[str, str] = {}
    for step in record.steps:
        for result in step.tool_results:
            results.setdefault(result.name, result.content)
        # A tool the model called though the source did not say it was offered (a message
        # history has no definitions): declared with an open schema, so the script can call it.
        for call in step.response.tool_calls if step.response else []:
            if call.name not in internal and call.name not in offered:
                offered[call.name] = ToolSpec(name=call.name)
    _check_side_effects(side_effects, set(offered))
    out = []
    for name, tool in offered.items():
        entry: dict[str, Any] = tool.model_dump(mode="json")
        entry["result"] = results.get(name, "")
        entry["side_effects"] = name in side_effects
        out.append(entry)
    return out


def _check_side_effects(asked: set[str], names: set[str]) -> None:
    unknown = sorted(asked - names)
    if unknown:
        raise ValueError(f"--side-effects: the run offered no tool named {unknown[0]!r}")


def _policy(record: RunRecord) -> dict[str, Any]:
    """The run's effective policy (what differs from the defaults), with room for every
    recorded step."""
    policy = _absolute(
        record.policy.model_dump(mode="json", exclude_defaults=True), record.scenario_dir
    )
    if len(record.steps) > record.policy.max_steps:
        policy["max_steps"] = len(record.steps)
    return policy


_REFERENCES = ("function", "feedback_builder", "fallback_function")


def _absolute(table: dict[str, Any], base: str) -> dict[str, Any]:
    """``file.py:name`` references made absolute: the saved file may live anywhere."""
    out = dict(table)
    for key in _REFERENCES:
        ref = out.get(key)
        if (
            base
            and isinstance(ref, str)
            and ":" in ref
            and not Path(ref.split(":")[0]).is_absolute()
        ):
            out[key] = str(Path(base) / ref)
    return out


def _entry(step: Step) -> dict[str, Any]:
    """One ``[[script]]`` entry answering as the recorded call did."""
    response = step.response
    if response is None:
        return {"error": step.error or "the recorded call failed"}
    entry: dict[str, Any] = {
        "finish_reason": response.finish_reason,
        "refusal": response.refusal,
        "reasoning": response.reasoning,
        "usage": response.usage.model_dump(mode="json"),
    }
    if response.tool_calls:
        entry["tool_calls"] = [
            {"id": c.id, "name": c.name, "arguments": c.arguments} for c in response.tool_calls
        ]
        if response.text:
            entry["text"] = response.text
    elif response.text or response.refusal:
        entry["text"] = response.text
    else:
        entry["empty"] = True
    return entry


def _drop_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_none(v) for v in value if v is not None]
    return value
