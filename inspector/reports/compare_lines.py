"""What the model saw at one step, as lines, and those lines of 2–4 runs aligned side by side
against the first run (the baseline) with difflib.

Pure Python (no Qt), so the compare view can build it on a worker thread: a long turn's request
repeats the whole history, thousands of lines that difflib takes a while over.
"""

from __future__ import annotations

import difflib
import json
import textwrap
from collections.abc import Sequence
from typing import Any, Literal, NamedTuple

from inspector.core.records import StepRequest
from inspector.reports.compare import canonical_request

DiffKind = Literal["same", "added", "removed", "changed", "filler"]
MAX_LINES = 20_000  # per column; past it the view says what it left out
WRAP = 90  # characters: long lines wrap, so a paragraph stays readable without scrolling


class DiffLine(NamedTuple):
    text: str
    kind: DiffKind


def request_lines(request: StepRequest, *, skip: int = 0, canonical: bool = True) -> list[str]:
    """The request as readable lines: system prompt, messages by role, tools, tool_choice and
    response format. Tool-call ids are renamed ``#1``, ``#2``… (``canonical_request``) so that
    the ids a live provider invents anew are not shown as differences (``canonical=False``:
    the ids as sent, for two requests of one run). Messages carry no position number: one
    message more early on would otherwise change every later heading. ``skip``: the first
    messages are left out (a line says how many), and never dumped."""
    total = len(request.messages)
    if skip:
        request = request.model_construct(
            **{**dict(request), "messages": list(request.messages[skip:])}
        )
    data = canonical_request(request) if canonical else request.model_dump(mode="json")
    lines = ["SYSTEM PROMPT"]
    lines += _indented(data["system"]) or ["  (none)"]
    messages = data["messages"]
    lines.append(f"MESSAGES ({total})")
    if skip:
        lines.append(f"  … the first {skip:,} message{'s' * (skip != 1)} not shown")
    for message in messages:
        head = message["role"]
        if message.get("name"):
            head += f" {message['name']}"
        if message.get("tool_call_id"):
            head += f" (result of {message['tool_call_id']})"
        lines.append(f"— {head}")
        lines += _indented(message.get("content"))
        for call in message.get("tool_calls") or ():
            lines.append(f"  → {call['name']} {call['id']} {_json(call['arguments'])}")
    lines.append(f"TOOLS ({len(data['tools'])})")
    for tool in data["tools"]:
        lines.append(f"  {tool['name']}: {tool['description']}".rstrip(": "))
        lines.append(f"    parameters: {_json(tool['parameters'])}")
    choice = data["tool_choice"]
    lines.append(f"TOOL_CHOICE {_json(choice) if choice is not None else 'not set'}")
    fmt = data["response_format"]
    lines.append(f"RESPONSE_FORMAT {_json(fmt) if fmt is not None else 'none (free text)'}")
    return lines


def _json(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _indented(text: str | None) -> list[str]:
    return [f"  {line}" for line in text.splitlines()] if text else []


# ---- alignment --------------------------------------------------------------------------------


_FILLER = DiffLine("", "filler")


class _Column:
    """One column's lines placed against the baseline's: ``before[j]`` are lines it has that the
    baseline has not, just before baseline line ``j``; ``at[j]`` is its counterpart of baseline
    line ``j``."""

    def __init__(self, base: Sequence[str], lines: Sequence[str] | None) -> None:
        self.before: list[list[str]] = [[] for _ in range(len(base) + 1)]
        if lines is None:  # the run has no such step: blank, and no say in the baseline's tint
            self.at = [_FILLER] * len(base)
            return
        self.at = [DiffLine("", "removed")] * len(base)
        matcher = difflib.SequenceMatcher(None, base, lines, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                for offset in range(i2 - i1):
                    self.at[i1 + offset] = DiffLine(lines[j1 + offset], "same")
            elif tag == "insert":
                self.before[i1].extend(lines[j1:j2])
            elif tag == "replace":
                paired = min(i2 - i1, j2 - j1)
                for offset in range(paired):
                    self.at[i1 + offset] = DiffLine(lines[j1 + offset], "changed")
                self.before[i1 + paired].extend(lines[j1 + paired : j2])
            # "delete": the baseline's lines stay "removed" here


def align(columns: Sequence[Sequence[str] | None], wrap: int = WRAP) -> list[tuple[DiffLine, ...]]:
    """Rows of one line per column, every column diffed against ``columns[0]``: a baseline line
    is ``removed`` / ``changed`` there when some column lacks / changed it; the other columns
    show ``added`` and ``changed`` lines, an empty ``removed`` line where the baseline has one
    they lack, and ``filler`` to keep the rows aligned (a None column is all filler: that run
    has no such step). Lines longer than ``wrap`` wrap."""
    return wrap_rows(_align(columns)[0], wrap)


def wrap_rows(rows: Sequence[Sequence[DiffLine]], wrap: int) -> list[tuple[DiffLine, ...]]:
    """Aligned rows with every line longer than ``wrap`` wrapped (rows stay aligned)."""
    return [line for row in rows for line in _wrapped(list(row), wrap)]


def _align(columns: Sequence[Sequence[str] | None]) -> tuple[list[tuple[DiffLine, ...]], int]:
    """``align``'s rows before wrapping, and how many of them differ somewhere (difflib: the
    costly part, done once per step; a new width only re-wraps)."""
    base = columns[0] or []
    others = [_Column(base, lines) for lines in columns[1:]]
    rows: list[tuple[DiffLine, ...]] = []
    changed = 0
    for j in range(len(base) + 1):
        extra = max((len(c.before[j]) for c in others), default=0)
        for k in range(extra):
            cells = [DiffLine("", "filler")]
            for column in others:
                inserted = column.before[j]
                cells.append(DiffLine(inserted[k], "added") if k < len(inserted) else _FILLER)
            rows.append(tuple(cells))
            changed += 1
        if j == len(base):
            break
        counterparts = [column.at[j] for column in others]
        kinds = {c.kind for c in counterparts}
        kind: DiffKind = (
            "removed" if "removed" in kinds else "changed" if "changed" in kinds else "same"
        )
        rows.append((DiffLine(base[j], kind), *counterparts))
        changed += kind != "same"
    return rows, changed


def _wrapped(cells: list[DiffLine], width: int) -> list[tuple[DiffLine, ...]]:
    pieces = [_wrap(cell.text, width) for cell in cells]
    height = max(len(p) for p in pieces)
    if height == 1:
        return [tuple(cells)]
    return [
        tuple(
            DiffLine(piece[k] if k < len(piece) else "", cell.kind)
            for cell, piece in zip(cells, pieces, strict=True)
        )
        for k in range(height)
    ]


def _wrap(text: str, width: int) -> list[str]:
    if len(text) <= width:
        return [text]
    # Continuation lines keep the indent, up to half the width: textwrap never ends when the
    # indent leaves no room on a line.
    indent = text[: min(len(text) - len(text.lstrip(" ")), width // 2)]
    return textwrap.wrap(
        text, width, subsequent_indent=indent + "  ", drop_whitespace=False, break_on_hyphens=False
    ) or [text]


class LineDiff(NamedTuple):
    """The aligned rows and how many lines differ (a wrapped line counts once); per column,
    how many lines were left out past ``MAX_LINES`` and whether the run has the step at all;
    the width the lines were wrapped at; the rows before wrapping (``rewrapped`` uses them)."""

    rows: list[tuple[DiffLine, ...]]
    changed: int
    clipped: list[int]
    absent: list[bool]
    wrap: int
    aligned: Sequence[tuple[DiffLine, ...]] = ()


def rewrapped(diff: LineDiff, wrap: int) -> LineDiff:
    """``diff`` wrapped at another width, without diffing again."""
    return diff._replace(rows=wrap_rows(diff.aligned, wrap), wrap=wrap)


def diff_requests(requests: Sequence[StepRequest | None], wrap: int = WRAP) -> LineDiff:
    """``requests[i]`` is run ``i``'s request at the step (None: the run has no such step)."""
    columns: list[list[str] | None] = []
    clipped: list[int] = []
    for request in requests:
        lines = request_lines(request) if request is not None else None
        clipped.append(max(0, len(lines) - MAX_LINES) if lines is not None else 0)
        columns.append(lines[:MAX_LINES] if lines is not None else None)
    aligned, changed = _align(columns)
    absent = [r is None for r in requests]
    return LineDiff(wrap_rows(aligned, wrap), changed, clipped, absent, wrap, aligned)
