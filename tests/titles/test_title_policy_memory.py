"""The title policy remembers a bounded number of decided sessions; one it forgot is asked again."""

from __future__ import annotations

import pytest

from harnez.settings import TitleSettings
from harnez.titles import policy
from harnez.titles.policy import TitlePolicy


class FlagStore:
    """A title store that only keeps the naming flags (each session's first call sets it)."""

    def __init__(self) -> None:
        self.used: set[str] = set()
        self.calls: list[str] = []

    async def mark_naming_used(self, session_id: str) -> bool:
        self.calls.append(session_id)
        first = session_id not in self.used
        self.used.add(session_id)
        return first

    async def save_automatic_title(self, session_id: str, title: str, source: str) -> bool:
        return True

    async def warn(self, session_id: str, code: str, message: str) -> None:
        return None


async def test_decided_sessions_are_remembered_up_to_a_bound_and_a_forgotten_one_is_not_renamed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(policy, "DECIDED_KEPT", 2)
    store = FlagStore()
    titles = TitlePolicy(store, TitleSettings(generated=False))
    for session in ("a", "b", "c"):
        await titles.on_prompt(session, "a prompt")
    await titles.on_prompt("c", "again")  # remembered: no write
    assert store.calls == ["a", "b", "c"]
    assert await titles.on_prompt("a", "again") is None  # forgotten: asked again, and not named
    assert store.calls == ["a", "b", "c", "a"]
    await titles.close()
