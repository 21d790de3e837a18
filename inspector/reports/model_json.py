"""``model_json``: a model's compact JSON exactly as ``dumps(model.model_dump(mode="json",
exclude=...))`` writes it (``inspector.core.compact_json``), most of it from pydantic's own
encoder: one pass in Rust instead of a dict built in Python and encoded again (a step's fields:
a third less time).

The two write the same text for strings (every code point), integers, booleans, null and
containers, ``Any`` fields included; they differ for floats: ``0.00001`` against ``1e-05``,
``1.5e-7`` against ``1.5e-07``, and ``null`` against ``Infinity`` for a float field holding
inf or nan (``tests/reports/test_model_json.py``). So a model's fields from its first float
field on are dumped the ``dumps`` way, the ones before it by pydantic, whose text is used only
when it holds no number with a fraction or an exponent: a float in an ``Any`` value (or a
string that looks like one, which only costs the slow way) takes ``dumps`` for the whole
model. A model holding another model with a float field is dumped the ``dumps`` way.
"""

from __future__ import annotations

import re
import types
from functools import cache
from typing import Annotated, Any, get_args, get_origin

from pydantic import BaseModel

from inspector.core.compact_json import dumps

# A number with a fraction or an exponent where a value starts (compact JSON: after ``:``,
# ``[`` or ``,``), or anything that looks like one inside a string.
_FLOAT = re.compile(r"[:,\[]-?[0-9]+[.eE]")


def model_json(model: BaseModel, exclude: frozenset[str] = frozenset()) -> str:
    """``dumps(model.model_dump(mode="json", exclude=exclude))``."""
    serializer = type(model).__pydantic_serializer__
    split = _split(type(model), exclude)
    if split is not None:
        left_out, rest = split
        try:
            head = serializer.to_json(model, exclude=left_out).decode()
        except ValueError:  # what pydantic cannot write (a lone surrogate): the other way
            head = ""
        if head and not _FLOAT.search(head):
            if not rest:
                return head
            end = dumps(serializer.to_python(model, mode="json", include=rest))
            if end == "{}":
                return head
            if head == "{}":
                return end
            return f"{head[:-1]},{end[1:]}"
    return dumps(model_value(model, exclude))


def model_value(model: BaseModel, exclude: frozenset[str] = frozenset()) -> Any:
    """``model.model_dump(mode="json", exclude=exclude)``, without its keyword handling (a
    third of the call for a small model)."""
    serializer = type(model).__pydantic_serializer__
    return serializer.to_python(model, mode="json", exclude=set(exclude))


@cache
def _split(cls: type[BaseModel], exclude: frozenset[str]) -> tuple[set[str], set[str]] | None:
    """What pydantic leaves out of ``cls``'s dump (``exclude`` and the float tail) and the
    tail's fields dumped the other way; None: the whole dump the other way."""
    tail = _float_tail(cls)
    return None if tail is None else (set(exclude | tail), set(tail - exclude))


@cache
def _float_tail(cls: type[BaseModel]) -> frozenset[str] | None:
    """The names of ``cls``'s fields from its first field that may hold a float on (empty:
    none may); None when a model it holds may hold a float, or when its dump is not its fields
    in order (a serializer of its own, computed fields, extra fields)."""
    names = list(cls.model_fields)
    floats = [n for n in names if float in _parts(cls.model_fields[n].annotation)]
    held = {m for f in cls.model_fields.values() for m in _models_in(f.annotation)} - {cls}
    if any(_may_hold_float(m, {cls}) for m in held):
        return None
    if not floats:
        return frozenset()
    if (
        cls.__pydantic_decorators__.model_serializers
        or cls.model_computed_fields
        or cls.model_config.get("extra") == "allow"
    ):
        return None
    return frozenset(names[names.index(floats[0]) :])


def _may_hold_float(cls: type[BaseModel], seen: set[type[BaseModel]]) -> bool:
    """Whether a field of ``cls``, or of a model it holds, may hold a float."""
    if cls in seen:
        return False
    seen.add(cls)
    for field in cls.model_fields.values():
        if float in _parts(field.annotation):
            return True
        if any(_may_hold_float(m, seen) for m in _models_in(field.annotation)):
            return True
    return False


def _parts(annotation: Any) -> list[Any]:
    """``annotation`` and every type it is made of (unions, containers, ``Annotated``)."""
    out = [annotation]
    origin = get_origin(annotation)
    if origin is not None or isinstance(annotation, types.UnionType):
        args = get_args(annotation)
        for arg in args[:1] if origin is Annotated else args:
            out += _parts(arg)
    return out


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    return [p for p in _parts(annotation) if isinstance(p, type) and issubclass(p, BaseModel)]
