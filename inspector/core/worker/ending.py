"""How a user-code call that did not return is described (pure functions, tested alone)."""

from __future__ import annotations

import signal

from inspector.core.worker.protocol import CAPTURE_LIMIT

_SIGNALS: dict[int, str] = {
    signal.SIGSEGV: "a segmentation fault (SIGSEGV)",
    signal.SIGABRT: "an abort (SIGABRT)",
    signal.SIGBUS: "a bus error (SIGBUS)",
    signal.SIGFPE: "a floating-point exception (SIGFPE)",
    signal.SIGILL: "an illegal instruction (SIGILL)",
    signal.SIGKILL: "SIGKILL (the system's out-of-memory killer, or another process)",
}


def died(returncode: int | None) -> str:
    """Why the worker ended mid-call, from its return code (negative: the signal that killed it)."""
    if returncode is None:
        return "the user-code worker process stopped answering"
    if returncode >= 0:
        return (
            f"the user-code worker process exited with code {returncode} during the call "
            "(os._exit or a crash in native code)"
        )
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = f"signal {-returncode}"
    cause = _SIGNALS.get(-returncode, name)
    return f"the user-code worker process was killed by {cause} during the call"


def timed_out(seconds: float) -> str:
    return f"timed out after {seconds:g} s"


def clip(text: str, total: int, limit: int = CAPTURE_LIMIT) -> str:
    """``text`` (the first characters of ``total`` captured), with what was left out counted."""
    text = text[:limit]
    left = total - len(text)
    return text if left <= 0 else f"{text}\n[… {left:,} more characters not kept]"
