"""The ``agent-inspector`` command (DESIGN §5); each subcommand lives in ``inspector.commands``.

Exit codes: 0 succeeded/fallback, 1 failed/error/cancelled, 2 bad input (one line, no traceback).
PySide6 is never imported here at module level, so ``run --json`` works with no display.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import TextIO, cast

from inspector import __version__
from inspector.commands import COMMAND_MODULES, Command
from inspector.core.errors import BadInputError, InspectorError, one_line

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2
DEFAULT_COMMAND = "gui"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def _commands() -> dict[str, Command]:
    modules = (importlib.import_module(f"inspector.commands.{m}") for m in COMMAND_MODULES)
    return {m.NAME: cast(Command, m) for m in modules}


def _parser(commands: dict[str, Command], chosen: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; only the ``chosen`` command's options are added (the others
    are listed by name and help line: ``--help`` builds no option it does not show)."""
    parser = _Parser(
        prog="agent-inspector",
        description="A debugger for LLM agent turns: run a turn, see every step and verdict. "
        "With no command, opens the window.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, command in commands.items():
        command_parser = sub.add_parser(name, help=command.HELP)
        if name == chosen:
            command.add_arguments(command_parser)
    return parser


def _with_default_command(argv: list[str], names: set[str]) -> list[str]:
    """``agent-inspector [SCENARIO] [--db ...]`` means ``agent-inspector gui ...``."""
    if argv and (argv[0] in names or argv[0] in ("-h", "--help", "--version")):
        return argv
    return [DEFAULT_COMMAND, *argv]


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="replace")
    commands = _commands()
    words = _with_default_command(list(sys.argv[1:] if argv is None else argv), set(commands))
    args = _parser(commands, words[0] if words else None).parse_args(words)
    try:
        return commands[args.command].main(args, out or sys.stdout)
    except BrokenPipeError:
        # The reader went away (`| head`): not an error of ours; keep Python from complaining
        # again when it flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FAILED
    except KeyboardInterrupt:
        print("agent-inspector: interrupted", file=sys.stderr)
        return EXIT_FAILED
    except BadInputError as exc:
        print(f"agent-inspector: error: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except InspectorError as exc:
        print(f"agent-inspector: error: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_FAILED
