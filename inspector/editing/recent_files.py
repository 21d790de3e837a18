"""File › Open recent, without Qt: the last scenario files opened, newest first, at most
``RECENT_LIMIT``, each once. Built-in demos are not listed (the Scenarios list always has them);
a file that has gone since is dropped when the list is read back, and the caller says so."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from inspector.resources import DEMO_PREFIX

RECENT_LIMIT = 8


def _key(ref: str) -> str:
    return str(Path(ref).expanduser().resolve())


def with_opened(recent: Sequence[str], ref: str, limit: int = RECENT_LIMIT) -> list[str]:
    """``recent`` after opening ``ref``: it comes first (once), the oldest beyond ``limit``
    fall off. A demo (``demo:NAME``) or an empty ref leaves the list as it was."""
    if not ref or ref.startswith(DEMO_PREFIX):
        return list(recent)
    opened = _key(ref)
    return [opened, *(r for r in recent if r != opened)][:limit]


@dataclass(frozen=True)
class Checked:
    """The recent files read back: those still there, and those gone since."""

    kept: list[str]
    missing: list[str]


def still_there(recent: Iterable[object], limit: int = RECENT_LIMIT) -> Checked:
    """Reads back a saved list (anything not a non-empty string is ignored: a damaged file)."""
    kept: list[str] = []
    missing: list[str] = []
    for ref in recent:
        if not isinstance(ref, str) or not ref or ref.startswith(DEMO_PREFIX) or ref in kept:
            continue
        (kept if Path(ref).is_file() else missing).append(ref)
    return Checked(kept[:limit], missing)
