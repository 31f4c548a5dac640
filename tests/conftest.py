"""Shared test set-up: every test gets its own config folder and database, never the person's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from harnez.redaction import SECRETS
from harnez.wires.openai_chat import STREAM_OPTIONS_REFUSED


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Point HARNEZ_HOME at an empty folder and unset variables that would leak the real setup."""
    home = tmp_path_factory.mktemp("harnez-home")
    monkeypatch.setenv("HARNEZ_HOME", str(home))
    for name in (
        "HARNEZ_DATABASE_PATH",
        "HARNEZ_MODEL",
        "HARNEZ_THEME",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)
    yield home
    SECRETS.forget_values()  # credentials a test registered do not mask text in the next one
    STREAM_OPTIONS_REFUSED.clear()  # a later test's server may listen on a refusing one's port


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty workspace folder."""
    ws = tmp_path / "workspace"
    ws.mkdir()
    return ws


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """Where the test's database lives."""
    return tmp_path / "db" / "harnez.sqlite"


from harnez.testing.fixtures import scripted_model  # noqa: E402,F401  (the scripted model server, for every test folder)
