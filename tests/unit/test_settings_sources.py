"""Where settings come from: the environment a load is given (never os.environ behind its back),
and for settings built directly, their keyword arguments alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnez.settings import Settings, load_settings


def test_a_load_reads_the_environment_it_is_given_not_the_process_one(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HARNEZ_THEME", "from-the-process")
    given = {"HARNEZ_HOME": str(tmp_path / "home"), "HARNEZ_RETRY__MAX_ATTEMPTS": "7"}
    settings = load_settings(workspace, given)
    assert settings.theme == "textual-dark" and settings.retry.max_attempts == 7


def test_without_an_environment_a_load_reads_the_process_one(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARNEZ_THEME", "from-the-process")
    assert load_settings(workspace).theme == "from-the-process"


def test_loads_with_different_environments_do_not_see_each_other(workspace: Path, tmp_path: Path) -> None:
    home = {"HARNEZ_HOME": str(tmp_path / "home")}
    first = load_settings(workspace, {**home, "HARNEZ_MODEL": "a/one"})
    second = load_settings(workspace, home)
    assert (first.model, second.model) == ("a/one", None)


def test_settings_built_directly_take_only_their_keyword_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNEZ_THEME", "from-the-process")
    monkeypatch.setenv("HARNEZ_RETRY__MAX_ATTEMPTS", "9")
    settings = Settings(model="local/m")
    assert (settings.theme, settings.retry.max_attempts, settings.model) == ("textual-dark", 4, "local/m")
    assert settings.workspace is None and settings.warnings == ()


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"PATH": "/bin", "HARNEZ_HOME": "/h", "HARNEZ_NOT_A_SETTING": "x"},
        {"HARNEZ_MODEL": "local/m", "harnez_theme": "nord", "Harnez_Database_Path": "db.sqlite"},
        {"HARNEZ_MODEL": "a/b", "harnez_model": "c/d"},
        {"HARNEZ_MODEL": "", "HARNEZ_THEME": " spaced "},
        {"HARNEZ_DATABASE_PATH": "~/x.sqlite", "HARNEZ_MODELX": "1"},
    ],
)
def test_plain_text_variables_are_read_as_pydantic_settings_reads_them(env: dict[str, str]) -> None:
    """`environment_values` reads HARNEZ_<NAME> of a plain text setting itself (pydantic-settings is
    imported only for variables it must decode): the same values as the package's source."""
    from harnez.settings.loading import PLAIN_TEXT_SETTINGS, environment_values, source_values

    assert environment_values(env) == source_values(env)
    assert {
        name
        for name, field in Settings.model_fields.items()
        if field.annotation in (str, str | None, Path | None)
    } == PLAIN_TEXT_SETTINGS
