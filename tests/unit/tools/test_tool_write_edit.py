"""The write and edit tools: created vs overwritten, unique exact replacement, diffs for the UI."""

from __future__ import annotations

from pathlib import Path


async def test_write_creates_parents_and_says_created(workspace: Path, call) -> None:
    result = await call("write", path="pkg/sub/mod.py", content="x = 1\ny = 2\n")
    assert not result.is_error
    assert result.content == "Created pkg/sub/mod.py (2 lines)."
    assert (workspace / "pkg/sub/mod.py").read_text() == "x = 1\ny = 2\n"
    assert result.details["created"] is True and "diff" not in result.details


async def test_write_over_a_file_reports_overwritten_with_a_diff(workspace: Path, call) -> None:
    (workspace / "mod.py").write_text("x = 1\n")
    result = await call("write", path="mod.py", content="x = 2\n")
    assert result.content == "Overwrote mod.py (1 line)."
    assert result.details["created"] is False
    assert "-x = 1\n+x = 2\n" in result.details["diff"]
    assert result.details["diff"].startswith("--- a/mod.py\n+++ b/mod.py\n")


async def test_write_keeps_the_exact_bytes(workspace: Path, call) -> None:
    await call("write", path="crlf.txt", content="a\r\nb")
    assert (workspace / "crlf.txt").read_bytes() == b"a\r\nb"


async def test_write_to_a_directory_is_refused(workspace: Path, call) -> None:
    (workspace / "src").mkdir()
    result = await call("write", path="src", content="x")
    assert result.is_error and "src is a directory" in result.content


async def test_edit_replaces_a_unique_string_and_shows_a_diff(workspace: Path, call) -> None:
    (workspace / "app.py").write_text("def main():\n    return 1\n")
    result = await call("edit", path="app.py", old_string="return 1", new_string="return 2")
    assert not result.is_error
    assert result.content == "Edited app.py: replaced 1 occurrence at line 2."
    assert (workspace / "app.py").read_text() == "def main():\n    return 2\n"
    assert "-    return 1\n+    return 2\n" in result.details["diff"]
    assert result.details["replacements"] == 1


async def test_edit_refuses_a_non_unique_match_naming_the_lines(workspace: Path, call) -> None:
    text = "\n".join("x = 0" if n in (4, 9, 20) else f"line {n}" for n in range(1, 25)) + "\n"
    (workspace / "m.py").write_text(text)
    result = await call("edit", path="m.py", old_string="x = 0", new_string="x = 1")
    assert result.is_error
    assert result.content == (
        "old_string occurs 3 times in m.py, at lines 4, 9, 20; include more surrounding lines to "
        "make it unique, or set replace_all to true."
    )
    assert (workspace / "m.py").read_text() == text


async def test_edit_replace_all_changes_every_occurrence(workspace: Path, call) -> None:
    (workspace / "m.py").write_text("a = old\nb = old\n")
    result = await call("edit", path="m.py", old_string="old", new_string="new", replace_all=True)
    assert result.content == "Edited m.py: replaced 2 occurrences at lines 1, 2."
    assert (workspace / "m.py").read_text() == "a = new\nb = new\n"


async def test_edit_with_a_missing_match_tells_how_to_fix_it(workspace: Path, call) -> None:
    (workspace / "m.py").write_text("def f():\n    pass\n")
    result = await call("edit", path="m.py", old_string="def g():", new_string="def h():")
    assert result.is_error
    assert "old_string was not found in m.py" in result.content
    assert "copy the exact text" in result.content


async def test_edit_hints_at_wrong_indentation(workspace: Path, call) -> None:
    (workspace / "m.py").write_text("def f():\n    pass\n")
    result = await call("edit", path="m.py", old_string="def  f():", new_string="def g():")
    assert result.is_error and "apart from spacing" in result.content


async def test_edit_keeps_crlf_line_endings(workspace: Path, call) -> None:
    (workspace / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    result = await call("edit", path="w.txt", old_string="one\ntwo", new_string="1\n2")
    assert not result.is_error
    assert (workspace / "w.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


async def test_edit_refuses_empty_and_identical_strings(workspace: Path, call) -> None:
    (workspace / "m.py").write_text("x\n")
    empty = await call("edit", path="m.py", old_string="", new_string="y")
    same = await call("edit", path="m.py", old_string="x", new_string="x")
    assert empty.is_error and "use write" in empty.content
    assert same.is_error and "identical" in same.content


async def test_edit_of_a_missing_or_binary_file_is_refused(workspace: Path, call) -> None:
    (workspace / "blob.bin").write_bytes(b"\x00\x01\x02abc")
    missing = await call("edit", path="ghost.py", old_string="a", new_string="b")
    binary = await call("edit", path="blob.bin", old_string="abc", new_string="xyz")
    assert missing.is_error and "ghost.py does not exist" in missing.content
    assert binary.is_error and "binary file" in binary.content
    assert (workspace / "blob.bin").read_bytes() == b"\x00\x01\x02abc"
