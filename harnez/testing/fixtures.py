"""Pytest fixtures for the scripted model; register with `from harnez.testing.fixtures import *`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from harnez.testing.scripted_model import ScriptedModel

__all__ = ["scripted_model"]


@pytest.fixture
def scripted_model() -> Iterator[ScriptedModel]:
    """A scripted model listening on a random loopback port; add turns with `.add(...)`."""
    with ScriptedModel() as server:
        yield server
