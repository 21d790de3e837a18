"""Bounds on compiling a validator's regular expression (docs/engine.md "Limits").

The ``regex`` engine's ``timeout`` covers matching only. Compiling expands counted repeats: each
``{m}`` / ``{m,n}`` copies the repeated item up to its bound, so ``x{99999999}`` took 84 s and
23.6 GB. Before compiling, ``compiled_size`` estimates that expansion from the pattern's text
(each item counts 1, a group the sum of its items, a counted repeat multiplies by its largest
bound) and ``compile_pattern`` refuses a pattern past ``MAX_COMPILED_SIZE`` or nested deeper than
``MAX_DEPTH`` with one line. The estimate errs high (alternatives add up, a ``{`` in a verbose
comment may count), never low.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from inspector.core.errors import ScenarioError

if TYPE_CHECKING:  # imported when a pattern is compiled: most scenarios have none (~10 ms)
    import regex

IGNORECASE = 2  # ``regex.IGNORECASE``, usable without importing the engine

# ``x{50000}`` compiles in ~15 ms and ~15 MB; the limit leaves room for any hand-written pattern.
MAX_COMPILED_SIZE = 50_000
MAX_DEPTH = 100  # nested groups; deeper ones overflow the engine's recursive compiler

_REPEAT_DIGITS = frozenset("0123456789,")


class PatternTooLarge(ValueError):
    """The pattern would expand past the bounds when compiled."""


def _repeat_bound(pattern: str, start: int) -> tuple[int, int] | None:
    """``(largest count, index after "}")`` for a counted repeat at ``start`` (a ``{``), or
    None when the braces are not one (``{e<=1}`` fuzzy constraints, a literal ``{``)."""
    end = pattern.find("}", start + 1)
    if end < 0:
        return None
    body = pattern[start + 1 : end]
    if not body or not set(body) <= _REPEAT_DIGITS or body.count(",") > 1 or body == ",":
        return None
    low, _, high = body.partition(",")
    counts = [int(n) for n in (low, high) if n]
    return max(counts), end + 1


def _skip_class(pattern: str, i: int) -> int:
    """The index after the character class opening at ``i`` (nested classes included)."""
    depth = 0
    i += 1
    if i < len(pattern) and pattern[i] == "^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1  # a leading "]" is literal
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            depth += 1
        elif c == "]":
            if depth == 0:
                return i + 1
            depth -= 1
        i += 1
    return i


def _skip_escape(pattern: str, i: int) -> int:
    """The index after the escape at ``i`` (``\\p{...}``, ``\\N{...}``, ``\\x{...}`` whole)."""
    if i + 2 < len(pattern) and pattern[i + 1] in "pPNxXug" and pattern[i + 2] == "{":
        end = pattern.find("}", i + 3)
        return len(pattern) if end < 0 else end + 1
    return i + 2


def compiled_size(pattern: str) -> int:
    """An upper estimate of how many items compiling ``pattern`` expands to (see the module
    docstring). Raises ``PatternTooLarge`` as soon as the estimate or the nesting is too big."""
    frames: list[list[int]] = [[]]
    i = 0
    while i < len(pattern):
        c = pattern[i]
        seq = frames[-1]
        if c == "\\":
            seq.append(1)
            i = _skip_escape(pattern, i)
            continue
        if c == "[":
            seq.append(1)
            i = _skip_class(pattern, i)
            continue
        if c == "(":
            frames.append([])
            if len(frames) > MAX_DEPTH:
                raise PatternTooLarge(f"groups nested more than {MAX_DEPTH} deep")
        elif c == ")" and len(frames) > 1:
            group = sum(frames.pop())
            frames[-1].append(max(group, 1))
        elif c == "{" and seq:
            repeat = _repeat_bound(pattern, i)
            if repeat is not None:
                bound, i = repeat
                seq[-1] *= max(bound, 1)
                if seq[-1] > MAX_COMPILED_SIZE:
                    raise PatternTooLarge(_too_large(seq[-1]))
                continue
            seq.append(1)
        elif c not in "|*+?":
            seq.append(1)
        i += 1
    total = sum(sum(frame) for frame in frames)
    if total > MAX_COMPILED_SIZE:
        raise PatternTooLarge(_too_large(total))
    return total


def _too_large(size: int) -> str:
    return (
        f"it expands to about {size:,} items when compiled (counted repeats multiply); "
        f"the limit is {MAX_COMPILED_SIZE:,}"
    )


def compile_pattern(pattern: str, flags: int, where: str) -> regex.Pattern[str]:
    """``pattern`` compiled, or ``ScenarioError`` (one line naming ``where``) when it is invalid
    or too large to compile safely."""
    import regex

    try:
        compiled_size(pattern)
        return regex.compile(pattern, flags)
    except (regex.error, PatternTooLarge, OverflowError, RecursionError, MemoryError) as exc:
        shown = pattern if len(pattern) <= 60 else pattern[:57] + "..."
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ScenarioError(
            f"{where}.pattern: bad regular expression {shown!r}: {reason}"
        ) from None
