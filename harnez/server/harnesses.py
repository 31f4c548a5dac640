"""Configured harnesses of `harnez serve`: the default one from settings, and those clients create."""

from __future__ import annotations

import base64
import binascii
import json
import posixpath
import re
import time
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from harnez.errors import HarnezError, ModelConfigError, SettingsError
from harnez.settings import Settings, parse_model_ref
from harnez.store.uhp import DEFAULT_OWNER, HarnessRow, SkillFileRow, UhpTables
from harnez.wires.catalogue import endpoint_for

BASES = {"harnez": "Harnez"}
"""The harness runtimes this server runs (UHP's `base`), with their display names."""
TOOL_NAMES = ("read", "write", "edit", "list", "glob", "grep", "shell")
"""The base's own tool catalogue: names `disabledTools` can block."""
SKILL_BYTES_LIMIT = 8 * 1024 * 1024
"""The most skill content one harness may carry."""
_SKILL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_SECRET_HEADER = re.compile(r"authorization|cookie|token|secret|key|password", re.IGNORECASE)
_ENV_REF = re.compile(r"^env:[A-Za-z_][A-Za-z0-9_]*$")
_URI_CHARACTERS = re.compile(r"^[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+$")
"""The characters RFC 3986 allows in a URI (the schema's `format: uri`); others must be percent-encoded."""


class Refusal(HarnezError):
    """A request the protocol says to refuse, with its stable UHP error code and the field at fault."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        param: str | None = None,
        detail: dict[str, Any] | None = None,
        retry_after: int | None = None,
    ) -> None:
        super().__init__(message)
        self.code, self.param, self.detail = code, param, detail
        self.retry_after = retry_after
        """Seconds after which a retry may succeed (the answer's `Retry-After`), when the code says so."""


@dataclass(frozen=True, slots=True)
class SkillFile:
    """One file of a skill folder; `binary` when the client sent it as `content_b64`."""

    path: str
    content: bytes
    binary: bool = False


@dataclass(frozen=True, slots=True)
class Skill:
    """A skill folder (it always holds a SKILL.md)."""

    name: str
    enabled: bool
    files: tuple[SkillFile, ...]


@dataclass(frozen=True, slots=True)
class Harness:
    """A configured harness: a base plus its default model, prompt, tools, skills, MCP servers, budgets."""

    id: str
    name: str
    base: str
    created_at: int
    """Unix milliseconds."""
    default_model: str | None = None
    system_prompt: str = ""
    mcp_servers: tuple[dict[str, Any], ...] = ()
    skills: tuple[Skill, ...] = ()
    disabled_tools: tuple[str, ...] = ()
    max_step: int | None = None
    timeout_seconds: int | None = None
    builtin: bool = False
    workspace: str | None = None
    """A fixed workspace every session of this harness works in (server configuration only)."""
    extra: dict[str, Any] = field(default_factory=dict)
    repairs: tuple[str, ...] = ()
    """What was repaired in the stored configuration as it was read (`stored_mcp_servers`): said in
    the harness's `harnez_warnings` until the client sends the fields again."""

    def task_options(
        self, max_step: int | None, timeout: int | None, instructions: str | None
    ) -> dict[str, Any]:
        """The Harnez task options of a task run by this harness (a request's budgets win)."""
        guidance = [text for text in (self.system_prompt, instructions) if text]
        unknown = [name for name in self.disabled_tools if not _blockable(name)]
        if unknown:
            guidance.append(
                "Do not use these tools, which the operator disabled: " + ", ".join(unknown) + "."
            )
        return {
            "max_steps": max_step or self.max_step,
            "timeout": timeout or self.timeout_seconds,
            "instructions": "\n\n".join(guidance) or None,
            "disabled_tools": [name for name in self.disabled_tools if _blockable(name)],
            # only the enabled entries reach the task: a disabled one is never contacted
            "mcp_servers": [dict(entry) for entry in self.mcp_servers if entry.get("enabled", True)],
        }


def _blockable(tool: str) -> bool:
    """Whether a `disabledTools` name is a hard block: a Harnez tool, or an MCP server's `mcp__…` tool."""
    return tool in TOOL_NAMES or tool.startswith("mcp__")


class HarnessCatalog:
    """Harnesses stored in the database, and which models they can run right now.

    A harness a client created belongs to its principal (`owner`): for any other it does not exist
    (`harness_not_found`, as for an unknown id). The built-in harness is everyone's.
    """

    def __init__(self, tables: UhpTables, settings: Settings, default_workspace: str | None = None) -> None:
        self._tables = tables
        self.settings = settings
        self._default_workspace = default_workspace

    async def ensure_default(self) -> Harness:
        """The default harness: created once, its model and workspace following the settings."""
        row = await self._tables.builtin_harness()
        harness_id = row.id if row else "chrn_" + uuid.uuid4().hex
        created = row.created_at if row else int(time.time() * 1000)
        config = {"default_model": self.settings.model, "workspace": self._default_workspace}
        await self._tables.save_harness(HarnessRow(harness_id, "Harnez", "harnez", config, True, created), [])
        return await self.get(harness_id)

    async def every(self, owner: str = DEFAULT_OWNER) -> list[Harness]:
        """Every harness `owner` may use: the default one and its own."""
        return [await assemble(self._tables, row) for row in await self._tables.harnesses(owner)]

    async def get(
        self, harness_id: str | None, param: str | None = None, owner: str = DEFAULT_OWNER
    ) -> Harness:
        """A harness of `owner`'s by id (the default one for None); Refusal `harness_not_found` (naming
        the request field `param` it came from, if any) otherwise."""
        row = (
            await self._row(harness_id, owner)
            if harness_id is not None
            else await self._tables.builtin_harness()
        )
        if row is None:
            raise Refusal("harness_not_found", f"No harness with id {harness_id!r}.", param=param)
        return await assemble(self._tables, row)

    async def _row(self, harness_id: str, owner: str) -> HarnessRow | None:
        """The stored harness if `owner` may see it (the built-in one, or its own), else None."""
        row = await self._tables.harness(harness_id)
        return row if row is not None and (row.builtin or row.owner == owner) else None

    async def create(self, body: dict[str, Any], owner: str = DEFAULT_OWNER) -> Harness:
        base = body.get("base")
        if base not in BASES:
            raise Refusal(
                "unsupported_base",
                (f"The base {base!r} is not supported here" if base is not None else "base is required")
                + f"; use one of {', '.join(BASES)}.",
                param="base",
                detail={"supported": list(BASES)},
            )
        config, skills = parse_config(body, {})
        name = _optional_text(body.get("name"), "name") or "Harness"
        created = int(time.time() * 1000)
        row = HarnessRow("chrn_" + uuid.uuid4().hex, name, base, config, False, created, owner)
        await self._tables.save_harness(row, skills)
        return await self.get(row.id, owner=owner)

    async def update(self, harness_id: str, body: dict[str, Any], owner: str = DEFAULT_OWNER) -> Harness:
        """Replace the fields given; keys left out keep their values (so a rename never empties skills)."""
        row = await self._row(harness_id, owner)
        if row is None:
            raise Refusal("harness_not_found", f"No harness with id {harness_id!r}.")
        if row.builtin:
            raise Refusal(
                "insufficient_scope",
                "The default harness follows the server's settings; change "
                "settings.json, or create a harness of your own.",
            )
        if body.get("base") not in (None, row.base):
            raise Refusal(
                "invalid_input",
                f"A harness's base cannot change (it is {row.base!r}); create another "
                "harness for another base.",
                param="base",
            )
        config, skills = parse_config(body, row.config, await self._tables.skill_files(harness_id))
        name = _text(body["name"], "name") if "name" in body else row.name
        await self._tables.save_harness(
            HarnessRow(row.id, name, row.base, config, False, row.created_at, row.owner), skills
        )
        return await self.get(row.id, owner=owner)

    async def delete(self, harness_id: str, owner: str = DEFAULT_OWNER) -> None:
        row = await self._row(harness_id, owner)
        if row is None:
            raise Refusal("harness_not_found", f"No harness with id {harness_id!r}.")
        if row.builtin:
            raise Refusal(
                "insufficient_scope",
                "The default harness cannot be deleted; it follows the server's settings.",
            )
        await self._tables.delete_harness(harness_id)

    async def skill_files(self, harness_id: str, skill: str, owner: str = DEFAULT_OWNER) -> list[SkillFile]:
        harness = await self.get(harness_id, owner=owner)
        for bundle in harness.skills:
            if bundle.name == skill:
                return list(bundle.files)
        raise Refusal("harnez_skill_not_found", f"The harness has no skill named {skill!r}.")

    def default_model(self, harness: Harness) -> str | None:
        """The model a task of this harness runs when it names none: the harness's, else the server's."""
        return harness.default_model or self.settings.model

    def availability(self, model: str | None) -> str | None:
        """None when `model` can run now (its provider is configured and its key variable set), else why not."""
        if not model:
            return "no model is named and the harness has no default model"
        try:
            endpoint_for(self.settings, parse_model_ref(model).provider)
        except (SettingsError, ModelConfigError) as exc:
            return exc.message
        return None


async def assemble(tables: UhpTables, row: HarnessRow) -> Harness:
    """A stored harness with its skill files."""
    config = row.config
    files = await tables.skill_files(row.id)
    repairs: list[str] = []
    skills = tuple(
        Skill(
            meta["name"],
            _stored_flag(meta, f"the skill `{meta['name']}`", repairs),
            tuple(SkillFile(f.path, f.content, f.binary) for f in files if f.skill == meta["name"]),
        )
        for meta in config.get("skills", ())
    )
    mcp_servers = stored_mcp_servers(config.get("mcp_servers", ()), repairs)
    return Harness(
        row.id,
        row.name,
        row.base,
        row.created_at,
        config.get("default_model"),
        config.get("system_prompt") or "",
        mcp_servers,
        skills,
        tuple(config.get("disabled_tools", ())),
        config.get("max_step"),
        config.get("timeout_seconds"),
        row.builtin,
        config.get("workspace"),
        repairs=tuple(repairs),
    )


def stored_mcp_servers(entries: Any, repairs: list[str]) -> tuple[dict[str, Any], ...]:
    """A stored harness's MCP servers as they may be served and run, whatever version stored them.

    Older versions stored any url starting with `http://` as sent; a row may also have been edited
    by hand. An `enabled` that is not a boolean switches the server off: `"false"` read as on would
    connect the server the client meant to switch off. (Those versions stored `enabled` as a
    boolean, `"false"` as true: nothing in such a row tells it, docs/uhp.md.) A url that is no URI is
    percent-encoded where that makes it one (a space or `é` in its path, as it went on the wire);
    one that cannot be (no host, a space in the host) is left out, since a client that checks
    `format: uri` cannot read it and it never connected. Each repair is said in `repairs`."""
    kept: list[dict[str, Any]] = []
    for index, entry in enumerate(entries if isinstance(entries, list) else ()):
        where = f"mcpServers[{index}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("url"), str):
            repairs.append(f"{where} is no MCP server object: left out; send mcp_servers again.")
            continue
        name = entry.get("name", "mcp")
        url = entry["url"] if _is_http_url(entry["url"]) else _encoded_url(entry["url"])
        if url is None:
            repairs.append(
                f"MCP server `{name}`: its stored url is no whole http(s) URL with a host: left out; "
                "send mcp_servers again with its URL."
            )
            continue
        if url != entry["url"]:
            repairs.append(
                f"MCP server `{name}`: its stored url held characters a URI may not: percent-encoded."
            )
        fixed = {**entry, "url": url, "enabled": _stored_flag(entry, f"MCP server `{name}`", repairs)}
        kept.append(fixed)
    return tuple(kept)


def _stored_flag(entry: dict[str, Any], what: str, repairs: list[str]) -> bool:
    """A stored `enabled`: true when absent or null; anything but a boolean is off, and said."""
    value = entry.get("enabled")
    if value is None or isinstance(value, bool):
        return value is not False
    repairs.append(
        f"{what}: its stored `enabled` was {json.dumps(value)}, not true or false: switched off; "
        "send it again with enabled true to switch it on."
    )
    return False


def _encoded_url(url: str) -> str | None:
    """`url` with its path, query and fragment percent-encoded where they hold characters a URI may
    not, if that makes it a whole http(s) URL; None when its scheme or host is at fault."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    safe = "/?#[]@!$&'()*+,;=%:~"
    encoded = urlunsplit(
        (
            parts.scheme,
            parts.netloc,
            quote(parts.path, safe=safe),
            quote(parts.query, safe=safe),
            quote(parts.fragment, safe=safe),
        )
    )
    return encoded if _is_http_url(encoded) else None


async def session_harness(tables: UhpTables, session_num: int) -> Harness | None:
    """The harness an HTTP session was made with, whose options every task of the session runs with
    whichever front end starts it (the TUI, `harnez run --resume`); None for a session made elsewhere
    or whose harness was deleted."""
    found = await tables.session_harness(session_num)
    row = await tables.harness(found[0]) if found is not None else None
    return None if row is None else await assemble(tables, row)


def parse_config(
    body: dict[str, Any], current: dict[str, Any], stored: list[SkillFileRow] | None = None
) -> tuple[dict[str, Any], list[SkillFileRow] | None]:
    """The stored configuration from a create/update body (snake_case), checked; absent keys keep `current`."""
    config = {key: value for key, value in current.items() if key != "workspace"}
    if "default_model" in body:
        config["default_model"] = _model(body["default_model"])
    if "system_prompt" in body:
        config["system_prompt"] = _optional_text(body["system_prompt"], "system_prompt")
    for key in ("max_step", "timeout_seconds"):
        if key in body:
            config[key] = _budget(body[key], key)
    # null counts as an empty list; any other value that is no list is refused, never read as empty
    if "disabled_tools" in body:
        tools = _list(body["disabled_tools"], "disabled_tools", "tool names")
        if not all(isinstance(t, str) and t for t in tools):
            raise Refusal(
                "invalid_input", "disabled_tools must be a list of tool names.", param="disabled_tools"
            )
        config["disabled_tools"] = tools
    if "mcp_servers" in body:
        entries = _list(body["mcp_servers"], "mcp_servers", "MCP server objects")
        config["mcp_servers"] = [_mcp_server(entry, i) for i, entry in enumerate(entries)]
    skills = None
    if "skills" in body:
        metas, skills = parse_skills(_list(body["skills"], "skills", "skill objects"), stored or [])
        config["skills"] = metas
    return config, skills


def _list(value: Any, param: str, of: str) -> list[Any]:
    """A list field of a harness body; null is an empty list."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise Refusal("invalid_input", f"{param} must be a list of {of}, or null for none.", param=param)
    return value


def parse_skills(raw: Any, stored: list[SkillFileRow]) -> tuple[list[dict[str, Any]], list[SkillFileRow]]:
    """Skill folders from a request: each with a SKILL.md, paths inside the folder, content or content_b64."""
    if not isinstance(raw, list):
        raise Refusal("invalid_input", "skills must be a list of skill objects.", param="skills")
    metas, files, total = [], [], 0
    for index, skill in enumerate(raw):
        where = f"skills[{index}]"
        if (
            not isinstance(skill, dict)
            or not isinstance(skill.get("name"), str)
            or not _SKILL_NAME.match(skill["name"])
        ):
            raise Refusal(
                "invalid_input",
                "Each skill needs a name of letters, digits, `_`, `.` and `-`.",
                param=f"{where}.name",
            )
        name = skill["name"]
        bundle = _skill_bundle(skill, name, where, stored)
        if not any(f.path == "SKILL.md" for f in bundle):
            raise Refusal(
                "invalid_input",
                f"The skill {name!r} has no SKILL.md at the top of its folder; every skill folder needs one.",
                param=f"{where}.files",
            )
        total += sum(len(f.content) for f in bundle)
        metas.append({"name": name, "enabled": _flag(skill, f"{where}.enabled")})
        files += bundle
    if total > SKILL_BYTES_LIMIT:
        raise Refusal(
            "invalid_input", f"Skills may hold at most {SKILL_BYTES_LIMIT} bytes per harness.", param="skills"
        )
    return metas, files


def _skill_bundle(
    skill: dict[str, Any], name: str, where: str, stored: list[SkillFileRow]
) -> list[SkillFileRow]:
    if "files" not in skill and "content" not in skill:
        kept = [f for f in stored if f.skill == name]
        if _optional_text(skill.get("blob"), f"{where}.blob") and kept:
            return kept  # a bundle handle passed back unchanged: keep the stored files
        raise Refusal("invalid_input", f"The skill {name!r} has neither `files` nor `content`.", param=where)
    if "files" not in skill:
        return [SkillFileRow(name, "SKILL.md", _text(skill["content"], f"{where}.content").encode(), False)]
    if not isinstance(skill["files"], list):
        raise Refusal(
            "invalid_input", "files must be a list of {path, content | content_b64}.", param=f"{where}.files"
        )
    bundle: dict[str, SkillFileRow] = {}
    for i, entry in enumerate(skill["files"]):
        if not isinstance(entry, dict):
            raise Refusal(
                "invalid_input",
                "Each skill file must be an object {path, content | content_b64}.",
                param=f"{where}.files[{i}]",
            )
        path = _skill_path(entry.get("path"), f"{where}.files[{i}].path")
        bundle[path] = SkillFileRow(name, path, *_skill_content(entry, f"{where}.files[{i}]"))
    return list(bundle.values())


def _skill_path(raw: Any, param: str) -> str:
    """A path relative to the skill folder, normalised; anything that could leave the folder is refused."""
    if not isinstance(raw, str) or not raw or "\\" in raw or "\x00" in raw or raw.startswith("/"):
        raise Refusal(
            "invalid_input", "A skill file path must be relative to the skill's folder.", param=param
        )
    clean = posixpath.normpath(raw)
    if (
        clean in (".", "..")
        or clean.startswith("../")
        or any(part in ("", "..") for part in clean.split("/"))
    ):
        raise Refusal("invalid_input", f"The skill file path {raw!r} leaves the skill's folder.", param=param)
    return clean


def _skill_content(entry: dict[str, Any], param: str) -> tuple[bytes, bool]:
    if entry.get("content_b64") is not None:
        encoded = _text(entry["content_b64"], f"{param}.content_b64")
        try:
            return base64.b64decode(encoded, validate=True), True
        except (binascii.Error, ValueError):
            raise Refusal(
                "invalid_input", "content_b64 is not valid base64.", param=f"{param}.content_b64"
            ) from None
    return _text(entry.get("content", ""), f"{param}.content").encode(), False


def _mcp_server(entry: Any, index: int) -> dict[str, Any]:
    """An MCP server entry; credentials are refused (name them by reference: `auth: "env:NAME"`)."""
    where = f"mcp_servers[{index}]"
    if (
        not isinstance(entry, dict)
        or not isinstance(entry.get("name"), str)
        or not isinstance(entry.get("url"), str)
    ):
        raise Refusal("invalid_input", "Each MCP server needs a name and a url.", param=where)
    if not _is_http_url(entry["url"]):
        raise Refusal(
            "invalid_input",
            "An MCP server url must be a whole http:// or https:// URL with a host, spaces and other "
            "characters outside URLs percent-encoded (https://mcp.example.com/mcp).",
            param=f"{where}.url",
        )
    if entry.get("transport", "http") not in ("http", "sse"):
        raise Refusal("invalid_input", "transport must be http or sse.", param=f"{where}.transport")
    enabled = _flag(entry, f"{where}.enabled")
    auth, headers = _mcp_credentials(entry, where)
    clean = {
        "name": re.sub(r"[^A-Za-z0-9_-]", "-", entry["name"]) or "mcp",
        "url": entry["url"],
        "transport": entry.get("transport", "http"),
        "enabled": enabled,
    }
    if headers:
        clean["headers"] = dict(headers)
    if auth:
        clean["auth"] = auth
    return clean


def _mcp_credentials(entry: dict[str, Any], where: str) -> tuple[Any, dict[str, Any]]:
    """An MCP entry's `auth` (a reference, never a value) and its headers (none carrying credentials)."""
    auth = entry.get("auth")
    if auth is not None and not (isinstance(auth, str) and _ENV_REF.match(auth)):
        raise Refusal(
            "invalid_input",
            "Harnez stores no credentials: give `auth` as a reference to an "
            "environment variable of the server, `env:NAME`.",
            param=f"{where}.auth",
        )
    headers = entry.get("headers")
    if headers is None:
        return auth, {}
    if not isinstance(headers, dict):
        raise Refusal(
            "invalid_input",
            'headers must be an object of header names and text values ({"X-Team": "research"}).',
            param=f"{where}.headers",
        )
    if any(_SECRET_HEADER.search(name) for name in headers):
        raise Refusal(
            "invalid_input",
            'MCP headers may not carry credentials; use `auth: "env:NAME"`.',
            param=f"{where}.headers",
        )
    for name, value in headers.items():
        if not isinstance(value, str):  # it was sent as str(value): 5 as "5", true as "True"
            raise Refusal(
                "invalid_input",
                f'The value of the MCP header {name!r} must be text, as sent on the wire ("5", not 5).',
                param=f"{where}.headers.{name}",
            )
    return auth, headers


def _model(value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise Refusal(
            "invalid_input",
            "default_model must be text: a model reference `<provider>/<model>[:<thinking>]` "
            "(for example `openai/gpt-5:high`), or null for the server's model.",
            param="default_model",
        )
    if not value:
        return None
    try:
        return str(parse_model_ref(value))
    except SettingsError as exc:
        raise Refusal("invalid_input", exc.message, param="default_model") from None


def _budget(value: Any, param: str) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise Refusal("invalid_input", f"{param} must be a whole number of at least 1, or null.", param=param)
    return value


def _is_http_url(url: str) -> bool:
    """An absolute http(s) URL with a host, every character one a URI may hold: what a client that
    checks `McpServer.url`'s `format: uri` accepts when the harness is read back."""
    try:
        parts = urlsplit(url)
        host, _ = parts.hostname, parts.port
    except ValueError:  # an unclosed `[` of an IPv6 address, a port that is no number
        return False
    return parts.scheme in ("http", "https") and bool(host) and _URI_CHARACTERS.match(url) is not None


def _flag(entry: dict[str, Any], param: str) -> bool:
    """An entry's `enabled` (true when absent or null). Anything but a boolean is refused: `"false"`
    read as truthy would connect the very MCP server the client meant to switch off."""
    value = entry.get("enabled")
    if value is None:
        return True
    if not isinstance(value, bool):
        raise Refusal("invalid_input", f"{param} must be true or false.", param=param)
    return value


def _optional_text(value: Any, param: str) -> str:
    """A text field where null means none (""); anything but text is refused, never read as empty."""
    return "" if value is None else _text(value, param)


def _text(value: Any, param: str) -> str:
    if not isinstance(value, str):
        raise Refusal("invalid_input", f"{param} must be text.", param=param)
    return value
