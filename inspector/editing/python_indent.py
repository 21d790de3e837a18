"""Where the next line of python starts when Enter is pressed in the code editor: under the
current line, one level deeper after a ``:`` that opens a block (``def``, ``if``, ``for`` …)."""

from __future__ import annotations

INDENT = 4


def next_line_indent(before_cursor: str) -> str:
    """The spaces the new line starts with, given the current line's text up to the cursor.
    A trailing comment does not hide the ``:`` (``if x:  # why``)."""
    leading = before_cursor[: len(before_cursor) - len(before_cursor.lstrip(" "))]
    code = before_cursor.split("#", 1)[0].rstrip()  # a '#' inside a string is rare in a header
    if code.endswith(":"):
        return leading + " " * INDENT
    return leading
