"""The real local model server (llama-cpp-python + Gemma 3 270M), started once per session.

Every test here is marked ``local_model`` (``make test-local``); without ``make local-model``
they skip with the install command. The server gets its own free port and state folder, so a
server the user started by hand is neither reused nor stopped.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from inspector import localmodel

# The adapter's capability profile for this server is picked from the URL fragment: the port is
# free-chosen here, not the default 8642 the adapter recognises by itself.
PROFILE_FRAGMENT = "#server=llama.cpp"


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[localmodel.ServerState]:
    try:
        model = localmodel.check_installed()
    except localmodel.NotInstalled as exc:
        pytest.skip(str(exc))
    home = tmp_path_factory.mktemp("local-model")
    server = localmodel.start(port=0, home=home, model=model, timeout_s=45)
    try:
        yield server
    finally:
        localmodel.stop(home)


@pytest.fixture(scope="session")
def base_url(llama_server: localmodel.ServerState) -> str:
    """The server's base URL as a scenario names it (with the adapter's profile)."""
    return llama_server.base_url + PROFILE_FRAGMENT


@pytest.fixture(scope="session")
def plain_url(llama_server: localmodel.ServerState) -> str:
    """The server's base URL for raw HTTP."""
    return llama_server.base_url
