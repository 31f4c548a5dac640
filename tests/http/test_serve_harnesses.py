"""`harnez serve`, Full class: harnesses created, updated and deleted; skills, MCP servers, disabled tools."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import httpx

from harnez.testing.scripted_model import ScriptedModel
from tests.http.conftest import HARNEZ, serve_environ, start_serve, uhp_client
from tests.http.helpers import Served, answer, sse_events, validate, writes

SKILL = {
    "name": "vault-manual",
    "enabled": True,
    "files": [
        {
            "path": "SKILL.md",
            "content": "---\nname: vault-manual\ndescription: How to open the vault.\n---\n\nSee refs.\n",
        },
        {"path": "references/codes.md", "content": "code 1234\n"},
        {"path": "assets/logo.bin", "content_b64": "AAECAwQF/w=="},
    ],
}


def _create(client: httpx.Client, **body) -> dict:
    made = client.post("/v1/harnesses", json={"name": "Research", "base": "harnez", **body})
    assert made.status_code == 200, made.text
    validate(made.json(), "Harness")
    return made.json()


def test_a_harness_is_created_updated_and_deleted_without_its_history(
    served: Served, client: httpx.Client
) -> None:
    made = _create(client, default_model="chat/scripted-model", system_prompt="Answer in French.", max_step=5)
    assert made["id"].startswith("chrn_") and made["defaultModel"] == "chat/scripted-model"
    assert (
        made["systemPrompt"] == "Answer in French." and made["maxStep"] == 5 and made["baseLabel"] == "Harnez"
    )
    served.model.add(answer("Bonjour."))
    task = client.post("/v1/responses", json={"input": "hi", "metadata": {"harness_id": made["id"]}}).json()
    assert task["metadata"]["harness_id"] == made["id"]
    system = json.dumps(served.model.requests[-1].body["messages"][0])
    assert "Answer in French." in system
    renamed = client.put(f"/v1/harnesses/{made['id']}", json={"name": "Renamed", "base": "harnez"}).json()
    assert renamed["name"] == "Renamed" and renamed["createdAt"] == made["createdAt"]
    assert renamed["systemPrompt"] == "Answer in French."  # keys left out keep their values
    moved = client.put(f"/v1/harnesses/{made['id']}", json={"base": "claude-code"})
    assert moved.status_code == 400 and moved.json()["error"]["param"] == "base"
    assert client.delete(f"/v1/harnesses/{made['id']}").json()["deleted"] is True
    assert client.get(f"/v1/harnesses/{made['id']}").json()["error"]["code"] == "harness_not_found"
    assert client.get(f"/v1/responses/{task['id']}").json()["status"] == "completed"
    assert client.get(f"/v1/sessions/{task['metadata']['session_id']}").status_code == 200
    orphan = client.post("/v1/responses", json={"input": "again", "previous_response_id": task["id"]})
    assert orphan.status_code == 404 and orphan.json()["error"]["code"] == "harness_not_found"


def test_an_unknown_base_is_refused_naming_the_supported_ones(client: httpx.Client) -> None:
    refused = client.post("/v1/harnesses", json={"name": "x", "base": "definitely-not-a-real-harness"})
    assert refused.status_code == 422
    validate(refused.json(), "ErrorEnvelope")
    assert refused.json()["error"]["code"] == "unsupported_base"
    assert refused.json()["error"]["detail"]["supported"] == ["harnez"]


def test_the_default_harness_cannot_be_changed_through_the_api(client: httpx.Client) -> None:
    default = next(h for h in client.get("/v1/harnesses").json()["harnesses"] if h.get("harnez_default"))
    assert client.put(f"/v1/harnesses/{default['id']}", json={"name": "mine"}).status_code == 403
    assert client.delete(f"/v1/harnesses/{default['id']}").status_code == 403


def test_a_skill_folder_round_trips_byte_for_byte_and_survives_a_rename(client: httpx.Client) -> None:
    made = _create(client, skills=[SKILL])
    files = client.get(f"/v1/harnesses/{made['id']}/skills/vault-manual/files").json()["files"]
    assert sorted(f["path"] for f in files) == ["SKILL.md", "assets/logo.bin", "references/codes.md"]
    assert next(f for f in files if f["path"] == "assets/logo.bin")["content_b64"] == "AAECAwQF/w=="
    read = client.get(f"/v1/harnesses/{made['id']}").json()
    client.put(
        f"/v1/harnesses/{made['id']}",
        json={
            "name": "renamed",
            "base": read["base"],
            "skills": read["skills"],
            "mcp_servers": read["mcpServers"],
            "disabled_tools": read["disabledTools"],
        },
    )
    client.put(f"/v1/harnesses/{made['id']}", json={"name": "renamed again"})
    again = client.get(f"/v1/harnesses/{made['id']}/skills/vault-manual/files").json()["files"]
    assert again == files


def test_bad_skill_bundles_are_refused_at_configuration_time(client: httpx.Client) -> None:
    bundles = [
        {"name": "no-manifest", "files": [{"path": "notes.md", "content": "x"}]},
        {"name": "escape", "files": [{"path": "SKILL.md", "content": "x"}, {"path": "../x", "content": "x"}]},
        {
            "name": "absolute",
            "files": [{"path": "SKILL.md", "content": "x"}, {"path": "/etc/x", "content": "x"}],
        },
        {"name": "bad b64", "files": [{"path": "SKILL.md", "content_b64": "not base64!"}]},
    ]
    for bundle in bundles:
        refused = client.post("/v1/harnesses", json={"name": "bad", "base": "harnez", "skills": [bundle]})
        assert refused.status_code in (400, 422), bundle
        assert refused.json()["error"]["code"] == "invalid_input"


def test_mcp_servers_and_disabled_tools_persist_and_credentials_are_refused(client: httpx.Client) -> None:
    mcp = [
        {
            "name": "vault",
            "url": "https://mcp.example.invalid/mcp",
            "transport": "http",
            "enabled": False,
            "auth": "env:VAULT_TOKEN",
        }
    ]
    made = _create(client, mcp_servers=mcp, disabled_tools=["WebSearch", "shell"])
    read = client.get(f"/v1/harnesses/{made['id']}").json()
    validate(read["mcpServers"][0], "McpServer")
    assert read["mcpServers"][0]["enabled"] is False and read["mcpServers"][0]["auth"] == "env:VAULT_TOKEN"
    assert read["disabledTools"] == ["WebSearch", "shell"]
    for entry in ({**mcp[0], "auth": "Bearer sk-live-123"}, {**mcp[0], "headers": {"Authorization": "x"}}):
        refused = client.post("/v1/harnesses", json={"base": "harnez", "mcp_servers": [entry]})
        assert refused.status_code == 400 and "sk-live" not in refused.text


def test_an_mcp_url_that_is_no_uri_and_an_enabled_that_is_no_boolean_are_refused(
    client: httpx.Client,
) -> None:
    # A harness is read back by typed clients that check `McpServer.url` (`format: uri`) and
    # `enabled` (boolean): such a value stored would break every later listing for them, and
    # `"enabled": "false"` read as truthy connected the server the client switched off.
    before = client.get("/v1/harnesses").json()["harnesses"]
    server = {"name": "vault", "url": "https://mcp.example.invalid/mcp"}
    cases = [
        ("mcp_servers", {**server, "url": "https://mcp example.invalid/mcp"}, "mcp_servers[0].url"),
        ("mcp_servers", {**server, "url": "https:///mcp"}, "mcp_servers[0].url"),
        ("mcp_servers", {**server, "url": "https://mcp.example.invalid/données"}, "mcp_servers[0].url"),
        ("mcp_servers", {**server, "enabled": "false"}, "mcp_servers[0].enabled"),
        ("skills", {"name": "tidy", "content": "# tidy\n", "enabled": "no"}, "skills[0].enabled"),
    ]
    for key, entry, param in cases:
        refused = client.post("/v1/harnesses", json={"base": "harnez", key: [entry]})
        assert refused.status_code == 400, (entry, refused.text)
        error = refused.json()["error"]
        assert error["code"] == "invalid_input" and error["param"] == param
    assert client.get("/v1/harnesses").json()["harnesses"] == before
    encoded = {**server, "url": "https://mcp.example.invalid:8443/a%20b?x=1", "enabled": None}
    kept = _create(client, mcp_servers=[encoded])
    assert kept["mcpServers"][0]["enabled"] is True


def test_fields_of_the_wrong_type_are_refused_naming_them_never_read_loosely(client: httpx.Client) -> None:
    # `default_model: 5` was refused as "The model reference is empty"; header values were stored as
    # str(value); `false`, `0` or `{}` where a list or text belongs were read as empty, and a string
    # where the MCP servers belong was read as a list of its characters.
    before = client.get("/v1/harnesses").json()["harnesses"]
    server = {"name": "vault", "url": "https://mcp.example.invalid/mcp"}
    skill = {"name": "tidy", "files": [{"path": "SKILL.md", "content": "# tidy\n"}]}
    cases = [
        ({"default_model": 5}, "default_model", "must be text"),
        ({"mcp_servers": [{**server, "headers": {"X-Team": 5}}]}, "mcp_servers[0].headers.X-Team", "text"),
        ({"mcp_servers": [{**server, "headers": "X-Team: 5"}]}, "mcp_servers[0].headers", "object"),
        ({"mcp_servers": "vault"}, "mcp_servers", "list"),
        ({"mcp_servers": {}}, "mcp_servers", "list"),
        ({"disabled_tools": False}, "disabled_tools", "list"),
        ({"skills": False}, "skills", "list"),
        ({"system_prompt": 0}, "system_prompt", "text"),
        ({"name": 7}, "name", "text"),
        ({"skills": [{**skill, "files": ["SKILL.md"]}]}, "skills[0].files[0]", "object"),
        (
            {"skills": [{**skill, "files": [*skill["files"], {"path": "a.bin", "content_b64": 5}]}]},
            "skills[0].files[1].content_b64",
            "text",
        ),
    ]
    for body, param, expected in cases:
        refused = client.post("/v1/harnesses", json={"base": "harnez", **body})
        assert refused.status_code == 400, (body, refused.text)
        error = refused.json()["error"]
        assert (error["code"], error["param"]) == ("invalid_input", param), (body, error)
        assert expected in error["message"], (body, error)
    assert client.get("/v1/harnesses").json()["harnesses"] == before
    made = _create(client, mcp_servers=[{**server, "headers": {"X-Team": "5"}}], system_prompt=None)
    assert made["mcpServers"][0]["headers"] == {"X-Team": "5"} and made["systemPrompt"] == ""
    changed = client.put(f"/v1/harnesses/{made['id']}", json={"default_model": 5})
    assert changed.status_code == 400 and changed.json()["error"]["param"] == "default_model"


def test_task_fields_of_the_wrong_type_are_refused_before_any_task(
    served: Served, client: httpx.Client
) -> None:
    # `"metadata": false` ran the task as if no metadata were sent, a role that is no text dropped
    # the message's words, a filename that is no text was replaced by "file", and `"model": ""` ran
    # the default model as if no model were sent.
    asked = len(served.model.requests)
    file_part = {"type": "input_file", "file_data": "data:text/plain,hi", "filename": 5}
    cases = [
        ({"input": "hi", "metadata": False}, "metadata"),
        ({"input": [{"role": 5, "content": "hi"}]}, "input[0].role"),
        ({"input": [{"role": "user", "content": [file_part]}]}, "input[0].content[0].filename"),
        ({"input": "hi", "model": ""}, "model"),
        ({"input": "hi", "model": "  "}, "model"),
        ({"input": "hi", "model": 5}, "model"),
    ]
    for body, param in cases:
        refused = client.post("/v1/responses", json=body)
        assert refused.status_code == 400, (body, refused.text)
        assert (refused.json()["error"]["code"], refused.json()["error"]["param"]) == ("invalid_input", param)
    assert len(served.model.requests) == asked
    served.model.add(answer("Hi."))
    ran = client.post("/v1/responses", json={"input": "hi", "model": None})  # null is still "absent"
    assert ran.status_code == 200 and ran.json()["status"] == "completed", ran.text


def _links_until_done(feed: httpx.Response) -> list[str]:
    """Every `download_url` of a feed's events, up to its first terminal event."""
    links: list[str] = []
    for event in sse_events(feed):
        text = json.dumps(event)
        links += [part.split('"')[0] for part in text.split('"download_url": "')[1:]]
        if event["type"] in ("response.completed", "response.failed", "response.incomplete"):
            return links
    raise AssertionError("the feed ended before its response")


def test_each_feed_connection_gets_links_under_the_name_it_reached_the_server_by(
    served: Served, client: httpx.Client
) -> None:
    # The feed is shared by a principal's connections, and its events were translated once with the
    # first connection's base URL: a client that came through another name (localhost, a proxy) got
    # links to 127.0.0.1, which may not reach the server from where it is.
    made = _create(client, name="Linked")
    path = f"/v1/harnesses/{made['id']}/events"
    port = served.url.rsplit(":", 1)[1]
    with (
        uhp_client(served) as first,
        uhp_client(served) as proxied,
        first.stream("GET", path) as near,
        proxied.stream("GET", path, headers={"Host": f"localhost:{port}"}) as far,
    ):
        served.model.add(*writes("report.txt", "linked"))
        done = client.post(
            "/v1/responses", json={"input": "write it", "metadata": {"harness_id": made["id"]}}
        )
        assert done.json()["status"] == "completed", done.text
        near_links, far_links = _links_until_done(near), _links_until_done(far)
    assert near_links and len(near_links) == len(far_links)
    assert all(link.startswith(f"{served.url}/v1/containers/") for link in near_links), near_links
    assert all(link.startswith(f"http://localhost:{port}/v1/containers/") for link in far_links), far_links
    assert [link.split(port, 1)[1] for link in far_links] == [link.split(port, 1)[1] for link in near_links]
    assert client.get(far_links[0].split(port, 1)[1]).content == b"linked"


def test_a_harness_runs_with_its_skills_budget_and_disabled_tools(
    served: Served, client: httpx.Client
) -> None:
    made = _create(client, skills=[SKILL], disabled_tools=["shell", "WebSearch"], max_step=1)
    served.model.add(
        {
            "reply": [
                {
                    "tool_call": {
                        "id": "c1",
                        "name": "read",
                        "arguments": {"path": f".uhp-skills/{made['id']}/vault-manual/references/codes.md"},
                    }
                }
            ]
        }
    )
    body = client.post(
        "/v1/responses", json={"input": "open the vault", "metadata": {"harness_id": made["id"]}}
    ).json()
    assert served.model.requests, body
    request = served.model.requests[-1].body
    offered = [tool["function"]["name"] for tool in request["tools"]]
    assert "shell" not in offered and "read" in offered
    system = request["messages"][0]["content"]
    assert "vault-manual" in system and "WebSearch" in system
    assert body["status"] == "incomplete" and body["incomplete_details"]["reason"] == "max_step"
    assert "code 1234" in body["output"][-1]["output"]  # the whole folder was there to read


def test_a_session_continued_by_harnez_run_keeps_its_harness(tmp_path: Path) -> None:
    """A session made over HTTP runs under its harness whichever front end continues it: `harnez run
    --resume` (like the TUI) gets the harness's system prompt and disabled tools."""
    with ScriptedModel() as model:
        served = start_serve(tmp_path, model)
        try:
            with uhp_client(served) as client:
                made = _create(client, system_prompt="Speak like a PLANTED-PIRATE.", disabled_tools=["shell"])
                model.add(answer("Arr."))
                first = client.post(
                    "/v1/responses", json={"input": "hi", "metadata": {"harness_id": made["id"]}}
                ).json()
                assert first["status"] == "completed", first
        finally:
            served.stop()
        model.add(answer("Arr again."))
        session = first["metadata"]["session_id"].removeprefix("hsess")
        ran = subprocess.run(
            [str(HARNEZ), "run", "--resume", session, "once more"],
            cwd=served.project,
            env=serve_environ(tmp_path),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert ran.returncode == 0, ran.stderr
        request = model.requests[-1].body
        assert "once more" in json.dumps(request["messages"])
        assert "PLANTED-PIRATE" in request["messages"][0]["content"]
        offered = [tool["function"]["name"] for tool in request["tools"]]
        assert "shell" not in offered and "read" in offered
