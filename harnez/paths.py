"""Where Harnez keeps things: XDG config folder, the workspace folder, the database path."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

DATABASE_ENV = "HARNEZ_DATABASE_PATH"
HOME_ENV = "HARNEZ_HOME"
"""When set, replaces the global config folder (tests use it to isolate themselves)."""


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


def database_path(workspace: Path, env: Mapping[str, str] | None = None) -> Path:
    """The database file: $HARNEZ_DATABASE_PATH, else `<workspace>/.harnez/harnez.sqlite`."""
    env = os.environ if env is None else env
    override = env.get(DATABASE_ENV)
    if override:
        return Path(override).expanduser().resolve()
    return workspace_dir(workspace) / "harnez.sqlite"


def global_skills_dir(env: Mapping[str, str] | None = None) -> Path:
    """Skills shared by every workspace."""
    return config_dir(env) / "skills"


def project_skills_dir(workspace: Path) -> Path:
    """Skills of one workspace."""
    return workspace_dir(workspace) / "skills"
