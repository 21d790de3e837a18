"""``agent-inspector [gui] [SCENARIO]``: open the inspector window (the default command)."""

from __future__ import annotations

import argparse
from typing import TextIO

from inspector.commands import add_db_argument

NAME = "gui"
HELP = "open the inspector window (the default command)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "scenario",
        metavar="SCENARIO",
        nargs="?",
        help="a scenario .toml file or demo:NAME to run when the window opens",
    )
    add_db_argument(parser)
    headless = parser.add_mutually_exclusive_group()
    headless.add_argument(
        "--screenshot",
        metavar="PNG",
        help="run SCENARIO (if given), render the window at 1400×900 to PNG and exit",
    )
    headless.add_argument(
        "--self-test",
        action="store_true",
        help="open the window, run demo:retry-feedback, exit 0 if all went well",
    )


def main(args: argparse.Namespace, out: TextIO) -> int:
    from inspector.app.app import run_gui  # Qt is loaded only when the window is wanted

    return run_gui(args.scenario, args.db, screenshot=args.screenshot, self_test=args.self_test)
