"""``agent-inspector local-model start|stop|status``: the local llama.cpp model server.

``start`` prints progress to stderr and the base URL alone on stdout, so
``URL=$(agent-inspector local-model start)`` works.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from inspector.localmodel import ServerState

NAME = "local-model"
HELP = "start, stop or check the local llama.cpp model server"
EXIT_OK, EXIT_FAILED = 0, 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("start", "stop", "status"))
    parser.add_argument(
        "--port",
        type=int,
        default=None,
        help="port on 127.0.0.1 (default $AGENT_INSPECTOR_LOCAL_MODEL_PORT or 8642; 0: any free)",
    )
    parser.add_argument(
        "--timeout", type=float, default=120.0, help="seconds to wait for the server (start)"
    )
    parser.add_argument("--json", action="store_true", help="print the server's state as JSON")


def main(args: argparse.Namespace, out: TextIO) -> int:
    from inspector import localmodel

    if args.action == "start":
        server = localmodel.start(port=args.port, timeout_s=args.timeout, progress=_progress)
        _print(out, args.json, "running", server)
        return EXIT_OK
    if args.action == "stop":
        stopped = localmodel.stop()
        if args.json:
            _print(out, True, "stopped", stopped)
        else:
            out.write(f"stopped {stopped.base_url}\n" if stopped else "not running\n")
        return EXIT_OK
    current = localmodel.status()
    _print(out, args.json, current.state, current.server)
    return EXIT_OK if current.state == "running" else EXIT_FAILED


def _progress(line: str) -> None:
    print(f"local-model: {line}", file=sys.stderr, flush=True)


def _print(out: TextIO, as_json: bool, state: str, known: ServerState | None) -> None:
    if as_json:
        data: dict[str, object] = {"state": state, "base_url": known.base_url if known else None}
        if known is not None:
            data |= known.model_dump(mode="json")
        json.dump(data, out)
        out.write("\n")
    elif state == "running" and known is not None:
        out.write(f"{known.base_url}\n")
    elif known is not None:
        out.write(f"{state}: {known.base_url} (pid {known.pid}, log {known.log})\n")
    else:
        out.write(f"{state}\n")
