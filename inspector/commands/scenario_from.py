"""``agent-inspector scenario-from RUN_ID --out FILE``: a recorded run (native, proxied or
imported) as a scenario file that replays it offline on the scripted model."""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from inspector.commands import add_db_argument, open_store_for_reading

NAME = "scenario-from"
HELP = "save a recorded run as a scenario file that replays it offline"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_id", metavar="RUN_ID", help="a recorded run (a unique prefix works)")
    parser.add_argument("--out", metavar="FILE", required=True, help="the scenario file to write")
    parser.add_argument(
        "--side-effects",
        dest="side_effects",
        action="append",
        default=[],
        metavar="TOOL",
        help="mark this tool side_effects = true (a replay uses the recorded result); repeatable",
    )
    add_db_argument(parser)


def main(args: argparse.Namespace, out: TextIO) -> int:
    from pathlib import Path

    import tomlkit

    from inspector.core.errors import ScenarioError
    from inspector.core.files import check_output_path, write_output
    from inspector.formats.scenario_from import scenario_file_data, scenario_of_record

    with open_store_for_reading(args.db) as store:
        record = store.load(args.run_id)
    path = Path(args.out)
    check_output_path(path, "scenario-from --out")  # before the scenario is made
    try:
        data = scenario_file_data(record, args.side_effects)
        scenario_of_record(record, args.side_effects)  # what `run` will check, checked now
    except ValueError as exc:
        raise ScenarioError(f"scenario-from: {exc}") from None
    text = tomlkit.dumps(data)
    write_output(path, [text.encode("utf-8")], "scenario-from --out")
    steps = len(data["script"])
    print(f"saved run {record.run_id} as {path} ({steps} scripted replies)", file=sys.stderr)
    return 0
