"""Links between imported sessions: a fork names the session it was copied from (pi `parentSession`,
Codex `forked_from_id`), whichever of the two is imported first."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from harnez.importers.sources import Readers
from harnez.server import Server
from tests.importers.conftest import harnez_in

PI_SESSION = "pi/lazyagents-0.87.1/home/.pi/agent/sessions/--home-user-proj--"
PI_PARENT = "01a0f21b-0595-72a7-84dc-df0fc0d0de3f"
CODEX_HOME = "codex/lazyagents-0.158.0/home"
CODEX_PARENT = "01a0f21c-5c40-7f72-9aa9-ef0b43570680"


def codex_home(fixtures: Path, tmp_path: Path) -> Path:
    """A HOME holding the Codex fixture's rollout (the parent of the forks and sub-agents made here)."""
    return Path(shutil.copytree(fixtures / CODEX_HOME, tmp_path / "home"))


def write_lines(path: Path, lines: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def lines_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def pi_fork(fixtures: Path, folder: Path, parent_path: str, *, field: str = "parentSession") -> Path:
    """A pi fork as `/fork` writes it: a new header naming the parent's file, then the copied entries."""
    [parent] = (fixtures / PI_SESSION).glob("*.jsonl")
    header, *entries = lines_of(parent)
    fork_id = "02b1e32c-1111-7222-8333-444455556666"
    header = {**header, "id": fork_id, "timestamp": "2026-10-01T09:00:00.000Z", field: parent_path}
    return write_lines(folder / f"2026-10-01T09-00-00-000Z_{fork_id}.jsonl", [header, *entries])


async def origins(server: Server) -> dict[str, dict]:
    """The origin of every imported session, by its original id."""
    found = {}
    for record in (await server.list_sessions(None, None)).sessions:
        origin = await server.session_origin(record.id)
        found[origin["original_id"]] = {**origin, "id": record.id}
    return found


async def test_a_pi_fork_is_linked_to_its_parent_imported_after_it(
    fixtures: Path, tmp_path: Path, workspace: Path, db_path: Path
) -> None:
    home = tmp_path / "home"
    folder = home / ".pi/agent/sessions/--home-user-proj--"
    [parent] = (fixtures / PI_SESSION).glob("*.jsonl")
    # the path pi recorded on the machine that wrote it, not this HOME: the id is in the file name
    pi_fork(fixtures, folder, f"/home/user/.pi/agent/sessions/--home-user-proj--/{parent.name}")
    server = await Server.open(db_path)
    try:
        assert (await server.import_sessions(home, workspace=workspace)).imported == 1
        child = (await origins(server))["02b1e32c-1111-7222-8333-444455556666"]
        assert (child["parent_original_id"], child["parent_session"]) == (PI_PARENT, None)

        shutil.copy(parent, folder / parent.name)  # the parent arrives in a later import
        report = await server.import_sessions(home, workspace=workspace)
        assert (report.imported, report.unchanged) == (1, 1)
        found = await origins(server)
        child, mother = found["02b1e32c-1111-7222-8333-444455556666"], found[PI_PARENT]
        assert child["parent_session"] == mother["id"]
        assert mother["children"] == [child["id"]] and mother["parent_session"] is None
    finally:
        await server.close()


def test_a_pi_parent_named_by_its_own_file_is_read_for_its_id(fixtures: Path, tmp_path: Path) -> None:
    [parent] = (fixtures / PI_SESSION).glob("*.jsonl")
    named = tmp_path / "named-by-hand.jsonl"  # `pi --session FILE`: the name says nothing
    shutil.copy(parent, named)
    old = pi_fork(fixtures, tmp_path / "forks", str(named), field="branchedFrom")  # pi before 0.31
    gone = pi_fork(fixtures, tmp_path / "gone", str(tmp_path / "deleted.jsonl"))
    os.mkfifo(tmp_path / "pipe")  # nothing writes to it: opening it would wait for ever
    piped = pi_fork(fixtures, tmp_path / "piped", str(tmp_path / "pipe"))
    with Readers() as readers:
        [linked], [unknown], [unread] = (
            readers["pi"].summarize(readers["pi"].refs_for(p)[0]) for p in (old, gone, piped)
        )
    assert linked.to_json()["parent_session_id"] == PI_PARENT
    assert linked.to_json()["agent_id"] is None  # a fork is a session of its own, not a sub-agent
    assert unknown.to_json()["parent_session_id"] is None
    assert unread.to_json()["parent_session_id"] is None


async def test_a_codex_fork_is_linked_to_the_thread_it_was_forked_from(
    fixtures: Path, tmp_path: Path, workspace: Path, db_path: Path
) -> None:
    home = codex_home(fixtures, tmp_path)
    fork_id = "01a0f21c-9999-7f72-9aa9-ef0b43570681"
    codex_fork(home, fork_id)
    server = await Server.open(db_path)
    try:
        assert (await server.import_sessions(home, workspace=workspace)).imported == 2
        found = await origins(server)
        assert found[fork_id]["parent_session"] == found[CODEX_PARENT]["id"]
        assert found[fork_id]["agent_id"] is None
        assert found[CODEX_PARENT]["children"] == [found[fork_id]["id"]]
    finally:
        await server.close()


def codex_fork(home: Path, fork_id: str) -> None:
    """A Codex fork of the fixture's rollout: its own id, `forked_from_id` naming the parent."""
    [parent] = home.rglob(f"rollout-*{CODEX_PARENT}.jsonl")
    meta, *rest = lines_of(parent)
    meta["payload"] = {
        **meta["payload"],
        "id": fork_id,
        "session_id": fork_id,
        "forked_from_id": CODEX_PARENT,
    }
    write_lines(parent.with_name(f"rollout-2026-09-30T09-00-00-{fork_id}.jsonl"), [meta, *rest])


def test_sessions_show_names_the_fork_parent_and_children(fixtures: Path, tmp_path: Path) -> None:
    home = codex_home(fixtures, tmp_path)
    fork_id = "01a0f21c-9999-7f72-9aa9-ef0b43570681"
    codex_fork(home, fork_id)
    harnez = harnez_in(tmp_path)

    def run(*args: str) -> str:
        done = harnez(*args)
        assert done.returncode == 0, done.stderr
        return done.stdout

    run("import", "--home", str(home))
    ids = {}
    for line in run("sessions", "--all", "--json").splitlines():
        session = json.loads(line)["id"]
        shown = run("sessions", "show", session)
        ids[fork_id if f"session {fork_id}" in shown else CODEX_PARENT] = (session, shown)
    (fork, fork_shown), (parent, parent_shown) = ids[fork_id], ids[CODEX_PARENT]
    assert f"forked from codex session {CODEX_PARENT} ({parent})" in fork_shown
    assert f"imported sub-agents and forks: {fork}" in parent_shown


def claude_lines(session: str, turns: list[tuple[str, str]], start: int = 0) -> list[dict]:
    """A prompt and its answer per turn, every record with `sessionId` = session (uuids by position)."""
    lines = []
    for n, (prompt, answer) in enumerate(turns, start):
        stamp = f"2026-05-01T10:{n:02d}:00.000Z"
        common = {"sessionId": session, "cwd": "/home/user/proj", "version": "1.0.65", "timestamp": stamp}
        lines.append(
            {**common, "type": "user", "uuid": f"p{n}", "message": {"role": "user", "content": prompt}}
        )
        message = {
            "id": f"m{n}",
            "model": "claude-sonnet-4",
            "role": "assistant",
            "usage": {"input_tokens": 4},
        }
        content = [{"type": "text", "text": answer}]
        lines.append(
            {**common, "type": "assistant", "uuid": f"a{n}", "message": {**message, "content": content}}
        )
    return lines


async def test_a_resumed_claude_session_is_its_own_session_linked_to_the_one_it_resumed(
    tmp_path: Path, workspace: Path, db_path: Path
) -> None:
    home = tmp_path / "home"
    folder = home / ".claude/projects/-home-user-proj"
    first = "aaaaaaaa-0000-4000-8000-000000000001"
    resumed = ["bbbbbbbb-0000-4000-8000-000000000002", "cccccccc-0000-4000-8000-000000000003"]
    asked = [("what is 4 + 4 * 4?", "20")]
    write_lines(folder / f"{first}.jsonl", claude_lines(first, asked))
    # `claude --resume` (1.0.x) twice from the same session: each a new file named after a new id,
    # starting with the resumed session's records copied under its id
    for n, own in enumerate(resumed, 1):
        write_lines(
            folder / f"{own}.jsonl", claude_lines(first, asked) + claude_lines(own, [(f"then {n}", "ok")], n)
        )
    # a file that goes on under a newer id after its own records: still the session its name gives
    later = "dddddddd-0000-4000-8000-000000000004"
    write_lines(
        folder / f"{later}.jsonl", claude_lines(later, asked) + claude_lines("eeeeeeee", [("more", "ok")], 5)
    )

    with Readers() as readers:
        reader = readers["claude-code"]
        found = {s.info.session_id: s for ref in reader.locate(home) for s in reader.read(ref)}
    assert {
        k: (s.info.parent_session_id, s.summary().to_json()["user_messages"]) for k, s in found.items()
    } == {
        first: (None, 1),
        resumed[0]: (first, 2),  # the copied prompt is in the file and counted, as the rules count records
        resumed[1]: (first, 2),
        later: (None, 2),
    }

    server = await Server.open(db_path)
    try:
        report = await server.import_sessions(home, workspace=workspace)
        assert (report.imported, report.duplicates) == (4, 0)  # before: one session, three "copies"
        origin = await origins(server)
        assert [origin[r]["parent_session"] for r in resumed] == [origin[first]["id"]] * 2
        assert sorted(origin[first]["children"]) == sorted(origin[r]["id"] for r in resumed)
    finally:
        await server.close()


def claude_tool_turn(session: str) -> list[dict]:
    """A prompt whose answer runs a tool (`Bash`), its result, and the answer after it."""
    common = {"sessionId": session, "cwd": "/home/user/proj", "version": "1.0.65"}
    use = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"}
    said = {
        "model": "claude-sonnet-4",
        "role": "assistant",
        "usage": {"input_tokens": 50, "output_tokens": 7},
    }
    return [
        {**common, "timestamp": "2026-05-01T09:00:00.000Z", "type": "user", "uuid": "t0"}
        | {"message": {"role": "user", "content": "list the files"}},
        {**common, "timestamp": "2026-05-01T09:00:01.000Z", "type": "assistant", "uuid": "t1"}
        | {"requestId": "req_1", "message": {**said, "id": "msg_1", "content": [use]}},
        {**common, "timestamp": "2026-05-01T09:00:02.000Z", "type": "user", "uuid": "t2"}
        | {"message": {"role": "user", "content": [result]}},
        {**common, "timestamp": "2026-05-01T09:00:03.000Z", "type": "assistant", "uuid": "t3"}
        | {
            "requestId": "req_2",
            "message": {**said, "id": "msg_2", "content": [{"type": "text", "text": "a.txt"}]},
        },
    ]


async def test_a_resumed_claude_sessions_copy_is_shown_but_accounted_once(
    tmp_path: Path, workspace: Path, db_path: Path
) -> None:
    """The calls and tool runs a resumed session's file starts with were made by the session it
    resumed: imported with both, they counted twice (tokens, cost, the ledger)."""
    home = tmp_path / "home"
    folder = home / ".claude/projects/-home-user-proj"
    first, resumed = "aaaaaaaa-0000-4000-8000-000000000001", "bbbbbbbb-0000-4000-8000-000000000002"
    write_lines(folder / f"{first}.jsonl", claude_tool_turn(first))
    own = claude_lines(resumed, [("now count them", "1")], 1)
    write_lines(folder / f"{resumed}.jsonl", claude_tool_turn(first) + own)

    with Readers() as readers:
        reader = readers["claude-code"]
        [later] = reader.read(reader.refs_for(folder / f"{resumed}.jsonl")[0])
    counted = later.summary().to_json()
    assert (counted["user_messages"], counted["model_calls"], counted["tool_calls"]) == (2, 3, 1)

    server = await Server.open(db_path)
    try:
        await server.import_sessions(home, workspace=workspace)
        ids = {origin["original_id"]: origin["id"] for origin in (await origins(server)).values()}
        spent = {}
        for original, session in ids.items():
            record = await server.get_session(session)
            totals = await server.session_totals(session)
            calls = await server.store.ledger.model_calls(record.num)
            runs = await server.store.ledger.tool_executions(record.num)
            said = [e.body.text for e in await server.events_after(session) if e.kind == "user-message"]
            spent[original] = (totals.input, totals.output, len(calls), len(runs), said)
        assert spent == {
            first: (100, 14, 2, 1, ["list the files"]),
            resumed: (4, 0, 1, 0, ["list the files", "now count them"]),  # the copy shown, not accounted
        }
    finally:
        await server.close()


REVIEW_EXCERPTS = "codex/agtrace-0.77.0-excerpts"
REVIEW_PARENT = "019b88e0-0b0f-7bb0-a9ba-5cc2d8dffde9"
REVIEW_CHILD = "019b88e5-a2e4-7b90-8953-38fce393c653"


@pytest.mark.parametrize("order", [("parent", "child"), ("child", "parent"), ("parent child",)])
async def test_a_codex_review_sub_agent_is_linked_to_the_session_that_entered_review_mode(
    fixtures: Path, tmp_path: Path, workspace: Path, db_path: Path, order: tuple[str, ...]
) -> None:
    """The review rollout (`source.subagent: review`) does not name its parent: the parent is the
    session of the same folder that entered review mode when the review started (the real pair's
    `entered_review_mode` and the review's `session_meta` are stamped the same millisecond)."""
    home = tmp_path / "home"
    day = home / ".codex/sessions/2026/01/04"
    day.mkdir(parents=True)
    sources = {
        "parent": (
            REVIEW_EXCERPTS + "/rollout-parent-019b88e0.jsonl",
            f"rollout-2026-01-04T11-59-02-{REVIEW_PARENT}",
        ),
        "child": (
            REVIEW_EXCERPTS + "/rollout-subagent-019b88e5.jsonl",
            f"rollout-2026-01-04T12-05-09-{REVIEW_CHILD}",
        ),
    }
    # another folder's review, started the same moment: not the parent's
    meta, *rest = lines_of(fixtures / sources["child"][0])
    stranger = "019b88e5-ffff-7b90-8953-38fce393c654"
    meta["payload"] = {**meta["payload"], "id": stranger, "cwd": "/test/elsewhere"}
    write_lines(day / f"rollout-2026-01-04T12-05-09-{stranger}.jsonl", [meta, *rest])
    server = await Server.open(db_path)
    try:
        for step in order:
            for name in step.split():
                shutil.copy(fixtures / sources[name][0], day / f"{sources[name][1]}.jsonl")
            await server.import_sessions(home, workspace=workspace)
        found = await origins(server)
        review = found[REVIEW_CHILD]
        assert (review["agent_id"], review["parent_original_id"]) == ("review", REVIEW_PARENT)
        assert review["parent_session"] == found[REVIEW_PARENT]["id"]
        assert found[REVIEW_PARENT]["children"] == [review["id"]]
        assert found[stranger]["parent_original_id"] is None
    finally:
        await server.close()


async def test_nested_codex_sub_agents_and_claude_sub_agents_name_their_own_children(
    fixtures: Path, tmp_path: Path, workspace: Path, db_path: Path
) -> None:
    home = codex_home(fixtures, tmp_path)
    shutil.copytree(fixtures / "claude-code/spotter-2.1.39/home", home, dirs_exist_ok=True)
    [parent] = home.rglob(f"rollout-*{CODEX_PARENT}.jsonl")
    meta, *rest = lines_of(parent)
    scout, digger = "01a0f21c-aaaa-7f72-9aa9-ef0b43570682", "01a0f21c-bbbb-7f72-9aa9-ef0b43570683"
    for own, above, name in ((scout, CODEX_PARENT, "scout"), (digger, scout, "digger")):
        spawn = {"parent_thread_id": above, "depth": 1, "agent_nickname": name}
        payload = {**meta["payload"], "id": own, "source": {"subagent": {"thread_spawn": spawn}}}
        write_lines(
            parent.with_name(f"rollout-2026-09-30T09-00-00-{own}.jsonl"),
            [{**meta, "payload": payload}, *rest],
        )
    server = await Server.open(db_path)
    try:
        await server.import_sessions(home, workspace=workspace)
        found = {}
        for record in (await server.list_sessions(None, None)).sessions:
            origin = await server.session_origin(record.id)
            found[origin["agent_id"] or origin["original_id"]] = {**origin, "id": record.id}
        assert found[CODEX_PARENT]["children"] == [found["scout"]["id"]]
        assert found["scout"]["children"] == [found["digger"]["id"]]
        assert found["digger"]["parent_session"] == found["scout"]["id"]
        claude = "8463c716-a2ea-4c14-9efa-87158ebd9f20"
        assert sorted(found[claude]["children"]) == sorted(
            found[a]["id"] for a in ("a7be2f0", "acompact-f46190")
        )
        assert found["a7be2f0"]["children"] == []  # it shares its parent's id: the others are its siblings
        assert found["a7be2f0"]["parent_session"] == found[claude]["id"]
    finally:
        await server.close()
