"""JSON Schema checks (the ``jsonschema`` library), with validators cached per schema.

``$ref`` resolves only inside the schema itself (``#/$defs/...``, or a subschema's ``$id``) and to
the JSON Schema meta-schemas that ship with the library: never over the network and never from a
file, also in ``revalidate`` and ``replay --offline`` (docs/engine.md "JSON Schema references").
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import lru_cache
from typing import Any
from urllib.parse import urldefrag, urljoin

from jsonschema import Draft202012Validator
from jsonschema_specifications import REGISTRY as SPECIFICATIONS
from referencing import Registry

# No ``retrieve``: a reference to anything not in the schema is unresolvable (an error), where
# jsonschema's default registry would fetch it with urllib (http://, file://).
_LOCAL_ONLY: Registry[Any] = Registry()
_REF_KEYS = ("$ref", "$dynamicRef")


@lru_cache(maxsize=256)
def _validator(schema_json: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads(schema_json), registry=_LOCAL_ONLY)


def _walk(node: Any, base: str, ids: set[str], refs: list[tuple[str, str]]) -> None:
    if isinstance(node, list):
        for item in node:
            _walk(item, base, ids, refs)
        return
    if not isinstance(node, dict):
        return
    if isinstance(node.get("$id"), str):
        base = urldefrag(urljoin(base, node["$id"])).url
        ids.add(base)
    for key in _REF_KEYS:
        ref = node.get(key)
        if isinstance(ref, str):
            refs.append((ref, urldefrag(urljoin(base, ref)).url))
    for key, value in node.items():
        if key not in ("enum", "const", "examples", "default"):  # data, not subschemas
            _walk(value, base, ids, refs)


def outside_refs(schema: Any) -> Iterator[str]:
    """The ``$ref``/``$dynamicRef`` values that point outside ``schema`` (and outside the
    bundled meta-schemas)."""
    ids = {""}
    refs: list[tuple[str, str]] = []
    _walk(schema, "", ids, refs)
    for ref, target in refs:
        if target not in ids and SPECIFICATIONS.get(target) is None:
            yield ref


def schema_problem(schema: Any) -> str | None:
    """Why ``schema`` is not a valid JSON Schema, or None."""
    from jsonschema.exceptions import SchemaError

    if not isinstance(schema, dict):
        return f"expected a table, got {type(schema).__name__}"
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return exc.message
    for ref in outside_refs(schema):
        return (
            f"$ref {ref!r} points outside the schema; only references inside it "
            "(#/$defs/...) are resolved, never files or the network"
        )
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
