"""Two or more runs of one turn, aligned by step: what differs in their policy and scenario, what
each step did in each run, the first step where the runs part ways, and how each run ended.

Pure data built from ``RunRecord``s; ``compare_text`` renders it for the terminal and the GUI
compare view renders the same model, so neither re-derives a difference the other shows.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from inspector.core.records import (
    Forced,
    RunRecord,
    RunStatus,
    Step,
    StepRequest,
    StepResponse,
    StepStatus,
    Termination,
    VerdictStatus,
)
from inspector.core.shared_list import common_prefix
from inspector.reports import EXPORT_VERSION

DivergenceAspect = Literal["request", "response", "steps"]
# The parts of a step a divergence names, in the order they are looked at.
REQUEST_PARTS = ("system", "messages", "tools", "tool_choice", "response_format")
RESPONSE_PARTS = ("text", "tool_calls", "refusal")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FieldDiff(_Model):
    """One field whose value is not the same in every run: ``values[i]`` is run ``i``'s value
    (None where the run has no such field). ``field`` is a ``--set`` path (``validators.1.max``)."""

    field: str
    values: list[Any]


class RunColumn(_Model):
    run_id: str
    scenario: str
    started_at: str
    provider: str
    model: str
    replay_of: str | None
    overrides: list[str]


class VerdictCell(_Model):
    validator: str
    status: VerdictStatus
    reason: str


class StepCell(_Model):
    """What one run did at one step index."""

    attempt: int
    status: StepStatus
    verdicts: list[VerdictCell]
    tool_calls: list[str]  # tool names the model asked for, in order
    input_tokens: int
    output_tokens: int
    cleared: bool
    forced: Forced | None
    latency_ms: float | None
    error: str | None

    def verdict(self, validator: str) -> VerdictCell | None:
        return next((v for v in self.verdicts if v.validator == validator), None)


class StepRow(_Model):
    """One step index across the runs; ``cells[i]`` is None when run ``i`` never got there.
    ``same_request`` / ``same_response``: every run that has the step sent / got the same
    (tool-call ids aside, which a live provider makes up anew on every call)."""

    index: int
    cells: list[StepCell | None]
    validators: list[str]  # every validator with a verdict here in some run, first-seen order
    same_request: bool
    same_response: bool

    @property
    def same(self) -> bool:
        """Every run has this step, with the same request and response."""
        return self.same_request and self.same_response and None not in self.cells


class Divergence(_Model):
    """The first step where the runs differ: its request, its response, or that only some runs
    have it. ``field`` names the first differing part (``messages[4]``, ``text``, ``step``);
    ``values[i]`` is run ``i``'s value of it (None: absent)."""

    index: int
    aspect: DivergenceAspect
    field: str
    values: list[Any]


class Outcome(_Model):
    status: RunStatus
    termination: Termination | None
    fallback_trigger: Termination | None
    attempts_used: int
    max_attempts: int
    steps_used: int
    max_steps: int
    input_tokens: int
    output_tokens: int
    total_tokens: int
    latency_ms: float  # time spent waiting on the model, summed over the steps
    duration_ms: float  # the whole turn, tools and validators included
    output: Any
    error: str | None


class Comparison(_Model):
    version: int = EXPORT_VERSION  # of this JSON shape (``compare --json``)
    runs: list[RunColumn]
    policy_diffs: list[FieldDiff]
    scenario_diffs: list[FieldDiff]  # scenario_source outside [policy], plus provider/model
    steps: list[StepRow]
    divergence: Divergence | None
    outcomes: list[Outcome]

    @property
    def scenarios(self) -> list[str]:
        return list(dict.fromkeys(r.scenario for r in self.runs))


def compare_runs(records: Sequence[RunRecord]) -> Comparison:
    """The comparison of ``records`` in the given order (two or more)."""
    if len(records) < 2:
        raise ValueError(f"compare needs two or more runs, got {len(records)}")
    keys = [request_keys(r) for r in records]
    rows = [_step_row(index, records, keys) for index in range(1, _longest(records) + 1)]
    parted = next((r for r in rows if not r.same), None)
    return Comparison(
        runs=[_column(r) for r in records],
        policy_diffs=field_diffs([r.policy.model_dump(mode="json") for r in records]),
        scenario_diffs=_scenario_diffs(records),
        steps=rows,
        divergence=divergence_at(parted.index, records, keys) if parted else None,
        outcomes=[_outcome(r) for r in records],
    )


# ---- differences in what ran ------------------------------------------------------------------


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Leaves of nested dicts and lists by dotted path (list items by position, as ``--set``
    addresses them); an empty dict or list is a leaf of its own."""
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for key, item in value.items():
            out.update(flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    if isinstance(value, list) and value:
        out = {}
        for position, item in enumerate(value):
            out.update(flatten(item, f"{prefix}.{position}" if prefix else str(position)))
        return out
    return {prefix: value}


def field_diffs(trees: Sequence[dict[str, Any]]) -> list[FieldDiff]:
    """The leaves whose values are not all equal, in first-seen order."""
    flat = [flatten(t) for t in trees]
    paths = dict.fromkeys(p for f in flat for p in f)
    diffs = []
    for path in paths:
        values = [f.get(path) for f in flat]
        present = [path in f for f in flat]
        if not all(present) or any(v != values[0] for v in values[1:]):
            diffs.append(FieldDiff(field=path, values=values))
    return diffs


def _scenario_diffs(records: Sequence[RunRecord]) -> list[FieldDiff]:
    # [policy] is compared on the effective policy; the record's provider/model say what
    # actually answered (a replay answers from the recording, whatever the scenario says).
    trees = [
        {
            "provider": r.provider,
            "model": r.model,
            **{k: v for k, v in r.scenario_source.items() if k != "policy"},
        }
        for r in records
    ]
    return field_diffs(trees)


def _column(record: RunRecord) -> RunColumn:
    return RunColumn(
        run_id=record.run_id,
        scenario=record.scenario,
        started_at=record.started_at,
        provider=record.provider,
        model=record.model,
        replay_of=record.replay_of,
        overrides=list(record.overrides),
    )


# ---- steps ------------------------------------------------------------------------------------


def _longest(records: Sequence[RunRecord]) -> int:
    return max(len(r.steps) for r in records)


def step_at(record: RunRecord, index: int) -> Step | None:
    # Steps are recorded in order with 1-based indexes; look it up rather than trust position.
    if 1 <= index <= len(record.steps) and record.steps[index - 1].index == index:
        return record.steps[index - 1]
    return next((s for s in record.steps if s.index == index), None)


def _cell(step: Step) -> StepCell:
    response = step.response
    usage = response.usage if response is not None else None
    return StepCell(
        attempt=step.attempt,
        status=step.status,
        verdicts=[
            VerdictCell(validator=v.validator, status=v.status, reason=v.reason)
            for v in step.verdicts
        ],
        tool_calls=[c.name for c in response.tool_calls] if response is not None else [],
        input_tokens=usage.input_tokens if usage else 0,
        output_tokens=usage.output_tokens if usage else 0,
        cleared=step.cleared,
        forced=step.forced,
        latency_ms=step.latency_ms,
        error=step.error,
    )


def _step_row(index: int, records: Sequence[RunRecord], keys: list[RequestKeys]) -> StepRow:
    steps = [step_at(r, index) for r in records]
    present = [s for s in steps if s is not None]
    responses = [canonical_response(s.response) for s in present]
    validators = dict.fromkeys(v.validator for s in present for v in s.verdicts)
    return StepRow(
        index=index,
        cells=[_cell(s) if s is not None else None for s in steps],
        validators=list(validators),
        same_request=_same_requests(index, keys),
        same_response=all(r == responses[0] for r in responses),
    )


# What identifies a step's canonical request: its parts but the messages (JSON), the number of
# messages, and a digest chained over their canonical JSON.
RequestKey = tuple[str, int, bytes]
RequestKeys = dict[int, RequestKey]


def _same_requests(index: int, keys: Sequence[RequestKeys]) -> bool:
    present = [k[index] for k in keys if index in k]
    return all(k == present[0] for k in present[1:])


def request_keys(record: RunRecord) -> RequestKeys:
    """Each step's ``RequestKey``: equal keys, equal ``canonical_request``s.

    Built in one pass: a request that extends the one before adds its new messages to the
    digest chain (tool-call ids renamed in order, as ``canonical_request`` does), so comparing two
    long runs costs their distinct messages — dumping every step's whole history made comparing
    two 1,000-step runs that part ways take 20 s. A request that drops messages starts over."""
    keys: RequestKeys = {}
    ids: dict[str, str] = {}
    chain = [b""]  # chain[k]: digest of the first k canonical messages
    previous: Sequence[Any] = ()
    for step in record.steps:
        request = step.request
        messages = request.messages
        keep = common_prefix(previous, messages)
        if keep < len(previous):
            ids, chain, keep = {}, [b""], 0
        for message in messages[keep:]:
            canonical = _canonical_message(message.model_dump(mode="json"), ids)
            text = json.dumps(canonical, sort_keys=True, ensure_ascii=False)
            chain.append(hashlib.blake2b(chain[-1] + text.encode(), digest_size=16).digest())
        frame = request.model_dump(mode="json", exclude={"messages"})
        keys[step.index] = (json.dumps(frame, sort_keys=True), len(messages), chain[-1])
        previous = messages
    return keys


def canonical_request(request: StepRequest) -> dict[str, Any]:
    """The request as sent, with tool-call ids renamed by order of appearance (``#1``, ``#2``):
    a live provider invents new ids on every call, which says nothing about what the model saw."""
    data = request.model_dump(mode="json")
    ids: dict[str, str] = {}
    data["messages"] = [_canonical_message(m, ids) for m in data["messages"]]
    return data


def _canonical_message(message: dict[str, Any], ids: dict[str, str]) -> dict[str, Any]:
    """``message`` (a dump, changed in place) with its tool-call ids renamed through ``ids``."""

    def rename(call_id: str) -> str:
        return ids.setdefault(call_id, f"#{len(ids) + 1}")

    for call in message.get("tool_calls") or ():
        call["id"] = rename(call["id"])
    if message.get("tool_call_id") is not None:
        message["tool_call_id"] = rename(message["tool_call_id"])
    return message


def canonical_response(response: StepResponse | None) -> dict[str, Any] | None:
    """What the model answered: text, tool calls (name and arguments) and refusal — not usage,
    ids or finish reason, which vary between providers for the same answer."""
    if response is None:
        return None
    return {
        "text": response.text,
        "tool_calls": [{"name": c.name, "arguments": c.arguments} for c in response.tool_calls],
        "refusal": response.refusal,
    }


def first_divergence(records: Sequence[RunRecord]) -> Divergence | None:
    """The first step index where the runs differ, and the first part of it that differs."""
    keys = [request_keys(r) for r in records]
    for index in range(1, _longest(records) + 1):
        divergence = divergence_at(index, records, keys)
        if divergence is not None:
            return divergence
    return None


def divergence_at(
    index: int, records: Sequence[RunRecord], keys: Sequence[RequestKeys] | None = None
) -> Divergence | None:
    """How the runs differ at step ``index`` (None: they do not): the step missing in some,
    else the first differing part of the request, else of the response. ``keys``: the runs'
    ``request_keys``, when already built."""
    steps = [step_at(r, index) for r in records]
    if any(s is None for s in steps):
        values = [s.status if s is not None else None for s in steps]
        return Divergence(index=index, aspect="steps", field="step", values=values)
    present = [s for s in steps if s is not None]
    if not _same_requests(index, keys or [request_keys(r) for r in records]):
        requests = [canonical_request(s.request) for s in present]
        part = _first_difference(requests, REQUEST_PARTS)
        if part is not None:
            return Divergence(index=index, aspect="request", field=part[0], values=part[1])
    responses = [canonical_response(s.response) or {} for s in present]
    part = _first_difference(responses, RESPONSE_PARTS)
    if part is not None:
        return Divergence(index=index, aspect="response", field=part[0], values=part[1])
    return None


def _first_difference(
    dumps: list[dict[str, Any]], keys: Sequence[str]
) -> tuple[str, list[Any]] | None:
    for key in keys:
        values = [d.get(key) for d in dumps]
        if all(v == values[0] for v in values[1:]):
            continue
        if key == "messages":
            return _first_message_difference(values)
        return key, values
    return None


def _first_message_difference(histories: list[Any]) -> tuple[str, list[Any]]:
    """``messages[i]``: the first position where the histories differ (None past one's end)."""
    position = 0
    while True:
        messages = [h[position] if position < len(h) else None for h in histories]
        if any(m != messages[0] for m in messages[1:]):
            return f"messages[{position}]", messages
        position += 1


def _outcome(record: RunRecord) -> Outcome:
    b = record.budgets
    return Outcome(
        status=record.status,
        termination=record.termination,
        fallback_trigger=record.fallback_trigger,
        attempts_used=b.attempts_used,
        max_attempts=b.max_attempts,
        steps_used=b.steps_used,
        max_steps=b.max_steps,
        input_tokens=record.usage.input_tokens,
        output_tokens=record.usage.output_tokens,
        total_tokens=record.usage.input_tokens + record.usage.output_tokens,
        latency_ms=round(sum(s.latency_ms or 0.0 for s in record.steps), 3),
        duration_ms=record.duration_ms,
        output=record.output,
        error=f"{record.error.type}: {record.error.message}" if record.error else None,
    )
