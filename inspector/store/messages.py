"""Content-addressed messages: each distinct message is stored once, and a request as the number
of messages it keeps from the previous step's request plus the hashes of the ones it adds.

Every step of a turn re-sends the whole history, so storing requests as they are grows with the
square of the turn length. A step usually sends the previous request's messages plus one or two
new ones; storing ``(keep, added)`` makes each step cost what it adds.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from inspector.core.compact_json import dumps
from inspector.core.messages import Message

__all__ = ["MessageInterner", "content_hash", "dumps"]


_HASH_SLICE = 1 << 20  # characters encoded at a time: a long text is not copied whole to hash it


def content_hash(body: str) -> str:
    digest = hashlib.blake2b(digest_size=16)
    for at in range(0, len(body), _HASH_SLICE):
        digest.update(body[at : at + _HASH_SLICE].encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


class MessageInterner:
    """Hashes messages for one writer; a message object seen before is not serialised again.

    ``new`` collects ``(hash, body)`` pairs not yet written, for the caller's next transaction.
    The hash is of the message's JSON; ``stored`` gives the body as written (its large texts as
    references, ``inspector.store.texts``)."""

    def __init__(self, stored: Callable[[str], str] = lambda body: body) -> None:
        # id(message) -> (message, hash); holding the message keeps its id from being reused.
        self._by_id: dict[int, tuple[object, str]] = {}
        self._written: set[str] = set()
        self._stored = stored
        self.new: list[tuple[str, str]] = []

    def message(self, message: Message) -> str:
        cached = self._by_id.get(id(message))
        if cached is not None and cached[0] is message:
            return cached[1]
        digest = self.value(message.model_dump(mode="json"))
        self._by_id[id(message)] = (message, digest)
        return digest

    def value(self, value: Any) -> str:
        """The hash of any JSON value (a raw wire message), queued for writing if new."""
        body = dumps(value)
        digest = content_hash(body)
        if digest not in self._written:
            self._written.add(digest)
            self.new.append((digest, self._stored(body)))
        return digest

    def forget_objects(self) -> None:
        """Drops the object cache (a run ended); the hashes written stay known."""
        self._by_id.clear()

    def take(self) -> list[tuple[str, str]]:
        new, self.new = self.new, []
        return new

    def unwritten(self, pairs: list[tuple[str, str]]) -> None:
        """A transaction carrying ``pairs`` rolled back: write them again next time."""
        for digest, _ in pairs:
            self._written.discard(digest)
