"""One user-code worker process as the app holds it: the child python process, the channel to
it, the file its output goes to, and the replies to requests sent ahead (``pool.wake``'s Ping,
``pool.start``'s early checks). ``pool`` decides which worker serves which call."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import math
import os
import pickle
import select
import socket
import subprocess
import sys
import tempfile
import time
from typing import Any

from inspector.core.worker.channel import Channel
from inspector.core.worker.ending import clip, died
from inspector.core.worker.protocol import CAPTURE_LIMIT, Reply, Request, Target

MEMORY_ENV = "AGENT_INSPECTOR_USER_CODE_MEMORY_MB"
DEFAULT_MEMORY_MB = 2048
WORKER_FLAG = "--user-code-worker"  # how the frozen app starts itself as a worker


def memory_limit_mb() -> int:
    """The workers' address-space limit in MB (``AGENT_INSPECTOR_USER_CODE_MEMORY_MB``; 0: none)."""
    raw = os.environ.get(MEMORY_ENV, "").strip()
    if raw.isdigit():
        return int(raw)
    return DEFAULT_MEMORY_MB


def _command(fd: int) -> list[str]:
    args = [str(fd), str(os.getpid()), str(memory_limit_mb())]
    if getattr(sys, "frozen", False):
        return [sys.executable, WORKER_FLAG, *args]
    return [sys.executable, "-m", "inspector.core.worker.child", *args]


@dataclasses.dataclass(frozen=True)
class Early:
    """A ``Check`` of one target sent ahead by ``start``, with the file's mtime then."""

    target: Target
    generation: int
    stamp: int


class WorkerGone(Exception):
    """The worker ended while a request was in flight; the message says how."""


class WorkerProcess:
    """One worker: a child python process, a socket to it and the file its output goes to."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair()
        self.output = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the worker
        try:
            self.process = subprocess.Popen(
                _command(theirs.fileno()),
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=self.output,
                stderr=self.output,
            )
        except BaseException:
            ours.close()
            self.output.close()
            raise
        finally:
            theirs.close()
        self.conn = Channel(ours)
        self.ready = False
        self.loaded: dict[Target, tuple[int, int]] = {}  # imported here: file mtime, generation
        # Requests sent ahead of anyone waiting, in order: a Ping (None: its reply dropped) or
        # an early Check (its reply kept in ``answers`` for the check that asks).
        self.ahead: collections.deque[Early | None] = collections.deque()
        self.answers: dict[Early, Reply] = {}
        # Waiting for a reply in this thread: one poll object for the worker's life, not a
        # selector built per wait (``Channel.poll``); None where there is no poll().
        self._poller: Any = None
        if hasattr(select, "poll"):
            self._poller = select.poll()
            self._poller.register(self.conn.fileno(), select.POLLIN)

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def send(self, request: Request) -> None:
        try:
            self.conn.send_bytes(pickle.dumps(request, pickle.HIGHEST_PROTOCOL))
        except OSError:
            raise WorkerGone(self._death()) from None

    def receive_blocking(self, timeout_s: float | None) -> Reply:
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            self._wait_until(deadline)
            reply = self._recv()
            if reply is not None:
                return reply

    def _wait_until(self, deadline: float | None) -> None:
        """Returns when a reply (or the end of the connection) can be read; ``TimeoutError``
        past ``deadline`` (``time.monotonic``; None: no limit)."""
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            readable = self._wait(left)
        except OSError:
            raise WorkerGone(self._death()) from None
        if not readable:
            raise TimeoutError

    def _wait(self, timeout_s: float | None) -> bool:
        """Whether a reply (or the end of the connection) can be read within ``timeout_s``."""
        if self._poller is None:
            return bool(self.conn.poll(timeout_s))
        ms = None if timeout_s is None else math.ceil(timeout_s * 1000)
        return bool(self._poller.poll(ms))

    async def receive(self) -> Reply:
        while True:
            await self._readable()
            reply = self._recv()
            if reply is not None:
                return reply

    async def _readable(self) -> None:
        loop = asyncio.get_running_loop()
        readable: asyncio.Future[None] = loop.create_future()
        fd = self.conn.fileno()

        def ready() -> None:
            if not readable.done():
                readable.set_result(None)

        try:
            loop.add_reader(fd, ready)
        except NotImplementedError:  # an event loop without add_reader (Windows' proactor)
            await asyncio.to_thread(self.conn.poll, None)  # returns when we kill the worker
        else:
            try:
                await readable
            finally:
                loop.remove_reader(fd)

    def claim(self, sent: Early, timeout_s: float | None) -> Reply:
        """The reply to the early Check ``sent`` (read now if it has not come yet)."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while sent not in self.answers:
            self._wait_until(deadline)
            self._recv()
        return self.answers.pop(sent)

    def _recv(self) -> Reply | None:
        """The next reply; None for one to a request sent ahead (a ``Ping``'s is dropped, an
        early Check's kept in ``answers``): a reply is for the request sent after those. The
        first message of all is the worker's hello."""
        try:
            reply: Reply = pickle.loads(self.conn.recv_bytes())
        except (EOFError, OSError):
            raise WorkerGone(self._death()) from None
        if self.ready and self.ahead:
            sent = self.ahead.popleft()
            if sent is not None:
                self.answers[sent] = reply
            return None
        return reply

    def _death(self) -> str:
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return died(None)
        return died(self.process.returncode)

    def captured(self) -> str:
        """What the call in flight wrote so far (after a timeout or a crash)."""
        with contextlib.suppress(OSError, ValueError):
            fd = self.output.fileno()
            size = os.fstat(fd).st_size
            data = os.pread(fd, min(size, 4 * CAPTURE_LIMIT), 0).decode("utf-8", "replace")
            return clip(data, len(data) + max(0, size - 4 * CAPTURE_LIMIT))
        return ""

    def kill(self) -> None:
        """Kills and reaps the process and closes what we hold of it."""
        if self.process.poll() is None:
            with contextlib.suppress(OSError):
                self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)
        self.conn.close()
        self.output.close()
