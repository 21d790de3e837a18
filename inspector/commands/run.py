"""``agent-inspector run SCENARIO``: one turn, recorded, with a live timeline or the record."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, TextIO

from inspector.commands import add_db_argument, add_set_argument

if TYPE_CHECKING:  # the engine is imported when a turn runs: --help stays fast
    from inspector.core.events import Event, EventSink
    from inspector.core.loop import Turn
    from inspector.core.records import RunRecord
    from inspector.store import Recorder, Store

NAME = "run"
HELP = "run one turn, record it, print the timeline or the record"
EXIT_OK, EXIT_FAILED = 0, 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scenario", metavar="SCENARIO", help="a scenario .toml file or demo:NAME")
    add_set_argument(parser)
    add_db_argument(parser)
    parser.add_argument("--json", action="store_true", help="print the run record as JSON")


def exit_code(record: RunRecord) -> int:
    return EXIT_OK if record.status in ("succeeded", "fallback") else EXIT_FAILED


async def _run_and_close(turn: Turn) -> RunRecord:
    from inspector.core.provider import close_provider

    try:
        return await turn.run()
    finally:
        await close_provider(turn.provider)


def drive(turn: Turn, finished: list[RunRecord]) -> RunRecord:
    """Runs the turn to its end; Ctrl+C ends it as a cancelled record (already published)."""
    from inspector.core.asyncrun import run_small

    try:
        return run_small(_run_and_close(turn))
    except KeyboardInterrupt:
        # The turn handled the cancellation and published its record before asyncio re-raised.
        if not finished:
            raise
        return finished[-1]


def print_record(record: RunRecord, out: TextIO) -> None:
    from inspector.reports.record_json import write_record_json

    write_record_json(record, out)


def terminal_sink(out: TextIO, *, as_json: bool, finished: list[RunRecord]) -> EventSink:
    """Collects the final record; prints the live timeline unless the record is printed as JSON."""
    from inspector.core.events import RunFinished
    from inspector.timeline import TimelinePrinter

    printer = None if as_json else TimelinePrinter(out)

    def sink(event: Event) -> None:
        if isinstance(event, RunFinished):
            finished.append(event.record)
        if printer is not None:
            printer(event)

    return sink


def stored_record(
    store: Store, recorder: Recorder, record: RunRecord, *, read_back: bool = True
) -> RunRecord:
    """The record as the store rebuilds it (what every later command sees), or with
    ``read_back=False`` (nothing prints the record: the timeline was printed live) the one in
    memory, not read again (a read of every step, ~0.04 ms per step). When recording failed
    part-way (the engine reported it and detached the recorder), the finished record is written
    now; if even that fails, the one in memory is shown and the error said."""
    from inspector.store import StoreError
    from inspector.workflows.turns import settle

    try:
        settle(store, recorder, record)
    except StoreError as exc:
        print(f"agent-inspector: {exc}", file=sys.stderr)
        return record
    return store.load(record.run_id) if read_back else record


def main(args: argparse.Namespace, out: TextIO) -> int:
    from inspector.workflows.turns import plan_turn

    plan = plan_turn(args.scenario, args.overrides)  # first: it may start a worker (user code)
    from inspector.core.events import fan_out
    from inspector.store import Store

    with Store.open(args.db) as store:
        finished: list[RunRecord] = []
        recorder = store.recorder()
        sink = fan_out(recorder, terminal_sink(out, as_json=args.json, finished=finished))
        turn = plan.turn(sink)
        record = stored_record(store, recorder, drive(turn, finished), read_back=args.json)
    if args.json:
        print_record(record, out)
    return exit_code(record)
