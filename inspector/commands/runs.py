"""``agent-inspector runs``: list recorded runs."""

from __future__ import annotations

import argparse
from typing import TextIO

from inspector.core.errors import InspectorError

NAME = "runs"
HELP = "list recorded runs"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def main(args: argparse.Namespace, out: TextIO) -> int:
    raise InspectorError("runs: not available in this build yet")
