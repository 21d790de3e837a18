"""A validator's regular expression is bounded before it is compiled: counted repeats that would
expand past the limit (``x{99999999}``: 23.6 GB, 84 s) are one line, not a frozen process."""

from __future__ import annotations

from pathlib import Path

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.errors import ScenarioError
from inspector.core.regex_limits import (
    MAX_COMPILED_SIZE,
    MAX_DEPTH,
    PatternTooLarge,
    compile_pattern,
    compiled_size,
)
from inspector.core.validators import compile_validators
from tests.core.test_values_rule import load


@pytest.mark.parametrize(
    ("pattern", "size"),
    [
        ("[*_#`]", 1),
        (r"\d{3}-\d{4}", 8),
        (r"\p{Han}{3}", 3),  # the braces of \p{...} are not a repeat
        ("[{]{2}", 2),  # nor a brace inside a class
        ("(?:ab|cd){10}", 10 * 5),  # alternatives add up (and ":"): an estimate that errs high
        ("x{2,50}", 50),
        ("x{,5}", 5),
        ("x{3,}", 3),
        ("(?:foo){e<=1}", 10),  # a fuzzy constraint is not a repeat
    ],
)
def test_the_estimate_counts_counted_repeats_only(pattern: str, size: int) -> None:
    assert compiled_size(pattern) == size
    regex.compile(pattern)  # and each is a pattern the engine takes


@pytest.mark.parametrize(
    "pattern",
    ["x{99999999}", "(x{1000}){1000}", "((a{300}){300}){300}", f"[a-z]{{{MAX_COMPILED_SIZE + 1}}}"],
)
def test_repeats_past_the_limit_are_one_line(pattern: str) -> None:
    with pytest.raises(PatternTooLarge):
        compiled_size(pattern)
    sc = load({"validators": [{"kind": "regex_absent", "pattern": pattern}]})
    with pytest.raises(ScenarioError) as info:
        compile_validators(sc.validators, Path("."), source="v.toml")
    message = str(info.value)
    assert message.startswith("v.toml: validators[0].pattern: bad regular expression ")
    assert "when compiled" in message and "\n" not in message and len(message) < 300


def test_deep_nesting_is_refused_before_the_engine_recurses() -> None:
    pattern = "(" * (MAX_DEPTH + 1) + "a" + ")" * (MAX_DEPTH + 1)
    with pytest.raises(ScenarioError, match=f"nested more than {MAX_DEPTH} deep"):
        compile_pattern(pattern, 0, "v.toml: validators[0]")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab()[]{}|*+?\\,0123456789^$.-:ep<=", max_size=40))
def test_any_pattern_compiles_or_is_one_line(pattern: str) -> None:
    try:
        compiled = compile_pattern(pattern, 0, "v.toml: validators[0]")
    except ScenarioError as exc:
        assert "\n" not in str(exc)
    else:
        assert compiled.pattern == pattern


def test_the_ignore_case_flag_is_the_engines() -> None:
    """Kept as a number so that validators import the regex engine only to compile a pattern."""
    import regex

    from inspector.core.regex_limits import IGNORECASE

    assert IGNORECASE == regex.IGNORECASE
