"""JSON Schema checks (the ``jsonschema`` library), with validators cached per schema."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator


@lru_cache(maxsize=256)
def _validator(schema_json: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads(schema_json))


def schema_problem(schema: Any) -> str | None:
    """Why ``schema`` is not a valid JSON Schema, or None."""
    from jsonschema.exceptions import SchemaError

    if not isinstance(schema, dict):
        return f"expected a table, got {type(schema).__name__}"
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return exc.message
    return None


def compile_schema(schema: dict[str, Any]) -> Draft202012Validator:
    return _validator(json.dumps(schema, sort_keys=True))


def schema_errors(schema: dict[str, Any] | Draft202012Validator, value: Any) -> list[str]:
    """Readable problems, most relevant first; empty when ``value`` matches ``schema``."""
    validator = schema if isinstance(schema, Draft202012Validator) else compile_schema(schema)
    if validator.is_valid(value):
        return []
    problems = []
    for err in sorted(validator.iter_errors(value), key=lambda e: list(e.path)):
        where = "/".join(str(p) for p in err.path)
        problems.append(f"{where}: {err.message}" if where else err.message)
    return problems
