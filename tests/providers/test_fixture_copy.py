"""The in-repository wire fixtures are the shared recordings, byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.providers.fixture_paths import SHARED_WIRE, WIRE, wire_folder


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_every_provider_folder_is_there() -> None:
    for name in ("openai-chat", "openai-compatible-local", "anthropic-messages"):
        assert any(wire_folder(name).iterdir())


def test_the_copy_equals_the_shared_originals() -> None:
    if not SHARED_WIRE.is_dir():
        pytest.skip("shared/fixtures/wire is not next to this checkout")
    assert _files(WIRE) == _files(SHARED_WIRE)
