"""``agent-inspector compare``: side-by-side table of runs of one turn."""

from __future__ import annotations

import argparse
from typing import TextIO

from inspector.core.errors import InspectorError

NAME = "compare"
HELP = "side-by-side table of runs of one turn"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def main(args: argparse.Namespace, out: TextIO) -> int:
    raise InspectorError("compare: not available in this build yet")
