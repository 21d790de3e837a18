"""Fuzzing the importers: a valid file with any one part replaced (by other JSON, or cut off)
imports, or fails with one ``ImportFileError`` line naming the file — never another exception,
and never a record that cannot be stored."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.core.records import RunRecord
from inspector.formats.importing import ImportFileError, import_file
from tests.formats.conftest import FIXTURES

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)
_ids = itertools.count()


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*prefix, i))
    return out


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, *rest = path
    copy: Any = dict(value) if isinstance(value, dict) else list(value)
    copy[head] = _replace(value[head], tuple(rest), new)
    return copy


def _check(path: Path, fmt: str) -> None:
    try:
        records = import_file(path, fmt, lambda: f"run{next(_ids)}")  # type: ignore[arg-type]
    except ImportFileError as exc:
        text = str(exc)
        assert text.startswith(f"{path}: ") and "\n" not in text
        return
    for record in records:  # what the store will be handed: a valid record
        RunRecord.model_validate(record.model_dump())


@pytest.mark.parametrize(
    ("fixture", "fmt"),
    [
        ("pydantic_ai_trace.otlp.json", "otel"),
        ("pydantic_ai_history.json", "pydantic-ai"),
        ("openllmetry_flattened.otlp.json", "otel"),
    ],
)
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_a_json_file_with_one_part_replaced(
    tmp_path: Path, fixture: str, fmt: str, data: st.DataObject
) -> None:
    document = json.loads((FIXTURES / fixture).read_text())
    where = data.draw(st.sampled_from(_paths(document)))
    mutated = _replace(document, where, data.draw(JSON))
    path = tmp_path / fixture
    path.write_text(json.dumps(mutated))
    _check(path, fmt)
    _check(path, "auto")


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_a_log_with_one_line_replaced_or_cut(tmp_path: Path, data: st.DataObject) -> None:
    lines = (FIXTURES / "openai_proxy_log.jsonl").read_text().splitlines()
    index = data.draw(st.integers(0, len(lines) - 1))
    entry = json.loads(lines[index])
    where = data.draw(st.sampled_from(_paths(entry)))
    lines[index] = json.dumps(_replace(entry, where, data.draw(JSON)))
    if data.draw(st.booleans()):
        lines[index] = lines[index][: data.draw(st.integers(0, len(lines[index])))]
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(lines))
    _check(path, "openai-jsonl")
