"""The user-code worker (``inspector.core.worker``): hostile user code — raising, hanging (sync
and async), exiting, ``os._exit``, a 20 GB allocation, 100 MB of prints, an unpicklable return,
threads left running — ends each call within its deadline (asserted as a bound, not a timing)
with the right error, leaves this process and its threads alone, and leaves no worker behind
but the warm idle ones."""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from inspector.core.errors import ScenarioError
from inspector.core.worker import pool
from inspector.core.worker.contexts import ValidatorContext
from inspector.core.worker.ending import clip, died
from inspector.core.worker.process import WorkerProcess
from inspector.core.worker.protocol import CAPTURE_LIMIT, Reply, Target
from inspector.core.worker.scrub import scrub, secret_values

HOSTILE_PY = """
import asyncio
import os
import sys
import threading
import time

def double(x):
    print("doubling", x)
    sys.stderr.write("to stderr\\n")
    return x * 2

def pid(x=None):
    return os.getpid()

def raises(x):
    return {}["missing"]

def hangs(x):
    while True:
        pass

async def hangs_async(x):
    time.sleep(1000)  # blocks its event loop: no await ever returns

async def awaits_forever(x):
    await asyncio.Event().wait()

def exits(x):
    sys.exit(3)

def hard_exit(x):
    print("last words")
    os._exit(7)

def allocates(x):
    return len(bytearray(20 * 2**30))

def prints_100_mb(x):
    chunk = "x" * 999 + "\\n"
    for _ in range(100_000):
        print(chunk, end="")
    return "done"

def native_write(x):
    os.write(1, b"from fd 1\\n")
    return "ok"

def unpicklable(x):
    return lambda: None

def stops(output, ctx):
    ctx.stop()
    return f"attempt {ctx.attempt} step {ctx.step} saw {len(ctx.history)}"

def leaves_a_thread(x):
    threading.Thread(target=time.sleep, args=(1000,), daemon=True).start()
    return "started"

def kill_self(x):
    import signal
    os.kill(os.getpid(), signal.SIGSEGV)
"""


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    (tmp_path / "hostile.py").write_text(HOSTILE_PY, encoding="utf-8")
    return tmp_path


@pytest.fixture(autouse=True)
def _nothing_left_behind() -> Iterator[None]:
    threads = set(threading.enumerate())
    yield
    left = {t for t in threading.enumerate() if not t.name.startswith(pool.SPAWNER_THREAD)}
    assert left <= threads, "a thread outlived its call"
    workers = pool.live_workers()
    assert len(workers) <= pool.MAX_IDLE
    assert set(_children()) <= set(workers), "a process outlived its call"


def _children() -> list[int]:
    """This process's live (not zombie) child processes, from /proc."""
    me = str(os.getpid())
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rpartition(")")[2].split()
        if fields[1] == me and fields[0] != "Z":
            found.append(int(entry))
    return found


def target(folder: Path, name: str) -> Target:
    return Target(f"hostile.py:{name}", str(folder), "test.toml: validators[0].function")


async def call(folder: Path, name: str, *args: object, timeout_s: float = 5.0) -> Reply:
    async with asyncio.timeout(timeout_s + 10):  # a bound, so a hang fails instead of waiting
        return await pool.call(target(folder, name), args, {}, timeout_s)


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


# ---- what works ------------------------------------------------------------------------------


def test_a_worker_outlives_the_thread_whose_turn_started_it(hostile: Path) -> None:
    # Each turn on a thread of its own, as replays, sweeps and tests run them: the worker the
    # first started (and left idle) serves the second after that thread has ended.
    def turn() -> Reply:
        result: list[Reply] = []
        thread = threading.Thread(target=lambda: result.append(asyncio.run(call(hostile, "pid"))))
        thread.start()
        thread.join()
        return result[0]

    first = turn()
    time.sleep(0.2)  # the ended thread's death signal, if any, reaches the worker
    second = turn()
    assert (first.error, second.error) == (None, None)
    assert first.value == second.value  # the same warm worker, not killed and replaced


async def test_a_call_returns_its_value_and_what_it_printed(hostile: Path) -> None:
    reply = await call(hostile, "double", 21)
    assert (reply.value, reply.error) == (42, None)
    assert reply.captured == "doubling 21\nto stderr\n"


async def test_the_warm_worker_is_reused_and_is_not_this_process(hostile: Path) -> None:
    first = (await call(hostile, "pid")).value
    second = (await call(hostile, "pid")).value
    assert first == second != os.getpid()


async def test_native_writes_to_stdout_are_captured_too(hostile: Path) -> None:
    reply = await call(hostile, "native_write", 1)
    assert (reply.value, reply.captured) == ("ok", "from fd 1\n")


async def test_ctx_stop_comes_back(hostile: Path) -> None:
    ctx = ValidatorContext(attempt=2, step=5, history=[{"role": "user", "content": "hi"}])
    reply = await call(hostile, "stops", "output", ctx)
    assert (reply.value, reply.stopped) == ("attempt 2 step 5 saw 1", True)
    assert not ctx.stopped  # the worker had a copy: the caller applies `stopped`


async def test_a_woken_worker_answers_the_next_call_with_its_own_reply(hostile: Path) -> None:
    worker = (await call(hostile, "pid")).value
    pool.wake()
    pool.wake()  # one ping at a time
    assert (await call(hostile, "double", 4)).value == 8
    pool.wake()
    assert [r.value for r in await pool.call_many(target(hostile, "double"), [((1,), {})], 5)] == [
        2
    ]
    pool.wake()
    pool.forget()  # so that check asks the worker again
    pool.check([target(hostile, "pid")])  # a load-time request, answered in this thread
    pool.wake()
    assert (await call(hostile, "pid")).value == worker  # the same worker, woken each time


async def test_waking_a_worker_killed_while_idle_starts_no_trouble(hostile: Path) -> None:
    before = (await call(hostile, "pid")).value
    os.kill(before, 9)
    while alive(before):
        await asyncio.sleep(0.01)
    pool.wake()
    after = (await call(hostile, "pid")).value
    assert after != before


def test_waking_with_no_idle_worker_starts_none() -> None:
    pool.shutdown()
    pool.wake()
    assert pool.live_workers() == []


# ---- hostile code ----------------------------------------------------------------------------


async def test_raising_names_the_exception_and_its_line(hostile: Path) -> None:
    reply = await call(hostile, "raises", 1)
    assert reply.error == "KeyError: 'missing'"
    assert (reply.file, reply.line) == (str((hostile / "hostile.py").resolve()), 17)
    assert not reply.ended


@pytest.mark.parametrize("name", ["hangs", "hangs_async", "awaits_forever"])
async def test_a_hang_is_killed_at_its_deadline_and_replaced(hostile: Path, name: str) -> None:
    before = (await call(hostile, "pid")).value
    reply = await call(hostile, name, 1, timeout_s=0.3)
    assert (reply.error, reply.ended) == ("timed out after 0.3 s", True)
    assert not alive(before)
    after = (await call(hostile, "pid")).value
    assert after != before


async def test_sys_exit_is_an_error_and_the_worker_is_retired(hostile: Path) -> None:
    before = (await call(hostile, "pid")).value
    reply = await call(hostile, "exits", 1)
    assert (reply.error, reply.retire) == ("SystemExit: 3", True)
    assert not alive(before)
    assert (await call(hostile, "double", 1)).value == 2


async def test_os_exit_is_an_error_naming_it_and_keeps_what_was_printed(hostile: Path) -> None:
    reply = await call(hostile, "hard_exit", 1)
    assert reply.error == died(7)
    assert "os._exit" in (reply.error or "")
    assert reply.captured == "last words\n"
    assert (await call(hostile, "double", 1)).value == 2


async def test_a_crash_is_an_error_naming_the_signal(hostile: Path) -> None:
    reply = await call(hostile, "kill_self", 1)
    assert reply.error == (
        "the user-code worker process was killed by a segmentation fault (SIGSEGV) during the call"
    )
    assert (await call(hostile, "double", 1)).value == 2


async def test_a_20_gb_allocation_meets_the_memory_limit(hostile: Path) -> None:
    reply = await call(hostile, "allocates", 1)
    assert (
        reply.error == f"MemoryError: over the user-code memory limit ({pool.DEFAULT_MEMORY_MB} MB)"
    )
    assert reply.retire
    assert (await call(hostile, "double", 1)).value == 2


async def test_100_mb_of_prints_are_capped(hostile: Path) -> None:
    reply = await call(hostile, "prints_100_mb", 1, timeout_s=30)
    assert reply.value == "done"
    kept, _, note = reply.captured.rpartition("\n")
    assert len(kept) == CAPTURE_LIMIT
    assert note == f"[… {100_000_000 - CAPTURE_LIMIT:,} more characters not kept]"


async def test_an_unpicklable_return_is_a_clear_error(hostile: Path) -> None:
    reply = await call(hostile, "unpicklable", 1)
    assert (reply.error or "").startswith(
        "returned a function, which cannot be sent back from the user-code worker (not picklable)"
    )
    assert (await call(hostile, "double", 1)).value == 2


async def test_a_thread_left_running_retires_the_worker(hostile: Path) -> None:
    before = (await call(hostile, "pid")).value
    reply = await call(hostile, "leaves_a_thread", 1)
    assert (reply.value, reply.retire) == ("started", True)
    assert not alive(before)


async def test_cancelling_a_call_kills_its_worker_at_once(hostile: Path) -> None:
    before = (await call(hostile, "pid")).value
    task = asyncio.create_task(call(hostile, "hangs", 1, timeout_s=60))
    await asyncio.sleep(0.2)  # let the call start
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        async with asyncio.timeout(10):
            await task
    assert not alive(before)


# ---- loading --------------------------------------------------------------------------------


def test_loading_an_async_function_makes_the_event_loop_then(tmp_path: Path) -> None:
    """asyncio is imported when an async function is loaded, not during its first call."""
    source = "import sys\n\nasync def coro(x):\n    return x\n\ndef has_asyncio():\n"
    source += "    return 'asyncio' in sys.modules\n"
    (tmp_path / "plain.py").write_text(source, encoding="utf-8")
    pool.shutdown()  # a fresh worker: nothing imported asyncio in it yet
    pool.check([Target("plain.py:coro", str(tmp_path), "test.toml: tools[0].function")])
    reply = asyncio.run(pool.call(Target("plain.py:has_asyncio", str(tmp_path), "t"), (), {}, 5.0))
    assert reply.value is True


def test_a_file_is_imported_in_the_worker_only(tmp_path: Path) -> None:
    (tmp_path / "marks.py").write_text("def f(x):\n    return x\n", encoding="utf-8")
    pool.check([Target("marks.py:f", str(tmp_path), "test.toml: tools[0].function")])
    assert not [m for m in sys.modules if m.startswith("_inspector_user_")]


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("import os\nos._exit(4)\n", "test.toml: tools[0].function: loading it ended the worker: "),
        ("def f(:\n", "test.toml: tools[0].function: bad.py:1: syntax error: "),
        ("x = 1\n", "test.toml: tools[0].function: bad.py has no function 'f'"),
    ],
)
def test_a_file_that_cannot_load_is_a_scenario_error(
    tmp_path: Path, source: str, message: str
) -> None:
    (tmp_path / "bad.py").write_text(source, encoding="utf-8")
    with pytest.raises(ScenarioError) as info:
        pool.check([Target("bad.py:f", str(tmp_path), "test.toml: tools[0].function")])
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)


def test_a_file_hanging_on_import_is_a_scenario_error(tmp_path: Path) -> None:
    (tmp_path / "stuck.py").write_text("while True:\n    pass\n", encoding="utf-8")
    with pytest.raises(ScenarioError) as info:
        pool.check(
            [Target("stuck.py:f", str(tmp_path), "test.toml: tools[0].function")], timeout_s=0.3
        )
    assert str(info.value) == (
        "test.toml: tools[0].function: importing stuck.py took longer than 0.3 s"
    )


async def test_a_call_whose_file_hangs_on_import_retires_its_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "stuck.py").write_text("while True:\n    pass\n", encoding="utf-8")
    monkeypatch.setattr(pool, "LOAD_TIMEOUT_S", 0.3)
    reply = await pool.call(Target("stuck.py:f", str(tmp_path), "t"), (), {}, 5.0)
    assert (reply.error, reply.ended) == ("importing stuck.py took longer than 0.3 s", True)
    assert pool.live_workers() == []  # the worker still importing is not handed out again


async def test_forget_reloads_a_file_saved_within_one_timestamp(tmp_path: Path) -> None:
    path = tmp_path / "hostile.py"
    path.write_text("def f(x):\n    return 1\n", encoding="utf-8")
    stamp = path.stat().st_mtime_ns
    assert (await pool.call(target(tmp_path, "f"), (0,), {}, 5)).value == 1
    path.write_text("def f(x):\n    return 2\n", encoding="utf-8")
    os.utime(path, ns=(stamp, stamp))
    pool.forget(path)
    assert (await pool.call(target(tmp_path, "f"), (0,), {}, 5)).value == 2


# ---- the words (pure) -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "text"),
    [
        (None, "the user-code worker process stopped answering"),
        (
            3,
            "the user-code worker process exited with code 3 during the call (os._exit or a "
            "crash in native code)",
        ),
        (
            -9,
            "the user-code worker process was killed by SIGKILL (the system's out-of-memory "
            "killer, or another process) during the call",
        ),
        (-15, "the user-code worker process was killed by SIGTERM during the call"),
        (-200, "the user-code worker process was killed by signal 200 during the call"),
    ],
)
def test_died(code: int | None, text: str) -> None:
    assert died(code) == text


def test_clip() -> None:
    assert clip("abc", 3) == "abc"
    assert clip("abcdef", 10, limit=4) == "abcd\n[… 6 more characters not kept]"
    assert textwrap.dedent(clip("", 0)) == ""


async def test_what_a_file_prints_when_checked_is_not_a_later_calls_output(
    tmp_path: Path,
) -> None:
    (tmp_path / "hostile.py").write_text(
        "import os\nprint('imported')\nos.write(2, b'native import\\n')\n"
        "def f(x):\n    print('called')\n    return x\n",
        encoding="utf-8",
    )
    pool.check([target(tmp_path, "f")])
    reply = await pool.call(target(tmp_path, "f"), (1,), {}, 5)
    assert (reply.value, reply.captured) == (1, "called\n")
    again = await pool.call(target(tmp_path, "f"), (2,), {}, 5)
    assert again.captured == "called\n"


def test_a_checked_file_is_checked_again_once_it_changes(tmp_path: Path) -> None:
    path = tmp_path / "hostile.py"
    path.write_text("def f(x):\n    return x\n", encoding="utf-8")
    pool.check([target(tmp_path, "f")])
    pool.check([target(tmp_path, "f")])  # unchanged: no worker needed, still fine
    path.write_text("def g(x):\n    return x\n", encoding="utf-8")
    stamp = path.stat().st_mtime_ns + 1_000_000
    os.utime(path, ns=(stamp, stamp))
    with pytest.raises(ScenarioError, match="has no function 'f'"):
        pool.check([target(tmp_path, "f")])


def test_secret_values_and_scrub() -> None:
    environ = {
        "OPENAI_API_KEY": "sk-0123456789abcdef",
        "GITHUB_TOKEN": "ghp_longtokenvalue",
        "DB_PASSWORD": "short",  # too short to hide without blanking ordinary words
        "HOME": "/home/someone/long/path",
    }
    secrets = secret_values(environ)
    assert secrets == ["sk-0123456789abcdef", "ghp_longtokenvalue"]
    text = "key=sk-0123456789abcdef token ghp_longtokenvalue home /home/someone/long/path"
    assert scrub(text, secrets) == "key=[redacted] token [redacted] home /home/someone/long/path"


async def test_a_printed_or_raised_key_never_leaves_the_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INSPECTOR_TEST_API_KEY", "sk-test-0123456789")
    (tmp_path / "hostile.py").write_text(
        "import os\ndef leak(x):\n    key = os.environ['INSPECTOR_TEST_API_KEY']\n"
        "    print('using', key)\n    raise ValueError(f'bad key {key}')\n",
        encoding="utf-8",
    )
    pool.shutdown()  # a worker started now sees the variable
    reply = await pool.call(target(tmp_path, "leak"), (1,), {}, 5)
    assert reply.captured == "using [redacted]\n"
    assert reply.error == "ValueError: bad key [redacted]"


async def test_importing_a_file_does_not_count_against_the_calls_deadline(tmp_path: Path) -> None:
    (tmp_path / "hostile.py").write_text(
        "import time\ntime.sleep(0.6)  # a heavy import\ndef f(x):\n    return x\n",
        encoding="utf-8",
    )
    pool.shutdown()  # fresh workers: the file is imported within this call
    reply = await call(tmp_path, "f", 5, timeout_s=0.3)
    assert (reply.value, reply.error) == (5, None)


# ---- batches (re-validation) --------------------------------------------------------------------

BATCH_PY = """
import sys, time

def judge(x):
    if x == "hang":
        while True:
            pass
    if x == "exit":
        sys.exit(4)
    print("saw", x)
    return x.upper()
"""


async def test_a_batch_answers_each_call_in_order_with_its_own_output(tmp_path: Path) -> None:
    (tmp_path / "hostile.py").write_text(BATCH_PY, encoding="utf-8")
    items = [((f"o{i}",), {}) for i in range(pool.BATCH + 10)]  # two batches
    replies = await pool.call_many(target(tmp_path, "judge"), items, 5)
    assert [r.value for r in replies] == [f"O{i}" for i in range(pool.BATCH + 10)]
    assert [r.captured for r in replies[:2]] == ["saw o0\n", "saw o1\n"]


@pytest.mark.parametrize(("stop", "after"), [(False, ["C", "D"]), (True, [])])
async def test_a_hang_in_a_batch_times_out_alone(
    tmp_path: Path, stop: bool, after: list[str]
) -> None:
    (tmp_path / "hostile.py").write_text(BATCH_PY, encoding="utf-8")
    items = [((x,), {}) for x in ("a", "b", "hang", "c", "d")]
    replies = await pool.call_many(target(tmp_path, "judge"), items, 0.3, stop_when_ended=stop)
    assert [r.value for r in replies[:2]] == ["A", "B"]
    assert (replies[2].error, replies[2].ended) == ("timed out after 0.3 s", True)
    assert [r.value for r in replies[3:]] == after


async def test_an_exit_in_a_batch_retires_its_worker_and_the_rest_go_on(tmp_path: Path) -> None:
    (tmp_path / "hostile.py").write_text(BATCH_PY, encoding="utf-8")
    items = [((x,), {}) for x in ("a", "exit", "b")]
    replies = await pool.call_many(target(tmp_path, "judge"), items, 5)
    assert [(r.value, r.error) for r in replies] == [
        ("A", None),
        (None, "SystemExit: 4"),
        ("B", None),
    ]


def test_a_worker_started_early_serves_the_next_check(tmp_path: Path) -> None:
    """``pool.start`` starts one worker without waiting for it (none while one is idle); the
    next check and call take it."""
    (tmp_path / "early.py").write_text("def f(x):\n    return x + 1\n", encoding="utf-8")
    pool.shutdown()
    pool.start()
    pool.start()
    started = pool.live_workers()
    assert len(started) == 1
    early = Target("early.py:f", str(tmp_path), "test.toml: tools[0].function")
    pool.check([early])
    assert asyncio.run(pool.call(early, (1,), {}, 5.0)).value == 2
    assert pool.live_workers() == started


def _early_files(folder: Path) -> dict[str, Target]:
    sources = {
        "good": "def f(x):\n    return x + 1\n",
        "other": "def f(x):\n    return x + 2\n",
        "broken": "def f(:\n",
        "hangs_on_import": "import time\ntime.sleep(1000)\ndef f(x):\n    return x\n",
    }
    for name, source in sources.items():
        (folder / f"{name}.py").write_text(source, encoding="utf-8")
    return {n: Target(f"{n}.py:f", str(folder), f"test.toml: tools[{n}].function") for n in sources}


def test_a_check_reads_the_reply_of_the_same_check_sent_early(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``pool.start(targets)`` has the worker load them at once; ``check`` of each then reads
    that reply (in any order) instead of asking again, with the same one-line error a check of
    its own gives."""
    targets = _early_files(tmp_path)
    sent: list[object] = []
    real_send = WorkerProcess.send
    monkeypatch.setattr(WorkerProcess, "send", lambda w, r: (sent.append(r), real_send(w, r)))
    pool.shutdown()
    with pytest.raises(ScenarioError) as alone:
        pool.check([targets["broken"]])
    pool.shutdown()
    pool.start([targets["good"], targets["broken"], targets["other"]])
    started = pool.live_workers()
    pool.check([targets["other"]])  # read after the two sent before it
    pool.check([targets["good"]])
    with pytest.raises(ScenarioError) as early:
        pool.check([targets["broken"]])
    assert str(early.value) == str(alone.value)
    assert [type(r).__name__ for r in sent] == ["Check"] * 4  # the one alone, the three early
    assert pool.live_workers() == started
    assert asyncio.run(pool.call(targets["other"], (1,), {}, 5.0)).value == 3


def test_an_early_check_of_a_file_changed_since_is_not_used(tmp_path: Path) -> None:
    targets = _early_files(tmp_path)
    pool.shutdown()
    pool.start([targets["good"]])
    path = tmp_path / "good.py"
    path.write_text("def f(x):\n    return x + 10\n", encoding="utf-8")
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 10**9))  # a later mtime
    pool.check([targets["good"]])
    assert asyncio.run(pool.call(targets["good"], (1,), {}, 5.0)).value == 11


def test_an_early_check_that_hangs_times_out_as_its_own_check_would(tmp_path: Path) -> None:
    targets = _early_files(tmp_path)
    pool.shutdown()
    pool.start([targets["hangs_on_import"]])
    with pytest.raises(ScenarioError, match=r"importing hangs_on_import\.py took longer than 1 s"):
        pool.check([targets["hangs_on_import"]], timeout_s=1.0)
    assert pool.live_workers() == []  # killed, not left importing
    pool.check([targets["good"]])
