"""Whole messages over one end of a socket pair: what the app and a user-code worker send each
other (pickled requests and replies), each prefixed with its length (8 bytes, big-endian).

The same framing ``multiprocessing.connection.Connection`` gives, without importing
``multiprocessing`` (tempfile, shutil, random, subprocess...): that import was a third of a
fresh worker's start-up, paid on every ``agent-inspector run`` with user code and on every
replacement worker.
"""

from __future__ import annotations

import select
import socket

HEADER = 8  # bytes of the length prefix
SMALL = 64 * 1024  # up to this size the prefix and the message go in one send (one syscall)


class Channel:
    """Blocking sends and receives of whole messages; ``OSError`` when the other end is gone
    mid-send, ``EOFError`` when it closed before a whole message came."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    @classmethod
    def from_fd(cls, fd: int) -> Channel:
        return cls(socket.socket(fileno=fd))

    def fileno(self) -> int:
        return self._sock.fileno()

    def send_bytes(self, data: bytes) -> None:
        header = len(data).to_bytes(HEADER, "big")
        if len(data) <= SMALL:
            self._sock.sendall(header + data)
        else:  # no copy of a large message to prepend 8 bytes
            self._sock.sendall(header)
            self._sock.sendall(data)

    def recv_bytes(self) -> bytearray:
        size = int.from_bytes(self._read(HEADER), "big")
        return self._read(size)

    def _read(self, size: int) -> bytearray:
        buffer = bytearray(size)
        view = memoryview(buffer)
        got = 0
        while got < size:
            n = self._sock.recv_into(view[got:])
            if not n:
                raise EOFError
            got += n
        return buffer

    def poll(self, timeout_s: float | None) -> bool:
        """Whether a message (or the end) can be read within ``timeout_s`` (None: wait)."""
        readable, _, _ = select.select([self._sock], [], [], timeout_s)
        return bool(readable)

    def close(self) -> None:
        self._sock.close()
