"""``agent-inspector sweeps``: list stored sweeps, newest first."""

from __future__ import annotations

import argparse
from typing import TextIO

from inspector.commands import NoStoreYet, add_db_argument, open_store_for_reading

NAME = "sweeps"
HELP = "list stored sweeps, newest first"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_db_argument(parser)
    parser.add_argument("--json", action="store_true", help="print the sweeps as a JSON list")


def main(args: argparse.Namespace, out: TextIO) -> int:
    try:
        with open_store_for_reading(args.db) as store:
            sweeps, path = store.sweeps(), store.path
    except NoStoreYet as exc:  # a fresh machine: nothing recorded, and nothing created to say so
        sweeps, path = [], exc.path
    if args.json:
        from inspector.reports.record_json import write_json

        write_json([s.model_dump(mode="json") for s in sweeps], out)
        return 0
    if not sweeps:
        out.write(f"no sweep recorded yet in {path}\n")
        return 0
    rows = [["sweep_id", "scenario", "created_at", "arms", "repeat", "finished runs"]]
    for s in sweeps:
        arms, repeat = len(s.spec.get("arms", [])), int(s.spec.get("repeat", 0))
        rows.append(
            [
                s.sweep_id,
                s.scenario,
                s.created_at,
                str(arms),
                str(repeat),
                f"{s.finished}/{arms * repeat}",
            ]
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        out.write("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() + "\n")
    return 0
