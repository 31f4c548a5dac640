"""Session titles: keyword titles from the first prompt (YAKE, imported lazily)."""

from __future__ import annotations

from harnez.titles.keywords import (
    MAX_TITLE_CHARS,
    TITLE_JOINER,
    clean_prompt,
    excerpt_title,
    keyword_title,
    keyword_title_async,
    warm_up,
)

__all__ = [
    "MAX_TITLE_CHARS",
    "TITLE_JOINER",
    "clean_prompt",
    "excerpt_title",
    "keyword_title",
    "keyword_title_async",
    "warm_up",
]
