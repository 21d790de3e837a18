"""Large texts: store size and memory for a reply at the cap and for 50 MB of feedback.

What is measured, for two turns run by the engine on the scripted model and recorded as they
stream:

- ``reply``: one reply of 8 Mi characters (``MAX_REPLY_CHARS``, the cap per reply) in 4 KiB
  words, so it streams as 2,048 pieces; the scenario's script holds it too.
- ``feedback``: a validator whose feedback is 50 MB rejects the first reply; the feedback goes
  into the verdict, the injected message, the next request and the scenario source.
- ``http``, ``http-stream``: the 8 Mi reply from an OpenAI-compatible server on loopback, whole
  (the raw response holds the reply as its content) and streamed in 64-character events (the
  raw response holds every event's JSON: 131,072 of them).

For each: the store file after a checkpoint as a multiple of the payload (the text's UTF-8
bytes), the peak of Python allocations (``tracemalloc``) while the turn runs and is recorded,
and while ``Store.load`` reads it back in a fresh process, each as a multiple of the payload.

Peer, in the same run: the same turn written with every text inline (``texts.TEXT_MIN`` set past
any text: the layout of schema version 6 and before, where a reply was kept in the step row,
the transcript message, the record's output and the script, twice). Goals, texts layout: store
at most 1.1x the payload, load peak at most 2.5x.

Usage: ``python bench/big_texts.py [--write bench/RESULTS.md] [--quick]``. ``--quick`` uses a
1 Mi-character reply and 5 MB of feedback. Exit status 1 when a goal is missed. Each
measurement runs in a child process of its own.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import datetime as dt
import json
import os
import platform
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from results import cpu_model, write_section  # bench/results.py (this folder is on sys.path)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's inspector, not an installed one

SECTION = "## Large texts (bench/big_texts.py)"
REPLY_CHARS, QUICK_REPLY_CHARS = 8 * 1024 * 1024, 1024 * 1024
FEEDBACK_CHARS, QUICK_FEEDBACK_CHARS = 50_000_000, 5_000_000
WORD = 4096
STREAM_PIECE = 64  # characters per event of the HTTP stream (a server sends a few tokens each)
STORE_GOAL, LOAD_GOAL = 1.1, 2.5
LAYOUTS = ("inline", "texts")
# The turns whose large text is one string the run shares. A streamed HTTP reply's raw response
# is its events' JSON, larger than the reply and a text of its own: reported, no goal.
GOAL_CASES = ("reply", "feedback", "http")


def payload(seed: int, chars: int) -> str:
    """ASCII text of ``chars`` characters in ``WORD``-character words."""
    raw = base64.b64encode(random.Random(seed).randbytes(chars)).decode("ascii")[:chars]
    words = [raw[i : i + WORD - 1] for i in range(0, chars, WORD)]
    return " ".join(words)[:chars]


def scenario_toml(case: str, base_url: str = "") -> str:
    """The turn, with ``PAYLOAD`` where the large text goes (a scenario file is at most 4 MB,
    so the text is put in after loading; the run's scenario source holds it all the same)."""
    text = "PAYLOAD"
    if case.startswith("http"):
        return f"""
name = "big-http-reply"
[model]
provider = "openai"
name = "m"
base_url = "{base_url}"
api_key_env = "BIG_TEXTS_KEY"
stream = {"true" if case == "http-stream" else "false"}
[prompt]
user = "Write it all."
[policy]
max_attempts = 1
"""
    if case == "reply":
        return f"""
name = "big-reply"
[model]
provider = "scripted"
stream = true
[prompt]
user = "Write it all."
[policy]
max_attempts = 1
[[script]]
text = "{text}"
"""
    return f"""
name = "big-feedback"
[model]
provider = "scripted"
stream = true
[prompt]
user = "Say hi."
[[validators]]
kind = "max_length"
max = 10
feedback = "{text}"
[policy]
max_attempts = 2
[[script]]
text = "Hello there, this is too long."
[[script]]
text = "Hi."
"""


def file_size(path: Path) -> int:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def serve(server: Any, case: str, text: str) -> None:
    """Queues the server's one reply: ``text`` whole, or as SSE events of ``WORD`` characters."""
    from tests.providers.loopback import json_reply, sse_reply

    if case == "http":
        message = {"role": "assistant", "content": text}
        choice = {"index": 0, "message": message, "finish_reason": "stop"}
        usage = {"prompt_tokens": 5, "completion_tokens": len(text) // 4}
        server.queue(
            json_reply(
                {"id": "x", "object": "chat.completion", "choices": [choice], "usage": usage}
            )
        )
        return
    events = []
    for at in range(0, len(text), STREAM_PIECE):
        piece = text[at : at + STREAM_PIECE]
        delta = {"choices": [{"index": 0, "delta": {"content": piece}}]}
        events.append(f"data: {json.dumps(delta)}\n\n")
    done = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    events += [f"data: {json.dumps(done)}\n\n", "data: [DONE]\n\n"]
    server.queue(sse_reply("".join(events)))


def big_scenario(case: str, chars: int, scenario_path: Path) -> Any:
    from inspector.resources import resolve_scenario

    scenario = resolve_scenario(str(scenario_path), [])
    text = payload(1, chars)
    if case.startswith("http"):
        return scenario
    if case == "reply":
        script = [scenario.script[0].model_copy(update={"text": text})]
        return scenario.model_copy(update={"script": script})
    validators = [scenario.validators[0].model_copy(update={"feedback": text})]
    return scenario.model_copy(update={"validators": validators})


def child_write(
    layout: str, case: str, chars: int, scenario_path: Path, db: Path
) -> dict[str, Any]:
    from inspector.core.events import fan_out
    from inspector.core.loop import run_turn
    from inspector.providers.factory import build_provider
    from inspector.store import Store, texts
    from tests.providers.loopback import LoopbackServer

    if layout == "inline":
        texts.TEXT_MIN = sys.maxsize
        texts.ZIP_MIN = sys.maxsize
    server = LoopbackServer().start()
    if case.startswith("http"):
        scenario_path.write_text(scenario_toml(case, server.base_url), encoding="utf-8")
        serve(server, case, payload(1, chars))
    os.environ["BIG_TEXTS_KEY"] = "not-a-key"
    scenario = big_scenario(case, chars, scenario_path)
    finished: list[Any] = []
    with Store.open(db) as store:
        recorder = store.recorder()
        tracemalloc.start()
        t0 = time.perf_counter()
        record = asyncio.run(
            run_turn(scenario, build_provider(scenario), fan_out(recorder, finished.append))
        )
        seconds = time.perf_counter() - t0
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    server.stop()
    assert recorder.error is None, recorder.error
    assert record.status == "succeeded", (record.status, record.error)
    return {"run_id": record.run_id, "peak": peak, "seconds": seconds, "size": file_size(db)}


def child_load(db: Path, run_id: str) -> dict[str, Any]:
    from inspector.store import Store

    with Store.open(db) as store:
        tracemalloc.start()
        t0 = time.perf_counter()
        record = store.load(run_id)
        seconds = time.perf_counter() - t0
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert record.status == "succeeded"
    return {"peak": peak, "seconds": seconds}


def child(argv: list[str]) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, __file__, "--child", *argv],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    if done.returncode != 0:
        raise SystemExit(f"child {argv} failed:\n{done.stderr}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def measure(folder: Path, case: str, chars: int) -> dict[str, dict[str, Any]]:
    scenario_path = folder / f"{case}.toml"
    scenario_path.write_text(scenario_toml(case), encoding="utf-8")
    out: dict[str, dict[str, Any]] = {}
    for layout in LAYOUTS:
        db = folder / f"{case}-{layout}.sqlite3"
        wrote = child(["write", layout, case, str(chars), str(scenario_path), str(db)])
        loaded = child(["load", str(db), wrote["run_id"]])
        out[layout] = {**wrote, "load_peak": loaded["peak"], "load_seconds": loaded["seconds"]}
        print(
            f"{case} {layout}: store {wrote['size'] / chars:.2f}x, run peak"
            f" {wrote['peak'] / chars:.2f}x, load peak {loaded['peak'] / chars:.2f}x"
            f" ({loaded['seconds']:.2f} s)",
            flush=True,
        )
    return out


def machine() -> str:
    return (
        f"{platform.platform()}; {cpu_model()}; Python {platform.python_version()};"
        f" SQLite {sqlite3.sqlite_version}; nproc {os.cpu_count()}"
    )


def mb(size: float) -> str:
    return f"{size / 1e6:,.1f} MB"


Results = dict[str, tuple[int, dict[str, dict[str, Any]]]]  # case -> (chars, layout -> figures)


def section(results: Results, load: str) -> tuple[str, bool]:
    rows = []
    ok = True
    checks = []
    for case, (chars, by_layout) in results.items():
        for layout in LAYOUTS:
            m = by_layout[layout]
            rows.append(
                f"| {case} ({chars:,} chars) | {layout} | {mb(m['size'])}"
                f" | {m['size'] / chars:.2f}x"
                f" | {m['peak'] / chars:.2f}x | {m['load_peak'] / chars:.2f}x"
                f" | {m['load_seconds']:.2f} | {m['seconds']:.1f} |"
            )
        texts = by_layout["texts"]
        if case not in GOAL_CASES:
            continue
        store_ok = texts["size"] / chars <= STORE_GOAL
        load_ok = texts["load_peak"] / chars <= LOAD_GOAL
        ok = ok and store_ok and load_ok
        checks.append(
            f"- {'PASS' if store_ok else 'FAIL'}: {case}: store {texts['size'] / chars:.2f}x the"
            f" payload (goal ≤ {STORE_GOAL}x; inline {by_layout['inline']['size'] / chars:.2f}x)"
        )
        checks.append(
            f"- {'PASS' if load_ok else 'FAIL'}: {case}: load peak"
            f" {texts['load_peak'] / chars:.2f}x the payload (goal ≤ {LOAD_GOAL}x; inline"
            f" {by_layout['inline']['load_peak'] / chars:.2f}x)"
        )
    text = "\n".join(
        [
            SECTION,
            "",
            "A turn run by the engine on the scripted model and recorded as it streams: `reply`,"
            " one reply at the cap (8 Mi characters, 4 KiB words, 2,048 streamed pieces; the script"
            " holds it too); `feedback`, a validator whose 50 MB feedback rejects the first reply"
            " (in the verdict, the injected message, the next request and the scenario source);"
            " `http`, the same reply from an OpenAI-compatible server on loopback, whole (the raw"
            " response holds it as its content); `http-stream`, streamed in 64-character events"
            " (the raw response keeps every event's JSON)."
            " Store: the SQLite file after a checkpoint; run peak: Python allocations"
            " (`tracemalloc`) while the turn runs and is recorded; load peak: the same during"
            " `Store.load` in a fresh process. Each as a multiple of the payload (the text's"
            " bytes). Peer in the same run: `inline`, the same turn with every text kept inline"
            " (`texts.TEXT_MIN` past any text: the layout of schema 6 and before). Reproduce with"
            " `python bench/big_texts.py --write bench/RESULTS.md`.",
            "",
            f"Measured {dt.date.today().isoformat()}; {machine()}; load average {load}.",
            "",
            "| turn | layout | store | store / payload | run peak / payload"
            " | load peak / payload | load s | run s |",
            "|---|---|---:|---:|---:|---:|---:|---:|",
            *rows,
            "",
            *checks,
            "",
            "Reading: inline, the reply is kept in the step row, the transcript message, the"
            " record's output and the script in the run's header and record; the feedback in"
            " the verdict, the step's feedback message, the messages table (the next request)"
            " and the script in the header and record. With `texts` each is one row, and loading"
            " reads it once: every field that holds it is the same string, so the load peak is"
            " that one string. The run peak is the engine's (its streamed pieces, events,"
            " requests and record hold their own copies), not the store's: it is not a goal"
            " here, and it varies from one run of this bench to the next in either layout"
            " (3x to 16x the payload for the feedback turn, 3.5x to 9x for the reply)."
            " `http-stream` has no goal: its raw response is the events' JSON (about 2x the"
            " reply), stored once and zlib-compressed, and the event log has a row per event;"
            " loaded, the raw events are strings of their own.",
        ]
    )
    return text + "\n", ok


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        what, args = sys.argv[2], sys.argv[3:]
        if what == "write":
            result = child_write(args[0], args[1], int(args[2]), Path(args[3]), Path(args[4]))
        else:
            result = child_load(Path(args[0]), args[1])
        print(json.dumps(result))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, help="update this RESULTS.md section")
    parser.add_argument("--quick", action="store_true", help="smaller texts (a smoke test)")
    args = parser.parse_args()
    reply = QUICK_REPLY_CHARS if args.quick else REPLY_CHARS
    cases = {
        "reply": reply,
        "feedback": QUICK_FEEDBACK_CHARS if args.quick else FEEDBACK_CHARS,
        "http": reply,
        "http-stream": reply,
    }
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    results: Results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for case, chars in cases.items():
            results[case] = (chars, measure(Path(tmp), case, chars))
    text, ok = section(results, load)
    print(text)
    if args.write and not args.quick:
        write_section(args.write, SECTION, text)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
