"""Fixtures for the wire tests: the scripted model, and retrying wires pointed at it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest

from harnez.settings import RetrySettings
from harnez.testing.fixtures import scripted_model  # noqa: F401  (registers the fixture)
from harnez.testing.scripted_model import ScriptedModel
from harnez.wires import WIRES, RetryingWire
from tests.wires.helpers import SECRET, Delays, endpoint


@pytest.fixture
def delays() -> Delays:
    return Delays()


@pytest.fixture
async def make_wire(
    scripted_model: ScriptedModel,  # noqa: F811
    delays: Delays,
) -> AsyncIterator[Callable[..., RetryingWire]]:
    """Build retrying wires against the scripted model (3 attempts); all are closed after the test."""
    opened: list[RetryingWire] = []

    def build(wire: str, key: str | None = SECRET, **retry: float) -> RetryingWire:
        settings = RetrySettings(**{"max_attempts": 3, "base_delay": 0.5, **retry})
        inner = WIRES[wire](endpoint(scripted_model, wire, key), retry=settings)
        opened.append(RetryingWire(inner, settings, sleep=delays))
        return opened[-1]

    yield build
    for wire in opened:
        await wire.aclose()
