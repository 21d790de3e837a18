"""``agent-inspector [gui] [SCENARIO]``: open the inspector window (the default command)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TextIO

from inspector.commands import add_db_argument
from inspector.core.errors import InspectorError

NAME = "gui"
HELP = "open the inspector window (the default command)"
MIN_SIZE = (640, 480)  # --size below this cannot show the docks and the timeline


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "scenario",
        metavar="SCENARIO",
        nargs="?",
        help="a scenario .toml file or demo:NAME to run when the window opens",
    )
    add_db_argument(parser)
    parser.add_argument(
        "--size",
        metavar="WxH",
        type=window_size,
        help="the window's size in pixels, e.g. 1024x700 (default: the size it had when last "
        "closed, else 1400x900); --screenshot renders at it",
    )
    headless = parser.add_mutually_exclusive_group()
    headless.add_argument(
        "--screenshot",
        metavar="PNG",
        help="run SCENARIO (if given), render the window (1400x900, or --size) to PNG and exit",
    )
    headless.add_argument(
        "--self-test",
        action="store_true",
        help="open the window, run demo:retry-feedback, exit 0 if all went well",
    )


def window_size(text: str) -> tuple[int, int]:
    """``WxH`` (``1024x700``) as a pair of pixels; argparse turns the error into one line."""
    width, sep, height = text.lower().replace("×", "x").partition("x")
    try:
        size = (int(width), int(height)) if sep else None
    except ValueError:
        size = None
    if size is None or not (MIN_SIZE[0] <= size[0] <= 10_000 and MIN_SIZE[1] <= size[1] <= 10_000):
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected WIDTHxHEIGHT in pixels, at least {MIN_SIZE[0]}x{MIN_SIZE[1]} "
            "(e.g. 1024x700)"
        )
    return size


def _has_display() -> bool:
    if sys.platform != "linux":
        return True  # macOS and Windows always have a window server
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def choose_platform(*, headless_output: bool) -> None:
    """``--screenshot`` and ``--self-test`` need no screen: with none, render offscreen. A window
    without a screen is a one-line error, not Qt's abort."""
    if os.environ.get("QT_QPA_PLATFORM") or _has_display():
        return
    if headless_output:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
        return
    raise InspectorError(
        "no display to open the window on (DISPLAY is not set); use --screenshot PNG or "
        "--self-test to run headless, or QT_QPA_PLATFORM=offscreen"
    )


def check_desktop_libraries() -> None:
    """Qt aborts with a misleading message when its xcb plugin misses a system library: say
    which ones, and how to install them, in one line instead."""
    from inspector.desktop_libraries import (
        missing_libraries_message,
        missing_xcb_libraries,
        uses_xcb,
    )

    if uses_xcb():
        missing = missing_xcb_libraries()
        if missing:
            raise InspectorError(missing_libraries_message(missing))


def main(args: argparse.Namespace, out: TextIO) -> int:
    if args.screenshot is not None:  # before Qt starts and the scenario runs
        from pathlib import Path

        from inspector.core.files import check_output_path

        check_output_path(Path(args.screenshot), "--screenshot")
    choose_platform(headless_output=bool(args.screenshot or args.self_test))
    check_desktop_libraries()
    from inspector.app.app import run_gui  # Qt is loaded only when the window is wanted

    return run_gui(
        args.scenario,
        args.db,
        screenshot=args.screenshot,
        self_test=args.self_test,
        size=args.size,
    )
