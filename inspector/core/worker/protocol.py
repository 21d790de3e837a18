"""What crosses between the app and a user-code worker: plain, picklable records (no pydantic,
so a worker starts without importing it; no ``slots``, whose pickling walks the fields in
Python and cost a third of a call)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Captured stdout/stderr kept per call; the rest is counted, not kept (a validator printing
# 100 MB must not fill the record or the store).
CAPTURE_LIMIT = 16_000


class _Record:
    """Pickled as its class and its field values, in order (a frozen dataclass's ``__dict__``
    holds them in that order), not as a dict of field names and values: about half the
    pickling work of each message, two messages each way per call."""

    __slots__ = ()

    def __reduce__(self) -> tuple[type, tuple[Any, ...]]:
        return (type(self), tuple(self.__dict__.values()))


@dataclass(frozen=True)
class Target(_Record):
    """A user function ``"file.py:name"``, relative to ``base_dir``; ``what`` names it in errors
    (``"sms.toml: validators[1].function"``)."""

    ref: str
    base_dir: str
    what: str


@dataclass(frozen=True)
class Call(_Record):
    target: Target
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    generation: int = 0  # bumped by ``forget``: the worker then reloads every user file


@dataclass(frozen=True)
class Batch(_Record):
    """Many calls of one target, answered with one ``Reply`` each as each ends (the worker does
    not wait for the app between them): re-validating thousands of outputs costs a few round
    trips, not one per output. The worker stops after a reply that retires it."""

    target: Target
    calls: tuple[tuple[tuple[Any, ...], dict[str, Any]], ...]
    generation: int = 0


@dataclass(frozen=True)
class Check(_Record):
    """Load each target (import its file, find the function) without calling it."""

    targets: tuple[Target, ...]
    generation: int = 0


@dataclass(frozen=True)
class Names(_Record):
    """The names of the callables a python file defines (loading it)."""

    path: str
    generation: int = 0


@dataclass(frozen=True)
class Ping(_Record):
    """Answer at once with an empty ``Reply``: wakes an idle worker (``pool.wake``)."""


Request = Call | Batch | Check | Names | Ping


@dataclass(frozen=True)
class Reply(_Record):
    """How a request ended. ``error`` is None on success; ``load_failed``: the file or the
    function could not be loaded (bad input rather than a failing call); ``file``/``line``:
    where in the user's file it raised, when known; ``retire``: the worker must not be reused
    (SystemExit, MemoryError, threads left running); ``ended``: the call never returned (it
    timed out, or its worker died) and its worker was killed."""

    value: Any = None
    error: str | None = None
    load_failed: bool = False
    file: str | None = None
    line: int | None = None
    captured: str = ""
    stopped: bool = False
    retire: bool = False
    ended: bool = False
