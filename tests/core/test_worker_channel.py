"""``core/worker/channel.py``: whole messages either way over a socket pair, small ones and ones
past the one-send size, and the end of the other side as ``EOFError``."""

from __future__ import annotations

import socket
import threading

import pytest

from inspector.core.worker.channel import SMALL, Channel


def _pair() -> tuple[Channel, Channel]:
    a, b = socket.socketpair()
    return Channel(a), Channel.from_fd(b.detach())


@pytest.mark.parametrize("size", [0, 1, 100, SMALL, SMALL + 1, 5 * 2**20])
def test_a_message_arrives_whole(size: int) -> None:
    ours, theirs = _pair()
    data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    # A large message fills the socket's buffer: the other side must read while it is sent.
    sender = threading.Thread(target=ours.send_bytes, args=(data,))
    sender.start()
    got = theirs.recv_bytes()
    sender.join()
    assert got == data
    theirs.send_bytes(b"reply")
    assert ours.poll(5.0)
    assert ours.recv_bytes() == b"reply"
    ours.close()
    theirs.close()


def test_messages_keep_their_order_and_bounds() -> None:
    ours, theirs = _pair()
    for text in (b"one", b"", b"three"):
        ours.send_bytes(text)
    assert [bytes(theirs.recv_bytes()) for _ in range(3)] == [b"one", b"", b"three"]
    assert not theirs.poll(0)
    ours.close()
    theirs.close()


def test_the_other_end_closing_is_eof() -> None:
    ours, theirs = _pair()
    ours.send_bytes(b"last")
    ours.close()
    assert theirs.recv_bytes() == b"last"
    assert theirs.poll(0)  # the end is readable
    with pytest.raises(EOFError):
        theirs.recv_bytes()
    theirs.close()
