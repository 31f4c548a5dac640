"""A minimal MCP client: a UHP harness's MCP servers, connected for one task, their tools offered.

Streamable HTTP only: every JSON-RPC 2.0 message is a POST to the server's one endpoint, answered by
`application/json` or by a `text/event-stream` that carries the response; the `Mcp-Session-Id` the
server gives at `initialize` goes on every later request, with the negotiated `MCP-Protocol-Version`.
A task connects each enabled server (`initialize`, `notifications/initialized`, `tools/list`) and
offers its tools as `mcp__<server>__<tool>` (a name longer than the providers' 64 characters, or
taken by another tool, cut and tagged: `tagged_name`); a call is a `tools/call`. A server that cannot be
reached or answers badly is left out with the reason (the task warns and goes on); a failing call is
a tool error. `auth: "env:NAME"` is read from the environment when connecting and sent as a bearer
token: it is kept in no event, message or store.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import json
import os
import re
import ssl
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import httpx
from pydantic import ConfigDict

from harnez.redaction import SECRETS
from harnez.tools.base import Operation, Tool, ToolContext, ToolKind, ToolParams, ToolResult, WorkspacePath

PROTOCOL_VERSION = "2025-06-18"
"""The MCP revision this client asks for (a server may answer with another it speaks)."""
CONNECT_SECONDS = 10.0
"""The most a server may take to connect and list its tools, at the start of a task."""
CALL_SECONDS = 120.0
"""The most one tool call may take."""
MAX_TOOL_PAGES = 20
MAX_RESULT_CHARS = 100_000
"""A tool result longer than this is cut (the model is told how much was left out)."""
_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]")
MAX_NAME_CHARS = 64
"""The longest tool name the providers take (OpenAI's and Anthropic's limit)."""
TAG_CHARS = 8
STEM_CHARS = MAX_NAME_CHARS - TAG_CHARS - 1
"""How much of a tagged name is the start of its whole name (then `_` and the tag)."""
_TAGGED = re.compile(rf".{{{STEM_CHARS}}}_[0-9a-f]{{{TAG_CHARS}}}")
_CLIENT_INFO = {"name": "harnez", "version": "1"}


class McpError(Exception):
    """An MCP server could not be used, or refused a request; the message says why (no credential)."""


@dataclass(frozen=True, slots=True)
class Unavailable:
    """An enabled server the task goes on without, and why."""

    name: str
    why: str


class McpSession:
    """One connection to one MCP server over Streamable HTTP (JSON-RPC over POST)."""

    def __init__(self, name: str, url: str, headers: dict[str, str], client: httpx.AsyncClient) -> None:
        self.name, self.url = name, url
        self._headers = {
            **headers,
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        }
        self._client = client
        self._ids = itertools.count(1)
        self._session_id: str | None = None

    async def initialize(self) -> None:
        """The handshake: `initialize`, then `notifications/initialized`; keeps the session id and version."""
        result = await self.request(
            "initialize",
            {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": _CLIENT_INFO},
        )
        version = result.get("protocolVersion")
        self._headers["MCP-Protocol-Version"] = version if isinstance(version, str) else PROTOCOL_VERSION
        await self.notify("notifications/initialized")

    async def list_tools(self) -> list[dict[str, Any]]:
        """Every tool the server lists (following `nextCursor`), each with a name."""
        tools: list[dict[str, Any]] = []
        cursor: Any = None
        for _ in range(MAX_TOOL_PAGES):
            result = await self.request("tools/list", {"cursor": cursor} if cursor else {})
            listed = result.get("tools")
            if not isinstance(listed, list):
                raise McpError("its tools/list answer has no list of tools")
            tools += [t for t in listed if isinstance(t, dict) and isinstance(t.get("name"), str)]
            cursor = result.get("nextCursor")
            if not cursor:
                break
        return tools

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return await self.request("tools/call", {"name": name, "arguments": arguments}, CALL_SECONDS)

    async def notify(self, method: str) -> None:
        async with self._post({"jsonrpc": "2.0", "method": method}) as response:
            await response.aread()
            _check_status(response)

    async def request(
        self, method: str, params: dict[str, Any], seconds: float | None = None
    ) -> dict[str, Any]:
        """The `result` of a JSON-RPC request; McpError for an error answer, a bad status or shape."""
        number = next(self._ids)
        message = {"jsonrpc": "2.0", "id": number, "method": method, "params": params}
        async with self._post(message, seconds) as response:
            if response.status_code >= 400:
                await response.aread()
            _check_status(response)
            if response.headers.get("mcp-session-id"):
                self._session_id = response.headers["mcp-session-id"]
            kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
            if kind == "text/event-stream":
                async for data in _sse_data(response):
                    answer = _answer_to(_parse(data), number)
                    if answer is not None:
                        return _result(answer, method)
                raise McpError(f"its event stream ended without an answer to {method}")
            answer = _answer_to(_parse((await response.aread()).decode("utf-8", "replace")), number)
            if answer is None:
                raise McpError(f"it sent no answer to {method}")
            return _result(answer, method)

    async def close(self) -> None:
        """End the server's session (best effort: a server may not support it)."""
        if self._session_id is None:
            return
        with contextlib.suppress(httpx.HTTPError):
            await self._client.delete(self.url, headers=self._session_headers(), timeout=3.0)

    def _session_headers(self) -> dict[str, str]:
        extra = {"Mcp-Session-Id": self._session_id} if self._session_id else {}
        return {**self._headers, **extra}

    def _post(self, message: dict[str, Any], seconds: float | None = None) -> Any:
        return self._client.stream(
            "POST",
            self.url,
            content=json.dumps(message),
            headers=self._session_headers(),
            timeout=seconds or CONNECT_SECONDS,
        )


def _check_status(response: httpx.Response) -> None:
    if response.status_code >= 400:
        raise McpError(f"it answered HTTP {response.status_code}")


async def _sse_data(response: httpx.Response) -> AsyncIterator[str]:
    """The data of each event of an SSE body."""
    lines: list[str] = []
    async for line in response.aiter_lines():
        if line.startswith("data:"):
            lines.append(line[5:].removeprefix(" "))
        elif not line and lines:
            yield "\n".join(lines)
            lines = []
    if lines:
        yield "\n".join(lines)


def _parse(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise McpError("it sent a body that is not JSON") from None


def _answer_to(message: Any, number: int) -> dict[str, Any] | None:
    """The response to request `number` in a message or batch (server notifications are skipped)."""
    for item in message if isinstance(message, list) else [message]:
        if isinstance(item, dict) and item.get("id") == number and ("result" in item or "error" in item):
            return item
    return None


def _result(answer: dict[str, Any], method: str) -> dict[str, Any]:
    error = answer.get("error")
    if error is not None:
        detail = error.get("message") if isinstance(error, dict) else error
        raise McpError(f"it refused {method}: {detail}")
    result = answer.get("result")
    if not isinstance(result, dict):
        raise McpError(f"its answer to {method} is not an object")
    return result


# tools ---------------------------------------------------------------------------------------------


class McpParams(ToolParams):
    """Any JSON object: the MCP server checks the arguments against its own schema."""

    model_config = ConfigDict(extra="allow", frozen=True)


class McpTool(Tool):
    """A tool of an MCP server; calls go to the server. Not read-only: it asks like a shell command."""

    name: ClassVar[str] = "mcp"
    full_name: ClassVar[str] = "mcp"
    """`mcp__<server>__<tool>` uncut, the name a person may give it (`name` is what the model sees)."""
    description: ClassVar[str] = "A tool of an MCP server."
    parameters: ClassVar[type[ToolParams]] = McpParams
    kind: ClassVar[ToolKind] = "remote"
    operation: ClassVar[Operation] = "other"

    def __init__(self, session: McpSession, tool: str, schema: dict[str, Any]) -> None:
        self.session, self.tool, self.schema = session, tool, schema

    @property
    def rule_names(self) -> tuple[str, ...]:
        """The name offered, and the whole `mcp__<server>__<tool>` when that one was cut and tagged."""
        return (self.name,) if self.full_name == self.name else (self.name, self.full_name)

    def input_schema(self) -> dict[str, Any]:
        return self.schema

    def targets(self, args: ToolParams, workspace: Any) -> list[WorkspacePath]:
        return []  # its arguments mean what the server says, never a workspace path

    async def run(self, args: ToolParams, ctx: ToolContext) -> ToolResult:
        try:
            result = await self.session.call_tool(self.tool, args.model_dump())
        except McpError as exc:  # its words: masked, as its results are
            return ToolResult.error(SECRETS.redact(f"The MCP server `{self.session.name}` failed: {exc}."))
        except httpx.HTTPError as exc:
            return ToolResult.error(f"The MCP server `{self.session.name}` failed: {_why(exc)}.")
        except Exception as exc:  # a broken server never ends the task
            return ToolResult.error(f"The MCP server `{self.session.name}` failed ({type(exc).__name__}).")
        text = SECRETS.redact(result_text(result))  # a server that sends its token back (or another)
        if result.get("isError") is True:
            return ToolResult.error(text or f"The MCP tool {self.tool} failed without a message.")
        return ToolResult(text, {"server": self.session.name, "tool": self.tool})


def full_name(server: str, tool: str) -> str:
    """`mcp__<server>__<tool>`, uncut (characters a tool name may not hold made `_`)."""
    return f"mcp__{_NAME_CHARS.sub('_', server)}__{_NAME_CHARS.sub('_', tool)}"


def server_prefix(server: str) -> str:
    """`mcp__<server>__`: how the whole name of each of SERVER's tools starts."""
    return full_name(server, "")


def tagged_name(server: str, tool: str) -> str:
    """A name for a tool whose whole name is too long for the providers or taken by another tool (two
    names the same once cut, or once made of allowed characters): its first 55 characters (all of it
    when shorter), `_` and 8 hex digits of the SHA-256 of server and tool. At most 64 characters,
    another for every tool, and the same in every task, so a child session continued later finds the
    tools its delegation gave it."""
    tag = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:TAG_CHARS]
    return f"{full_name(server, tool)[:STEM_CHARS]}_{tag}"


def public_name(server: str, tool: str) -> str:
    """The name the model is offered: the whole name when it fits the providers' 64 characters."""
    whole = full_name(server, tool)
    return whole if len(whole) <= MAX_NAME_CHARS else tagged_name(server, tool)


def may_be_of(tool: str, server: str) -> bool:
    """Whether TOOL, an offered name, can be one of SERVER's tools, from the name alone (a child session
    continued later keeps only its tools' names): it starts `mcp__<server>__`, or, tagged, with as
    much of that as its 55 characters hold. (Its delegation had the tools: `child_options`.)"""
    prefix = server_prefix(server)
    if len(prefix) > STEM_CHARS and _TAGGED.fullmatch(tool):
        return prefix.startswith(tool[:STEM_CHARS])
    return tool.startswith(prefix)


def mcp_tool(session: McpSession, spec: dict[str, Any], public: str | None = None) -> McpTool:
    """The tool a listed MCP tool becomes: `public` (else `public_name`) with the server's schema."""
    whole = full_name(session.name, spec["name"])
    public = public or public_name(session.name, spec["name"])
    schema = spec.get("inputSchema")
    if not isinstance(schema, dict) or schema.get("type") != "object":
        schema = {"type": "object", "properties": {}}
    description = spec.get("description") if isinstance(spec.get("description"), str) else ""
    described = SECRETS.redact(
        f"{description}\n\n(Tool `{spec['name']}` of the MCP server `{session.name}`.)".strip()
    )
    kind = type("McpServerTool", (McpTool,), {"name": public, "full_name": whole, "description": described})
    return kind(session, spec["name"], schema)


def result_text(result: dict[str, Any]) -> str:
    """A `tools/call` result as text: text content as is, other kinds described, structured content as JSON."""
    parts: list[str] = []
    for block in result.get("content") or ():
        if not isinstance(block, dict):
            continue
        match block.get("type"):
            case "text":
                parts.append(str(block.get("text", "")))
            case "image" | "audio" as kind:
                size = len(str(block.get("data", ""))) * 3 // 4
                parts.append(
                    f"[{kind} of type {block.get('mimeType', 'unknown')}, about {size} bytes, not shown]"
                )
            case "resource_link":
                parts.append(
                    f"[resource link: {block.get('uri', '')} {block.get('name', '')}]".replace(" ]", "]")
                )
            case "resource":
                found = block.get("resource")
                resource: dict[str, Any] = found if isinstance(found, dict) else {}
                if isinstance(resource.get("text"), str):
                    parts.append(resource["text"])
                else:
                    parts.append(
                        f"[resource {resource.get('uri', '')} ({resource.get('mimeType', 'binary')}), not shown]"
                    )
            case other:
                parts.append(f"[content of type {other!r}, not shown]")
    if not parts and result.get("structuredContent") is not None:
        parts.append(json.dumps(result["structuredContent"], ensure_ascii=False))
    text = "\n".join(parts)
    if len(text) > MAX_RESULT_CHARS:
        text = text[:MAX_RESULT_CHARS] + f"\n[… {len(text) - MAX_RESULT_CHARS} more characters not shown]"
    return text


# a task's servers ----------------------------------------------------------------------------------


class McpConnections:
    """The MCP servers of one task: those connected (their tools) and those it goes on without."""

    def __init__(self, client: httpx.AsyncClient | None = None) -> None:
        self._client = client
        self.sessions: list[McpSession] = []
        self.tools: list[Tool] = []
        self.unavailable: list[Unavailable] = []

    @classmethod
    async def open(
        cls,
        servers: tuple[dict[str, Any], ...],
        env: Callable[[str], str | None] = os.environ.get,
        verify: ssl.SSLContext | bool = True,
    ) -> McpConnections:
        """Connect every server given (the enabled ones: a disabled one must not be passed) side by
        side; `verify`: the TLS context (the process's: a new one loads the certificate store, ~80 ms
        of CPU on the event loop)."""
        if not servers:
            return cls()
        connections = cls(httpx.AsyncClient(follow_redirects=False, verify=verify))
        try:
            found = await asyncio.gather(*(connections._connect(server, env) for server in servers))
        except BaseException:  # cancelled while connecting: nothing stays open
            await asyncio.shield(connections.aclose())
            raise
        names: set[str] = set()
        for entry in found:
            if isinstance(entry, Unavailable):
                connections.unavailable.append(entry)
                continue
            session, listed = entry
            for spec in listed:
                name = public_name(session.name, spec["name"])
                if name in names:  # another tool's: the same once cut or made of allowed characters
                    name = tagged_name(session.name, spec["name"])
                if name not in names:
                    names.add(name)
                    connections.tools.append(mcp_tool(session, spec, name))
        return connections

    async def _connect(
        self, server: dict[str, Any], env: Callable[[str], str | None]
    ) -> tuple[McpSession, list[dict[str, Any]]] | Unavailable:
        name = str(server["name"])
        if server.get("transport", "http") != "http":
            return Unavailable(
                name, f"the {server.get('transport')!r} transport is not supported (only http)"
            )
        headers = {str(k): str(v) for k, v in (server.get("headers") or {}).items()}
        auth = server.get("auth")
        if isinstance(auth, str) and auth.startswith("env:"):
            token = env(auth[4:])
            if not token:
                return Unavailable(name, f"its auth variable {auth[4:]} is not set on this server")
            SECRETS.add_value(token)  # masked wherever it comes back: a result, an error, the store
            headers["Authorization"] = f"Bearer {token}"
        assert self._client is not None
        session = McpSession(name, str(server["url"]), headers, self._client)
        self.sessions.append(session)
        try:
            async with asyncio.timeout(CONNECT_SECONDS):
                await session.initialize()
                listed = await session.list_tools()
        except McpError as exc:
            return Unavailable(name, SECRETS.redact(str(exc)))
        except TimeoutError:
            return Unavailable(name, f"it did not answer within {CONNECT_SECONDS:g} seconds")
        except httpx.HTTPError as exc:
            return Unavailable(name, _why(exc))
        except Exception as exc:  # a broken server or address never fails the task
            return Unavailable(name, f"it could not be used ({type(exc).__name__})")
        return session, listed

    async def aclose(self) -> None:
        """End the servers' sessions and close the client."""
        if self._client is None:
            return
        await asyncio.gather(*(session.close() for session in self.sessions))
        await self._client.aclose()


def _why(exc: httpx.HTTPError) -> str:
    """What went wrong, without the request (its headers may carry a token)."""
    if isinstance(exc, httpx.ConnectError):
        return "it could not be reached (connection failed)"
    if isinstance(exc, httpx.TimeoutException):
        return "it did not answer in time"
    return f"the connection failed ({type(exc).__name__})"
