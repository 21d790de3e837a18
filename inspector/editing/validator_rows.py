"""One ``[[validators]]`` table as the validators table edits it (pure, no Qt).

A row holds the kind, name, feedback and ``when`` as their own cells and everything else (``max``,
``pattern``, ``schema``, ``field``...) as compact TOML text, ``max = 160, field = "text"``: the
inside of an inline table. A row is checked with the core's own ``ValidatorSpec`` (and, for a
regex or a JSON schema, the same compile step a run does), so the table refuses exactly what a
run would.
"""

from __future__ import annotations

import tomllib
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from inspector.core.errors import InspectorError
from inspector.core.loading import split_ref
from inspector.core.validators import Python, Validator, ValidatorSpec
from inspector.editing.toml_values import inline_item

COLUMNS = ("Kind", "Name", "Parameters", "Feedback", "When")
KIND, NAME, PARAMETERS, FEEDBACK, WHEN = range(len(COLUMNS))
WHEN_CHOICES = ("final", "every_step")
_OWN_CELLS = {"kind": KIND, "name": NAME, "feedback": FEEDBACK, "when": WHEN}
_SPEC: TypeAdapter[Any] = TypeAdapter(ValidatorSpec)


def _spec_classes() -> dict[str, type[BaseModel]]:
    union = typing.get_args(ValidatorSpec)[0]  # Annotated[Union[...], Field(...)]
    classes: dict[str, type[BaseModel]] = {}
    for cls in typing.get_args(union):
        (kind,) = typing.get_args(cls.model_fields["kind"].annotation)
        classes[str(kind)] = cls
    return classes


SPEC_CLASSES = _spec_classes()
KINDS = tuple(SPEC_CLASSES)  # non_empty, max_length, ... in the core's order
# What a new row of each kind starts with: its required parameters, ready to fill in.
TEMPLATES = {
    "non_empty": "",
    "max_length": "max = 160",
    "min_length": "min = 1",
    "regex_absent": 'pattern = "[*_#`]"',
    "regex_present": 'pattern = ""',
    "json_schema": 'schema = { type = "object" }',
    "calls_tool": 'tool = ""',
    "python": 'function = "validators.py:check"',
}


def parameters_text(values: dict[str, Any]) -> str:
    """``{"max": 160}`` → ``max = 160`` (an inline table without its braces)."""
    text = inline_item(values, top=False).as_string().strip()
    return text.removeprefix("{").removesuffix("}").strip()


def parse_parameters(text: str) -> dict[str, Any]:
    """The inverse of ``parameters_text``; ``ValueError`` with a short message."""
    if not text.strip():
        return {}
    try:
        value: dict[str, Any] = tomllib.loads(f"v = {{ {text.strip()} }}")["v"]
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"not TOML key = value pairs: {str(exc).split(' (at')[0]}") from None
    return value


@dataclass
class ValidatorRow:
    kind: str
    name: str = ""
    parameters: str = ""
    feedback: str = ""
    when: str = "final"
    origin: int | None = None  # the [[validators]] table it was read from (None: added)

    @classmethod
    def from_table(cls, table: dict[str, Any], origin: int | None) -> ValidatorRow:
        rest = {k: v for k, v in table.items() if k not in _OWN_CELLS}
        return cls(
            kind=str(table.get("kind", "")),
            name=str(table.get("name") or ""),
            parameters=parameters_text(rest),
            feedback=str(table.get("feedback") or ""),
            when=str(table.get("when", "final")),
            origin=origin,
        )

    @classmethod
    def new(cls, kind: str = "non_empty") -> ValidatorRow:
        return cls(kind=kind, parameters=TEMPLATES.get(kind, ""))

    def cell(self, column: int) -> str:
        return (self.kind, self.name, self.parameters, self.feedback, self.when)[column]

    def with_cell(self, column: int, text: str) -> ValidatorRow:
        values = [self.kind, self.name, self.parameters, self.feedback, self.when]
        values[column] = text
        kind, name, parameters, feedback, when = values
        if (
            column == KIND
            and kind != self.kind
            and row_problem(ValidatorRow(kind, parameters=parameters))
        ):
            parameters = TEMPLATES.get(kind, "")  # the old kind's parameters do not fit
        return ValidatorRow(kind, name, parameters, feedback, when, self.origin)

    def to_table(self) -> dict[str, Any]:
        """The ``[[validators]]`` table, in the order a person writes it (``ValueError`` when
        the parameters are not TOML). A ``when`` left at its default is not written."""
        table: dict[str, Any] = {"kind": self.kind}
        if self.name.strip():
            table["name"] = self.name.strip()
        table.update(parse_parameters(self.parameters))
        if self.feedback:
            table["feedback"] = self.feedback
        if self.when != "final":
            table["when"] = self.when
        return table


@dataclass(frozen=True)
class RowProblem:
    column: int
    message: str  # "max: Input should be greater than or equal to 0"


def row_problem(
    row: ValidatorRow, tool_names: list[str] | None = None, base_dir: Path = Path(".")
) -> RowProblem | None:
    """What is wrong with the row (the cell it is about and a one-line message), or None."""
    try:
        table = row.to_table()
    except ValueError as exc:
        return RowProblem(PARAMETERS, str(exc))
    try:
        spec = _SPEC.validate_python(table)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = [str(p) for p in first["loc"] if str(p) != row.kind]
        where = ".".join(loc) or "kind"
        message = str(first["msg"]).removeprefix("Value error, ")
        if first["type"] == "literal_error" and "expected" in (first.get("ctx") or {}):
            message = f"{message} (got {first['input']!r})"
        if first["type"] in ("union_tag_invalid", "union_tag_not_found"):
            message = f"unknown kind {row.kind!r} (one of: {', '.join(KINDS)})"
        column = _OWN_CELLS.get(loc[0] if loc else "kind", PARAMETERS)
        return RowProblem(column, f"{where}: {message}")
    if isinstance(spec, Python):
        try:
            split_ref(spec.function, "function")  # the file itself is loaded by a run
        except InspectorError as exc:
            return RowProblem(PARAMETERS, str(exc))
        return None
    try:  # regexes compile, schemas are schemas, the tool exists: what a run checks first
        Validator(spec, row.name or row.kind, base_dir, 1.0, "", tool_names)
    except InspectorError as exc:
        return RowProblem(PARAMETERS, str(exc).removeprefix("."))
    return None
