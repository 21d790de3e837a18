"""Scenario files (DESIGN §3): the unit that is run, replayed and shared.

Loading never raises anything but ``ScenarioError`` with a one-line message naming the file, the
field and the problem.
"""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from inspector.core.errors import ScenarioError
from inspector.core.messages import Message
from inspector.core.policy import Policy
from inspector.core.validators import ValidatorSpec

ProviderName = Literal["scripted", "openai", "anthropic", "replay"]


class _Section(BaseModel):
    # Numbers are taken as text where text is expected (`--set model.name=2024`).
    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)


class ModelConfig(_Section):
    provider: ProviderName = "scripted"
    name: str = "demo"
    base_url: str | None = None
    api_key_env: str | None = None
    temperature: float | None = None
    max_tokens: int | None = Field(None, ge=1)
    stream: bool = True
    timeout_s: float = Field(60.0, gt=0)
    headers: dict[str, str] = Field(default_factory=dict)
    params: dict[str, str] = Field(default_factory=dict)


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
        from jsonschema import Draft202012Validator
        from jsonschema.exceptions import SchemaError

        try:
            Draft202012Validator.check_schema(self.output_schema)
        except SchemaError as exc:
            raise ValueError(f"not a valid JSON Schema: {exc.message}") from None
        return self


class ToolConfig(_Section):
    name: str = Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    result: Any = None
    function: str | None = None
    side_effects: bool = False

    @model_validator(mode="after")
    def _one_source(self) -> ToolConfig:
        if self.result is not None and self.function:
            raise ValueError("give either result or function, not both")
        return self


class ScriptToolCall(_Section):
    name: str
    arguments: dict[str, Any] | str = Field(default_factory=dict)
    id: str | None = None


class ScriptEntry(_Section):
    """One model call of the scripted provider."""

    text: str | None = None
    tool_calls: list[ScriptToolCall] = Field(default_factory=list)
    empty: bool = False
    final: Any = None
    finish_reason: str | None = None
    refusal: str | None = None
    reasoning: str | None = None
    usage: dict[str, int] | None = None
    delay_ms: float = Field(0.0, ge=0)
    error: str | None = None  # the call fails with this provider error message
    # What the model answers instead when the request disables tools (tool_choice "none"), as a
    # real API enforces it; without it the entry's tool calls are sent regardless.
    text_if_tools_disabled: str | None = None


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
            raise ValueError('provider = "scripted" needs [[script]] entries')
        return self


def _location(loc: tuple[int | str, ...]) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        elif not item.startswith(("function-", "tagged-union")):
            parts.append(("." if parts else "") + item)
    return "".join(parts) or "(top level)"


def describe_validation_error(source: str, exc: ValidationError) -> str:
    """One line: ``file: field.path: problem (+N more)``."""
    errors = exc.errors()
    first = errors[0]
    msg = str(first["msg"]).removeprefix("Value error, ")
    line = f"{source}: {_location(tuple(first['loc']))}: {msg}"
    if first["type"] in ("literal_error", "enum") and "input" in first:
        line += f" (got {first['input']!r})"
    if len(errors) > 1:
        line += f" (+{len(errors) - 1} more)"
    return line


def parse_override(text: str) -> tuple[list[str], Any]:
    """``SECTION.KEY=VALUE``: VALUE is read as TOML, and taken as a plain string when it is not."""
    key, sep, raw = text.partition("=")
    path = [p.strip() for p in key.strip().split(".") if p.strip()]
    if not sep or not path:
        raise ScenarioError(f"--set {text!r}: expected SECTION.KEY=VALUE")
    raw = raw.strip()
    try:
        value: Any = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    return path, value


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    for text in overrides:
        path, value = parse_override(text)
        node = data
        for part in path[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ScenarioError(f"--set {text!r}: {part!r} is not a table")
            node = child
        node[path[-1]] = value
    return data


def scenario_from_dict(
    data: dict[str, Any], *, source: str, base_dir: Path, overrides: list[str] | None = None
) -> Scenario:
    overrides = list(overrides or [])
    data = apply_overrides(copy.deepcopy(data), overrides)  # never the caller's tables
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        line = describe_validation_error(source, exc)
        loc = [str(p) for p in exc.errors()[0]["loc"]]
        for text in overrides:
            path, _ = parse_override(text)
            if loc[: len(path)] == path:
                line += f" (from --set {text})"
        raise ScenarioError(line) from None
    return scenario.model_copy(update={"base_dir": base_dir, "source": source})


def read_scenario_toml(text: str, source: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{source}: not valid TOML: {exc}") from None


def load_scenario(path: str | Path, overrides: list[str] | None = None) -> Scenario:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(f"{p}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"{p}: not UTF-8 text (byte {exc.start})") from None
    data = read_scenario_toml(text, str(p))
    return scenario_from_dict(data, source=str(p), base_dir=p.resolve().parent, overrides=overrides)
