"""``agent-inspector revalidate``: re-run validators over recorded outputs, no model call."""

from __future__ import annotations

import argparse
from typing import TextIO

from inspector.core.errors import InspectorError

NAME = "revalidate"
HELP = "re-run validators over a run's recorded outputs (no model call)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def main(args: argparse.Namespace, out: TextIO) -> int:
    raise InspectorError("revalidate: not available in this build yet")
