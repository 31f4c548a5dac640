"""Hooks from settings run at points of a task, over the scripted model: they see the event on stdin,
and their decisions send the task back, deny calls, annotate results, refuse prompts or end the task."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from harnez.settings import HookCommand, HookSettings, Settings
from harnez.testing.scripted_model import ScriptedModel
from tests.agent.helpers import (
    answer,
    events,
    kinds,
    make_settings,
    process_gone,
    run_task,
    tool_call,
    tool_outputs,
    user_texts,
)


def with_hooks(settings: Settings, **hooks: Any) -> Settings:
    """Settings whose own (global) hooks are these: hook name → list of commands (or a stop_limit)."""
    built = {
        name: [HookCommand(command=c) if isinstance(c, str) else c for c in value]
        if isinstance(value, list)
        else value
        for name, value in hooks.items()
    }
    return settings.model_copy(update={"hooks": HookSettings(**built)})


def once_then_allow(mark: Path, reason: str) -> str:
    """A hook that blocks (exit 2, the reason on stderr) the first time it runs, and allows after."""
    return f"if [ -e {mark} ]; then exit 0; fi; touch {mark}; echo {shlex.quote(reason)} >&2; exit 2"


async def test_a_stop_hook_sends_the_task_back_once_then_lets_it_finish(
    scripted_model: ScriptedModel, open_server, workspace: Path, tmp_path: Path
) -> None:
    seen = tmp_path / "stop-events.jsonl"
    hook = f"cat >> {seen}; echo >> {seen}; " + once_then_allow(tmp_path / "mark", "test_dates still fails")
    scripted_model.add(answer("Done, all fixed."), answer("Fixed test_dates too; done."))
    server = await open_server(with_hooks(make_settings(scripted_model), stop=[hook]))
    session_id, outcome = await run_task(server, workspace, "fix the tests")

    assert outcome.stop == "completed" and outcome.turns == 2
    ran = [e.body for e in await events(server, session_id, "hook-ran")]
    assert [(r.hook, r.decision, r.exit_code) for r in ran] == [("stop", "block", 2), ("stop", "allow", 0)]
    assert ran[0].reason == "test_dates still fails"
    told = user_texts(scripted_model.requests[1].body)[-1]
    assert told.startswith("A stop hook sent the task back to work (`") and told.endswith(
        "test_dates still fails."
    )
    first, second = (json.loads(line) for line in seen.read_text().splitlines())
    assert first["hook"] == "stop" and first["session"] == session_id and first["task"] == 1
    assert first["text"] == "Done, all fixed." and first["sent_back"] == 0 and first["answer"] is None
    assert first["workspace"] == str(workspace) and first["model"] == "chat/test-model"
    assert second["sent_back"] == 1 and second["turns"] == 2
    assert (await kinds(server, session_id))[-1] == "finished"


async def test_a_stop_hook_that_keeps_blocking_ends_the_task_at_its_limit(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    scripted_model.add(answer("done"), answer("done now"), answer("really done"))
    hook = "echo 'coverage is below 90%' >&2; exit 2"
    server = await open_server(with_hooks(make_settings(scripted_model), stop=[hook], stop_limit=2))
    session_id, outcome = await run_task(server, workspace, "raise the coverage")

    assert outcome.stop == "incomplete" and outcome.turns == 3
    assert "after 2 times (hooks.stop_limit)" in outcome.error and "coverage is below 90%" in outcome.error
    (exhausted,) = await events(server, session_id, "stop-hook-exhausted")
    assert exhausted.body.limit == 2 and exhausted.body.reason == "coverage is below 90%"
    assert [e.body.decision for e in await events(server, session_id, "hook-ran")] == ["block"] * 3
    assert len(scripted_model.requests) == 3


async def test_a_crashing_hook_ends_the_task_with_what_it_said(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    scripted_model.add(answer("done"))
    hook = "echo 'jq: command not found' >&2; exit 127"
    server = await open_server(with_hooks(make_settings(scripted_model), stop=[hook]))
    session_id, outcome = await run_task(server, workspace, "go")

    assert outcome.stop == "failed"
    assert outcome.error.startswith("The stop hook `echo 'jq: command not found' >&2; exit 127` failed")
    assert outcome.error.endswith("with exit code 127: jq: command not found.")
    (failed,) = await events(server, session_id, "hook-failed")
    assert failed.body.exit_code == 127 and not failed.body.timed_out and failed.body.message == outcome.error
    assert not await events(server, session_id, "hook-ran")


async def test_a_hook_past_its_timeout_is_killed_with_its_children_and_ends_the_task(
    scripted_model: ScriptedModel, open_server, workspace: Path, tmp_path: Path
) -> None:
    pids = tmp_path / "pids"
    hook = HookCommand(command=f"sleep 30 & echo $! > {pids}; wait", timeout=0.5)
    scripted_model.add(tool_call("read", "c1", path="nothing.txt"), answer("never"))
    server = await open_server(with_hooks(make_settings(scripted_model), pre_tool=[hook]))
    session_id, outcome = await run_task(server, workspace, "read it")

    assert outcome.stop == "failed" and "did not finish within 0.5 s and was killed" in outcome.error
    (failed,) = await events(server, session_id, "hook-failed")
    assert failed.body.timed_out and failed.body.exit_code is None and failed.body.call_id == "c1"
    assert process_gone(int(pids.read_text()))
    assert len(scripted_model.requests) == 1  # the task ended; the model was not called again
    assert len(await events(server, session_id, "tool-requested")) == 1
    assert not await events(server, session_id, "tool-completed")


async def test_a_pre_tool_hook_denies_a_call_and_the_model_hears_why(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    guard = (
        'python3 -c \'import json,sys; e=json.load(sys.stdin); c=e["arguments"]["command"]; '
        'print(json.dumps({"decision": "block", "reason": "no rm here"} if "rm " in c else {}))\''
    )
    scripted_model.add(
        tool_call("shell", "c1", command="rm -f precious.txt"),
        tool_call("shell", "c2", command="ls"),
        answer("ok"),
    )
    (workspace / "precious.txt").write_text("keep\n")
    guarded = HookCommand(command=guard, tools=["shell"])
    settings = make_settings(scripted_model, permissions={"shell": {"allow": ["*"]}})
    server = await open_server(with_hooks(settings, pre_tool=[guarded]))
    session_id, outcome = await run_task(server, workspace, "tidy up")

    assert outcome.stop == "completed" and (workspace / "precious.txt").exists()
    results = tool_outputs(scripted_model.requests[-1].body)
    assert results["c1"].startswith("[error] A pre_tool hook denied this shell call (`python3")
    assert results["c1"].endswith("no rm here. It did not run.")
    assert "precious.txt" in results["c2"]
    ran = [(e.body.call_id, e.body.decision) for e in await events(server, session_id, "hook-ran")]
    assert ran == [("c1", "block"), ("c2", "allow")]


async def test_post_tool_hooks_annotate_results_and_skip_tools_they_do_not_name(
    scripted_model: ScriptedModel, open_server, workspace: Path, tmp_path: Path
) -> None:
    seen = tmp_path / "post.json"
    lint = HookCommand(
        command=f'cat > {seen}; echo \'{{"context": "lint: 1 warning in notes.txt"}}\'', tools=["write"]
    )
    scripted_model.add(
        tool_call("write", "c1", path="notes.txt", content="hello\n"),
        tool_call("read", "c2", path="notes.txt"),
        answer("written"),
    )
    settings = make_settings(scripted_model, permissions={"mode": "accept-edits"})
    server = await open_server(with_hooks(settings, post_tool=[lint]))
    session_id, outcome = await run_task(server, workspace, "write notes")

    assert outcome.stop == "completed"
    results = tool_outputs(scripted_model.requests[-1].body)
    assert results["c1"].endswith("\n\n[post_tool hook] lint: 1 warning in notes.txt")
    assert "[post_tool hook]" not in results["c2"]
    event = json.loads(seen.read_text())
    assert event["hook"] == "post_tool" and event["name"] == "write" and event["call_id"] == "c1"
    assert event["arguments"] == {"path": "notes.txt", "content": "hello\n"} and event["is_error"] is False
    (ran,) = await events(server, session_id, "hook-ran")
    assert ran.body.context == "lint: 1 warning in notes.txt"


async def test_prompt_submit_hooks_add_context_or_refuse_the_prompt(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    context = 'echo \'{"context": "The release branch is frozen."}\''
    refuse = 'grep -q secret && { echo "prompts may not mention secrets" >&2; exit 2; } || exit 0'
    scripted_model.add(answer("noted"))
    server = await open_server(with_hooks(make_settings(scripted_model), prompt_submit=[context, refuse]))
    session_id, outcome = await run_task(server, workspace, "plan the release")

    assert outcome.stop == "completed"
    assert user_texts(scripted_model.requests[0].body)[-1] == (
        "plan the release\n\n[prompt_submit hook] The release branch is frozen."
    )
    _, refused = await run_task(server, workspace, "print the secret", session_id)
    assert refused.stop == "failed" and refused.turns == 0
    assert refused.error.endswith("prompts may not mention secrets.")
    assert refused.error.startswith("A prompt_submit hook refused this prompt (`grep")
    assert len(scripted_model.requests) == 1  # the refused prompt never reached the model
    scripted_model.add(answer("fine"))
    await run_task(server, workspace, "what next?", session_id)
    assert "print the secret" not in " ".join(user_texts(scripted_model.requests[-1].body))


async def test_hooks_run_without_the_credential_variables_the_shell_tool_withholds(
    scripted_model: ScriptedModel, open_server, workspace: Path, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-hook-0123456789abcdefghij")
    monkeypatch.setenv("HARNEZ_TEST_VISIBLE", "yes")
    environment = tmp_path / "env.txt"
    scripted_model.add(answer("done"))
    server = await open_server(with_hooks(make_settings(scripted_model), stop=[f"env > {environment}"]))
    await run_task(server, workspace, "go")

    seen = environment.read_text()
    assert "HARNEZ_TEST_VISIBLE=yes" in seen
    assert "OPENAI_API_KEY" not in seen and "sk-test-hook" not in seen


async def test_a_decision_that_cannot_be_read_ends_the_task(
    scripted_model: ScriptedModel, open_server, workspace: Path
) -> None:
    scripted_model.add(answer("done"))
    hook = 'echo \'{"decision": "blok"}\''
    server = await open_server(with_hooks(make_settings(scripted_model), stop=[hook]))
    session_id, outcome = await run_task(server, workspace, "go")

    assert (
        outcome.stop == "failed" and 'printed the decision \'blok\'; use "allow" or "block".' in outcome.error
    )
    assert len(await events(server, session_id, "hook-failed")) == 1


async def test_a_stop_hook_sees_the_answer_and_the_last_answer_before_the_end_is_the_one(
    scripted_model: ScriptedModel, open_server, workspace: Path, tmp_path: Path
) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    check = (
        'python3 -c \'import json,sys; e=json.load(sys.stdin); n=e["answer"]["n"]; '
        'print(json.dumps({"decision": "block", "reason": "n must be even"} if n % 2 else {}))\''
    )
    scripted_model.add(
        {"reply": [{"tool_call": {"name": "answer", "id": "a1", "arguments": {"n": 3}}}]},
        {"reply": [{"tool_call": {"name": "answer", "id": "a2", "arguments": {"n": 4}}}]},
    )
    server = await open_server(with_hooks(make_settings(scripted_model), stop=[check]))
    session_id, outcome = await run_task(server, workspace, "pick n", output_schema=schema)

    assert outcome.stop == "completed" and outcome.turns == 2
    stored = await server.events_after(session_id)
    answers = [e.body.answer for e in stored if e.kind == "answered"]
    assert answers == [{"n": 3}, {"n": 4}]
    last = max(e.seq for e in stored if e.kind == "answered")
    after = [e.kind for e in stored if e.seq > last and e.kind != "title-changed"]
    assert after == ["hook-ran", "finished"]
