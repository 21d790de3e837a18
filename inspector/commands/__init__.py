"""One module per ``agent-inspector`` subcommand (DESIGN §5).

Each module defines ``NAME``, ``HELP``, ``add_arguments(parser)`` and ``main(args, out) -> int``
and imports heavy things (the engine, the store, Qt) inside ``main``, so ``--help`` stays fast and
no subcommand pays for another's imports.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Protocol, TextIO

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


def open_store_for_reading(db: str | None) -> Store:
    """The store for a command that only reads: when the store cannot be written (a full disk)
    it still opens, read-only, and one line on stderr says so."""
    from inspector.store import Store

    store = Store.open(db, read_only_fallback=True)
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
        help="override a scenario field; VALUE is read as TOML, else as a string",
    )
