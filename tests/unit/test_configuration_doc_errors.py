"""docs/configuration.md's examples of the errors a bad settings file or variable gives are the errors
Harnez gives, word for word: a key added to a section (prompt_cache was) changes what they list."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harnez.errors import SettingsError
from harnez.settings import load_settings

DOCS = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"
DOC_PROJECT = "/src/app"


def _documented(key: str) -> str:
    """The documented error about the project file's `key`."""
    found = re.search(
        rf"^Invalid setting in the project settings file \S+, key `{re.escape(key)}`: .*$", _text(), re.M
    )
    assert found, f"docs/configuration.md lost its example of the error about `{key}`"
    return found.group(0)


def _text() -> str:
    return DOCS.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("key", "written"),
    [
        (
            "providers.local.wirez",
            '{"providers": {"local": {"wire": "openai-chat", "wirez": "x", "base_url": "http://x"}}}',
        ),
        (
            "providers.local.api_key_env",
            '{"providers": {"local": {"wire": "openai-chat", "base_url": "http://x", '
            '"api_key_env": "sk-abcdefABCDEF1234567890abcdef"}}}',
        ),
        ("retry.max_attempts", '{"retry": {"max_attempts": true}}'),
    ],
)
def test_the_documented_error_is_the_one_the_file_gives(tmp_path: Path, key: str, written: str) -> None:
    project = tmp_path / "app"
    (project / ".harnez").mkdir(parents=True)
    (project / ".harnez" / "settings.json").write_text(written)
    with pytest.raises(SettingsError) as refused:
        load_settings(project, {"HARNEZ_HOME": str(tmp_path / "home")})
    assert str(refused.value) == _documented(key).replace(DOC_PROJECT, str(project))
