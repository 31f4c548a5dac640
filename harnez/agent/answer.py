"""Structured answers: a JSON Schema published as the `answer` tool, and the answers that match it.

A task given `output_schema` offers the model one more tool, `answer`, whose input is the schema (an
object schema as it is; any other schema wrapped as the property `answer` of an object, since the
wires publish tool inputs as objects). An answer is checked with `jsonschema` against the schema's
own draft (2020-12 when it names none); a mismatch goes back to the model with every problem found.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import ConfigDict

from harnez.errors import HarnezError
from harnez.tools import Tool, ToolContext, ToolParams, ToolResult, WorkspacePath

if TYPE_CHECKING:
    from pathlib import Path

    from jsonschema.protocols import Validator

ANSWER_TOOL = "answer"
WRAPPED = "answer"
"""The property a schema that is not an object schema is published under."""
HOISTED = ("$schema", "$id", "$defs", "definitions")
"""Keys that stay at the root when a schema is wrapped, so `$ref`s into it still resolve."""
ANSWER_INSTRUCTIONS = (
    "# The answer\n"
    f"This task ends with a structured answer: when the work is done, call the `{ANSWER_TOOL}` tool once "
    "with the answer as JSON matching its input schema. Text you write is not the answer."
)
MAX_PROBLEMS = 10
MAX_PROBLEM_CHARS = 300


class OutputSchema:
    """A checked JSON Schema for a task's answer, and the object schema the answer tool publishes."""

    def __init__(self, schema: dict[str, Any], name: str = "output_schema") -> None:
        self.schema = schema
        self.wrapped = schema.get("type") != "object"
        self.published = _wrap(schema) if self.wrapped else schema
        self._validator = _validator(schema, self.published, name)

    @classmethod
    def parse(cls, schema: Any, name: str = "output_schema") -> OutputSchema:
        """The schema checked against its draft's metaschema; a HarnezError, naming it as `name`, says
        what is wrong."""
        if not isinstance(schema, dict):
            raise HarnezError(f"{name} must be a JSON object (a JSON Schema), not {_json_kind(schema)}.")
        return cls(schema, name)

    def check(self, arguments: dict[str, Any]) -> tuple[Any, list[str]]:
        """(the answer, the problems with it): the answer is good when there are no problems."""
        errors = sorted(self._validator.iter_errors(arguments), key=lambda error: error.json_path)
        problems = [_problem(error.json_path, error.message, self.wrapped) for error in errors]
        value = arguments.get(WRAPPED) if self.wrapped else arguments
        return value, problems


def _wrap(schema: dict[str, Any]) -> dict[str, Any]:
    inner = {key: value for key, value in schema.items() if key not in HOISTED}
    root = {key: schema[key] for key in HOISTED if key in schema}
    return {
        **root,
        "type": "object",
        "properties": {WRAPPED: inner},
        "required": [WRAPPED],
        "additionalProperties": False,
    }


def _json_kind(value: Any) -> str:
    kinds = {list: "a list", str: "text", bool: "true or false", type(None): "null"}
    return kinds.get(type(value), "a number")


def _validator(given: dict[str, Any], published: dict[str, Any], name: str) -> Validator:
    """A validator of the published schema in the given schema's own draft, checking the formats it
    can; the given schema is checked first (so a problem's path is the one in the person's file)."""
    from jsonschema import validators  # imported by tasks that ask for an answer only
    from jsonschema.exceptions import SchemaError

    cls = validators.validator_for(given)
    try:
        cls.check_schema(given)
    except SchemaError as exc:
        where = "" if exc.json_path == "$" else f" (at {exc.json_path})"
        raise HarnezError(f"{name} is not a valid JSON Schema: {_short(exc.message)}{where}.") from None
    return cls(published, format_checker=cls.FORMAT_CHECKER)


def _problem(path: str, message: str, wrapped: bool) -> str:
    if wrapped and path.startswith(f"$.{WRAPPED}"):
        path = "$" + path[len(WRAPPED) + 2 :]
    return f"{path}: {_short(message)}"


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_PROBLEM_CHARS else text[: MAX_PROBLEM_CHARS - 1] + "…"


class AnswerParams(ToolParams):
    """Any JSON object: the answer tool checks its arguments against the task's schema itself."""

    model_config = ConfigDict(extra="allow", frozen=True)


class AnswerTool(Tool):
    """The tool the model gives its structured answer through; valid answers wait in `accepted`."""

    name: ClassVar[str] = ANSWER_TOOL
    description: ClassVar[str] = (
        "Give the task's final answer as JSON matching this tool's input schema. Call it once, when the "
        "work is done; an answer that does not match comes back with what to fix."
    )
    parameters: ClassVar[type[ToolParams]] = AnswerParams
    kind = "read"

    def __init__(self, schema: OutputSchema) -> None:
        self.schema = schema
        self.accepted: list[tuple[str, Any]] = []
        """(call id, answer) of each valid answer not yet taken by the loop."""

    def input_schema(self) -> dict[str, Any]:
        return self.schema.published

    def targets(self, args: ToolParams, workspace: Path) -> list[WorkspacePath]:
        return []  # an answer touches no file, whatever its fields are called

    async def run(self, args: ToolParams, ctx: ToolContext) -> ToolResult:
        value, problems = self.schema.check(args.model_dump())
        if problems:
            shown = "\n".join(f"- {problem}" for problem in problems[:MAX_PROBLEMS])
            more = len(problems) - MAX_PROBLEMS
            shown += f"\n- … and {more} more" if more > 0 else ""
            return ToolResult.error(
                f"The answer does not match the schema:\n{shown}\nFix it and call {ANSWER_TOOL} again.",
                problems=problems,
            )
        self.accepted.append((ctx.call_id or "", value))
        return ToolResult("Answer recorded.", {"answer": value})
