"""Where a raw request body keeps its wire message list, and the body as plain JSON values.

A raw request (``RawExchange.request``) is the provider's HTTP body: chat completions and
Anthropic put the history at ``messages``; a recorded exchange may wrap the body in ``body``.
A loaded run's bodies hold that list as a ``SharedPrefix`` view of one list per run (each step
re-sends the history: a list per step would cost steps x history), so every reader asks here
where the list is rather than testing for ``list``, and ``plain`` turns one body back into
plain lists (O(that body)) where ``json.dumps`` or a walk of lists needs it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from inspector.core.shared_list import SharedPrefix


def _is_messages(value: Any) -> bool:
    return isinstance(value, list | SharedPrefix)


def messages_path(request: Any) -> tuple[str, ...]:
    """``("messages",)``, ``("body", "messages")`` or ``()`` (a body without a message list)."""
    if isinstance(request, dict):
        if _is_messages(request.get("messages")):
            return ("messages",)
        body = request.get("body")
        if isinstance(body, dict) and _is_messages(body.get("messages")):
            return ("body", "messages")
    return ()


def messages_container(request: Any) -> dict[str, Any] | None:
    """The dict holding a raw body's message list (the body, or its ``body``), if any."""
    path = messages_path(request)
    if not path:
        return None
    container: dict[str, Any] = request if path == ("messages",) else request["body"]
    return container


def raw_messages(request: Any) -> Sequence[Any] | None:
    """A raw body's wire message list (a list or a view of one), if it has one."""
    container = messages_container(request)
    return None if container is None else container["messages"]


def plain(request: Any) -> Any:
    """``request`` with a shared message list copied out into a plain list (the dicts around
    it shallow-copied); ``request`` itself when it holds none."""
    container = messages_container(request)
    if container is None or not isinstance(container["messages"], SharedPrefix):
        return request
    filled = {**container, "messages": container["messages"][:]}
    return filled if container is request else {**request, "body": filled}
