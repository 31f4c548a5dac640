"""Which project hooks the person trusted: remembered in the global config folder, by project and digest.

A project's `.harnez/settings.json` arrives with a clone, so its hooks are someone else's code: they
run only once the person trusted exactly those hooks for exactly that folder. The record lives
outside the project (`trusted-hooks.json` in the global config folder), keyed by the project's path
and the SHA-256 of its hooks, so a changed command asks again.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harnez import paths
from harnez.errors import SettingsError
from harnez.settings import HOOK_NAMES, HookSettings, Settings

TRUST_FILE = "trusted-hooks.json"


def hooks_digest(hooks: HookSettings) -> str:
    """The SHA-256 of the hooks as checked (commands, timeouts, tools, limit), in a stable JSON form."""
    text = json.dumps(hooks.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class HookReview:
    """A project's hooks as the person is asked to trust them: where they are, what they run, their digest."""

    workspace: Path
    hooks: HookSettings
    digest: str

    @property
    def settings_file(self) -> Path:
        return paths.project_settings_path(self.workspace)

    def lines(self) -> list[str]:
        """One line per command: `stop: make test`, `pre_tool (shell): ./guard.sh`."""
        found = []
        for hook in HOOK_NAMES:
            for command in self.hooks.commands(hook):
                only = f" ({', '.join(command.tools)})" if command.tools else ""
                found.append(f"{hook}{only}: {command.command}")
        return found


class HookTrust:
    """The trust file: which digest of hooks the person trusted for each project folder."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self.path = paths.config_dir(env) / TRUST_FILE

    def review(self, settings: Settings) -> HookReview | None:
        """The project's hooks when it has some the person has not trusted (as they are now), else None."""
        hooks, workspace = settings.project_hooks, settings.workspace
        if hooks.empty or workspace is None:
            return None
        digest = hooks_digest(hooks)
        if self._read().get(str(workspace), {}).get("digest") == digest:
            return None
        return HookReview(workspace, hooks, digest)

    def in_force(self, settings: Settings) -> tuple[HookSettings, HookReview | None]:
        """The hooks a task runs — the person's own, then the project's when trusted — and the review of
        project hooks left out because they are not."""
        waiting = self.review(settings)
        if waiting is not None or settings.project_hooks.empty:
            return settings.hooks, waiting
        return settings.hooks.joined(settings.project_hooks), None

    def trust(self, review: HookReview) -> None:
        """Remember that the person trusts these hooks (this digest) for this project."""
        records = self._read()
        records[str(review.workspace)] = {"digest": review.digest, "trusted_at": round(time.time())}
        self._write({"version": 1, "projects": records})

    def _read(self) -> dict[str, Any]:
        """The trusted projects; an unreadable or damaged file trusts nothing (hooks ask again)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            return {}
        projects = data.get("projects") if isinstance(data, dict) else None
        if not isinstance(projects, dict):
            return {}
        return {key: value for key, value in projects.items() if isinstance(value, dict)}

    def _write(self, data: dict[str, Any]) -> None:
        """Write the file atomically (a temporary file renamed over it), readable by its owner only."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, temp = tempfile.mkstemp(prefix=".trusted-hooks-", dir=self.path.parent)
        except OSError as exc:
            raise self._unwritable(exc) from None
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
            os.replace(temp, self.path)
        except OSError as exc:
            Path(temp).unlink(missing_ok=True)
            raise self._unwritable(exc) from None

    def _unwritable(self, exc: OSError) -> SettingsError:
        return SettingsError(
            f"Cannot remember the trusted hooks in {self.path} ({exc.strerror or exc}); the hooks stay "
            "untrusted. Check that folder's permissions."
        )
