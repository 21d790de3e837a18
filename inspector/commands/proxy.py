"""``agent-inspector proxy``: a local recording proxy for OpenAI- and Anthropic-compatible calls
(docs/proxy.md). Runs until Ctrl+C (or SIGTERM); open runs are then ended and written.

Exit 0 after a clean stop, 2 for bad input (a bad URL or file, a port that is taken).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from inspector.commands import add_db_argument

if TYPE_CHECKING:
    from inspector.core.events import Event, EventSink
    from inspector.proxy import RecordingProxy

NAME = "proxy"
HELP = "a local recording proxy: point an agent's base URL at it, every model call is recorded"
EXIT_OK = 0
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
SWITCH_INTERVAL_S = 0.0005


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=8765, help="port to listen on (default 8765)")
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)"
    )
    parser.add_argument(
        "--upstream",
        metavar="URL",
        default="https://api.openai.com/v1",
        help="where OpenAI-compatible calls go: the base URL the client would use otherwise "
        "(default https://api.openai.com/v1)",
    )
    parser.add_argument(
        "--upstream-anthropic",
        metavar="URL",
        default="https://api.anthropic.com/v1",
        help="where Anthropic Messages calls go (default https://api.anthropic.com/v1)",
    )
    parser.add_argument(
        "--validators",
        metavar="FILE",
        type=Path,
        help="judge each final answer live: a .toml with [[validators]] or a .py of validators",
    )
    parser.add_argument(
        "--idle-timeout",
        metavar="SECONDS",
        type=float,
        default=30.0,
        help="a run with no call for this long is ended (default 30)",
    )
    add_db_argument(parser)


def _check_url(option: str, url: str) -> str:
    from urllib.parse import urlsplit

    from inspector.core.errors import ScenarioError

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ScenarioError(f"{option} {url!r}: expected an http:// or https:// URL")
    return url


def _check(args: argparse.Namespace) -> None:
    from inspector.core.errors import ScenarioError

    if not 0 <= args.port <= 65535:
        raise ScenarioError(f"--port {args.port}: expected 0-65535")
    if args.idle_timeout <= 0:
        raise ScenarioError(f"--idle-timeout {args.idle_timeout}: expected a positive number")
    _check_url("--upstream", args.upstream)
    _check_url("--upstream-anthropic", args.upstream_anthropic)


def progress_sink(out: TextIO) -> EventSink:
    """One line per finished step and per finished run."""
    from inspector.core.events import RunFinished, StepFinished
    from inspector.core.records import step_kind

    def sink(event: Event) -> None:
        if isinstance(event, StepFinished):
            s = event.step
            took = f"{s.latency_ms:.0f} ms" if s.latency_ms is not None else ""
            detail = f": {s.error}" if s.error else ""
            line = f"run {event.run_id} #{s.index} attempt {s.attempt} {step_kind(s)} {took}"
            out.write(f"{line}{detail}\n")
        elif isinstance(event, RunFinished):
            r = event.record
            ending = f" ({r.termination})" if r.termination else ""
            out.write(f"run {r.run_id} {r.status}{ending}, {len(r.steps)} step(s)\n")
        else:
            return
        out.flush()

    return sink


async def _serve(proxy: RecordingProxy, out: TextIO) -> None:
    import asyncio
    import contextlib
    import signal

    from inspector.core.errors import ScenarioError

    try:
        await proxy.start()
    except OSError as exc:
        await proxy.stop()
        where = f"{proxy.host}:{proxy.port}"
        problem = exc.strerror or exc
        raise ScenarioError(f"--port {proxy.port}: cannot listen on {where}: {problem}") from None
    out.write(
        f"agent-inspector proxy on {proxy.url}\n"
        f"  OpenAI clients:    base_url = {proxy.url}/v1\n"
        f"  Anthropic clients: base_url = {proxy.url}\n"
        "Ctrl+C stops it.\n"
    )
    out.flush()
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, RuntimeError):  # not on this platform/thread
        loop.add_signal_handler(signal.SIGTERM, stopping.set)
    try:
        await stopping.wait()
    finally:
        await proxy.stop()


def main(args: argparse.Namespace, out: TextIO) -> int:
    import asyncio

    from inspector.core.events import fan_out
    from inspector.proxy import RecordingProxy, Upstreams, load_validators
    from inspector.proxy.recording import StoreSink

    _check(args)
    validators = load_validators(args.validators) if args.validators else None
    if args.host not in LOOPBACK:
        print(
            f"agent-inspector: warning: --host {args.host}: the proxy is reachable from other "
            "machines, and it forwards calls with the keys it holds",
            file=sys.stderr,
        )
    upstreams = Upstreams.with_keys(args.upstream, args.upstream_anthropic)
    # The store's writer thread holds the GIL while it serialises a step; by default the event
    # loop would wait up to 5 ms for it, on the path of every forwarded reply (bench/proxy.py).
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    store = StoreSink(args.db)
    proxy = RecordingProxy(
        fan_out(store, progress_sink(out)),
        host=args.host,
        port=args.port,
        upstreams=upstreams,
        validators=validators,
        idle_timeout_s=args.idle_timeout,
    )
    try:
        asyncio.run(_serve(proxy, out))
    except KeyboardInterrupt:
        pass  # asyncio.run cancelled _serve, whose finally stopped the proxy
    finally:
        store.close()
    out.write(f"agent-inspector proxy stopped; runs are in {store.path}\n")
    return EXIT_OK
