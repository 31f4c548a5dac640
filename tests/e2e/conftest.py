"""End-to-end fixtures: a workspace whose providers point at the scripted model."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from harnez.testing.scripted_model import ScriptedModel
from tests.e2e.helpers import SECRET, HeadlessWorkspace


@pytest.fixture
def headless(tmp_path: Path, scripted_model: ScriptedModel, isolated_home: Path) -> HeadlessWorkspace:
    workspace = tmp_path / "project"
    (workspace / ".harnez").mkdir(parents=True)
    providers = {
        "chat": {
            "wire": "openai-chat",
            "base_url": scripted_model.base_url("openai-chat"),
            "api_key_env": "HARNEZ_TEST_KEY",
        },
        "responses": {
            "wire": "openai-responses",
            "base_url": scripted_model.base_url("openai-responses"),
            "api_key_env": "HARNEZ_TEST_KEY",
        },
        "claude": {
            "wire": "anthropic-messages",
            "base_url": scripted_model.base_url("anthropic-messages"),
            "api_key_env": "HARNEZ_TEST_KEY",
        },
    }
    settings = {
        "providers": providers,
        "model": "chat/scripted-model",
        "retry": {"max_attempts": 3, "base_delay": 0.01, "max_delay": 0.05},
    }
    (workspace / ".harnez" / "settings.json").write_text(json.dumps(settings))
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNEZ_") or k == "HARNEZ_HOME"}
    env.update(HARNEZ_TEST_KEY=SECRET, HARNEZ_HOME=str(isolated_home), PYTHONUNBUFFERED="1")
    return HeadlessWorkspace(workspace, scripted_model, env)
