"""The ``agent-inspector`` command (DESIGN §5).

Exit codes: 0 succeeded/fallback, 1 failed/error/cancelled, 2 bad input (one line, no traceback).
PySide6 is never imported here at module level, so ``run --json`` works with no display.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Sequence
from typing import TextIO

from inspector import __version__
from inspector.core.errors import InspectorError, ScenarioError
from inspector.core.events import Event, RunFinished
from inspector.core.records import RunRecord
from inspector.timeline import TimelinePrinter

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="agent-inspector",
        description="A debugger for LLM agent turns: run a turn, see every step and verdict.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    run = sub.add_parser("run", help="run one turn, record it, print the timeline or the record")
    run.add_argument("scenario", metavar="SCENARIO", help="a scenario .toml file or demo:NAME")
    run.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="SECTION.KEY=VALUE",
        help="override a scenario field; VALUE is read as TOML, else as a string",
    )
    run.add_argument("--db", metavar="PATH", help="the recording store (used once the store lands)")
    run.add_argument("--json", action="store_true", help="print the run record as JSON")
    sub.add_parser("demos", help="list the built-in demo scenarios")
    return parser


def _run(args: argparse.Namespace, out: TextIO) -> int:
    from inspector.core.loop import Turn
    from inspector.providers.factory import build_provider
    from inspector.resources import resolve_scenario

    scenario = resolve_scenario(args.scenario, args.overrides)
    provider = build_provider(scenario)
    finished: list[RunRecord] = []
    printer = None if args.json else TimelinePrinter(out)

    def sink(event: Event) -> None:
        if isinstance(event, RunFinished):
            finished.append(event.record)
        if printer is not None:
            printer(event)

    turn = Turn(scenario, provider, sink, overrides=args.overrides)
    try:
        record = asyncio.run(turn.run())
    except KeyboardInterrupt:
        # The turn handled the cancellation and published its record before asyncio re-raised.
        if not finished:
            raise
        record = finished[-1]
    if args.json:
        json.dump(record.model_dump(mode="json"), out, indent=2, ensure_ascii=False)
        out.write("\n")
    return EXIT_OK if record.status in ("succeeded", "fallback") else EXIT_FAILED


def _demos(out: TextIO) -> int:
    import tomllib

    from inspector.resources import demo_names, demo_path

    for name in demo_names():
        data = tomllib.loads(demo_path(name).read_text(encoding="utf-8"))
        out.write(f"demo:{name:<26} {data.get('description', '')}\n")
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="replace")
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "run":
            return _run(args, sys.stdout)
        if args.command == "demos":
            return _demos(sys.stdout)
    except BrokenPipeError:
        # The reader went away (`| head`): not an error of ours; keep Python from complaining
        # again when it flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FAILED
    except KeyboardInterrupt:
        print("agent-inspector: interrupted", file=sys.stderr)
        return EXIT_FAILED
    except ScenarioError as exc:
        print(f"agent-inspector: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except InspectorError as exc:
        print(f"agent-inspector: error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    parser.print_help()
    return EXIT_BAD_INPUT
