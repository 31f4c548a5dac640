"""Finding models to use on a first run: hosted providers whose key is set, local servers that answer."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from harnez.settings import WireName

DEFAULT_PORTS: Mapping[int, str] = {11434: "ollama", 8080: "llama.cpp", 1234: "lm-studio", 8000: "vllm"}
"""The usual loopback ports of local OpenAI-compatible servers, and the provider name each suggests."""

DEFAULT_TIMEOUT = 0.3
"""Seconds one probe may take in all (connecting, sending, reading): a local server answers far sooner."""

MAX_MODELS = 200
"""Model ids kept per server; a listing longer than this is cut, not refused."""


@dataclass(frozen=True, slots=True)
class HostedProvider:
    """A hosted provider Harnez can set up from an API key in the environment."""

    name: str
    """The provider name written to settings (`providers.<name>`)."""
    label: str
    key_env: str
    """The variable that holds its key; only its name is ever kept."""
    wire: WireName
    base_url: str
    default_model: str
    """The model offered first; a catalogue model id."""

    @property
    def default_ref(self) -> str:
        """`<provider>/<default model>`."""
        return f"{self.name}/{self.default_model}"


HOSTED_PROVIDERS: tuple[HostedProvider, ...] = (
    HostedProvider(
        "openai", "OpenAI", "OPENAI_API_KEY", "openai-responses", "https://api.openai.com/v1", "gpt-5"
    ),
    HostedProvider(
        "anthropic",
        "Anthropic",
        "ANTHROPIC_API_KEY",
        "anthropic-messages",
        "https://api.anthropic.com",
        "claude-sonnet-4-5",
    ),
)


@dataclass(frozen=True, slots=True)
class LocalServer:
    """An OpenAI-compatible server that answered on a loopback port."""

    name: str
    """The provider name suggested by the port (`ollama`, `llama.cpp`, `lm-studio`, `vllm`)."""
    base_url: str
    """Including `/v1`, as an `openai-chat` provider's `base_url`."""
    models: tuple[str, ...]
    """The model ids it listed (possibly none: a server with nothing loaded)."""


def detect_keys(env: Mapping[str, str] | None = None) -> list[HostedProvider]:
    """The hosted providers whose key variable is set (non-empty); the values are not read further."""
    env = os.environ if env is None else env
    return [provider for provider in HOSTED_PROVIDERS if env.get(provider.key_env)]


async def probe_local_servers(
    ports: Mapping[int, str] = DEFAULT_PORTS, host: str = "127.0.0.1", timeout: float = DEFAULT_TIMEOUT
) -> list[LocalServer]:
    """Ask every port for `GET /v1/models` in parallel; the servers that answered with a model list.

    Refused connections, timeouts, errors and answers that are not an OpenAI model list are
    skipped, never raised. The whole probe takes at most about `timeout` seconds.
    """
    # trust_env=False: a proxy from the environment must not see (or answer for) loopback probes.
    async with httpx.AsyncClient(timeout=httpx.Timeout(timeout), trust_env=False) as client:
        found = await asyncio.gather(
            *(_probe(client, _base_url(host, port), name, timeout) for port, name in ports.items())
        )
    return [server for server in found if server is not None]


def _base_url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/v1"


async def _probe(client: httpx.AsyncClient, base_url: str, name: str, timeout: float) -> LocalServer | None:
    try:
        async with asyncio.timeout(timeout):
            response = await client.get(f"{base_url}/models", headers={"accept": "application/json"})
        if response.status_code != 200:
            return None
        models = model_ids(response.json())
    except (httpx.HTTPError, TimeoutError, OSError, ValueError):
        return None
    return None if models is None else LocalServer(name, base_url, models)


def model_ids(listing: Any) -> tuple[str, ...] | None:
    """The ids of an OpenAI `/v1/models` answer (`{"data": [{"id": ...}, ...]}`); None if it is not one."""
    if not isinstance(listing, dict) or not isinstance(listing.get("data"), list):
        return None
    ids = [entry.get("id") for entry in listing["data"] if isinstance(entry, dict)]
    usable = [i for i in ids if isinstance(i, str) and i.strip() and i.isprintable() and " " not in i]
    return tuple(dict.fromkeys(usable))[:MAX_MODELS]


__all__ = [
    "DEFAULT_PORTS",
    "DEFAULT_TIMEOUT",
    "HOSTED_PROVIDERS",
    "HostedProvider",
    "LocalServer",
    "detect_keys",
    "model_ids",
    "probe_local_servers",
]
