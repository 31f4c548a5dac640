"""Edges of the command line a script meets: numbers out of range, files that are not what was named."""

from __future__ import annotations

import pytest

from tests.e2e.helpers import HeadlessWorkspace


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
