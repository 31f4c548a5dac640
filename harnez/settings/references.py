"""Model references (`<provider>/<model>[:<thinking>]`) and title sources (`keywords/yake`, `model/…`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from harnez.errors import SettingsError
from harnez.settings.messages import TITLE_SOURCE_FORMS, embedded, shown

ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]
THINKING_LEVELS: tuple[str, ...] = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
KEYWORDS_SOURCE_TEXT = "keywords/yake"
PROVIDER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
"""What a provider name may be: the part before the first `/` of a model reference."""


@dataclass(frozen=True)
class ModelRef:
    """A model named as `<provider>/<model>[:<thinking>]`; the model id may hold `/` and `:`."""

    provider: str
    model: str
    thinking: str | None = None

    @property
    def name(self) -> str:
        """`<provider>/<model>` without the thinking level (the key of `models` and `rates`)."""
        return f"{self.provider}/{self.model}"

    def __str__(self) -> str:
        return self.name if self.thinking is None else f"{self.name}:{self.thinking}"


def parse_model_ref(text: str) -> ModelRef:
    """Parse `<provider>/<model>[:<thinking>]`; a trailing `:<level>` is thinking only for known levels."""
    quoted = shown(text)
    form = "write it as `<provider>/<model>[:<thinking>]`, for example `openai/gpt-5:high`"
    if not isinstance(text, str) or not text.strip():
        raise SettingsError(f"The model reference is empty; {form}.")
    if any(ch.isspace() or not ch.isprintable() for ch in text):
        raise SettingsError(f"The model reference {quoted} contains spaces or control characters; {form}.")
    provider, slash, rest = text.partition("/")
    if not slash or not provider:
        raise SettingsError(f"The model reference {quoted} has no provider before a `/`; {form}.")
    if not PROVIDER_NAME.match(provider):
        raise SettingsError(
            f"The model reference {quoted} starts with the provider name {shown(provider)}, which is not "
            "a valid provider name (letters, digits, `_`, `.` and `-`); " + form + "."
        )
    model, thinking = rest, None
    head, colon, tail = rest.rpartition(":")
    if colon and tail in THINKING_LEVELS and head:
        model, thinking = head, tail
    elif colon and not tail:
        levels = ", ".join(THINKING_LEVELS)
        raise SettingsError(
            f"The model reference {quoted} ends with `:` but no thinking level; use one of {levels}."
        )
    if not model or model.startswith(("/", ":")) or model.endswith("/"):
        raise SettingsError(f"The model reference {quoted} has no model id after the provider; {form}.")
    return ModelRef(provider=provider, model=model, thinking=thinking)


@dataclass(frozen=True)
class TitleSource:
    """Where automatic session titles come from: local keywords, or a model."""

    kind: Literal["keywords", "model"]
    model: ModelRef | None = None

    def __str__(self) -> str:
        return KEYWORDS_SOURCE_TEXT if self.model is None else f"model/{self.model}"


KEYWORDS_TITLE_SOURCE = TitleSource(kind="keywords")


def parse_title_source(text: str) -> TitleSource:
    """Parse `keywords/yake` or `model/<provider>/<model>[:<thinking>]`."""
    if text == KEYWORDS_SOURCE_TEXT:
        return KEYWORDS_TITLE_SOURCE
    if isinstance(text, str) and text.startswith("model/"):
        try:
            return TitleSource(kind="model", model=parse_model_ref(text.removeprefix("model/")))
        except SettingsError as exc:
            reason = embedded(exc.message)
            raise SettingsError(f"The title source {shown(text)} names a bad model: {reason}.") from None
    if isinstance(text, str) and text.startswith("keywords/"):
        raise SettingsError(
            f"The title source {shown(text)} is unknown; the only keyword extractor is `yake`."
        )
    raise SettingsError(f"The title source {shown(text)} is not valid; use {TITLE_SOURCE_FORMS}.")
