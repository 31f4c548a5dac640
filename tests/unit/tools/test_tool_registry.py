"""The registry: published schemas, argument validation into actionable errors, path resolution."""

from __future__ import annotations

import json
from pathlib import Path

from harnez.tools import ToolRegistry, ToolResult, resolve_path
from harnez.tools.read import ReadParams


def test_publishes_every_builtin_tool_with_a_clean_schema(registry: ToolRegistry) -> None:
    published = {tool["name"]: tool for tool in registry.publish()}
    assert list(published) == ["read", "write", "edit", "list", "glob", "grep", "shell"]
    read = published["read"]["parameters"]
    assert read["required"] == ["path"]
    assert read["additionalProperties"] is False
    assert read["properties"]["offset"] == {
        "default": 1,
        "description": "First line to show (1-based).",
        "minimum": 1,
        "type": "integer",
    }
    assert "title" not in json.dumps(published)
    assert all(tool["description"] for tool in published.values())


def test_validate_parses_json_text_and_dicts(registry: ToolRegistry) -> None:
    from_text = registry.validate("read", '{"path": "a.py", "limit": 5}')
    from_dict = registry.validate("read", {"path": "a.py", "limit": 5})
    assert from_text == from_dict == ReadParams(path="a.py", limit=5)


def test_validate_explains_wrong_and_missing_arguments(registry: ToolRegistry) -> None:
    result = registry.validate("edit", {"path": 3, "old_string": "a", "colour": "red"})
    assert isinstance(result, ToolResult) and result.is_error
    assert result.content.splitlines() == [
        "Invalid arguments for edit:",
        "- path: Input should be a valid string",
        "- new_string: Field required",
        "- colour: Extra inputs are not permitted",
        "Fix them and call the tool again.",
    ]
    assert [error["loc"] for error in result.details["errors"]] == [["path"], ["new_string"], ["colour"]]


def test_validate_refuses_broken_json_and_unknown_tools(registry: ToolRegistry) -> None:
    broken = registry.validate("read", '{"path": ')
    unknown = registry.validate("delete_everything", {})
    not_object = registry.validate("read", "[1, 2]")
    assert isinstance(broken, ToolResult) and "not valid JSON" in broken.content
    assert isinstance(unknown, ToolResult)
    assert unknown.content == (
        "There is no tool named 'delete_everything'. Available tools: "
        "read, write, edit, list, glob, grep, shell."
    )
    assert isinstance(not_object, ToolResult) and "must be a JSON object, not list" in not_object.content


def test_empty_argument_text_means_no_arguments(registry: ToolRegistry) -> None:
    result = registry.validate("list", "")
    assert not isinstance(result, ToolResult)


def test_relative_paths_resolve_inside_the_workspace(workspace: Path) -> None:
    resolved = resolve_path(workspace, "src/../src/app.py")
    assert resolved.inside
    assert resolved.display(workspace) == "src/app.py"


def test_paths_leaving_the_workspace_are_flagged(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (workspace / "escape").symlink_to(outside)
    for raw in ("../x", "/etc/passwd", "escape/secret.txt", str(tmp_path)):
        assert not resolve_path(workspace, raw).inside, raw
    assert resolve_path(workspace, "escape/secret.txt").path == outside / "secret.txt"
    assert resolve_path(workspace, str(workspace / "in.txt")).inside


def test_targets_report_the_resolved_paths_a_call_touches(registry: ToolRegistry, workspace: Path) -> None:
    edit = registry.get("edit")
    args = registry.validate("edit", {"path": "../x.py", "old_string": "a", "new_string": "b"})
    [target] = edit.targets(args, workspace)
    assert not target.inside and target.path == workspace.parent.resolve() / "x.py"
    assert registry.get("shell").targets(registry.validate("shell", {"command": "ls"}), workspace) == []


async def test_an_outside_read_still_works_once_approved(workspace: Path, tmp_path: Path, call) -> None:
    secret = tmp_path / "notes.txt"
    secret.write_text("remember\n")
    result = await call("read", path="../notes.txt")
    assert result.details["path"] == str(secret.resolve())
    assert "remember" in result.content


def test_warming_up_builds_every_builtin_tools_schema() -> None:
    """`Server.warm_up` builds them in its worker thread: the first task publishes them at once."""
    from harnez.tools import registry

    registry._schema_of.cache_clear()
    registry.warm_up()
    assert registry._schema_of.cache_info().currsize == len({t.parameters for t in registry.builtin_tools()})
    published = registry.ToolRegistry().publish()
    assert registry._schema_of.cache_info().misses == registry._schema_of.cache_info().currsize
    assert all(tool["parameters"] for tool in published)
