"""A real `harnez serve` process on loopback, its providers pointing at the scripted model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from harnez.testing.scripted_model import ScriptedModel
from tests.http.helpers import SECRET, TOKEN, Served, validate_response

HARNEZ = Path(sys.executable).with_name("harnez")


def serve_environ(root: Path, env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment `harnez` runs with under `root` (see `start_serve`): its own home, the test key."""
    home = root / "home"
    environ = {k: v for k, v in os.environ.items() if not k.startswith("HARNEZ_")}
    environ.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        HARNEZ_HOME=str(home),
        HARNEZ_TEST_KEY=SECRET,
        PYTHONUNBUFFERED="1",
        **(env or {}),
    )
    return environ


def start_serve(
    root: Path,
    model: ScriptedModel,
    *extra: str,
    settings: dict | None = None,
    token: str | None = TOKEN,
    env: dict[str, str] | None = None,
) -> Served:
    """Start `harnez serve --port 0` in `root` and wait for its `listening on` line."""
    project, home = root / "project", root / "home"
    (project / ".harnez").mkdir(parents=True)
    home.mkdir()
    providers = {
        "chat": {
            "wire": "openai-chat",
            "base_url": model.base_url("openai-chat"),
            "api_key_env": "HARNEZ_TEST_KEY",
        },
        "other": {
            "wire": "openai-chat",
            "base_url": model.base_url("openai-chat"),
            "api_key_env": "HARNEZ_MISSING_KEY",
        },
    }
    config = {
        "providers": providers,
        "model": "chat/scripted-model",
        "permissions": {"mode": "accept-edits"},
        "retry": {"max_attempts": 2, "base_delay": 0.01, "max_delay": 0.05},
        **(settings or {}),
    }
    (project / ".harnez" / "settings.json").write_text(json.dumps(config))
    environ = serve_environ(root, env)
    if token is not None:
        environ["HARNEZ_SERVE_TOKEN"] = token
    process = subprocess.Popen(
        [str(HARNEZ), "serve", "--port", "0", *extra],
        cwd=project,
        env=environ,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    line = process.stdout.readline()
    if "listening on" not in line:
        process.kill()
        raise RuntimeError(f"harnez serve did not start: {line!r} {process.stderr.read()}")
    return Served(process, line.rsplit(" ", 1)[-1].strip(), project, model)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One served process (and scripted model) for a whole test module."""
    with ScriptedModel() as model:
        served = start_serve(tmp_path_factory.mktemp("serve"), model)
        try:
            yield served
        finally:
            served.stop()


def uhp_client(served: Served, token: str = TOKEN) -> httpx.Client:
    """An httpx client with the token (`--token-env`'s unless told); every JSON answer is checked
    against the UHP JSON Schema."""
    return httpx.Client(
        base_url=served.url,
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
        event_hooks={"response": [validate_response]},
    )


@pytest.fixture
def client(served: Served) -> Iterator[httpx.Client]:
    with uhp_client(served) as http:
        yield http
