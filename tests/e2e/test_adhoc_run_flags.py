"""`harnez run` and `chat` with no settings file: the provider, key variable, wire and workspace as flags."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path

import pytest

from harnez.testing.scripted_model import ScriptedModel
from tests.e2e.helpers import SECRET, HeadlessWorkspace, json_lines

KEY_ENV = "ADHOC_TEST_KEY"


class NoSettings:
    """A machine with no settings file anywhere: the flags say everything."""

    def __init__(self, tmp_path: Path, model: ScriptedModel, home: Path) -> None:
        self.model = model
        self.elsewhere = tmp_path / "elsewhere"  # where the commands start: not the workspace
        self.workspace = tmp_path / "repo"
        self.elsewhere.mkdir()
        self.workspace.mkdir()
        assert not list(home.iterdir()), "no global settings"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("HARNEZ_")}
        self.env.update(HARNEZ_HOME=str(home), PYTHONUNBUFFERED="1")
        self.env[KEY_ENV] = SECRET

    @property
    def url(self) -> str:
        return self.model.base_url("openai-chat")

    @property
    def database(self) -> Path:
        return self.workspace / ".harnez" / "harnez.sqlite"

    def harnez(self, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
        """Run `harnez ARGS` from a folder that is not the workspace."""
        return HeadlessWorkspace(self.elsewhere, self.model, self.env).harnez(*args, input=input)

    def flags(self, *, model: str | None = "local/scripted-model") -> list[str]:
        given = ["--base-url", self.url, "--wire", "openai-chat", "--api-key-env", KEY_ENV]
        return [*given, "--workspace", str(self.workspace)] + (["--model", model] if model else [])


@pytest.fixture
def bare(tmp_path: Path, scripted_model: ScriptedModel, isolated_home: Path) -> NoSettings:
    return NoSettings(tmp_path, scripted_model, isolated_home)


def test_run_json_with_adhoc_flags_and_no_settings_records_the_endpoint_never_the_key(
    bare: NoSettings,
) -> None:
    bare.model.add({"reply": [{"text": "Hello over flags."}], "usage": {"input": 10, "output": 3}})
    done = bare.harnez("run", "--json", *bare.flags(), "say hello")
    assert done.returncode == 0, done.stderr
    events = json_lines(done.stdout)
    (started,) = [e for e in events if e["kind"] == "started"]
    assert (started["model"], started["wire"], started["base_url"]) == (
        "local/scripted-model",
        "openai-chat",
        bare.url,
    )
    assert "Hello over flags." in "".join(e["text"] for e in events if e["kind"] == "text-delta")
    assert bare.model.requests[-1].headers["authorization"] == f"Bearer {SECRET}"
    assert bare.database.exists(), "the database is the workspace's, not the current folder's"
    assert not (bare.elsewhere / ".harnez").exists()
    for file in bare.database.parent.glob("harnez.sqlite*"):
        assert SECRET.encode() not in file.read_bytes(), file
    assert SECRET not in done.stdout + done.stderr
    shown = bare.harnez("sessions", "show", events[0]["session"], "--session-dir", str(bare.database.parent))
    assert shown.returncode == 0, shown.stderr
    assert f"ran with local/scripted-model · openai-chat · {bare.url}" in shown.stdout
    assert str(bare.workspace) in shown.stdout


def test_a_session_resumed_from_another_folder_runs_its_own_model_on_the_new_endpoint(
    bare: NoSettings, tmp_path: Path
) -> None:
    bare.model.add({"reply": [{"text": "first"}]}, {"reply": [{"text": "second"}]})
    first = bare.harnez("run", "--json", *bare.flags(), "one")
    assert first.returncode == 0, first.stderr
    session = json_lines(first.stdout)[0]["session"]
    with ScriptedModel([{"reply": [{"text": "from the second server"}]}]) as other:
        second_url = other.base_url("openai-chat")
        resumed = bare.harnez(
            "run",
            "--resume",
            session,
            "--session-dir",
            str(bare.database.parent),
            "--base-url",
            second_url,
            "--wire",
            "openai-chat",
            "two",
        )
        assert resumed.returncode == 0, resumed.stderr
        assert "from the second server" in resumed.stdout
        assert "one" in str(other.requests[-1].body), "the earlier conversation went to the new endpoint"
        assert "authorization" not in other.requests[-1].headers, "no key variable named this time"
    shown = bare.harnez("sessions", "show", session, "--session-dir", str(bare.database.parent))
    assert f"ran with local/scripted-model · openai-chat · {bare.url}\n" in shown.stdout
    assert f"ran with local/scripted-model · openai-chat · {second_url}\n" in shown.stdout


def test_chat_takes_the_same_flags(bare: NoSettings) -> None:
    bare.model.add({"reply": [{"text": "Answer one."}]}, {"reply": [{"text": "Answer two."}]})
    done = bare.harnez("chat", *bare.flags(), input="one\ntwo\n")
    assert done.returncode == 0, done.stderr
    assert "Answer one." in done.stdout and "Answer two." in done.stdout


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (
            ["--wire"],
            "No settings file defines the provider 'local', so this run's flags define it and need --wire",
        ),
        (["--base-url"], "need --base-url too"),
        (["--model"], "no model is named: pass --model <provider>/<model>"),
    ],
)
def test_an_incomplete_provider_is_a_usage_error_before_anything_is_created(
    bare: NoSettings, change: list[str], says: str
) -> None:
    flags = bare.flags()
    index = flags.index(change[0])
    del flags[index : index + 2]
    done = bare.harnez("run", *flags, "hi")
    assert done.returncode == 2 and says in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert not bare.database.exists() and not bare.model.requests


@pytest.mark.parametrize(
    ("flag", "value", "says"),
    [
        (
            "--base-url",
            "ftp://example.com/v1",
            "--base-url: the base URL must start with http:// or https://",
        ),
        (
            "--api-key-env",
            "sk-live-0123456789abcdefABCDEF0123456789",
            "--api-key-env: this looks like an API key",
        ),
        (
            "--api-key-env",
            "NOT_SET_ANYWHERE",
            "needs an API key: set the environment variable NOT_SET_ANYWHERE",
        ),
        ("--workspace", "/nonexistent/folder", "--workspace /nonexistent/folder is not a folder"),
    ],
)
def test_a_bad_flag_value_is_one_line_that_never_repeats_a_key(
    bare: NoSettings, flag: str, value: str, says: str
) -> None:
    flags = bare.flags()
    flags[flags.index(flag) + 1] = value
    done = bare.harnez("run", *flags, "hi")
    assert done.returncode == 2 and says in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    if value.startswith("sk-"):
        assert value not in done.stderr
    assert not bare.database.exists() and not bare.model.requests


def test_resuming_a_session_of_another_workspace_under_workspace_is_refused(
    bare: NoSettings, tmp_path: Path
) -> None:
    bare.model.add({"reply": [{"text": "first"}]})
    first = bare.harnez("run", "--json", *bare.flags(), "one")
    session = json_lines(first.stdout)[0]["session"]
    other = tmp_path / "other"
    other.mkdir()
    flags = bare.flags()
    flags[flags.index("--workspace") + 1] = str(other)
    done = bare.harnez("run", "--resume", session, "--session-dir", str(bare.database.parent), *flags, "two")
    assert done.returncode == 2, done.stderr
    assert f"works in {bare.workspace}; --workspace {other} cannot move it" in done.stderr
    assert len(bare.model.requests) == 1


def test_programs_limits_the_shell_of_a_run(bare: NoSettings) -> None:
    (bare.workspace / "keep.txt").write_text("precious\n")
    shell = [
        {
            "tool_call": {
                "name": "shell",
                "id": "bad",
                "arguments": {"command": "git --version && rm keep.txt"},
            }
        }
    ]
    good = [{"tool_call": {"name": "shell", "id": "good", "arguments": {"command": "git --version"}}}]
    bare.model.add({"reply": shell}, {"reply": good}, {"reply": [{"text": "done"}]})
    done = bare.harnez("run", "--json", "--programs", "git,pytest", *bare.flags(), "go")
    assert done.returncode == 0, done.stderr
    events = json_lines(done.stdout)
    (refused,) = [e for e in events if e["kind"] == "program-refused"]
    assert (refused["call_id"], refused["program"], refused["declared"]) == ("bad", "rm", ["git", "pytest"])
    completed = {e["call_id"]: e for e in events if e["kind"] == "tool-completed"}
    assert completed["bad"]["is_error"] and "nothing ran" in completed["bad"]["content"]
    assert not completed["good"]["is_error"] and "git version" in completed["good"]["content"]
    assert (bare.workspace / "keep.txt").exists()


def test_a_bad_program_name_is_a_usage_error(bare: NoSettings) -> None:
    done = bare.harnez("run", "--programs", "git,rm -rf", *bare.flags(), "hi")
    assert done.returncode == 2 and "'rm -rf' is not a program name" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and not bare.database.exists()


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_base_url_given_as_a_flag_that_cannot_be_reached_names_the_flag(
    headless: HeadlessWorkspace,
) -> None:
    unreachable = f"http://127.0.0.1:{_closed_port()}/v1"
    done = headless.harnez("run", "--model", "chat/scripted-model", "--base-url", unreachable, "say hello")
    assert done.returncode == 1
    assert f"cannot connect to {unreachable}" in done.stderr
    assert "is --base-url right?" in done.stderr
    assert "settings.json" not in done.stderr, "the URL came from the flag, not from a settings file"


def test_a_base_url_from_settings_that_cannot_be_reached_names_settings_json(
    headless: HeadlessWorkspace,
) -> None:
    settings = headless.path / ".harnez" / "settings.json"
    config = json.loads(settings.read_text())
    config["providers"]["chat"]["base_url"] = f"http://127.0.0.1:{_closed_port()}/v1"
    settings.write_text(json.dumps(config))
    done = headless.harnez("run", "say hello")
    assert done.returncode == 1
    assert "is the provider's base_url in settings.json right?" in done.stderr


def test_a_hosted_provider_that_cannot_be_reached_points_at_the_network_not_a_server(
    headless: HeadlessWorkspace,
) -> None:
    """A hosted provider (api.openai.com) that could not be reached was answered "Is the model server
    running?", which is not the person's to run; a host that is not this machine's nor its network's
    is a matter of the network, a proxy or the URL. A local server keeps the question."""
    for name in [k for k in headless.env if k.lower().endswith("_proxy")]:
        del headless.env[name]  # no proxy answers in the name's place
    settings = headless.path / ".harnez" / "settings.json"
    config = json.loads(settings.read_text())
    for base_url, advice in (
        (
            "https://nonexistent.invalid/v1",
            "Check the network (or the proxy it needs: HTTPS_PROXY) and that the provider's base_url "
            "in settings.json is right.",
        ),
        (
            f"http://127.0.0.1:{_closed_port()}/v1",
            "Is the model server running, and is the provider's base_url in settings.json right?",
        ),
    ):
        config["providers"]["chat"]["base_url"] = base_url
        settings.write_text(json.dumps(config))
        done = headless.harnez("run", "say hello")
        assert done.returncode == 1
        assert f"cannot connect to {base_url}/chat/completions: " in done.stderr, done.stderr
        assert advice in done.stderr, done.stderr
    flag = headless.harnez(
        "run", "--model", "chat/scripted-model", "--base-url", "https://nonexistent.invalid/v1", "hi"
    )
    assert flag.returncode == 1
    assert "HTTPS_PROXY) and that --base-url is right." in flag.stderr, flag.stderr
    assert "Is the model server running" not in flag.stderr
