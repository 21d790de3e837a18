"""``dumps``: compact JSON exactly as ``json.dumps(value, ensure_ascii=False,
separators=(",", ":"))`` writes it, with CPython's C encoder made once; ``dumps_spaced``: as
``json.dumps(value, ensure_ascii=False)`` writes it (a tool call's arguments), the same way.

``json.dumps`` with other than default arguments builds a new encoder on every call: half the
cost of a small value. The store (every hash and row depends on this text) and the exports
(lines spliced from pieces) write their JSON with it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

COMPACT = (",", ":")
SPACED = (", ", ": ")  # json.dumps's default


def _json_dumps(value: Any, separators: tuple[str, str] = COMPACT) -> str:
    return json.dumps(value, ensure_ascii=False, separators=separators)


def _c_encoder(separators: tuple[str, str] = COMPACT) -> Callable[[Any, int], Sequence[str]] | None:
    """The C encoder with ``_json_dumps``'s settings, without circular-reference markers (a
    value from a model dump has no cycle); None when this Python has no C encoder or it writes
    other text than ``_json_dumps``."""
    from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]

    if c_make_encoder is None:
        return None
    item, key = separators
    try:
        encoder = c_make_encoder(
            None, json.JSONEncoder().default, encode_basestring, None, key, item, False, False, True
        )
        probe = {"a": [1, 2.5, None, True, 'é\n"x\u2028'], "b": {"1": float("inf")}}
        if "".join(encoder(probe, 0)) != _json_dumps(probe, separators):
            return None
    except Exception:  # another signature: the plain way
        return None
    return encoder  # type: ignore[no-any-return]


_ENCODER = _c_encoder()
_SPACED_ENCODER = _c_encoder(SPACED)
# What ``json.dumps`` itself does with a string (``JSONEncoder.encode``): no encoder call.
_STRING: Callable[[str], str] = json.encoder.encode_basestring


def dumps(value: Any) -> str:
    """Compact JSON, key order kept."""
    if isinstance(value, str):
        return _STRING(value)
    if _ENCODER is None:
        return _json_dumps(value)
    return "".join(_ENCODER(value, 0))


def dumps_spaced(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False)``: JSON with its default separators, key order
    kept (``json.dumps`` with a non-default argument builds an encoder per call)."""
    if isinstance(value, str):
        return _STRING(value)
    if _SPACED_ENCODER is None:
        return _json_dumps(value, SPACED)
    return "".join(_SPACED_ENCODER(value, 0))
