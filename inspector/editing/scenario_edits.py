"""What the scenario editor changed, as ``--set`` overrides and as file edits (pure, no Qt).

The editor's baseline is the scenario file's own tables (``ScenarioDocument.to_dict()``), so a
key the editor has no field for survives an edit untouched. Only the sections the editor owns
are compared: ``prompt.system``, ``prompt.user``, ``prompt.messages``, ``tools`` and
``output.schema``; the model and policy belong to the Policy panel.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from inspector.editing import ScenarioDocument
from inspector.editing.form_fields import toml_literal

SYSTEM, USER, MESSAGES, TOOLS, OUTPUT_SCHEMA = (
    "prompt.system", "prompt.user", "prompt.messages", "tools", "output.schema",
)  # fmt: skip
FIELDS = (SYSTEM, USER, MESSAGES, TOOLS, OUTPUT_SCHEMA)


@dataclass
class ScenarioEdits:
    """The editable sections: ``user``/``output_schema`` None means absent."""

    system: str = ""
    user: str | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    output_schema: dict[str, Any] | None = None

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> ScenarioEdits:
        """From a scenario file's plain tables (what tomllib reads)."""
        prompt = data.get("prompt") if isinstance(data.get("prompt"), dict) else {}
        output = data.get("output") if isinstance(data.get("output"), dict) else {}
        assert isinstance(prompt, dict) and isinstance(output, dict)
        schema = output.get("schema")
        return cls(
            system=str(prompt.get("system", "")),
            user=None if prompt.get("user") is None else str(prompt["user"]),
            messages=[dict(m) for m in prompt.get("messages", []) if isinstance(m, dict)],
            tools=[dict(t) for t in data.get("tools", []) if isinstance(t, dict)],
            output_schema=dict(schema) if isinstance(schema, dict) else None,
        )

    def values(self) -> dict[str, Any]:
        return {
            SYSTEM: self.system,
            USER: self.user,
            MESSAGES: self.messages,
            TOOLS: self.tools,
            OUTPUT_SCHEMA: self.output_schema,
        }


def changes(base: ScenarioEdits, now: ScenarioEdits) -> dict[str, Any]:
    """``field → new value`` for each section that differs (None: removed)."""
    old = base.values()
    return {key: value for key, value in now.values().items() if value != old[key]}


_ATTRIBUTES = dict(
    zip(FIELDS, ("system", "user", "messages", "tools", "output_schema"), strict=True)
)


def with_changes(base: ScenarioEdits, changed: dict[str, Any]) -> ScenarioEdits:
    """``base`` with the sections ``changes`` gave (the other sections as ``base`` has them)."""
    return dataclasses.replace(base, **{_ATTRIBUTES[key]: value for key, value in changed.items()})


def prune(value: Any) -> Any:
    """``value`` without the None entries of its dicts (TOML has no null)."""
    if isinstance(value, dict):
        return {str(k): prune(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [prune(v) for v in value]
    return value


def overrides(base: ScenarioEdits, now: ScenarioEdits) -> tuple[list[str], dict[str, str]]:
    """The edits as ``--set`` overrides, and the edits an override cannot express (a removal):
    ``{field: why}``; those need a save."""
    out: list[str] = []
    unrunnable: dict[str, str] = {}
    for key, value in changes(base, now).items():
        if value is None:
            what = "user message" if key == USER else "output schema"
            unrunnable[key] = f"removing the {what} takes a save (Ctrl+S) before the run"
            continue
        out.append(f"{key}={toml_literal(prune(value))}")
    return out, unrunnable


def parse_json(text: str) -> Any:
    """A JSON field's value; ``ValueError`` with a one-line message naming line and column."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None


def json_text(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def parse_schema(text: str) -> dict[str, Any] | None:
    """An object schema's text: empty → None; anything but a JSON object is refused."""
    if not text.strip():
        return None
    value = parse_json(text)
    if not isinstance(value, dict):
        raise ValueError("a JSON schema is an object: { ... }")
    return value


def parse_result(text: str) -> Any:
    """A tool's canned result: JSON when it starts with ``{`` or ``[``, else the text itself
    (empty → no result)."""
    if not text.strip():
        return None
    return parse_json(text) if text.lstrip().startswith(("{", "[")) else text


def result_text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json_text(value)


def apply_changes(data: dict[str, Any], edits: dict[str, Any]) -> dict[str, Any]:
    """``data`` (a scenario's plain tables, changed in place) with ``changes()`` applied;
    an emptied output schema removes the whole ``[output]`` table."""
    for key, value in edits.items():
        *parents, last = key.split(".")
        if key == OUTPUT_SCHEMA and value is None:
            data.pop("output", None)
            continue
        node = data
        for part in parents:
            node = node.setdefault(part, {})
        if value is None:
            node.pop(last, None)
        else:
            node[last] = value
    return data


def write_changes(
    doc: ScenarioDocument, edits: dict[str, Any], tool_origins: list[int | None]
) -> None:
    """Writes ``changes()`` into the file's document, comments kept (tools table by table)."""
    for key, value in edits.items():
        if key == TOOLS:
            doc.set_tools(prune(value), tool_origins)
        elif key == OUTPUT_SCHEMA and value is None:
            doc.set("output", None)
        else:
            doc.set(key, prune(value))
