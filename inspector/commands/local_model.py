"""``agent-inspector local-model``: start, stop or check the local llama.cpp model server."""

from __future__ import annotations

import argparse
from typing import TextIO

from inspector.core.errors import InspectorError

NAME = "local-model"
HELP = "start, stop or check the local llama.cpp model server"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def main(args: argparse.Namespace, out: TextIO) -> int:
    raise InspectorError("local-model: not available in this build yet")
