"""The proxy runs with no display: importing it (and the command) loads no Qt, checked in a
fresh interpreter as tests/test_architecture.py does for the engine and the CLI."""

from __future__ import annotations

from tests.test_architecture import GUI, _loaded_after


def test_the_proxy_and_its_command_load_no_qt() -> None:
    loaded = _loaded_after(
        "import inspector.proxy, inspector.proxy.recording, inspector.commands.proxy"
    )
    assert loaded.isdisjoint(GUI), loaded & set(GUI)
    assert "aiohttp" in loaded


def test_the_engine_and_run_command_do_not_load_the_proxys_server() -> None:
    assert "aiohttp" not in _loaded_after("import inspector.cli, inspector.commands.run")
