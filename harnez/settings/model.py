"""The typed settings: one frozen section per topic, and `Settings`, which holds them all."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AllowInfNan,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    field_validator,
)
from pydantic_core import PydanticCustomError

from harnez import paths
from harnez.errors import SettingsError
from harnez.settings.messages import embedded, title_source_warning
from harnez.settings.references import (
    KEYWORDS_SOURCE_TEXT,
    KEYWORDS_TITLE_SOURCE,
    PROVIDER_NAME,
    ModelRef,
    TitleSource,
    parse_model_ref,
    parse_title_source,
)

FileStamp = bytes
"""What a settings file held when it was read: its bytes (a few hundred; comparing them, unlike a
modification time, also sees two same-size writes within one clock tick)."""


def file_stamp(path: Path) -> FileStamp | None:
    """What the file at `path` holds now; None when there is none (or it cannot be read: the next
    load then says why)."""
    try:
        return path.read_bytes()
    except OSError:
        return None


WireName = Literal["openai-chat", "openai-responses", "anthropic-messages"]
Decision = Literal["allow", "ask", "deny"]

ENV_PREFIX = "HARNEZ_"
ENV_NESTED_DELIMITER = "__"
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


# ----------------------------------------------------------------------------- field checks


def _check_api_key_env(value: str | None) -> str | None:
    """Accept only a variable NAME; never put the value itself into the message."""
    if value is None or (_ENV_NAME.match(value) and not _looks_like_secret(value)):
        return value
    if _looks_like_secret(value):
        reason = "this looks like an API key, not the name of an environment variable"
    else:
        reason = "this is not a valid environment variable name"
    raise PydanticCustomError(
        "harnez",
        "{reason} (the value is not shown). Put the NAME of the variable that holds the key here, "
        "for example OPENAI_API_KEY, and export the key itself in that variable; names use letters, "
        "digits and `_` and do not start with a digit",
        {"reason": reason},
    )


def _check_env_name(value: str) -> str:
    if not _ENV_NAME.match(value):
        raise PydanticCustomError(
            "harnez",
            "this is not a valid environment variable name (letters, digits "
            "and `_`, not starting with a digit)",
        )
    return value


_PROGRAM = re.compile(r"^(?:[A-Za-z0-9_][A-Za-z0-9._+-]*|/[A-Za-z0-9._+-]+(?:/[A-Za-z0-9._+-]+)*)$")


def program_name_problem(name: str) -> str | None:
    """What is wrong with the name of a declared program (None: nothing): a bare name such as `git` or
    `python3.12`, or an absolute path such as `/usr/bin/git`."""
    if _PROGRAM.match(name):
        return None
    return (
        f"{name!r} is not a program name: declare a bare name (letters, digits, `.`, `_`, `+`, `-`, e.g. "
        "git or python3) or an absolute path (e.g. /usr/bin/git)"
    )


def _check_program(name: str) -> str:
    problem = program_name_problem(name)
    if problem is not None:
        raise PydanticCustomError("harnez", "{problem}", {"problem": problem})
    return name


def _looks_like_secret(value: str) -> bool:
    """Key-shaped text: vendor prefixes, or long mixed-case text with digits."""
    if value.lower().startswith(("sk-", "sk_", "xai-", "gsk_", "ghp_", "aiza")):
        return True
    return len(value) >= 32 and any(c.isdigit() for c in value) and any(c.islower() for c in value)


def _check_provider_name(name: str) -> str:
    if not PROVIDER_NAME.match(name):
        raise PydanticCustomError(
            "harnez",
            "a provider name may use only letters, digits, `_`, `.` and `-` and must start with a letter "
            "or digit (it is the part before the first `/` of a model reference)",
        )
    return name


ProviderName = Annotated[str, AfterValidator(_check_provider_name)]


def _refuse_flag_for(kind: str) -> Callable[[Any], Any]:
    """A before-validator: JSON's true and false are not numbers here, though Python counts them as 1 and 0."""

    def check(value: Any) -> Any:
        if isinstance(value, bool):
            raise PydanticCustomError(
                "harnez", "expected {kind}, got {got}", {"kind": kind, "got": json.dumps(value)}
            )
        return value

    return check


def _refuse_number_for_flag(value: Any) -> Any:
    """1 and 0 are not true and false here (a number in a flag is a mistake, not a choice)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        raise PydanticCustomError("harnez", "expected true or false, got {got}", {"got": json.dumps(value)})
    return value


WholeNumber = Annotated[int, BeforeValidator(_refuse_flag_for("a whole number"))]
"""A count or a size: a JSON integer (or its text, from a variable); never true or false."""
Number = Annotated[float, AllowInfNan(False), BeforeValidator(_refuse_flag_for("a number"))]
"""Seconds or a price: finite; never true or false, Infinity or NaN."""
Flag = Annotated[bool, BeforeValidator(_refuse_number_for_flag)]
"""true or false (or their text, from a variable); never a number."""


def _as_custom_error(exc: SettingsError) -> PydanticCustomError:
    return PydanticCustomError("harnez", "{reason}", {"reason": embedded(exc.message)})


# ----------------------------------------------------------------------------- typed sections


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TitleSettings(_Section):
    generated: Flag = True
    """Whether the first normal prompt names the session automatically."""
    source: str = KEYWORDS_SOURCE_TEXT
    """`keywords/yake` or `model/<provider>/<model>[:<thinking>]`; an invalid one is a warning, not an error."""

    @field_validator("source", mode="before")
    @classmethod
    def _any_value_as_text(cls, value: Any) -> str:
        """A non-text source is kept as its JSON text so it is reported as a warning, not a failure."""
        return value if isinstance(value, str) else json.dumps(value)

    @property
    def effective_source(self) -> TitleSource:
        """The parsed source, or `keywords/yake` when the configured one is invalid."""
        try:
            return parse_title_source(self.source)
        except SettingsError:
            return KEYWORDS_TITLE_SOURCE


class SessionSettings(_Section):
    title: TitleSettings = TitleSettings()


BASE_URL_IN_SETTINGS = "the provider's base_url in settings.json"
"""Where a message about a provider's base URL tells the person to look, unless a flag gave it."""


class ProviderSettings(_Section):
    wire: WireName
    base_url: str
    api_key_env: Annotated[str | None, AfterValidator(_check_api_key_env)] = None
    """The NAME of the environment variable holding the key; never the key itself."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Extra non-secret headers sent with every request."""
    prompt_cache: bool = True
    """Whether `anthropic-messages` requests mark prompt-cache breakpoints (`cache_control`), and
    requests to api.openai.com carry the session's `prompt_cache_key`; false for a server that
    refuses them."""

    _base_url_flag: str | None = PrivateAttr(default=None)
    """The command-line flag that gave `base_url` (`harnez run --base-url`); None: a settings file."""

    def given_by_flag(self, flag: str) -> ProviderSettings:
        """These keys, their base URL from `flag`: messages about it name the flag, not settings.json."""
        self._base_url_flag = flag
        return self

    @property
    def base_url_origin(self) -> str:
        """Where a message about the base URL tells the person to look."""
        return self._base_url_flag or BASE_URL_IN_SETTINGS

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        scheme, separator, rest = value.partition("://")
        if scheme not in ("http", "https") or not separator or not rest:
            raise PydanticCustomError(
                "harnez",
                "the base URL must start with http:// or https://, for example https://api.openai.com/v1",
            )
        return value


MAX_TOKENS = 100_000_000
"""The largest context window or output cap accepted (no model comes near it)."""
MAX_PRICE = 1_000_000.0
"""The largest price per million tokens accepted, in US dollars."""
HOUR, DAY = 3600.0, 86400.0


class ModelInfo(_Section):
    """Catalogue overrides for one model (context window, output cap, thinking support)."""

    context_window: WholeNumber | None = Field(default=None, gt=0, le=MAX_TOKENS)
    max_output: WholeNumber | None = Field(default=None, gt=0, le=MAX_TOKENS)
    thinking: Flag | None = None


class Rate(_Section):
    """Prices in US dollars per million tokens."""

    input: Number = Field(ge=0, le=MAX_PRICE)
    output: Number = Field(ge=0, le=MAX_PRICE)
    cache_read: Number | None = Field(default=None, ge=0, le=MAX_PRICE)
    cache_write: Number | None = Field(default=None, ge=0, le=MAX_PRICE)


class RetrySettings(_Section):
    max_attempts: WholeNumber = Field(default=4, ge=1, le=20)
    base_delay: Number = Field(default=0.5, ge=0, le=HOUR)
    max_delay: Number = Field(default=30.0, ge=0, le=HOUR)
    request_timeout: Number = Field(default=600.0, gt=0, le=DAY)
    """Seconds one whole model request may take, connecting and streaming included."""
    read_timeout: Number = Field(default=300.0, gt=0, le=DAY)
    """Seconds the provider may stay silent mid-request (a model thinking before it streams)."""
    connect_timeout: Number = Field(default=10.0, gt=0, le=HOUR)


class ShellRules(_Section):
    """Glob patterns over the whole command line; deny beats ask beats allow."""

    allow: list[str] = Field(default_factory=list)
    ask: list[str] = Field(default_factory=list)
    deny: list[str] = Field(default_factory=list)
    pass_env: list[Annotated[str, AfterValidator(_check_env_name)]] = Field(default_factory=list)
    """Credential variables given to shell commands anyway (they are withheld by default)."""
    programs: list[Annotated[str, AfterValidator(_check_program)]] | None = None
    """The only programs the shell tool may start (`--programs` replaces it for a run); None: any."""


class PathRules(_Section):
    """Glob patterns over paths (relative to the workspace, or absolute)."""

    allow: list[str] = Field(default_factory=list)
    ask: list[str] = Field(default_factory=list)
    deny: list[str] = Field(default_factory=list)


class PermissionSettings(_Section):
    mode: Literal["ask", "accept-edits", "read-only"] = "ask"
    tools: dict[str, Decision] = Field(default_factory=dict)
    """Per tool name: allow / ask / deny. Unlisted tools use the built-in defaults."""
    shell: ShellRules = ShellRules()
    paths: PathRules = PathRules()


HookName = Literal["stop", "pre_tool", "post_tool", "prompt_submit"]
HOOK_NAMES: tuple[HookName, ...] = ("stop", "pre_tool", "post_tool", "prompt_submit")


class HookCommand(_Section):
    """One hook: a bash command line run in the workspace with the event as JSON on stdin."""

    command: str = Field(min_length=1)
    timeout: Number = Field(default=60.0, gt=0, le=HOUR)
    """Seconds the command may take; past them it is killed and the task ends failed."""
    tools: list[str] = Field(default_factory=list)
    """pre_tool and post_tool only: the tool names it runs for (empty: every tool)."""

    def applies_to(self, *names: str) -> bool:
        """Whether it runs for a tool known by `names` (the name offered to the model, and an MCP
        tool's whole `mcp__<server>__<tool>` when that one was cut to fit the providers' limit)."""
        return not self.tools or any(name in self.tools for name in names)


class HookSettings(_Section):
    """Commands run at points of every task (docs/hooks.md), and how often a stop hook may send it back."""

    stop: list[HookCommand] = Field(default_factory=list)
    pre_tool: list[HookCommand] = Field(default_factory=list)
    post_tool: list[HookCommand] = Field(default_factory=list)
    prompt_submit: list[HookCommand] = Field(default_factory=list)
    stop_limit: WholeNumber = Field(default=5, ge=1, le=100)
    """How many times in one task the stop hooks may send the work back before the task ends."""

    @field_validator("stop", "prompt_submit")
    @classmethod
    def _no_tool_filter(cls, commands: list[HookCommand]) -> list[HookCommand]:
        if any(command.tools for command in commands):
            raise PydanticCustomError("harnez", "`tools` applies to pre_tool and post_tool hooks only")
        return commands

    def commands(self, hook: HookName) -> list[HookCommand]:
        """The commands of one hook, in the order they run."""
        found: list[HookCommand] = getattr(self, hook)
        return found

    @property
    def empty(self) -> bool:
        return not any(self.commands(hook) for hook in HOOK_NAMES)

    def joined(self, later: HookSettings) -> HookSettings:
        """These hooks, then `later`'s after them; `later`'s stop_limit when it sets one."""
        lists = {hook: self.commands(hook) + later.commands(hook) for hook in HOOK_NAMES}
        limit = later.stop_limit if "stop_limit" in later.model_fields_set else self.stop_limit
        return HookSettings(**lists, stop_limit=limit)


# ----------------------------------------------------------------------------- the settings


class Settings(BaseModel):
    """All settings; built by `load_settings`, or directly (keyword arguments only, no files or env).

    A plain pydantic model with the config pydantic-settings' `BaseSettings` gave it (extra keys
    refused, frozen, defaults validated), so that pydantic-settings (~30 ms of imports before a
    process's first answer) is imported only when HARNEZ_* variables are set: `load_settings` reads
    them with that package's environment source (prefix, `__` for nesting, case-insensitive, empty
    values ignored) from the mapping it is given, never implicitly from os.environ.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)

    session: SessionSettings = SessionSettings()
    providers: dict[ProviderName, ProviderSettings] = Field(default_factory=dict)
    model: str | None = None
    """The default model, `<provider>/<model>[:<thinking>]`. Only its form is checked here."""
    models: dict[str, ModelInfo] = Field(default_factory=dict)
    rates: dict[str, Rate] = Field(default_factory=dict)
    """Keyed by `<provider>/<model>` or by the bare model id."""
    retry: RetrySettings = RetrySettings()
    permissions: PermissionSettings = PermissionSettings()
    hooks: HookSettings = HookSettings()
    """The person's own hooks (global file, variables); the project file's are `project_hooks`."""
    theme: str = Field(default="textual-dark", min_length=1)
    database_path: Path | None = None

    _warnings: tuple[str, ...] = PrivateAttr(default=())
    _workspace: Path | None = PrivateAttr(default=None)
    _project_hooks: HookSettings = PrivateAttr(default_factory=HookSettings)
    _files: tuple[tuple[Path, FileStamp | None], ...] = PrivateAttr(default=())

    @field_validator("model")
    @classmethod
    def _model_ref_form(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                parse_model_ref(value)
            except SettingsError as exc:
                raise _as_custom_error(exc) from None
        return value

    @field_validator("database_path")
    @classmethod
    def _expand_home(cls, value: Path | None) -> Path | None:
        return None if value is None else value.expanduser()

    def model_post_init(self, context: Any, /) -> None:
        warning = title_source_problem(self.session.title.source, "the settings")
        self._warnings = () if warning is None else (warning,)

    @property
    def warnings(self) -> tuple[str, ...]:
        """Problems reported at load that did not stop loading (an invalid title source)."""
        return self._warnings

    @property
    def workspace(self) -> Path | None:
        """The workspace whose project file was read (None for settings built directly)."""
        return self._workspace

    @property
    def title_source(self) -> TitleSource:
        """The title source in effect: the configured one, or `keywords/yake` when it is invalid."""
        return self.session.title.effective_source

    @property
    def credential_variables(self) -> list[str]:
        """The names of the variables that hold the providers' keys."""
        return sorted({p.api_key_env for p in self.providers.values() if p.api_key_env})

    @property
    def default_model(self) -> ModelRef | None:
        """The parsed default model, if one is set."""
        return None if self.model is None else parse_model_ref(self.model)

    def database_file(self, workspace: Path, env: Mapping[str, str] | None = None) -> Path:
        """The database to open: `database_path` when set, else the workspace default."""
        return self.database_path if self.database_path is not None else paths.database_path(workspace, env)

    @property
    def project_hooks(self) -> HookSettings:
        """The hooks of the workspace's project file: they run only once the person trusted them."""
        return self._project_hooks

    def with_load_details(
        self,
        warnings: tuple[str, ...],
        workspace: Path,
        project_hooks: HookSettings | None = None,
        files: tuple[tuple[Path, FileStamp | None], ...] = (),
    ) -> Settings:
        """A copy carrying what loading found: warnings naming the file that set the value, the workspace,
        the project file's hooks, and the files read with what each held then."""
        loaded = self.model_copy()
        loaded._warnings = warnings
        loaded._workspace = workspace
        loaded._project_hooks = project_hooks or HookSettings()
        loaded._files = files
        return loaded

    def emptied_files(self) -> list[Path]:
        """Settings files that held settings when these were read and hold nothing now: an editor
        caught between emptying a file and writing it (or a file emptied on purpose)."""
        return [
            path
            for path, stamp in self._files
            if stamp is not None
            and stamp.strip()
            and (now := file_stamp(path)) is not None
            and not now.strip()
        ]

    def files_changed(self) -> bool:
        """Whether a settings file these were read from holds something else now (edited, created or
        removed since). Settings built directly, not read from files, never change."""
        return any(file_stamp(path) != stamp for path, stamp in self._files)


def title_source_problem(source: str, origin: str) -> str | None:
    """The warning for an invalid `session.title.source` set in `origin`, or None when it is valid."""
    try:
        parse_title_source(source)
    except SettingsError as exc:
        return title_source_warning(source, origin, exc.message)
    return None
