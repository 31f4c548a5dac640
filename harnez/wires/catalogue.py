"""Providers and models: endpoints from settings, known models, thinking levels and cost."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from harnez.errors import ModelConfigError
from harnez.redaction import SECRETS
from harnez.settings import (
    BASE_URL_IN_SETTINGS,
    THINKING_LEVELS,
    ModelInfo,
    ModelRef,
    Rate,
    Settings,
    WireName,
)
from harnez.wires.base import ModelSpec, Usage

_OPENAI_GPT5 = ("minimal", "low", "medium", "high")
_OPENAI_O = ("low", "medium", "high")
_ANTHROPIC = THINKING_LEVELS[1:]

KNOWN_MODELS: dict[str, ModelSpec] = {
    "gpt-5": ModelSpec(400_000, 128_000, _OPENAI_GPT5),
    "gpt-5-mini": ModelSpec(400_000, 128_000, _OPENAI_GPT5),
    "gpt-5-nano": ModelSpec(400_000, 128_000, _OPENAI_GPT5),
    "gpt-4.1": ModelSpec(1_047_576, 32_768),
    "gpt-4.1-mini": ModelSpec(1_047_576, 32_768),
    "gpt-4o": ModelSpec(128_000, 16_384),
    "gpt-4o-mini": ModelSpec(128_000, 16_384),
    "o3": ModelSpec(200_000, 100_000, _OPENAI_O),
    "o4-mini": ModelSpec(200_000, 100_000, _OPENAI_O),
    "claude-opus-4-1": ModelSpec(200_000, 32_000, _ANTHROPIC),
    "claude-opus-4": ModelSpec(200_000, 32_000, _ANTHROPIC),
    "claude-sonnet-4-5": ModelSpec(200_000, 64_000, _ANTHROPIC),
    "claude-sonnet-4": ModelSpec(200_000, 64_000, _ANTHROPIC),
    "claude-haiku-4-5": ModelSpec(200_000, 64_000, _ANTHROPIC),
    "claude-3-5-haiku": ModelSpec(200_000, 8_192),
    "llama3.1": ModelSpec(131_072, 8_192),
    "llama3.2": ModelSpec(131_072, 8_192),
    "qwen2.5-coder": ModelSpec(32_768, 8_192),
    "qwen3": ModelSpec(40_960, 8_192, _OPENAI_O),
    "deepseek-r1": ModelSpec(65_536, 8_192, _OPENAI_O),
    "gpt-oss": ModelSpec(131_072, 32_768, _OPENAI_O),
}
"""Keyed by model id or id prefix (`claude-sonnet-4-5-20250929` matches `claude-sonnet-4-5`)."""

UNKNOWN_MODEL = ModelSpec(context_window=32_000, max_output=4_096)
"""Conservative defaults for a model nobody described: a small window, no thinking."""

ANTHROPIC_BUDGETS = {
    "minimal": 1_024,
    "low": 2_048,
    "medium": 8_192,
    "high": 16_384,
    "xhigh": 32_000,
    "max": 64_000,
}
OPENAI_EFFORTS = {
    "minimal": "minimal",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "high",
    "max": "high",
}


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where and how to reach one provider. The key never shows in a repr."""

    provider: str
    wire: WireName
    base_url: str
    api_key: str | None = field(default=None, repr=False)
    key_env: str | None = None
    """The name of the variable the key came from, for messages."""
    headers: dict[str, str] = field(default_factory=dict)
    prompt_cache: bool = True
    """Whether requests carry prompt-cache hints (anthropic-messages breakpoints; api.openai.com's key)."""
    base_url_origin: str = BASE_URL_IN_SETTINGS
    """Where a message about the base URL tells the person to look (`--base-url` when a flag gave it)."""


@dataclass(frozen=True, slots=True)
class ResolvedModel:
    """A `<provider>/<model>` reference made concrete."""

    provider: str
    model: str
    thinking: str
    """The requested level, clamped to what the model supports."""
    endpoint: Endpoint
    spec: ModelSpec
    rate: Rate | None


def endpoint_for(settings: Settings, provider: str) -> Endpoint:
    """The provider's endpoint, with its key read from the variable its settings name."""
    found = settings.providers.get(provider)
    if found is None:
        known = ", ".join(sorted(settings.providers)) or "none configured"
        raise ModelConfigError(
            f"unknown provider {provider!r}: add it under `providers` in settings.json (known: {known})"
        )
    SECRETS.learn_url(found.base_url)  # a password or `?key=` in the URL is masked like a key
    key = None
    if found.api_key_env is not None:
        SECRETS.learn(found.api_key_env)
        key = _key_in(provider, found.api_key_env)
    base = found.base_url.rstrip("/")
    return Endpoint(
        provider,
        found.wire,
        base,
        key,
        found.api_key_env,
        dict(found.headers),
        found.prompt_cache,
        found.base_url_origin,
    )


def _key_in(provider: str, variable: str) -> str:
    """The key a variable holds, without the white space around it: a line break pasted with it into a
    CI secret, a carriage return from an .env file written on Windows. Sent as it was, the header was
    refused on every attempt ("the connection … broke: Illegal header value"), retried four times."""
    key = (os.environ.get(variable) or "").strip()
    if not key:
        raise ModelConfigError(
            f"provider {provider!r} needs an API key: set the environment variable {variable}"
        )
    if not (key.isascii() and key.isprintable()):
        raise ModelConfigError(
            f"the API key in {variable} (provider {provider!r}) holds a character no request header can "
            "carry (a control character, or a letter outside ASCII such as a typographic quote): put the "
            "key in the variable again, exactly as the provider gave it"
        )
    return key


def known_spec(model: str) -> ModelSpec | None:
    """The built-in description of a model id, matched exactly or by the longest known prefix."""
    if model in KNOWN_MODELS:
        return KNOWN_MODELS[model]
    base = model.rsplit("/", 1)[-1]
    matches = [k for k in KNOWN_MODELS if base.startswith(k)]
    return KNOWN_MODELS[max(matches, key=len)] if matches else None


def model_spec(settings: Settings, provider: str, model: str, wire: WireName) -> ModelSpec:
    """The catalogue's spec, overridden per field by `settings.models` (full ref or bare id)."""
    spec = known_spec(model) or UNKNOWN_MODEL
    info = settings.models.get(f"{provider}/{model}") or settings.models.get(model)
    return _override(spec, info, wire) if info is not None else spec


def _override(spec: ModelSpec, info: ModelInfo, wire: WireName) -> ModelSpec:
    levels = spec.thinking_levels
    if info.thinking is False:
        levels = ()
    elif info.thinking and not levels:
        levels = _ANTHROPIC if wire == "anthropic-messages" else _OPENAI_O
    return ModelSpec(
        context_window=info.context_window or spec.context_window,
        max_output=info.max_output or spec.max_output,
        thinking_levels=levels,
    )


def clamp_thinking(spec: ModelSpec, level: str) -> str:
    """The nearest level the model supports at or below `level` (its lowest if none is below)."""
    if level not in THINKING_LEVELS:
        raise ModelConfigError(f"unknown thinking level {level!r}: use one of {', '.join(THINKING_LEVELS)}")
    if level == "off" or not spec.thinking_levels:
        return "off"
    rank = THINKING_LEVELS.index(level)
    below = [lv for lv in spec.thinking_levels if THINKING_LEVELS.index(lv) <= rank]
    return below[-1] if below else spec.thinking_levels[0]


def anthropic_thinking(level: str, max_tokens: int) -> dict[str, Any] | None:
    """The `thinking` parameter for a level; None when off or when the output cap leaves no room."""
    if level == "off":
        return None
    budget = min(ANTHROPIC_BUDGETS[level], max_tokens - 1)
    if budget < 1_024:
        return None
    return {"type": "enabled", "budget_tokens": budget}


def forces_tools(model: ResolvedModel) -> bool:
    """Whether a request can hold this model to one tool: every wire can, but Anthropic's not while the
    model thinks (extended thinking refuses a forced `tool_choice`)."""
    if model.endpoint.wire != "anthropic-messages":
        return True
    return anthropic_thinking(clamp_thinking(model.spec, model.thinking), model.spec.max_output) is None


def openai_effort(level: str) -> str | None:
    """The `reasoning_effort` / `reasoning.effort` value for a level; None when off."""
    return None if level == "off" else OPENAI_EFFORTS[level]


def rate_for(settings: Settings, provider: str, model: str) -> Rate | None:
    """The price of a model from the rate card: `<provider>/<model>` first, then the bare id."""
    return settings.rates.get(f"{provider}/{model}") or settings.rates.get(model)


def cost_of(usage: Usage, rate: Rate | None) -> float | None:
    """The cost in US dollars; None (never 0) when unpriced or when no tokens were reported.

    Cache reads and writes use their own prices, or the input price when the card has none.
    Reasoning tokens are already part of `output` and are not counted twice.
    """
    if rate is None or (usage.input is None and usage.output is None):
        return None
    cache_read_rate = rate.input if rate.cache_read is None else rate.cache_read
    cache_write_rate = rate.input if rate.cache_write is None else rate.cache_write
    total = (
        (usage.input or 0) * rate.input
        + (usage.output or 0) * rate.output
        + (usage.cache_read or 0) * cache_read_rate
        + (usage.cache_write or 0) * cache_write_rate
    )
    return total / 1_000_000


def resolve_model(settings: Settings, provider: str, model: str, thinking: str = "off") -> ResolvedModel:
    """Make `<provider>/<model>[:<thinking>]` concrete: endpoint, spec, clamped level and price."""
    endpoint = endpoint_for(settings, provider)
    spec = model_spec(settings, provider, model, endpoint.wire)
    level = clamp_thinking(spec, thinking)
    return ResolvedModel(provider, model, level, endpoint, spec, rate_for(settings, provider, model))


def resolve_ref(settings: Settings, ref: ModelRef) -> ResolvedModel:
    """`resolve_model` for a parsed `<provider>/<model>[:<thinking>]`; no level means off."""
    return resolve_model(settings, ref.provider, ref.model, ref.thinking or "off")


def _hosted_family(settings: Settings, provider: str) -> tuple[str, ...]:
    """The catalogue ids a provider is known to serve: OpenAI's on api.openai.com, Anthropic's on its wire."""
    found = settings.providers[provider]
    if found.wire == "anthropic-messages":
        return tuple(k for k in KNOWN_MODELS if k.startswith("claude-"))
    if "api.openai.com" in found.base_url:
        return tuple(k for k in KNOWN_MODELS if k.startswith(("gpt-", "o3", "o4")))
    return ()


def suggested_models(settings: Settings, recent: list[str] | tuple[str, ...] = ()) -> list[str]:
    """Model references to offer in a picker, best first, each naming a configured provider:
    the default model, recently used ones, models described or priced in settings, then the
    catalogue's models for the hosted providers."""
    configured = set(settings.providers)
    candidates = [settings.model or "", *recent, *settings.models, *settings.rates]
    candidates += [f"{p}/{m}" for p in sorted(configured) for m in _hosted_family(settings, p)]
    offered: dict[str, None] = {}
    for text in candidates:
        provider, slash, model = text.partition("/")
        if slash and model and provider in configured:
            offered.setdefault(text, None)
    return list(offered)
