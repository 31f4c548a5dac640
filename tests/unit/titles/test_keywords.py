"""Keyword titles: exact titles for a table of prompts, title properties, cleaning and lazy YAKE."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from harnez.titles.keywords import (
    MAX_TITLE_CHARS,
    TITLE_JOINER,
    excerpt_title,
    keyword_title,
    keyword_title_async,
)

TABLE = json.loads(Path(__file__).with_name("expected_titles.json").read_text(encoding="utf-8"))
CASE_IDS = [case["name"] for case in TABLE]
REPO = Path(__file__).resolve().parents[3]


def test_the_table_is_large_and_checked_in_with_titles() -> None:
    assert len(TABLE) >= 30
    assert all(isinstance(case["title"], str) for case in TABLE)
    assert any(len(case["prompt"]) >= 2000 for case in TABLE)


@pytest.mark.parametrize("case", TABLE, ids=CASE_IDS)
def test_keyword_title_matches_the_reviewed_table(case: dict[str, str]) -> None:
    assert keyword_title(case["prompt"]) == case["title"]


@pytest.mark.parametrize("case", TABLE, ids=CASE_IDS)
def test_a_title_is_one_short_clean_line(case: dict[str, str]) -> None:
    title = keyword_title(case["prompt"])
    assert len(title) <= MAX_TITLE_CHARS
    assert "\n" not in title and "  " not in title and title == title.strip()
    assert not [char for char in title if unicodedata.category(char) in {"Cc", "Cf"}]


@pytest.mark.parametrize("case", TABLE, ids=CASE_IDS)
def test_the_two_phrases_share_no_word(case: dict[str, str]) -> None:
    phrases = keyword_title(case["prompt"]).split(TITLE_JOINER)
    assert len(phrases) <= 2
    if len(phrases) == 2:
        first, second = (set(re.findall(r"\w+", phrase.lower())) for phrase in phrases)
        assert not first & second


@pytest.mark.parametrize("case", TABLE, ids=CASE_IDS)
def test_an_excerpt_is_one_short_clean_line(case: dict[str, str]) -> None:
    excerpt = excerpt_title(case["prompt"])
    assert len(excerpt) <= MAX_TITLE_CHARS
    assert "\n" not in excerpt and "```" not in excerpt


def test_acronyms_and_identifiers_keep_the_users_casing() -> None:
    title = keyword_title("Why does the HTTP API call getUserById in user_repo.py twice?")
    assert "HTTP API" in title
    assert "getUserById" in title or "user_repo.py" in title


def test_a_plain_first_word_is_capitalised_but_code_is_not() -> None:
    assert keyword_title("fix login bug") == "Fix login bug"
    assert keyword_title("```\nfrobnicate_widget(x)\n```").startswith("frobnicate_widget")


def test_prose_with_no_words_counts_as_a_code_only_prompt() -> None:
    assert excerpt_title("???\n```\nmake_widget()\n```") == "make_widget()"


def test_a_fenced_stack_trace_does_not_dominate_the_question() -> None:
    prompt = (
        "Why does the settings import crash?\n```\nTraceback (most recent call last):\n"
        '  File "a.py", line 1, in <module>\n    import zzzmodule\n'
        "ModuleNotFoundError: No module named zzzmodule\n```"
    )
    title = keyword_title(prompt)
    assert "settings" in title.lower()
    assert "zzzmodule" not in title and "Traceback" not in title


def test_a_prompt_with_nothing_left_after_cleaning_has_no_title() -> None:
    for prompt in ["", "   \n\t", "```\n```", "\x00\x1b\u200b", "*** --- !!!", "<br/>"]:
        assert keyword_title(prompt) == ""
        assert excerpt_title(prompt) == ""


MENTIONED = {
    "@src/foo/bar.py fix the parser crash in @tests/test_x.py": "bar.py — parser crash",
    "fix @src/foo/bar.py": "Fix bar.py",
    "@src/app.ts the login button does nothing": "app.ts — login button",
    "why is @tests/test_store.py flaky when the WAL checkpoint runs": "test_store.py — WAL checkpoint runs",
    "add type hints to @harnez/store/events.py and @harnez/store/db.py": "Add type hints — events.py",
    'refactor @"My Notes/to do.md" into sections': "Refactor to do.md — sections",
    "@src/a.py @src/b.py": "a.py b.py",
    "@dataclass fields are not frozen in @models.py": "@dataclass fields — models.py",
    "email me@example.com about the outage": "Email me@example.com — outage",
}
"""Prompts with `@` mentions and their titles: a mentioned file reads as its name (the `@` and the
folders go), on its own or after the words before it, never glued to the words after it; a bare
`@word` is no path and stays; a prompt of mentions only is their names."""


@pytest.mark.parametrize("prompt", MENTIONED)
def test_a_mentioned_file_reads_as_its_name_in_the_title(prompt: str) -> None:
    assert keyword_title(prompt) == MENTIONED[prompt]


def test_an_excerpt_names_mentioned_files_by_their_names() -> None:
    assert (
        excerpt_title("hello @src/deep/README.md, @notes/ and @alice!")
        == "hello README.md, notes and @alice!"
    )


def test_an_excerpt_collapses_whitespace_and_drops_control_characters() -> None:
    assert excerpt_title("  fix\t\tthe\n\nthing\x07 now\u200b  ") == "fix the thing now"


def test_an_excerpt_strips_markup_but_keeps_link_text() -> None:
    prompt = "# Title\n**bold** and _it_ and ~~gone~~ see [the docs](http://x.y/z) <b>tag</b> `code`"
    assert excerpt_title(prompt) == "Title bold and it and gone see the docs tag code"


def test_an_excerpt_keeps_snake_case_and_generics() -> None:
    assert excerpt_title("rename my_var_name in Vec<String>") == "rename my_var_name in Vec<String>"


def test_a_long_excerpt_is_cut_at_a_word_with_an_ellipsis_inside_80() -> None:
    prompt = "please " + "refactor the storage layer " * 10
    excerpt = excerpt_title(prompt)
    assert len(excerpt) <= MAX_TITLE_CHARS and excerpt.endswith("…")
    assert prompt.startswith(excerpt[:-1]) and prompt[len(excerpt) - 1] == " "


def test_a_long_word_is_cut_hard_when_there_is_no_boundary() -> None:
    excerpt = excerpt_title("x" * 200)
    assert excerpt == "x" * (MAX_TITLE_CHARS - 1) + "…"


def test_an_excerpt_of_only_code_is_the_code_without_fences() -> None:
    assert excerpt_title("```python\nprint('hi')\n```") == "print('hi')"


async def test_the_async_title_equals_the_blocking_one() -> None:
    prompt = TABLE[0]["prompt"]
    assert await keyword_title_async(prompt) == keyword_title(prompt)


def _modules_after(code: str) -> set[str]:
    script = f"import sys, json\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=True
    )
    return set(json.loads(result.stdout.splitlines()[-1]))


def test_importing_the_titles_package_does_not_import_yake() -> None:
    modules = _modules_after("import harnez.titles, harnez.titles.keywords")
    assert "harnez.titles.keywords" in modules
    assert not {name for name in modules if name == "yake" or name.startswith("yake.")}


def test_warm_up_imports_yake() -> None:
    modules = _modules_after("from harnez.titles import warm_up; warm_up()")
    assert "yake" in modules
