"""Two requests of one run as one line diff (issue 14): what a step's request adds to, or
drops from, the previous call's or the previous attempt's.

The requests are compared past their shared opening: the messages equal at each position from
the start are skipped (a line says how many), so the lines diffed are the system prompt, the
messages from the first difference on, the tools, tool_choice and response format — a few
dozen lines late in a 10,000-step turn as early in it, and the change at the end is never cut
off. The lines and their alignment are the compare view's (``compare_lines``); they are read
here as one column, removed lines before added ones.
"""

from __future__ import annotations

import sys
from typing import NamedTuple

from inspector.core.records import StepRequest
from inspector.core.shared_list import common_prefix
from inspector.reports.compare_lines import DiffLine, align, request_lines

_NO_WRAP = sys.maxsize  # the view wraps lines to its own width


class RequestDiff(NamedTuple):
    """``lines``: ``same`` / ``added`` / ``removed`` lines, in order; ``skipped``: the leading
    messages equal in both and left out; counts of added and removed lines."""

    lines: list[DiffLine]
    skipped: int
    added: int
    removed: int

    @property
    def summary(self) -> str:
        if not self.added and not self.removed:
            return "the same request"
        return f"{self.added} line{'s' * (self.added != 1)} added, {self.removed} removed"


def request_diff(before: StepRequest, after: StepRequest) -> RequestDiff:
    """``after`` against ``before``, past the messages they share from the start."""
    skip = common_prefix(before.messages, after.messages)
    rows = align(
        [
            request_lines(before, skip=skip, canonical=False),
            request_lines(after, skip=skip, canonical=False),
        ],
        wrap=_NO_WRAP,
    )
    lines: list[DiffLine] = []
    removed: list[DiffLine] = []
    added: list[DiffLine] = []
    counts = [0, 0]

    def flush() -> None:
        lines.extend(removed)
        lines.extend(added)
        counts[0] += len(added)
        counts[1] += len(removed)
        removed.clear()
        added.clear()

    for old, new in rows:
        if old.kind == "same":
            flush()
            lines.append(old)
            continue
        if old.kind in ("removed", "changed"):
            removed.append(DiffLine(old.text, "removed"))
        if new.kind in ("added", "changed"):
            added.append(DiffLine(new.text, "added"))
    flush()
    return RequestDiff(lines, skip, counts[0], counts[1])
