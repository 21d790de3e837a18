"""Writing a user's file all or nothing: a failed write never leaves half a file (or a stray
temporary) where the user expects theirs, and an existing file keeps its permissions."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

__all__ = ["write_atomically"]


def _new_file_mode() -> int:
    """What ``open()`` would give a new file here (0o666 less the umask)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_atomically(path: Path, chunks: Iterable[bytes]) -> None:
    """Writes ``chunks`` to a temporary file beside ``path`` (its real file, through a
    symlink), then renames it over ``path``. ``OSError`` when it cannot; nothing is left."""
    target = Path(os.path.realpath(path))
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.writelines(chunks)
            out.flush()
            os.fsync(out.fileno())
        try:
            mode = stat.S_IMODE(target.stat().st_mode)
        except FileNotFoundError:
            mode = _new_file_mode()
        os.chmod(temp, mode)
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
