"""``SharedPrefix``: the first ``n`` items of a list that later steps extend, without a copy.

A stored turn's step ``i`` sends the messages of step ``i - 1`` plus one or two more. Giving
every step its own list costs a pointer per message sent — steps x history, 800 MB for a
10,000-step turn whose history grows with it. Loading hands each step a view of one growing
list instead, so memory follows the distinct messages. A view is read-only and compares, dumps
(pydantic, ``mode="json"`` or not) and prints like the list it stands for.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import islice
from typing import Any, TypeVar, overload

from pydantic_core import SchemaSerializer, core_schema

T = TypeVar("T")


class SharedPrefix(Sequence[T]):
    __slots__ = ("_items", "_n")

    def __init__(self, items: list[T], n: int) -> None:
        # ``items`` may grow after this view is made (the next step's messages); never shrink.
        self._items = items
        self._n = n

    @property
    def items(self) -> list[T]:
        """The whole list this is a prefix of (the caller may extend it, never edit it)."""
        return self._items

    def shares_items(self, other: object) -> bool:
        """True when ``other`` is a view of the same list: then the shorter is a prefix of the
        longer, no comparison needed."""
        return isinstance(other, SharedPrefix) and other._items is self._items

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> T: ...

    @overload
    def __getitem__(self, i: slice) -> list[T]: ...

    def __getitem__(self, i: int | slice) -> T | list[T]:
        if isinstance(i, slice):
            start, stop, step = i.indices(self._n)
            if step == 1:  # the usual case, without copying the whole prefix first
                return self._items[start:stop]
            return self._items[: self._n][i]
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError("SharedPrefix index out of range")
        return self._items[i]

    def __iter__(self) -> Iterator[T]:
        return islice(self._items, self._n)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SharedPrefix):
            return self._n == other._n and (
                self._items is other._items or self._items[: self._n] == other._items[: other._n]
            )
        if isinstance(other, list | tuple):
            return self._n == len(other) and self._items[: self._n] == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # a list stand-in: unhashable like a list

    def __add__(self, other: Sequence[T]) -> list[T]:
        return self._items[: self._n] + list(other)

    def __repr__(self) -> str:
        return repr(self._items[: self._n])


def _as_list(value: SharedPrefix[Any]) -> list[Any]:
    return value[:]


# pydantic-core serialises any object carrying ``__pydantic_serializer__`` with it: a view in a
# ``Sequence[Message]`` field (or anywhere in a record) dumps as the list it stands for.
SharedPrefix.__pydantic_serializer__ = SchemaSerializer(  # type: ignore[attr-defined]
    core_schema.any_schema(serialization=core_schema.plain_serializer_function_ser_schema(_as_list))
)


def common_prefix(previous: Sequence[Any], current: Sequence[Any]) -> int:
    """How many leading items ``current`` shares with ``previous``.

    The usual case (the engine appends to one history, sharing message objects) is a C-level
    list comparison that short-cuts on identity; otherwise the first difference is searched.
    Two views of one growing list (``SharedPrefix``) need no comparison at all."""
    n = len(previous)
    if isinstance(current, SharedPrefix) and current.shares_items(previous):
        return min(n, len(current))
    if len(current) >= n and list(current[:n]) == list(previous):
        return n
    limit = min(n, len(current))
    k = 0
    while k < limit and (current[k] is previous[k] or current[k] == previous[k]):
        k += 1
    return k
