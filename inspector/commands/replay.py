"""``agent-inspector replay``: re-run a recorded turn, under another policy if --set says so."""

from __future__ import annotations

import argparse
from typing import TextIO

from inspector.core.errors import InspectorError

NAME = "replay"
HELP = "re-run a recorded turn, under another policy if --set says so"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def main(args: argparse.Namespace, out: TextIO) -> int:
    raise InspectorError("replay: not available in this build yet")
