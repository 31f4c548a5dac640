"""Tool results hold valid text: a file name that is not UTF-8 is shown with U+FFFD."""

from __future__ import annotations

import os
from pathlib import Path


async def test_a_file_name_that_is_not_utf8_reaches_the_result_as_a_replacement_character(
    workspace: Path, call
) -> None:
    (workspace / os.fsdecode(b"bad\xffname.txt")).write_text("x\n")
    for name, arguments in (("list", {}), ("glob", {"pattern": "*.txt"}), ("grep", {"pattern": "x"})):
        result = await call(name, **arguments)
        assert not result.is_error, result.content
        assert "bad\ufffdname.txt" in result.content
        result.content.encode("utf-8")  # a lone surrogate here would fail the store and the terminal
