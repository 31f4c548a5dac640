"""First-run setup in the TUI: shown with no model, skipped, a detected server, a typed server, a key.

The app runs over a real server with the real agent; local servers are real loopback listeners on
random ports, and prompts reach the scripted model over HTTP.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.widgets import Input

from harnez import paths
from harnez.server.factory import open_agent_server
from harnez.server.server import Server
from harnez.settings import load_settings
from harnez.testing.scripted_model import ScriptedModel
from harnez.tui.app import HarnezApp
from harnez.tui.screens.picker import PickerScreen
from harnez.tui.screens.session import SessionScreen
from harnez.tui.screens.setup import SetupScreen
from harnez.tui.widgets.blocks import TaskEndBlock
from harnez.tui.widgets.prompt import PromptInput
from harnez.wires.discovery import LocalServer, probe_local_servers
from tests.agent.helpers import answer
from tests.tui.helpers import seed_session, type_at_once, wait_for

SetupApp = Callable[..., HarnezApp]
FAKE_KEY = "sk-test-9f8e7d6c5b4a39281706f5e4d3c2b1a0"
"""A key-shaped value that must never reach a file, the database or the screen."""


def free_port() -> int:
    """A loopback port nobody listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LocalModelServer:
    """A loopback server that lists models at GET /v1/models and passes every other request to `upstream`.

    With the scripted model as upstream it behaves like a local OpenAI-compatible server: found by the
    probe, then answering chat completions.
    """

    def __init__(self, models: list[str], upstream: ScriptedModel | None = None) -> None:
        self.models = models
        self.upstream = upstream
        self.port = 0
        self._server: asyncio.Server | None = None

    async def start(self) -> LocalModelServer:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def close(self) -> None:
        if self._server is not None:
            self._server.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            if head.startswith(b"GET /v1/models ") or self.upstream is None:
                listing = {"object": "list", "data": [{"id": m, "object": "model"} for m in self.models]}
                body = json.dumps(listing).encode()
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                    b"content-length: %d\r\nconnection: close\r\n\r\n" % len(body) + body
                )
                await writer.drain()
                return
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream.port)
            up_writer.write(head)
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            writer.close()


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    try:
        while chunk := await source.read(65536):
            sink.write(chunk)
            await sink.drain()
    except ConnectionError:
        pass
    finally:
        sink.close()


@pytest.fixture
async def setup_app(db_path: Path, workspace: Path) -> AsyncIterator[SetupApp]:
    """A HarnezApp as `harnez` builds it: settings loaded from the (isolated, empty) home, the real agent."""
    opened: list[Server] = []

    def build(**options: Any) -> HarnezApp:
        settings = load_settings(workspace)

        async def open_server() -> Server:
            server = await open_agent_server(db_path, settings, approve="deny")
            opened.append(server)
            return server

        ports = options.setdefault("probe_ports", {free_port(): "ollama"})
        # The product's 0.3 s probe is for an idle machine; a loaded test machine can take longer to
        # answer over loopback, and these tests are about what the screen does with the answer.
        options.setdefault("local_probe", lambda: probe_local_servers(ports, timeout=5))
        return HarnezApp(open_server, workspace, settings, **options)

    yield build
    for server in opened:
        await server.close()


@pytest.fixture
async def local_servers() -> AsyncIterator[Callable[..., Any]]:
    """Starts LocalModelServers for a test and closes them after it."""
    started: list[LocalModelServer] = []

    async def start(models: list[str], upstream: ScriptedModel | None = None) -> LocalModelServer:
        started.append(await LocalModelServer(models, upstream).start())
        return started[-1]

    yield start
    for server in started:
        server.close()


def global_settings() -> dict[str, Any]:
    return json.loads(paths.global_settings_path().read_text(encoding="utf-8"))


def screen_text(app: HarnezApp) -> str:
    screen = app.screen
    parts = [str(widget.render()) for widget in screen.query("Static")]
    if isinstance(screen, SetupScreen):
        options = screen.query_one("#setup-options")
        parts += [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
    return "\n".join(parts)


async def setup_shown(pilot, probed: bool = True) -> SetupScreen:
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, SetupScreen), "setup screen")
    if probed:
        await wait_for(pilot, lambda: not pilot.app.screen.probing, "local servers probed")
    await pilot.pause()
    return pilot.app.screen


async def session_shown(pilot) -> SessionScreen:
    await wait_for(
        pilot,
        lambda: isinstance(pilot.app.screen, SessionScreen) and pilot.app.screen.is_mounted,
        "session screen",
    )
    return pilot.app.screen


async def send(pilot, text: str) -> dict[str, Any]:
    """Send a prompt in the session screen and wait for its task; the `finished` payload."""
    screen = await session_shown(pilot)
    screen.query_one(PromptInput).load_text(text)
    await pilot.press("enter")
    await wait_for(pilot, lambda: screen.query(TaskEndBlock), "task end")
    events = await pilot.app.server.events_after(screen.session_id)
    return next(e.body.to_payload() for e in events if e.kind == "finished")


def stored_bytes(db_path: Path) -> bytes:
    return b"".join(path.read_bytes() for path in db_path.parent.iterdir() if path.is_file())


async def test_setup_shows_when_no_model_and_says_nothing_was_found(setup_app) -> None:
    app = setup_app()
    port = next(iter(app.probe_ports))
    async with app.run_test() as pilot:
        await setup_shown(pilot)
        text = screen_text(app)

    assert "No model is configured yet" in text
    assert str(paths.global_settings_path()) in text
    assert "No OPENAI_API_KEY or ANTHROPIC_API_KEY in the environment" in text
    assert f"No local server answered on {port} (ollama)." in text
    assert "Other OpenAI-compatible server" in text


async def test_a_set_key_is_offered_by_name_and_never_shown(setup_app, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    app = setup_app()
    async with app.run_test() as pilot:
        screen = await setup_shown(pilot)
        text = screen_text(app)
        assert screen.highlighted_id == "hosted:openai"

    assert "openai/gpt-5" in text and "OPENAI_API_KEY is set" in text
    assert "Anthropic" not in text
    assert FAKE_KEY not in text


async def test_the_screen_paints_while_the_probe_runs_and_esc_skips(setup_app, db_path) -> None:
    never = asyncio.Event()

    async def slow_probe() -> list[LocalServer]:
        await never.wait()
        return []

    app = setup_app(local_probe=slow_probe)
    async with app.run_test() as pilot:
        screen = await setup_shown(pilot, probed=False)
        assert screen.probing
        assert "Looking for local servers…" in screen_text(app)
        await pilot.press("escape")
        session = await session_shown(pilot)
        assert session.model is None
        finished = await send(pilot, "hello")

    assert finished["stop"] == "failed"
    assert "No model is configured" in finished["error"]
    assert "settings.json" in finished["error"]
    assert not paths.global_settings_path().exists()


async def test_choosing_a_detected_local_server_saves_it_and_prompts_go_there(
    setup_app, local_servers, scripted_model: ScriptedModel
) -> None:
    local = await local_servers(["qwen3:8b", "llama3.2"], upstream=scripted_model)
    scripted_model.add(answer("Hello from the local server."))
    app = setup_app(probe_ports={local.port: "ollama", free_port(): "vllm"})
    async with app.run_test() as pilot:
        await setup_shown(pilot)
        await pilot.press("down", "enter")  # the first local model is highlighted; Down picks the second
        session = await session_shown(pilot)
        assert session.model == "ollama/llama3.2"
        finished = await send(pilot, "Say hello")
        assert app.settings.model == "ollama/llama3.2"
        assert app.server.settings.model == "ollama/llama3.2"

    assert global_settings() == {
        "providers": {"ollama": {"wire": "openai-chat", "base_url": f"http://127.0.0.1:{local.port}/v1"}},
        "model": "ollama/llama3.2",
    }
    assert finished["stop"] == "completed"
    assert scripted_model.requests[-1].path == "/v1/chat/completions"
    assert scripted_model.requests[-1].body["model"] == "llama3.2"


async def test_a_typed_server_with_a_key_variable_saves_only_its_name(
    setup_app, scripted_model: ScriptedModel, monkeypatch, db_path
) -> None:
    monkeypatch.setenv("MY_LOCAL_KEY", FAKE_KEY)
    scripted_model.add(answer("Typed server answers."))
    app = setup_app()
    async with app.run_test() as pilot:
        screen = await setup_shown(pilot)
        await pilot.press("enter")  # nothing was found: "Other OpenAI-compatible server" is the only choice
        assert screen.focused is screen.query_one("#setup-url")
        await pilot.press(
            *scripted_model.base_url("openai-chat"), "tab", *"test-model", "tab", *"MY_LOCAL_KEY", "enter"
        )
        await session_shown(pilot)
        finished = await send(pilot, "Hi")

    saved = paths.global_settings_path().read_text(encoding="utf-8")
    assert json.loads(saved) == {
        "providers": {
            "local": {
                "wire": "openai-chat",
                "base_url": scripted_model.base_url("openai-chat"),
                "api_key_env": "MY_LOCAL_KEY",
            }
        },
        "model": "local/test-model",
    }
    assert finished["stop"] == "completed"
    assert scripted_model.requests[-1].headers["authorization"] == f"Bearer {FAKE_KEY}"
    assert FAKE_KEY not in saved
    assert FAKE_KEY.encode() not in stored_bytes(db_path)


async def test_choosing_a_hosted_provider_writes_its_entry_with_the_variable_name(
    setup_app, monkeypatch, db_path
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    app = setup_app()
    async with app.run_test() as pilot:
        await setup_shown(pilot)
        await pilot.press("enter")
        session = await session_shown(pilot)
        assert session.model == "anthropic/claude-sonnet-4-5"
        assert app.server._work.settings.providers["anthropic"].api_key_env == "ANTHROPIC_API_KEY"
        told = [note.message for note in app._notifications]
        assert any(str(paths.global_settings_path()) in message for message in told)
        assert not any(FAKE_KEY in message for message in told)

    saved = paths.global_settings_path().read_text(encoding="utf-8")
    assert json.loads(saved) == {
        "providers": {
            "anthropic": {
                "wire": "anthropic-messages",
                "base_url": "https://api.anthropic.com",
                "api_key_env": "ANTHROPIC_API_KEY",
            }
        },
        "model": "anthropic/claude-sonnet-4-5",
    }
    assert FAKE_KEY not in saved
    assert FAKE_KEY.encode() not in stored_bytes(db_path)


async def test_a_pasted_key_or_a_missing_field_is_refused_in_place(setup_app) -> None:
    app = setup_app()
    async with app.run_test() as pilot:
        screen = await setup_shown(pilot)
        screen.query_one("#setup-url").focus()
        await pilot.press(*"http://127.0.0.1:9/v1", "enter")
        assert "Type the model id" in screen_text(app)
        await pilot.press("tab", *"m1", "tab", *FAKE_KEY, "enter")
        await pilot.pause()
        text = screen_text(app)
        assert isinstance(app.screen, SetupScreen)

    assert "looks like an API key" in text
    assert FAKE_KEY not in text
    assert not paths.global_settings_path().exists()


async def test_existing_global_settings_are_kept(setup_app, local_servers) -> None:
    path = paths.global_settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(
            {
                "theme": "nord",
                "providers": {
                    "ollama": {
                        "wire": "openai-chat",
                        "base_url": "http://old:1/v1",
                        "headers": {"x-team": "a"},
                    }
                },
            }
        ),
        encoding="utf-8",
    )
    local = await local_servers(["qwen3:8b"])
    app = setup_app(probe_ports={local.port: "ollama"})
    async with app.run_test() as pilot:
        await setup_shown(pilot)
        await pilot.press("enter")
        await session_shown(pilot)

    assert global_settings() == {
        "theme": "nord",
        "model": "ollama/qwen3:8b",
        "providers": {
            "ollama": {
                "wire": "openai-chat",
                "headers": {"x-team": "a"},
                "base_url": f"http://127.0.0.1:{local.port}/v1",
            }
        },
    }


@pytest.mark.parametrize("start", ["resume", "continue", "picker"])
async def test_resuming_or_the_picker_never_shows_setup(setup_app, db_path, workspace, start) -> None:
    server = await Server.open(db_path)
    try:
        session_id = await seed_session(server, workspace, "an old conversation")
    finally:
        await server.close()
    options = {
        "resume": {"resume": session_id[:8]},
        "continue": {"continue_latest": True},
        "picker": {"open_picker": True},
    }[start]
    app = setup_app(**options)
    seen: list[type] = []
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.ready, "first screen")
        seen.append(type(app.screen))
        if start == "picker":
            await wait_for(pilot, lambda: app.screen.records, "sessions listed")
            await pilot.press("enter")
            await session_shown(pilot)
        assert app.screen.session_id == session_id
        assert not any(isinstance(screen, SetupScreen) for screen in app.screen_stack)

    assert seen == [PickerScreen if start == "picker" else SessionScreen]


async def test_shift_tab_moves_back_in_the_form_and_cycles_the_mode_in_the_session(setup_app) -> None:
    app = setup_app()
    async with app.run_test() as pilot:
        screen = await setup_shown(pilot)
        screen.query_one("#setup-url").focus()
        await pilot.press("tab")
        after_tab = app.focused
        await pilot.press("shift+tab")
        assert app.focused is screen.query_one("#setup-url") and app.focused is not after_tab
        assert app.permission_mode == "ask"
        await pilot.press("escape")  # skip setup: the session screen
        await wait_for(pilot, lambda: app.ready and not isinstance(app.screen, SetupScreen), "session")
        await pilot.press("shift+tab")
        assert app.permission_mode == "accept-edits"


async def test_model_after_skipping_setup_shows_it_again_for_this_session(
    setup_app, local_servers, scripted_model: ScriptedModel
) -> None:
    local = await local_servers(["qwen3:8b"], upstream=scripted_model)
    scripted_model.add(answer("Hello from the local server."))
    app = setup_app(probe_ports={local.port: "ollama"})
    async with app.run_test() as pilot:
        await setup_shown(pilot)
        await pilot.press("escape")  # skipped: no model, nothing configured
        session = await session_shown(pilot)
        session.query_one(PromptInput).load_text("/model")
        await pilot.press("enter")
        await setup_shown(pilot)  # the only way to a model from here: the setup again
        await pilot.press("enter")
        again = await session_shown(pilot)
        assert again is session  # the same session, now with the model chosen
        await wait_for(pilot, lambda: session.model == "ollama/qwen3:8b", "the model chosen for this session")
        finished = await send(pilot, "Say hello")
    assert finished["stop"] == "completed"


async def test_keys_typed_right_after_tab_or_enter_land_in_the_field_it_moved_to(setup_app) -> None:
    """Textual moved the focus once the key (Tab, or Enter on "Other … server") had gone through the
    focused widget and back to the screen: the characters typed meanwhile went to the list or the
    field left behind."""
    app = setup_app()
    async with app.run_test() as pilot:
        screen = await setup_shown(pilot)
        url, model, key_env = (
            screen.query_one(f"#setup-{name}", Input) for name in ("url", "model", "key-env")
        )
        assert screen.highlighted_id == "other"  # nothing was found: the only choice
        type_at_once(
            app, "enter", *"http://127.0.0.1:9/v1", "tab", *"m1", "tab", *"MY_KEY", "shift+tab", *"m2"
        )
        await pilot.pause()  # every key handled
        # A field the focus comes back to has its text selected, as in a browser: typing replaces it.
        assert (url.value, model.value, key_env.value) == ("http://127.0.0.1:9/v1", "m2", "MY_KEY")
        assert app.focused is model


async def test_a_key_typed_right_after_tab_goes_to_the_next_field(setup_app) -> None:
    app = setup_app()
    async with app.run_test() as pilot:
        screen = await setup_shown(pilot)
        url, model = screen.query_one("#setup-url", Input), screen.query_one("#setup-model", Input)
        screen.set_focus(url)
        type_at_once(app, *"http://h/v1", "tab", *"qwen3:8b")
        await pilot.pause()
        assert (url.value, model.value) == ("http://h/v1", "qwen3:8b")


async def test_a_url_typed_on_the_list_goes_to_the_url_field(setup_app) -> None:
    """The list has the focus at first and its only row says to type a URL below: typed at once, it
    went nowhere."""
    app = setup_app()
    async with app.run_test() as pilot:
        screen = await setup_shown(pilot)
        url, model = screen.query_one("#setup-url", Input), screen.query_one("#setup-model", Input)
        assert screen.focused is screen.query_one("#setup-options")
        type_at_once(app, *"http://127.0.0.1:9/v1")
        await pilot.pause()
        type_at_once(app, "tab", *"m1")
        await pilot.pause()
        assert (url.value, model.value) == ("http://127.0.0.1:9/v1", "m1")

    pasting = setup_app()
    async with pasting.run_test() as pilot:
        screen = await setup_shown(pilot)
        screen.query_one("#setup-options").post_message(events.Paste("http://127.0.0.1:8/v1\n"))
        await pilot.pause()
        assert screen.query_one("#setup-url", Input).value == "http://127.0.0.1:8/v1"
        assert screen.focused is screen.query_one("#setup-url")
