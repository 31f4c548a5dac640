"""What a running command prints reaches whoever watches the session as it arrives, and is never
stored (docs/events.md, "Live output")."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from harnez.events import LiveOutput
from harnez.testing.scripted_model import ScriptedModel
from tests.agent.helpers import answer, events, make_settings, tool_call

SLOW = (
    "n=1; echo live-line-$n; for i in $(seq 600); do [ -e go ] && break; sleep 0.05; done; "
    "echo live-line-$((n + 1)); echo live-line-$((n + 2))"
)
"""Prints its first line, then waits (up to 30 s) for the test's `go` file before the others."""


async def test_a_tool_calls_command_output_is_watched_live_and_not_stored(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    scripted_model.add(tool_call("shell", "c1", command=SLOW), answer("done"))
    server = await open_server(make_settings(scripted_model, permissions={"tools": {"shell": "allow"}}))
    session = server.create_session(workspace).id
    seen: list[tuple[LiveOutput, bool]] = []  # each output, and whether the call had ended by then
    ended = asyncio.Event()

    async def watch_completion() -> None:
        async for event in server.subscribe(session):
            if event.kind == "tool-completed":
                ended.set()
                return

    def watcher(output: LiveOutput) -> None:
        seen.append((output, ended.is_set()))
        (workspace / "go").touch()  # the rest may come: the first piece arrived while it ran

    unwatch = server.watch_output(session, watcher)
    completion = asyncio.create_task(watch_completion())
    await server.submit(session, "run it")
    await server.wait(session)
    await completion
    unwatch()
    (completed,) = await events(server, session, "tool-completed")

    assert {o.session for o, _ in seen} == {session} and {o.call_id for o, _ in seen} == {"c1"}
    assert "".join(o.text for o, _ in seen) == "live-line-1\nlive-line-2\nlive-line-3\n"
    assert not seen[0][1]  # the first line came while the command still ran
    assert len(seen) >= 2  # in pieces, as printed (the first before the command went on)
    assert "live-line-3" in completed.body.content
    holding = [
        e.kind for e in await server.events_after(session) if "live-line-1" in json.dumps(e.body.to_payload())
    ]
    assert holding == ["tool-completed"]  # the live pieces were never stored


async def test_a_watcher_that_fails_does_not_stop_the_command(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    scripted_model.add(tool_call("shell", "c1", command="echo one; echo two"), answer("done"))
    server = await open_server(make_settings(scripted_model, permissions={"tools": {"shell": "allow"}}))
    session = server.create_session(workspace).id
    got: list[str] = []

    def broken(output: LiveOutput) -> None:
        raise RuntimeError("a front end's bug")

    server.watch_output(session, broken)
    server.watch_output(session, lambda output: got.append(output.text))
    await server.submit(session, "run it")
    outcome = await server.wait(session)
    assert outcome is not None and outcome.stop == "completed"
    assert "".join(got) == "one\ntwo\n"


async def test_a_bang_lines_output_is_handed_over_as_it_prints(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    server = await open_server(make_settings(scripted_model))
    session = server.create_session(workspace).id
    got: list[str] = []

    def show(text: str) -> None:
        got.append(text)
        (workspace / "go").touch()  # the command waits for this after its first line

    line = await server.run_shell(session, SLOW, on_output=show)
    assert got[0] == "live-line-1\n"  # handed over while the command still waited
    assert "".join(got) == "live-line-1\nlive-line-2\nlive-line-3\n" == line.body.output + "\n"
