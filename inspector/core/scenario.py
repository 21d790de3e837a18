"""Scenario files (DESIGN §3): the unit that is run, replayed and shared.

Loading never raises anything but ``ScenarioError`` with a one-line message naming the file, the
field and the problem.
"""

from __future__ import annotations

import copy
import functools
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from inspector.core.errors import ScenarioError
from inspector.core.messages import Message
from inspector.core.policy import MAX_COUNT, MAX_WAIT_S, Policy

# The file-reading half (no pydantic) lives in scenario_file; these names stay importable here.
from inspector.core.scenario_file import MAX_SCENARIO_BYTES as MAX_SCENARIO_BYTES
from inspector.core.scenario_file import ScenarioTables as ScenarioTables
from inspector.core.scenario_file import apply_overrides as apply_overrides
from inspector.core.scenario_file import parse_override as parse_override
from inspector.core.scenario_file import read_input_file as read_input_file
from inspector.core.scenario_file import read_scenario_file
from inspector.core.scenario_file import read_scenario_toml as read_scenario_toml
from inspector.core.schema import schema_problem
from inspector.core.validators import ValidatorSpec

ProviderName = Literal["scripted", "openai", "anthropic", "replay"]


class _Section(BaseModel):
    # The one rule for values (docs/engine.md "Values"): a number is taken as text where text is
    # expected (`--set model.name=2024`); numbers, counts and flags are strict (`strict=True`:
    # true is not a count, "3" is not a number) and finite.
    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)


class ModelConfig(_Section):
    provider: ProviderName = "scripted"
    name: str = "demo"
    base_url: str | None = None
    api_key_env: str | None = None
    temperature: float | None = Field(None, strict=True, allow_inf_nan=False)
    max_tokens: int | None = Field(None, ge=1, le=MAX_COUNT, strict=True)
    stream: bool = Field(True, strict=True)
    timeout_s: float = Field(60.0, gt=0, le=MAX_WAIT_S, strict=True)
    headers: dict[str, str] = Field(default_factory=dict)
    # Header names whose values may be recorded and exported; every other header value the
    # scenario sets is treated as a credential (core/credentials.py).
    safe_headers: list[str] = Field(default_factory=list)
    params: dict[str, str] = Field(default_factory=dict)
    # The scripted model draws its ``choices`` with it (a sweep sets one per run); part of the
    # recorded scenario, so a replay draws the same answers.
    seed: int | None = None


class PromptConfig(_Section):
    system: str = ""
    user: str | None = None
    messages: list[Message] = Field(default_factory=list)

    @model_validator(mode="after")
    def _one_start(self) -> PromptConfig:
        if self.user is None and not self.messages:
            raise ValueError('needs user = "..." or messages = [...]')
        return self

    def initial_messages(self) -> list[Message]:
        msgs = list(self.messages)
        if self.user is not None:
            msgs.append(Message(role="user", content=self.user))
        return msgs


class OutputConfig(_Section):
    output_schema: dict[str, Any] = Field(alias="schema")
    name: str = "final_answer"
    description: str = "Give the final answer to the user."

    model_config = ConfigDict(
        extra="forbid", populate_by_name=True, serialize_by_alias=True, coerce_numbers_to_str=True
    )

    @model_validator(mode="after")
    def _schema_ok(self) -> OutputConfig:
        problem = schema_problem(self.output_schema)
        if problem:
            raise ValueError(f"schema: not a valid JSON Schema: {problem}")
        return self


class ToolConfig(_Section):
    name: str = Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    result: Any = None
    function: str | None = None
    side_effects: bool = Field(False, strict=True)

    @model_validator(mode="after")
    def _one_source(self) -> ToolConfig:
        if self.result is not None and self.function:
            raise ValueError("function: give either result or function, not both")
        problem = schema_problem(self.parameters)
        if problem:
            raise ValueError(f"parameters: not a valid JSON Schema: {problem}")
        return self


class ScriptToolCall(_Section):
    name: str
    arguments: dict[str, Any] | str = Field(default_factory=dict)
    id: str | None = None


class ScriptUsage(_Section):
    """Token counts a scripted answer reports; a key left out is estimated."""

    input_tokens: int | None = Field(None, ge=0, le=MAX_COUNT, strict=True)
    output_tokens: int | None = Field(None, ge=0, le=MAX_COUNT, strict=True)


class ScriptEntry(_Section):
    """One model call of the scripted provider."""

    text: str | None = None
    tool_calls: list[ScriptToolCall] = Field(default_factory=list)
    empty: bool = Field(False, strict=True)
    final: Any = None
    finish_reason: str | None = None
    refusal: str | None = None
    reasoning: str | None = None
    usage: ScriptUsage | None = None
    delay_ms: float = Field(0.0, ge=0, le=MAX_WAIT_S * 1000, strict=True)
    error: str | None = None  # the call fails with this provider error message
    # What the model answers instead when the request disables tools (tool_choice "none"), as a
    # real API enforces it; without it the entry's tool calls are sent regardless.
    text_if_tools_disabled: str | None = None

    # Weighted alternatives for this call, one drawn per run (``model.seed``); an entry with
    # choices has nothing else.
    choices: list[ScriptChoice] = Field(default_factory=list)

    @model_validator(mode="after")
    def _empty_is_empty(self) -> ScriptEntry:
        if self.empty and (self.text or self.tool_calls or self.final is not None):
            raise ValueError("empty: an empty answer cannot also have text, tool_calls or final")
        if self.choices:
            # Fields at their defaults are fine (a dumped scenario writes them all out).
            given = [n for n, default in _entry_defaults().items() if getattr(self, n) != default]
            if given:
                raise ValueError(
                    f"choices: an entry with choices has nothing else (got {given[0]})"
                )
        return self


@functools.cache
def _entry_defaults() -> dict[str, Any]:
    """Every field of a script entry but ``choices``, with its default (computed once)."""
    fields = ScriptEntry.model_fields.items()
    return {n: f.get_default(call_default_factory=True) for n, f in fields if n != "choices"}


class ScriptChoice(ScriptEntry):
    """One alternative of ``choices``, drawn with probability weight / total weight."""

    weight: float = Field(1.0, gt=0)
    # A simulated model that heeds feedback: the weight when the request's messages contain a
    # text (the smallest of those that match), e.g. { "Plain text only" = 0.2 }.
    weight_if_seen: dict[str, float] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _no_nesting(self) -> ScriptChoice:
        if self.choices:
            raise ValueError("choices: a choice cannot have choices of its own")
        if any(w <= 0 for w in self.weight_if_seen.values()):
            raise ValueError("weight_if_seen: weights must be greater than 0")
        return self


ScriptEntry.model_rebuild()  # ``choices`` names ScriptChoice, defined after it


class Scenario(_Section):
    name: str
    description: str = ""
    model: ModelConfig = Field(default_factory=ModelConfig)
    prompt: PromptConfig
    output: OutputConfig | None = None
    tools: list[ToolConfig] = Field(default_factory=list)
    validators: list[ValidatorSpec] = Field(default_factory=list)
    policy: Policy = Field(default_factory=Policy)
    script: list[ScriptEntry] = Field(default_factory=list)
    # Where relative "file.py:name" references resolve; not part of the file.
    base_dir: Path = Field(default=Path("."), exclude=True)
    source: str = Field(default="<scenario>", exclude=True)

    @model_validator(mode="after")
    def _consistent(self) -> Scenario:
        names = [t.name for t in self.tools]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"duplicate tool name {dupes[0]!r}")
        if self.model.provider == "scripted" and not self.script:
            raise ValueError('script: provider "scripted" needs [[script]] entries')
        tool_mode = self.output is not None and self.policy.output_mode == "tool"
        if tool_mode and self.output and self.output.output_schema.get("type") != "object":
            raise ValueError(
                'output.schema: output_mode "tool" needs an object schema (type = "object"),'
                " since it becomes a tool's input; use native or prompted for other types"
            )
        return self


_VALIDATOR_KINDS = {
    "non_empty", "max_length", "min_length", "regex_absent", "regex_present", "json_schema",
    "calls_tool", "python",
}  # fmt: skip
_FIELD_FIRST = re.compile(r"^([A-Za-z_][\w.\[\]]*): (.*)$", re.S)


def _location(loc: tuple[int | str, ...]) -> str:
    parts: list[str] = []
    after_index = False
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        elif after_index and item in _VALIDATOR_KINDS:
            pass  # a validator union's tag: validators[0].max, not validators[0].max_length.max
        elif not item.startswith(("function-", "tagged-union")):
            parts.append(("." if parts else "") + item)
        after_index = isinstance(item, int)
    return "".join(parts)


def _error_field(exc: ValidationError) -> tuple[str, str]:
    """The field path an error is about (``policy.fallback``, ``validators[0].max``) and its
    message. A model-level check names its field by starting its message with it."""
    first = exc.errors()[0]
    msg = str(first["msg"]).removeprefix("Value error, ")
    where = _location(tuple(first["loc"]))
    m = _FIELD_FIRST.match(msg) if first["type"] == "value_error" else None
    if m:
        where = f"{where}.{m.group(1)}" if where else m.group(1)
        msg = m.group(2)
    return where, msg


def describe_validation_error(source: str, exc: ValidationError) -> str:
    """One line: ``file: field.path: problem (+N more)``."""
    errors = exc.errors()
    first = errors[0]
    where, msg = _error_field(exc)
    line = f"{source}: {where or '(top level)'}: {msg}"
    if first["type"] in ("literal_error", "enum") and "input" in first:
        line += f" (got {first['input']!r})"
    if len(errors) > 1:
        line += f" (+{len(errors) - 1} more)"
    return line


def scenario_from_dict(
    data: dict[str, Any],
    *,
    source: str,
    base_dir: Path,
    overrides: list[str] | None = None,
    owned: bool = False,
) -> Scenario:
    """``owned``: ``data`` is the caller's to give away (just parsed, never used again), so it
    is not copied first (a long script's deep copy)."""
    overrides = list(overrides or [])
    if not owned:
        data = copy.deepcopy(data)  # never the caller's tables
    tables = set(data)  # the file's own top-level tables, before the overrides
    data = apply_overrides(data, overrides)
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        line = describe_validation_error(source, exc)
        where, _ = _error_field(exc)
        # The override that set the faulty field (or a table holding it), if one did.
        for text in reversed(overrides):
            path, _ = parse_override(text)
            key = "".join(f"[{p}]" if p.isdigit() else f".{p}" for p in path).lstrip(".")
            made = where not in tables and key.startswith(f"{where}.")  # a table it made
            if made or where == key or where.startswith((f"{key}.", f"{key}[")):
                line += f" (from --set {text})"
                break
        raise ScenarioError(line) from None
    return scenario.model_copy(update={"base_dir": base_dir, "source": source})


def load_scenario(
    path: str | Path, overrides: list[str] | None = None, *, source: str | None = None
) -> Scenario:
    """``source`` names the scenario in errors (default: the path as given)."""
    return scenario_from_tables(read_scenario_file(path, source), overrides)


def scenario_from_tables(tables: ScenarioTables, overrides: list[str] | None = None) -> Scenario:
    """The scenario of a file just read (its tables are given away: not copied)."""
    return scenario_from_dict(
        tables.data,
        source=tables.source,
        base_dir=tables.base_dir,
        overrides=overrides,
        owned=True,
    )
