"""Credentials kept out of what Harnez stores, prints and hands to commands: known values are masked.

Harnez never asks for a key itself, only for the NAME of the variable holding it. Every such name
this process meets (the providers in settings, the hosted providers' usual variables, the token of
each of `harnez serve`'s principals, the token an MCP server's `auth` names) is registered here with
its value, so that:

- every text a provider sent (errors, warnings, malformed lines, stream items) and everything the
  store writes is masked before it is kept or printed (`redact`, `redact_json`);
- shell commands run without those variables (`command_environment`), unless settings pass one
  through on purpose (`permissions.shell.pass_env`).
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any

MASK = "[redacted]"
MIN_SECRET_LENGTH = 8
"""Shorter values are not masked: they would blank ordinary words (and are no real keys)."""

CREDENTIAL_PARAMETER = re.compile(r"key|token|secret|sig|pass|auth|credential", re.IGNORECASE)
"""Names of URL query parameters that carry a credential (`?key=…`, `?access_token=…`, `?sig=…`)."""

COMMON_KEY_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")
"""The hosted providers' usual key variables: withheld from commands even before settings name them."""


class Secrets:
    """The credential variables this process knows of, and their values."""

    def __init__(self) -> None:
        self._names: set[str] = set(COMMON_KEY_VARIABLES)
        self._values: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self._lock = threading.Lock()

    @property
    def names(self) -> frozenset[str]:
        """The variables that hold credentials (whether or not they are set)."""
        return frozenset(self._names)

    def learn(self, name: str, env: Mapping[str, str] | None = None) -> None:
        """Register a credential variable by name; its current value, if any, is masked from now on."""
        env = os.environ if env is None else env
        with self._lock:
            self._names.add(name)
        value = env.get(name)
        if value:
            self.add_value(value)

    def learn_all(self, names: Iterable[str], env: Mapping[str, str] | None = None) -> None:
        """`learn` each name."""
        for name in names:
            self.learn(name, env)

    def add_value(self, value: str) -> None:
        """Mask this exact text (and its stripped form) wherever it appears."""
        candidates = {value, value.strip()}
        with self._lock:
            fresh = {c for c in candidates if len(c) >= MIN_SECRET_LENGTH} - self._values
            if not fresh:
                return
            self._values |= fresh
            ordered = sorted(self._values, key=len, reverse=True)
            self._pattern = re.compile("|".join(re.escape(v) for v in ordered))

    def learn_url(self, url: str) -> None:
        """Mask the credentials a provider's URL carries (`url_credentials`) wherever they appear."""
        for value in url_credentials(url):
            self.add_value(value)

    def redact(self, text: str) -> str:
        """The text with every known secret value replaced by `[redacted]`."""
        pattern = self._pattern
        if pattern is None or not text:
            return text
        return pattern.sub(MASK, text)

    def redact_json(self, value: Any) -> Any:
        """A JSON-shaped value with every string (keys included) redacted; unchanged objects are reused."""
        if self._pattern is None:
            return value
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            return {
                self.redact(k) if isinstance(k, str) else k: self.redact_json(v) for k, v in value.items()
            }
        if isinstance(value, (list, tuple)):
            return [self.redact_json(v) for v in value]
        return value

    def holds_secret(self, text: str) -> bool:
        """Whether the text contains a known secret value."""
        pattern = self._pattern
        return pattern is not None and pattern.search(text) is not None

    def forget_values(self) -> None:
        """Drop every registered value and name but the common ones (tests)."""
        with self._lock:
            self._values.clear()
            self._pattern = None
            self._names = set(COMMON_KEY_VARIABLES)


SECRETS = Secrets()
"""The process-wide registry: settings, wires and `harnez serve` register into it."""


def redact(text: str) -> str:
    """`text` with every known credential masked."""
    return SECRETS.redact(text)


def redact_json(value: Any) -> Any:
    """A JSON-shaped value with every known credential masked in its strings."""
    return SECRETS.redact_json(value)


def command_environment(
    pass_through: Iterable[str] = (), base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment for a command the agent or the person runs: no credential variables.

    `pass_through` names variables to keep anyway (`permissions.shell.pass_env`).
    """
    base = os.environ if base is None else base
    withheld = SECRETS.names - set(pass_through)
    return {name: value for name, value in base.items() if name not in withheld}


def url_credentials(url: str) -> list[str]:
    """The credentials written into a URL, as written and decoded: its password (or a user name given
    alone: a token) and the values of query parameters named like one (`CREDENTIAL_PARAMETER`)."""
    from urllib.parse import unquote, urlsplit

    parts = urlsplit(url)
    user, has_password, password = parts.netloc.rpartition("@")[0].partition(":")
    written = [password if has_password else user]
    for parameter in parts.query.split("&"):
        name, _, value = parameter.partition("=")
        if CREDENTIAL_PARAMETER.search(unquote(name)):
            written.append(value)
    found = [form for value in written for form in (value, unquote(value.replace("+", " ")))]
    return [value for value in dict.fromkeys(found) if value]


def public_url(url: str) -> str:
    """A URL fit to store and print: no user name or password, query or fragment (where some providers
    take a key, `?key=…`), and known values masked."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port is not None:
        netloc += f":{parts.port}"
    return redact(urlunsplit((parts.scheme, netloc, parts.path, "", "")))
