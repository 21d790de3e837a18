"""The worker process: loads user files and runs user functions, one request at a time.

Started by ``pool`` as ``python -m inspector.core.worker.child FD PARENT_PID MEMORY_MB``; FD is
its end of a socket pair, read and written as a ``channel.Channel``.
Its stdout and stderr are a file the app gave it: during a call ``sys.stdout``/``sys.stderr``
write through to that file up to ``CAPTURE_LIMIT`` characters, and the call's reply carries
what was written (also what native code wrote to file descriptors 1 and 2). Nothing user code
prints reaches the app's own stdout, so ``--json`` output stays clean.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from inspector.core.errors import ScenarioError, last_line
from inspector.core.loading import ModuleLoadError, line_in, load_function, load_module, reset
from inspector.core.worker.channel import Channel
from inspector.core.worker.contexts import ValidatorContext
from inspector.core.worker.ending import clip
from inspector.core.worker.protocol import (
    CAPTURE_LIMIT,
    Batch,
    Call,
    Check,
    Names,
    Ping,
    Reply,
    Request,
)


class _Capture:
    """One call's budget of captured text, shared by the stdout and stderr writers."""

    def __init__(self) -> None:
        self.budget = CAPTURE_LIMIT
        self.dropped = 0
        self.dirty = True  # the file may hold something (written outside a call)

    def begin(self) -> None:
        self.budget, self.dropped = CAPTURE_LIMIT, 0
        if self.dirty:  # two syscalls saved on the common call that printed nothing
            os.ftruncate(1, 0)
            os.lseek(1, 0, os.SEEK_SET)  # fds 1 and 2 share this offset: one file, in order
            self.dirty = False

    def end(self) -> str:
        size = os.fstat(1).st_size
        if not size:
            return ""
        self.dirty = True
        data = os.pread(1, min(size, 4 * CAPTURE_LIMIT), 0).decode("utf-8", "replace")
        return clip(data, len(data) + self.dropped + max(0, size - 4 * CAPTURE_LIMIT))

    def write(self, data: bytes, length: int) -> None:
        os.write(1, data)
        self.budget -= length
        self.dirty = True


class _BinaryWriter:
    def __init__(self, capture: _Capture) -> None:
        self._capture = capture

    def write(self, data: bytes) -> int:
        kept = bytes(data[: max(0, self._capture.budget)])
        self._capture.dropped += len(data) - len(kept)
        if kept:
            self._capture.write(kept, len(kept))
        return len(data)

    def flush(self) -> None:
        pass


class _TextWriter:
    """``sys.stdout``/``sys.stderr`` in the worker: writes through to the capture file until
    the call's budget is spent, then only counts."""

    encoding = "utf-8"
    errors = "replace"

    def __init__(self, capture: _Capture, fd: int) -> None:
        self._capture = capture
        self._fd = fd
        self.buffer = _BinaryWriter(capture)

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        kept = text[: max(0, self._capture.budget)]
        self._capture.dropped += len(text) - len(kept)
        if kept:
            self._capture.write(kept.encode("utf-8", "replace"), len(kept))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def writable(self) -> bool:
        return True

    def readable(self) -> bool:
        return False

    def fileno(self) -> int:
        return self._fd


class Worker:
    """Serves requests; ``memory_mb`` is the address-space limit set at start (0: none)."""

    def __init__(self, memory_mb: int, capture: _Capture) -> None:
        self.memory_mb = memory_mb
        self.capture = capture
        self.generation = 0
        self.threads = threading.active_count()
        # An asyncio loop, made when an async function is loaded (or at the first async call):
        # importing asyncio is then load time, not the first call's time.
        self._loop: Any = None
        # (ref, base_dir) -> (the file, its mtime, the function): a call of an unchanged file
        # costs one stat, not a path resolution and a module lookup.
        self._functions: dict[tuple[str, str], tuple[str, int, Callable[..., Any]]] = {}

    def replies(self, request: Request) -> Iterator[Reply]:
        """The replies to ``request``: one, or one per call of a batch."""
        if not isinstance(request, Batch):
            yield self.handle(request)
            return
        for args, kwargs in request.calls:
            reply = self.handle(Call(request.target, args, kwargs, request.generation))
            yield reply
            if reply.retire:
                return

    def handle(self, request: Request) -> Reply:
        if isinstance(request, Ping):
            return Reply()
        if request.generation != self.generation:
            self.generation = request.generation
            reset()  # a file saved twice within one mtime tick is read again
            self._functions.clear()
        if isinstance(request, Call):
            return self._call(request)
        self.capture.begin()
        if isinstance(request, Check):
            for target in request.targets:
                failed = self._load(target.ref, target.base_dir, target.what)
                if isinstance(failed, Reply):
                    break
            else:
                failed = Reply()
            self.capture.end()  # what a module prints on import is not kept
            return failed
        if isinstance(request, Names):
            reply = self._names(request.path)
            self.capture.end()
            return reply
        return Reply(error=f"unknown request {type(request).__name__}")

    def _load(self, ref: str, base_dir: str, what: str) -> Callable[..., Any] | Reply:
        known = self._functions.get((ref, base_dir))
        if known is not None:
            with contextlib.suppress(OSError):
                if os.stat(known[0]).st_mtime_ns == known[1]:
                    return known[2]
        try:
            file = str(Path(base_dir, ref.rpartition(":")[0]).resolve())
            stamp = os.stat(file).st_mtime_ns  # before loading: an edit while it loads is seen
        except (OSError, ValueError):
            file, stamp = "", 0
        try:
            fn = load_function(ref, Path(base_dir), what)
            if file:
                self._functions[(ref, base_dir)] = (file, stamp, fn)
            if inspect.iscoroutinefunction(fn):
                self._event_loop()
            return fn
        except ModuleLoadError as exc:
            return Reply(error=str(exc), load_failed=True, file=exc.file, line=exc.line)
        except ScenarioError as exc:
            return Reply(error=str(exc), load_failed=True)
        except BaseException as exc:  # KeyboardInterrupt raised on import: loading passes it on
            return Reply(error=f"{what}: raised on import: {last_line(exc)}", load_failed=True)

    def _names(self, path: str) -> Reply:
        try:
            module = load_module(Path(path), path)
        except ModuleLoadError as exc:
            return Reply(error=str(exc), load_failed=True, file=exc.file, line=exc.line)
        except ScenarioError as exc:
            return Reply(error=str(exc), load_failed=True)
        except BaseException as exc:  # as in _load
            return Reply(error=f"{path}: raised on import: {last_line(exc)}", load_failed=True)
        names = [n for n, v in vars(module).items() if callable(v) and not n.startswith("_")]
        return Reply(value=names)

    def _call(self, call: Call) -> Reply:
        self.capture.begin()  # a file imported now: what it prints belongs to this call
        fn = self._load(call.target.ref, call.target.base_dir, call.target.what)
        if isinstance(fn, Reply):
            self.capture.end()
            return fn
        code = getattr(fn, "__code__", None)
        file = code.co_filename if code is not None else None
        try:
            value = fn(*call.args, **call.kwargs)
            if inspect.isawaitable(value):
                value = self._await(value)
        except BaseException as exc:  # SystemExit and KeyboardInterrupt too: a reply, not an exit
            return Reply(
                error=self._describe(exc),
                file=file,
                line=line_in(exc, file) if file else None,
                captured=self.capture.end(),
                retire=not isinstance(exc, Exception) or isinstance(exc, MemoryError),
            )
        stopped = any(isinstance(a, ValidatorContext) and a.stopped for a in call.args)
        return Reply(
            value=value,
            captured=self.capture.end(),
            stopped=stopped,
            retire=threading.active_count() > self.threads,  # its threads die with the worker
        )

    def _event_loop(self) -> Any:
        if self._loop is None:
            import asyncio

            self._loop = asyncio.new_event_loop()
        return self._loop

    def _await(self, awaitable: Any) -> Any:
        return self._event_loop().run_until_complete(awaitable)

    def _describe(self, exc: BaseException) -> str:
        if isinstance(exc, MemoryError) and self.memory_mb:
            return f"MemoryError: over the user-code memory limit ({self.memory_mb} MB)"
        return last_line(exc)


def _die_with(parent: int) -> None:
    """The worker ends when the app does, even in the middle of a call that never returns."""
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the app ended before prctl took effect
        os._exit(0)


def _limit_memory(memory_mb: int) -> None:
    if not memory_mb:
        return
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = memory_mb * 2**20
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def serve(conn: Channel, worker: Worker) -> None:
    while True:
        try:
            request = pickle.loads(conn.recv_bytes())
        except (EOFError, OSError):
            return  # the app closed its end
        for reply in worker.replies(request):
            try:
                conn.send_bytes(pickle.dumps(reply, pickle.HIGHEST_PROTOCOL))
            except (EOFError, OSError):
                return
            except Exception as exc:  # the value cannot be pickled: say so instead
                kind = type(reply.value).__name__
                instead = Reply(
                    error=f"returned a {kind}, which cannot be sent back from the user-code "
                    f"worker (not picklable): {last_line(exc)}",
                    captured=reply.captured,
                    stopped=reply.stopped,
                    retire=reply.retire,
                )
                try:
                    conn.send_bytes(pickle.dumps(instead, pickle.HIGHEST_PROTOCOL))
                except (EOFError, OSError):
                    return


def main(argv: list[str]) -> None:
    fd, parent, memory_mb = (int(a) for a in argv)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C is the app's to handle: it kills us
    _die_with(parent)
    capture = _Capture()
    sys.stdout = _TextWriter(capture, 1)
    sys.stderr = _TextWriter(capture, 2)
    _limit_memory(memory_mb)
    worker = Worker(memory_mb, capture)
    conn = Channel.from_fd(fd)
    conn.send_bytes(pickle.dumps(Reply(value=os.getpid()), pickle.HIGHEST_PROTOCOL))  # ready
    serve(conn, worker)


if __name__ == "__main__":
    main(sys.argv[1:])
