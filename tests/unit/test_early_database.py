"""The picker's database is known before the settings load, unless a settings file may name another."""

from __future__ import annotations

from pathlib import Path

from harnez.paths import database_path, database_path_before_settings


def _env(tmp_path: Path, **more: str) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {"HARNEZ_HOME": str(home), **more}


def test_without_settings_files_it_is_the_projects_database(tmp_path: Path) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "src").mkdir()
    env = _env(tmp_path)
    found = database_path_before_settings(tmp_path / "repo" / "src", env)
    assert found == database_path(tmp_path / "repo" / "src", env) == tmp_path / "repo/.harnez/harnez.sqlite"


def test_the_variable_wins_as_it_does_once_settings_load(tmp_path: Path) -> None:
    env = _env(tmp_path, HARNEZ_DATABASE_PATH=str(tmp_path / "elsewhere.sqlite"))
    assert database_path_before_settings(tmp_path, env) == tmp_path / "elsewhere.sqlite"


def test_settings_that_mention_database_path_leave_it_to_the_loaded_settings(tmp_path: Path) -> None:
    env = _env(tmp_path)
    (tmp_path / "home" / "settings.json").write_text('{"model": "local/x"}', encoding="utf-8")
    assert database_path_before_settings(tmp_path, env) is not None
    (tmp_path / ".harnez").mkdir()
    (tmp_path / ".harnez" / "settings.json").write_text('{"database_path": "/x.sqlite"}', encoding="utf-8")
    assert database_path_before_settings(tmp_path, env) is None


def test_an_unreadable_settings_file_or_a_variable_in_another_case_is_not_guessed(tmp_path: Path) -> None:
    env = _env(tmp_path)
    (tmp_path / "home" / "settings.json").write_bytes(b"\xff\xfe not utf-8")
    assert database_path_before_settings(tmp_path, env) is None
    (tmp_path / "home" / "settings.json").unlink()
    mixed = _env(tmp_path, harnez_database_path="/somewhere.sqlite")
    assert database_path_before_settings(tmp_path, mixed) is None
