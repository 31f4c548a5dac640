"""The read and list tools: numbered line ranges, caps with a note, refusals the model can act on."""

from __future__ import annotations

from pathlib import Path

from harnez.tools.read import LINE_CHAR_CAP, READ_CHAR_CAP


async def test_read_numbers_every_line(workspace: Path, call) -> None:
    (workspace / "a.txt").write_text("alpha\nbeta\ngamma\n")
    result = await call("read", path="a.txt")
    assert not result.is_error
    assert result.content == "     1\talpha\n     2\tbeta\n     3\tgamma"
    assert result.details == {
        "path": "a.txt",
        "start_line": 1,
        "end_line": 3,
        "total_lines": 3,
        "truncated": False,
    }


async def test_read_range_notes_how_to_continue(workspace: Path, call) -> None:
    (workspace / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 101)))
    result = await call("read", path="long.txt", offset=10, limit=5)
    lines = result.content.splitlines()
    assert lines[:5] == [f"{n:>6}\tline {n}" for n in range(10, 15)]
    assert "showing lines 10-14 of 100" in result.content
    assert "offset=15" in result.content
    assert result.details["end_line"] == 14 and result.details["truncated"] is True


async def test_read_stops_at_the_character_cap(workspace: Path, call) -> None:
    (workspace / "wide.txt").write_text(("x" * 999 + "\n") * 200)
    result = await call("read", path="wide.txt")
    shown = result.details["end_line"]
    assert shown < 200 and len(result.content) < READ_CHAR_CAP + 1000
    assert f"offset={shown + 1}" in result.content
    assert "character cap" in result.content


async def test_read_cuts_a_very_long_line(workspace: Path, call) -> None:
    (workspace / "min.js").write_text("y" * (LINE_CHAR_CAP + 500))
    result = await call("read", path="min.js")
    assert "line cut, 500 more characters" in result.content


async def test_read_refuses_a_binary_file(workspace: Path, call) -> None:
    (workspace / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    result = await call("read", path="logo.png")
    assert result.is_error
    assert "logo.png is a binary file" in result.content


async def test_read_past_the_end_says_how_long_the_file_is(workspace: Path, call) -> None:
    (workspace / "short.txt").write_text("one\ntwo\n")
    result = await call("read", path="short.txt", offset=50)
    assert result.is_error
    assert "offset 50 is past the end of short.txt, which has 2 lines" in result.content


async def test_read_of_missing_file_and_directory(workspace: Path, call) -> None:
    (workspace / "src").mkdir()
    missing = await call("read", path="nope.py")
    directory = await call("read", path="src")
    assert missing.is_error and "nope.py does not exist" in missing.content
    assert directory.is_error and "src is a directory" in directory.content


async def test_read_of_an_empty_file(workspace: Path, call) -> None:
    (workspace / "empty").write_text("")
    result = await call("read", path="empty")
    assert not result.is_error and result.content == "empty is empty."


async def test_read_rejects_an_offset_of_zero(call) -> None:
    result = await call("read", path="a.txt", offset=0)
    assert result.is_error and "offset" in result.content


async def test_list_shows_directories_files_and_links(workspace: Path, call) -> None:
    (workspace / "src").mkdir()
    (workspace / "README.md").write_text("hi")
    (workspace / "link").symlink_to("README.md")
    result = await call("list")
    assert result.content == "README.md\nlink -> README.md\nsrc/"
    assert result.details == {"path": ".", "entries": 3}


async def test_list_of_a_file_points_at_read(workspace: Path, call) -> None:
    (workspace / "f.txt").write_text("x")
    result = await call("list", path="f.txt")
    assert result.is_error and "use read" in result.content.lower()
