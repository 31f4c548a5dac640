"""When a session is named: once, on its first normal prompt; a person's rename always wins."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import unicodedata
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Protocol

from harnez.errors import HarnezError, StoreError
from harnez.settings import ModelRef, TitleSettings, parse_title_source
from harnez.text import sentence
from harnez.titles.keywords import MAX_TITLE_CHARS, excerpt_title
from harnez.titles.worker import KeywordWorker, TitleWorkerError

log = logging.getLogger(__name__)

MODEL_SOURCE_PREFIX = "model/"


class ModelTitler(Protocol):
    """Asks a model for a title of a prompt; raises HarnezError (with a reason, no secret) when it cannot."""

    def __call__(self, ref: ModelRef, prompt: str, *, session_id: str | None = None) -> Awaitable[str]: ...


class TitleStore(Protocol):
    """What naming needs from the server; every call is keyed by session id."""

    async def mark_naming_used(self, session_id: str) -> bool:
        """Record that the first prompt was seen; False when it already had been (persisted)."""

    async def save_automatic_title(
        self, session_id: str, title: str, source: str, *, only_if_untitled: bool = False
    ) -> bool:
        """Store a title unless the person named the session (and, with only_if_untitled, unless it has
        any title; checked atomically); False when refused."""

    async def warn(self, session_id: str, code: str, message: str) -> None:
        """Append a warning event to the session."""


def usable_title(reply: str) -> str | None:
    """A model's reply as a title: trimmed, one line, quotes and a `Title:` prefix removed; None if unusable."""
    lines = [line.strip() for line in reply.strip().splitlines() if line.strip()]
    if not lines:
        return None
    title = lines[0]
    if title.lower().startswith("title:"):
        title = title[6:].strip()
    title = title.strip(" \"'`*#").rstrip(".").strip()
    if (
        not title
        or len(title) > MAX_TITLE_CHARS
        or any(unicodedata.category(c) in ("Cc", "Cf") for c in title)
    ):
        return None
    return title


DECIDED_KEPT = 4096
"""How many sessions whose naming is decided `TitlePolicy` remembers (the newest)."""


@dataclass
class TitlePolicy:
    """Decides whether and how a prompt names its session; runs naming in the background."""

    store: TitleStore
    settings: TitleSettings
    model_titler: ModelTitler | None = None
    keyword_worker: KeywordWorker = field(default_factory=KeywordWorker)
    """Computes keyword titles in a process of its own (never in this interpreter: YAKE holds its lock)."""

    def __post_init__(self) -> None:
        self._background: set[asyncio.Task[None]] = set()
        self._cut_short: dict[str, str] = {}
        """Sessions whose naming `close` cancelled, with their first prompt: each gets its excerpt."""
        self._decided: dict[str, None] = {}
        """Sessions whose naming flag this policy saw set (persisted: it is never cleared), the newest
        `DECIDED_KEPT` of them in order: a long-lived server meets sessions without end, and a session
        forgotten here only costs its next prompt one write that finds the flag set."""

    async def on_prompt(
        self, session_id: str, prompt: str, *, after: asyncio.Event | None = None
    ) -> asyncio.Task[None] | None:
        """Call for a normal prompt that starts a task. Returns the naming task, if one started.

        Naming begins once `after` is set (the server passes its task's first answer being complete),
        so neither YAKE nor a title request competes with the first words the person waits for.
        """
        if session_id in self._decided:
            return None  # its first prompt was seen: no read and no write transaction on a later prompt's way
        used = await self.store.mark_naming_used(session_id)
        self._decided[session_id] = None
        if len(self._decided) > DECIDED_KEPT:
            del self._decided[next(iter(self._decided))]
        if not used:
            return None
        if not self.settings.generated:
            return None
        name = self._name(session_id, prompt, after)
        task = asyncio.create_task(name, name=f"harnez-title-{session_id[:8]}")
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    async def close(self) -> None:
        """Cancel naming still in flight and stop the keyword worker. A session whose naming was cut
        short gets the excerpt of its first prompt, unless it has a title by now: naming runs once, and
        a person who quits right after a first prompt (or cancels it and quits) would otherwise keep an
        untitled session for good, listed under its folder's name."""
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        cut_short, self._cut_short = self._cut_short, {}
        for session_id, prompt in cut_short.items():
            fallback = excerpt_title(prompt)
            if fallback:
                with contextlib.suppress(StoreError):
                    await self.store.save_automatic_title(
                        session_id, fallback, "excerpt", only_if_untitled=True
                    )
        await self.keyword_worker.close()

    async def wait_idle(self) -> None:
        """Wait until no naming runs (headless commands and tests; the task never waits for naming)."""
        while self._background:
            await asyncio.gather(*self._background, return_exceptions=True)

    async def _name(self, session_id: str, prompt: str, after: asyncio.Event | None) -> None:
        try:
            if after is not None:
                await after.wait()
            await self._name_from_source(session_id, prompt)
        except asyncio.CancelledError:
            self._cut_short[session_id] = prompt  # `close`: its excerpt, unless a title got saved
            raise
        except StoreError:
            return  # saving failed for good: the task and every front end already report it
        except Exception as exc:
            log.exception("naming session %s failed", session_id)
            with contextlib.suppress(StoreError):
                await self.store.warn(
                    session_id,
                    "title-failed",
                    f"Automatic naming failed unexpectedly ({type(exc).__name__}); the title is unchanged.",
                )

    async def _name_from_source(self, session_id: str, prompt: str) -> None:
        text = self.settings.source
        try:
            source = parse_title_source(text)
        except HarnezError as exc:
            await self._invalid_source(session_id, prompt, text, exc.message)
            return
        if source.kind == "keywords" or source.model is None:
            await self._keywords(session_id, prompt)
        else:
            await self._model(session_id, prompt, source.model)

    async def _invalid_source(self, session_id: str, prompt: str, text: str, reason: str) -> None:
        """A broken `model/...` source keeps the excerpt; any other broken source falls back to keywords."""
        if isinstance(text, str) and text.startswith(MODEL_SOURCE_PREFIX):
            await self._save_excerpt(session_id, prompt)
            await self.store.warn(
                session_id, "title-failed", f"{sentence(reason)} Kept the excerpt as the title."
            )
            return
        await self.store.warn(
            session_id, "title-failed", f"{sentence(reason)} Used the keyword title instead."
        )
        await self._keywords(session_id, prompt)

    async def _keywords(self, session_id: str, prompt: str) -> None:
        """The keyword title; the excerpt when the worker fails (logged: the person lost nothing but keywords)."""
        try:
            title = await self.keyword_worker.title(prompt)
        except (OSError, TitleWorkerError) as exc:
            log.warning(
                "keyword title of session %s failed (%s); keeping the excerpt as its title", session_id, exc
            )
            await self._save_excerpt(session_id, prompt)
            return
        if title:
            await self.store.save_automatic_title(session_id, title, "keywords")

    async def _save_excerpt(self, session_id: str, prompt: str) -> bool | None:
        """Store the excerpt; None when the prompt has none, False when the person already named the session."""
        fallback = excerpt_title(prompt)
        if not fallback:
            return None
        return await self.store.save_automatic_title(session_id, fallback, "excerpt")

    async def _model(self, session_id: str, prompt: str, model: ModelRef) -> None:
        if await self._save_excerpt(session_id, prompt) is False:
            return  # named by the person already: no request, no cost
        if self.model_titler is None:
            await self.store.warn(
                session_id,
                "title-failed",
                f"Model titles are not available in this front end; kept the excerpt ({model}).",
            )
            return
        try:
            reply = await self.model_titler(model, prompt, session_id=session_id)
        except HarnezError as exc:
            await self.store.warn(
                session_id,
                "title-failed",
                f"Naming with {model} failed: {sentence(exc.message)} Kept the excerpt.",
            )
            return
        title = usable_title(reply)
        if title is None:
            await self.store.warn(
                session_id,
                "title-failed",
                f"{model} gave no usable title (empty, control characters or too long); kept the excerpt.",
            )
            return
        await self.store.save_automatic_title(session_id, title, "model")
