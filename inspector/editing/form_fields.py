"""What the policy form is made of, derived from a pydantic model's fields (pure, no Qt).

``field_specs(Policy)`` says which editor each field gets; ``field_errors`` validates the form's
values with the model itself and files each message under the field it is about; ``overrides``
turns the edited values into ``section.key=VALUE`` strings, the same ``--set`` overrides the CLI
takes, so a run from the window records exactly what the user changed.
"""

from __future__ import annotations

import json
import tomllib
import types
import typing
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

FieldKind = Literal["choice", "flag", "integer", "number", "text", "long_text", "value"]

# Text fields that hold prose rather than a name get a multi-line editor.
_LONG_TEXT_SUFFIXES = ("_instruction", "_prompt")
SPIN_LIMIT = 1_000_000


@dataclass(frozen=True)
class FieldSpec:
    name: str
    kind: FieldKind
    label: str
    description: str
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    optional: bool = False  # the field accepts None (an empty "value" editor)
    text_only: bool = False  # a "value" field that is a string: its text is taken as-is


def _label(name: str) -> str:
    text = name.replace("_", " ")
    for unit, spelled in ((" s", " (s)"),):
        if text.endswith(unit):
            text = text.removesuffix(unit) + spelled
    return text[:1].upper() + text[1:]


def _minimum(metadata: list[Any]) -> float | None:
    # pydantic keeps Field(ge=..., gt=...) as annotated-types constraints carrying .ge / .gt.
    for item in metadata:
        for bound in ("ge", "gt"):
            value = getattr(item, bound, None)
            if isinstance(value, int | float):
                return float(value)
    return None


def _spec(name: str, annotation: Any, metadata: list[Any], description: str) -> FieldSpec:
    label = _label(name)
    if typing.get_origin(annotation) is Literal:
        choices = tuple(str(c) for c in typing.get_args(annotation))
        return FieldSpec(name, "choice", label, description, choices=choices)
    if annotation is bool:
        return FieldSpec(name, "flag", label, description)
    if annotation is int:
        return FieldSpec(name, "integer", label, description, minimum=_minimum(metadata))
    if annotation is float:
        return FieldSpec(name, "number", label, description, minimum=_minimum(metadata))
    if annotation is str:
        long = name.endswith(_LONG_TEXT_SUFFIXES)
        return FieldSpec(name, "long_text" if long else "text", label, description)
    # Optionals, unions, Any, tables: a one-line TOML value (empty = None).
    args = typing.get_args(annotation)
    is_union = typing.get_origin(annotation) in (typing.Union, types.UnionType)
    optional = annotation is Any or (is_union and type(None) in args)
    text_only = is_union and set(args) == {str, type(None)}
    return FieldSpec(
        name,
        "value",
        label,
        description,
        minimum=_minimum(metadata),
        optional=optional,
        text_only=text_only,
    )


def field_specs(model: type[BaseModel], exclude: tuple[str, ...] = ()) -> list[FieldSpec]:
    """One spec per field of ``model``, in declaration order (a new field appears by itself)."""
    return [
        _spec(name, info.annotation, list(info.metadata), info.description or "")
        for name, info in model.model_fields.items()
        if name not in exclude
    ]


def toml_literal(value: Any) -> str:
    """``value`` as a TOML value (what ``--set key=VALUE`` reads back); "" for None."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)  # 1.5, 1e+20, inf, nan: all TOML floats
    if isinstance(value, str):
        # A JSON string is a TOML basic string, except that TOML also wants DEL escaped.
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        items = ", ".join(f"{json.dumps(str(k))} = {toml_literal(v)}" for k, v in value.items())
        return "{ " + items + " }" if items else "{}"
    raise ValueError(f"cannot write {type(value).__name__} as TOML")


def parse_value_text(text: str, spec: FieldSpec) -> Any:
    """What a one-line "value" editor holds: None when empty, the text itself for a string
    field, else a TOML value. Raises ``ValueError`` with a short message."""
    text = text.strip()
    if not text:
        return None
    if spec.text_only:
        return text
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError as exc:
        if spec.kind == "value" and not spec.optional:
            raise ValueError('not a TOML value (quote text: "like this")') from None
        if text[0] in '{["':  # meant as a table, array or string: say what is wrong with it
            raise ValueError(f"not a TOML value: {exc}") from None
        return text  # Any: an unquoted word is taken as text, as --set does


def _field_of(error: Any, fields: set[str]) -> tuple[str, str]:
    loc = error.get("loc", ())
    message = str(error.get("msg", "")).removeprefix("Value error, ")
    if loc and isinstance(loc[0], str) and loc[0] in fields:
        return loc[0], message
    # A model-level check names its field first: "fallback: a fallback handler is chosen ..."
    head, sep, rest = message.partition(": ")
    if sep and head in fields:
        return head, rest
    return "", message


def field_errors(model: type[BaseModel], values: dict[str, Any]) -> dict[str, str]:
    """Validates ``values`` with ``model``; maps field name ("" when none fits) to the first
    message about it. Empty when the values are valid."""
    try:
        model.model_validate(values)
    except ValidationError as exc:
        errors: dict[str, str] = {}
        for error in exc.errors():
            name, message = _field_of(error, set(model.model_fields))
            errors.setdefault(name, message)
        return errors
    return {}


def overrides(section: str, base: dict[str, Any], values: dict[str, Any]) -> list[str]:
    """``section.key=VALUE`` for each value that differs from ``base``, in field order.

    A field cleared to None has no TOML spelling; ``unset_fields`` reports those."""
    return [
        f"{section}.{name}={toml_literal(value)}"
        for name, value in values.items()
        if value != base.get(name) and value is not None
    ]


def unset_fields(base: dict[str, Any], values: dict[str, Any]) -> list[str]:
    """Fields the form clears (None) that the scenario sets: an override cannot say that."""
    return [n for n, v in values.items() if v is None and base.get(n) is not None]
