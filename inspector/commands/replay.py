"""``agent-inspector replay RUN_ID``: re-run a recorded turn, under another policy if --set says so.

Model answers come from the recording wherever the request is identical to a recorded one; the
rest is asked live (the scenario's provider), or with ``--offline`` the run stops at the first
divergence with status ``error`` saying which step diverged and why. Side-effect tools are never
run again. The replay is a new run, recorded with ``replay_of`` set.
"""

from __future__ import annotations

import argparse
from typing import TextIO

from inspector.commands import add_db_argument, add_set_argument, open_recorded_store

NAME = "replay"
HELP = "re-run a recorded turn, under another policy if --set says so"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_id", metavar="RUN_ID", help="the recorded run (a unique prefix works)")
    add_set_argument(parser)
    parser.add_argument(
        "--offline",
        action="store_true",
        help="never call the model: stop at the first request the recording cannot answer",
    )
    add_db_argument(parser)
    parser.add_argument("--json", action="store_true", help="print the new run record as JSON")


def main(args: argparse.Namespace, out: TextIO) -> int:
    from inspector.commands.run import drive, exit_code, print_record, stored_record, terminal_sink
    from inspector.core.events import fan_out
    from inspector.core.records import RunRecord
    from inspector.providers.replay import ReplayProvider
    from inspector.workflows.turns import replay

    # The replay is recorded beside its original: a store that must already be there.
    with open_recorded_store(args.db) as store:
        original = store.load(args.run_id)
        finished: list[RunRecord] = []
        recorder = store.recorder()
        sink = fan_out(recorder, terminal_sink(out, as_json=args.json, finished=finished))
        turn = replay(original, args.overrides, sink, offline=args.offline)
        record = stored_record(store, recorder, drive(turn, finished))
    if args.json:
        print_record(record, out)
    else:
        provider = turn.provider
        assert isinstance(provider, ReplayProvider)
        out.write(provider.summary() + "\n")
    return exit_code(record)
