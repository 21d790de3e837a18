"""The app's side of user code: warm worker processes, one call at a time each.

A call takes an idle worker (or starts one), sends the request and waits for the reply with
the call's deadline; the wait is asynchronous (the event loop watches the worker's socket), so
a turn, the window and a re-validation never block on user code. A worker that times out, is
cancelled (Ctrl+C, Stop), dies (``os._exit``, a segfault, the out-of-memory killer) or asks to
be retired (``SystemExit``, ``MemoryError``, threads left running) is killed and reaped before
the call returns; the next call gets a fresh one. At most ``MAX_IDLE`` workers wait between
calls; every worker dies with the app (killed at exit; on Linux also by the kernel when the app
is killed). Why processes and this design: ``docs/user-code.md``.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import dataclasses
import math
import os
import threading
from collections.abc import Sequence
from typing import Any

from inspector.core.errors import ScenarioError
from inspector.core.loading import ModuleLoadError
from inspector.core.worker.ending import timed_out
from inspector.core.worker.process import (
    DEFAULT_MEMORY_MB,
    MEMORY_ENV,
    Early,
    WorkerGone,
    WorkerProcess,
    memory_limit_mb,
)
from inspector.core.worker.protocol import (
    Batch,
    Call,
    Check,
    Names,
    Ping,
    Reply,
    Request,
    Target,
)
from inspector.core.worker.scrub import scrub, secret_values

__all__ = [
    "DEFAULT_MEMORY_MB",
    "MEMORY_ENV",
    "WorkerGone",
    "WorkerProcess",
    "call",
    "call_many",
    "check",
    "forget",
    "function_names",
    "live_workers",
    "memory_limit_mb",
    "shutdown",
    "start",
    "wake",
]

MAX_IDLE = 2
START_TIMEOUT_S = 60.0  # python start-up and imports, never counted against a call's deadline
LOAD_TIMEOUT_S = 30.0  # importing a user file (at load time, before a turn starts)
# Most calls answer within a millisecond: waiting that long in the kernel first spares them a
# trip through the event loop (a reader registered, a loop iteration); the loop is held up by
# at most this much.
FAST_WAIT_S = 0.001
BATCH = 256  # calls per Batch request: few round trips, no huge pickle of many histories


def _seconds(timeout_s: float) -> float | None:
    return None if math.isinf(timeout_s) else timeout_s


_lock = threading.Lock()
_idle: list[WorkerProcess] = []
_live: set[WorkerProcess] = set()  # started and not yet killed: idle or serving a call
_generation = 0
# Targets a worker loaded fine, with their file's mtime and the generation then: a turn of an
# unchanged scenario skips the round trip.
_checked: dict[Target, tuple[int, int]] = {}


# Workers are started from one thread that lives as long as the app: the worker's
# PR_SET_PDEATHSIG (``child._die_with``) fires when the *thread* that started it ends, so a
# worker started by a short-lived thread (a turn run by ``asyncio.run`` on a pool thread: a
# replay, a sweep arm, a test) was SIGKILLed mid-call once that thread had gone.
SPAWNER_THREAD = "user-code-spawner"
_spawner = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix=SPAWNER_THREAD)


def _take() -> WorkerProcess:
    with _lock:
        while _idle:
            worker = _idle.pop()
            if worker.alive():
                return worker
            _live.discard(worker)
            worker.kill()  # it died while idle (killed from outside)
        worker = _spawner.submit(WorkerProcess).result()
        _live.add(worker)
        return worker


def _give_back(worker: WorkerProcess) -> None:
    """A worker that just answered (alive: a dead one raised ``WorkerGone``) waits idle."""
    with _lock:
        if len(_idle) < MAX_IDLE:
            _idle.append(worker)
            return
        _live.discard(worker)
    worker.kill()


def _retire(worker: WorkerProcess) -> None:
    with _lock:
        _live.discard(worker)
    worker.kill()


def live_workers() -> list[int]:
    """The pids of the workers alive now (idle or serving a call)."""
    with _lock:
        return sorted(w.pid for w in _live if w.alive())


def shutdown() -> None:
    """Kills every worker (at exit; tests)."""
    with _lock:
        workers = list(_live)
        _live.clear()
        _idle.clear()
    for worker in workers:
        worker.kill()


atexit.register(shutdown)


def start(targets: Sequence[Target] = ()) -> None:
    """Starts a worker now unless one is idle, and has it load ``targets`` (a ``Check`` each,
    sent ahead; ``check`` of the same target reads that reply), without waiting: called as
    early as a command knows it will check user code, the worker's start-up and imports
    overlap the app's own (docs/user-code.md, "Started as the scenario is read")."""
    with _lock:
        if any(worker.alive() for worker in _idle):
            return
        worker = _spawner.submit(WorkerProcess).result()
        _live.add(worker)
        _idle.append(worker)
        for target in targets:
            stamp = _stamp(target)
            if stamp is None or _checked.get(target) == (stamp, _generation):
                continue  # a file that cannot be read is the check's to report
            try:
                worker.send(Check((target,), _generation))
            except WorkerGone:
                return  # ``_take`` finds it dead and starts another
            worker.ahead.append(Early(target, _generation, stamp))


def wake() -> None:
    """Has the idle worker the next call takes answer a no-op now, without waiting for it: a
    turn calls this as it starts, so that the worker's wake-up — a process asleep since the
    last turn can take milliseconds to get a CPU again — overlaps the first model call instead
    of delaying the first tool call. Starts no worker; its reply is read and dropped before the
    next request's."""
    with _lock:
        worker = _idle[-1] if _idle else None  # the one ``_take`` hands out next
        if worker is None or not worker.ready or worker.ahead:
            return  # (a worker with requests ahead is busy with them: awake)
        try:
            worker.send(Ping())
        except WorkerGone:
            return  # ``_take`` finds it dead and starts another
        worker.ahead.append(None)


def forget(path: object = None) -> None:
    """The next request makes every worker read the user files afresh, also one saved twice
    within the file system's timestamp granularity (``path`` is accepted for clarity)."""
    global _generation
    _generation += 1


def _clean(reply: Reply) -> Reply:
    """The reply with the environment's secrets out of its captured output and error."""
    if not reply.captured and reply.error is None:
        return reply
    secrets = secret_values(os.environ)
    if not secrets:
        return reply
    return dataclasses.replace(
        reply,
        captured=scrub(reply.captured, secrets),
        error=None if reply.error is None else scrub(reply.error, secrets),
    )


async def call(
    target: Target, args: tuple[Any, ...], kwargs: dict[str, Any], timeout_s: float
) -> Reply:
    """Calls the user function ``target`` in a worker, within ``timeout_s`` (the worker's
    start-up not counted). Every failure is a ``Reply`` with ``error`` set; cancellation kills
    the worker and passes on. Secrets of the environment never appear in ``captured`` or
    ``error`` (``scrub``)."""
    return _clean(await _call(target, args, kwargs, timeout_s))


async def _call(
    target: Target, args: tuple[Any, ...], kwargs: dict[str, Any], timeout_s: float
) -> Reply:
    worker = _take()
    reusable = False
    try:
        try:
            if not worker.ready:
                async with asyncio.timeout(START_TIMEOUT_S):
                    await worker.receive()  # its hello
                    worker.ready = True
            loaded = await _load(worker, target)
        except TimeoutError:
            return Reply(error=f"the user-code worker did not start within {START_TIMEOUT_S:g} s")
        if loaded is not None:
            reusable = not (loaded.retire or loaded.ended)
            return loaded
        worker.send(Call(target, args, kwargs, _generation))
        try:
            try:
                reply = worker.receive_blocking(min(FAST_WAIT_S, timeout_s))
            except TimeoutError:
                async with asyncio.timeout(_seconds(timeout_s)):
                    reply = await worker.receive()
        except TimeoutError:
            return Reply(error=timed_out(timeout_s), captured=worker.captured(), ended=True)
        reusable = not reply.retire
        return reply
    except WorkerGone as gone:
        return Reply(error=str(gone), captured=worker.captured(), ended=True)
    finally:
        if reusable:
            _give_back(worker)
        else:
            _retire(worker)


Item = tuple[tuple[Any, ...], dict[str, Any]]  # (args, kwargs) of one call


async def call_many(
    target: Target, items: Sequence[Item], timeout_s: float, *, stop_when_ended: bool = False
) -> list[Reply]:
    """``call`` for each item, in order, sent in batches (``Batch``): each call still has its
    own deadline, and one that times out or ends its worker gets that reply while the rest go
    to a fresh worker — or, with ``stop_when_ended``, are left out (fewer replies than items)."""
    replies: list[Reply] = []
    while len(replies) < len(items):
        chunk = items[len(replies) : len(replies) + BATCH]
        got = await _batch(target, chunk, timeout_s)
        replies += [_clean(r) for r in got]
        if stop_when_ended and got[-1].ended:
            break
    return replies


async def _batch(target: Target, chunk: Sequence[Item], timeout_s: float) -> list[Reply]:
    """Replies for a prefix of ``chunk`` (all of it unless a call ended its worker)."""
    worker = _take()
    reusable = False
    replies: list[Reply] = []
    try:
        try:
            if not worker.ready:
                async with asyncio.timeout(START_TIMEOUT_S):
                    await worker.receive()  # its hello
                    worker.ready = True
            loaded = await _load(worker, target)
        except TimeoutError:
            error = f"the user-code worker did not start within {START_TIMEOUT_S:g} s"
            return [Reply(error=error) for _ in chunk]
        if loaded is not None:
            reusable = not (loaded.retire or loaded.ended)
            return [loaded for _ in chunk]
        worker.send(Batch(target, tuple(chunk), _generation))
        for _ in chunk:
            try:
                try:
                    reply = worker.receive_blocking(min(FAST_WAIT_S, timeout_s))
                except TimeoutError:
                    async with asyncio.timeout(_seconds(timeout_s)):
                        reply = await worker.receive()
            except TimeoutError:
                replies.append(
                    Reply(error=timed_out(timeout_s), captured=worker.captured(), ended=True)
                )
                return replies
            replies.append(reply)
            if reply.retire:
                return replies
        reusable = True
        return replies
    except WorkerGone as gone:
        replies.append(Reply(error=str(gone), captured=worker.captured(), ended=True))
        return replies
    finally:
        if reusable:
            _give_back(worker)
        else:
            _retire(worker)


async def _load(worker: WorkerProcess, target: Target) -> Reply | None:
    """Has ``worker`` import ``target``'s file first when it has not yet (or the file changed),
    so that the import's time never counts against the call's deadline; the reply of a load
    that failed (None: loaded)."""
    stamp = _stamp(target)
    if stamp is not None and worker.loaded.get(target) == (stamp, _generation):
        return None
    worker.send(Check((target,), _generation))
    try:
        async with asyncio.timeout(LOAD_TIMEOUT_S):
            reply = await worker.receive()
    except TimeoutError:
        file = target.ref.rpartition(":")[0]
        message = f"importing {file} took longer than {LOAD_TIMEOUT_S:g} s"
        return Reply(error=message, load_failed=True, ended=True, captured=worker.captured())
    if reply.error is not None:
        return reply
    if stamp is not None:
        worker.loaded[target] = (stamp, _generation)
    return None


def _blocking(request: Request, timeout_s: float) -> Reply:
    """One request, waiting in this thread (load-time checks, before any event loop runs)."""
    worker = _take()
    reusable = False
    try:
        if not worker.ready:
            worker.receive_blocking(START_TIMEOUT_S)  # its hello
            worker.ready = True
        stamps = [_stamp(t) for t in request.targets] if isinstance(request, Check) else []
        early = _early(worker, request, stamps)
        if early is not None:
            reply = worker.claim(early, _seconds(timeout_s))
        else:
            worker.send(request)
            reply = worker.receive_blocking(_seconds(timeout_s))
        reusable = not reply.retire
        if isinstance(request, Check) and reply.error is None:
            for target, stamp in zip(request.targets, stamps, strict=True):
                if stamp is not None:
                    worker.loaded[target] = (stamp, request.generation)
        return _clean(reply)
    finally:
        if reusable:
            _give_back(worker)
        else:
            _retire(worker)


def _early(worker: WorkerProcess, request: Request, stamps: list[int | None]) -> Early | None:
    """The early Check (``start``) that ``request`` repeats, when its reply is to come or came:
    the same one target, generation and file mtime."""
    if not isinstance(request, Check) or len(request.targets) != 1 or stamps[0] is None:
        return None
    sent = Early(request.targets[0], request.generation, stamps[0])
    return sent if sent in worker.answers or sent in worker.ahead else None


def _load_error(reply: Reply) -> ScenarioError:
    assert reply.error is not None
    return ModuleLoadError(reply.error, reply.file, reply.line)


def check(targets: Sequence[Target], timeout_s: float = LOAD_TIMEOUT_S) -> None:
    """Loads each target in a worker (its file imported there, never in the app): a file that
    is missing, does not compile, raises or exits on import, or lacks the function raises
    ``ModuleLoadError`` (a ``ScenarioError``: one line naming ``target.what``)."""
    for target in targets:
        stamp = _stamp(target)
        if stamp is not None and _checked.get(target) == (stamp, _generation):
            continue
        try:
            reply = _blocking(Check((target,), _generation), timeout_s)
        except TimeoutError:
            raise ScenarioError(
                f"{target.what}: importing {target.ref.rpartition(':')[0]} took longer than "
                f"{timeout_s:g} s"
            ) from None
        except WorkerGone as gone:
            raise ScenarioError(f"{target.what}: loading it ended the worker: {gone}") from None
        if reply.error is not None:
            raise _load_error(reply)
        if stamp is not None:
            _checked[target] = (stamp, _generation)


def _stamp(target: Target) -> int | None:
    """The mtime of ``target``'s file, read before it is loaded (None: cannot be read)."""
    try:
        return os.stat(os.path.join(target.base_dir, target.ref.rpartition(":")[0])).st_mtime_ns
    except (OSError, ValueError):
        return None


def function_names(path: str, timeout_s: float = LOAD_TIMEOUT_S) -> list[str]:
    """The public callables python file ``path`` defines (loaded in a worker)."""
    try:
        reply = _blocking(Names(path, _generation), timeout_s)
    except TimeoutError:
        raise ScenarioError(f"{path}: importing it took longer than {timeout_s:g} s") from None
    except WorkerGone as gone:
        raise ScenarioError(f"{path}: loading it ended the worker: {gone}") from None
    if reply.error is not None:
        raise _load_error(reply)
    return list(reply.value)
