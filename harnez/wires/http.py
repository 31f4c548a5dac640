"""What the three wires share: one streamed POST, SSE decoding, and HTTP failures as events."""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import functools
import html
import ipaddress
import json
import re
import ssl
import time
import urllib.request
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import replace
from typing import Any, ClassVar
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx

from harnez.redaction import SECRETS, public_url
from harnez.settings import BASE_URL_IN_SETTINGS, RetrySettings, WireName
from harnez.text import valid_text
from harnez.wires.base import (
    Failure,
    ModelSpec,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    Usage,
    WireEvent,
    WireRequest,
    WireWarning,
)
from harnez.wires.catalogue import UNKNOWN_MODEL, Endpoint, known_spec
from harnez.wires.conversation import Conversation, Opaque
from harnez.wires.sse import SseMalformed, iter_sse

RETRYABLE_STATUSES = frozenset((408, 409, 425, 429, 500, 502, 503, 504, 529))
TOO_LONG = re.compile(
    r"context_length_exceeded|maximum context length|context (?:length|window)|prompt is too long"
    r"|exceeds the maximum number of tokens|too many (?:input )?tokens",
    re.IGNORECASE,
)
"""How servers refuse a request longer than the model's window (OpenAI and its compatible servers,
vLLM, Anthropic, Gemini, mocks that copy them): Harnez's own estimate of the window was too big."""
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


@functools.cache
def tls_context() -> ssl.SSLContext:
    """httpx's default TLS context (certifi's roots), built once per process.

    Loading the certificate store takes ~80 ms of CPU on the event loop; every task opens a wire,
    so building it per client stalled every running stream for that long each time a task started.
    """
    return httpx.create_ssl_context()


@functools.cache
def no_roots_context() -> ssl.SSLContext:
    """A TLS context that verifies certificates but trusts no root, built in microseconds: every TLS
    connection made with it fails verification (never goes unchecked)."""
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


def tls_context_for(base_url: str) -> ssl.SSLContext:
    """The TLS context of a client of `base_url`: the process's when it needs one (`needs_tls`); for
    a plain-http server (a local model) one with no roots, since its requests never use TLS, so that
    its first client does not load the certificate store (25–110 ms of a first prompt)."""
    return tls_context() if needs_tls(base_url) else no_roots_context()


def needs_tls(base_url: str) -> bool:
    """Whether a client of `base_url` makes TLS connections: an `https:` provider, or any behind a
    proxy over https named by the environment (which the client reaches with its TLS context)."""
    return not base_url.lower().startswith("http://") or _proxy_over_tls()


def _proxy_over_tls() -> bool:
    """Whether a proxy variable of the environment (HTTP_PROXY, ALL_PROXY, …) names an https URL."""
    return any(url.lower().startswith("https:") for url in urllib.request.getproxies().values())


def _is_local_host(host: str) -> bool:
    """Whether `host` is this machine or its network (a model server someone runs: Ollama, vLLM on
    the LAN), not a hosted provider reached over the internet."""
    name = host.lower().rstrip(".")
    if name == "localhost" or name.endswith((".localhost", ".local")):
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


def new_client(retry: RetrySettings, base_url: str = "https:") -> httpx.AsyncClient:
    """An httpx client of `base_url` with the retry settings' timeouts and its TLS context."""
    return httpx.AsyncClient(
        timeout=httpx.Timeout(retry.read_timeout, connect=retry.connect_timeout),
        verify=tls_context_for(base_url),
    )


class Translator:
    """Turns one call's decoded stream items into wire events; one instance per call."""

    finished = False
    opened = False
    """Whether an item of this wire's own answer was read (a chat chunk with `choices`, Anthropic's
    `message_start` or a content block, a Responses `response.*` event): a stream that ends without
    one is no answer of this wire at all (a wrong wire or base URL, a mock that only looks alike), not
    a cut one, and is reported as such instead of being tried again."""
    where = "mid-stream"
    """Where an error the provider reports came: in its stream, or `in its answer` (`whole`)."""

    def feed(self, event: str, payload: dict[str, Any]) -> list[WireEvent]:
        raise NotImplementedError

    def read(self, event: str, payload: Any) -> list[WireEvent]:
        """`feed`, for any decoded item: one that is not an object, or lacks or mistypes a field the
        translation needs, is skipped with a warning naming what was wrong, instead of ending the
        task with an internal error (the stream goes on; a missing end is still a cut stream)."""
        if not isinstance(payload, dict):
            return [
                WireWarning("misshapen-stream-item", "a stream item was not a JSON object; skipped", payload)
            ]
        try:
            return self.feed(event, payload)
        except (KeyError, TypeError, AttributeError, ValueError, IndexError) as exc:
            problem = f"{type(exc).__name__}: {exc}"
            return [
                WireWarning(
                    "misshapen-stream-item",
                    f"a stream item of an unexpected shape was skipped ({problem})",
                    payload,
                )
            ]

    def done(self) -> list[WireEvent]:
        """The `[DONE]` sentinel (chat completions only)."""
        return []

    def finish(self) -> list[WireEvent]:
        """The body ended; a stream that never reached its terminal item is a broken one."""
        if self.finished:
            return []
        return [Failure("the stream ended before the model finished its answer", retryable=True)]

    def as_stream(self, body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        """The stream items (event name, payload) that would have carried this whole, non-streamed
        answer: a server that ignores `"stream": true` and answers one JSON object (some proxies,
        gateways and mock servers) is read through the same translation as a stream."""
        raise NotImplementedError

    def whole(self, body: dict[str, Any]) -> list[WireEvent]:
        """The events of a whole, non-streamed answer (`as_stream`), ending as its stream would."""
        items = self.as_stream(body)
        self.where = "in its answer"
        if not items:
            return []  # no answer of this wire: the caller says so
        out: list[WireEvent] = []
        for event, payload in items:
            out.extend(self.read(event, payload))
        out.extend(self.done())
        return out


class HttpWire:
    """A wire over httpx: subclasses give the path, headers, request body and translator."""

    name: ClassVar[WireName]
    path: ClassVar[str]
    untagged_anywhere: ClassVar[bool] = True
    """Whether this wire's opaque items that name no server (kept before items were tagged) are sent
    to any of its servers (chat, Anthropic) or to none (Responses): docs/wires.md says why."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        retry: RetrySettings | None = None,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        timeouts = retry or RetrySettings()
        self.retry = timeouts
        """The retry settings, for a wire that tries one of its own follow-up requests again."""
        self.request_timeout = timeouts.request_timeout
        """Seconds one whole request may take, from connecting to the stream's last byte."""
        self.read_timeout = timeouts.read_timeout
        self.endpoint = endpoint
        if endpoint.api_key:
            SECRETS.add_value(endpoint.api_key)  # whatever the provider sends back is masked with it
        self._owns_client = client is None
        self._client = client or new_client(timeouts, endpoint.base_url)
        self._url = request_url(endpoint.base_url, self.path)
        """Where requests go; moved once to `other_url` when the first one there answers 404 and the
        other place does not (a base URL given with, or without, its `/v1`)."""
        self._url_settled = False

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(provider={self.endpoint.provider!r}, "
            f"base_url={public_url(self.endpoint.base_url)!r})"
        )

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()

    @functools.cached_property
    def origin(self) -> str:
        """The server's name in the opaque items it gives (`origin_of` its base URL): read once, as
        every opaque item of every request is checked against it (`sends`)."""
        return origin_of(self.endpoint.base_url)

    def headers(self) -> dict[str, str]:
        raise NotImplementedError

    def body(self, request: WireRequest, spec: ModelSpec) -> dict[str, Any]:
        raise NotImplementedError

    def translator(self, request: WireRequest) -> Translator:
        raise NotImplementedError

    def without_refused(self, body: dict[str, Any], said: str) -> dict[str, Any] | None:
        """The request body without an optional field the server's refusal (`said`, a 400 or 422)
        names, for the wire to send it once more and from then on without it; None to fail."""
        return None

    async def stream(self, request: WireRequest) -> AsyncGenerator[WireEvent, None]:
        """Send the request and yield its events; failures arrive as a final `Failure`.

        Every text the provider sent (answers, errors, warnings and the raw items they keep) leaves
        with the known credentials masked, so nothing downstream can store or print a key. Closing
        the stream early (a retry after a failure reported mid-stream, a cancel) closes the response
        at once.
        """
        async with contextlib.aclosing(self._stream(request)) as events:
            async for event in events:
                yield scrub(event)

    def sends(self, opaque: Opaque) -> bool:
        """Whether a kept opaque item goes back in this wire's requests: it is this wire's, and the
        server it names is this one (`goes_to`: one naming none goes anywhere unless `untagged_anywhere`
        says no)."""
        return opaque.wire == self.name and goes_to(opaque.item, self.origin, untagged=self.untagged_anywhere)

    def left_out(self, conversation: Conversation) -> WireWarning | None:
        """The `opaque-items-dropped` warning naming the history's opaque items this request leaves
        out: another wire's (they cannot be replayed here), and this wire's given by another server
        (it would refuse a field it does not know, or a thing it never made); None when none is."""
        kept = conversation.opaque()
        wired = [o for o in kept if o.wire != self.name]
        # this wire's items another server gave; one that names no server (kept before items were
        # tagged, or imported) and is not sent goes unsaid: the warning would come back every task
        # of an old session, naming no server a person could act on
        served = [o for o in kept if o.wire == self.name and not self.sends(o) and ORIGIN in o.item]
        said: list[str] = []
        if wired:
            wires = ", ".join(sorted({o.wire for o in wired}))
            said.append(f"{len(wired)} provider item(s) from {wires} cannot be replayed on {self.name}")
        if served:
            servers = ", ".join(sorted({str(o.item[ORIGIN]) for o in served}))
            said.append(
                f"{len(served)} {self.name} item(s) given by another server ({servers}) cannot be sent "
                f"to {self.origin}"
            )
        if not said:
            return None
        dropped = [o.to_json() for o in (*wired, *served)]
        return WireWarning("opaque-items-dropped", "; ".join(said) + ": they were left out", dropped)

    async def _stream(self, request: WireRequest) -> AsyncGenerator[WireEvent, None]:
        warning = self.left_out(request.conversation)
        if warning is not None:
            yield warning
        url = self._url
        try:
            async with contextlib.aclosing(self._exchange(request, url)) as events:
                async for event in events:
                    yield event
        except (TimeoutError, httpx.TransportError) as exc:
            yield self._transport_failure(url, exc)

    async def _exchange(self, request: WireRequest, url: str) -> AsyncGenerator[WireEvent, None]:
        """POST the request and translate its stream, the whole of it within `request_timeout`."""
        body = self.body(request, request.spec or known_spec(request.model) or UNKNOWN_MODEL)
        headers = {**self.endpoint.headers, **self.headers()}
        deadline = asyncio.get_running_loop().time() + self.request_timeout
        async with contextlib.AsyncExitStack() as stack:
            async with asyncio.timeout_at(deadline):
                response = await self._post(stack, url, body, headers)
                if response.status_code == 404 and not self._url_settled:
                    response = await self._post_elsewhere(stack, response, body, headers)
                lighter = (
                    self.without_refused(body, response.text) if response.status_code in (400, 422) else None
                )
                if lighter is not None:  # an optional field the server refused: once more without it
                    body = lighter
                    response = await self._post(stack, self._url, body, headers)
            if response.status_code < 300:
                self._url_settled = True
            else:
                yield self._status_failure(response, request.model)
                return
            translator = self.translator(request)
            if _json_answer(response):
                async with asyncio.timeout_at(deadline):
                    await response.aread()
                if response.text.lstrip().startswith("{"):
                    for event in self._whole(response.text, translator):
                        yield event
                    return
                # anything else labelled JSON is read as the stream it may be (from the read body)
            events = await stack.enter_async_context(
                contextlib.aclosing(self._events(response, translator, deadline))
            )
            async for event in events:
                yield event

    async def _post(
        self, stack: contextlib.AsyncExitStack, url: str, body: dict[str, Any], headers: dict[str, str]
    ) -> httpx.Response:
        """The streamed response to one POST (its body already read when it is no answer), after the
        redirects that keep the method and body (307, 308) to the same host (the key goes nowhere else)."""
        for _ in range(MAX_REDIRECTS + 1):
            response = await stack.enter_async_context(
                self._client.stream("POST", url, json=body, headers=headers)
            )
            if response.status_code >= 300:
                await response.aread()
            target = same_host_redirect(response, url)
            if target is None:
                break
            url = target
        return response

    async def _post_elsewhere(
        self,
        stack: contextlib.AsyncExitStack,
        missed: httpx.Response,
        body: dict[str, Any],
        headers: dict[str, str],
    ) -> httpx.Response:
        """After a first 404: the same request at `other_url`; from then on requests go there if it
        answered anything else. Otherwise the first 404 stands (its message may name the model)."""
        self._url_settled = True
        other = other_url(self.endpoint.base_url, self.path)
        if other is None:
            return missed
        response = await self._post(stack, other, body, headers)
        if response.status_code in (404, 405):  # no better there
            return missed
        self._url = other
        return response

    def _whole(self, text: str, translator: Translator) -> list[WireEvent]:
        """A 200 answered with one JSON object instead of a stream: its events, as if streamed; a
        Failure naming what came when it is no answer of this wire (a wrong base URL or wire)."""
        try:
            body = provider_json(text)
        except json.JSONDecodeError:
            body = None
        events = translator.whole(body) if isinstance(body, dict) else []
        if translator.finished:
            return events + translator.finish()
        return [self._not_an_answer("a JSON body", text)]

    def _not_an_answer(self, what: str, text: str) -> Failure:
        """What a body that holds no answer of this wire says (`what` it was, `text` its start), and
        where to look: it comes from a wrong base URL or wire, so it is not tried again."""
        origin = self.endpoint.base_url_origin
        check = (
            "the provider's base_url and wire in settings.json"
            if origin == BASE_URL_IN_SETTINGS
            else f"{origin} and the wire it is used with"  # `harnez run --base-url` gave the URL
        )
        return Failure(
            f"{self.endpoint.provider} answered with {what} that is not a {self.name} answer "
            f"(it starts {self._redact(text[:80])!r}); check {check}",
            retryable=False,
        )

    def _transport_failure(self, url: str, exc: BaseException) -> Failure:
        """A request that never completed, as a retryable failure saying what went wrong (the URL
        without the credentials it may carry)."""
        url = public_url(url)
        if isinstance(exc, TimeoutError):
            text = (
                f"the request to {url} took longer than retry.request_timeout "
                f"({self.request_timeout:g} s) and was stopped"
            )
        elif isinstance(exc, httpx.ReadTimeout):
            text = (
                f"the request to {url} timed out (ReadTimeout): the server sent nothing for "
                f"retry.read_timeout ({self.read_timeout:g} s); raise it in settings.json for a model "
                f"that stays silent longer"
            )
        elif isinstance(exc, httpx.TimeoutException):
            text = f"the request to {url} timed out ({type(exc).__name__})"
        elif isinstance(exc, httpx.ConnectError):
            text = f"cannot connect to {url}: {exc}. {self._connect_advice(url)}"
        else:
            text = f"the connection to {url} broke: {exc or type(exc).__name__}"
        return Failure(self._redact(text), retryable=True)

    def _connect_advice(self, url: str) -> str:
        """Where to look when no connection was made: a server on this machine or network may not be
        running, but a hosted provider's (api.openai.com) is; asking whether it runs sent the person
        to the wrong place, where the network, a proxy or the URL is what fails."""
        origin = self.endpoint.base_url_origin
        parts = urlsplit(url)
        if _is_local_host(parts.hostname or ""):
            return f"Is the model server running, and is {origin} right?"
        proxy = "HTTPS_PROXY" if parts.scheme == "https" else "HTTP_PROXY"
        return f"Check the network (or the proxy it needs: {proxy}) and that {origin} is right."

    async def _events(
        self, response: httpx.Response, translator: Translator, deadline: float
    ) -> AsyncGenerator[WireEvent, None]:
        first: str | None = None  # the first item's data: quoted when the stream is no answer of this wire
        failed = False  # an error the server reported in its stream says what went wrong itself
        async for item in iter_sse(_lines_before(response.aiter_text(), deadline, self.read_timeout)):
            if isinstance(item, SseMalformed):
                yield WireWarning(
                    "malformed-sse-line", "the stream held a line that is not SSE; skipped", item.line
                )
                continue
            if not item.data.strip():  # an event with empty data (a keep-alive): nothing to read
                continue
            first = item.data if first is None else first
            if item.data.strip() == "[DONE]":
                events = translator.done()
            else:
                try:
                    payload = provider_json(item.data)
                except json.JSONDecodeError:
                    if item.data.lstrip().startswith(("{", "[")):
                        yield self._broken_item(item.data)
                        return
                    yield WireWarning(
                        "malformed-sse-data", "a stream item was not valid JSON; skipped", item.data
                    )
                    continue
                events = translator.read(item.event, payload)
            for event in events:
                failed = failed or isinstance(event, Failure)
                yield event
        if first is not None and not (translator.opened or translator.finished or failed):
            yield self._not_an_answer("a stream", first)
            return
        for event in translator.finish():
            yield event

    def _broken_item(self, data: str) -> Failure:
        """A stream item that opens as JSON but does not parse (cut short or garbled on the way):
        what it carried (text, a piece of a call's arguments) is lost, so the answer would miss it
        unsaid; the call fails in passing and is asked again whole."""
        return Failure(
            f"{self.endpoint.provider} sent a stream item that is not valid JSON (it starts "
            f"{self._redact(data[:80])!r}): what it carried is lost, so the answer is asked again",
            retryable=True,
        )

    def _status_failure(self, response: httpx.Response, model: str) -> Failure:
        status = response.status_code
        said = self._redact(provider_message(response.text))
        ep = self.endpoint
        if 300 <= status < 400:
            to = public_url(same_host_redirect(response, "", any_host=True) or "nowhere")
            message = (
                f"{ep.provider} answered {status}, a redirect to {to} that is not followed (another "
                f"host, a changed method, or too many): set the provider's base_url to where it points"
            )
            return Failure(self._redact(message), status)
        if status == 401:
            where = (
                f"check the environment variable {ep.key_env}"
                if ep.key_env
                else "this provider has no api_key_env set"
            )
            message = f"{ep.provider} rejected the credentials (401): {where}. The provider said: {said}"
        elif status == 403:
            message = f"{ep.provider} refused access (403) to model {model!r}: check the key's permissions. The provider said: {said}"
        elif status == 404:
            message = f"not found (404): unknown model {model!r} or wrong base URL {public_url(ep.base_url)!r}. The provider said: {said}"
        elif status in RETRYABLE_STATUSES:
            label = {429: "rate limited", 529: "overloaded"}.get(status, "server error")
            message = f"{ep.provider} answered {status} ({label}): {said}"
        else:
            message = f"{ep.provider} rejected the request ({status}): {said}"
            if TOO_LONG.search(response.text):
                message = message.rstrip(".") + (
                    f". The conversation is longer than the model's window as the server counts it: "
                    f'set models."{ep.provider}/{model}".context_window in settings.json to what the '
                    f"server allows (Harnez then compacts before reaching it), or /compact the session"
                )
        retryable = status in RETRYABLE_STATUSES
        return Failure(message, status, retryable, parse_retry_after(response.headers) if retryable else None)

    def _redact(self, text: str) -> str:
        return SECRETS.redact(text)


ORIGIN = "origin"
"""The key, in an opaque item a wire makes, naming the server that gave it (`origin_of` its base URL):
the item goes back only to that server, since another may refuse a field it does not know or a thing
it never made (a session whose `/model` moved to another provider goes on). An item kept before
items were tagged has no origin: a chat or Anthropic one goes back to any server of its wire, a
Responses one to none (`goes_to`; docs/wires.md says why)."""


def goes_to(item: dict[str, Any], origin: str, *, untagged: bool) -> bool:
    """Whether an opaque item may be sent to the server at `origin`: it names that server, or it names
    none (kept before items were tagged) and its wire sends such items anywhere (`untagged`)."""
    named = item.get(ORIGIN)
    return untagged if named is None else named == origin


def sent_back(item: dict[str, Any]) -> dict[str, Any]:
    """A kept item as its server gave it: without the name of that server (`ORIGIN`), a field the API
    does not know. (A copy less one key: every kept item of every request is made so.)"""
    copy = dict(item)
    copy.pop(ORIGIN, None)
    return copy


def origin_of(base_url: str) -> str:
    """What names a server in the opaque items it gave (to be sent back to it alone): its base URL
    without credentials (no user, password or query: the items are stored) and without a trailing
    slash."""
    return public_url(base_url).rstrip("/")


def is_openai(base_url: str) -> bool:
    """Whether a base URL is OpenAI's own API (where OpenAI-only fields may be sent: compatible
    servers can refuse a field they do not know)."""
    return urlsplit(base_url).hostname == "api.openai.com"


def request_url(base_url: str, path: str) -> str:
    """The URL to POST to: the wire's `path` after the base URL's own path, before any query the base
    URL holds (`…/openai/v1?api-version=…` asks `…/openai/v1/chat/completions?api-version=…`). A base
    URL ending in `/v1` for a path that starts with one (Anthropic's `/v1/messages`) is not given a
    second: `http://host/v1` asks `http://host/v1/messages`."""
    parts = urlsplit(base_url)
    base = parts.path.rstrip("/")
    if path.startswith("/v1/") and base.endswith("/v1"):
        base = base.removesuffix("/v1")
    return urlunsplit((parts.scheme, parts.netloc, base + path, parts.query, ""))


MAX_REDIRECTS = 3


def same_host_redirect(response: httpx.Response, url: str, *, any_host: bool = False) -> str | None:
    """Where a 307 or 308 sends the request again (same method and body), when that is on the host
    of `url` (over the same scheme or https), or anywhere with `any_host` (for a message); else None."""
    location = response.headers.get("location")
    if not location or (response.status_code not in (307, 308) and not any_host):
        return None
    target = urljoin(url or str(response.url), location)
    if any_host:
        return target
    was, now = urlsplit(url), urlsplit(target)
    same_host = was.hostname == now.hostname and now.scheme in (was.scheme, "https")
    return target if same_host else None


def other_url(base_url: str, path: str) -> str | None:
    """Where else an OpenAI-style server may serve `path` when `request_url` answered 404: with `/v1`
    before it when the base URL has none (`http://host:8080`), without it when the base URL ends in
    one (a mock serving the API's paths at its root); None for a path that names its own `/v1`."""
    if path.startswith("/v1/"):
        return None
    parts = urlsplit(base_url)
    base = parts.path.rstrip("/")
    other = base.removesuffix("/v1") if base.endswith("/v1") else base + "/v1"
    return urlunsplit((parts.scheme, parts.netloc, other + path, parts.query, ""))


def _json_answer(response: httpx.Response) -> bool:
    """Whether a successful response is one JSON object rather than the event stream asked for."""
    kind = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    return kind == "application/json" or kind.endswith("+json")


def scrub(event: WireEvent) -> WireEvent:
    """The event with known credentials masked in every text a provider could have put in it."""
    if isinstance(event, (TextDelta, ReasoningDelta)):
        return (
            event if not SECRETS.holds_secret(event.text) else replace(event, text=SECRETS.redact(event.text))
        )
    if isinstance(event, ToolCallDelta):
        return (
            event
            if not SECRETS.holds_secret(event.arguments)
            else replace(event, arguments=SECRETS.redact(event.arguments))
        )
    if isinstance(event, ToolCallEnd) and SECRETS.holds_secret(event.raw_arguments):
        return replace(
            event,
            arguments=SECRETS.redact_json(event.arguments),
            raw_arguments=SECRETS.redact(event.raw_arguments),
        )
    if isinstance(event, Failure):
        return replace(event, message=SECRETS.redact(event.message))
    if isinstance(event, WireWarning):
        return replace(event, message=SECRETS.redact(event.message), raw=SECRETS.redact_json(event.raw))
    return event


async def _lines_before(
    chunks: AsyncIterator[str], deadline: float, read_timeout: float
) -> AsyncIterator[str]:
    """The body's lines, without their endings (CRLF, LF or CR, as SSE allows), read chunk by chunk;
    TimeoutError once the deadline passes, however steadily the bytes drip in.

    While more than `read_timeout` remains, the transport's own read timeout already ends a silent
    wait before the deadline, so no timer is armed (a timer per chunk would cost more than parsing).
    """
    loop = asyncio.get_running_loop()
    pending = ""
    while True:
        remaining = deadline - loop.time()
        try:
            if remaining > read_timeout:
                chunk = await anext(chunks)
            else:
                async with asyncio.timeout(max(remaining, 0)):
                    chunk = await anext(chunks)
        except StopAsyncIteration:
            break
        text = pending + chunk
        held = "\r" if text.endswith("\r") else ""  # may be the first half of a CRLF split across chunks
        lines = _LINE_END.split(text[: len(text) - len(held)])
        pending = lines.pop() + held
        for line in lines:
            yield line
    if pending:
        lines = _LINE_END.split(pending)
        for line in lines[:-1] if lines[-1] == "" else lines:
            yield line


_LINE_END = re.compile(r"\r\n|\r|\n")


def provider_json(text: str) -> Any:
    """JSON a provider sent, with any lone surrogate (a `\\udcff` escape) replaced by U+FFFD.

    A lone surrogate is not text: the store, the terminal and the next request would all refuse
    it. Every stream item, error body and tool-call argument of every wire is decoded here, so
    none reaches an event, the context or a tool.
    """
    value = json.loads(text)
    return valid_text(value) if _SURROGATE_ESCAPE.search(text) else value


def provider_message(text: str) -> str:
    """The human part of an error body: `error.message` when it is JSON, the title (or the words) of
    an HTML page (a proxy's or gateway's error page), else the text itself."""
    try:
        body = provider_json(text)
    except json.JSONDecodeError:
        return html_words(text) or text.strip()[:500] or "(empty body)"
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return error["message"]
        if isinstance(error, str):
            return error
        if isinstance(body.get("detail"), str):  # FastAPI-based servers
            return body["detail"]
    return text.strip()[:500]


_HTML_START = re.compile(r"\s*(<!--.*?-->\s*)*<(!doctype\s+html|html|head|body)\b", re.I | re.S)
_HTML_TITLE = re.compile(r"<title[^>]*>(.*?)</title\s*>", re.I | re.S)
_HTML_HIDDEN = re.compile(r"<(script|style|head)\b.*?</\1\s*>", re.I | re.S)
_HTML_TAG = re.compile(r"<[^>]*>")


def html_words(text: str) -> str:
    """What an HTML error page says (its title, else its visible words, at most 300 characters and
    entities decoded, marked as a page); empty when the text is no HTML page."""
    if not _HTML_START.match(text):
        return ""
    title = _HTML_TITLE.search(text)
    words = title.group(1) if title else _HTML_TAG.sub(" ", _HTML_HIDDEN.sub(" ", text))
    words = " ".join(html.unescape(words).split())[:300]
    return f"{words} (an HTML page)" if words else "(an HTML page)"


def parse_retry_after(headers: httpx.Headers) -> float | None:
    """Seconds to wait from `retry-after-ms`, or `retry-after` in seconds or as an HTTP date."""
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def parse_arguments(raw: str) -> tuple[dict[str, Any], str | None]:
    """Tool-call arguments as a dict, with an error message when they are not a JSON object."""
    if not raw.strip():
        return {}, None
    try:
        value = provider_json(raw)
    except json.JSONDecodeError as exc:
        return {}, f"the tool arguments are not valid JSON ({exc.msg}: line {exc.lineno} column {exc.colno})"
    if not isinstance(value, dict):
        return {}, "the tool arguments are not a JSON object"
    return value, None


def openai_usage(raw: dict[str, Any], prompt: str, completion: str) -> Usage:
    """OpenAI usage counts cached tokens inside the prompt figure; Harnez counts them apart.

    `prompt`/`completion` name the fields (`prompt_tokens`/`completion_tokens` on Chat Completions,
    `input_tokens`/`output_tokens` on Responses); their `_details` objects hold the cached and
    reasoning counts.
    """
    given = raw.get(prompt)
    cached = (raw.get(f"{prompt}_details") or {}).get("cached_tokens")
    reasoning = (raw.get(f"{completion}_details") or {}).get("reasoning_tokens")
    if given is not None and cached is not None:
        given -= cached
    return Usage(input=given, output=raw.get(completion), cache_read=cached, reasoning=reasoning)
