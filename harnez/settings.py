"""Typed settings: global and project `settings.json`, deep-merged per key, with HARNEZ_* overrides."""

from __future__ import annotations

import copy
import difflib
import json
import os
import re
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import pydantic_settings
from pydantic import (
    AfterValidator,
    AllowInfNan,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
)
from pydantic.fields import FieldInfo
from pydantic_core import PydanticCustomError
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)
from pydantic_settings.sources.utils import parse_env_vars

from harnez import paths
from harnez.errors import SettingsError
from harnez.redaction import COMMON_KEY_VARIABLES, SECRETS

WireName = Literal["openai-chat", "openai-responses", "anthropic-messages"]
Decision = Literal["allow", "ask", "deny"]
ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]
THINKING_LEVELS: tuple[str, ...] = ("off", "minimal", "low", "medium", "high", "xhigh", "max")

ENV_PREFIX = "HARNEZ_"
ENV_NESTED_DELIMITER = "__"
KEYWORDS_SOURCE_TEXT = "keywords/yake"
TITLE_SOURCE_FORMS = "`keywords/yake` or `model/<provider>/<model>[:<thinking>]`"
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PROVIDER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_SECRET_PARENTS = frozenset({"api_key_env", "headers"})
"""Keys whose values are never echoed in a message (a key may have been pasted there)."""
MAX_NESTING = 16
"""Objects and lists nested deeper than this are refused before parsing (the deepest setting has 4)."""
_NESTING_TOKEN = re.compile(r'[][{}"\\]')


# ----------------------------------------------------------------------------- model references


@dataclass(frozen=True)
class ModelRef:
    """A model named as `<provider>/<model>[:<thinking>]`; the model id may hold `/` and `:`."""

    provider: str
    model: str
    thinking: str | None = None

    @property
    def name(self) -> str:
        """`<provider>/<model>` without the thinking level (the key of `models` and `rates`)."""
        return f"{self.provider}/{self.model}"

    def __str__(self) -> str:
        return self.name if self.thinking is None else f"{self.name}:{self.thinking}"


def parse_model_ref(text: str) -> ModelRef:
    """Parse `<provider>/<model>[:<thinking>]`; a trailing `:<level>` is thinking only for known levels."""
    shown = _shown(text)
    form = "write it as `<provider>/<model>[:<thinking>]`, for example `openai/gpt-5:high`"
    if not isinstance(text, str) or not text.strip():
        raise SettingsError(f"The model reference is empty; {form}.")
    if any(ch.isspace() or not ch.isprintable() for ch in text):
        raise SettingsError(f"The model reference {shown} contains spaces or control characters; {form}.")
    provider, slash, rest = text.partition("/")
    if not slash or not provider:
        raise SettingsError(f"The model reference {shown} has no provider before a `/`; {form}.")
    if not _PROVIDER_NAME.match(provider):
        raise SettingsError(
            f"The model reference {shown} starts with the provider name {_shown(provider)}, which is not "
            "a valid provider name (letters, digits, `_`, `.` and `-`); " + form + "."
        )
    model, thinking = rest, None
    head, colon, tail = rest.rpartition(":")
    if colon and tail in THINKING_LEVELS and head:
        model, thinking = head, tail
    elif colon and not tail:
        levels = ", ".join(THINKING_LEVELS)
        raise SettingsError(f"The model reference {shown} ends with `:` but no thinking level; use one of {levels}.")
    if not model or model.startswith(("/", ":")) or model.endswith("/"):
        raise SettingsError(f"The model reference {shown} has no model id after the provider; {form}.")
    return ModelRef(provider=provider, model=model, thinking=thinking)


@dataclass(frozen=True)
class TitleSource:
    """Where automatic session titles come from: local keywords, or a model."""

    kind: Literal["keywords", "model"]
    model: ModelRef | None = None

    def __str__(self) -> str:
        return KEYWORDS_SOURCE_TEXT if self.model is None else f"model/{self.model}"


KEYWORDS_TITLE_SOURCE = TitleSource(kind="keywords")


def parse_title_source(text: str) -> TitleSource:
    """Parse `keywords/yake` or `model/<provider>/<model>[:<thinking>]`."""
    if text == KEYWORDS_SOURCE_TEXT:
        return KEYWORDS_TITLE_SOURCE
    if isinstance(text, str) and text.startswith("model/"):
        try:
            return TitleSource(kind="model", model=parse_model_ref(text.removeprefix("model/")))
        except SettingsError as exc:
            reason = _embedded(exc.message)
            raise SettingsError(f"The title source {_shown(text)} names a bad model: {reason}.") from None
    if isinstance(text, str) and text.startswith("keywords/"):
        raise SettingsError(f"The title source {_shown(text)} is unknown; the only keyword extractor is `yake`.")
    raise SettingsError(f"The title source {_shown(text)} is not valid; use {TITLE_SOURCE_FORMS}.")


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
        raise PydanticCustomError("harnez", "this is not a valid environment variable name (letters, digits "
                                  "and `_`, not starting with a digit)")
    return value


def _looks_like_secret(value: str) -> bool:
    """Key-shaped text: vendor prefixes, or long mixed-case text with digits."""
    if value.lower().startswith(("sk-", "sk_", "xai-", "gsk_", "ghp_", "aiza")):
        return True
    return len(value) >= 32 and any(c.isdigit() for c in value) and any(c.islower() for c in value)


def _check_provider_name(name: str) -> str:
    if not _PROVIDER_NAME.match(name):
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
            raise PydanticCustomError("harnez", "expected {kind}, got {got}",
                                      {"kind": kind, "got": json.dumps(value)})
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
    return PydanticCustomError("harnez", "{reason}", {"reason": _embedded(exc.message)})


def _embedded(message: str) -> str:
    """A standalone sentence made fit to follow a colon: lower-case start, no final full stop."""
    message = message.rstrip(".")
    return message[:1].lower() + message[1:] if message[1:2].islower() else message


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


class ProviderSettings(_Section):
    wire: WireName
    base_url: str
    api_key_env: Annotated[str | None, AfterValidator(_check_api_key_env)] = None
    """The NAME of the environment variable holding the key; never the key itself."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Extra non-secret headers sent with every request."""

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        scheme, separator, rest = value.partition("://")
        if scheme not in ("http", "https") or not separator or not rest:
            raise PydanticCustomError(
                "harnez", "the base URL must start with http:// or https://, for example https://api.openai.com/v1"
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


# ----------------------------------------------------------------------------- pydantic-settings sources


@dataclass
class _LoadInputs:
    """What one `load_settings` call feeds the sources: the environment and the merged files."""

    env: Mapping[str, str]
    files: dict[str, Any]


_LOADING: ContextVar[_LoadInputs | None] = ContextVar("harnez_settings_loading", default=None)


class _EnvOverrides(EnvSettingsSource):
    """pydantic-settings' environment source, reading an explicit mapping instead of os.environ."""

    def __init__(self, settings_cls: type[BaseSettings], env: Mapping[str, str]) -> None:
        self._explicit_env = env
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return parse_env_vars(self._explicit_env, self.case_sensitive, self.env_ignore_empty, self.env_parse_none_str)


class _MergedFiles(PydanticBaseSettingsSource):
    """The global and project files, already deep-merged."""

    def __init__(self, settings_cls: type[BaseSettings], values: dict[str, Any]) -> None:
        super().__init__(settings_cls)
        self._values = values

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return self._values.get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return copy.deepcopy(self._values)


# ----------------------------------------------------------------------------- the settings


class Settings(BaseSettings):
    """All settings; built by `load_settings`, or directly (keyword arguments only, no files or env)."""

    model_config = SettingsConfigDict(
        extra="forbid",
        frozen=True,
        env_prefix=ENV_PREFIX,
        env_nested_delimiter=ENV_NESTED_DELIMITER,
        env_ignore_empty=True,
        case_sensitive=False,
    )

    session: SessionSettings = SessionSettings()
    providers: dict[ProviderName, ProviderSettings] = Field(default_factory=dict)
    model: str | None = None
    """The default model, `<provider>/<model>[:<thinking>]`. Only its form is checked here."""
    models: dict[str, ModelInfo] = Field(default_factory=dict)
    rates: dict[str, Rate] = Field(default_factory=dict)
    """Keyed by `<provider>/<model>` or by the bare model id."""
    retry: RetrySettings = RetrySettings()
    permissions: PermissionSettings = PermissionSettings()
    theme: str = Field(default="textual-dark", min_length=1)
    database_path: Path | None = None

    _warnings: tuple[str, ...] = PrivateAttr(default=())
    _workspace: Path | None = PrivateAttr(default=None)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Keyword arguments, then HARNEZ_* variables, then the merged files; outside a load, only keywords."""
        inputs = _LOADING.get()
        if inputs is None:
            return (init_settings,)
        return (init_settings, _EnvOverrides(settings_cls, inputs.env), _MergedFiles(settings_cls, inputs.files))

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
        warning = _title_source_warning(self.session.title.source, "the settings")
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


def _title_source_warning(source: str, origin: str) -> str | None:
    try:
        parse_title_source(source)
    except SettingsError as exc:
        allowed = "" if TITLE_SOURCE_FORMS in exc.message else f" Allowed: {TITLE_SOURCE_FORMS}."
        outcome = ("Sessions keep a cleaned excerpt of their first prompt as title"
                   if source.strip().startswith("model/") else "Titles use `keywords/yake`")
        return (
            f"Ignored setting in {origin}, key `session.title.source`: {_embedded(exc.message)}.{allowed} "
            f"{outcome} until this is fixed."
        )
    return None


# ----------------------------------------------------------------------------- loading


KeyPath = tuple[str | int, ...]
Provenance = dict[KeyPath, list[str]]
"""For each key path set by some layer, the layers (origins) that contributed to it, in order."""


def load_settings(workspace: Path, env: Mapping[str, str] | None = None) -> Settings:
    """Read the global then the project file, merge them per key, apply HARNEZ_* variables, validate."""
    env = dict(os.environ if env is None else env)
    global_path, project_path = paths.global_settings_path(env), paths.project_settings_path(workspace)
    layers = [
        (f"the global settings file {global_path}", _read_settings_file(global_path, "global")),
        (f"the project settings file {project_path}", _read_settings_file(project_path, "project")),
    ]
    merged, provenance = _merge_layers(layers)
    _record_env_provenance(provenance, env)
    _check_env_nesting(env)
    settings = _validate(merged, provenance, env)
    settings = _resolve_database_path(settings, provenance, workspace)
    SECRETS.learn_all([*COMMON_KEY_VARIABLES, *settings.credential_variables], env)
    source_origin = _origin_of(provenance, ("session", "title", "source"))
    warning = _title_source_warning(settings.session.title.source, source_origin)
    settings._warnings = () if warning is None else (warning,)
    settings._workspace = Path(workspace).resolve()
    return settings


def _read_settings_file(path: Path, which: str) -> dict[str, Any]:
    """The JSON object in a settings file; {} when the file is missing or blank."""
    label = f"The {which} settings file {path}"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise SettingsError(f"{label} cannot be read ({reason}); fix its permissions or encoding (UTF-8).") from None
    if not text.strip():
        return {}
    deep = _too_deep(text)
    if deep is not None:
        raise SettingsError(f"{label} nests objects and lists more than {MAX_NESTING} levels deep ({deep}); "
                            "no setting needs more than 4. Check its brackets.")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SettingsError(
            f"{label} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}. Fix the syntax "
            "there (keys and text in double quotes, no trailing commas, no comments)."
        ) from None
    if not isinstance(data, dict):
        raise SettingsError(
            f"{label} must hold a JSON object (`{{ ... }}`) at the top level, but holds {_json_kind(data)}."
        )
    return data


def _too_deep(text: str) -> str | None:
    """Where JSON text first nests deeper than MAX_NESTING ("line L, column C"), or None.

    A scan of brackets outside strings, before parsing: the parser, the merge and validation all
    recurse, and a file of 100,000 `[` would otherwise end in a RecursionError.
    """
    depth, in_string, escaped_at = 0, False, -1
    for match in _NESTING_TOKEN.finditer(text):
        token, at = match.group(), match.start()
        if in_string:
            if at == escaped_at:
                continue  # the character after a backslash
            if token == "\\":
                escaped_at = at + 1
            elif token == '"':
                in_string = False
        elif token == '"':
            in_string = True
        elif token in "[{":
            depth += 1
            if depth > MAX_NESTING:
                line_start = text.rfind("\n", 0, at) + 1
                return f"line {text.count(chr(10), 0, at) + 1}, column {at - line_start + 1}"
        elif token in "]}":
            depth -= 1
    return None


def _check_env_nesting(env: Mapping[str, str]) -> None:
    """A JSON-valued HARNEZ_* variable nested too deeply is refused like a file."""
    for path, name in _env_override_paths(env).items():
        value = env[name]
        deep = _too_deep(value) if value.lstrip().startswith(("[", "{")) else None
        if deep is not None:
            raise SettingsError(
                f"Invalid setting in the environment variable {name}, key `{_dotted(path)}`: its JSON nests "
                f"objects and lists more than {MAX_NESTING} levels deep ({deep}); no setting needs more "
                "than 4. Fix the variable or unset it.")


def _merge_layers(
    layers: list[tuple[str, Mapping[str, Any]]], *, none_removes: bool = False
) -> tuple[dict[str, Any], Provenance]:
    """Deep-merge layers in order (later wins): objects merge per key, lists and scalars replace."""
    merged: dict[str, Any] = {}
    provenance: Provenance = {}
    for origin, layer in layers:
        _merge_into(merged, layer, origin, provenance, (), none_removes)
    return merged, provenance


def _merge_into(
    base: dict[str, Any], layer: Mapping[str, Any], origin: str, prov: Provenance, prefix: KeyPath, none_removes: bool
) -> None:
    for key, value in layer.items():
        path = (*prefix, key)
        if value is None and none_removes:
            base.pop(key, None)
            _forget(prov, path)
        elif isinstance(value, Mapping) and isinstance(base.get(key), dict):
            prov.setdefault(path, []).append(origin)
            _merge_into(base[key], value, origin, prov, path, none_removes)
        else:
            base[key] = copy.deepcopy(dict(value) if isinstance(value, Mapping) else value)
            _forget(prov, path)
            for sub in _key_paths(value, path):
                prov[sub] = [origin]


def _key_paths(value: Any, path: KeyPath) -> Iterator[KeyPath]:
    yield path
    if isinstance(value, Mapping):
        for key, sub in value.items():
            yield from _key_paths(sub, (*path, key))


def _forget(prov: Provenance, path: KeyPath) -> None:
    for known in [p for p in prov if p[: len(path)] == path]:
        del prov[known]


def _record_env_provenance(prov: Provenance, env: Mapping[str, str]) -> None:
    """Mark the key paths that HARNEZ_* variables override, as pydantic-settings maps them."""
    for path, name in _env_override_paths(env).items():
        _forget(prov, path)
        prov[path] = [f"the environment variable {name}"]


def _env_override_paths(env: Mapping[str, str]) -> dict[KeyPath, str]:
    found: dict[KeyPath, str] = {}
    for name, value in env.items():
        if not name.upper().startswith(ENV_PREFIX) or value == "":
            continue
        path = tuple(name[len(ENV_PREFIX) :].lower().split(ENV_NESTED_DELIMITER))
        if path[0] in Settings.model_fields:
            found[path] = name
    return found


def _validate(merged: dict[str, Any], prov: Provenance, env: Mapping[str, str]) -> Settings:
    token = _LOADING.set(_LoadInputs(env=env, files=merged))
    try:
        return Settings()
    except ValidationError as exc:
        raise SettingsError(_validation_message(exc, prov)) from None
    except pydantic_settings.SettingsError as exc:
        raise SettingsError(_env_parse_message(exc, env)) from None
    finally:
        _LOADING.reset(token)


def _env_parse_message(exc: pydantic_settings.SettingsError, env: Mapping[str, str]) -> str:
    """pydantic-settings could not decode a JSON-valued HARNEZ_* variable."""
    field_name = str(exc).split('"')[1] if '"' in str(exc) else "?"
    names = [n for p, n in _env_override_paths(env).items() if p[0] == field_name] or [ENV_PREFIX + field_name.upper()]
    return (
        f"Invalid setting in the environment variable {names[0]}, key `{field_name}`: the value must be a JSON "
        f"object or list for this key, and it is not valid JSON. Fix the variable or unset it."
    )


def _resolve_database_path(settings: Settings, prov: Provenance, workspace: Path) -> Settings:
    """A relative `database_path` from a file is relative to the workspace; from the environment, to the cwd."""
    path = settings.database_path
    if path is None or path.is_absolute():
        return settings
    from_env = _origin_of(prov, ("database_path",)).startswith("the environment")
    return settings.model_copy(update={"database_path": (Path.cwd() if from_env else workspace) / path})


# ----------------------------------------------------------------------------- error messages


def _validation_message(exc: ValidationError, prov: Provenance) -> str:
    errors = exc.errors(include_url=False)
    first = errors[0]
    loc = tuple(part for part in first["loc"] if part != "[key]")
    is_key = "[key]" in first["loc"]
    where = f"key `{_dotted(loc)}`" if loc else "the top level"
    message = f"Invalid setting in {_origin_of(prov, loc)}, {where}: {_describe(first, loc, is_key)}."
    if len(errors) > 1:
        more = len(errors) - 1
        message += f" ({more} more problem{'s' if more > 1 else ''} will be reported after this one is fixed.)"
    return message


def _origin_of(prov: Provenance, loc: KeyPath) -> str:
    """The layer(s) a key path came from: the longest known prefix of it."""
    for end in range(len(loc), 0, -1):
        origins = prov.get(loc[:end])
        if origins:
            unique = list(dict.fromkeys(origins))
            if len(unique) == 1:
                return unique[0]
            return f"{unique[-1]} (merged with {' and '.join(unique[:-1])})"
    return "the settings"


def _dotted(loc: KeyPath) -> str:
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            shown = part if _PLAIN_KEY.match(part) else json.dumps(part)
            text += f".{shown}" if text else shown
    return text


def _describe(error: Mapping[str, Any], loc: KeyPath, is_key: bool) -> str:
    kind, ctx = error["type"], error.get("ctx") or {}
    got = _got(error.get("input"), loc)
    if kind == "extra_forbidden":
        return _unknown_key(loc)
    if kind == "missing":
        return f"the required key `{loc[-1]}` is missing"
    if kind == "harnez":
        return error["msg"]
    if kind == "literal_error":
        return f"{got} is not allowed; use one of {ctx.get('expected', '')}"
    simple = _SIMPLE_EXPECTATIONS.get(kind)
    if simple is not None:
        return f"expected {simple}, got {got}"
    bound = _BOUNDS.get(kind)
    if bound is not None:
        limit = next(iter(ctx.values()), "?")
        return f"must be {bound} {limit}, got {got}"
    prefix = "the key itself: " if is_key else ""
    return prefix + error["msg"].removeprefix("Value error, ")


_SIMPLE_EXPECTATIONS = {
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "string_type": "text in double quotes",
    "dict_type": "an object (`{ ... }`)",
    "model_type": "an object (`{ ... }`)",
    "model_attributes_type": "an object (`{ ... }`)",
    "list_type": "a list (`[ ... ]`)",
    "path_type": "a file path as text",
    "string_too_short": "non-empty text",
    "finite_number": "a finite number",
}
_BOUNDS = {
    "greater_than_equal": "at least",
    "greater_than": "more than",
    "less_than_equal": "at most",
    "less_than": "less than",
}


def _unknown_key(loc: KeyPath) -> str:
    key = str(loc[-1])
    allowed = _allowed_keys(loc[:-1])
    if not allowed:
        return f"`{key}` is not a known setting here"
    close = difflib.get_close_matches(key, allowed, n=1)
    hint = f" (did you mean `{close[0]}`?)" if close else ""
    return f"`{key}` is not a known setting here{hint}; allowed keys are {', '.join(allowed)}"


def _allowed_keys(parent: KeyPath) -> list[str]:
    """The field names of the model at a key path, walking through dict-valued settings."""
    node: Any = Settings
    pending_dict_key = False
    for part in parent:
        if pending_dict_key:
            pending_dict_key = False
            continue
        fields = getattr(node, "model_fields", None)
        if fields is None or part not in fields:
            return []
        node = _unwrap(fields[part].annotation)
        if get_origin(node) is dict:
            node, pending_dict_key = _unwrap(get_args(node)[1]), True
    fields = getattr(node, "model_fields", None)
    return list(fields) if fields and not pending_dict_key else []


def _unwrap(annotation: Any) -> Any:
    """`X | None` and `Annotated[X, ...]` become X."""
    if get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    if get_origin(annotation) in (Union, type(int | None)):
        members = [a for a in get_args(annotation) if a is not type(None)]
        annotation = members[0] if len(members) == 1 else annotation
    return annotation


def _got(value: Any, loc: KeyPath) -> str:
    if any(part in _SECRET_PARENTS for part in loc):
        return _json_kind(value) + " (value not shown)"
    if isinstance(value, (dict, list)):
        return _json_kind(value)
    return _shown(value)


def _shown(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, Path) else json.dumps(str(value))
    return text if len(text) <= 80 else text[:77] + "...\""


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    kinds = {dict: "an object", list: "a list", str: "text", type(None): "null"}
    return kinds.get(type(value), type(value).__name__)


# ----------------------------------------------------------------------------- saving


def save_global_settings(changes: Mapping[str, Any], env: Mapping[str, str] | None = None) -> Path:
    """Deep-merge `changes` into the global file (a None value removes a key); validate; write atomically."""
    env = os.environ if env is None else env
    path = paths.global_settings_path(env)
    layers = [
        (f"the global settings file {path}", _read_settings_file(path, "global")),
        (f"the changes being saved to {path}", changes),
    ]
    merged, provenance = _merge_layers(layers, none_removes=True)
    _validate(merged, provenance, {})
    _write_atomically(path, json.dumps(merged, indent=2, ensure_ascii=False) + "\n")
    return path


def _write_atomically(path: Path, text: str) -> None:
    """Write to a temporary file in the same folder, flush it to disk, then rename it over the target."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp_name = tempfile.mkstemp(prefix=".settings-", suffix=".json.tmp", dir=path.parent)
    except OSError as exc:
        raise SettingsError(f"Cannot create the settings folder {path.parent} ({exc.strerror}).") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp_name, path)
    except OSError as exc:
        Path(temp_name).unlink(missing_ok=True)
        raise SettingsError(f"Cannot write the settings file {path} ({exc.strerror}); nothing was changed.") from None


__all__ = [
    "THINKING_LEVELS",
    "Decision",
    "ModelInfo",
    "ModelRef",
    "PathRules",
    "PermissionSettings",
    "ProviderSettings",
    "Rate",
    "RetrySettings",
    "SessionSettings",
    "Settings",
    "ShellRules",
    "ThinkingLevel",
    "TitleSettings",
    "TitleSource",
    "WireName",
    "load_settings",
    "parse_model_ref",
    "parse_title_source",
    "save_global_settings",
]
