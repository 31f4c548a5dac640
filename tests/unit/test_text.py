"""Text at the edges: lone surrogates replaced, control characters escaped for a terminal."""

from __future__ import annotations

import json

import pytest

from harnez.text import json_line, plain_output, printable, terminal_lines, valid_text

ATTACKS = {
    "retitle the terminal": "\x1b]0;pwned\x07",
    "clear the screen": "\x1b[2J",
    "an 8-bit CSI": "\x9b31m",
    "reverse the text": "\u202eexe.txt",
    "an isolate": "\u2066x\u2069",
    "a lone surrogate": "\udcff",
    "a NUL and a DEL": "\x00\x7f",
    "a lone carriage return": "fake\rreal",
}


@pytest.mark.parametrize("attack", ATTACKS)
def test_printable_text_holds_no_character_a_terminal_acts_on(attack: str) -> None:
    shown = printable(f"before {ATTACKS[attack]} after")
    assert all(ch.isprintable() or ch in "\n\t" for ch in shown), repr(shown)
    assert shown.startswith("before ") and shown.endswith(" after")
    shown.encode("utf-8")  # a lone surrogate would make a strict stdout raise


def test_printable_shows_escapes_a_person_can_read() -> None:
    assert printable("a\x1b[2Jb\x07\x9bc\u202ed\udcff") == "a\\x1b[2Jb\\x07\\x9bc\\u202ed\\udcff"


def test_printable_keeps_lines_and_tabs_unless_asked_for_one_line() -> None:
    assert printable("one\r\ntwo\tthree\n") == "one\ntwo\tthree\n"
    assert printable("one\r\ntwo\tthree", one_line=True) == "one\\r\\ntwo\\tthree"


def test_printable_leaves_ordinary_text_alone() -> None:
    text = "Résumé — 日本語 ✓ emoji 👩‍💻 (zero-width joiner kept)"
    assert printable(text) is text


def test_json_line_escapes_what_json_leaves_raw_and_round_trips() -> None:
    value = {"text": "a\x1b\x9b\u202e\udcff\x7f é 日本", "n": 1}
    line = json_line(value)
    assert all(ch.isprintable() for ch in line), line
    assert "é 日本" in line
    assert json.loads(line) == value


def test_a_json_line_stays_one_line_for_every_line_splitter() -> None:
    value = {"text": "line\u2028separator, paragraph\u2029separator, next line\x85, file sep\x1c"}
    line = json_line(value)
    assert line.splitlines() == [line] and line.split("\n") == [line]
    assert json.loads(line) == value


def test_valid_text_replaces_lone_surrogates_deep_inside_data() -> None:
    data = {"path\udcff": ["a\ud800b", 1, None, {"k": "\udfff"}], "ok": "😀"}
    assert valid_text(data) == {"path\ufffd": ["a\ufffdb", 1, None, {"k": "\ufffd"}], "ok": "😀"}
    assert json.dumps(valid_text(data), ensure_ascii=False).encode("utf-8")


def test_terminal_lines_are_what_a_terminal_leaves_of_rewritten_lines() -> None:
    assert terminal_lines("a\r\nb") == ["a", "b"]
    assert terminal_lines("10%\r55%\r100%\r") == ["100%"]  # a last `\r` clears nothing
    assert terminal_lines("\x1b[31m10%\r\x1b[1m99%") == ["\x1b[31m\x1b[1m99%"]  # its colour still applies
    assert plain_output("\x1b[31mred\x1b[0m\x1b]0;title\x07 \x1b[2Jok\n1\r2") == "red ok\n2"
