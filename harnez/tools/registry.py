"""The tool registry: the built-in tools, their published JSON schemas, argument validation and execution."""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from pydantic import ValidationError

from harnez.errors import ToolError
from harnez.text import valid_text
from harnez.tools.base import Tool, ToolContext, ToolParams, ToolResult
from harnez.tools.edit import EditTool
from harnez.tools.read import ListTool, ReadTool
from harnez.tools.search import GlobTool, GrepTool
from harnez.tools.shell import ShellTool
from harnez.tools.write import WriteTool


def builtin_tools() -> list[Tool]:
    """A fresh instance of every built-in tool, in the order they are offered to the model."""
    return [ReadTool(), WriteTool(), EditTool(), ListTool(), GlobTool(), GrepTool(), ShellTool()]


def clean_schema(schema: Any) -> Any:
    """A JSON schema without pydantic's `title` noise (property names called `title` are kept)."""
    if isinstance(schema, list):
        return [clean_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    cleaned = {}
    for key, value in schema.items():
        if key == "title":
            continue
        if key in ("properties", "$defs"):
            cleaned[key] = {name: clean_schema(sub) for name, sub in value.items()}
        else:
            cleaned[key] = clean_schema(value)
    return cleaned


def parameters_schema(params: type[ToolParams]) -> dict[str, Any]:
    """The JSON schema published to the model for a tool's arguments (a fresh copy of the cached one)."""
    return copy.deepcopy(_schema_of(params))


@functools.cache
def _schema_of(params: type[ToolParams]) -> dict[str, Any]:
    """Built once per parameters class: pydantic takes ~3 ms per schema, on the event loop, every task."""
    return clean_schema(params.model_json_schema())


def warm_up() -> None:
    """Build the built-in tools' schemas in the calling thread (a worker, before a prompt is likely):
    a process's first task publishes them, and the first schemas also import pydantic's JSON-schema
    machinery (~20 ms on the event loop of the first prompt otherwise)."""
    for tool in builtin_tools():
        _schema_of(tool.parameters)


class ToolRegistry:
    """The tools a session offers, by name."""

    def __init__(self, tools: Iterable[Tool] | None = None) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in builtin_tools() if tools is None else tools:
            if tool.name in self._tools:
                raise ValueError(f"Two tools are named {tool.name!r}; tool names must be unique.")
            self._tools[tool.name] = tool

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    @property
    def operations(self) -> list[str]:
        """The harness-neutral operations the tools perform, each once, in the tools' order."""
        return list(dict.fromkeys(tool.operation for tool in self._tools.values()))

    def publish(self) -> list[dict[str, Any]]:
        """Name, description and JSON schema of every tool, as the wires send them to the model."""
        return [
            {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.input_schema() or parameters_schema(tool.parameters),
            }
            for tool in self._tools.values()
        ]

    def get(self, name: str) -> Tool:
        """The tool called `name`; raises `ToolError` naming the available tools otherwise."""
        try:
            return self._tools[name]
        except KeyError:
            raise ToolError(
                f"There is no tool named {name!r}. Available tools: {', '.join(self._tools)}."
            ) from None

    def validate(self, name: str, raw_args: dict[str, Any] | str | None) -> ToolParams | ToolResult:
        """Parsed arguments for a call, or an error result telling the model what to fix."""
        try:
            tool = self.get(name)
        except ToolError as exc:
            return ToolResult.error(exc.message)
        if isinstance(raw_args, str):
            try:
                raw_args = json.loads(raw_args) if raw_args.strip() else {}
            except json.JSONDecodeError as exc:
                return ToolResult.error(
                    f"The arguments for {name} are not valid JSON ({exc}); send a JSON object."
                )
        if raw_args is None:
            raw_args = {}
        if not isinstance(raw_args, dict):
            kind = type(raw_args).__name__
            return ToolResult.error(f"The arguments for {name} must be a JSON object, not {kind}.")
        try:
            return tool.parameters.model_validate(raw_args)
        except ValidationError as exc:
            return ToolResult.error(_validation_message(name, exc), errors=_plain_errors(exc))

    async def execute(self, tool: Tool, args: ToolParams, ctx: ToolContext) -> ToolResult:
        """Run a validated, permitted call; a `ToolError` or OS error becomes an error result.

        Cancellation propagates: a `ToolCancelled` (a `CancelledError`) carries partial output.
        A file name that is not UTF-8 reaches the result as U+FFFD, never as a lone surrogate.
        """
        try:
            result = await tool.run(args, ctx)
        except ToolError as exc:
            result = ToolResult.error(exc.message)
        except OSError as exc:
            where = f" ({exc.filename})" if exc.filename else ""
            result = ToolResult.error(f"{tool.name} failed: {exc.strerror or exc}{where}.")
        return replace(result, content=valid_text(result.content), details=valid_text(result.details))


def _validation_message(name: str, exc: ValidationError) -> str:
    problems = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        problems.append(f"- {where}: {error['msg']}")
    return f"Invalid arguments for {name}:\n" + "\n".join(problems) + "\nFix them and call the tool again."


def _plain_errors(exc: ValidationError) -> list[dict[str, Any]]:
    return [{"loc": list(error["loc"]), "msg": error["msg"], "type": error["type"]} for error in exc.errors()]
