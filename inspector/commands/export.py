"""``agent-inspector export``: export a run as JSONL events or a self-contained HTML report."""

from __future__ import annotations

import argparse
from typing import TextIO

from inspector.core.errors import InspectorError

NAME = "export"
HELP = "export a run as JSONL events or a self-contained HTML report"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def main(args: argparse.Namespace, out: TextIO) -> int:
    raise InspectorError("export: not available in this build yet")
