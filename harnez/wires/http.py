"""What the three wires share: one streamed POST, SSE decoding, and HTTP failures as events."""

from __future__ import annotations

import email.utils
import json
import re
import time
from collections.abc import AsyncIterator
from typing import Any, ClassVar

import httpx

from harnez.settings import RetrySettings, WireName
from harnez.text import valid_text
from harnez.wires.base import Failure, ModelSpec, Usage, WireEvent, WireRequest, WireWarning
from harnez.wires.catalogue import UNKNOWN_MODEL, Endpoint, known_spec
from harnez.wires.sse import SseMalformed, iter_sse

RETRYABLE_STATUSES = frozenset((408, 409, 425, 429, 500, 502, 503, 504, 529))
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class Translator:
    """Turns one call's decoded stream items into wire events; one instance per call."""

    finished = False

    def feed(self, event: str, payload: dict[str, Any]) -> list[WireEvent]:
        raise NotImplementedError

    def done(self) -> list[WireEvent]:
        """The `[DONE]` sentinel (chat completions only)."""
        return []

    def finish(self) -> list[WireEvent]:
        """The body ended; a stream that never reached its terminal item is a broken one."""
        if self.finished:
            return []
        return [Failure("the stream ended before the model finished its answer", retryable=True)]


class HttpWire:
    """A wire over httpx: subclasses give the path, headers, request body and translator."""

    name: ClassVar[WireName]
    path: ClassVar[str]

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        retry: RetrySettings | None = None,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        timeouts = retry or RetrySettings()
        self.endpoint = endpoint
        self._owns_client = client is None
        self._client = client or httpx.AsyncClient(
            timeout=httpx.Timeout(timeouts.request_timeout, connect=timeouts.connect_timeout)
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(provider={self.endpoint.provider!r}, base_url={self.endpoint.base_url!r})"

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()

    def headers(self) -> dict[str, str]:
        raise NotImplementedError

    def body(self, request: WireRequest, spec: ModelSpec) -> dict[str, Any]:
        raise NotImplementedError

    def translator(self, request: WireRequest) -> Translator:
        raise NotImplementedError

    async def stream(self, request: WireRequest) -> AsyncIterator[WireEvent]:
        """Send the request and yield its events; failures arrive as a final `Failure`."""
        dropped = request.conversation.foreign_opaque(self.name)
        if dropped:
            wires = ", ".join(sorted({o.wire for o in dropped}))
            yield WireWarning(
                "opaque-items-dropped",
                f"{len(dropped)} provider item(s) from {wires} cannot be replayed on {self.name} and were left out",
                [o.to_json() for o in dropped],
            )
        spec = request.spec or known_spec(request.model) or UNKNOWN_MODEL
        body = self.body(request, spec)
        url = self.endpoint.base_url + self.path
        headers = {**self.endpoint.headers, **self.headers()}
        try:
            async with self._client.stream("POST", url, json=body, headers=headers) as response:
                if response.status_code >= 400:
                    await response.aread()
                    yield self._status_failure(response, request.model)
                    return
                async for event in self._events(response, self.translator(request)):
                    yield event
        except httpx.TimeoutException as exc:
            yield Failure(self._redact(f"the request to {url} timed out ({type(exc).__name__})"), retryable=True)
        except httpx.ConnectError as exc:
            yield Failure(self._redact(f"cannot connect to {url}: {exc}. Is the model server running, and is "
                                      f"the provider's base_url in settings.json right?"), retryable=True)
        except httpx.TransportError as exc:
            yield Failure(self._redact(f"the connection to {url} broke: {exc or type(exc).__name__}"), retryable=True)

    async def _events(self, response: httpx.Response, translator: Translator) -> AsyncIterator[WireEvent]:
        async for item in iter_sse(response.aiter_lines()):
            if isinstance(item, SseMalformed):
                yield WireWarning("malformed-sse-line", "the stream held a line that is not SSE; skipped", item.line)
                continue
            if item.data == "[DONE]":
                events = translator.done()
            else:
                try:
                    payload = provider_json(item.data)
                except json.JSONDecodeError:
                    yield WireWarning("malformed-sse-data", "a stream item was not valid JSON; skipped", item.data)
                    continue
                events = translator.feed(item.event, payload)
            for event in events:
                yield event
        for event in translator.finish():
            yield event

    def _status_failure(self, response: httpx.Response, model: str) -> Failure:
        status = response.status_code
        said = self._redact(provider_message(response.text))
        ep = self.endpoint
        if status == 401:
            where = f"check the environment variable {ep.key_env}" if ep.key_env else "this provider has no api_key_env set"
            message = f"{ep.provider} rejected the credentials (401): {where}. The provider said: {said}"
        elif status == 403:
            message = f"{ep.provider} refused access (403) to model {model!r}: check the key's permissions. The provider said: {said}"
        elif status == 404:
            message = f"not found (404): unknown model {model!r} or wrong base URL {ep.base_url!r}. The provider said: {said}"
        elif status in RETRYABLE_STATUSES:
            label = {429: "rate limited", 529: "overloaded"}.get(status, "server error")
            message = f"{ep.provider} answered {status} ({label}): {said}"
        else:
            message = f"{ep.provider} rejected the request ({status}): {said}"
        retryable = status in RETRYABLE_STATUSES
        return Failure(message, status, retryable, parse_retry_after(response.headers) if retryable else None)

    def _redact(self, text: str) -> str:
        key = self.endpoint.api_key
        return text.replace(key, "***") if key else text


def provider_json(text: str) -> Any:
    """JSON a provider sent, with any lone surrogate (a `\\udcff` escape) replaced by U+FFFD.

    A lone surrogate is not text: the store, the terminal and the next request would all refuse
    it. Every stream item, error body and tool-call argument of every wire is decoded here, so
    none reaches an event, the context or a tool.
    """
    value = json.loads(text)
    return valid_text(value) if _SURROGATE_ESCAPE.search(text) else value


def provider_message(text: str) -> str:
    """The human part of an error body: `error.message` when it is JSON, else the text itself."""
    try:
        body = provider_json(text)
    except json.JSONDecodeError:
        return text.strip()[:500] or "(empty body)"
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return error["message"]
        if isinstance(error, str):
            return error
    return text.strip()[:500]


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
        return {}, f"the tool arguments are not valid JSON ({exc.msg} at {exc.pos})"
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

