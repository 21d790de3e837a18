"""Writing a user's file all or nothing: a failed write never leaves half a file (or a stray
temporary) where the user expects theirs, and an existing file keeps its permissions.

``write_output`` is how a command writes the file a user named (``--out FILE``,
``--screenshot PNG``): a path that cannot take a file (no such folder, a folder, no
permission) is bad input, said in one line before any work is done; a write that fails for
another reason (a full disk) is an error. Either way nothing is left half-written."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

from inspector.core.errors import BadInputError, InspectorError

__all__ = ["check_output_path", "output_path_problem", "write_atomically", "write_output"]

# A write failing with one of these failed because of the path the user gave, not the machine.
_PATH_ERRNOS = frozenset(
    {
        errno.ENOENT,
        errno.ENOTDIR,
        errno.EISDIR,
        errno.EACCES,
        errno.EPERM,
        errno.EROFS,
        errno.ENAMETOOLONG,
        errno.ELOOP,
    }
)


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


def output_path_problem(path: Path) -> str | None:
    """Why no file can be written at ``path`` ("no folder /x", "is a folder", ...), or None
    when, as far as can be told before writing, one can."""
    try:
        target = Path(os.path.realpath(path))
        if target.is_dir():
            return "is a folder"
        folder = target.parent
        if not folder.exists():
            return f"no folder {folder}"
        if not folder.is_dir():
            return f"{folder} is not a folder"
        if not os.access(folder, os.W_OK | os.X_OK):
            return f"permission denied (cannot create a file in {folder})"
    except (OSError, ValueError) as exc:  # a name too long, a NUL byte
        return getattr(exc, "strerror", None) or str(exc)
    return None


def check_output_path(path: Path, option: str) -> None:
    """``BadInputError`` naming ``option`` (``export --out``), the path and why, when no file
    can be written there: checked before the work that makes the file."""
    problem = output_path_problem(path)
    if problem is not None:
        raise BadInputError(f"{option} {path}: cannot write: {problem}")


def write_output(path: Path, chunks: Iterable[bytes], option: str) -> None:
    """``write_atomically`` for the file a user named with ``option``: a path that cannot take
    a file is ``BadInputError``, another failure (a full disk) ``InspectorError``; the one-line
    message names the option, the path and why. Nothing is left half-written either way."""
    check_output_path(path, option)
    try:
        write_atomically(path, chunks)
    except OSError as exc:
        message = f"{option} {path}: cannot write: {exc.strerror or exc}"
        if exc.errno in _PATH_ERRNOS:
            raise BadInputError(message) from None
        raise InspectorError(message) from None
