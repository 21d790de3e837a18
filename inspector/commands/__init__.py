"""One module per ``agent-inspector`` subcommand (DESIGN §5).

Each module defines ``NAME``, ``HELP``, ``add_arguments(parser)`` and ``main(args, out) -> int``
and imports heavy things (the engine, the store, Qt) inside ``main``, so ``--help`` stays fast and
no subcommand pays for another's imports.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TextIO

from inspector.core.errors import BadInputError

if TYPE_CHECKING:
    from inspector.store import Store

# The order is the order of ``agent-inspector --help``.
COMMAND_MODULES = (
    "gui",
    "run",
    "replay",
    "revalidate",
    "compare",
    "runs",
    "export",
    "sweep",
    "sweeps",
    "import_runs",
    "scenario_from",
    "demos",
    "local_model",
    "proxy",
)


class Command(Protocol):
    NAME: str
    HELP: str

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def main(self, args: argparse.Namespace, out: TextIO) -> int: ...


def add_db_argument(parser: argparse.ArgumentParser) -> None:
    """``--db PATH``: the recording store (default: the user data dir; AGENT_INSPECTOR_DB)."""
    parser.add_argument(
        "--db",
        metavar="PATH",
        help="the recording store (default: AGENT_INSPECTOR_DB, else the user data dir)",
    )


class NoStoreYet(BadInputError):
    """The default store (no ``--db``, no ``AGENT_INSPECTOR_DB``) does not exist yet: nothing
    has been recorded on this machine. ``runs`` and ``sweeps`` list nothing; reading a run
    from it is bad input."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"no store at {path} yet (the default store: nothing recorded there)")
        self.path = path


def open_recorded_store(db: str | None, *, read_only_fallback: bool = False) -> Store:
    """The store a command reads recorded runs from. It must exist: nothing is created just to
    be read. A path given by ``--db`` or AGENT_INSPECTOR_DB with no file there is bad input
    (``no store at PATH (--db)``); the default store not there yet is ``NoStoreYet``."""
    from inspector.locations import db_path_named_by
    from inspector.store import Store, StoreMissing

    try:
        return Store.open(db, read_only_fallback=read_only_fallback, create=False)
    except StoreMissing as exc:
        named_by = db_path_named_by(db)
        if named_by is None:
            raise NoStoreYet(exc.path) from None
        raise BadInputError(f"no store at {exc.path} ({named_by})") from None


def open_store_for_reading(db: str | None) -> Store:
    """The store for a command that only reads (``open_recorded_store``): when the store cannot
    be written (a full disk) it still opens, read-only, and one line on stderr says so."""
    store = open_recorded_store(db, read_only_fallback=True)
    if store.read_only is not None:
        print(
            f"agent-inspector: note: {store.path}: opened read-only: {store.read_only}",
            file=sys.stderr,
        )
    return store


def add_set_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="SECTION.KEY=VALUE",
        help="override a scenario field; VALUE is read as TOML, else as a string (a broken "
        "{...} or [...] is an error: quote text that starts with a bracket)",
    )
