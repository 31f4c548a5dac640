"""Settings values that look like numbers or flags but are not, and settings nested without end:
refused with the usual message (file or variable, key path, what is wrong), never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harnez.errors import SettingsError
from harnez.settings import load_settings


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    return {"HARNEZ_HOME": str(home)}


def project_text(workspace: Path, text: str) -> Path:
    path = workspace / ".harnez" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def refusal(workspace: Path, env: dict[str, str]) -> str:
    with pytest.raises(SettingsError) as caught:
        load_settings(workspace, env)
    return caught.value.message


REFUSED_IN_A_FILE = {
    "true for a count": (
        '{"retry": {"max_attempts": true}}',
        "retry.max_attempts",
        "expected a whole number, got true",
    ),
    "false for a count": (
        '{"retry": {"max_attempts": false}}',
        "retry.max_attempts",
        "expected a whole number, got false",
    ),
    "Infinity seconds": (
        '{"retry": {"max_delay": Infinity}}',
        "retry.max_delay",
        "expected a finite number, got Infinity",
    ),
    "NaN seconds": (
        '{"retry": {"base_delay": NaN}}',
        "retry.base_delay",
        "expected a finite number, got NaN",
    ),
    "-Infinity seconds": (
        '{"retry": {"request_timeout": -Infinity}}',
        "retry.request_timeout",
        "expected a finite number",
    ),
    "seconds beyond a day": (
        '{"retry": {"request_timeout": 1e308}}',
        "retry.request_timeout",
        "must be at most 86400",
    ),
    "true for seconds": (
        '{"retry": {"connect_timeout": true}}',
        "retry.connect_timeout",
        "expected a number, got true",
    ),
    "an infinite price": (
        '{"rates": {"a/b": {"input": Infinity, "output": 1}}}',
        'rates."a/b".input',
        "expected a finite number",
    ),
    "true for a price": (
        '{"rates": {"a/b": {"input": 1, "output": true}}}',
        'rates."a/b".output',
        "expected a number, got true",
    ),
    "true for a window": (
        '{"models": {"a/b": {"context_window": true}}}',
        'models."a/b".context_window',
        "expected a whole number",
    ),
    "a 400-digit window": (
        '{"models": {"a/b": {"context_window": 1' + "0" * 400 + "}}}",
        'models."a/b".context_window',
        "must be at most 100000000",
    ),
    "an overflowing output cap": (
        '{"models": {"a/b": {"max_output": 1e999}}}',
        'models."a/b".max_output',
        "expected a finite number",
    ),
    "1 for a flag": (
        '{"session": {"title": {"generated": 1}}}',
        "session.title.generated",
        "expected true or false, got 1",
    ),
    "0 for a flag": (
        '{"models": {"a/b": {"thinking": 0}}}',
        'models."a/b".thinking',
        "expected true or false, got 0",
    ),
}


@pytest.mark.parametrize("case", REFUSED_IN_A_FILE)
def test_a_value_of_the_wrong_kind_in_a_file_is_refused(
    workspace: Path, env: dict[str, str], case: str
) -> None:
    text, key, said = REFUSED_IN_A_FILE[case]
    path = project_text(workspace, text)
    message = refusal(workspace, env)
    assert str(path) in message and f"key `{key}`" in message and said in message, message


@pytest.mark.parametrize("depth", [20, 900, 100_000])
def test_settings_nested_very_deeply_are_refused(workspace: Path, env: dict[str, str], depth: int) -> None:
    path = project_text(workspace, '{"session": ' * depth + "1" + "}" * depth)
    message = refusal(workspace, env)
    assert str(path) in message and "nests objects and lists more than 16 levels deep" in message, message
    assert "line 1, column 193" in message  # the 17th `{`, after 16 times `{"session": `


def test_deep_lists_inside_a_real_key_are_refused_as_nesting(workspace: Path, env: dict[str, str]) -> None:
    project_text(workspace, '{"permissions": {"shell": {"allow": ' + "[" * 5000 + "]" * 5000 + "}}}")
    message = refusal(workspace, env)
    assert "levels deep (line 1, column 50)" in message, message


def test_ordinary_depth_still_loads(workspace: Path, env: dict[str, str]) -> None:
    project_text(
        workspace,
        '{"providers": {"p": {"wire": "openai-chat", "base_url": "http://x", '
        '"headers": {"x-a": "b"}}}, "permissions": {"shell": {"allow": ["git *"]}}}',
    )
    settings = load_settings(workspace, env)
    assert settings.providers["p"].headers == {"x-a": "b"}


REFUSED_IN_THE_ENVIRONMENT = {
    "inf seconds": ("HARNEZ_RETRY__MAX_DELAY", "inf", "retry.max_delay", "expected a finite number"),
    "nan seconds": ("HARNEZ_RETRY__BASE_DELAY", "nan", "retry.base_delay", "expected a finite number"),
    "true for a count in JSON": (
        "HARNEZ_RETRY",
        '{"max_attempts": true}',
        "retry.max_attempts",
        "expected a whole number, got true",
    ),
    "20,000 nested lists": ("HARNEZ_PROVIDERS", "[" * 20_000 + "]" * 20_000, "providers", "levels deep"),
    "50 nested objects": ("HARNEZ_RATES", '{"a": ' * 50 + "1" + "}" * 50, "rates", "levels deep"),
}


@pytest.mark.parametrize("case", REFUSED_IN_THE_ENVIRONMENT)
def test_a_bad_value_in_a_variable_is_refused(workspace: Path, env: dict[str, str], case: str) -> None:
    name, value, key, said = REFUSED_IN_THE_ENVIRONMENT[case]
    message = refusal(workspace, {**env, name: value})
    assert f"environment variable {name}" in message and f"`{key}" in message and said in message, message


def test_variables_in_their_usual_form_still_load(workspace: Path, env: dict[str, str]) -> None:
    settings = load_settings(
        workspace,
        {
            **env,
            "HARNEZ_RETRY__MAX_ATTEMPTS": "2",
            "HARNEZ_SESSION__TITLE__GENERATED": "false",
            "HARNEZ_RETRY__MAX_DELAY": "2.5",
        },
    )
    assert (settings.retry.max_attempts, settings.session.title.generated, settings.retry.max_delay) == (
        2,
        False,
        2.5,
    )


def test_the_cli_reports_deep_nesting_with_exit_2(workspace: Path, env: dict[str, str]) -> None:
    project_text(workspace, '{"x": ' * 100_000 + "1" + "}" * 100_000)
    done = subprocess.run(
        [sys.executable, "-m", "harnez", "sessions"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "levels deep" in done.stderr and "Traceback" not in done.stderr
