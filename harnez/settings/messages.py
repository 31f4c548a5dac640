"""How a settings problem is worded: the file or variable it came from, the key path, what is wrong.

The leaf of the settings package: it knows pydantic's error shapes but none of the settings models,
so the model and the loading can both use it.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import ValidationError

KeyPath = tuple[str | int, ...]
Provenance = dict[KeyPath, list[str]]
"""For each key path set by some layer, the layers (origins) that contributed to it, in order."""

TITLE_SOURCE_FORMS = "`keywords/yake` or `model/<provider>/<model>[:<thinking>]`"
SECRET_PARENTS = frozenset({"api_key_env", "headers"})
"""Keys whose values are never echoed in a message (a key may have been pasted there)."""
_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def validation_message(exc: ValidationError, prov: Provenance, root: type[Any]) -> str:
    """The first problem pydantic found, as one sentence naming its origin and key path."""
    errors = exc.errors(include_url=False)
    first = errors[0]
    loc = tuple(part for part in first["loc"] if part != "[key]")
    is_key = "[key]" in first["loc"]
    where = f"key `{dotted(loc)}`" if loc else "the top level"
    message = f"Invalid setting in {origin_of(prov, loc)}, {where}: {_describe(first, loc, is_key, root)}."
    if len(errors) > 1:
        more = len(errors) - 1
        message += (
            f" ({more} more problem{'s' if more > 1 else ''} will be reported after this one is fixed.)"
        )
    return message


def title_source_warning(source: str, origin: str, problem: str) -> str:
    """An invalid `session.title.source` is ignored: what is wrong, and what titles do until it is fixed."""
    allowed = "" if TITLE_SOURCE_FORMS in problem else f" Allowed: {TITLE_SOURCE_FORMS}."
    outcome = (
        "Sessions keep a cleaned excerpt of their first prompt as title"
        if source.strip().startswith("model/")
        else "Titles use `keywords/yake`"
    )
    return (
        f"Ignored setting in {origin}, key `session.title.source`: {embedded(problem)}.{allowed} "
        f"{outcome} until this is fixed."
    )


def env_parse_message(variable: str, field_name: str) -> str:
    """pydantic-settings could not decode the JSON of a HARNEZ_* variable."""
    return (
        f"Invalid setting in the environment variable {variable}, key `{field_name}`: the value must be a JSON "
        f"object or list for this key, and it is not valid JSON. Fix the variable or unset it."
    )


def origin_of(prov: Provenance, loc: KeyPath) -> str:
    """The layer(s) a key path came from: the longest known prefix of it."""
    for end in range(len(loc), 0, -1):
        origins = prov.get(loc[:end])
        if origins:
            unique = list(dict.fromkeys(origins))
            if len(unique) == 1:
                return unique[0]
            return f"{unique[-1]} (merged with {' and '.join(unique[:-1])})"
    return "the settings"


def dotted(loc: KeyPath) -> str:
    """A key path as written in messages: `providers.local.wire`, `rates."a/b".input`, `x[0]`."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            shown_part = part if _PLAIN_KEY.match(part) else json.dumps(part)
            text += f".{shown_part}" if text else shown_part
    return text


def embedded(message: str) -> str:
    """A standalone sentence made fit to follow a colon: lower-case start, no final full stop."""
    message = message.rstrip(".")
    return message[:1].lower() + message[1:] if message[1:2].islower() else message


def shown(value: Any) -> str:
    """A value as JSON, cut at 80 characters."""
    text = json.dumps(value) if not isinstance(value, Path) else json.dumps(str(value))
    return text if len(text) <= 80 else text[:77] + '..."'


def json_kind(value: Any) -> str:
    """What kind of JSON value this is, in words: `an object`, `a list`, `text`, `true/false`."""
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    kinds = {dict: "an object", list: "a list", str: "text", type(None): "null"}
    return kinds.get(type(value), type(value).__name__)


def _describe(error: Mapping[str, Any], loc: KeyPath, is_key: bool, root: type[Any]) -> str:
    kind, ctx = error["type"], error.get("ctx") or {}
    got = _got(error.get("input"), loc)
    if kind == "extra_forbidden":
        return _unknown_key(loc, root)
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


def _unknown_key(loc: KeyPath, root: type[Any]) -> str:
    key = str(loc[-1])
    allowed = _allowed_keys(root, loc[:-1])
    if not allowed:
        return f"`{key}` is not a known setting here"
    close = difflib.get_close_matches(key, allowed, n=1)
    hint = f" (did you mean `{close[0]}`?)" if close else ""
    return f"`{key}` is not a known setting here{hint}; allowed keys are {', '.join(allowed)}"


def _allowed_keys(root: type[Any], parent: KeyPath) -> list[str]:
    """The field names of the model at a key path below `root`, walking through dict-valued settings."""
    node: Any = root
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
    if any(part in SECRET_PARENTS for part in loc):
        return json_kind(value) + " (value not shown)"
    if isinstance(value, (dict, list)):
        return json_kind(value)
    return shown(value)
