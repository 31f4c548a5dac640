"""A last word longer than the index's prefixes is matched through the index's terms, with FTS5's results."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from harnez import events as ev
from harnez.events import Event
from harnez.server import Server
from harnez.store.readonly import ReadOnlyDatabase
from harnez.store.search import COMPLETIONS_MAX, fts_query

PROMPTS = [
    "the function returns early",
    "Functional tests fail on CI",
    "two FUNCTIONS share a name",
    "a funky bug in the parser",
    "the fonction in French, with café and Café",
    "nothing of note here",
    "an ordinary chat about the parser",
]


async def _seeded(db_path: Path, workspace: Path, prompts: list[str]) -> tuple[Server, dict[str, str]]:
    """A server over sessions of one prompt each; their ids by prompt."""
    server = await Server.open(db_path)
    ids = {}
    for prompt in prompts:
        draft = server.create_session(workspace, model="local/qwen")
        await server.append(draft.id, Event(ev.UserMessage(text=prompt), search_text=prompt))
        ids[prompt] = draft.id
    return server, ids


def _folded(word: str) -> str:
    """A word as the index's tokenizer keeps it (for the words of these prompts)."""
    return word.strip(",.").lower().replace("é", "e")


def _expected(ids: dict[str, str], words: list[str]) -> set[str]:
    """The sessions whose prompt holds every word, the last as a prefix (any case, as the index folds)."""
    found = set()
    *whole, last = [_folded(w) for w in words]
    for prompt, session_id in ids.items():
        tokens = [_folded(t) for t in prompt.split()]
        if all(w in tokens for w in whole) and any(t.startswith(last) for t in tokens):
            found.add(session_id)
    return found


def test_a_query_names_the_completions_it_is_given_and_quotes_them() -> None:
    assert fts_query("the func") == '"the" AND "func"*'
    assert fts_query("the func", ["function", "functional"]) == '"the" AND ("function" OR "functional")'
    assert fts_query('say "hi', ['hi"x']) == '"say" AND ("hi""x")'


async def test_long_prefixes_match_the_same_sessions_with_and_without_the_list_of_terms(
    db_path: Path, workspace: Path, tmp_path: Path
) -> None:
    server, ids = await _seeded(db_path, workspace, PROMPTS)
    queries = ["func", "funct", "FUNCTION", "functions", "functionz", "the func", "parser", "cafe", "café"]
    try:
        listed = {q: await server.list_sessions(q, workspace, limit=20) for q in queries}
    finally:
        await server.close()
    for query, page in listed.items():
        assert {r.id for r in page.sessions} == _expected(ids, query.split()), query
    older = tmp_path / "older.sqlite"  # another project's database from before version 11, read as it is
    with sqlite3.connect(db_path) as source, sqlite3.connect(older) as copy:
        source.backup(copy)
        copy.execute("DROP TABLE search_terms")
    reader = ReadOnlyDatabase(older)
    try:
        for query, page in listed.items():
            hits = (await reader.search.search(query, str(workspace.resolve()), limit=20)).hits
            numbers = await reader.sessions.by_nums([hit.session_num for hit in hits])
            assert {numbers[hit.session_num].id for hit in hits} == {r.id for r in page.sessions}, query
    finally:
        reader.close()


async def test_a_prefix_begun_by_too_many_terms_is_left_to_fts5_and_finds_every_session(
    db_path: Path, workspace: Path
) -> None:
    prompts = [f"look at zetaword{n} again" for n in range(COMPLETIONS_MAX + 6)]
    server, ids = await _seeded(db_path, workspace, prompts)
    try:
        found = await server.list_sessions("zetaw", workspace, limit=len(prompts) + 1)
        few = await server.list_sessions("zetaword1", workspace, limit=len(prompts) + 1)
    finally:
        await server.close()
    assert {r.id for r in found.sessions} == set(ids.values())
    assert {r.id for r in few.sessions} == _expected(ids, ["zetaword1"])
    assert found.snippets[ids[prompts[3]]] == "look at [zetaword3] again"
