"""Where Harnez keeps things: XDG config and state folders, the workspace folder, the project's database."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

DATABASE_ENV = "HARNEZ_DATABASE_PATH"
HOME_ENV = "HARNEZ_HOME"
"""When set, replaces the global config folder (tests use it to isolate themselves)."""
STATE_ENV = "HARNEZ_STATE_HOME"
"""When set, replaces the state folder (the index of databases); else `$HARNEZ_HOME/state` when that is set."""


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    """The global config folder: $HARNEZ_HOME, else $XDG_CONFIG_HOME/harnez, else ~/.config/harnez."""
    env = os.environ if env is None else env
    if env.get(HOME_ENV):
        return Path(env[HOME_ENV]).expanduser()
    xdg = env.get("XDG_CONFIG_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".config"
    return base / "harnez"


def global_settings_path(env: Mapping[str, str] | None = None) -> Path:
    """The global settings file."""
    return config_dir(env) / "settings.json"


def workspace_dir(workspace: Path) -> Path:
    """The `.harnez` folder inside a workspace."""
    return workspace / ".harnez"


def project_settings_path(workspace: Path) -> Path:
    """The project settings file of a workspace."""
    return workspace_dir(workspace) / "settings.json"


def settings_sources(workspace: Path, env: Mapping[str, str] | None = None) -> str:
    """Where a session's settings come from, said after a model or provider that is not configured:
    its own workspace's file and the global one, never the folder Harnez was started in."""
    return (
        f"A session's settings are its workspace's ({project_settings_path(workspace)}) "
        f"and the global ones ({global_settings_path(env)})."
    )


def state_dir(env: Mapping[str, str] | None = None) -> Path:
    """The state folder: $HARNEZ_STATE_HOME, else $HARNEZ_HOME/state, else $XDG_STATE_HOME/harnez,
    else ~/.local/state/harnez."""
    env = os.environ if env is None else env
    if env.get(STATE_ENV):
        return Path(env[STATE_ENV]).expanduser()
    if env.get(HOME_ENV):
        return Path(env[HOME_ENV]).expanduser() / "state"
    xdg = env.get("XDG_STATE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "state"
    return base / "harnez"


def database_index_path(env: Mapping[str, str] | None = None) -> Path:
    """The index of every database this user opened (docs/storage.md, "Every project")."""
    return state_dir(env) / "databases.json"


def project_root(folder: Path) -> Path:
    """The folder whose `.harnez/` holds the database for `folder`, found the way git finds its own:
    the nearest ancestor (or `folder` itself) holding a `.harnez` folder, else the root of the git
    work tree `folder` is in, else `folder`. The search stops at the filesystem root."""
    folder = Path(folder).resolve()
    chain = [folder, *folder.parents]
    for candidate in chain:
        if (candidate / ".harnez").is_dir():
            return candidate
    for candidate in chain:
        if (candidate / ".git").exists():  # a folder, or a file in a linked work tree or submodule
            return candidate
    return folder


def database_path(workspace: Path, env: Mapping[str, str] | None = None) -> Path:
    """The database file: $HARNEZ_DATABASE_PATH, else `.harnez/harnez.sqlite` of the workspace's project
    (`project_root`), so every folder of a project shares one session list."""
    env = os.environ if env is None else env
    override = env.get(DATABASE_ENV)
    if override:
        return Path(override).expanduser().resolve()
    return workspace_dir(project_root(workspace)) / "harnez.sqlite"


def database_path_before_settings(workspace: Path, env: Mapping[str, str] | None = None) -> Path | None:
    """The database file as far as it is known without loading the settings (pydantic's import is slow):
    $HARNEZ_DATABASE_PATH, else the project's. None when a settings file may name another (it mentions
    `database_path`, or cannot be read) or the variable is spelt in another case: then only the
    loaded settings say (`Settings.database_file`)."""
    env = os.environ if env is None else env
    if any(key.upper() == DATABASE_ENV and key != DATABASE_ENV for key in env):
        return None
    if env.get(DATABASE_ENV):
        return database_path(workspace, env)
    for settings in (global_settings_path(env), project_settings_path(workspace)):
        try:
            text = settings.read_text(encoding="utf-8")
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError):
            return None
        if "database_path" in text:
            return None
    return database_path(workspace, env)


def global_skills_dir(env: Mapping[str, str] | None = None) -> Path:
    """Skills shared by every workspace."""
    return config_dir(env) / "skills"


def project_skills_dir(workspace: Path) -> Path:
    """Skills of one workspace."""
    return workspace_dir(workspace) / "skills"
