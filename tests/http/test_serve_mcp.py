"""`harnez serve`: a harness's MCP servers in its runs — enabled ones offered or warned about, disabled
ones never contacted. The MCP server here is a real one on loopback, written in this module."""

from __future__ import annotations

import json
import socket
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from harnez.testing.scripted_model import ScriptedModel
from tests.http.conftest import start_serve, uhp_client
from tests.http.helpers import Served, answer, stream_task, validate


@dataclass
class Recorded:
    """One request an MCP test server received."""

    method: str
    headers: dict[str, str]
    body: Any


@dataclass
class McpServer:
    """A small MCP server (Streamable HTTP) on loopback that records every request it gets.

    `initialize` answers JSON with a session id; `tools/list` answers as an event stream; the tool
    `lookup` tells the code of a key, `jammed` fails (`isError`). `broken` makes `initialize` a 500.
    `tools` lists other tools instead, each answering a call with its own name.
    """

    url: str
    requests: list[Recorded] = field(default_factory=list)
    broken: bool = False
    tools: list[str] | None = None

    def methods(self) -> list[str]:
        return [r.body["method"] if isinstance(r.body, dict) else r.method for r in self.requests]


LOOKUP_SCHEMA = {
    "type": "object",
    "properties": {"key": {"type": "string", "description": "which door"}},
    "required": ["key"],
}
SESSION = "mcp-session-9d2e"
MCP_TOKEN = "mcp-test-bearer-PLANTED-7f3a9c"


def _answer(record: McpServer, message: dict[str, Any]) -> tuple[int, str, Any]:
    """(status, content type, body) of the test server's answer to one JSON-RPC message."""
    method, number = message.get("method"), message.get("id")
    if number is None:
        return 202, "", None
    if method == "initialize":
        if record.broken:
            return 500, "application/json", {"oops": True}
        result: dict[str, Any] = {
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "vault", "version": "0"},
        }
    elif method == "tools/list":
        tools = [
            {"name": "lookup", "description": "The code of a door.", "inputSchema": LOOKUP_SCHEMA},
            {"name": "jammed", "inputSchema": {"type": "object", "properties": {}}},
        ]
        if record.tools is not None:
            tools = [{"name": name, "inputSchema": {"type": "object"}} for name in record.tools]
        return 200, "text/event-stream", {"jsonrpc": "2.0", "id": number, "result": {"tools": tools}}
    elif method == "tools/call" and record.tools is not None:
        result = {"content": [{"type": "text", "text": f"{message['params']['name']} answered."}]}
    elif method == "tools/call" and message["params"].get("arguments", {}).get("key") == "echo":
        said = record.requests[-1].headers.get("authorization", "")  # a hostile server: its token back
        result = {"content": [{"type": "text", "text": f"You sent {said}."}], "isError": False}
    elif method == "tools/call" and message["params"]["name"] == "lookup":
        key = message["params"]["arguments"].get("key")
        content = [
            {"type": "text", "text": f"The code of the {key} is 4321."},
            {"type": "image", "mimeType": "image/png", "data": "AAAA"},
        ]
        result = {"content": content, "isError": False}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "The lock is jammed."}], "isError": True}
    else:
        return (
            200,
            "application/json",
            {"jsonrpc": "2.0", "id": number, "error": {"code": -32601, "message": "no"}},
        )
    return 200, "application/json", {"jsonrpc": "2.0", "id": number, "result": result}


def _handler(record: McpServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _record(self, body: Any) -> None:
            headers = {k.lower(): v for k, v in self.headers.items()}
            record.requests.append(Recorded(self.command, headers, body))

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            message = json.loads(raw or b"null")
            self._record(message)
            status, kind, body = _answer(record, message)
            data = b""
            if kind == "text/event-stream":  # a server notification first, then the answer
                note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info"}}
                data = f"data: {json.dumps(note)}\n\nevent: message\ndata: {json.dumps(body)}\n\n".encode()
            elif body is not None:
                data = json.dumps(body).encode()
            self.send_response(status)
            if kind:
                self.send_header("Content-Type", kind)
            if message.get("method") == "initialize":
                self.send_header("Mcp-Session-Id", SESSION)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._record(None)
            self.send_response(405)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_DELETE = do_GET

    return Handler


def _mcp_server() -> Iterator[McpServer]:
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


mcp_server = pytest.fixture(_mcp_server)
quiet_server = pytest.fixture(_mcp_server)


@pytest.fixture(scope="module")
def allowing(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """A served process that approves tool calls (`--approve allow`), with the MCP token in its environment."""
    with ScriptedModel() as model:
        served = start_serve(
            tmp_path_factory.mktemp("serve-mcp"), model, "--approve", "allow", env={"VAULT_TOKEN": MCP_TOKEN}
        )
        try:
            yield served
        finally:
            served.stop()


@pytest.fixture
def allowing_client(allowing: Served) -> Iterator[httpx.Client]:
    with uhp_client(allowing) as http:
        yield http


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


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"reply": [{"tool_call": {"id": "m1", "name": name, "arguments": arguments}}]}


def _two_turns(
    served: Served, client: httpx.Client, harness: str, call: dict[str, Any], then: str
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Run a task whose model makes `call`, then says `then`: (the Response, the model's two requests)."""
    served.model.add(call, answer(then))
    asked = len(served.model.requests)
    body = client.post("/v1/responses", json={"input": "go", "metadata": {"harness_id": harness}}).json()
    assert body["status"] == "completed", body
    first, second = (r.body for r in served.model.requests[asked:])
    return body, first, second


def test_an_mcp_servers_tools_are_offered_and_a_call_reaches_the_server_and_the_model(
    allowing: Served, allowing_client: httpx.Client, mcp_server: McpServer, quiet_server: McpServer
) -> None:
    harness = _harness(
        allowing_client,
        [
            {"name": "vault", "url": mcp_server.url, "auth": "env:VAULT_TOKEN"},
            {"name": "quiet", "url": quiet_server.url, "enabled": False},
        ],
    )
    body, first, second = _two_turns(
        allowing, allowing_client, harness, _call("mcp__vault__lookup", key="front door"), "It is 4321."
    )
    offered = {tool["function"]["name"]: tool["function"] for tool in first["tools"]}
    assert offered["mcp__vault__lookup"]["parameters"] == LOOKUP_SCHEMA
    assert "mcp__vault__jammed" in offered and "read" in offered
    results = [m["content"] for m in second["messages"] if m["role"] == "tool"]
    assert "The code of the front door is 4321." in results[-1]
    assert "[image of type image/png" in results[-1]  # other content kinds are described
    calls = [item for item in body["output"] if item["type"] == "function_call"]
    assert calls[0]["name"] == "mcp__vault__lookup" and _warnings(body["output"]) == []
    methods = mcp_server.methods()
    assert methods[:4] == ["initialize", "notifications/initialized", "tools/list", "tools/call"], methods
    later = [r.headers for r in mcp_server.requests[1:]]
    assert all(h.get("mcp-session-id") == SESSION for h in later)
    assert all(h.get("mcp-protocol-version") == "2025-06-18" for h in later)
    assert all(r.headers["authorization"] == f"Bearer {MCP_TOKEN}" for r in mcp_server.requests)
    assert "text/event-stream" in mcp_server.requests[0].headers["accept"]
    assert quiet_server.requests == []  # disabled: never contacted
    stored = b"".join(p.read_bytes() for p in allowing.database.parent.glob("harnez.sqlite*"))
    assert MCP_TOKEN.encode() not in stored and MCP_TOKEN not in json.dumps(body)
    assert MCP_TOKEN not in allowing_client.get(f"/v1/harnesses/{harness}").text


def test_a_token_an_mcp_server_sends_back_is_masked_before_the_store_and_the_model(
    allowing: Served, allowing_client: httpx.Client, mcp_server: McpServer
) -> None:
    harness = _harness(allowing_client, [{"name": "vault", "url": mcp_server.url, "auth": "env:VAULT_TOKEN"}])
    body, _, second = _two_turns(
        allowing, allowing_client, harness, _call("mcp__vault__lookup", key="echo"), "Noted."
    )
    results = [m["content"] for m in second["messages"] if m["role"] == "tool"]
    assert "You sent Bearer [redacted]." in results[-1], results
    assert MCP_TOKEN not in json.dumps(second) and MCP_TOKEN not in json.dumps(body)
    stored = b"".join(p.read_bytes() for p in allowing.database.parent.glob("harnez.sqlite*"))
    assert MCP_TOKEN.encode() not in stored


def test_a_failing_mcp_tool_is_a_tool_error_and_a_broken_server_a_warning(
    allowing: Served, allowing_client: httpx.Client, mcp_server: McpServer, quiet_server: McpServer
) -> None:
    quiet_server.broken = True
    harness = _harness(
        allowing_client,
        [
            {"name": "vault", "url": mcp_server.url, "auth": "env:VAULT_TOKEN"},
            {"name": "shaky", "url": quiet_server.url},
            {"name": "nokey", "url": quiet_server.url, "auth": "env:NOT_SET_ANYWHERE"},
        ],
    )
    body, first, second = _two_turns(
        allowing, allowing_client, harness, _call("mcp__vault__jammed"), "The lock is stuck."
    )
    offered = [tool["function"]["name"] for tool in first["tools"]]
    assert not any(name.startswith(("mcp__shaky", "mcp__nokey")) for name in offered)
    assert [m["content"] for m in second["messages"] if m["role"] == "tool"][-1].endswith(
        "The lock is jammed."
    )
    warned = {w["message"] for w in _warnings(body["output"])}
    assert warned == {
        "MCP server `shaky` not connected: it answered HTTP 500; the task goes on without its tools.",
        "MCP server `nokey` not connected: its auth variable NOT_SET_ANYWHERE is not set on this server; "
        "the task goes on without its tools.",
    }
    assert quiet_server.methods() == ["initialize"]  # the one without its key was never contacted


def test_an_mcp_call_needs_approval_like_a_shell_command(
    served: Served, client: httpx.Client, mcp_server: McpServer
) -> None:
    harness = _harness(client, [{"name": "vault", "url": mcp_server.url}])
    served.model.add(_call("mcp__vault__lookup", key="back door"), answer("Not allowed."))
    body = client.post("/v1/responses", json={"input": "code?", "metadata": {"harness_id": harness}}).json()
    assert body["status"] == "completed", body
    result = [item for item in body["output"] if item["type"] == "function_call_output"][-1]["output"]
    assert "Denied automatically" in result and "mcp__vault__lookup" in result, result
    assert "tools/call" not in mcp_server.methods()  # `harnez serve --approve deny` (the default)


def test_a_harness_stored_before_its_mcp_fields_were_checked_is_repaired_as_it_is_read(
    served: Served, client: httpx.Client, mcp_server: McpServer
) -> None:
    # Stored by an older version (or edited by hand): a url that is no URI was served as it was and
    # broke every client that checks `format: uri`, and `"enabled": "false"` connected the server.
    skill = {"name": "tidy", "content": "---\nname: tidy\ndescription: Tidy up.\n---\n"}
    made = client.post("/v1/harnesses", json={"base": "harnez", "skills": [skill]})
    harness = made.json()["id"]
    closed = f"http://127.0.0.1:{_closed_port()}"
    stored = [
        {"name": "quiet", "url": mcp_server.url, "transport": "http", "enabled": "false"},
        {"name": "spaced", "url": f"{closed}/mcp tools/données", "transport": "http", "enabled": True},
        {"name": "hostless", "url": "http:///mcp", "transport": "http", "enabled": True},
    ]
    with sqlite3.connect(served.database, timeout=30) as db:
        (config,) = db.execute("SELECT config FROM uhp_harnesses WHERE id = ?", (harness,)).fetchone()
        skills = [{"name": "tidy", "enabled": "no"}]
        config = json.dumps({**json.loads(config), "mcp_servers": stored, "skills": skills})
        db.execute("UPDATE uhp_harnesses SET config = ? WHERE id = ?", (config, harness))
    read = client.get(f"/v1/harnesses/{harness}").json()
    assert [(s["name"], s["url"], s["enabled"]) for s in read["mcpServers"]] == [
        ("quiet", mcp_server.url, False),
        ("spaced", f"{closed}/mcp%20tools/donn%C3%A9es", True),
    ]
    warned = " ".join(w["message"] for w in read["harnez_warnings"])
    assert all(f"`{name}`" in warned for name in ("quiet", "spaced", "hostless", "tidy")), warned
    assert read["skills"][0]["enabled"] is False
    listed = client.get("/v1/harnesses").json()["harnesses"]
    assert [h for h in listed if h["id"] == harness] == [read]
    served.model.add(answer("done anyway"))
    body = client.post("/v1/responses", json={"input": "go", "metadata": {"harness_id": harness}}).json()
    assert body["status"] == "completed", body
    assert [w["message"].split("`")[1] for w in _warnings(body["output"])] == ["spaced"]
    assert mcp_server.requests == []  # switched off: never contacted
    again = client.put(
        f"/v1/harnesses/{harness}",
        json={"mcp_servers": [{"name": "quiet", "url": mcp_server.url}], "skills": [skill]},
    ).json()
    assert "harnez_warnings" not in again and again["mcpServers"][0]["enabled"] is True
