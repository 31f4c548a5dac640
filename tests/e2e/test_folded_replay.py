"""A streamed answer folded on disk replays, through the real executable, exactly as it streamed."""

from __future__ import annotations

import sqlite3

from tests.e2e.helpers import HeadlessWorkspace, json_lines


def _timeless(events: list[dict]) -> list[dict]:
    """Events without their time: read back after folding, a run's deltas carry its last one's."""
    return [{k: v for k, v in e.items() if k != "time"} for e in events]


def test_events_after_any_cursor_in_a_folded_answer_match_the_live_run(headless: HeadlessWorkspace) -> None:
    headless.model.add({"reply": [{"text": "one two three four five six"}], "delay_per_chunk": 0.06})
    live = json_lines(headless.harnez("run", "--json", "--input", "count for me").stdout)
    deltas = [e for e in live if e["kind"] == "text-delta"]
    assert len(deltas) >= 3, "the answer streamed as several deltas"
    assert "".join(e["text"] for e in deltas) == "one two three four five six"
    with sqlite3.connect(headless.database) as conn:
        (rows,) = conn.execute("SELECT count(*) FROM events WHERE kind = 'text-delta'").fetchone()
    # One row per run of deltas: the session's title may land between two of them, splitting the run.
    assert rows < len(deltas) and rows <= 2
    session = live[0]["session"]
    stored = json_lines(headless.harnez("events", "--session", session).stdout)
    assert _timeless([e for e in stored if e["seq"] <= live[-1]["seq"]]) == _timeless(live)
    for cursor in (deltas[0]["seq"] - 1, deltas[1]["seq"], deltas[-1]["seq"]):
        later = json_lines(headless.harnez("events", "--session", session, "--after", str(cursor)).stdout)
        assert later == stored[cursor:]
