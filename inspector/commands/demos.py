"""``agent-inspector demos``: the built-in offline demo scenarios."""

from __future__ import annotations

import argparse
from typing import TextIO

NAME = "demos"
HELP = "list the built-in demo scenarios"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def main(args: argparse.Namespace, out: TextIO) -> int:
    import tomllib

    from inspector.resources import demo_names, demo_path

    for name in demo_names():
        data = tomllib.loads(demo_path(name).read_text(encoding="utf-8"))
        out.write(f"demo:{name:<26} {data.get('description', '')}\n")
    return 0
