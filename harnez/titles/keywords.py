"""Keyword titles: a session title from the first prompt by local YAKE extraction, no network."""

from __future__ import annotations

import asyncio
import re
import threading
import unicodedata
from dataclasses import dataclass
from typing import Any

from harnez.mentions import MENTION, TRAILING, mentioned, path_like

__all__ = [
    "MAX_TITLE_CHARS",
    "TITLE_JOINER",
    "clean_prompt",
    "clean_title",
    "excerpt_title",
    "keyword_title",
    "keyword_title_async",
    "warm_up",
]

MAX_TITLE_CHARS = 80
"""No title, keyword or excerpt, is longer than this (the ellipsis counts)."""

TITLE_JOINER = " — "
"""Joins the two phrases of a keyword title."""

ELLIPSIS = "…"
YAKE_INPUT_CHARS = 500
"""Only the start of a long prompt is given to YAKE: it bounds latency, and titles live there."""

_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n(.*?)(?:^[ \t]*\1[ \t]*$|\Z)", re.M | re.S)
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_AUTOLINK = re.compile(r"<((?:https?|ftp|mailto):[^>\s]+)>")
_HTML_TAG = re.compile(r"</[A-Za-z][\w-]*\s*>|(?<![\w<])<[A-Za-z][\w-]*(?:\s[^<>]*)?/?>")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]+", re.M)
_BLOCKQUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)+", re.M)
_LIST_MARK = re.compile(r"^[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?", re.M)
_RULE = re.compile(r"^[ \t]*([-*_])(?:[ \t]*\1){2,}[ \t]*$", re.M)
_TABLE_RULE = re.compile(r"^[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)*\|?[ \t]*$", re.M)
_EMPHASIS = (
    re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1"),
    re.compile(r"(?<![\w*])\*(?=\S)(.+?)(?<=\S)\*(?![\w*])"),
    re.compile(r"(?<![\w_])_(?=\S)(.+?)(?<=\S)_(?![\w_])"),
    re.compile(r"~~(?=\S)(.+?)(?<=\S)~~"),
)
_INLINE_CODE = re.compile(r"(`+)(.+?)\1", re.S)
_URL = re.compile(r"\b(?:https?|ftp)://\S+|\bwww\.\S+", re.I)
_FRAME_LINES = re.compile(
    r"^[ \t]*Traceback \(most recent call last\):[ \t]*$"
    r"|^[ \t]*File \"[^\"\n]*\", line \d+.*(?:\n[ \t]{4,}\S.*)?$"
    r"|^[ \t]*at [\w$.<>/\\-]+.*[(:]\d+.*$"
    r"|^[ \t]*\.\.\. \d+ more[ \t]*$",
    re.M,
)
_EDGE_PUNCT = ".,;:!?\"'`“”‘’«»()[]{}<>*"
_WORD = re.compile(r"\w+")
_IDENTIFIER = re.compile(r"[\w$@#~./\\:-]*\w")
_JOINED = re.compile(r"\w[./\\]\w|\w::\w")
_TOKEN_PUNCT = "-_./\\#@~'"
_PLACEHOLDER_PREFIX = "Zqx"


def clean_prompt(prompt: str) -> str:
    """The prose of a prompt on one line: code fences, markup and control characters removed, each
    `@path` mention reduced to its file name (`@src/app.py` → `app.py`).

    A prompt that is only code falls back to the code itself, with its fences removed.
    """
    return " ".join(_file_names(line) for line in _clean_lines(prompt)[0])


def clean_title(title: str) -> str:
    """A title as stored, whoever wrote it: one line, control and format characters dropped,
    at most 80 characters (cut like an excerpt). A person's name keeps its markup and casing."""
    return _shorten(_collapse(title))


def excerpt_title(prompt: str) -> str:
    """A cleaned excerpt of the prompt, at most 80 characters; "" when no letter or digit is left."""
    text = clean_prompt(prompt)
    return _shorten(text) if any(char.isalnum() for char in text) else ""


def keyword_title(prompt: str) -> str:
    """Up to two non-overlapping YAKE phrases joined by " — ", else the excerpt (blocking)."""
    lines, is_code = _clean_lines(prompt)
    if not any(char.isalnum() for line in lines for char in line):
        return ""
    excerpt = _shorten(" ".join(_file_names(line) for line in lines))
    if not any(char.isalnum() for line in lines for char in MENTION.sub(" ", line)):
        return excerpt  # only mentions: their file names
    source, identifiers = _protect_identifiers(*_mentions_as_words(_yake_input(lines)))
    phrases = _choose_phrases(source, _extract(source), identifiers)
    if not phrases:
        return excerpt
    return _join(phrases, capitalise=not is_code)


async def keyword_title_async(prompt: str) -> str:
    """`keyword_title` in a worker thread, so neither the YAKE import nor its work blocks the loop."""
    return await asyncio.to_thread(keyword_title, prompt)


def warm_up() -> None:
    """Import YAKE and build the extractor; call it from a background thread after first paint."""
    _extractor()


# -- cleaning ---------------------------------------------------------------------------------


def _clean_lines(prompt: str) -> tuple[list[str], bool]:
    """The prompt's prose lines, cleaned; or its code lines (and True) when it has no prose."""
    text = prompt.replace("\r\n", "\n").replace("\r", "\n")
    prose = _nonblank_lines(_strip_markup(_FENCE.sub("\n", text)))
    if any(char.isalnum() for line in prose for char in line):
        return prose, False
    code = "\n".join(match.group(2) for match in _FENCE.finditer(text))
    return _nonblank_lines(_strip_markup(code)), True


def _nonblank_lines(text: str) -> list[str]:
    lines = (_collapse(line) for line in text.split("\n"))
    return [line for line in lines if line]


def _strip_markup(text: str) -> str:
    text = _HTML_COMMENT.sub(" ", text)
    text = _FRAME_LINES.sub(" ", text)
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _AUTOLINK.sub(r"\1", text)
    text = _HTML_TAG.sub(" ", text)
    for pattern in (_RULE, _TABLE_RULE, _HEADING, _BLOCKQUOTE, _LIST_MARK):
        text = pattern.sub("", text)
    text = _INLINE_CODE.sub(lambda match: match.group(2).strip(), text)
    for pattern in _EMPHASIS:
        text = pattern.sub(lambda match: match.group(match.lastindex or 1), text)
    return text


def _collapse(text: str) -> str:
    """Whitespace runs become one space; control and format characters go."""
    kept = []
    for char in text:
        if char.isspace():
            kept.append(" ")
        elif unicodedata.category(char) not in {"Cc", "Cf", "Cs", "Co"}:
            kept.append(char)
    return " ".join("".join(kept).split())


def _shorten(text: str, limit: int = MAX_TITLE_CHARS) -> str:
    """Cut at a word boundary when one is in the second half, adding an ellipsis inside the limit."""
    if len(text) <= limit:
        return text
    head = text[: limit - len(ELLIPSIS) + 1]
    space = head.rfind(" ")
    head = head[:space] if space >= limit // 2 else head[: limit - len(ELLIPSIS)]
    return head.rstrip(" ,;:-—") + ELLIPSIS


# -- extraction -------------------------------------------------------------------------------


_extractor_lock = threading.Lock()
_extractor_cache: list[Any] = []


def _extractor() -> Any:
    """The one YAKE extractor, imported and built on first use (thread-safe)."""
    with _extractor_lock:
        if not _extractor_cache:
            import yake  # deferred: ~0.4 s, never on start-up or the UI thread

            _extractor_cache.append(yake.KeywordExtractor(lan="en", n=3, dedup_lim=0.9, top=20))
        return _extractor_cache[0]


def _extract(text: str) -> list[str]:
    """YAKE's candidate phrases, best first, minus those with a stopword inside."""
    extractor = _extractor()
    with _extractor_lock:  # the extractor keeps caches that are not thread-safe
        found = extractor.extract_keywords(text)
    stopwords = extractor.stopword_set
    return [phrase for phrase, _score in found if not _has_inner_stopword(phrase, stopwords)]


def _has_inner_stopword(phrase: str, stopwords: set[str]) -> bool:
    return any(word.lower() in stopwords for word in phrase.split()[1:-1])


def _yake_input(lines: list[str]) -> str:
    """Lines become sentences (so a heading does not run into the next line), URLs go, length capped."""
    sentences = [line if line[-1] in ".!?:;。！？：" else line + "." for line in lines]
    text = _collapse(_URL.sub(" ", " ".join(sentences)))
    if len(text) <= YAKE_INPUT_CHARS:
        return text
    cut = text[:YAKE_INPUT_CHARS]
    return cut[: cut.rfind(" ")] if " " in cut else cut


def _file_names(text: str) -> str:
    """Each path-like `@` mention reduced to its file name: the `@` is how the person attached the
    file, and the folders are noise in a title (`@src/foo/bar.py` → `bar.py`)."""
    return MENTION.sub(lambda match: "".join(_file_name(match) or match.group(0)), text)


def _mentions_as_words(text: str) -> tuple[str, dict[str, str]]:
    """Each path-like mention replaced by a placeholder word standing for its file name (one word,
    spaces and all), ended like a clause: YAKE may pick the file name as a phrase or after the words
    before it (`fix bar.py`), never glued to the words after it (`bar.py fix`)."""
    files: dict[str, str] = {}

    def placeholder(match: re.Match[str]) -> str:
        named = _file_name(match)
        if named is None:
            return match.group(0)
        name, trail = named
        key = next((key for key, value in files.items() if value == name), None)
        key = key or _PLACEHOLDER_PREFIX + _letters(len(files))
        files[key] = name
        ended = trail or match.string[match.end() : match.end() + 1] in TRAILING
        return key + (trail if ended else ",")

    return MENTION.sub(placeholder, text), files


def _file_name(match: re.Match[str]) -> tuple[str, str] | None:
    """The file name a mention names and the punctuation that ended its sentence (`@src/a.py.` →
    `a.py`, `.`); None for a bare word (`@dataclass`, `@alice`), which stays as written."""
    raw = mentioned(match)
    path = raw.rstrip(TRAILING) or raw
    if not path_like(path):
        return None
    return path.rstrip("/").rsplit("/", 1)[-1] or path, raw[len(path) :]


def _protect_identifiers(text: str, files: dict[str, str] | None = None) -> tuple[str, dict[str, str]]:
    """Replace code identifiers by placeholder words, which YAKE's tokenizer cannot split (`files`:
    the placeholders already in the text, for mentioned files)."""
    identifiers: dict[str, str] = dict(files or {})

    def placeholder(match: re.Match[str]) -> str:
        token = match.group(0)
        if not _is_identifier(token):
            return token
        key = next((key for key, value in identifiers.items() if value == token), None)
        key = key or _PLACEHOLDER_PREFIX + _letters(len(identifiers))
        identifiers[key] = token
        return key

    return _IDENTIFIER.sub(placeholder, text), identifiers


def _is_identifier(token: str) -> bool:
    has_digit_and_letter = any(c.isdigit() for c in token) and any(c.isalpha() for c in token)
    return "_" in token or bool(_JOINED.search(token)) or has_digit_and_letter


def _letters(number: int) -> str:
    """0 → "a", 25 → "z", 26 → "ba": a placeholder suffix made of letters only."""
    digits = ""
    while True:
        number, rest = divmod(number, 26)
        digits = chr(ord("a") + rest) + digits
        if number == 0:
            return digits


# -- phrase choice ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Phrase:
    """A phrase as the user wrote it, where it starts in the prompt, and its word stems."""

    text: str
    start: int
    stems: frozenset[str]


def _choose_phrases(source: str, candidates: list[str], identifiers: dict[str, str]) -> list[_Phrase]:
    """The best phrase, then the best one sharing no word stem with it, in prompt order."""
    chosen: list[_Phrase] = []
    for candidate in candidates:
        phrase = _restore(source, candidate, identifiers)
        if phrase is None or any(phrase.stems & other.stems for other in chosen):
            continue
        chosen.append(phrase)
        if len(chosen) == 2:
            break
    return sorted(chosen, key=lambda phrase: phrase.start)


def _restore(source: str, candidate: str, identifiers: dict[str, str]) -> _Phrase | None:
    """Find the candidate in the prompt and widen it to whole tokens, keeping the user's casing.

    YAKE's tokenizer splits words it does not know how to read (CJK runs, `--flags`); the widened
    span gives the user's own token back, and placeholders give back the identifiers.
    """
    pattern = r"[\W_]+".join(re.escape(word) for word in candidate.split())
    match = re.search(pattern, source, re.I)
    if match is None:
        return None
    start, end = match.start(), match.end()
    while start > 0 and _joins_token(source[start - 1]):
        start -= 1
    while end < len(source) and _joins_token(source[end]):
        end += 1
    text = source[start:end].strip(_EDGE_PUNCT)
    for key, identifier in identifiers.items():
        text = re.sub(rf"\b{key}\b", identifier.replace("\\", "\\\\"), text)  # the identifier, literally
    stems = frozenset(_stem(word) for word in _WORD.findall(text.lower()))
    if sum(char.isalnum() for char in text) < 2 or not stems:
        return None
    return _Phrase(text, start, stems)


def _joins_token(char: str) -> bool:
    """Whether a character continues a token: not a space, and not punctuation that ends one."""
    if char.isspace():
        return False
    return char in _TOKEN_PUNCT or not unicodedata.category(char).startswith("P")


def _stem(word: str) -> str:
    """A light English stem, enough to see that `test`, `tests` and `testing` are one word."""
    for suffix in ("ing", "ies", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            word = word[: -len(suffix)] + ("y" if suffix == "ies" else "")
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def _join(phrases: list[_Phrase], capitalise: bool) -> str:
    first = phrases[0].text
    texts = [_capitalise(first) if capitalise else first] + [phrase.text for phrase in phrases[1:]]
    title = TITLE_JOINER.join(texts)
    if len(title) <= MAX_TITLE_CHARS:
        return title
    return _shorten(texts[0])


def _capitalise(text: str) -> str:
    """Upper-case the first letter only when the first word is a plain lower-case word."""
    first = text.split(" ", 1)[0]
    if first.isalpha() and first.islower():
        return text[0].upper() + text[1:]
    return text
