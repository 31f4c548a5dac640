"""A real loopback HTTP server that answers the three model wires from a script."""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from harnez.errors import HarnezError
from harnez.testing.formats import RENDERERS, Frame, error_body
from harnez.testing.script import Script, Turn

ROUTES = {"/chat/completions": "chat", "/responses": "responses", "/messages": "anthropic"}
_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
    529: "Overloaded",
}


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """A request exactly as the server received it; header names are lower-cased."""

    method: str
    path: str
    """The request target as sent, query included (`/v1/chat/completions?api-version=1`)."""
    headers: dict[str, str]
    body: Any
    """The JSON body, or the raw text when it was not JSON."""
    peer: str = ""
    """The client's `host:port`: requests sent over one kept-alive connection share it."""


class ScriptedModel:
    """Serves scripted turns over HTTP/1.1 on 127.0.0.1 from its own thread (or `serve()`)."""

    def __init__(self, script: Script | dict[str, Any] | list[Any] | None = None, *, port: int = 0) -> None:
        self.script = script if isinstance(script, Script) else Script.from_data(script or [])
        self.requests: list[RecordedRequest] = []
        self.port = port
        self._lock = threading.Lock()
        self._gates: dict[str, asyncio.Event] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._handlers: set[asyncio.Task[None]] = set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def base_url(self, wire: str) -> str:
        """The `base_url` a provider of that wire should use (OpenAI style includes `/v1`)."""
        return self.url if wire == "anthropic-messages" else f"{self.url}/v1"

    def add(self, *turns: dict[str, Any]) -> None:
        """Append turns (in the script's JSON form)."""
        more = Script.from_data(list(turns)).turns
        with self._lock:
            self.script.turns.extend(more)

    def release(self, gate: str) -> None:
        """Open a named gate: responses held on it go on (now, or as soon as they reach it)."""
        event = self._gate(gate)
        if self._loop is not None:
            self._loop.call_soon_threadsafe(event.set)
        else:
            event.set()

    def _gate(self, name: str) -> asyncio.Event:
        with self._lock:
            return self._gates.setdefault(name, asyncio.Event())

    # --- lifecycle ------------------------------------------------------------------------

    def start(self) -> ScriptedModel:
        """Serve from a background thread; returns once the port is bound."""
        self._thread = threading.Thread(
            target=asyncio.run, args=(self.serve(),), name="scripted-model", daemon=True
        )
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the scripted model did not start listening within 10 s")
        return self

    def stop(self) -> None:
        if self._loop is not None and self._stopping is not None:
            self._loop.call_soon_threadsafe(self._stopping.set)
        if self._thread is not None:
            self._thread.join(10)

    def __enter__(self) -> ScriptedModel:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def serve(self) -> None:
        """Listen until `stop()`; usable directly from an event loop."""
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        server = await asyncio.start_server(self._connection, "127.0.0.1", self.port)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        async with server:
            await self._stopping.wait()
            server.close()
            for task in list(self._handlers):
                task.cancel()
            await asyncio.gather(*self._handlers, return_exceptions=True)

    # --- HTTP -----------------------------------------------------------------------------

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        host, port = writer.get_extra_info("peername")[:2]
        try:
            while True:
                request = await _read_request(reader, f"{host}:{port}")
                if request is None:
                    break
                self.requests.append(request)
                keep_open = await self._respond(request, writer)
                if not keep_open or request.headers.get("connection", "").lower() == "close":
                    break
        except (ConnectionError, asyncio.IncompleteReadError):
            return  # the client went away mid-exchange: nothing left to answer
        except asyncio.CancelledError:
            return  # the server is stopping; ending quietly keeps asyncio's stream callback calm
        finally:
            self._handlers.discard(task)
            writer.close()

    async def _respond(self, request: RecordedRequest, writer: asyncio.StreamWriter) -> bool:
        route = request.path.partition("?")[0]  # a query (`?api-version=…`) routes like its path
        kind = next((k for suffix, k in ROUTES.items() if route.endswith(suffix)), None)
        if request.method != "POST" or kind is None:
            await _send_json(
                writer, 404, {"error": {"message": f"no route for {request.method} {request.path}"}}
            )
            return True
        refusal = _refusal(kind, request.body)
        if refusal is not None:  # what the real API refuses, before a turn is used
            await _send_json(
                writer, 400, {"type": "error", "error": {"type": "invalid_request_error", "message": refusal}}
            )
            return True
        with self._lock:
            turn = self.script.take(route, _last_message(kind, request.body))
        if turn is None:
            message = f"scripted model: the script has no turn left for {request.path}"
            await _send_json(writer, 400, {"error": {"message": message, "type": "script_exhausted"}})
            return True
        if turn.hold and turn.hold_after_chunks == 0:
            await self._gate(turn.hold).wait()
        if turn.status is not None:
            body = turn.body if turn.body is not None else error_body(kind, turn.status)
            await _send_json(writer, turn.status, body, turn.headers)
            return True
        if turn.raw is not None:
            return await self._send_raw(writer, turn)
        body = request.body if isinstance(request.body, dict) else {}
        model = turn.model or str(body.get("model", "scripted"))
        frames_of, body_of = RENDERERS[kind]
        if not body.get("stream") or turn.whole:
            await _send_json(writer, 200, body_of(turn, model), turn.headers)
            return True
        return await self._stream(writer, turn, kind, frames_of(turn, model, body))

    async def _stream(self, writer: asyncio.StreamWriter, turn: Turn, kind: str, frames: list[Frame]) -> bool:
        head = {
            "content-type": "text/event-stream",
            "cache-control": "no-cache",
            "transfer-encoding": "chunked",
        }
        writer.write(_head(200, {**head, **turn.headers}))
        for sent, frame in enumerate(frames):
            if not await self._pace(writer, turn, sent):
                return False
            writer.write(_chunk(frame.encode()))
            if sent == 0:
                self._inject(writer, turn, kind)
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True

    async def _pace(self, writer: asyncio.StreamWriter, turn: Turn, sent: int) -> bool:
        """Before chunk number `sent`: the turn's faults (False: the connection was dropped)."""
        if turn.cut_after_chunks is not None and sent >= turn.cut_after_chunks:
            await writer.drain()
            writer.transport.abort()
            return False
        if turn.hold and sent == turn.hold_after_chunks and sent > 0:
            await writer.drain()
            await self._gate(turn.hold).wait()
        if turn.delay_per_chunk:
            await writer.drain()
            await asyncio.sleep(turn.delay_per_chunk)
        return True

    async def _send_raw(self, writer: asyncio.StreamWriter, turn: Turn) -> bool:
        """A turn's `raw` body, as given, in the framing and pieces it names."""
        assert turn.raw is not None
        data = turn.raw.encode()
        head = {"content-type": "text/event-stream", "cache-control": "no-cache"}
        if turn.gzip:
            data = gzip.compress(data)
            head["content-encoding"] = "gzip"
        if turn.framing == "chunked":
            head["transfer-encoding"] = "chunked"
        elif turn.framing == "length":
            head["content-length"] = str(len(data))
        else:
            head["connection"] = "close"
        writer.write(_head(200, {**head, **turn.headers}))
        size = turn.raw_bytes or len(data) or 1
        for sent, start in enumerate(range(0, len(data), size)):
            if not await self._pace(writer, turn, sent):
                return False
            piece = data[start : start + size]
            writer.write(_chunk(piece) if turn.framing == "chunked" else piece)
            await writer.drain()
        if turn.framing == "chunked":
            writer.write(b"0\r\n\r\n")
            await writer.drain()
        return turn.framing != "close"

    def _inject(self, writer: asyncio.StreamWriter, turn: Turn, kind: str) -> None:
        """Faults placed right after the first frame: a malformed line, an unknown item."""
        if turn.malformed_line is not None:
            writer.write(_chunk(f"{turn.malformed_line}\n\n".encode()))
        if turn.unknown_item is not None:
            name = turn.unknown_item.get("type") if kind != "chat" else None
            writer.write(_chunk(Frame(name, turn.unknown_item).encode()))


def _refusal(kind: str, body: Any) -> str | None:
    """Why the real API would refuse this request outright, for the rules a client can break without
    noticing against a lenient mock. Anthropic's: tool_use / tool_result blocks in a request that
    defines no tools; a tool_use whose tool_result does not open the next message; an empty text
    block; a first message that is not the user's."""
    if not isinstance(body, dict):
        return None
    if kind == "chat":
        return _chat_refusal([m for m in body.get("messages") or () if isinstance(m, dict)])
    if kind == "responses":
        return _responses_refusal([i for i in body.get("input") or () if isinstance(i, dict)])
    messages = [m for m in body.get("messages") or () if isinstance(m, dict)]
    blocks = [_blocks(m) for m in messages]
    kinds = {block.get("type") for content in blocks for block in content}
    if not body.get("tools") and kinds & {"tool_use", "tool_result"}:
        return "Requests which include `tool_use` or `tool_result` blocks must define tools."
    if messages and messages[0].get("role") != "user":
        return 'messages: first message must use the "user" role'
    for index, content in enumerate(blocks):
        if any(block.get("type") == "text" and not block.get("text") for block in content):
            return f"messages.{index}: text content blocks must be non-empty"
        asked = [block.get("id") for block in content if block.get("type") == "tool_use"]
        after = blocks[index + 1] if index + 1 < len(blocks) else None
        answered = {block.get("tool_use_id") for block in after or () if block.get("type") == "tool_result"}
        missing = [call for call in asked if call not in answered]
        if missing and after is not None:
            return (
                f"messages.{index + 1}: `tool_use` ids were found without `tool_result` blocks immediately "
                f"after: {', '.join(map(str, missing))}. Each `tool_use` block must have a corresponding "
                "`tool_result` block in the next message."
            )
    return None


def _chat_refusal(messages: list[dict[str, Any]]) -> str | None:
    """OpenAI's Chat Completions rules on tool messages: each answers a call of the assistant message
    just before the run of tool messages it is in, and every such call is answered before anything else."""
    open_calls: set[str] = set()
    for index, message in enumerate(messages):
        if message.get("role") == "tool":
            if message.get("tool_call_id") not in open_calls:
                return (
                    f"Invalid parameter: messages with role 'tool' must be a response to a preceeding "
                    f"message with 'tool_calls' (messages.[{index}])."
                )
            open_calls.discard(message.get("tool_call_id"))
            continue
        if open_calls:
            return (
                "An assistant message with 'tool_calls' must be followed by tool messages responding to "
                f"each 'tool_call_id'. The following tool_call_ids did not have response messages: "
                f"{', '.join(sorted(open_calls))}"
            )
        calls = message.get("tool_calls") if message.get("role") == "assistant" else None
        open_calls = {str(call.get("id")) for call in calls or () if isinstance(call, dict)}
    return None


def _responses_refusal(items: list[dict[str, Any]]) -> str | None:
    """OpenAI's Responses rule: a function call output answers a function call given before it."""
    called: set[Any] = set()
    for item in items:
        if item.get("type") == "function_call":
            called.add(item.get("call_id"))
        elif item.get("type") == "function_call_output" and item.get("call_id") not in called:
            return f"No tool call found for function call output with call_id {item.get('call_id')}."
    return None


def _last_message(kind: str, body: Any) -> str:
    """`tool-result` when the request's last message gives a tool's result back, else `prompt`."""
    items = body.get("input" if kind == "responses" else "messages") if isinstance(body, dict) else None
    last = items[-1] if isinstance(items, list) and items and isinstance(items[-1], dict) else {}
    if kind == "chat":
        answered = last.get("role") == "tool"
    elif kind == "responses":
        answered = last.get("type") == "function_call_output"
    else:
        answered = any(block.get("type") == "tool_result" for block in _blocks(last))
    return "tool-result" if answered else "prompt"


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A message's content blocks (a string content is one text block)."""
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content or () if isinstance(block, dict)]


async def _read_request(reader: asyncio.StreamReader, peer: str) -> RecordedRequest | None:
    line = await reader.readline()
    if not line.strip():
        return None
    method, target, _version = line.decode("latin-1").split(" ", 2)
    headers: dict[str, str] = {}
    while (raw := await reader.readline()) not in (b"\r\n", b"\n", b""):
        name, _, value = raw.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    data = await reader.readexactly(int(headers.get("content-length", "0")))
    try:
        body: Any = json.loads(data) if data else None
    except json.JSONDecodeError:
        body = data.decode("utf-8", "replace")
    return RecordedRequest(method, target, headers, body, peer)


def _head(status: int, headers: Mapping[str, str | None]) -> bytes:
    """A response's status line and headers; a header given as None is not sent (a server that
    labels its stream with no content-type)."""
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}"] + [
        f"{k}: {v}" for k, v in headers.items() if v is not None
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


async def _send_json(
    writer: asyncio.StreamWriter, status: int, body: Any, headers: Mapping[str, str | None] | None = None
) -> None:
    data = (body if isinstance(body, str) else json.dumps(body)).encode()
    head: dict[str, str | None] = {
        "content-type": "application/json",
        "content-length": str(len(data)),
        **(headers or {}),
    }
    writer.write(_head(status, head) + data)
    await writer.drain()


DEMO_SCRIPT = "demo.json"
"""The demo shipped with the package (`--demo`): a looping script that reasons, lists the workspace
with a tool and explains what happened, for trying Harnez without a model account."""


def demo_script() -> Script:
    """The built-in demo script."""
    return Script.from_data(json.loads((resources.files("harnez.testing") / DEMO_SCRIPT).read_text("utf-8")))


def demo_settings(url: str) -> str:
    """The project settings that point Harnez at a scripted model served at `url`."""
    return json.dumps(
        {
            "providers": {"scripted": {"wire": "openai-chat", "base_url": f"{url}/v1"}},
            "model": "scripted/demo",
        }
    )


def main(argv: list[str] | None = None) -> None:
    """`python -m harnez.testing.scripted_model (--demo | --script FILE) [--port N]`."""
    parser = argparse.ArgumentParser(
        description="Serve a scripted model on 127.0.0.1 for trying or testing Harnez."
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--demo", action="store_true", help="serve the built-in demo, round and round")
    source.add_argument("--script", type=Path, help="a JSON (or YAML) script, see docs/wires.md")
    parser.add_argument("--port", type=int, default=0, help="the port to listen on (0 picks a free one)")
    args = parser.parse_args(argv)
    try:
        script = demo_script() if args.demo else Script.from_file(args.script)
    except OSError as exc:
        parser.exit(
            2, f"scripted model: cannot read the script {args.script} ({exc.strerror}); check the path\n"
        )
    except HarnezError as exc:
        parser.exit(2, f"scripted model: {exc.message}\n")
    model = ScriptedModel(script, port=args.port)

    async def run() -> None:
        task = asyncio.create_task(model.serve())
        while not model._ready.is_set():
            if task.done():
                await task  # it could not listen: its error ends the run
            await asyncio.sleep(0.01)
        print(f"scripted model listening on {model.url}", flush=True)
        print(f"point Harnez at it with this .harnez/settings.json: {demo_settings(model.url)}", flush=True)
        await task

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        sys.exit(0)
    except OSError as exc:  # the port is taken
        parser.exit(
            2,
            f"scripted model: cannot listen on 127.0.0.1:{args.port} ({exc.strerror}); "
            "pick another --port (0 picks a free one)\n",
        )


if __name__ == "__main__":
    main()
