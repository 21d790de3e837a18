"""``SharedPrefix``: a read-only view that reads, compares and dumps like the list it stands for."""

from __future__ import annotations

import copy
import json
import pickle

import pytest

from inspector.core.messages import Message, assistant, user
from inspector.core.records import StepRequest
from inspector.core.shared_list import SharedPrefix


def _messages() -> list[Message]:
    return [user("a"), assistant("b"), user("c")]


def test_reads_like_the_prefix_and_ignores_what_is_appended_later() -> None:
    items = _messages()
    view = SharedPrefix(items, 2)
    items.append(user("d"))
    assert len(view) == 2
    assert list(view) == items[:2]
    assert view[-1] is items[1]
    assert view[1:] == [items[1]]
    assert view[::-1] == [items[1], items[0]]
    with pytest.raises(IndexError):
        view[2]
    with pytest.raises(IndexError):
        view[-3]
    assert view + [items[3]] == [items[0], items[1], items[3]]  # noqa: RUF005
    assert repr(view) == repr(items[:2])


def test_equality_with_lists_tuples_and_other_views() -> None:
    items = _messages()
    view = SharedPrefix(items, 2)
    assert view == items[:2]
    assert view == tuple(items[:2])
    assert view != items
    assert view == SharedPrefix(list(items), 2)
    assert view != SharedPrefix(items, 3)
    assert view != "ab"
    with pytest.raises(TypeError):
        hash(view)


def test_a_request_holding_a_view_dumps_equals_and_copies_like_one_holding_a_list() -> None:
    items = _messages()
    shared = StepRequest.model_construct(
        system="s",
        messages=SharedPrefix(items, 2),
        tools=[],
        tool_choice=None,
        response_format=None,
    )
    plain = StepRequest(system="s", messages=items[:2])
    assert shared == plain
    assert shared.model_dump() == plain.model_dump()
    assert shared.model_dump(mode="json") == plain.model_dump(mode="json")
    assert json.loads(shared.model_dump_json()) == plain.model_dump(mode="json")
    assert copy.deepcopy(shared) == plain
    assert pickle.loads(pickle.dumps(shared)) == plain
    assert StepRequest.model_validate(shared.model_dump()) == plain
