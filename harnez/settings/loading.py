"""Loading and saving settings: the two files, merged per key with their provenance, HARNEZ_* variables.

`load_settings` reads the global file, then the project file, deep-merges them (objects per key,
lists and scalars replaced), lays the HARNEZ_* variables of the given environment over the result
and validates it into `Settings`. Every key path remembers which file or variable set it, so a
problem names its origin.
"""

from __future__ import annotations

import copy
import json
import os
import re
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from pydantic import ValidationError

from harnez import paths
from harnez.errors import SettingsError
from harnez.redaction import COMMON_KEY_VARIABLES, SECRETS
from harnez.settings.messages import (
    KeyPath,
    Provenance,
    dotted,
    env_parse_message,
    json_kind,
    origin_of,
    validation_message,
)
from harnez.settings.model import (
    ENV_NESTED_DELIMITER,
    ENV_PREFIX,
    HookSettings,
    Settings,
    file_stamp,
    title_source_problem,
)

if TYPE_CHECKING:
    import pydantic_settings

MAX_NESTING = 16
"""Objects and lists nested deeper than this are refused before parsing (the deepest setting has 4)."""
_NESTING_TOKEN = re.compile(r'[][{}"\\]')


def load_settings(workspace: Path, env: Mapping[str, str] | None = None) -> Settings:
    """Read the global then the project file, merge them per key, apply HARNEZ_* variables, validate."""
    env = dict(os.environ if env is None else env)
    global_path, project_path = paths.global_settings_path(env), paths.project_settings_path(workspace)
    # Taken before the files are parsed: a write that lands between the two shows as a change next time.
    files = ((global_path, file_stamp(global_path)), (project_path, file_stamp(project_path)))
    project = _read_settings_file(project_path, "project")
    project_hooks = _project_hooks(f"the project settings file {project_path}", project.pop("hooks", None))
    layers = [
        (f"the global settings file {global_path}", _read_settings_file(global_path, "global")),
        (f"the project settings file {project_path}", project),
    ]
    merged, provenance = _merge_layers(layers)
    _record_env_provenance(provenance, env)
    _check_env_nesting(env)
    settings = _validate(merged, provenance, env)
    settings = _resolve_database_path(settings, provenance, workspace)
    SECRETS.learn_all([*COMMON_KEY_VARIABLES, *settings.credential_variables], env)
    source_origin = origin_of(provenance, ("session", "title", "source"))
    warning = title_source_problem(settings.session.title.source, source_origin)
    return settings.with_load_details(
        () if warning is None else (warning,), Path(workspace).resolve(), project_hooks, files
    )


def reload_settings(settings: Settings, workspace: Path) -> Settings:
    """`load_settings` again for settings whose files changed while Harnez runs. A file that held
    settings and is empty now is refused (SettingsError) rather than read as "no settings": in the
    instant an editor empties a file before writing it, its defaults could loosen a permission the
    file denies. Deleting the file still means "no settings here"."""
    emptied = settings.emptied_files()
    if emptied:
        raise SettingsError(
            f"The settings file {emptied[0]} was emptied while Harnez runs; write its settings back, "
            "or delete the file to use none."
        )
    return load_settings(workspace)


def _project_hooks(origin: str, raw: Any) -> HookSettings:
    """The project file's `hooks`, checked like any setting but kept apart from the merge: they join the
    person's own hooks (never replace them) and run only once trusted (docs/hooks.md)."""
    if raw is None:
        return HookSettings()
    checked, provenance = _merge_layers([(origin, {"hooks": raw})])
    return _validate(checked, provenance, {}).hooks


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


# ----------------------------------------------------------------------------- the files


def _read_settings_file(path: Path, which: str) -> dict[str, Any]:
    """The JSON object in a settings file; {} when the file is missing or blank."""
    label = f"The {which} settings file {path}"
    try:
        # utf-8-sig: a byte order mark (Notepad, PowerShell's `Set-Content -Encoding UTF8`) is skipped, as
        # JSON allows; the file was refused as "not valid JSON … fix the syntax" for an invisible mark.
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise SettingsError(
            f"{label} cannot be read ({reason}); fix its permissions or encoding (UTF-8)."
        ) from None
    if not text.strip():
        return {}
    deep = _too_deep(text)
    if deep is not None:
        raise SettingsError(
            f"{label} nests objects and lists more than {MAX_NESTING} levels deep ({deep}); "
            "no setting needs more than 4. Check its brackets."
        )
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SettingsError(
            f"{label} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}. Fix the syntax "
            "there (keys and text in double quotes, no trailing commas, no comments)."
        ) from None
    if not isinstance(data, dict):
        raise SettingsError(
            f"{label} must hold a JSON object (`{{ ... }}`) at the top level, but holds {json_kind(data)}."
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
        raise SettingsError(
            f"Cannot write the settings file {path} ({exc.strerror}); nothing was changed."
        ) from None


# ----------------------------------------------------------------------------- merging, with provenance


def _merge_layers(
    layers: Sequence[tuple[str, Mapping[str, Any]]], *, none_removes: bool = False
) -> tuple[dict[str, Any], Provenance]:
    """Deep-merge layers in order (later wins): objects merge per key, lists and scalars replace."""
    merged: dict[str, Any] = {}
    provenance: Provenance = {}
    for origin, layer in layers:
        _merge_into(merged, layer, origin, provenance, (), none_removes)
    return merged, provenance


def _merge_into(
    base: dict[str, Any],
    layer: Mapping[str, Any],
    origin: str,
    prov: Provenance,
    prefix: KeyPath,
    none_removes: bool,
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


# ----------------------------------------------------------------------------- HARNEZ_* variables


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


def _check_env_nesting(env: Mapping[str, str]) -> None:
    """A JSON-valued HARNEZ_* variable nested too deeply is refused like a file."""
    for path, name in _env_override_paths(env).items():
        value = env[name]
        deep = _too_deep(value) if value.lstrip().startswith(("[", "{")) else None
        if deep is not None:
            raise SettingsError(
                f"Invalid setting in the environment variable {name}, key `{dotted(path)}`: its JSON nests "
                f"objects and lists more than {MAX_NESTING} levels deep ({deep}); no setting needs more "
                "than 4. Fix the variable or unset it."
            )


PLAIN_TEXT_SETTINGS = frozenset({"model", "theme", "database_path"})
"""Top-level settings of text (`str`, `str | None`, `Path | None`): pydantic-settings' environment
source passes a HARNEZ_<NAME> variable of theirs on as its text (no JSON decoding, no nesting)."""


def environment_values(env: Mapping[str, str]) -> dict[str, Any]:
    """The settings that the HARNEZ_* variables of `env` give, as pydantic-settings' environment source
    reads them; a variable it cannot decode (bad JSON) is a SettingsError.

    pydantic-settings (~30 ms of imports before a process's first answer) is imported only for
    variables that need its decoding: none names a setting (`_env_override_paths`: the source reads
    no other), or each is HARNEZ_<NAME> of a plain text setting, gives what the source would give
    without it (`tests/unit/test_settings_sources.py` compares the two).
    """
    found = _env_override_paths(env)
    if all(len(path) == 1 and path[0] in PLAIN_TEXT_SETTINGS for path in found):
        return {str(path[0]): env[name] for path, name in found.items()}
    return source_values(env)


def source_values(env: Mapping[str, str]) -> dict[str, Any]:
    """What pydantic-settings' environment source reads from `env`, given the prefix, `__` nesting,
    case-insensitivity and dropping of empty values that `Settings` had as a `BaseSettings`.

    The source reads os.environ when made; its `env_vars` mapping, which its public
    `get_field_value` and `explode_env_vars` consult, is then replaced by `env`, normalised as the
    source normalises os.environ (names folded to lower case, empty values dropped).
    """
    import pydantic_settings

    source = pydantic_settings.EnvSettingsSource(
        cast(type[pydantic_settings.BaseSettings], Settings),  # it reads the model's fields and config
        case_sensitive=False,
        env_prefix=ENV_PREFIX,
        env_nested_delimiter=ENV_NESTED_DELIMITER,
        env_ignore_empty=True,
    )
    source.env_vars = {
        (name if source.case_sensitive else name.lower()): value
        for name, value in env.items()
        if not (source.env_ignore_empty and value == "")
    }
    try:
        return source()
    except pydantic_settings.SettingsError as exc:
        raise SettingsError(_env_parse_message(exc, env)) from None


def _validate(merged: dict[str, Any], prov: Provenance, env: Mapping[str, str]) -> Settings:
    """The merged files with the HARNEZ_* variables of `env` over them, validated."""
    try:
        values, _ = _merge_layers(
            [("the settings files", merged), ("the environment", environment_values(env))]
        )
        return Settings.model_validate(values)
    except ValidationError as exc:
        raise SettingsError(validation_message(exc, prov, Settings)) from None


def _env_parse_message(exc: pydantic_settings.SettingsError, env: Mapping[str, str]) -> str:
    """pydantic-settings could not decode a JSON-valued HARNEZ_* variable."""
    field_name = str(exc).split('"')[1] if '"' in str(exc) else "?"
    names = [n for p, n in _env_override_paths(env).items() if p[0] == field_name] or [
        ENV_PREFIX + field_name.upper()
    ]
    return env_parse_message(names[0], field_name)


def _resolve_database_path(settings: Settings, prov: Provenance, workspace: Path) -> Settings:
    """A relative `database_path` from a file is relative to the workspace; from the environment, to the cwd."""
    path = settings.database_path
    if path is None or path.is_absolute():
        return settings
    from_env = origin_of(prov, ("database_path",)).startswith("the environment")
    return settings.model_copy(update={"database_path": (Path.cwd() if from_env else workspace) / path})
