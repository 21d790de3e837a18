"""write_atomically: all or nothing, permissions kept, symlinks followed, nothing left behind."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from inspector.core.files import write_atomically


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_file_gets_the_mode_open_would_give(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    try:
        write_atomically(tmp_path / "new.toml", [b"a = 1\n"])
    finally:
        os.umask(umask)
    assert (tmp_path / "new.toml").read_bytes() == b"a = 1\n"
    assert mode(tmp_path / "new.toml") == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.toml"]


def test_an_existing_file_keeps_its_mode_and_a_symlink_its_target(tmp_path: Path) -> None:
    real = tmp_path / "real.py"
    real.write_text("old", encoding="utf-8")
    real.chmod(0o750)
    link = tmp_path / "link.py"
    link.symlink_to(real)
    write_atomically(link, [b"new ", b"text"])
    assert link.is_symlink() and real.read_bytes() == b"new text"
    assert mode(real) == 0o750


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "keep.txt"
    target.write_text("old", encoding="utf-8")

    def chunks() -> Iterator[bytes]:
        yield b"half"
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        write_atomically(target, chunks())
    assert target.read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


def test_a_missing_folder_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        write_atomically(tmp_path / "nope" / "x.txt", [b"x"])
