"""The wires' warm-up: what a process's first model request needs is imported before anyone waits."""

from __future__ import annotations

import json
import os
import socket
import ssl
import subprocess
import sys
from pathlib import Path

import pytest

import harnez.wires.clients as clients
from harnez.wires.http import tls_context, tls_context_for

REPO = Path(__file__).resolve().parents[2]

FIRST_REQUEST_MODULES = {"httpcore", "h11", "anyio._backends._asyncio", "certifi"}
"""What httpx imports only when a client is made and its first connection opens."""
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


def run_fresh(script: str) -> list:
    """The JSON `script` prints last, run in a fresh interpreter that has imported harnez.wires.clients
    (`before` holds the modules imported then), with no proxy in its environment."""
    program = f"import json, sys\nimport harnez.wires.clients\nbefore = set(sys.modules)\n{script}\n"
    env = {name: value for name, value in os.environ.items() if name not in PROXY_VARIABLES}
    done = subprocess.run(
        [sys.executable, "-c", program], cwd=REPO, env=env, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.splitlines()[-1])


def test_warming_up_imports_what_the_first_request_needs() -> None:
    imported = run_fresh(
        "harnez.wires.clients.warm_up()\nprint(json.dumps(sorted(set(sys.modules) - before)))"
    )
    assert set(imported) >= FIRST_REQUEST_MODULES


def test_a_client_of_a_plain_http_server_verifies_against_no_roots(monkeypatch) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    plain = tls_context_for("http://127.0.0.1:8080/v1")
    assert plain.verify_mode == ssl.CERT_REQUIRED and plain.check_hostname
    assert plain.get_ca_certs() == [] and plain is not tls_context()
    assert tls_context_for("https://api.openai.com/v1") is tls_context()
    assert tls_context().cert_store_stats()["x509_ca"] > 0


def test_a_client_of_a_plain_http_server_behind_an_https_proxy_verifies_the_proxy(monkeypatch) -> None:
    monkeypatch.setenv("ALL_PROXY", "https://proxy.example.org:3128")
    assert tls_context_for("http://10.0.0.5:8000/v1") is tls_context()


@pytest.mark.parametrize(
    ("base_url", "contexts"), [("http://127.0.0.1:9/v1", 0), ("https://api.example.org/v1", 1)]
)
def test_the_server_loads_the_certificate_store_only_for_a_default_provider_over_https(
    tmp_path: Path, base_url: str, contexts: int
) -> None:
    script = f"""
import asyncio
from pathlib import Path
from harnez.server.server import Server
from harnez.settings import Settings
from harnez.wires.http import tls_context

settings = Settings.model_validate(
    {{"providers": {{"p": {{"wire": "openai-chat", "base_url": {base_url!r}}}}}, "model": "p/x"}}
)

async def warm() -> None:
    server = await Server.open(Path({str(tmp_path / "harnez.sqlite")!r}), settings)
    try:
        await server.warm_up()
    finally:
        await server.close()

asyncio.run(warm())
print(json.dumps([tls_context.cache_info().currsize, "httpcore" in sys.modules]))
"""
    assert run_fresh(script) == [contexts, True]


def test_warming_up_where_no_loopback_listener_can_be_made_does_not_fail(monkeypatch) -> None:
    def refused(*args: object, **kwargs: object) -> socket.socket:
        raise PermissionError("binding is not allowed here")

    monkeypatch.setattr(socket, "create_server", refused)
    clients.warm_up.__wrapped__(tls=False)  # the process's cached warm-up left aside


def test_httpcore_finds_its_async_library_without_searching_for_a_module() -> None:
    """httpcore imports sniffio whenever it sets up a lock (four times a request); where sniffio is
    not installed, each of those imports searched every folder of sys.path again."""
    asked, searched = run_fresh(
        "import asyncio, importlib.abc\n"
        "import httpcore._synchronization as sync\n"
        "searched = []\n"
        "class Recorder(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        searched.append(name)\n"
        "sys.meta_path.insert(0, Recorder())\n"
        "async def main():\n"
        "    return [sync.current_async_library() for _ in range(4)]\n"
        "print(json.dumps([asyncio.run(main()), searched]))"
    )
    assert asked == ["asyncio"] * 4 and searched == []
