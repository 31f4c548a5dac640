"""First run with no model: choose a hosted provider, a local server, or type a server; saved globally."""

from __future__ import annotations

import os
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from harnez import paths
from harnez.errors import HarnezError
from harnez.server.models import DEFAULT_PORTS, HOSTED_PROVIDERS, HostedProvider, LocalServer, detect_keys
from harnez.settings import Settings, parse_model_ref, save_global_settings

LocalProbe = Callable[[], Awaitable[list[LocalServer]]]
"""Finds the local servers (normally `probe_local_servers` over the usual ports)."""

OTHER = "other"
"""The option id of "Other OpenAI-compatible server" (moves to the form)."""
_LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "0.0.0.0"})
_NOT_IN_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True, slots=True)
class Choice:
    """One way to set up a model: the reference used and the settings changes that make it work."""

    model: str
    changes: dict[str, Any] = field(default_factory=dict)
    """What `save_global_settings` merges into the global file (names of key variables, never keys)."""


@dataclass(frozen=True, slots=True)
class SetupResult:
    """What the setup saved: the model and the file it went to."""

    model: str
    path: Path
    note: str | None = None
    """Something to tell the person (a key variable that is not set here)."""


def hosted_choice(provider: HostedProvider, settings: Settings) -> Choice:
    """The provider's default model; its provider entry too, unless settings already define one."""
    changes: dict[str, Any] = {"model": provider.default_ref}
    if provider.name not in settings.providers:
        entry = {"wire": provider.wire, "base_url": provider.base_url, "api_key_env": provider.key_env}
        changes["providers"] = {provider.name: entry}
    return Choice(provider.default_ref, changes)


def server_choice(provider: str, base_url: str, model: str, key_env: str | None = None) -> Choice:
    """An `openai-chat` provider at `base_url` and `<provider>/<model>` as the default model."""
    entry: dict[str, Any] = {"wire": "openai-chat", "base_url": base_url}
    if key_env:
        entry["api_key_env"] = key_env
    ref = str(parse_model_ref(f"{provider}/{model}"))
    return Choice(ref, {"providers": {provider: entry}, "model": ref})


def custom_provider_name(base_url: str) -> str:
    """`local` for a loopback server, else the host name (`api.example.com`)."""
    host = (urlsplit(base_url).hostname or "").lower()
    if not host or host in _LOOPBACK_HOSTS:
        return "local"
    return _NOT_IN_NAME.sub("-", host).strip("-.") or "custom"


def custom_choice(base_url: str, model: str, key_env: str) -> Choice:
    """The typed server as a choice; a HarnezError says which field to fix."""
    base_url, model, key_env = base_url.strip(), model.strip(), key_env.strip()
    scheme, _, rest = base_url.partition("://")
    if scheme not in ("http", "https") or not rest:
        raise HarnezError(
            "Type the server's base URL, starting with http:// or https://, for example "
            "http://127.0.0.1:8080/v1."
        )
    if not model:
        raise HarnezError("Type the model id the server serves, for example qwen3:8b.")
    return server_choice(custom_provider_name(base_url), base_url.rstrip("/"), model, key_env or None)


def _hosted_row(provider: HostedProvider) -> Content:
    return Content.assemble(
        (provider.label, "bold"), "  ", provider.default_ref, "  ", (f"{provider.key_env} is set", "dim")
    )


def _local_row(server: LocalServer, model: str) -> Content:
    return Content.assemble((f"{server.name}/{model}", "bold"), "  ", (server.base_url, "dim"))


def _empty_server_row(server: LocalServer) -> Content:
    return Content.assemble(
        (server.name, "bold"),
        "  ",
        (server.base_url, "dim"),
        "  ",
        ("lists no model: type one below", "italic"),
    )


def _note(text: str) -> Option:
    return Option(Content.styled(text, "dim italic"), disabled=True)


def _heading(text: str) -> Option:
    return Option(Content.styled(text, "bold"), disabled=True)


class SetupOptions(OptionList):
    """The list of choices; a character typed on it starts the server's URL in the form.

    The list has the focus at first, and with nothing found its only row says to "type its URL and
    model below": a URL typed at once went nowhere, and Tab then brought an empty field. Handled here,
    not on the screen: keys typed before the first is handled are all queued for the list already.
    """

    def on_key(self, event: events.Key) -> None:
        if event.is_printable and (event.character or "").strip():
            event.stop()
            event.prevent_default()
            self._to_url(event.character or "")

    def on_paste(self, event: events.Paste) -> None:
        event.stop()
        event.prevent_default()
        self._to_url(event.text.strip())

    def _to_url(self, text: str) -> None:
        url = self.screen.query_one("#setup-url", Input)
        if self.screen.focused is self:
            self.screen.set_focus(url)  # at once: the keys typed after these go there
        url.insert_text_at_cursor(text)


class SetupScreen(Screen[SetupResult | None]):
    """Lists what was found and offers a typed server; dismisses with what it saved, or None (skip)."""

    CSS_PATH = "setup.tcss"
    AUTO_FOCUS = "#setup-options"
    BINDINGS = [
        Binding("escape", "skip", "Skip"),
        # Keys that move the focus act with priority: the app runs them as it reads them, before it
        # gives the next key to the focused widget. Textual's own Tab moves the focus only once the
        # key has gone through the focused field and back up to the screen, and what was typed
        # meanwhile went to the field left behind.
        Binding("tab", "app.focus_next", "Next field", show=False, priority=True),
        Binding("shift+tab", "app.focus_previous", "Previous field", show=False, priority=True),
        Binding("enter", "choose", "Use", show=False, priority=True),
    ]

    def __init__(
        self,
        settings: Settings,
        probe: LocalProbe,
        ports: Mapping[int, str] = DEFAULT_PORTS,
        env: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__()
        self.settings = settings
        self._probe = probe
        self._ports = ports
        self._env = os.environ if env is None else env
        self.hosted = detect_keys(self._env)
        self.local: list[LocalServer] | None = None
        """The servers found; None while the probe runs."""
        self.choices: dict[str, Choice] = {}
        self._empty_servers: dict[str, LocalServer] = {}

    @property
    def probing(self) -> bool:
        """Whether the local servers are still being looked for."""
        return self.local is None

    def compose(self) -> ComposeResult:
        where = paths.global_settings_path(self._env)
        yield Label("Set up a model", id="setup-heading")
        yield Static(f"No model is configured yet. Choose one: it is saved to {where}.", id="setup-intro")
        yield SetupOptions(id="setup-options")
        with Grid(id="setup-form"):
            yield Label("Base URL")
            yield Input(placeholder="http://127.0.0.1:8080/v1", id="setup-url")
            yield Label("Model")
            yield Input(placeholder="the model id, e.g. qwen3:8b", id="setup-model")
            yield Label("API-key variable")
            yield Input(placeholder="optional: the NAME of the variable, e.g. MY_API_KEY", id="setup-key-env")
        yield Static("", id="setup-error")
        yield Static("↑↓ choose · Enter use · Tab next field · Esc skip (no model for now)", id="setup-keys")

    def on_mount(self) -> None:
        self.query_one("#setup-error", Static).display = False
        self._fill()
        self.find_local_servers()

    @work(group="probe", exclusive=True)
    async def find_local_servers(self) -> None:
        """Probe the local ports in the background, then list what answered."""
        self.local = await self._probe()
        if self.is_attached:  # not when the screen closed (setup done, the app quitting) during the probe
            self._fill()

    # the list ---------------------------------------------------------------------------------

    def _fill(self) -> None:
        options = self.query_one("#setup-options", OptionList)
        previous = self.highlighted_id
        self.choices.clear()
        self._empty_servers.clear()
        rows = [
            *self._hosted_rows(),
            None,
            *self._local_rows(),
            None,
            Option(
                Content.styled("Other OpenAI-compatible server: type its URL and model below", "bold"),
                id=OTHER,
            ),
        ]
        options.clear_options()
        options.add_options(rows)
        self._highlight(previous if previous not in (None, OTHER) else None)

    def _hosted_rows(self) -> list[Option]:
        rows = [_heading("Hosted providers")]
        for provider in self.hosted:
            option_id = f"hosted:{provider.name}"
            self.choices[option_id] = hosted_choice(provider, self.settings)
            rows.append(Option(_hosted_row(provider), id=option_id))
        if not self.hosted:
            names = " or ".join(p.key_env for p in HOSTED_PROVIDERS)
            rows.append(_note(f"No {names} in the environment: set one and restart Harnez to use it."))
        return rows

    def _local_rows(self) -> list[Option]:
        rows = [_heading("Local servers")]
        if self.local is None:
            return [*rows, _note("Looking for local servers…")]
        for number, server in enumerate(self.local):
            if not server.models:
                self._empty_servers[f"empty:{number}"] = server
                rows.append(Option(_empty_server_row(server), id=f"empty:{number}"))
            for index, model in enumerate(server.models):
                option_id = f"local:{number}:{index}"
                try:
                    self.choices[option_id] = server_choice(server.name, server.base_url, model)
                except HarnezError:
                    continue  # an id no model reference can hold; the form can still take it
                rows.append(Option(_local_row(server, model), id=option_id))
        if not self.local:
            ports = ", ".join(f"{port} ({name})" for port, name in self._ports.items())
            rows.append(_note(f"No local server answered on {ports}."))
        return rows

    @property
    def highlighted_id(self) -> str | None:
        """The option id under the cursor."""
        options = self.query_one("#setup-options", OptionList)
        if options.highlighted is None or not options.option_count:
            return None
        return options.get_option_at_index(options.highlighted).id

    def _highlight(self, option_id: str | None) -> None:
        """Keep the person's selection; otherwise the first choice."""
        options = self.query_one("#setup-options", OptionList)
        for index in range(options.option_count):
            option = options.get_option_at_index(index)
            if not option.disabled and (option_id is None or option.id == option_id):
                options.highlighted = index
                return
        if option_id is not None:
            self._highlight(None)

    # choosing ---------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Enter chooses from the list; in the form it is the field's (it saves the typed server).
        return action != "choose" or self.focused is self.query_one("#setup-options", OptionList)

    def action_choose(self) -> None:
        """Enter on the list: use the highlighted choice."""
        self._use(self.highlighted_id or "")

    @on(OptionList.OptionSelected, "#setup-options")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self._use(event.option.id or "")  # a click (Enter is `action_choose`)

    def _use(self, option_id: str) -> None:
        """Save a choice, or go to the form for a server to type. The focus moves at once
        (`set_focus`, not `Widget.focus`, which moves it later): the keys typed next go to that field."""
        if option_id in self.choices:
            self.save(self.choices[option_id])
        elif option_id in self._empty_servers:
            self.query_one("#setup-url", Input).value = self._empty_servers[option_id].base_url
            self.set_focus(self.query_one("#setup-model", Input))
        elif option_id == OTHER:
            self.set_focus(self.query_one("#setup-url", Input))

    @on(Input.Submitted)
    def _submitted(self, _: Input.Submitted) -> None:
        try:
            choice = custom_choice(
                self.query_one("#setup-url", Input).value,
                self.query_one("#setup-model", Input).value,
                self.query_one("#setup-key-env", Input).value,
            )
        except HarnezError as exc:
            self.show_error(exc.message)
            return
        self.save(choice)

    def save(self, choice: Choice) -> None:
        """Write the choice to the global settings and close; a refused value is shown, not raised."""
        try:
            path = save_global_settings(choice.changes, self._env)
        except HarnezError as exc:
            self.show_error(exc.message)
            return
        self.dismiss(SetupResult(choice.model, path, self._key_note(choice)))

    def _key_note(self, choice: Choice) -> str | None:
        providers = choice.changes.get("providers") or {}
        names = [entry.get("api_key_env") for entry in providers.values() if entry.get("api_key_env")]
        missing = [name for name in names if not self._env.get(name)]
        return f"{missing[0]} is not set here: export it before sending a prompt." if missing else None

    def show_error(self, message: str) -> None:
        """Show what to fix under the form."""
        error = self.query_one("#setup-error", Static)
        error.update(message)
        error.display = True

    def action_skip(self) -> None:
        """Go on without a model (sending a prompt then says how to configure one)."""
        self.dismiss(None)
