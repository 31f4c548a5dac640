"""Discovery of models on a first run: key variables by presence, local servers probed over real loopback."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from harnez.wires.catalogue import KNOWN_MODELS
from harnez.wires.discovery import HOSTED_PROVIDERS, LocalServer, detect_keys, model_ids, probe_local_servers

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
LOADED = 5.0
"""The probe's timeout where a server answers: the product's 0.3 s is for an idle machine, and a loaded
test machine can take longer over loopback; these tests are about what is found, not how fast."""

LISTING = {
    "object": "list",
    "data": [{"id": "qwen3:8b", "object": "model"}, {"id": "llama3.2", "object": "model"}],
}


def http_answer(status: int, body: bytes, content_type: str = "application/json") -> bytes:
    head = (
        f"HTTP/1.1 {status} X\r\ncontent-type: {content_type}\r\ncontent-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode() + body


def answering(status: int, body: bytes, seen: list[str] | None = None) -> Handler:
    """A handler that reads the request head, records its first line and answers once."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        if seen is not None:
            seen.append(head.split(b"\r\n", 1)[0].decode())
        writer.write(http_answer(status, body))
        await writer.drain()
        writer.close()

    return handle


async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Accepts the connection and never answers."""
    await asyncio.Event().wait()


@pytest.fixture
async def serve() -> AsyncIterator[Callable[[Handler], Awaitable[int]]]:
    """Starts loopback servers on random ports for the test; yields a starter returning the port."""
    servers: list[asyncio.Server] = []

    async def start(handler: Handler) -> int:
        server = await asyncio.start_server(handler, "127.0.0.1", 0)
        servers.append(server)
        return server.sockets[0].getsockname()[1]

    yield start
    for server in servers:
        server.close()
        if hasattr(server, "close_clients"):
            server.close_clients()


def free_port() -> int:
    """A port nobody listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def test_a_server_listing_models_is_found_with_its_name_url_and_models(serve) -> None:
    seen: list[str] = []
    port = await serve(answering(200, json.dumps(LISTING).encode(), seen))

    found = await probe_local_servers({port: "ollama"}, timeout=LOADED)

    assert found == [LocalServer("ollama", f"http://127.0.0.1:{port}/v1", ("qwen3:8b", "llama3.2"))]
    assert seen == ["GET /v1/models HTTP/1.1"]


async def test_refused_silent_and_garbage_ports_are_skipped_without_raising(serve) -> None:
    good = await serve(answering(200, json.dumps(LISTING).encode()))
    hanging = await serve(silent)
    not_json = await serve(answering(200, b"<html>hello</html>"))
    wrong_shape = await serve(answering(200, b'{"models": ["x"]}'))
    missing = await serve(answering(404, b'{"error": "not found"}'))

    async def not_http(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"SSH-2.0-OpenSSH_9.6\r\n")
        await writer.drain()
        writer.close()

    garbage = await serve(not_http)
    ports = {
        free_port(): "refused",
        hanging: "hanging",
        not_json: "html",
        wrong_shape: "shape",
        missing: "missing",
        garbage: "garbage",
        good: "vllm",
    }

    # The silent server would hold the probe forever without its timeout; 10 s only guards the test.
    found = await asyncio.wait_for(probe_local_servers(ports, timeout=0.2), 10)

    assert [server.name for server in found] == ["vllm"]


async def test_a_server_with_nothing_loaded_is_found_with_no_models(serve) -> None:
    port = await serve(answering(200, b'{"object": "list", "data": []}'))

    found = await probe_local_servers({port: "lm-studio"}, timeout=LOADED)

    assert found == [LocalServer("lm-studio", f"http://127.0.0.1:{port}/v1", ())]


async def test_nothing_listening_gives_an_empty_list() -> None:
    assert await probe_local_servers({free_port(): "ollama", free_port(): "vllm"}) == []


def test_model_ids_keep_usable_ids_once_in_order() -> None:
    listing = {
        "data": [{"id": "b"}, {"id": "a"}, {"id": "b"}, {"id": ""}, {"id": 3}, "x", {"id": "two words"}]
    }

    assert model_ids(listing) == ("b", "a")
    assert model_ids({"data": "nope"}) is None
    assert model_ids([1, 2]) is None


def test_keys_are_detected_by_presence_only() -> None:
    env = {"OPENAI_API_KEY": "sk-test-secret-value", "ANTHROPIC_API_KEY": "", "PATH": "/bin"}

    found = detect_keys(env)

    assert [provider.name for provider in found] == ["openai"]
    assert "sk-test-secret-value" not in repr(found)
    assert detect_keys({}) == []
    assert [p.key_env for p in detect_keys({"ANTHROPIC_API_KEY": "x", "OPENAI_API_KEY": "y"})] == [
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
    ]


def test_hosted_defaults_are_catalogue_models() -> None:
    for provider in HOSTED_PROVIDERS:
        assert provider.default_model in KNOWN_MODELS
        assert provider.default_ref == f"{provider.name}/{provider.default_model}"
