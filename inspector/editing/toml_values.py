"""Plain Python values written as natural TOML items (pure, tomlkit only).

Small dicts (JSON schemas, tool arguments) become inline tables, prose with line breaks becomes a
multi-line string, and ``None`` has no TOML spelling: a key set to ``None`` is left out.
"""

from __future__ import annotations

from typing import Any

import tomlkit
from tomlkit.items import Array, InlineTable, Item, String


def toml_string(text: str) -> String:
    """A multi-line basic string for text with line breaks (what a person writes for a prompt).
    A ``\\r`` stays escaped: TOML turns a raw CRLF inside a multi-line string into LF."""
    multiline = "\n" in text and "\r" not in text
    return tomlkit.string(text, multiline=multiline)


def inline_item(value: Any, *, top: bool = True) -> Item:
    """``value`` as an item for a key's line: nested dicts inline (not as tables), strings
    multi-line only at the top (inside an inline table a one-line string reads better); an
    array of tables spreads over one line per table."""
    if isinstance(value, str):
        return toml_string(value) if top else tomlkit.string(value)
    if isinstance(value, dict):
        table: InlineTable = tomlkit.inline_table()
        for key, inner in value.items():
            if inner is not None:
                table.append(str(key), inline_item(inner, top=False))
        return table
    if isinstance(value, list | tuple):
        array: Array = tomlkit.array()
        for inner in value:
            if inner is None:
                raise ValueError("a TOML array cannot hold an empty value (None)")
            array.append(inline_item(inner, top=False))
        if top and len(array) > 1 and all(isinstance(v, dict) for v in value):
            array.multiline(True)
        return array
    scalar: Item = tomlkit.item(value)
    return scalar
