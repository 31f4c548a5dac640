"""Edges of the command line a script meets: numbers out of range, files that are not what was named."""

from __future__ import annotations

import pytest

from tests.e2e.helpers import HeadlessWorkspace, json_lines


@pytest.mark.parametrize("port", ["99999", "65536", "-1"])
def test_a_port_out_of_range_is_a_usage_error_not_another_port(
    headless: HeadlessWorkspace, port: str
) -> None:
    """`serve --port 99999` listened on 34463 (the system takes the number modulo 65536) and said so
    only in its listening line; -1 was a resolver's error naming `ai_socktype`."""
    done = headless.harnez("serve", "--port", port, timeout=20)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines()[-1] == (
        f"harnez serve: error: argument --port: expected a port from 0 to 65535 (0 picks a free one), "
        f"got {port!r}"
    )
    assert not headless.database.exists()


def test_a_dash_for_the_prompt_reads_it_from_stdin(headless: HeadlessWorkspace) -> None:
    """`harnez run -` sent the prompt "-" to the model, a paid request for nothing, and left stdin unread."""
    headless.model.add({"reply": [{"text": "Read from the pipe."}]})
    done = headless.harnez("run", "--json", "-", input="explain the build\n")
    assert done.returncode == 0, done.stderr
    (prompt,) = [event for event in json_lines(done.stdout) if event["kind"] == "user-message"]
    assert prompt["text"] == "explain the build\n"
    assert headless.model.requests[-1].body["messages"][-1] == {
        "role": "user",
        "content": "explain the build\n",
    }
    empty = headless.harnez("run", "-", input="")
    assert empty.returncode == 2 and empty.stderr.startswith("harnez: Nothing to run"), empty.stderr
    assert len(headless.model.requests) == 1
