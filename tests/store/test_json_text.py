"""The store's JSON text: ``dumps`` writes exactly what ``json.dumps(ensure_ascii=False,
separators=(",", ":"))`` writes (every hash and row depends on it), with the encoder made once."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.store.messages import dumps

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(alphabet=st.characters(codec=None))  # controls, non-ASCII, lone surrogates
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text() | st.integers() | st.booleans() | st.none(), inner, max_size=4)
    ),
    max_leaves=20,
)


def reference(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@given(VALUES)
@settings(max_examples=300, deadline=None)
def test_dumps_writes_what_json_dumps_writes(value: Any) -> None:
    assert dumps(value) == reference(value)


def test_a_value_json_cannot_write_is_refused_alike() -> None:
    with pytest.raises(TypeError, match="not JSON serializable"):
        dumps({"a": [object()]})
