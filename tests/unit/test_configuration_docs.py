"""docs/configuration.md shows the warning an invalid title source gives, word for word, and says what follows."""

from __future__ import annotations

import json
import re
from pathlib import Path

from harnez.settings import load_settings

DOCS = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"
DOC_PROJECT = "/src/app"


def _documented_warning() -> str:
    text = DOCS.read_text(encoding="utf-8")
    found = re.search(r"An invalid title source is a warning instead.*?```\n(.*?)\n```", text, re.S)
    assert found, "docs/configuration.md lost its example of the invalid title source warning"
    return found.group(1)


def test_the_documented_warning_is_the_one_a_broken_model_source_gives(tmp_path: Path) -> None:
    documented = _documented_warning()
    source = re.search(r'the title source "([^"]+)"', documented).group(1)
    project = tmp_path / "app"
    (project / ".harnez").mkdir(parents=True)
    (project / ".harnez" / "settings.json").write_text(json.dumps({"session": {"title": {"source": source}}}))
    (warning,) = load_settings(project, {"HARNEZ_HOME": str(tmp_path / "home")}).warnings
    assert warning == documented.replace(DOC_PROJECT, str(project))
    assert warning.endswith(
        "Sessions keep a cleaned excerpt of their first prompt as title until this is fixed."
    )
    assert "keywords/yake` until" not in DOCS.read_text(encoding="utf-8"), (
        "the docs no longer promise YAKE for it"
    )
