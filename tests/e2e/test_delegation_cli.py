"""A delegation through `harnez run`: the child is hidden from `harnez sessions` and reachable by `show`."""

from __future__ import annotations

from tests.agent.agents_support import delegate, reviewer
from tests.e2e.helpers import HeadlessWorkspace, json_lines


def test_sessions_lists_the_parent_only_and_show_links_parent_and_child(headless: HeadlessWorkspace) -> None:
    reviewer(headless.path)
    headless.model.add(
        delegate("d1", "reviewer", "Review the parser"),
        {"reply": [{"text": "The parser has no bug."}]},
        {"reply": [{"text": "All clear, says the reviewer."}]},
    )
    done = headless.harnez("run", "--json", "--input", "review it")
    assert done.returncode == 0, done.stderr
    events = json_lines(done.stdout)
    (started,) = [e for e in events if e["kind"] == "started"]
    assert started["agents"] == ["reviewer"]
    (began,) = [e for e in events if e["kind"] == "delegate-started"]
    parent, child = events[0]["session"], began["child"]
    assert [e["text"] for e in events if e["kind"] == "delegated"] == ["The parser has no bug."]

    for listing in (["--json"], ["--all", "--json"], ["--search", "parser", "--json"]):
        listed = json_lines(headless.harnez("sessions", *listing).stdout)
        assert [s["id"] for s in listed] == ([] if "parser" in listing else [parent]), listing
    shown = headless.harnez("sessions", "show", parent)
    assert shown.returncode == 0, shown.stderr
    assert "sub-agent sessions" in shown.stdout
    assert f"[sub-agent] reviewer in session {child[:12]} (harnez sessions show {child[:12]})" in shown.stdout
    (line,) = [line for line in shown.stdout.splitlines() if line.startswith(f"  {child[:12]}")]
    assert "reviewer" in line and "completed" in line and "Review the parser" in line
    opened = headless.harnez("sessions", "show", child[:12])
    assert opened.returncode == 0, opened.stderr
    assert f"sub-agent reviewer of session {parent} (call d1)" in opened.stdout
    assert "The parser has no bug." in opened.stdout and "All clear" not in opened.stdout
