"""Every fixture reads to the facts EXPECTED.dev.json counted from the raw file, and the goldens agree."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harnez.importers import Readers
from harnez.importers.normalized import AssistantTurn, ToolResult, UserMessage
from tests.importers.conftest import FIXTURES, expected, is_real

EXPECTED = expected()
FILES = sorted(name for name, facts in EXPECTED.items() if not facts["format"].startswith("opencode"))
REAL_FILES = [name for name in FILES if is_real(name)]
OPENCODE = sorted(name for name, facts in EXPECTED.items() if facts["format"].startswith("opencode"))


def summaries(path: Path, harness: str | None = None) -> list[dict[str, Any]]:
    with Readers() as readers:
        return [
            s.to_json()
            for ref in readers.refs_for(path, harness)
            for s in readers[ref.harness].summarize(ref)
        ]


def main_summary(name: str) -> dict[str, Any]:
    found = [s for s in summaries(FIXTURES / name) if not (s["agent_id"] or "").startswith("sidechain")]
    assert len(found) == 1, found
    return found[0]


def claude_usage(raw: dict | None) -> dict | None:
    return (
        None
        if raw is None
        else {
            "input": raw["input_tokens"],
            "output": raw["output_tokens"],
            "cache_read": raw["cache_read_input_tokens"],
            "cache_write": raw["cache_creation_input_tokens"],
        }
    )


def expected_figures(facts: dict[str, Any]) -> dict[str, Any]:
    """The summary fields a reader must reproduce, in the summary's terms."""
    fmt = facts["format"]
    figures = {
        "session_id": facts["session_id"],
        "user_messages": facts["user_turns"],
        "tool_calls": facts["tool_calls"],
        "tool_results": facts["tool_results"],
        "models": sorted(facts["models"]),
        "records": facts["integrity"]["lines"],
        "unparsed_records": len(facts["integrity"]["unparsed_lines"]),
        "torn_tail": facts["integrity"]["torn_tail"],
    }
    if fmt == "claude-code":
        figures |= {
            "model_calls": facts["assistant_messages"],
            "usage": claude_usage(facts["usage"]),
            "compactions": facts["compaction"]["compact_boundary"],
            "started_at": facts["min_timestamp"],
            "ended_at": facts["max_timestamp"],
        }
    elif fmt == "codex":
        usage = facts["usage"]
        total = usage["final_total_token_usage"] if usage else None
        figures |= {
            "model_calls": facts["model_calls_from_token_count"],
            "compactions": facts["compaction"]["compacted"],
            "usage": None
            if usage is None
            else {
                "input": usage["input_uncached"],
                "output": total["output_tokens"],
                "cache_read": total["cached_input_tokens"],
                "cache_write": total.get("cache_write_input_tokens"),
            },
            "started_at": facts["session_meta"][0]["timestamp"],
            "ended_at": facts["last_timestamp"],
        }
    else:
        usage = facts["usage"]
        figures |= {
            "model_calls": facts["assistant_messages"],
            "compactions": facts["compaction_entries"],
            "usage": None
            if usage is None
            else {
                "input": usage["input"],
                "output": usage["output"],
                "cache_read": usage["cacheRead"],
                "cache_write": usage["cacheWrite"],
            },
            "started_at": facts["min_timestamp"],
            "ended_at": facts["max_timestamp"],
        }
    return figures


def summary_figures(summary: dict[str, Any]) -> dict[str, Any]:
    usage = summary["usage"]
    return {
        "session_id": summary["session_id"],
        "user_messages": summary["user_messages"],
        "tool_calls": summary["tool_calls"],
        "tool_results": summary["tool_results"],
        "models": sorted(summary["models"]),
        "records": summary["integrity"]["records"],
        "unparsed_records": summary["integrity"]["unparsed_records"],
        "torn_tail": summary["integrity"]["torn_tail"],
        "model_calls": summary["model_calls"],
        "usage": None
        if usage is None
        else {k: usage[k] for k in ("input", "output", "cache_read", "cache_write")},
        "started_at": summary["started_at"],
        "ended_at": summary["ended_at"],
        "compactions": summary["compactions"],
    }


@pytest.mark.parametrize("name", REAL_FILES)
def test_a_real_session_file_reads_to_the_counted_facts(fixtures: Path, name: str) -> None:
    assert summary_figures(main_summary(name)) == expected_figures(EXPECTED[name])


@pytest.mark.parametrize("name", [n for n in OPENCODE if is_real(n)])
def test_the_opencode_database_reads_to_the_counted_facts(fixtures: Path, name: str) -> None:
    facts = EXPECTED[name]
    found = {s["session_id"]: s for s in summaries(fixtures / name)}
    assert set(found) == set(facts["sessions"])
    for session_id, want in facts["sessions"].items():
        got = found[session_id]
        usage = want["usage_from_step_finish"]
        assert (got["user_messages"], got["model_calls"], got["tool_calls"], got["tool_results"]) == (
            want["user_turns"],
            want["assistant_messages"],
            want["tool_calls"],
            want["tool_results"],
        )
        assert {k: got["usage"][k] for k in ("input", "output", "cache_read", "cache_write")} == {
            "input": usage["input"],
            "output": usage["output"],
            "cache_read": usage["cache_read"],
            "cache_write": usage["cache_write"],
        }
        assert got["models"] == want["models"]
        assert (got["title"], got["cwd"]) == (want["session_row"]["title"], want["session_row"]["directory"])


def test_a_summary_and_a_full_read_agree_on_every_fixture(fixtures: Path) -> None:
    with Readers() as readers:
        for ref in readers.refs_for(fixtures):
            reader = readers[ref.harness]
            streamed = [s.to_json() for s in reader.summarize(ref)]
            whole = [session.summary().to_json() for session in reader.read(ref)]
            assert streamed == whole, ref.label


@pytest.mark.parametrize("name", [n for n in REAL_FILES if "torn" in n])
def test_a_torn_copy_reports_its_tail_and_still_reads(fixtures: Path, name: str) -> None:
    with Readers() as readers:
        [ref] = readers.refs_for(fixtures / name)
        [session] = readers[ref.harness].read(ref)
    assert session.info.integrity.torn_tail is True
    assert session.info.integrity.unparsed_records == 0
    assert any(isinstance(e, UserMessage) and e.kind == "prompt" for e in session.entries)
    assert any(isinstance(e, AssistantTurn) and e.text for e in session.entries)


@pytest.mark.parametrize("name", sorted({n for n in EXPECTED if not is_real(n)}))
def test_a_not_real_folder_reads_without_crashing(fixtures: Path, name: str) -> None:
    with Readers() as readers:
        refs = readers.refs_for(fixtures / name)
        assert refs
        for ref in refs:
            for session in readers[ref.harness].read(ref):
                assert session.info.session_id
                json.dumps(session.to_json())


GOLDENS = (
    sorted(str(p.relative_to(FIXTURES)) for p in FIXTURES.glob("*/lazyagents-*/golden.json"))
    if FIXTURES.is_dir()
    else []
)


@pytest.mark.parametrize("golden", GOLDENS)
def test_a_lazyagents_golden_is_reproduced(fixtures: Path, golden: str) -> None:
    folder = (fixtures / golden).parent
    [want] = json.loads((fixtures / golden).read_text(encoding="utf-8"))["sessions"]
    with Readers() as readers:
        [ref] = readers.refs_for(folder / "home")
        [session] = readers[ref.harness].read(ref)
    summary = session.summary().to_json()
    assert (summary["session_id"], summary["cwd"]) == (want["id"], want["cwd"])
    assert transcript(session) == [(t["Role"], t["Text"]) for t in want["transcript"]]
    events = want.get("events")
    if events:
        assert summary["model_calls"] == events["responses"]
        assert summary["models"] == [
            f"{(ref.harness == 'pi' and 'fake/') or ''}{m}" for m in events["models"]
        ]
        usage = events["usage"]
        assert {k: summary["usage"][k] for k in ("input", "output", "cache_read", "cache_write")} == {
            "input": usage["Input"],
            "output": usage["Output"],
            "cache_read": usage["CacheRead"],
            "cache_write": usage["CacheWrite"],
        }
        if usage["Cost"]:
            assert summary["usage"]["cost"] == pytest.approx(usage["Cost"])
    if ref.harness in ("pi", "opencode"):
        assert session.title == want["title"]


def transcript(session: Any) -> list[tuple[str, str]]:
    """The golden's transcript shape: prompts, `tool · command` lines, answers."""
    rows: list[tuple[str, str]] = []
    for entry in session.entries:
        if isinstance(entry, UserMessage) and entry.kind == "prompt":
            rows.append(("user", entry.text))
        elif isinstance(entry, AssistantTurn):
            for call in entry.tool_calls:
                command = call.arguments.get("command") or call.arguments.get("cmd")
                rows.append(("tool", f"{call.name} · {command}"))
            if entry.text:
                rows.append(("assistant", entry.text))
    return rows


def test_tool_results_follow_their_calls_in_every_real_file(fixtures: Path) -> None:
    with Readers() as readers:
        for ref in readers.refs_for(fixtures):
            if not is_real(ref.label):
                continue
            for session in readers[ref.harness].read(ref):
                called: set[str] = set()
                for entry in session.entries:
                    if isinstance(entry, AssistantTurn):
                        called |= {c.id for c in entry.tool_calls}
                    elif isinstance(entry, ToolResult):
                        assert entry.call_id in called, (ref.label, entry.call_id)
