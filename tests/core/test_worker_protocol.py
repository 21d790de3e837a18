"""What crosses between the app and a user-code worker (``core/worker/protocol.py``)."""

from __future__ import annotations

import dataclasses
import pickle

from inspector.core.worker import protocol


def test_protocol_records_pickle_as_their_fields_in_order() -> None:
    """Each record crosses as its class and its field values (``_Record.__reduce__``): the
    copy equals the original, every field set to a value other than its default."""
    target = protocol.Target("t.py:f", "/base", "s.toml: tools[0].function")
    records = [
        target,
        protocol.Call(target, (1, "a"), {"k": [2]}, 3),
        protocol.Batch(target, (((1,), {"k": 2}),), 4),
        protocol.Check((target, target), 5),
        protocol.Names("/x.py", 6),
        protocol.Ping(),
        protocol.Reply("v", "e", True, "f.py", 7, "out", True, True, True),
    ]
    for record in records:
        copy = pickle.loads(pickle.dumps(record, pickle.HIGHEST_PROTOCOL))
        assert copy == record
        assert type(copy) is type(record)
        names = [f.name for f in dataclasses.fields(record)]
        assert list(vars(record)) == names  # the order ``__reduce__`` relies on
