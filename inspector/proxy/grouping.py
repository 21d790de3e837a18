"""Which run a proxied call belongs to, and whether it starts a new attempt — one pure function
over what the open runs last sent and received (``docs/proxy.md``, "Turns and attempts").

1. A call carrying ``X-Agent-Inspector-Run: KEY`` joins the open run with that key (or starts it).
2. Else it joins the open run whose last request plus that request's reply it extends (an agent
   sending its history back with the reply and what came after); a client retrying the very
   request that failed joins it too. The longest such history wins, then the most recent run.
3. Else it starts a new run.

A call that continues after a *final answer* (text, no tool call) with a new user or tool
message starts a new attempt, and the messages it added are the feedback injected after that
answer — how an output validator's retry or an Instructor re-ask shows in the timeline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from inspector.core.messages import Message

__all__ = ["Key", "OpenRun", "Placement", "keys_of", "message_key", "place"]

Key = tuple[object, ...]


def message_key(message: Message) -> Key:
    """What must match for a message sent back to be the one recorded: role, text, tool call
    ids and names. Not the exact JSON — clients re-serialise arguments and null/"" content."""
    calls = tuple((c.id, c.name) for c in message.tool_calls or ())
    return (message.role, message.content or "", calls, message.tool_call_id or "")


def keys_of(system: str, messages: Sequence[Message]) -> tuple[Key, ...]:
    """A request's conversation as keys; the system prompt counts as its first message."""
    head: tuple[Key, ...] = (("system", system, (), ""),) if system else ()
    return head + tuple(message_key(m) for m in messages)


@dataclass(frozen=True)
class OpenRun:
    """What placement needs to know of a run still open."""

    run_id: str
    header: str | None  # its X-Agent-Inspector-Run value
    sent: tuple[Key, ...]  # the last request's conversation
    reply: Key | None  # that request's reply; None when it failed
    final: bool  # the reply was a final answer (text, no tool call)
    busy: bool  # a call of the run is in flight
    last_seen: float


@dataclass(frozen=True)
class Placement:
    run_id: str | None  # None: a new run
    new_attempt: bool = False
    added: int = 0  # how many trailing messages of the request are new to the run


def _extends(request: tuple[Key, ...], run: OpenRun) -> int | None:
    """The length of the run's history the request starts with, or None."""
    history = run.sent + ((run.reply,) if run.reply is not None else ())
    if len(request) >= len(history) and request[: len(history)] == history:
        return len(history)
    return None


def place(
    request: tuple[Key, ...],
    messages: Sequence[Message],
    header: str | None,
    runs: Sequence[OpenRun],
) -> Placement:
    """Where a call goes (``request``: ``keys_of`` its request; ``messages``: its messages)."""
    if header is not None:
        chosen = next((r for r in runs if r.header == header), None)
        if chosen is None:
            return Placement(None)
        return _continue(chosen, _extends(request, chosen), request, messages)
    best: tuple[int, float, OpenRun] | None = None
    for run in runs:
        if run.header is not None or run.busy:
            continue
        length = _extends(request, run)
        if length is None or length == 0:
            continue
        if best is None or (length, run.last_seen) > best[:2]:
            best = (length, run.last_seen, run)
    if best is None:
        return Placement(None)
    return _continue(best[2], best[0], request, messages)


def _continue(
    run: OpenRun, length: int | None, request: tuple[Key, ...], messages: Sequence[Message]
) -> Placement:
    if length is None:  # a header run whose history this call does not extend
        return Placement(run.run_id)
    added = len(request) - length
    new = messages[len(messages) - added :] if added else ()
    new_attempt = run.final and any(m.role in ("user", "tool") for m in new)
    return Placement(run.run_id, new_attempt=new_attempt, added=added)
