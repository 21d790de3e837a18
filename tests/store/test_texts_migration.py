"""A store written by schema version 6 (every large text inline) migrates in place, and every
output — the ``--json`` record, the event log, ``export`` in each format, ``compare`` and
``revalidate`` — stays byte for byte what version 6 printed (``fixtures/make_v6_store.py``)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from inspector.store.schema import SCHEMA_VERSION, current_version
from tests.store.fixtures.make_v6_store import EXPECTED, STORE, outputs


@pytest.fixture
def migrated(tmp_path: Path) -> Path:
    path = tmp_path / "runs.sqlite3"
    shutil.copyfile(STORE, path)
    return path


def run_ids() -> list[str]:
    return (EXPECTED / "runs.txt").read_text(encoding="utf-8").split()


def _otel(printed: str) -> tuple[str, object]:
    """The exit line and the OTLP document: the export's text layout changed after version 6
    (one compact span per line, docs/formats.md), its content did not."""
    exit_line, document = printed.split("\n", 1)
    return exit_line, json.loads(document)


def test_every_output_of_a_migrated_v6_store_is_unchanged(migrated: Path) -> None:
    got = outputs(migrated, run_ids())
    expected = {p.name: p.read_text(encoding="utf-8") for p in EXPECTED.iterdir()}
    expected.pop("runs.txt")
    assert sorted(got) == sorted(expected)
    for name, text in expected.items():
        if name.endswith(".export.otel"):  # since written span by span: same JSON, new layout
            assert _otel(got[name]) == _otel(text), f"{name} differs after the migration"
            continue
        assert got[name] == text, f"{name} differs after the migration"
    conn = sqlite3.connect(migrated)
    assert current_version(conn) == SCHEMA_VERSION
