"""Settings: files, per-key precedence, HARNEZ_* overrides, readable errors, model references, saving."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harnez.errors import SettingsError
from harnez.settings import (
    KEYWORDS_TITLE_SOURCE,
    ModelRef,
    Settings,
    TitleSource,
    load_settings,
    parse_model_ref,
    parse_title_source,
    save_global_settings,
)

LOCAL_PROVIDER = {"wire": "openai-chat", "base_url": "http://127.0.0.1:8080/v1"}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


@pytest.fixture
def env(home: Path) -> dict[str, str]:
    return {"HARNEZ_HOME": str(home)}


def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def global_file(home: Path, data: Any) -> Path:
    return write_json(home / "settings.json", data)


def project_file(workspace: Path, data: Any) -> Path:
    return write_json(workspace / ".harnez" / "settings.json", data)


def load_error(workspace: Path, env: dict[str, str]) -> str:
    with pytest.raises(SettingsError) as caught:
        load_settings(workspace, env)
    message = str(caught.value)
    assert "\n" not in message, "an error is one paragraph"
    assert "pydantic" not in message.lower() and "validation error" not in message.lower()
    return message


# ----------------------------------------------------------------------------- defaults and files


def test_no_files_gives_the_defaults(workspace: Path, env: dict[str, str]) -> None:
    settings = load_settings(workspace, env)
    assert settings.model_dump() == Settings().model_dump() and settings.workspace == workspace.resolve()
    assert settings.session.title.generated is True
    assert settings.title_source == KEYWORDS_TITLE_SOURCE
    assert settings.theme == "textual-dark"
    assert settings.model is None and settings.default_model is None
    assert settings.warnings == ()
    assert settings.database_file(workspace, env) == workspace / ".harnez" / "harnez.sqlite"


def test_blank_file_counts_as_no_settings(home: Path, workspace: Path, env: dict[str, str]) -> None:
    (home / "settings.json").write_text("  \n", encoding="utf-8")
    assert load_settings(workspace, env).model_dump() == Settings().model_dump()


def test_xdg_config_home_locates_the_global_file(tmp_path: Path, workspace: Path) -> None:
    write_json(tmp_path / "xdg" / "harnez" / "settings.json", {"theme": "nord"})
    assert load_settings(workspace, {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}).theme == "nord"


def test_project_overrides_one_nested_key_and_keeps_the_global_siblings(
    home: Path, workspace: Path, env: dict[str, str]
) -> None:
    global_file(
        home, {"session": {"title": {"generated": False, "source": "keywords/yake"}}, "theme": "nord"}
    )
    project_file(workspace, {"session": {"title": {"source": "model/local/qwen3:8b:low"}}})
    settings = load_settings(workspace, env)
    assert settings.session.title.generated is False
    assert settings.title_source == TitleSource("model", ModelRef("local", "qwen3:8b", "low"))
    assert settings.theme == "nord"


def test_providers_merge_per_key_and_lists_replace(home: Path, workspace: Path, env: dict[str, str]) -> None:
    global_file(
        home,
        {
            "providers": {"local": {**LOCAL_PROVIDER, "api_key_env": "LOCAL_KEY"}, "other": LOCAL_PROVIDER},
            "permissions": {"shell": {"allow": ["git status", "ls *"], "deny": ["rm -rf *"]}},
        },
    )
    project_file(
        workspace,
        {
            "providers": {"local": {"base_url": "http://10.0.0.2/v1"}},
            "permissions": {"shell": {"allow": ["make"]}},
        },
    )
    settings = load_settings(workspace, env)
    local = settings.providers["local"]
    assert (local.wire, local.base_url, local.api_key_env) == (
        "openai-chat",
        "http://10.0.0.2/v1",
        "LOCAL_KEY",
    )
    assert set(settings.providers) == {"local", "other"}
    assert settings.permissions.shell.allow == ["make"]
    assert settings.permissions.shell.deny == ["rm -rf *"]


def test_relative_database_path_in_the_project_file_is_inside_the_workspace(
    workspace: Path, env: dict[str, str]
) -> None:
    project_file(workspace, {"database_path": "data/h.sqlite"})
    settings = load_settings(workspace, env)
    assert settings.database_path == workspace / "data" / "h.sqlite"
    assert settings.database_file(workspace, env) == workspace / "data" / "h.sqlite"


# ----------------------------------------------------------------------------- environment overrides


def test_environment_overrides_both_files(
    home: Path, workspace: Path, env: dict[str, str], tmp_path: Path
) -> None:
    global_file(home, {"model": "local/a", "theme": "nord", "providers": {"local": LOCAL_PROVIDER}})
    project_file(workspace, {"model": "local/b", "database_path": "/nowhere/x.sqlite"})
    env |= {
        "HARNEZ_MODEL": "local/c:high",
        "HARNEZ_THEME": "gruvbox",
        "HARNEZ_DATABASE_PATH": str(tmp_path / "db.sqlite"),
        "HARNEZ_SESSION__TITLE__GENERATED": "false",
    }
    settings = load_settings(workspace, env)
    assert settings.default_model == ModelRef("local", "c", "high")
    assert settings.theme == "gruvbox"
    assert settings.database_path == tmp_path / "db.sqlite"
    assert settings.session.title.generated is False


def test_empty_environment_variables_are_ignored(home: Path, workspace: Path, env: dict[str, str]) -> None:
    global_file(home, {"theme": "nord"})
    assert load_settings(workspace, env | {"HARNEZ_THEME": "", "HARNEZ_MODEL": ""}).theme == "nord"


def test_a_bad_environment_value_names_the_variable(home: Path, workspace: Path, env: dict[str, str]) -> None:
    global_file(home, {"model": "local/fine"})
    message = load_error(workspace, env | {"HARNEZ_MODEL": "gpt-5"})
    assert "environment variable HARNEZ_MODEL" in message
    assert "`model`" in message and "<provider>/<model>" in message
    assert "settings.json" not in message


def test_a_wrongly_typed_nested_environment_value_names_the_variable(
    workspace: Path, env: dict[str, str]
) -> None:
    message = load_error(workspace, env | {"HARNEZ_RETRY__MAX_ATTEMPTS": "many"})
    assert "environment variable HARNEZ_RETRY__MAX_ATTEMPTS" in message
    assert "retry.max_attempts" in message and "whole number" in message


def test_undecodable_json_in_an_environment_variable_names_it(workspace: Path, env: dict[str, str]) -> None:
    message = load_error(workspace, env | {"HARNEZ_PROVIDERS": "{not json"})
    assert "HARNEZ_PROVIDERS" in message and "not valid JSON" in message


# ----------------------------------------------------------------------------- file errors


def test_malformed_json_names_the_file_line_and_column(
    home: Path, workspace: Path, env: dict[str, str]
) -> None:
    path = home / "settings.json"
    path.write_text('{\n  "theme": "nord",\n  "model": \n}\n', encoding="utf-8")
    message = load_error(workspace, env)
    assert f"global settings file {path}" in message
    assert "line 4, column 1" in message


def test_a_top_level_that_is_not_an_object_is_refused(workspace: Path, env: dict[str, str]) -> None:
    path = project_file(workspace, ["theme", "nord"])
    message = load_error(workspace, env)
    assert f"project settings file {path}" in message and "JSON object" in message and "a list" in message


def test_an_unknown_key_is_named_with_its_path_and_a_suggestion(
    home: Path, workspace: Path, env: dict[str, str]
) -> None:
    global_file(home, {"providers": {"local": LOCAL_PROVIDER}})
    path = project_file(workspace, {"providers": {"local": {"wirez": "openai-chat"}}})
    message = load_error(workspace, env)
    assert f"project settings file {path}" in message and "global settings file" not in message
    assert "`providers.local.wirez`" in message
    assert "did you mean `wire`?" in message and "base_url" in message


def test_an_unknown_top_level_key_lists_the_sections(workspace: Path, env: dict[str, str]) -> None:
    project_file(workspace, {"themes": "nord"})
    message = load_error(workspace, env)
    assert "`themes`" in message and "did you mean `theme`?" in message and "permissions" in message


def test_a_wrong_type_names_the_key_and_the_expected_type(
    home: Path, workspace: Path, env: dict[str, str]
) -> None:
    path = global_file(home, {"session": {"title": {"generated": "sometimes"}}})
    message = load_error(workspace, env)
    assert f"global settings file {path}" in message
    assert "`session.title.generated`" in message and "true or false" in message and '"sometimes"' in message


def test_an_out_of_range_number_says_the_limit(workspace: Path, env: dict[str, str]) -> None:
    project_file(workspace, {"retry": {"max_attempts": 0}})
    message = load_error(workspace, env)
    assert "`retry.max_attempts`" in message and "at least 1" in message


def test_an_invalid_wire_is_blamed_on_the_file_that_set_it(
    home: Path, workspace: Path, env: dict[str, str]
) -> None:
    path = global_file(home, {"providers": {"local": {**LOCAL_PROVIDER, "wire": "openai"}}})
    project_file(workspace, {"providers": {"local": {"base_url": "http://10.0.0.2/v1"}}})
    message = load_error(workspace, env)
    assert f"global settings file {path}" in message and "project settings file" not in message
    assert "`providers.local.wire`" in message
    assert (
        '"openai" is not allowed' in message and "openai-chat" in message and "anthropic-messages" in message
    )


def test_a_missing_required_key_names_both_contributing_files(
    home: Path, workspace: Path, env: dict[str, str]
) -> None:
    global_file(home, {"providers": {"local": {"wire": "openai-chat"}}})
    project_file(workspace, {"providers": {"local": {"api_key_env": "LOCAL_KEY"}}})
    message = load_error(workspace, env)
    assert "`providers.local.base_url`" in message and "missing" in message
    assert "project settings file" in message and "global settings file" in message


@pytest.mark.parametrize(
    "pasted", ["sk-proj-AbC123xyz987", "sk-ant-api03-Zz9", "abc def", "AbCdEfGh1234567890aBcDeFgH12345678"]
)
def test_an_api_key_pasted_into_api_key_env_is_refused_without_echoing_it(
    workspace: Path, env: dict[str, str], pasted: str
) -> None:
    project_file(workspace, {"providers": {"local": {**LOCAL_PROVIDER, "api_key_env": pasted}}})
    message = load_error(workspace, env)
    assert pasted not in message and pasted[:6] not in message
    assert "`providers.local.api_key_env`" in message
    assert "NAME of the variable" in message and "OPENAI_API_KEY" in message


def test_a_wrongly_typed_api_key_env_is_not_echoed(workspace: Path, env: dict[str, str]) -> None:
    project_file(workspace, {"providers": {"local": {**LOCAL_PROVIDER, "api_key_env": 98765432123}}})
    message = load_error(workspace, env)
    assert "98765432123" not in message and "`providers.local.api_key_env`" in message


def test_a_well_formed_api_key_env_name_is_accepted(workspace: Path, env: dict[str, str]) -> None:
    project_file(workspace, {"providers": {"local": {**LOCAL_PROVIDER, "api_key_env": "_MY_KEY_2"}}})
    assert load_settings(workspace, env).providers["local"].api_key_env == "_MY_KEY_2"


def test_a_provider_name_with_a_slash_is_refused(workspace: Path, env: dict[str, str]) -> None:
    short_host = {**LOCAL_PROVIDER, "base_url": "http://h"}
    project_file(workspace, {"providers": {"my/local": LOCAL_PROVIDER, "short": short_host}})
    message = load_error(workspace, env)
    assert '`providers."my/local"`' in message and "provider name" in message
    assert "base_url" not in message, "a short host is a valid base URL"


def test_a_base_url_without_a_scheme_is_refused(workspace: Path, env: dict[str, str]) -> None:
    project_file(workspace, {"providers": {"local": {**LOCAL_PROVIDER, "base_url": "localhost:8080"}}})
    message = load_error(workspace, env)
    assert "`providers.local.base_url`" in message and "http://" in message


def test_a_bad_default_model_fails_the_load(home: Path, workspace: Path, env: dict[str, str]) -> None:
    path = global_file(home, {"model": "openai/"})
    message = load_error(workspace, env)
    assert f"global settings file {path}" in message and "`model`" in message and "no model id" in message


def test_an_invalid_title_source_is_a_warning_and_keywords_still_work(
    home: Path, workspace: Path, env: dict[str, str]
) -> None:
    global_file(home, {"session": {"title": {"source": "model/local/qwen3"}}})
    path = project_file(workspace, {"session": {"title": {"source": "gpt-5"}}})
    settings = load_settings(workspace, env)
    assert settings.title_source == KEYWORDS_TITLE_SOURCE
    assert settings.session.title.source == "gpt-5"
    (warning,) = settings.warnings
    assert f"project settings file {path}" in warning and "`session.title.source`" in warning
    assert '"gpt-5"' in warning and "keywords/yake" in warning and "model/<provider>/<model>" in warning
    assert "warnings" not in settings.model_dump()


def test_a_non_text_title_source_is_also_only_a_warning(workspace: Path, env: dict[str, str]) -> None:
    project_file(workspace, {"session": {"title": {"source": 42}}})
    settings = load_settings(workspace, env)
    assert settings.title_source == KEYWORDS_TITLE_SOURCE and len(settings.warnings) == 1


def test_an_unreadable_settings_path_is_a_settings_error(
    home: Path, workspace: Path, env: dict[str, str]
) -> None:
    (home / "settings.json").mkdir()
    message = load_error(workspace, env)
    assert "global settings file" in message and "cannot be read" in message


# ----------------------------------------------------------------------------- model references and title sources


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("openai/gpt-5", ModelRef("openai", "gpt-5", None)),
        ("openai/gpt-5:high", ModelRef("openai", "gpt-5", "high")),
        ("anthropic/claude-sonnet-4-5:max", ModelRef("anthropic", "claude-sonnet-4-5", "max")),
        ("ollama/qwen3:8b", ModelRef("ollama", "qwen3:8b", None)),
        ("ollama/qwen3:8b:off", ModelRef("ollama", "qwen3:8b", "off")),
        ("openrouter/meta-llama/llama-3:8b", ModelRef("openrouter", "meta-llama/llama-3:8b", None)),
        ("openrouter/meta-llama/llama-3:8b:xhigh", ModelRef("openrouter", "meta-llama/llama-3:8b", "xhigh")),
        ("local/model:extreme", ModelRef("local", "model:extreme", None)),
        ("my.local-1/x", ModelRef("my.local-1", "x", None)),
    ],
)
def test_parse_model_ref(text: str, expected: ModelRef) -> None:
    parsed = parse_model_ref(text)
    assert parsed == expected
    assert str(parsed) == text
    assert parse_model_ref(str(parsed)) == parsed


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("", "empty"),
        ("gpt-5", "no provider"),
        ("/gpt-5", "no provider"),
        ("openai/", "no model id"),
        ("openai/:high", "no model id"),
        ("openai/gpt-5:", "no thinking level"),
        ("openai/gpt 5", "spaces"),
        ("open ai/gpt-5", "spaces"),
        ("@openai/gpt-5", "provider name"),
    ],
)
def test_parse_model_ref_refuses_bad_references(text: str, complaint: str) -> None:
    with pytest.raises(SettingsError) as caught:
        parse_model_ref(text)
    assert complaint in str(caught.value)
    assert "<provider>/<model>" in str(caught.value) or "thinking level" in str(caught.value)


def test_model_ref_name_drops_the_thinking_level() -> None:
    assert parse_model_ref("openrouter/a/b:c:low").name == "openrouter/a/b:c"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("keywords/yake", KEYWORDS_TITLE_SOURCE),
        (
            "model/openai/gpt-5-mini:minimal",
            TitleSource("model", ModelRef("openai", "gpt-5-mini", "minimal")),
        ),
        ("model/openrouter/a/b:8b", TitleSource("model", ModelRef("openrouter", "a/b:8b", None))),
    ],
)
def test_parse_title_source(text: str, expected: TitleSource) -> None:
    assert parse_title_source(text) == expected
    assert str(parse_title_source(text)) == text


@pytest.mark.parametrize("text", ["", "yake", "keywords/rake", "model/", "model/openai", "openai/gpt-5"])
def test_parse_title_source_refuses_bad_sources(text: str) -> None:
    with pytest.raises(SettingsError):
        parse_title_source(text)


# ----------------------------------------------------------------------------- saving


def test_save_creates_the_folder_and_round_trips(tmp_path: Path, workspace: Path) -> None:
    env = {"HARNEZ_HOME": str(tmp_path / "new" / "config")}
    path = save_global_settings({"providers": {"local": LOCAL_PROVIDER}, "model": "local/qwen3:8b"}, env)
    assert path == tmp_path / "new" / "config" / "settings.json"
    settings = load_settings(workspace, env)
    assert settings.default_model == ModelRef("local", "qwen3:8b", None)
    assert settings.providers["local"].base_url == LOCAL_PROVIDER["base_url"]


def test_save_keeps_unrelated_keys_and_merges_deeply(home: Path, env: dict[str, str]) -> None:
    global_file(
        home,
        {"theme": "nord", "session": {"title": {"generated": False}}, "providers": {"a": LOCAL_PROVIDER}},
    )
    save_global_settings(
        {"session": {"title": {"source": "model/a/m"}}, "providers": {"b": LOCAL_PROVIDER}}, env
    )
    saved = json.loads((home / "settings.json").read_text(encoding="utf-8"))
    assert saved["theme"] == "nord"
    assert saved["session"]["title"] == {"generated": False, "source": "model/a/m"}
    assert set(saved["providers"]) == {"a", "b"}
    assert [p.name for p in home.iterdir()] == ["settings.json"], "no temporary file is left behind"


def test_save_with_none_removes_a_key(home: Path, env: dict[str, str]) -> None:
    global_file(home, {"theme": "nord", "model": "a/b"})
    save_global_settings({"model": None}, env)
    assert json.loads((home / "settings.json").read_text(encoding="utf-8")) == {"theme": "nord"}


def test_save_refuses_an_invalid_result_and_leaves_the_file_alone(home: Path, env: dict[str, str]) -> None:
    path = global_file(home, {"theme": "nord"})
    before = path.read_text(encoding="utf-8")
    with pytest.raises(SettingsError) as caught:
        save_global_settings(
            {"providers": {"local": {**LOCAL_PROVIDER, "api_key_env": "sk-secret-123"}}}, env
        )
    assert "changes being saved" in str(caught.value) and "sk-secret-123" not in str(caught.value)
    assert path.read_text(encoding="utf-8") == before


def test_save_refuses_to_overwrite_a_malformed_file(home: Path, env: dict[str, str]) -> None:
    path = home / "settings.json"
    path.write_text('{"theme": ', encoding="utf-8")
    with pytest.raises(SettingsError, match="not valid JSON"):
        save_global_settings({"theme": "nord"}, env)
    assert path.read_text(encoding="utf-8") == '{"theme": '


def test_save_ignores_the_environment_when_validating(home: Path, env: dict[str, str]) -> None:
    save_global_settings({"theme": "nord"}, env | {"HARNEZ_MODEL": "not-a-ref"})
    assert json.loads((home / "settings.json").read_text(encoding="utf-8")) == {"theme": "nord"}
