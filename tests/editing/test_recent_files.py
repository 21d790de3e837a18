"""File › Open recent's list without Qt: newest first, once each, capped, demos left out, files
gone since dropped when read back."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.editing.recent_files import RECENT_LIMIT, still_there, with_opened


def _files(tmp_path: Path, count: int) -> list[str]:
    paths = []
    for n in range(count):
        path = tmp_path / f"s{n}.toml"
        path.write_text("")
        paths.append(str(path))
    return paths


def test_the_newest_comes_first_once_and_the_oldest_fall_off(tmp_path: Path) -> None:
    files = _files(tmp_path, RECENT_LIMIT + 2)
    recent: list[str] = []
    for path in files:
        recent = with_opened(recent, path)
    assert recent == list(reversed(files))[:RECENT_LIMIT]
    assert with_opened(recent, files[5]) == [files[5], *(r for r in recent if r != files[5])]
    assert with_opened(recent, "demo:retry-feedback") == recent


def test_a_relative_path_is_kept_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.toml").write_text("")
    monkeypatch.chdir(tmp_path)
    assert with_opened([], "a.toml") == [str(tmp_path / "a.toml")]


def test_reading_back_drops_files_gone_and_anything_damaged(tmp_path: Path) -> None:
    kept = _files(tmp_path, 2)
    gone = str(tmp_path / "gone.toml")
    checked = still_there([kept[0], gone, 3, "", "demo:step-cap", kept[0], kept[1]])
    assert checked.kept == kept
    assert checked.missing == [gone]
