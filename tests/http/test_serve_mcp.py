"""`harnez serve`: a harness's MCP servers in its runs — enabled ones offered or warned about, disabled
ones never contacted. The MCP server here is a real one on loopback, written in this module."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from tests.http.helpers import answer, stream_task, validate


@dataclass
class Recorded:
    """One request an MCP test server received."""

    method: str
    headers: dict[str, str]
    body: Any


@dataclass
class McpServer:
    """A small MCP server (Streamable HTTP) on loopback that records every request it gets."""

    url: str
    requests: list[Recorded] = field(default_factory=list)


def _handler(record: McpServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = json.loads(raw or b"null")
            record.requests.append(Recorded("POST", {k.lower(): v for k, v in self.headers.items()}, body))
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_GET(self) -> None:
            record.requests.append(Recorded("GET", {k.lower(): v for k, v in self.headers.items()}, None))
            self.send_response(405)
            self.send_header("Content-Length", "0")
            self.end_headers()

    return Handler


@pytest.fixture
def mcp_server() -> Iterator[McpServer]:
    record = McpServer("")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(record))
    record.url = f"http://127.0.0.1:{httpd.server_address[1]}/mcp"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield record
    finally:
        httpd.shutdown()
        httpd.server_close()


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _harness(client: httpx.Client, servers: list[dict[str, Any]]) -> str:
    made = client.post("/v1/harnesses", json={"name": "Tools", "base": "harnez", "mcp_servers": servers})
    assert made.status_code == 200, made.text
    return str(made.json()["id"])


def _warnings(output: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [item for item in output if item["type"] == "harnez_warning"]


def test_an_unconnected_mcp_server_is_warned_in_the_run_and_a_disabled_one_is_not_contacted(
    served: Any, client: httpx.Client, mcp_server: McpServer
) -> None:
    harness = _harness(
        client,
        [
            {"name": "vault", "url": f"http://127.0.0.1:{_closed_port()}/mcp"},
            {"name": "quiet", "url": mcp_server.url, "enabled": False},
        ],
    )
    served.model.add(answer("done anyway"))
    response, events = stream_task(client, {"input": "look it up", "metadata": {"harness_id": harness}})
    assert response.status_code == 200
    final = events[-1]["response"]
    assert events[-1]["type"] == "response.completed", final
    assert final["output"][-1]["content"][0]["text"] == "done anyway", final["output"]
    streamed = [
        e["item"]
        for e in events
        if e["type"] == "response.output_item.done" and e["item"]["type"] != "message"
    ]
    warned = _warnings(final["output"])
    assert streamed == warned and len(warned) == 1, final["output"]
    assert warned[0]["code"] == "mcp-unavailable"
    assert warned[0]["message"].startswith("MCP server `vault` not connected: "), warned[0]
    validate(warned[0], "OutputItem")
    read_back = client.get(f"/v1/responses/{final['id']}").json()
    assert _warnings(read_back["output"]) == warned
    assert "quiet" not in json.dumps(events)
    assert mcp_server.requests == []  # disabled: never contacted
