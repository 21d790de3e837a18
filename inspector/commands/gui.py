"""``agent-inspector gui``: open the inspector window (the default command)."""

from __future__ import annotations

import argparse
from typing import TextIO

from inspector.core.errors import InspectorError

NAME = "gui"
HELP = "open the inspector window (the default command)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def main(args: argparse.Namespace, out: TextIO) -> int:
    raise InspectorError("gui: not available in this build yet")
