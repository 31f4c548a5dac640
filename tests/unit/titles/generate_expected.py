"""Rewrite the titles in expected_titles.json from the current keyword_title; review the diff by eye."""

from __future__ import annotations

import json
from pathlib import Path

from harnez.titles.keywords import keyword_title

TABLE = Path(__file__).with_name("expected_titles.json")


def main() -> None:
    """Fill in every case's title from keyword_title and print them for review."""
    cases = json.loads(TABLE.read_text(encoding="utf-8"))
    for case in cases:
        case["title"] = keyword_title(case["prompt"])
        print(f"{case['name']:<28} {case['title']!r}")
    TABLE.write_text(json.dumps(cases, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
