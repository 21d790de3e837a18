"""The code editor's auto-indent rule, without Qt."""

from __future__ import annotations

import pytest

from inspector.editing.python_indent import next_line_indent


@pytest.mark.parametrize(
    ("line", "indent"),
    [
        ("def check(output, ctx):", "    "),
        ("    if not output:", "        "),
        ("    if x:  # a comment", "        "),
        ("    return False", "    "),
        ("", ""),
        ("x = {'a': 1}", ""),
        ("        ", "        "),
    ],
)
def test_next_line_indent(line: str, indent: str) -> None:
    assert next_line_indent(line) == indent
