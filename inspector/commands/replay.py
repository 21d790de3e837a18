"""``agent-inspector replay RUN_ID``: re-run a recorded turn, under another policy if --set says so.

Model answers come from the recording wherever the request is identical to a recorded one; the
rest is asked live (the scenario's provider), or with ``--offline`` the run stops at the first
divergence with status ``error`` saying which step diverged and why. Side-effect tools are never
run again. The replay is a new run, recorded with ``replay_of`` set.
"""

from __future__ import annotations

import argparse
from typing import TextIO

from inspector.commands import add_db_argument, add_set_argument

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


def _steps(positions: list[int]) -> str:
    """``[1, 2, 3, 5]`` → ``"steps 1-3, 5"``; ``[4]`` → ``"step 4"``."""
    spans: list[list[int]] = []
    for p in positions:
        if spans and spans[-1][1] == p - 1:
            spans[-1][1] = p
        else:
            spans.append([p, p])
    text = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)
    return f"{'step' if len(positions) == 1 else 'steps'} {text}"


def summary_line(original: str, replayed: list[int], live: list[int], offline: bool) -> str:
    """What came from where: ``replay of abc: steps 1-3 from the recording, step 4 live``."""
    parts = []
    if replayed:
        parts.append(f"{_steps(replayed)} from the recording")
    if live:
        parts.append(f"{_steps(live)} live")
    mode = " (offline)" if offline else ""
    return f"replay of {original}{mode}: {', '.join(parts) or 'no step answered'}"


def main(args: argparse.Namespace, out: TextIO) -> int:
    from inspector.commands.run import drive, exit_code, print_record, stored_record, terminal_sink
    from inspector.core.events import fan_out
    from inspector.core.records import RunRecord
    from inspector.providers.factory import build_provider
    from inspector.providers.replay import ReplayProvider, replay_turn
    from inspector.store import Store

    with Store.open(args.db) as store:
        original = store.load(args.run_id)
        finished: list[RunRecord] = []
        recorder = store.recorder()
        sink = fan_out(recorder, terminal_sink(out, as_json=args.json, finished=finished))
        turn = replay_turn(
            original,
            overrides=args.overrides,
            live=None if args.offline else build_provider,
            sink=sink,
        )
        record = stored_record(store, recorder, drive(turn, finished))
    if args.json:
        print_record(record, out)
    else:
        provider = turn.provider
        assert isinstance(provider, ReplayProvider)
        line = summary_line(original.run_id, provider.replayed, provider.live_calls, args.offline)
        out.write(line + "\n")
    return exit_code(record)
