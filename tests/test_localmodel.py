"""inspector.localmodel without the model: state file, install checks, the server's command line,
stale pids, and start/stop against a stand-in server (a real process answering /v1/models)."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from inspector import localmodel
from inspector.cli import main as cli_main
from inspector.localmodel import LocalModelError, NotInstalled, ServerState

# A stand-in for `python -m llama_cpp.server`: answers GET /v1/models on the port it is given.
# "llama_cpp.server" is on its command line so the pid check takes it for the real one.
FAKE_SERVER = """
import http.server, json, sys
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        ok = self.path == "/v1/models"
        body = json.dumps({"object": "list", "data": [{"id": "fake"}]} if ok else {}).encode()
        self.send_response(200 if ok else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
print("fake server up", flush=True)
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
"""
CRASHING_SERVER = "import sys; print('error loading model: bad magic', flush=True); sys.exit(3)"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(localmodel.DIR_ENV, str(tmp_path))
    monkeypatch.delenv(localmodel.MODEL_ENV, raising=False)
    monkeypatch.delenv(localmodel.PORT_ENV, raising=False)
    return tmp_path


@pytest.fixture
def installed(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Pretends the server is installed: modules that exist, a model file in the home dir."""
    monkeypatch.setattr(localmodel, "SERVER_MODULES", ("json",))
    model = localmodel.model_path()
    model.parent.mkdir(parents=True)
    model.write_bytes(b"GGUF")
    return model


def _fake_command(script: str) -> object:
    def command(model: Path, port: int, **_kw: object) -> list[str]:
        return [sys.executable, "-c", script, str(port), "llama_cpp.server"]

    return command


def server_children_empty() -> bool:
    return not localmodel._children


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_server_command_has_the_known_good_flags_on_loopback() -> None:
    cmd = localmodel.server_command(Path("/m/model.gguf"), 9123, python="/venv/bin/python")
    assert cmd[:3] == ["/venv/bin/python", "-m", "llama_cpp.server"]
    pairs = dict(zip(cmd[3::2], cmd[4::2], strict=True))
    assert pairs == {
        "--model": "/m/model.gguf",
        "--host": "127.0.0.1",
        "--port": "9123",
        "--chat_format": "chatml-function-calling",
        "--n_ctx": "4096",
        "--n_threads": "1",
        "--n_threads_batch": "1",
        "--logits_all": "false",
    }


def test_paths_follow_the_environment(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert localmodel.home_dir() == home
    assert localmodel.model_path() == home / "models" / localmodel.MODEL_FILE
    assert localmodel.state_path() == home / "local-model.json"
    monkeypatch.setenv(localmodel.MODEL_ENV, "/elsewhere/other.gguf")
    assert localmodel.model_path() == Path("/elsewhere/other.gguf")


def test_default_data_dir_is_the_user_data_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(localmodel.DIR_ENV, raising=False)
    assert localmodel.home_dir().name == "agent-inspector"


def test_port_comes_from_the_environment(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert localmodel.default_port() == localmodel.DEFAULT_PORT
    monkeypatch.setenv(localmodel.PORT_ENV, "9001")
    assert localmodel.default_port() == 9001
    monkeypatch.setenv(localmodel.PORT_ENV, "http")
    with pytest.raises(LocalModelError, match="expected a port number"):
        localmodel.default_port()


def test_missing_server_says_what_is_missing_and_the_install_command(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(localmodel, "SERVER_MODULES", ("json", "no_such_module_for_the_test"))
    with pytest.raises(NotInstalled) as caught:
        localmodel.check_installed()
    message = str(caught.value)
    assert "\n" not in message
    assert "no_such_module_for_the_test" in message
    assert "json" not in message.split("missing:")[1]
    assert "`make local-model`" in message


def test_missing_model_file_names_the_path_and_the_install_command(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(localmodel, "SERVER_MODULES", ("json",))
    with pytest.raises(NotInstalled, match=r"no model file at .*gguf; run `make local-model`"):
        localmodel.check_installed()


def test_start_without_the_install_fails_before_spawning_anything(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(localmodel, "SERVER_MODULES", ("no_such_module_for_the_test",))
    with pytest.raises(NotInstalled):
        localmodel.start(port=0)
    assert localmodel.read_state() is None
    assert not (home / localmodel.LOG_FILE).exists()


def test_state_file_round_trip_and_garbage(home: Path) -> None:
    state = ServerState(pid=123, port=8642, model="/m.gguf", log="/l.log", started_at=1.5)
    localmodel.write_state(state)
    assert localmodel.read_state() == state
    assert state.base_url == "http://127.0.0.1:8642/v1"
    localmodel.state_path().write_text("{not json", encoding="utf-8")
    assert localmodel.read_state() is None
    localmodel.clear_state()
    localmodel.clear_state()  # twice is fine
    assert not localmodel.state_path().exists()


def test_a_dead_pid_is_stale_status_stopped_and_the_file_removed(home: Path) -> None:
    pid = _dead_pid()
    localmodel.write_state(ServerState(pid=pid, port=1, model="m", log="l", started_at=0))
    assert localmodel.status().state == "stopped"
    assert not localmodel.state_path().exists()


def test_a_recycled_pid_that_is_not_the_server_is_stale(home: Path) -> None:
    # This test process is alive but is not llama_cpp.server: never signalled, file removed.
    import os

    state = ServerState(pid=os.getpid(), port=1, model="m", log="l", started_at=0)
    localmodel.write_state(state)
    assert localmodel.status().state == "stopped"
    localmodel.write_state(state)
    assert localmodel.stop() is None
    assert not localmodel.state_path().exists()


def test_stop_with_nothing_running(home: Path) -> None:
    assert localmodel.stop() is None


def test_start_waits_until_it_answers_then_status_then_stop(
    installed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(localmodel, "server_command", _fake_command(FAKE_SERVER))
    lines: list[str] = []
    server = localmodel.start(port=0, progress=lines.append)
    try:
        assert localmodel.answers(server.base_url)
        assert localmodel.read_state() == server
        assert server.model == str(installed)
        assert lines[0].startswith(f"starting llama.cpp server on 127.0.0.1:{server.port}")
        assert lines[-1].startswith(f"ready at {server.base_url}")
        current = localmodel.status()
        assert (current.state, current.server) == ("running", server)
        assert localmodel.start(port=0) == server  # already running: the same one
    finally:
        stopped = localmodel.stop()
    assert stopped == server
    assert not localmodel.pid_alive(server.pid)
    assert not localmodel.answers(server.base_url)
    assert localmodel.status().state == "stopped"


def test_a_server_that_dies_while_starting_reports_its_log(
    installed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(localmodel, "server_command", _fake_command(CRASHING_SERVER))
    with pytest.raises(LocalModelError, match=r"exited while starting .*bad magic"):
        localmodel.start(port=0)
    assert localmodel.read_state() is None
    assert server_children_empty()


def test_a_busy_port_is_refused(installed: Path) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(LocalModelError, match=f"port {port} on 127.0.0.1 is in use"):
            localmodel.start(port=port)


def test_cli_status_and_start_without_install(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = io.StringIO()
    assert cli_main(["local-model", "status"], out) == 1
    assert out.getvalue() == "stopped\n"
    monkeypatch.setattr(localmodel, "SERVER_MODULES", ("no_such_module_for_the_test",))
    assert cli_main(["local-model", "start"], io.StringIO()) == 1


def test_cli_start_prints_the_base_url_and_stop(
    installed: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(localmodel, "server_command", _fake_command(FAKE_SERVER))
    out = io.StringIO()
    assert cli_main(["local-model", "start", "--port", "0"], out) == 0
    url = out.getvalue().strip()
    assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
    assert "local-model: ready at" in capsys.readouterr().err
    status_out = io.StringIO()
    assert cli_main(["local-model", "status", "--json"], status_out) == 0
    assert f'"base_url": "{url}"' in status_out.getvalue()
    stop_out = io.StringIO()
    assert cli_main(["local-model", "stop"], stop_out) == 0
    assert stop_out.getvalue() == f"stopped {url}\n"
