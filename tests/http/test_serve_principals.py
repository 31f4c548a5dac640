"""Several principals (`--principal NAME=VARIABLE`): each object belongs to the principal that made it.

Security §2's check with two principals: create each kind of object as A, attempt every operation on
it as B, and each answer is the 404 a missing id gets — the same status, body and headers. A still
has everything of its own afterwards. Configuration mistakes are exit 2, and a database made before
owners keeps its UHP rows, as the principal `default`'s.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from harnez.store.migrate import load_migrations, migrate, migrations_dir
from harnez.store.payloads import loads
from harnez.testing.scripted_model import ScriptedModel
from tests.http.conftest import HARNEZ, serve_environ, start_serve, uhp_client
from tests.http.helpers import TOKEN, Served, answer, sse_events, wait_for_requests, writes

ALICE, BOB = "alice-token-7Qd2x9PLANTED", "bob-token-4Kw8m1PLANTED"
PRINCIPALS = ("--principal", "alice=ALICE_TOKEN", "--principal", "bob=BOB_TOKEN")
ENV = {"ALICE_TOKEN": ALICE, "BOB_TOKEN": BOB}
Body = Callable[[str], dict[str, Any]] | None


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """`default` (--token-env), alice and bob on one server."""
    with ScriptedModel() as model:
        served = start_serve(tmp_path_factory.mktemp("principals"), model, *PRINCIPALS, env=ENV)
        try:
            yield served
        finally:
            served.stop()


@pytest.fixture
def alice(served: Served) -> Iterator[httpx.Client]:
    with uhp_client(served, ALICE) as http:
        yield http


@pytest.fixture
def bob(served: Served) -> Iterator[httpx.Client]:
    with uhp_client(served, BOB) as http:
        yield http


def _unknown(real: str) -> str:
    """An id of the same kind and length as `real` that names nothing."""
    return real[:-6] + ("000000" if not real.endswith("000000") else "111111")


def _headers(response: httpx.Response) -> dict[str, str]:
    return {name: value for name, value in response.headers.items() if name != "date"}


def _as_missing(client: httpx.Client, method: str, path: str, real: str, body: Body = None) -> str:
    """Ask `method path` (its `{}` filled with `real`, and `body(real)` as JSON) and with an id that
    names nothing instead; both are 404 and alike but for the id. Returns the error code."""
    fake = _unknown(real)
    answers = [
        client.request(method, path.format(ident), json=body(ident) if body else None)
        for ident in (real, fake)
    ]
    theirs, missing = answers
    assert theirs.status_code == 404, (method, path, theirs.text)
    assert missing.status_code == 404, (method, path, missing.text)
    assert theirs.text == missing.text.replace(fake, real), (method, path)
    assert _headers(theirs) == _headers(missing), (method, path)
    return theirs.json()["error"]["code"]


def _alices_objects(served: Served, alice: httpx.Client) -> dict[str, str]:
    """One of each kind of object, made by alice: a harness with a skill, an upload, a response of
    that harness that wrote an artifact, its session shared, and a response made with a key."""
    skill = {"name": "notes", "files": [{"path": "SKILL.md", "content": "---\nname: notes\n---\nNotes."}]}
    harness = alice.post(
        "/v1/harnesses", json={"name": "Alice's", "base": "harnez", "skills": [skill]}
    ).json()
    upload = alice.post("/v1/files", files={"file": ("brief.txt", b"the brief\n", "text/plain")}).json()
    served.model.add(*writes("plan.md", "alice's plan\n"))
    body = {
        "input": [
            {
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "write the plan"},
                    {"type": "input_file", "file_id": upload["id"]},
                ],
            }
        ],
        "metadata": {"harness_id": harness["id"]},
    }
    done = alice.post("/v1/responses", json=body).json()
    assert done["status"] == "completed", done
    session = done["metadata"]["session_id"]
    (artifact,) = alice.get(f"/v1/sessions/{session}/files").json()["files"]
    share = alice.post(f"/v1/sessions/{session}/share").json()
    served.model.add(answer("keyed"))
    keyed = alice.post(
        "/v1/responses", json={"input": "once"}, headers={"Idempotency-Key": "shared-key"}
    ).json()
    return {
        "harness": harness["id"],
        "upload": upload["id"],
        "response": done["id"],
        "session": session,
        "container": artifact["container_id"],
        "artifact": artifact["id"],
        "share": share["id"],
        "keyed": keyed["id"],
    }


def test_every_operation_on_another_principals_object_is_a_404_like_a_missing_id(
    served: Served, alice: httpx.Client, bob: httpx.Client
) -> None:
    mine = _alices_objects(served, alice)
    calls = len(served.model.requests)
    response, session, harness = mine["response"], mine["session"], mine["harness"]
    for method, path in [
        ("GET", "/v1/responses/{}"),
        ("GET", "/v1/responses/{}?stream=true"),
        ("GET", "/v1/responses/{}?stream=true&starting_after=2"),
        ("GET", "/v1/responses/{}/input_items"),
        ("POST", "/v1/responses/{}/cancel"),
        ("DELETE", "/v1/responses/{}"),
    ]:
        assert _as_missing(bob, method, path, response) == "response_not_found"
    continuing = _as_missing(
        bob, "POST", "/v1/responses", response, lambda i: {"input": "go", "previous_response_id": i}
    )
    assert continuing == "response_not_found"
    for method, path in [
        ("GET", "/v1/sessions/{}"),
        ("GET", "/v1/sessions/{}/turns"),
        ("POST", "/v1/sessions/{}/cancel"),
        ("GET", "/v1/sessions/{}/share"),
        ("POST", "/v1/sessions/{}/share"),
        ("DELETE", "/v1/sessions/{}/share"),
        ("GET", "/v1/sessions/{}/files"),
        ("GET", "/v1/sessions/{}/files/archive"),
        ("DELETE", "/v1/traces/{}"),
    ]:
        assert _as_missing(bob, method, path, session) == "session_not_found"
    for method, path in [
        ("GET", "/v1/containers/" + mine["container"] + "/files/{}/content"),
        ("GET", "/v1/containers/" + mine["container"] + "/files/{}/pdf"),
    ]:
        assert _as_missing(bob, method, path, mine["artifact"]) == "file_not_found"
    with_file = _as_missing(
        bob,
        "POST",
        "/v1/responses",
        mine["upload"],
        lambda i: {"input": [{"role": "user", "content": [{"type": "input_file", "file_id": i}]}]},
    )
    assert with_file == "file_not_found"
    for method, path, body in [
        ("GET", "/v1/harnesses/{}", None),
        ("PUT", "/v1/harnesses/{}", lambda i: {"name": "Bob's now"}),
        ("DELETE", "/v1/harnesses/{}", None),
        ("GET", "/v1/harnesses/{}/models", None),
        ("GET", "/v1/harnesses/{}/skills/notes/files", None),
        ("GET", "/v1/harnesses/{}/events", None),
        ("POST", "/v1/responses", lambda i: {"input": "go", "metadata": {"harness_id": i}}),
    ]:
        assert _as_missing(bob, method, path, harness, body) == "harness_not_found"
    assert len(served.model.requests) == calls, "none of bob's attempts ran a task"

    # Lists show bob only his own; the built-in harness is everyone's.
    assert bob.get("/v1/sessions").json()["sessions"] == []
    assert bob.get("/v1/sessions", params={"harness": harness}).json()["sessions"] == []
    assert [h.get("harnez_default") for h in bob.get("/v1/harnesses").json()["harnesses"]] == [True]

    # Alice still has everything, unchanged by bob's attempts.
    assert alice.get(f"/v1/responses/{response}").json()["status"] == "completed"
    assert alice.get(f"/v1/harnesses/{harness}").json()["name"] == "Alice's"
    assert alice.get(f"/v1/harnesses/{harness}/skills/notes/files").status_code == 200
    assert session in [s["id"] for s in alice.get("/v1/sessions").json()["sessions"]]
    assert alice.get(f"/v1/sessions/{session}/share").json()["id"] == mine["share"]
    content = alice.get(f"/v1/containers/{mine['container']}/files/{mine['artifact']}/content")
    assert content.status_code == 200 and content.text == "alice's plan\n"
    served.model.add(answer("continued"))
    more = alice.post("/v1/responses", json={"input": "more", "previous_response_id": response}).json()
    assert more["status"] == "completed" and more["metadata"]["session_id"] == session


def test_two_principals_use_the_same_idempotency_key_independently(
    served: Served, alice: httpx.Client, bob: httpx.Client
) -> None:
    key = {"Idempotency-Key": "the-same-key"}
    served.model.add(answer("alice's"))
    first = alice.post("/v1/responses", json={"input": "a"}, headers=key).json()
    served.model.add(answer("bob's"))
    calls = len(served.model.requests)
    theirs = bob.post("/v1/responses", json={"input": "b"}, headers=key).json()
    assert theirs["id"] != first["id"] and len(served.model.requests) == calls + 1
    assert theirs["output"][-1]["content"][0]["text"] == "bob's"
    again = alice.post("/v1/responses", json={"input": "a"}, headers=key).json()
    assert again["id"] == first["id"] and len(served.model.requests) == calls + 1


def test_a_share_is_read_by_whoever_holds_its_id_and_managed_by_the_owner_alone(
    served: Served, alice: httpx.Client, bob: httpx.Client
) -> None:
    """A share publishes one session read-only (Sessions §5): any principal with its id reads that
    session's turns and nothing else; only the owner makes, shows or revokes it."""
    served.model.add(answer("shared answer"))
    session = alice.post("/v1/responses", json={"input": "share me"}).json()["metadata"]["session_id"]
    share = alice.post(f"/v1/sessions/{session}/share").json()["id"]
    view = bob.get(f"/v1/shares/{share}")
    assert view.status_code == 200 and view.json()["session"]["id"] == session
    assert "shared answer" in view.text and ALICE not in view.text
    assert bob.delete(f"/v1/sessions/{session}/share").status_code == 404
    assert bob.get(f"/v1/shares/{share}").status_code == 200, "bob's refused revoke changed nothing"
    assert alice.delete(f"/v1/sessions/{session}/share").json()["revoked"] is True
    assert bob.get(f"/v1/shares/{share}").json()["error"]["code"] == "harnez_share_not_found"


def test_another_principal_cannot_cancel_a_running_task(
    served: Served, alice: httpx.Client, bob: httpx.Client
) -> None:
    served.model.add(answer("finished anyway", hold="principals-cancel"))
    calls = len(served.model.requests)
    running = alice.post("/v1/responses", json={"input": "long", "background": True}).json()
    wait_for_requests(served.model, calls + 1)
    try:
        assert bob.post(f"/v1/responses/{running['id']}/cancel").status_code == 404
        assert bob.post(f"/v1/sessions/{running['metadata']['session_id']}/cancel").status_code == 404
        assert bob.delete(f"/v1/traces/{running['metadata']['session_id']}").status_code == 404
    finally:
        served.model.release("principals-cancel")
    with alice.stream("GET", f"/v1/responses/{running['id']}?stream=true") as stream:
        last = list(sse_events(stream))[-1]
    assert last["response"]["status"] == "completed"
    assert last["response"]["output"][-1]["content"][0]["text"] == "finished anyway"


def test_the_built_in_harness_feed_shows_each_principal_its_own_work(
    served: Served, alice: httpx.Client, bob: httpx.Client
) -> None:
    (builtin,) = [h["id"] for h in bob.get("/v1/harnesses").json()["harnesses"] if h.get("harnez_default")]
    events = []
    with bob.stream("GET", f"/v1/harnesses/{builtin}/events") as feed:
        assert feed.status_code == 200
        served.model.add(answer("alice works"))
        alices = alice.post("/v1/responses", json={"input": "a"}).json()
        served.model.add(answer("bob works"))
        bobs = bob.post("/v1/responses", json={"input": "b"}).json()
        for event in sse_events(feed):
            events.append(event)
            if event["type"] == "response.completed":
                break
    assert alices["status"] == bobs["status"] == "completed"
    assert {event["response_id"] for event in events} == {bobs["id"]}


def test_the_default_principal_and_the_named_ones_see_apart(
    served: Served, alice: httpx.Client, client: httpx.Client
) -> None:
    """`--token-env`'s token is the principal `default`: its objects are not alice's, nor hers its."""
    served.model.add(answer("default's"), answer("alice's"))
    defaults = client.post("/v1/responses", json={"input": "d"}).json()
    alices = alice.post("/v1/responses", json={"input": "a"}).json()
    assert client.get(f"/v1/responses/{alices['id']}").status_code == 404
    assert alice.get(f"/v1/responses/{defaults['id']}").status_code == 404
    listed = {s["id"] for s in client.get("/v1/sessions", params={"limit": 100}).json()["sessions"]}
    assert defaults["metadata"]["session_id"] in listed and alices["metadata"]["session_id"] not in listed


def test_owners_are_names_and_no_token_is_stored(served: Served, alice: httpx.Client) -> None:
    """The database names each object's principal, never its token; a token a task's input carries
    is masked in the session's events (each principal's variable is a known secret)."""
    served.model.add(answer("noted"))
    alice.post("/v1/responses", json={"input": f"bob's token is {BOB}"})
    with sqlite3.connect(served.database, timeout=30) as db:
        owners = {row[0] for row in db.execute("SELECT owner FROM uhp_sessions")}
        events = json.dumps([loads(row[0]) for row in db.execute("SELECT payload FROM events")])
    assert (
        "alice" in owners
        and owners <= {"default", "alice", "bob"}
        and BOB not in events
        and ALICE not in events
    )
    assert "[redacted]" in events


def test_a_token_in_a_requests_input_is_masked_in_the_stored_response(
    served: Served, alice: httpx.Client
) -> None:
    """The response row keeps the request's input items and metadata: a token pasted there (another
    principal's, or the provider key) is masked as in the events, never stored."""
    served.model.add(answer("kept"))
    body = {"input": f"here is bob's token: {BOB}", "metadata": {"note": f"key {BOB}"}}
    done = alice.post("/v1/responses", json=body).json()
    with sqlite3.connect(served.database, timeout=30) as db:
        stored = db.execute(
            "SELECT input, metadata FROM uhp_responses WHERE id = ?", (done["id"],)
        ).fetchone()
    assert BOB not in "".join(stored) and "[redacted]" in stored[0] and "[redacted]" in stored[1]
    assert "[redacted]" in alice.get(f"/v1/responses/{done['id']}/input_items").text


@pytest.mark.parametrize(
    ("options", "environ", "says"),
    [
        (["--principal", "carol=CAROL_TOKEN"], {}, "the variable CAROL_TOKEN is not set"),
        (["--principal", "carol"], {}, "write --principal NAME=VARIABLE"),
        (["--principal", "car ol=ALICE_TOKEN"], ENV, "is not a plain word"),
        (
            ["--principal", "alice=ALICE_TOKEN", "--principal", "alice=BOB_TOKEN"],
            ENV,
            "give each principal once",
        ),
        (
            ["--principal", "default=ALICE_TOKEN"],
            {**ENV, "HARNEZ_SERVE_TOKEN": TOKEN},
            "already given by --token-env",
        ),
        (["--principal", "alice=ALICE_TOKEN", "--principal", "bob=ALICE_TOKEN"], ENV, "a token of its own"),
    ],
    ids=["unset", "no-variable", "bad-name", "name-twice", "default-twice", "token-twice"],
)
def test_bad_principal_configuration_is_a_clear_usage_error(
    tmp_path: Path, options: list[str], environ: dict[str, str], says: str
) -> None:
    refused = subprocess.run(
        [str(HARNEZ), "serve", "--port", "0", *options],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=serve_environ(tmp_path, environ),
        timeout=30,
    )
    assert refused.returncode == 2, refused.stderr
    assert says in refused.stderr and "Traceback" not in refused.stderr
    assert ALICE not in refused.stderr and TOKEN not in refused.stderr


def _database_before_owners(folder: Path) -> tuple[Path, dict[str, str]]:
    """A database at the schema before owners (version 12) holding what `harnez serve` kept then: a
    harness, an HTTP session with a response, an upload and an idempotency key."""
    older = folder / "migrations-12"
    older.mkdir(parents=True)
    for migration in load_migrations()[:12]:
        shutil.copy(migrations_dir() / migration.name, older)
    database = folder / "harnez.sqlite"
    assert migrate(database, older) == 12
    session, now = uuid.uuid4().hex, time.time()
    ids = {
        "session": "hsess" + session,
        "response": "resp_" + uuid.uuid4().hex,
        "harness": "chrn_" + uuid.uuid4().hex,
        "upload": "file_" + uuid.uuid4().hex,
    }
    workspace = folder / "old-session"
    workspace.mkdir()
    with sqlite3.connect(database) as db:
        num = db.execute(
            "INSERT INTO sessions (id, workspace, created_at, updated_at) VALUES (?, ?, ?, ?)",
            (session, str(workspace), now, now),
        ).lastrowid
        db.execute(
            "INSERT INTO uhp_harnesses (id, name, base, config, builtin, created_at) VALUES (?, ?, ?, ?, 0, ?)",
            (ids["harness"], "Old", "harnez", "{}", int(now * 1000)),
        )
        db.execute(
            "INSERT INTO uhp_sessions (session, harness, created_at) VALUES (?, ?, ?)",
            (num, ids["harness"], now),
        )
        db.execute(
            "INSERT INTO uhp_responses (id, session, session_id, harness, input, options, metadata, created_at) "
            "VALUES (?, ?, ?, ?, '[]', '{}', '{}', ?)",
            (ids["response"], num, session, ids["harness"], now),
        )
        db.execute(
            "INSERT INTO uhp_uploads (id, filename, media_type, bytes, content, created_at) "
            "VALUES (?, 'old.txt', 'text/plain', 4, ?, ?)",
            (ids["upload"], b"old\n", now),
        )
        db.execute(
            "INSERT INTO uhp_idempotency (key, response, created_at) VALUES ('old-key', ?, ?)",
            (ids["response"], now),
        )
    return database, ids


def test_a_database_from_before_owners_keeps_its_uhp_objects_as_the_default_principals(
    tmp_path: Path, scripted_model: ScriptedModel
) -> None:
    database, old = _database_before_owners(tmp_path / "data")
    served = start_serve(
        tmp_path / "serve", scripted_model, *PRINCIPALS, "--session-dir", str(database.parent), env=ENV
    )
    try:
        with uhp_client(served, TOKEN) as default, uhp_client(served, ALICE) as alice:
            assert default.get(f"/v1/responses/{old['response']}").status_code == 200
            assert default.get(f"/v1/sessions/{old['session']}").json()["id"] == old["session"]
            assert [s["id"] for s in default.get("/v1/sessions").json()["sessions"]] == [old["session"]]
            assert default.get(f"/v1/harnesses/{old['harness']}").json()["name"] == "Old"
            calls = len(scripted_model.requests)
            replayed = default.post(
                "/v1/responses",
                json={"input": "x", "background": True},
                headers={"Idempotency-Key": "old-key"},
            )
            assert replayed.json()["id"] == old["response"] and len(scripted_model.requests) == calls
            for path in (
                f"/v1/responses/{old['response']}",
                f"/v1/sessions/{old['session']}",
                f"/v1/harnesses/{old['harness']}",
            ):
                assert alice.get(path).status_code == 404, path
            assert alice.get("/v1/sessions").json()["sessions"] == []
            file_input = {
                "input": [{"role": "user", "content": [{"type": "input_file", "file_id": old["upload"]}]}]
            }
            assert alice.post("/v1/responses", json=file_input).json()["error"]["code"] == "file_not_found"
    finally:
        served.stop()
    with sqlite3.connect(database) as db:
        assert db.execute("SELECT MAX(version) FROM schema_migrations").fetchone()[0] == len(
            load_migrations()
        )
        assert {row[0] for row in db.execute("SELECT owner FROM uhp_idempotency")} == {"default"}


def test_white_space_around_a_token_is_dropped_and_a_blank_or_bad_one_refused(
    tmp_path: Path, scripted_model: ScriptedModel
) -> None:
    """A token exported with white space around it (a CI secret pasted with its line break) was
    compared whole: every request with the token was 401, and nothing said why."""
    served = start_serve(
        tmp_path / "serve",
        scripted_model,
        *PRINCIPALS,
        token=f"{TOKEN}\r\n",
        env={**ENV, "ALICE_TOKEN": f" {ALICE}\n"},
    )
    try:
        with uhp_client(served, TOKEN) as default, uhp_client(served, ALICE) as alice:
            assert default.get("/v1/sessions").status_code == 200
            assert alice.get("/v1/sessions").status_code == 200
    finally:
        served.stop()
    for environ, says in (
        ({"HARNEZ_SERVE_TOKEN": " \n"}, "HARNEZ_SERVE_TOKEN holds only white space"),
        (
            {"HARNEZ_SERVE_TOKEN": f"{TOKEN}\u201d"},
            "The token in HARNEZ_SERVE_TOKEN holds a control character",
        ),
    ):
        refused = subprocess.run(
            [str(HARNEZ), "serve", "--port", "0"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env=serve_environ(tmp_path, environ),
            timeout=30,
        )
        assert refused.returncode == 2 and refused.stderr.startswith(f"harnez: {says}"), refused.stderr
        assert TOKEN not in refused.stderr
